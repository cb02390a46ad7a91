"""The environment a program-cache program depends on besides its arguments (_programs.py's
key): torchjax's own sources, the JAX configuration tracing reads, the compile options, the
versions and the backend."""

from __future__ import annotations

import hashlib
import os

import jax
import jaxlib

from ._program_names import Uncacheable

try:  # (as _programs.py: jax 0.10.2's pieces)
    from jax._src import config as _config
    from jax._src.interpreters import pxla as _pxla
except ImportError:  # pragma: no cover - another jax
    _config = _pxla = None

_source_fingerprint: str | None = None


def _sources() -> str:
    """torchjax's own source files (path, size, modification time): an edited op in a
    development tree is a different program. (Once per process, at its first program key,
    inside the first step: os.scandir's entries and string paths, ~1.5 ms for ~540 files
    where os.walk, os.stat and os.path.relpath took ~5.)"""
    global _source_fingerprint
    if _source_fingerprint is None:
        root = os.path.dirname(os.path.abspath(__file__))
        lines = []
        _list_sources(root, "", lines)
        h = hashlib.blake2b("".join(lines).encode(), digest_size=16)
        from .version import __version__
        _source_fingerprint = f"{__version__}:{h.hexdigest()}"
    return _source_fingerprint


def _list_sources(path: str, rel: str, lines: list) -> None:
    """Append "relative/path.py:size:mtime_ns" of each .py file under `path`, as os.walk
    lists them: a directory's files sorted, then its sorted subdirectories, not descending
    into a symbolic link to a directory (os.walk's followlinks=False)."""
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    dirs = []
    for e in entries:
        try:
            if e.is_dir():
                if not e.is_symlink():
                    dirs.append(e)
            elif e.name.endswith(".py"):
                st = e.stat()
                lines.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns}\n")
        except OSError:
            continue
    for e in dirs:
        _list_sources(e.path, f"{rel}{e.name}{os.sep}", lines)


_COMPILE_OPTIONS = ("jax_disable_most_optimizations", "jax_exec_time_optimization_effort",
                    "jax_memory_fitting_effort", "jax_optimization_level",
                    "jax_memory_fitting_level", "jax_default_prng_impl",
                    "jax_use_shardy_partitioner", "jax_threefry_partitionable")


def _option(name: str):
    """A JAX option's value. Most are attributes of jax.config; a few are flags only
    `config.read` returns (jax_disable_most_optimizations: read as an attribute it was missing,
    so the test suite's unoptimised executables were keyed as a user's and could be loaded by
    them). An option this JAX does not have is "absent"."""
    try:
        return getattr(jax.config, name)
    except AttributeError:
        pass
    try:
        return jax.config.read(name)
    except Exception:  # noqa: BLE001  (AttributeError/KeyError: no such option)
        return "absent"


_MEMO: dict = {}  # what environment() reads -> its string


def environment(fmt: str, compiler_options) -> str:
    """What tracing and compiling read besides the arguments (at each new signature);
    `fmt` names the entries' format, `compiler_options` are the XLA options every executable
    is compiled with. JAX's trace context holds x64, matmul precision, dtype promotion and
    the rest of what jax.jit keys its own cache by; an entry of it without a plain repr (an
    object shown by address) makes the program uncacheable.

    Kept per value of what it reads (~16 us to build; the host tier computes a key at every
    new signature: autoregressive generation makes ~30 per token)."""
    from . import _dtypes, _settings
    try:
        memo_key = (fmt, tuple(sorted((compiler_options or {}).items())),
                    _config.trace_context(), tuple(_option(n) for n in _COMPILE_OPTIONS),
                    _dtypes.get_default_dtype(), tuple(sorted(_settings._state.items())),
                    os.environ.get("XLA_FLAGS", ""), os.environ.get("LIBTPU_INIT_ARGS", ""),
                    _pxla.get_default_device(), tuple(jax.devices()), _sources(),
                    jax.__version__, jaxlib.__version__)
        got = _MEMO.get(memo_key)
    except TypeError:  # (something unhashable among them: built every time)
        memo_key = got = None
    if got is None:
        got = _environment(fmt, compiler_options)
        if memo_key is not None:
            if len(_MEMO) >= 64:
                _MEMO.clear()
            _MEMO[memo_key] = got
    return got


def _environment(fmt: str, compiler_options) -> str:
    ctx = []
    for v in _config.trace_context():
        r = repr(v)
        if " at 0x" in r:
            if type(v).__name__ == "AxisEnv":  # empty at top level (trace_state_clean)
                continue
            raise Uncacheable("trace context")
        ctx.append(r)
    opts = [f"{n}={_option(n)!r}" for n in _COMPILE_OPTIONS]
    opts.append(f"compiler_options={sorted((compiler_options or {}).items())!r}")
    # torchjax's own process-wide choices that an op may read while it is traced
    from . import _dtypes, _settings
    opts.append(f"default_dtype={_dtypes.get_default_dtype().name}")
    opts.append(f"settings={sorted(_settings._state.items())!r}")
    devices = jax.devices()
    # the platform, how many devices (8 virtual CPU devices are another backend than one) and
    # processes; which device each argument is on is in the signature
    # which process this is and where a call with no placed argument runs (the default
    # device): in a job of several processes a program without array arguments (torch.zeros)
    # is rank 1's on its own device, and rank 0's entry loaded there would place its output
    # on rank 0's device ("Cross-host transfers are not supported", then a hang in the next
    # collective of the other rank)
    backend = (f"{devices[0].platform}:{devices[0].client.platform_version}:"
               f"{devices[0].device_kind}:{len(devices)}:{jax.process_count()}:"
               f"{jax.process_index()}:{_pxla.get_default_device().id}")
    return "\n".join((fmt, _sources(), jax.__version__, jaxlib.__version__, backend,
                      os.environ.get("XLA_FLAGS", ""), os.environ.get("LIBTPU_INIT_ARGS", ""),
                      ",".join(ctx), ",".join(opts)))
