"""The persistent compilation cache: XLA programs are kept on disk, so a new process loads them
instead of compiling them again (docs/performance.md, "Time to first step").

Eager mode compiles one small program per op, per backward and per optimizer step; a training
script's first step compiles dozens of them. JAX has a persistent cache for compiled programs,
but it is off unless a directory is given, and it keeps only programs that took a second or
more to compile, which none of eager mode's do. torchjax turns it on at import:

- directory: `$TORCHJAX_CACHE_DIR`, else `$XDG_CACHE_HOME/torchjax`, else `~/.cache/torchjax`;
  the programs go to a subdirectory per jaxlib version (`xla-<version>`), so the entries of
  older versions can be deleted as a whole;
- off: `TORCHJAX_CACHE=0`, or `TORCHJAX_CACHE_DIR=` (empty);
- size: at most `TORCHJAX_CACHE_MAX_MB` (default 2048); once a day the first process to
  compile deletes the entries used longest ago, in a background thread (`prune`), and the
  directories of other jaxlib versions that no process opened for 30 days;
- a cache directory the user gave JAX (`JAX_COMPILATION_CACHE_DIR`, `jax.config.update(
  "jax_compilation_cache_dir", ...)` before importing torchjax) is left alone, thresholds
  included; so is `jax_enable_compilation_cache=False`.

Configuring is only `jax.config` updates: importing torchjax must not start the XLA backend
(DataLoader's forkserver forks after the import) nor touch the disk. The directory is created
when JAX first looks into the cache (at the first compile).

The key of an entry is JAX's (jax/_src/cache_key.py): a hash of the lowered program, the
jaxlib version, the backend (platform and version), XLA flags and compile options. Programs of
another jaxlib, another backend or other flags (the test suite's
`jax_disable_most_optimizations`) never match. The compile options also hold the cache
directory's own path (JAX points XLA's GPU autotuning cache into it, on every platform), so a
directory moved or copied elsewhere starts cold.

Entries are written by `_FileCache` rather than JAX's own file cache, for two reasons found
in jax 0.10.2's `lru_cache.py`: it writes a file in place (a process reading at that moment,
or a process killed while writing, leaves a truncated entry), and it never replaces an
existing entry (a bad one stays bad for good). Here an entry is written to a temporary file
and renamed into place (atomic on POSIX file systems: readers see the old entry, no entry, or
the whole new one), and it carries a BLAKE2 digest of its contents: an entry that does not
match is reported with a warning, deleted and compiled again, so a damaged cache costs a
compile, never a crash or a wrong program. Several processes may share a directory: two that
miss the same key both compile it, and the last rename wins (both entries are whole). The
header also names the compression JAX used (zlib, or zstd once zstandard is installed): an
entry of the other kind is a quiet miss, not a warning per entry.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
import warnings

# What the directory holds is trusted the way a Python package is: a program loaded from it
# runs as this user (JAX's warning for its own cache). The default is in the user's home, and
# the directories created for it are private (0700); a TORCHJAX_CACHE_DIR others can write to
# would let them run code as this user.
_MAGIC_PREFIX = b"torchjax-xla-cache-1 "
_DIGEST = 32  # bytes of BLAKE2b
_SUFFIX = ".xla"
_TMP = "tmp"
_STALE_TMP_SECS = 3600  # a temporary file this old belongs to a process killed while writing

_OFF = ("0", "false", "off", "no")


def _compression() -> bytes:
    """How JAX compresses the entries it hands us: zstd when Python (3.14's compression.zstd)
    or the zstandard package has it, else zlib; the same test as jax/_src/compilation_cache.py.
    JAX's key does not say which (it hashes the name "zstandard" either way), so an entry
    written before zstandard was installed would fail to decompress, with a warning per
    entry; the name in the header makes such an entry a quiet miss instead."""
    try:
        from jax._src import compilation_cache as cc
    except ImportError:
        return b"unknown"
    if getattr(cc, "zstd", None) is not None or getattr(cc, "zstandard", None) is not None:
        return b"zstd"
    return b"zlib"

# The directory programs are read from and written to (None: no persistent cache), and
# whether torchjax chose it (False: the user configured JAX's cache themselves).
directory: str | None = None
owned = False


def _warn(msg: str) -> None:
    # Where warnings are errors (a `simplefilter("error")` block around a compile), raising
    # would turn a cache problem into a failed op, which the cache promises never to do.
    try:
        warnings.warn(f"torchjax: {msg}", RuntimeWarning, stacklevel=3)
    except Exception:
        pass


def _root() -> str | None:
    """The cache root the environment asks for, or None when caching is turned off."""
    if os.environ.get("TORCHJAX_CACHE", "1").strip().lower() in _OFF:
        return None
    if "TORCHJAX_CACHE_DIR" in os.environ:
        given = os.environ["TORCHJAX_CACHE_DIR"].strip()
        return os.path.abspath(os.path.expanduser(given)) if given else None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torchjax")


def configure(jax) -> str | None:
    """Turn on JAX's persistent cache in torchjax's directory (called once, at import);
    returns the directory in use, or None. Never raises: a JAX whose options differ from
    jax 0.10.2's gets no cache rather than a failed import."""
    global directory, owned
    try:
        config = jax.config
        if not config.jax_enable_compilation_cache:
            return None
        if config.jax_compilation_cache_dir is not None:  # the user's own: theirs to tune
            directory, owned = config.jax_compilation_cache_dir, False
            return directory
        root = _root()
        if root is None:
            return None
        import jaxlib

        path = os.path.join(root, f"xla-{jaxlib.__version__}")
        config.update("jax_compilation_cache_dir", path)
    except Exception as e:  # noqa: BLE001
        _warn(f"the persistent compilation cache is off ({type(e).__name__}: {e})")
        return None
    # Keep every program: eager mode's compile in milliseconds, far under JAX's default of
    # one second, and loading one costs less than compiling it (docs/performance.md). A
    # value the user set through JAX's own environment variables is kept.
    for name, default, ours in (
            ("jax_persistent_cache_min_compile_time_secs", 1.0, 0.0),
            # -1: no minimum size, and JAX does not replace it with a file-system default
            ("jax_persistent_cache_min_entry_size_bytes", 0, -1)):
        try:
            if getattr(config, name) == default:
                config.update(name, ours)
        except Exception:  # noqa: BLE001  (an option this JAX does not have)
            pass
    _install_file_cache(path)
    _install_write_from_every_process()
    directory, owned = path, True
    return path


def _install_file_cache(path: str) -> None:
    """Have JAX use `_FileCache` for torchjax's directory. JAX builds its cache object lazily
    (at the first compile) through `compilation_cache.get_file_cache`; a JAX without that
    function keeps its own file cache, which works, without the atomic writes and digests."""
    try:
        from jax._src import compilation_cache as cc
        from jax._src import config as jax_config
        from jax._src.compilation_cache_interface import CacheInterface
        jax_file_cache = cc.get_file_cache
    except (ImportError, AttributeError):
        return
    if getattr(jax_file_cache, "_torchjax", False):
        return

    global _FileCache
    _FileCache = _make_file_cache_class(CacheInterface)

    def ours(p, args, kwargs) -> bool:
        # Only torchjax's own directory, and only when no JAX option asks for JAX's own
        # machinery (a size limit with LRU eviction, or verification of contents). An option
        # a newer JAX renamed leaves the choice to JAX: this runs inside its first compile.
        try:
            return (p == path and not args and not kwargs
                    and jax_config.compilation_cache_max_size.value == -1
                    and not jax_config.compilation_cache_check_contents.value)
        except Exception:  # noqa: BLE001
            return False

    def get_file_cache(p, *args, **kwargs):
        if not ours(p, args, kwargs):
            return jax_file_cache(p, *args, **kwargs)
        try:
            return _FileCache(p), p
        except OSError as e:
            _warn(f"cannot use the compilation cache directory {p} ({e}); programs will not "
                  "be cached (TORCHJAX_CACHE_DIR moves it, TORCHJAX_CACHE=0 turns it off)")
            return None
        except Exception:  # noqa: BLE001  (a JAX whose cache interface this class misses)
            return jax_file_cache(p)

    get_file_cache._torchjax = True
    cc.get_file_cache = get_file_cache


def _install_write_from_every_process() -> None:
    """Let every process of a multi-process CPU job write its own entries. JAX writes only
    from process 0 (compiler._cache_write), for entries every process shares; but on CPU its
    key holds the topology as each process sees it (cache_key's accelerator_config), so the
    keys of rank 1 and up are ones process 0 never writes, and without this they compiled
    every program on every run (a 2-process job: rank 1 compiled all of them, warm or cold).
    Their keys differ from process 0's, so no two processes write one entry (and if they did,
    _FileCache's atomic rename keeps it whole). The rules are JAX's: nothing with host
    callbacks, nothing under the minimum compile time. GPU and TPU keys are the same in every
    process (JAX strips the device assignment there): process 0's entries serve them all, as
    JAX intends."""
    try:
        from jax._src import compilation_cache as cc
        from jax._src import compiler, distributed
        from jax._src import config as jax_config
        jax_write = compiler._cache_write
    except (ImportError, AttributeError):  # pragma: no cover - another jax
        return
    if getattr(jax_write, "_torchjax", False):
        return

    def cache_write(cache_key, compile_time_secs, module_name, backend, executable,
                    host_callbacks, *args, **kwargs):
        jax_write(cache_key, compile_time_secs, module_name, backend, executable,
                  host_callbacks, *args, **kwargs)
        try:
            if (not owned or args or kwargs or host_callbacks
                    or not distributed.global_state.process_id
                    or backend.platform != "cpu"
                    or compile_time_secs
                    < jax_config.persistent_cache_min_compile_time_secs.value):
                return
            cc.put_executable_and_time(cache_key, module_name, executable, backend,
                                       int(compile_time_secs))
        except Exception as e:  # noqa: BLE001  (a cache problem costs a compile, no error)
            _warn(f"cannot write compilation cache entry for {module_name} ({e})")

    cache_write._torchjax = True
    compiler._cache_write = cache_write


_FileCache = None  # the class, made when the cache is installed (it subclasses JAX's interface)

_PRUNE_MARK = "last-pruned"
_PRUNE_EVERY_SECS = 24 * 3600
# The directory of another jaxlib version is deleted when no process has opened it for this
# long (its last-pruned mark is renewed daily by any process that compiles with it).
_OLD_VERSION_SECS = 30 * 24 * 3600
_MAX_MB = 2048  # TORCHJAX_CACHE_MAX_MB: eager programs take ~5-10 KB each, the suite's ~300 MB


def _max_bytes() -> int:
    try:
        return int(float(os.environ.get("TORCHJAX_CACHE_MAX_MB", _MAX_MB)) * 2**20)
    except ValueError:
        return _MAX_MB * 2**20


def _prune_due(path: str) -> bool:
    try:
        return time.time() - os.stat(os.path.join(path, _PRUNE_MARK)).st_mtime > _PRUNE_EVERY_SECS
    except OSError:
        return True


def prune(path: str, max_bytes: int | None = None) -> int:
    """Keep the directory under `max_bytes` (TORCHJAX_CACHE_MAX_MB, default 2048): delete the
    entries used longest ago, down to 80% of it, and temporary files left by processes killed
    while writing. Returns the number of entries deleted. Eager mode writes a program per op
    and shape, so without this a cache used for months would only grow. "Used" is the later
    of the write and the access time (Linux's relatime updates it at most daily)."""
    max_bytes = _max_bytes() if max_bytes is None else max_bytes
    try:  # marked first: other processes starting now skip their own scan
        with open(os.path.join(path, _PRUNE_MARK), "wb"):
            pass
    except OSError:
        return 0
    _prune_other_versions(path)
    now, deleted = time.time(), 0
    entries, total = [], 0
    try:
        with os.scandir(os.path.join(path, _TMP)) as it:
            for e in it:
                try:
                    if now - e.stat().st_mtime > _STALE_TMP_SECS:
                        os.unlink(e.path)
                except OSError:
                    pass
        with os.scandir(path) as it:
            for e in it:
                if e.name.endswith(_SUFFIX):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    entries.append((max(st.st_atime, st.st_mtime), st.st_size, e.path))
                    total += st.st_size
    except OSError:
        return 0
    if total <= max_bytes:
        return 0
    entries.sort()
    for _, size, file in entries:
        if total <= 0.8 * max_bytes:
            break
        try:
            os.unlink(file)  # a process reading it now keeps its open file
        except OSError:
            continue
        total -= size
        deleted += 1
    return deleted


def _prune_other_versions(path: str) -> None:
    """Delete sibling `xla-<version>` directories unused for _OLD_VERSION_SECS: after an
    upgrade of jaxlib nothing reads them again (JAX's key holds the jaxlib version)."""
    root, current = os.path.split(path)
    if not current.startswith("xla-"):
        return
    now = time.time()
    try:
        with os.scandir(root) as it:
            others = [e for e in it if e.name.startswith("xla-") and e.name != current
                      and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for e in others:
        try:
            used = os.stat(os.path.join(e.path, _PRUNE_MARK)).st_mtime
        except OSError:
            try:
                used = e.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
        if now - used > _OLD_VERSION_SECS:
            shutil.rmtree(e.path, ignore_errors=True)


def _make_file_cache_class(CacheInterface):
    class FileCache(CacheInterface):
        """One file per entry, `<key>.xla`: a header line (format and compression), the
        BLAKE2b digest of the value, then JAX's value (a compressed executable)."""

        def __init__(self, path: str):
            self._magic = _MAGIC_PREFIX + _compression() + b"\n"
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)  # (the leaf only)
            os.makedirs(path, mode=0o700, exist_ok=True)
            self.path = self._path = path
            self._tmp = os.path.join(path, _TMP)
            os.makedirs(self._tmp, mode=0o700, exist_ok=True)
            self._warned_write = False
            if _prune_due(path):
                # off the compiling thread: a scan of a large cache takes a fraction of a
                # second, once a day
                threading.Thread(target=prune, args=(path,), daemon=True,
                                 name="torchjax-cache-prune").start()

        def _file(self, key: str) -> str:
            if not key or "/" in key or key.startswith("."):
                raise ValueError(f"bad compilation cache key {key!r}")
            return os.path.join(self.path, key + _SUFFIX)

        def get(self, key: str) -> bytes | None:
            file = self._file(key)
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                return None
            except OSError as e:
                _warn(f"cannot read compilation cache entry {file} ({e}); compiling the "
                      "program instead")
                return None
            magic = self._magic
            if not data.startswith(magic) and data.startswith(_MAGIC_PREFIX[:19]) and (
                    b"\n" in data[:64]):
                # another compression (see _compression), or an entry of another torchjax
                # version sharing the directory: compiled and replaced, quietly
                return None
            head = len(magic) + _DIGEST
            value = data[head:]
            if (len(data) < head or not data.startswith(magic)
                    or hashlib.blake2b(value, digest_size=_DIGEST).digest()
                    != data[len(magic):head]):
                _warn(f"ignoring corrupted compilation cache entry {file}; compiling the "
                      "program again")
                try:
                    os.unlink(file)  # the fresh compile writes a good one
                except OSError:
                    pass
                return None
            return value

        def put(self, key: str, value: bytes) -> None:
            # Always (re)write: a put follows a miss or an entry JAX could not load, and a
            # rename over an existing entry is atomic.
            file = self._file(key)
            digest = hashlib.blake2b(value, digest_size=_DIGEST).digest()
            tmp = os.path.join(self._tmp, f"{key[:64]}.{os.getpid()}.{threading.get_ident()}."
                                          f"{time.monotonic_ns()}")
            try:
                with open(tmp, "wb") as f:
                    f.write(self._magic + digest + value)
                os.replace(tmp, file)
            except OSError as e:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                if not self._warned_write:  # a full disk would warn on every compile
                    self._warned_write = True
                    _warn(f"cannot write to the compilation cache {self.path} ({e}); "
                          "programs are compiled but not kept")

    return FileCache


_bypass = threading.local()  # .depth: this thread is inside without_jax_cache
_bypass_lock = threading.Lock()


def _install_bypass() -> bool:
    """Route JAX's one question, whether its persistent cache is in use
    (compilation_cache.is_cache_used, asked by every compile), through a check of this
    thread's without_jax_cache. Once per process; False without those JAX internals."""
    try:
        from jax._src import compilation_cache as cc
    except ImportError:  # pragma: no cover - another jax
        return False
    real = getattr(cc, "is_cache_used", None)
    if real is None:  # pragma: no cover
        return False
    if getattr(real, "_torchjax_bypass", False):
        return True
    with _bypass_lock:
        real = cc.is_cache_used
        if not getattr(real, "_torchjax_bypass", False):
            def is_cache_used(backend):
                return False if getattr(_bypass, "depth", 0) else real(backend)
            is_cache_used._torchjax_bypass = True
            cc.is_cache_used = is_cache_used
    return True


class without_jax_cache:
    """A compile whose executable goes to the program cache skips JAX's persistent cache:
    an executable JAX loaded from its cache cannot be serialized again (XLA:CPU's copy fails
    at run time with "Function ... not found"), so after torchjax changed (new keys here, the
    same lowered programs there) JAX's entries would keep this cache from ever filling. For
    the calling thread only: JAX's answer to whether its cache is in use is switched off for
    compiles on this thread while inside. (It used to be switched off process-wide, so that a
    compile another thread ran meanwhile - a plain jax.jit beside a program compiled ahead on
    a thread of its own - was neither looked up nor written, and a warm run compiled it.)"""

    def __enter__(self):
        _install_bypass()
        _bypass.depth = getattr(_bypass, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _bypass.depth -= 1
        return False
