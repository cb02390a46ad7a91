"""torchjax's own program cache: compiled executables keyed BEFORE tracing, so a warm
process neither traces nor lowers the programs an earlier process made (docs/performance.md,
"Time to first step").

JAX's persistent cache (_compile_cache.py) is keyed by the lowered program: a process must
trace the Python function and lower it to StableHLO before it can look a program up, and that
was ~70% of a warm first step. Here a program is named by what picks it: `ident`, a string
saying which torchjax function it is (an op row with its static arguments and compute dtype,
a backward spec, a fused backward's structure, an optimizer's update), plus the signature of
its arguments (tree structure; per array dtype, shape, weak type, committed or not and the
device, or for an array laid out over a mesh (a DTensor's, DDP's or FSDP's) the mesh's axis
names, sizes and device ids and the partition spec; per Python scalar its type), the JAX
configuration that tracing reads (x64 and the rest of JAX's trace context), the compile
options' sources (XLA flags, `jax_disable_most_optimizations`), the versions (torchjax's source files, jax, jaxlib, the
backend's platform and version), and, for a job of several processes, the process index and
the device a call without placed arguments runs on (each rank has its own entries, loaded
only onto its own devices). The value is JAX's serialized executable
(jax.experimental.serialize_executable), in the same directory tree and under the same
switches as JAX's cache: a subdirectory `programs` of it, written by the same `_FileCache`
(atomic rename, digest, a warning and a recompile for a damaged entry).

A wrong hit would run a wrong program, so only what the key fully names is cached: an ident
is made only of plain values (`describe`), a function by its module, name and code (and its
closure's values), never a user's function; anything else gets no ident and runs as a plain
jax.jit. Tracers, shardings other than one device or a mesh (NamedSharding), keyword
arguments and unusual argument types take the plain jax.jit path too. And only executables another process can run are
written: custom calls need runtime state that lowering sets up (_program_runtime.py: LAPACK's
is set up before loading; host callbacks and other custom calls are not kept).

How a call runs: `program(fn, ident)` is a jax.jit-like C++ dispatcher (`_jax.pjit`, the
object behind jax.jit) whose cache-miss handler is ours. Calls whose signature it has seen
run on its C++ fast path, exactly as jax.jit's do (no cost in the steady state); a new
signature comes to `_Program.miss`, which takes the executable from memory, from disk, or
compiles it (jit.lower(...).compile(), counted by compile_stats like any compile) and stores
it, then hands the C++ side the same fast-path data jax.jit's own miss handler would.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref

import jax

from . import (
    _compile_cache,
    _compile_stats,
    _host_tier,
    _meta,
    _mlir_context,
    _program_entries,
    _program_env,
    _program_first_run,
    _program_prefetch,
)

# how a program is named, split out (callers use _programs.describe, ident_of, Uncacheable)
from ._program_names import (  # noqa: F401
    _PLAIN,
    Uncacheable,
    _digest_code,
    _own,
    _qualified,
    describe,
    describe_function,
    describe_layout,
)
from ._program_place import placed as _placed
from ._program_place import shard_arg as _shard_arg
from ._program_soon import Soon as _Soon

try:  # the pieces of jax.jit this builds on (jax 0.10.2); without them: plain jax.jit
    from jax._src import config as _config
    from jax._src import core as _core
    from jax._src import pjit as _pjit
    from jax._src import stages as _stages
    from jax._src import tree_util as _tree_util
    from jax._src.interpreters import pxla as _pxla
    from jax._src.lib import _jax
    from jax.experimental import serialize_executable as _serialize  # noqa: F401  (entries need it)

    _ARRAY = _jax.ArrayImpl
    _NAMED = jax.sharding.NamedSharding
    from jax._src.random.prng import PRNGKeyArray as _KEY_ARRAY
    _AVAILABLE = True
    try:  # JAX's typed literals: a compiled step passes its jaxpr's Literal slots as them
        from jax._src import literals as _literals
        _TYPED = tuple(getattr(_literals, n) for n in ("TypedNdArray", "TypedInt", "TypedFloat",
                                                        "TypedComplex") if hasattr(_literals, n))
    except ImportError:  # pragma: no cover - another jax
        _TYPED = ()
except (ImportError, AttributeError):  # pragma: no cover - another jax
    _AVAILABLE = False

# 2: entries name the runtimes they need; 3: and the devices their executable runs on
_FORMAT = "torchjax-programs-3"
_SUBDIR = "programs"
_SCALAR_TYPES = (bool, int, float, complex)
_lock = threading.Lock()
# every _Program made (weakly): clear() empties their executables (the test suite's bound on
# memory mappings, like jax.clear_caches())
_all: list = []
_cpp_cache = None
# set in a forked DataLoader worker (utils/data/_start.guard_forked_worker): it must run no XLA
# program, and its guard catches only calls that reach jax.jit's own Python path
_forked_worker = False
_mlir_context.install()
# XLA options every executable made here is compiled with (None: XLA's defaults), part of the
# cache key. The test suite sets `xla_cpu_use_fusion_emitters=False` for most of its
# in-process tests: their thousands of small programs then compile ~2x faster
# (tests/conftest.py, _compile_options); it clears the executables held in memory at a switch
compiler_options: dict | None = None


def ident_of(*parts) -> str | None:
    """An ident from parts (describe() of each), or None when one cannot be named exactly."""
    if not enabled():
        return None
    try:
        return ";".join(describe(p) for p in parts)
    except Uncacheable:
        return None
    except Exception:  # noqa: BLE001  (a value whose repr fails: no cache, never an error)
        return None


def _environment() -> str:
    """What tracing and compiling read besides the arguments (_program_env.py)."""
    return _program_env.environment(_FORMAT, compiler_options)


# -- the argument signature --------------------------------------------------------------------

def signature(args):
    """(tree structure, one tuple per leaf): what jax.jit's own dispatch tells apart, in
    plain values; None when an argument is outside what the key can name (a tracer, a
    sharded array, an object), which then runs as a plain jax.jit."""
    try:
        return _signature(args)
    except Exception:  # noqa: BLE001  (an array whose dtype has no plain name, ...)
        return None


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype) -> str:
    """str(dtype), kept per dtype (NumPy's __str__ is Python code: ~5 us, paid per array of
    every call the program cache's miss path, the host tier's included, sees)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)
    return name


