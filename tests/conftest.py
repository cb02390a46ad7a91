"""Test-session setup: compile fast, and keep a long-lived test worker within the kernel's limits.

The suite compiles thousands of small XLA programs, and XLA's backend optimisations cost more
compile time than they save on inputs this small.

Every compiled CPU executable keeps about three memory mappings alive for as long as a jit
cache holds it. One xdist worker compiles tens of thousands of programs, and Linux refuses
new mappings past vm.max_map_count (65530 by default): LLVM then crashes the worker inside a
compile. So when a worker's mappings pass a threshold, the compile caches are dropped (the
programs recompile on next use); this also keeps each worker's memory bounded.

The persistent compilation cache (torchjax/_compile_cache.py) stays on, in its default per-user
directory, so a later run of the suite on the same machine loads most programs instead of
compiling them (docs/performance.md, "Time to first step": cold and warm suite times). Its
entries are keyed by the compile options too, so the suite's unoptimised programs never reach
a user's script. A damaged entry is compiled again; the report of it goes to stderr instead
of through `warnings`, because many tests record the warnings an op emits and compare them
with PyTorch's, and a cache problem must never fail a test.
"""

import gc
import os
import sys

import jax
import pytest

import torchjax
from torchjax import _compile_cache, _deferred_programs, _host_tier, _programs
from torchjax._autograd import engine

jax.config.update("jax_disable_most_optimizations", True)
# Not in the processes tests start (tests/programs, ...): they run at XLA's defaults, as a
# user's script does (docs/performance_startup.md, "The test suite's own time").

# torchjax turns JAX's x64 mode on only around its own work (src/torchjax/_x64.py). Outside
# that scope JAX would quietly truncate an explicitly 64-bit array to 32 bits (with a
# warning); here it raises instead, so a torchjax path that runs outside its scope fails its
# test rather than giving int32 where PyTorch gives int64.
jax.config.update("jax_explicit_x64_dtypes", "error")


def _cache_problem_to_stderr(msg: str) -> None:
    print(f"torchjax: {msg}", file=sys.__stderr__)


_compile_cache._warn = _cache_problem_to_stderr

# The fused backward compiles on the calling thread, as soon as a graph structure repeats:
# tests that repeat a graph mean to check the fused program's gradients, and a background
# compile would leave them to whichever pass happens to find it ready (tests/test_engine.py
# checks the background mode itself).
engine.BACKGROUND = False
# the same for deferred sequences' programs (tests/test_deferred.py checks they are used)
_deferred_programs.BACKGROUND = False
# A process's first graph structure is fused at once (engine.FUSE_FIRST): in a test worker
# that would be whichever test comes first, so the suite keeps every structure's first pass
# node by node; tests/test_engine.py checks the first-structure rule itself, and the scripts
# tests/programs runs in their own processes use it.
engine.FUSE_FIRST[0] = 0
# ...and a structure is fused at its second sighting however many new structures came before
# (engine._FUSE_AFTER_VARYING): in a test worker every test's graph is new, so the tests that
# count fused programs would otherwise depend on the tests run before them;
# tests/test_rl_shapes.py checks the rule itself
engine._FUSE_AFTER_VARYING = engine._FUSE_AFTER
# ...and a program's signatures compile at HOT calls however many signatures the program has
# met (_host_tier.CHANGING): in a test worker, tanh or mul meets dozens of shapes in earlier
# tests, and the tests that train past HOT and then count programs would depend on them;
# tests/host_tier/test_host_tier.py checks the rule itself
_host_tier.CHANGING = _host_tier.FAMILIES = 1 << 30

_MAPS = "/proc/self/maps"


def _max_maps() -> int:
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except OSError:
        return 65530


_LIMIT = _max_maps() // 2
# Reading /proc/self/maps costs ~2 ms per thousand mappings (55 ms at 22,000), which after
# every test was minutes of a worker's time; it is read again only once this many executables
# were made (compiled or loaded: ~3 mappings each) since the last reading.
_READ_EVERY = 300
_made_at_read = [0]


def _mappings() -> int:
    with open(_MAPS, "rb") as f:
        return f.read().count(b"\n")


def _executables_made() -> int:
    st = torchjax.compile_stats()
    return st.compiled + st.cache_hits


# In-process tests compile thousands of small programs (one op, its backward, a module's
# forward), each compared with PyTorch within a tolerance. XLA:CPU's legacy emitters compile
# them in about half the time its fusion emitters take, with the same values up to float
# round-off. Where a test compares two of torchjax's own paths to round-off over several
# steps (tests/compile: eager against compiled; tests/optim), where its processes are its
# own (tests/programs, tests/distributed, tests/data), and in ops/test_compiled.py, XLA's
# defaults stay: under the legacy emitters a compiled CNN step with BatchNorm, dropout and
# Adam came out 2-11% from its eager run (Adam's normalisation turns round-off in near-zero
# gradients into full steps, as tests/compile/test_equivalence.py notes for the transformer).
# The options are part of the program cache's key; the executables held in memory are
# dropped at each switch, so a test never runs one made under the other setting.
_FAST_COMPILE = {"xla_cpu_use_fusion_emitters": False}
_XLA_DEFAULTS = ("compile/", "optim/", "programs/", "distributed/", "data/",
                 "ops/test_compiled.py")
_TESTS = os.path.dirname(os.path.abspath(__file__))


def _fast_compile_options():
    """_FAST_COMPILE where this XLA knows the option (a later XLA may drop its legacy CPU
    emitters and refuse the name): else XLA's defaults."""
    try:
        jax.jit(lambda x: x + 1).lower(1.0).compile(_FAST_COMPILE)
    except Exception:  # noqa: BLE001  (JaxRuntimeError: "No such compile option")
        return None
    return _FAST_COMPILE


_FAST_COMPILE = _fast_compile_options()


@pytest.fixture(autouse=True)
def _compile_options(request):
    where = os.path.relpath(str(request.node.path), _TESTS).replace(os.sep, "/")
    want = None if where.startswith(_XLA_DEFAULTS) else _FAST_COMPILE
    if _programs.compiler_options != want:
        _programs.compiler_options = want
        _programs.clear()


@pytest.fixture(autouse=True)
def _bounded_compile_caches():
    yield
    made = _executables_made()
    # (fewer than at the last reading: a test reset the counters)
    if 0 <= made - _made_at_read[0] < _READ_EVERY:
        return
    _made_at_read[0] = made
    if os.path.exists(_MAPS) and _mappings() > _LIMIT:
        jax.clear_caches()
        _programs.clear()
        gc.collect()
