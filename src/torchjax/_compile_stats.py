"""What compiling costs: `torchjax.compile_stats()` and `TORCHJAX_LOGS=compiles`.

Counted from JAX's own monitoring events (jax.monitoring), so every program is seen whoever
made it (an op, a fused backward, an optimizer step, the user's own `jax.jit`), and nothing is
added to torchjax's dispatch. The events of jax 0.10.2, per program, on the compiling thread:

    /jax/core/compile/jaxpr_trace_duration           tracing the Python function to a jaxpr
    /jax/core/compile/jaxpr_to_mlir_module_duration  lowering the jaxpr to StableHLO
    /jax/compilation_cache/compile_requests_use_cache   (inside the backend compile below)
    /jax/compilation_cache/cache_hits                    (inside it, when loaded from disk)
    /jax/core/compile/backend_compile_duration       XLA compile, or loading from the cache

The argument shapes of a program are not in the events; they come from the debug record JAX's
`pxla` logger makes just before lowering ("Compiling <name> with global shapes and types ..."),
read by a logging filter that lets through only what the user's logging settings would show.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import sysconfig
import threading

from . import _logs

try:
    from jax._src.dispatch import (
        BACKEND_COMPILE_EVENT as _COMPILE,
    )
    from jax._src.dispatch import (
        JAXPR_TO_MLIR_MODULE_EVENT as _LOWER,
    )
    from jax._src.dispatch import (
        JAXPR_TRACE_EVENT as _TRACE,
    )
except ImportError:  # the names of jax 0.10.2
    _TRACE = "/jax/core/compile/jaxpr_trace_duration"
    _LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
    _COMPILE = "/jax/core/compile/backend_compile_duration"
_HIT = "/jax/compilation_cache/cache_hits"
_LOOKUP = "/jax/compilation_cache/compile_requests_use_cache"


@dataclasses.dataclass
class CompileStats:
    """Counts and seconds since the process started (or the last reset).

    traced: functions traced to a jaxpr; lowered: jaxprs lowered to StableHLO;
    compiled: programs XLA compiled; cache_hits: programs loaded from the persistent cache
    instead; cache_misses: programs looked up in the persistent cache and not found (then
    compiled and written to it); host_calls: calls the host tier evaluated with NumPy
    instead of running a compiled program (_host_tier.py); host_plans_traced /
    host_plans_loaded: new signatures the host tier took, traced here / whose plan an
    earlier process kept (_host_plans.py). The seconds are wall time on the
    compiling thread; compile_seconds includes writing the new entry to the cache.
    """

    traced: int = 0
    lowered: int = 0
    compiled: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    trace_seconds: float = 0.0
    lower_seconds: float = 0.0
    compile_seconds: float = 0.0
    cache_load_seconds: float = 0.0
    host_calls: int = 0
    host_plans_traced: int = 0
    host_plans_loaded: int = 0

    @property
    def total_seconds(self) -> float:
        """Everything spent making programs: tracing, lowering, compiling, loading."""
        return (self.trace_seconds + self.lower_seconds + self.compile_seconds
                + self.cache_load_seconds)

    def __str__(self) -> str:
        return (f"traced {self.traced} ({self.trace_seconds:.2f} s), lowered {self.lowered} "
                f"({self.lower_seconds:.2f} s), compiled {self.compiled} "
                f"({self.compile_seconds:.2f} s), persistent cache: {self.cache_hits} hits "
                f"({self.cache_load_seconds:.2f} s), {self.cache_misses} misses; "
                f"total {self.total_seconds:.2f} s; host tier: {self.host_calls} calls")


_stats = CompileStats()
_lock = threading.Lock()
# What one thread has seen of the program it is making: the events come in order on the
# thread that compiles (trace, lowering, backend compile with the cache events inside it).
_tls = threading.local()


def compile_stats(reset: bool = False) -> CompileStats:
    """Counts of programs traced, lowered, compiled and loaded from the persistent cache, with
    the seconds spent (a copy). `reset=True` returns them and starts counting from zero."""
    global _stats
    with _lock:
        out = dataclasses.replace(_stats)
        if reset:
            _stats = CompileStats()
    return out


def _persistent_cache_on() -> bool:
    import jax

    return (jax.config.jax_compilation_cache_dir is not None
            and jax.config.jax_enable_compilation_cache)


def _on_event(event: str, **kwargs) -> None:
    if event == _HIT:
        _tls.hit = True
    elif event == _LOOKUP:
        _tls.lookup = True


def _on_duration(event: str, secs: float, **kwargs) -> None:
    if event == _TRACE:
        with _lock:
            _stats.traced += 1
            _stats.trace_seconds += secs
        _tls.trace = (kwargs.get("fun_name"), secs)
    elif event == _LOWER:
        with _lock:
            _stats.lowered += 1
            _stats.lower_seconds += secs
        _tls.lower = (kwargs.get("fun_name"), secs)
    elif event == _COMPILE:
        hit = getattr(_tls, "hit", False)
        lookup = getattr(_tls, "lookup", False)
        _tls.hit = _tls.lookup = False
        miss = lookup and not hit and _persistent_cache_on()
        _tls.last_hit = hit
        with _lock:
            if hit:
                _stats.cache_hits += 1
                _stats.cache_load_seconds += secs
            else:
                _stats.compiled += 1
                _stats.compile_seconds += secs
                _stats.cache_misses += miss
        if _logs.enabled("compiles"):
            _log_compile(kwargs.get("fun_name") or "?", secs, hit)
        _tls.trace = _tls.lower = _tls.avals = None


def loaded_by_jax() -> bool:
    """Whether the last program compiled on this thread was loaded from JAX's persistent
    cache rather than compiled (and resets the answer). XLA:CPU cannot serialize such an
    executable again (its re-serialized form fails at run time: "Function ... not found"),
    so _programs.py keeps it only in memory."""
    hit = getattr(_tls, "last_hit", False)
    _tls.last_hit = False
    return hit


def log_host_tier(in_avals, secs: float, loaded: bool = False) -> None:
    """TORCHJAX_LOGS=compiles: a program's new signature taken by the host tier (evaluated
    with NumPy, not compiled), with what made it and where, as a compile's line says;
    `loaded`: its plan came from the program cache instead of a trace."""
    with _lock:
        if loaded:
            _stats.host_plans_loaded += 1
        else:
            _stats.host_plans_traced += 1
    if not _logs.enabled("compiles"):
        return
    what, where = _origin()
    shapes = ", ".join(a.str_short() for a in in_avals[:8])
    more = f", ... {len(in_avals)} arguments" if len(in_avals) > 8 else ""
    _logs.log("compiles", "%s(%s%s) evaluated with NumPy by the host tier (%s %s)%s",
              f"{what}: " if what else "", shapes, more,
              "plan loaded from the program cache in" if loaded else "trace", _ms(secs),
              f" at {where}" if where else "")


def count_host_call() -> None:
    """A call evaluated by the host tier (NumPy) instead of a compiled program."""
    _stats.host_calls += 1  # (one thread's increments; a lost one is only a count)


def count_program_miss() -> None:
    """A program looked up in torchjax's program cache, not found, compiled and written."""
    with _lock:
        _stats.cache_misses += 1