def _signature(args):
    leaves, tree = _tree_util.tree_flatten(args)
    out = [str(tree)]
    for x in leaves:
        t = type(x)
        if t is _ARRAY or t is _KEY_ARRAY:
            s = x.sharding
            av = x.aval
            if isinstance(s, _NAMED):  # (DTensor's, DDP's and FSDP's arrays)
                out.append(("a", _dtype_name(av.dtype), av.shape, av.weak_type, x._committed,
                            describe_layout(s)))
                continue
            if type(s).__name__ != "SingleDeviceSharding":
                return None
            d = s._device
            out.append(("a", _dtype_name(av.dtype), av.shape, av.weak_type, x._committed,
                        d.platform, d.id, s.memory_kind))
        elif t in _SCALAR_TYPES:
            out.append(("p", t.__name__))
        elif t in _TYPED:  # (by what jax.jit keys them by: the aval, not the value)
            av = x.aval
            out.append(("t", t.__name__, _dtype_name(av.dtype), av.shape, av.weak_type))
        elif t.__module__ == "numpy" and (t.__name__ == "ndarray" or hasattr(x, "dtype")):
            out.append(("n", t.__name__, x.dtype.str, str(x.dtype), x.shape))
        else:
            return None
    return tuple(out)


def _call_key(args):
    """A call's key in a program's in-memory table: its signature with the configuration,
    keyed as jax.jit keys it (its C++ side does too, so a call under x64 never meets the
    executable made without it); None outside what the key can name, or inside a trace."""
    if not _core.trace_state_clean():
        return None
    sig = signature(args)
    return None if sig is None else (sig, _config.trace_context(), _default_dtype())


def _has_meta(args) -> bool:
    return any(x.__class__ is _meta.MetaArray for x in _tree_util.tree_leaves(args))


# -- the store ---------------------------------------------------------------------------------

_store = None
_store_dir = None


def enabled() -> bool:
    """On with torchjax's persistent cache (TORCHJAX_CACHE, TORCHJAX_CACHE_DIR), in its
    directory only (a JAX cache the user configured is left to JAX);
    TORCHJAX_CACHE_PROGRAMS=0 turns this layer off alone. Never in a forked DataLoader
    worker, which runs no XLA program (forked_worker)."""
    return (_AVAILABLE and not _forked_worker and _compile_cache.owned
            and _compile_cache.directory is not None
            and os.environ.get("TORCHJAX_CACHE_PROGRAMS", "1").strip().lower()
            not in _compile_cache._OFF + ("",))


def in_forked_worker() -> bool:
    """Whether forked_worker() was called in this process."""
    return _forked_worker


def forked_worker() -> None:
    """This process is a forked DataLoader worker: every program, including those the parent
    made through here (whose dispatchers it inherited), goes to jax.jit's Python path, which
    the worker's guard turns into a NumPy evaluation. Without this, a signature new to the
    worker would be loaded from disk or compiled, and run on XLA, which hangs after fork."""
    global _forked_worker
    _forked_worker = True


def _get_store():
    """The _FileCache of `<cache dir>/programs`, made at the first program (None: off)."""
    global _store, _store_dir
    directory = _compile_cache.directory
    if not enabled() or _compile_cache._FileCache is None:
        return None
    path = os.path.join(directory, _SUBDIR)
    if _store is None or _store_dir != path:
        with _lock:
            if _store is None or _store_dir != path:
                try:
                    _store = _compile_cache._FileCache(path)
                except OSError as e:
                    _compile_cache._warn(f"cannot use the program cache directory {path} ({e})")
                    _store = False
                _store_dir = path
    return _store or None


def _default_dtype():
    from . import _dtypes
    return _dtypes.get_default_dtype()


def _key(ident: str, sig) -> str:
    sig = sig[0]  # (the configuration is in _environment())
    h = hashlib.blake2b(digest_size=32)
    h.update(_environment().encode())
    h.update(b"\0")
    h.update(ident.encode())
    h.update(b"\0")
    h.update(repr(sig).encode())
    return "p-" + h.hexdigest()


# -- the dispatcher ----------------------------------------------------------------------------