def count_loaded(secs: float, ahead: bool = False) -> None:
    """A program loaded from torchjax's own program cache (_programs.py): nothing was traced,
    lowered or compiled for it (`ahead`: loaded by _program_prefetch's thread, counted when
    taken)."""
    with _lock:
        _stats.cache_hits += 1
        _stats.cache_load_seconds += secs
    if _logs.enabled("compiles"):
        what, where = _origin()
        _logs.log("compiles", "%sloaded from the program cache in %s%s%s",
                  f"{what}: " if what else "", _ms(secs), " (ahead, on another thread)"
                  if ahead else "", f" at {where}" if where else "")


def _ms(secs: float) -> str:
    return f"{secs * 1e3:.1f} ms"


_MAX_ARGS = 8  # a fused backward takes dozens of arrays; the first ones are enough to tell


def _shapes(name: str) -> str:
    got = getattr(_tls, "avals", None)
    if not got or got[0] != name:
        return ""
    avals = got[1]
    try:
        parts = [a.str_short(short_dtypes=True) for a in avals[:_MAX_ARGS]]
    except Exception:  # an aval type without str_short: show nothing rather than fail
        return ""
    if len(avals) > _MAX_ARGS:
        parts.append(f"... {len(avals)} arguments")
    return "(" + ", ".join(parts) + ")"