class _Program:
    """The cache-miss side of one program's C++ dispatcher (see the module docstring)."""

    __slots__ = ("jit", "ident", "compiled", "host", "hostless", "dispatcher", "noted",
                 "__weakref__")

    def __init__(self, jitted, ident, hostless=False):
        self.jit = jitted
        self.ident = ident
        self.compiled = {}  # signature -> jax.stages.Compiled
        self.host = {}  # signature -> _host_tier.Entry (or its _NO)
        # never evaluated by the host tier: donating programs, and those whose results must
        # be XLA's bits (random streams: see _host_tier.py)
        self.hostless = hostless
        self.dispatcher = None  # a weak reference to the C++ function whose misses come here
        self.noted = set()  # signatures made ahead whose first use _note_use has listed

    def miss(self, *args, **kwargs):
        sig = None
        if _forked_worker:  # jax.jit's path, where the forked worker's guard evaluates it
            return self.jit(*args, **kwargs), None, False
        if not kwargs:
            sig = _call_key(args)
        if sig is None:
            if _has_meta(args):
                # jax.jit would trace, lower and compile a real program for a meta array's
                # shape before refusing it as an argument; the dispatcher's meta path
                # (eval_shape) wants only the refusal
                raise TypeError("a meta tensor has no data for a program to run on")
            return self.jit(*args, **kwargs), None, False
        compiled = self.compiled.get(sig)
        if _host_tier.ON[0] and not self.hostless and (
                compiled is None or compiled.__class__ is _Soon and sig in self.host):
            outs = _host_tier.call(self, args, sig, compiled)
            if outs is not None:
                return outs, None, False
        if compiled is not None:  # made ahead (compile_soon, compile_ahead): first used now
            self._note_use(args, sig)
        if compiled.__class__ is _Soon:  # being compiled on another thread (compile_soon)
            compiled = compiled.wait(self.compiled, sig)
        if compiled is None:
            compiled, key = self._make(args, sig)
            if key is not None:  # loaded from disk: its first run is its test
                try:
                    outs, out_flat, args_flat = _stages.Compiled.call(
                        compiled._params, *_placed(compiled, args))
                except _jax.JaxRuntimeError as e:
                    _program_entries.drop(_get_store(), key, e)
                    compiled = self._compile(args, key)
                else:
                    self.compiled[sig] = compiled
                    return outs, _fastpath(compiled, out_flat, args_flat), False
            self.compiled[sig] = compiled
        outs, out_flat, args_flat = _stages.Compiled.call(compiled._params,
                                                          *_placed(compiled, args))
        if self.host and self.host.pop(sig, _host_tier.NO) is not _host_tier.NO:
            self._after_host(sig)
        return outs, _fastpath(compiled, out_flat, args_flat), False

    def _after_host(self, sig):
        """The first compiled call of a signature the host tier served: the C++ side keeps,
        for a signature whose miss returned no fast-path data (a host evaluation's), a note
        to call the miss handler every time. Its table is cleared, so the next call makes
        a new entry, with this executable's fast path."""
        d = self.dispatcher() if self.dispatcher is not None else None
        if d is not None:
            # (the C++ table alone: jax.jit's clear_cache also empties JAX's trace cache of
            # every function, so the next traces made new jaxpr objects and whatever keys
            # on them (checkpoint's compiled backward) compiled again)
            d._clear_cache()

    def _key_of(self, sig):
        if _get_store() is None:
            return None
        try:
            return _key(self.ident, sig)
        except Uncacheable:
            return None

    def _note_use(self, args, sig):
        """A program made ahead is first used: the script's manifest lists it here, in the
        order the step needs it (_program_prefetch)."""
        # (once per signature: a call whose executable has no fast path comes here every time)
        if sig not in self.noted and _program_prefetch.recording():
            self.noted.add(sig)
            key = self._key_of(sig)
            if key is not None:
                _note(key, args)

    def _make(self, args, sig):
        """(executable, its key when it was loaded from disk, else None)."""
        key = self._key_of(sig)
        if key is not None:
            store, device = _get_store(), _device_of(args)
            _, in_tree = _tree_util.tree_flatten((args, {}))
            _program_prefetch.note(store, key, in_tree, device.platform)
            got = _program_prefetch.take(key, args, in_tree)
            if got is None:
                got = _program_entries.load(store, key, args, device, in_tree)
            if got is not None:
                return got, key
        return self._compile(args, key), None

    def _compile(self, args, key):
        _compile_stats.loaded_by_jax()
        with _mlir_context.shared():  # (lowered and compiled on this thread)
            lowered = self.jit.lower(*args)
        if key is None:
            return lowered.compile(compiler_options)
        with _compile_cache.without_jax_cache():
            compiled = lowered.compile(compiler_options)
        _compile_stats.count_program_miss()
        if not _compile_stats.loaded_by_jax():
            _program_entries.save(_get_store(), key, compiled, lowered)
        return compiled

    def compile_ahead(self, args, enter=None):
        """For a program compiled on another thread (the fused backward): returns a function
        that makes the executable for `args` (loading it, or compiling what was lowered here,
        on the calling thread, where the JAX configuration is the caller's) and keeps it.
        With `enter` (a context manager factory), the returned function also traces and lowers,
        inside enter(), which must give the caller's JAX configuration (it is checked)."""
        sig = _call_key(args)
        if sig is None:
            lowered = self.jit.lower(*args)
            return lambda: lowered.compile(compiler_options)
        # (its first run on zeros too: a fused backward's costs ~0.1 s more than its later
        # ones, and the step that finds it made does not wait for this thread)
        work = self._work(args, sig, enter, first_run=True)
        return work if work is not None else lambda: None  # (the next call loads it)

    def _work(self, args, sig, enter, first_run=False):
        """compile_ahead's function for a call of key `sig`; None when there is nothing to
        make: the executable is held, or on disk (the next call loads it, and tries it: see
        miss). With `first_run`, the function also runs the executable once on zeros before
        keeping it (_program_first_run)."""
        key = self._key_of(sig)
        if key is not None:  # (a program the script will need: the next run loads it ahead)
            _note(key, args, ahead=True)
        if sig in self.compiled or key is not None and os.path.exists(_get_store()._file(key)):
            return None
        lowered = None if enter is not None else self.jit.lower(*args)
        options = compiler_options  # (the caller's: the key above was made with them)

        def work():
            low = lowered
            if low is None:
                with enter():
                    if (_config.trace_context(), _default_dtype()) != sig[1:]:
                        return  # not the caller's configuration: its call compiles its own
                    low = self.jit.lower(*args)
            _compile_stats.loaded_by_jax()
            if key is None:
                compiled = low.compile(options)
            else:
                with _compile_cache.without_jax_cache():
                    compiled = low.compile(options)
                _compile_stats.count_program_miss()
            if first_run and _device_of(args).platform == "cpu":
                _program_first_run.on_zeros(compiled)
            if compiler_options == options:  # (the in-memory table does not key the options:
                self.compiled[sig] = compiled  # clear() runs at each switch of them)
            if key is not None and not _compile_stats.loaded_by_jax():
                _program_entries.save(_get_store(), key, compiled, low)
        return work

    def compile_soon(self, args, label: str, enter, queued=None) -> bool:
        """Start tracing, lowering (inside enter(), see compile_ahead) and compiling the
        executable for `args` on another thread; a call with their signature meanwhile waits
        for it rather than compiling it a second time. False when there is nothing to start
        (known, on disk, or not nameable)."""
        sig = _call_key(args)
        work = None if sig is None else self._work(args, sig, enter)
        if work is None:
            return False
        self.compiled[sig] = _Soon(work, label, queued)
        return True


def _note(key, args, ahead=False):
    """_program_prefetch.note of the program `key` for `args` (its input tree, its platform)."""
    _program_prefetch.note(_get_store(), key, _tree_util.tree_flatten((args, {}))[1],
                           _device_of(args).platform, ahead=ahead)


def _device_of(args):
    for x in _tree_util.tree_leaves(args):
        if type(x) is _ARRAY or type(x) is _KEY_ARRAY:
            s = x.sharding
            return s._device if hasattr(s, "_device") else s._device_assignment[0]
    # where jax.jit runs it: jax.devices()[0] is rank 0's device in every process of a job
    return _pxla.get_default_device()


def _fastpath(compiled, out_flat, args_flat):
    """The fast-path data jax.jit's own miss handler returns for this executable (None: the
    C++ side then calls the miss handler every time, which stays correct)."""
    try:
        return _pjit._get_fastpath_data(compiled._executable, compiled._params.out_tree,
                                        args_flat, out_flat, (), (), None,
                                        compiled._params.const_args)
    except Exception:  # noqa: BLE001
        return None


def program(fn, ident: str | None, donate_argnums=(), exact=False):
    """jax.jit(fn, donate_argnums=...), with its executables kept in torchjax's program cache
    under `ident` (None: a plain jax.jit). The result has jax.jit's `lower` and is called
    the same way. (Donation is compiled into the executable, so the key names it.) `exact`:
    its results must be XLA's to the bit, every call (a random stream's), so the host tier
    never evaluates it."""
    jitted = jax.jit(fn, donate_argnums=donate_argnums)
    if ident is None or not enabled():
        return jitted
    if donate_argnums:
        ident = f"{ident};donate={tuple(donate_argnums)!r}"
    global _cpp_cache
    if _cpp_cache is None:
        _cpp_cache = _pjit.make_jit_cpp_cache(8192)
    prog = _Program(jitted, ident, bool(donate_argnums) or exact)
    f = _jax.pjit(getattr(fn, "__name__", "program"), fn, prog.miss, (), (),
                  _pxla.JitGlobalCppCacheKeys(), _tree_util.dispatch_registry,
                  _shard_arg, _cpp_cache_for(fn, ident))
    # jax.jit's methods (lower, trace, eval_shape) read these two attributes
    f._fun = jitted._fun
    f._jit_info = jitted._jit_info
    f._program = prog
    prog.dispatcher = weakref.ref(f)
    _all.append(weakref.ref(prog))
    if len(_all) > 65536:
        _all[:] = [r for r in _all if r() is not None]
    return f