def _log_compile(name: str, secs: float, hit: bool) -> None:
    done = f"loaded from the persistent cache in {_ms(secs)}" if hit else f"compiled in {_ms(secs)}"
    before = []
    trace = getattr(_tls, "trace", None)
    if trace and f"jit({trace[0]})" == name:
        before.append(f"trace {_ms(trace[1])}")
    lower = getattr(_tls, "lower", None)
    if lower and lower[0] == name:
        before.append(f"lowering {_ms(lower[1])}")
    extra = f" ({', '.join(before)})" if before else ""
    what, where = _origin()
    _logs.log("compiles", "%s%s%s %s%s%s", f"{what}: " if what else "", name, _shapes(name),
              done, extra, f" at {where}" if where else "")


# What made a program, read off the Python stack when it compiles (only while the compiles
# log is on): the op (generated torchjax.<op> code is compiled under this file name, and
# dispatch holds the op's row in a local `prep`), the backward node, or else the innermost
# torchjax function; and the first line of the user's own code.
_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
_GENERATED = "<torchjax op "
# bookkeeping frames, never what made a program
_NOT_ORIGINS = tuple(os.path.join(_PKG, f) for f in (
    "_compile_stats.py", "_programs.py", "_host_tier.py", "_program_entries.py",
    "_program_prefetch.py"))
_LIBRARIES = tuple({os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                    if k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _label(frame) -> str | None:
    """The op or backward node a torchjax frame is running, if it says."""
    loc = frame.f_locals
    op = getattr(loc.get("prep"), "op", None)
    if isinstance(getattr(op, "name", None), str):
        return op.name
    this = loc.get("self")
    if this is not None and hasattr(this, "_edges") and callable(getattr(this, "name", None)):
        return this.name()  # an autograd Node: MulBackward0, ...
    return None


def _origin() -> tuple[str, str]:
    what = fallback = where = ""
    name = threading.current_thread().name
    if name == "torchjax-fused-backward":  # _autograd/engine.py
        return "fused backward (compiled on its own thread)", ""
    if name == "torchjax-deferred-sequences":  # _deferred_programs.py
        return "deferred op sequence (compiled on its own thread)", ""
    if name.startswith("torchjax-compile-soon "):  # _program_soon.Soon
        return name[len("torchjax-compile-soon "):] + " (compiled ahead on its own thread)", ""
    try:
        frame = sys._getframe(1)
        while frame is not None:
            file = frame.f_code.co_filename
            if file.startswith(_GENERATED):
                what = what or file[len(_GENERATED):-1]
            elif file.startswith(_PKG):
                if file not in _NOT_ORIGINS:
                    what = what or _label(frame) or ""
                    if not fallback:
                        mod = os.path.splitext(file[len(_PKG):])[0].replace(os.sep, ".")
                        this = frame.f_locals.get("self")
                        owner = type(this).__name__ if this is not None else mod
                        fallback = f"{owner}.{frame.f_code.co_name}"
            elif not file.startswith(_LIBRARIES) and not file.startswith("<frozen"):
                where = f"{file}:{frame.f_lineno}"
                break
            frame = frame.f_back
    except Exception:  # a diagnostic: never let it break a compile
        pass
    return what or fallback, where


class _ShapeCapture(logging.Filter):
    """Reads the argument shapes off pxla's "Compiling ..." debug record, then lets a record
    through only if the logger's level without this module would have (see _install)."""

    def __init__(self, logger: logging.Logger, level_before: int):
        super().__init__()
        self._logger = logger
        self._level_before = level_before

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if (isinstance(record.msg, str) and record.msg.startswith("Compiling ")
                    and isinstance(record.args, tuple) and len(record.args) >= 2):
                _tls.avals = (record.args[0], record.args[1])
            level = self._level_before
            if level == logging.NOTSET and self._logger.parent is not None:
                level = self._logger.parent.getEffectiveLevel()
            return record.levelno >= level
        except Exception:  # never let bookkeeping break a compile
            return True


_installed = False


def install() -> None:
    """Register the listeners (once, when this module is imported; that starts no backend)."""
    global _installed
    if _installed:
        return
    _installed = True
    from jax import monitoring

    monitoring.register_event_listener(_on_event)
    monitoring.register_event_duration_secs_listener(_on_duration)
    # pxla makes its "Compiling ..." record only when its logger is enabled for DEBUG; the
    # filter then drops what the user's settings would not have shown.
    pxla = logging.getLogger("jax._src.interpreters.pxla")
    if pxla.getEffectiveLevel() > logging.DEBUG:
        level_before = pxla.level
        pxla.setLevel(logging.DEBUG)
    else:
        level_before = pxla.level
    pxla.addFilter(_ShapeCapture(pxla, level_before))


install()