_backs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn -> its program's ident
_own_caches: list = []  # the C++ caches of programs made from a function already in use


def _cpp_cache_for(fn, ident):
    """The C++ cache a program of `fn` named `ident` dispatches through. JAX's C++ cache keys
    a function's fast paths by the function (and the call's signature), not by the program:
    two programs of one function sharing it would run whichever executable was made first
    for that signature (found in session 28 with a fused backward and its variant compiled
    under other XLA options: the second program's misses never came, and it ran the
    first's executable). So a function that backs a program already (under another name:
    other options, donation) gets a cache of its own for each further program."""
    try:
        first = _backs.setdefault(fn, ident)
    except TypeError:  # (not weakly referable: a builtin; no second program expected)
        return _cpp_cache
    if first == ident:
        return _cpp_cache
    own = _pjit.make_jit_cpp_cache(256)
    _own_caches.append(own)
    return own


def jit(fn, exact=False):
    """jax.jit(fn) kept in the program cache when `fn` names itself exactly: a torchjax
    function whose closure holds only plain values (see describe_function). `exact`: see
    program."""
    return program(fn, ident_of("jit", fn), exact=exact)


def lazy_jit(fn):
    """jit(fn) for a module-level function, made at its first call: modules may be imported
    before the persistent cache is configured (which decides whether it is on)."""
    made = []

    def call(*args):
        if not made:
            made.append(jit(fn))
        return made[0](*args)

    call.__name__ = getattr(fn, "__name__", "program")
    return call


def compile_ahead(f, args):
    """`f`'s executable for `args`, made by the returned function (run it on any thread)."""
    prog = getattr(f, "_program", None)
    if prog is None:
        lowered = f.lower(*args)
        return lambda: lowered.compile()
    return prog.compile_ahead(args)


def made(f, args, listed=False) -> bool:
    """Whether this process holds `f`'s executable for `args` (a program-cache program); with
    `listed`, also whether the script's manifest of its last run lists it (_program_prefetch:
    on disk, and being loaded ahead now)."""
    prog = getattr(f, "_program", None)
    sig = None if prog is None else _call_key(args)
    if sig is None:
        return False
    if prog.compiled.get(sig).__class__ is _stages.Compiled:
        return True
    key = prog._key_of(sig) if listed else None
    return key is not None and _program_prefetch.listed(_get_store(), key)


def holds_any(f) -> bool:
    """Whether this process holds an executable of `f` (a program-cache program), for any
    signature."""
    prog = getattr(f, "_program", None)
    return prog is not None and bool(prog.compiled)


def compile_soon(f, args, label: str, enter) -> bool:
    """Start making `f`'s executable for `args` on another thread (see _Soon; traced there
    inside enter(); `label` names it in TORCHJAX_LOGS=compiles); a call with their signature
    waits for it. Only for program-cache programs (False otherwise)."""
    prog = getattr(f, "_program", None)
    return prog is not None and prog.compile_soon(args, label, enter)


def clear() -> None:
    """Forget every executable held in memory (jax.clear_caches() does not reach them)."""
    global _cpp_cache
    for r in _all:
        p = r()
        if p is not None:
            p.compiled.clear()
    if _cpp_cache is not None:
        _cpp_cache.clear()
    for cache in _own_caches:
        cache.clear()
