"""The compiled function: a cache of programs keyed by everything a trace decided on.

Each call computes a key: the arguments' structure, each tensor argument's shape, dtype,
device and requires_grad, the value of every other argument, the grad mode, and the
signature of the state the function reaches (`_discover.walk`). A known key runs its program;
a new one traces (and logs the reason under TORCHJAX_LOGS=recompiles). A signature that
cannot be compiled (a graph break) runs eagerly from then on, after one warning; past
`config.recompile_limit` programs, new signatures run eagerly too.
"""

from __future__ import annotations

import functools
import warnings

from jax.core import Tracer

from .. import _logs
from .._autocast import STATE as AUTOCAST
from .._autograd.grad_mode import STATE
from .._functionalize import tree_flatten
from .._tensor import Tensor
from .._tensor import _ArrayImpl as ArrayImpl
from .._x64 import scope
from ..nn.modules.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer
from . import _discover, _guard, config
from ._breaks import GraphBreak, Unsupported, classify, describe
from ._discover import FLAG_NAMES
from ._prefill import confirmed, lazy_writes, prefill, prefill_fresh
from ._program import Program, Stale
from ._trace import Snapshot, trace

_EAGER = "eager"
_TRACING = [0]  # > 0 while a compiled function traces (is_compiling)


def is_compiling() -> bool:
    """Whether the calling code is being traced by `torchjax.compile` now.

    See https://pytorch.org/docs/stable/generated/torch.compiler.is_compiling.html.
    """
    return _TRACING[0] > 0


def _value_key(x):
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return (type(x), x)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x), x) if not callable(x) else ("id", id(x))


class CompiledFunction:
    """fn compiled into one program per call signature (see the module docstring)."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, donate=True, name=None):
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.donate = donate
        self._name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self._programs: dict = {}
        self._last_key = None
        self._limit_hit = False
        self.compiles = 0
        self._top_ids = self._top = self._src = None
        self._specs: dict = {}
        self._guard = self._guard_sig = self._walked = self._guard_scalars = None
        self._guard_builds = 0
        # (key, express, program) of the last tensors-only call the guard accepted, where
        # express(args) is the guard with the rest of the key checked first (_guard.express),
        # kept per key in _express_fns
        self._express = None
        self._express_fns: dict = {}
        functools.update_wrapper(self, fn, updated=())

    # -- introspection -------------------------------------------------------------------------

    @property
    def programs(self) -> list:
        """The XLA programs compiled so far for this function (eager fallbacks are not included).
        """
        return [p for p in self._programs.values() if p is not _EAGER]

    @property
    def executions(self) -> int:
        """XLA executions of this function's programs (a test counts them)."""
        return sum(p.executions for p in self.programs)

    def __get__(self, obj, objtype=None):
        # a compiled method: bind like a function would
        return self if obj is None else functools.partial(self, obj)

    # -- a call --------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if config.disabled[0] or _TRACING[0]:
            # inside another compiled function's trace the code is simply part of that trace
            return self._fn(*args, **kwargs)
        ex = self._express
        if ex is not None and not kwargs:
            known = ex[1](args)
            if known is not None:
                with scope():
                    return self._run(ex[0], args, kwargs, args, known, None, ex[2])
        guard = self._guard
        if not kwargs and all(type(a) is Tensor for a in args):
            # the usual call, tensors only: its spec depends on the count alone
            leaves, inputs = args, args
            spec = self._specs.get(len(args))
            if spec is None:
                spec = self._specs[len(args)] = tree_flatten((args, kwargs))[1]
        else:
            leaves, spec = tree_flatten((args, kwargs))
            inputs = [x for x in leaves if isinstance(x, Tensor)]
            if any(isinstance(a, (Module, Optimizer, LRScheduler))
                   for a in (*args, *kwargs.values())):
                guard = None  # the sources depend on the arguments: walked every call
        for t in inputs:
            if isinstance(t._data, Tracer):  # inside a JAX transform (torchjax.func, ...)
                return self._fn(*args, **kwargs)
        known = guard(inputs) if guard is not None else None
        if known is None:
            src = self._sources(args, kwargs)
            state, state_sig = _discover.walk(src)
            scalars = _discover.scalar_values(src)
            self._new_guard(src, state, state_sig, scalars)
            known = _known(inputs, state)
            n_unique = len({id(t) for t in inputs})
        else:  # every tensor once, the same scalar values (the guard checks both)
            src, state_sig, n_unique = None, self._guard_sig, len(inputs)
            scalars = self._guard_scalars
        # the autocast state (which device types cast to which dtype) is baked into the
        # trace like grad mode: entering or leaving autocast needs another program
        key = (spec, tuple(_input_key(x) for x in leaves), STATE.grad_enabled, n_unique,
               state_sig, AUTOCAST.key, scalars)
        program = self._programs.get(key)
        self._express = None
        if src is None and program is not None and program is not _EAGER \
                and inputs is args and not kwargs:
            # the guard accepted a tensors-only call of a known program: the next such call
            # with the same argument keys skips building and looking up the key
            fn = self._express_fns.get(key)
            if fn is None:
                fn = self._express_fns[key] = _guard.express(
                    guard, key[1], (STATE, STATE.grad_enabled), (AUTOCAST, AUTOCAST.key),
                    ArrayImpl)
            self._express = (key, fn, program)
        # the step is traced and run in torchjax's x64 scope, as its ops run eagerly: one
        # trace sees one x64 setting, and the program keeps PyTorch's 64-bit dtypes
        with scope():
            return self._run(key, args, kwargs, inputs, known, src, program)

    def _new_guard(self, src, state, state_sig, scalars) -> None:
        """Build the fast path for this state (see _guard) once the same signature has
        been walked twice in a row, within a budget: state that changes on every call
        keeps the walk."""
        self._guard = self._express = None
        self._express_fns.clear()  # (they hold the old guard's checks)
        if (state_sig, scalars) != self._walked or self._src is not src \
                or self._guard_builds >= 8:
            self._walked = (state_sig, scalars)
            return
        self._guard_builds += 1
        self._guard = _guard.build(self._fn, src, state)
        self._guard_scalars = scalars
        # the same tuple object as the programs' keys hold, so that looking a key up
        # compares it by identity rather than entry by entry
        self._guard_sig = next((k[4] for k in self._programs if k[4] == state_sig),
                               state_sig)

    def _run(self, key, args, kwargs, inputs, known, src, program):
        if program is None:
            if src is None:
                src = self._sources(args, kwargs)
            program, known = self._compile(key, args, kwargs, inputs, known, src)
        if program is _EAGER:
            return self._fn(*args, **kwargs)
        try:
            return program.run(known)
        except Stale:
            # a state tensor's shape, dtype or device changed: trace this signature again
            if _logs.enabled("recompiles"):
                _logs.log("recompiles", "Recompiling function %s: a state tensor's shape, "
                          "dtype or device changed", self._name)
            del self._programs[key]
            self._express = None
            self._express_fns.pop(key, None)
            if src is None:
                src = self._sources(args, kwargs)
            program, known = self._compile(key, args, kwargs, inputs, known, src, log=False)
            if program is _EAGER:
                return self._fn(*args, **kwargs)
            return program.run(known, pre_done=True)

    def _compile(self, key, args, kwargs, inputs, known, src, log=True):
        if self._programs and len(self.programs) >= config.recompile_limit:
            if not self._limit_hit:
                self._limit_hit = True
                warnings.warn(
                    f"torchjax.compile: {self._name} reached recompile_limit "
                    f"({config.recompile_limit}) programs; last reason: "
                    f"{_reason(self._last_key, key)}. New call signatures of this function "
                    "run eagerly from now on. To see every recompile and its reason, set "
                    "TORCHJAX_LOGS=recompiles; raise torchjax._dynamo.config.recompile_limit "
                    "if the signatures are expected.", stacklevel=4)
            self._programs[key] = _EAGER
            return _EAGER, known
        if log and self._last_key is not None and _logs.enabled("recompiles"):
            _logs.log("recompiles", "Recompiling function %s: %s", self._name,
                      _reason(self._closest(key), key))
        self._last_key = key
        if STATE.grad_enabled:
            got = self._fresh(key, args, kwargs, inputs, known, src)
            if got is not None:
                return got
        _TRACING[0] += 1
        try:
            traced = trace(self._fn, args, kwargs, known, src)
        except Exception as e:
            brk = classify(e)
            if brk is None:
                raise
            msg = describe(brk, self._name)
            if self.fullgraph:
                raise Unsupported(msg) from e
            if _logs.enabled("graph_breaks"):
                _logs.log("graph_breaks", "%s", msg)
            warnings.warn(msg + "; this call signature runs eagerly", stacklevel=5)
            self._programs[key] = _EAGER
            return _EAGER, known
        finally:
            _TRACING[0] -= 1
        lazy = lazy_writes(traced)
        if lazy and not (traced.differentiable_outputs and STATE.grad_enabled):
            got = self._prefilled(lazy, key, args, kwargs, inputs, known, src)
            if got is not None:
                return got
        program = Program(traced, len(_unique(inputs)), self.donate, self._name)
        self._programs[key] = program
        self.compiles += 1
        return program, known

    def _fresh(self, key, args, kwargs, inputs, known, src):
        """(program, known) of a fresh training loop traced once over guessed state (see
        _prefill), or None, having changed nothing, to trace it the ordinary way."""
        snapshot = Snapshot(known, src, [])
        made = prefill_fresh(src.optimizers)
        if made is None:
            return None
        state, state_sig = _discover.walk(src)
        known_b = _known(inputs, state)
        _TRACING[0] += 1
        try:
            traced = trace(self._fn, args, kwargs, known_b, src)
        except Exception:
            traced = None  # the ordinary trace meets the same problem and reports it
        finally:
            _TRACING[0] -= 1
        if traced is None or traced.differentiable_outputs \
                or not confirmed(traced, made, known_b):
            snapshot.restore()
            return None
        return self._keep_steady(traced, inputs, key, state_sig), known_b

    def _prefilled(self, lazy, key, args, kwargs, inputs, known, src):
        """(program, known) of the steady signature, its gradients and optimizer state
        created now (see _prefill); None to keep the first call's own program."""
        snapshot = Snapshot(known, src, [])
        if not prefill(lazy, known, len(_unique(inputs))):
            snapshot.restore()
            return None
        state, state_sig = _discover.walk(src)
        known_b = _known(inputs, state)
        _TRACING[0] += 1
        try:
            traced = trace(self._fn, args, kwargs, known_b, src)
        except Exception:
            snapshot.restore()  # the first call's own program will do
            return None
        finally:
            _TRACING[0] -= 1
        return self._keep_steady(traced, inputs, key, state_sig), known_b

    def _keep_steady(self, traced, inputs, key, state_sig):
        """The program of a trace over created state, kept under the key of that state (the
        call's key with the new state signature; the same scalars: nothing ran between)."""
        steady = key[:4] + (state_sig,) + key[5:]
        program = Program(traced, len(_unique(inputs)), self.donate, self._name)
        self._programs[steady] = program
        self._last_key = steady
        self.compiles += 1
        return program

    def _sources(self, args, kwargs):
        top = _discover.top_level(self._fn)
        ids = tuple(map(id, top))
        if not args and not kwargs or not any(
                isinstance(a, (Module, Optimizer, LRScheduler))
                for a in (*args, *kwargs.values())):
            if ids == self._top_ids and not self._src.watched and _discover.pins_hold(self._src):
                # (what containers hold may change between calls: then found again)
                return self._src
            self._src = _discover.roots(self._fn, (), {})
            self._top_ids, self._top = ids, top  # held: the ids stay those objects'
            return self._src
        return _discover.roots(self._fn, args, kwargs)

    def _closest(self, key):
        """The cached key that differs from `key` in the fewest parts (what the log compares
        with); the last one on a tie."""
        best, score = self._last_key, None
        for k in self._programs:
            d = _distance(k, key)
            if score is None or d <= score:
                best, score = k, d
        return best

    def reset(self) -> None:
        """Drops every compiled program and guard, so the next call traces and compiles again."""
        self._guard = self._walked = self._express = None
        self._express_fns.clear()
        self._programs.clear()
        self._last_key = None
        self._limit_hit = False


def _input_key(x):
    if isinstance(x, Tensor):
        # the aval (shape, dtype); devices and shardings the jitted program checks itself.
        # Whether a leaf argument has a .grad too: a backward inside the step sets it, or
        # adds to it (which the trace refuses: see trace's input_grads)
        return (x._data.aval, x._requires_grad, x._grad is not None)
    return _value_key(x)


def _unique(tensors):
    seen = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _known(inputs, state):
    """The program's tensors in order: the arguments (each once), then the state."""
    if not inputs:
        return state
    ids = {id(t) for t in inputs}
    return [*_unique(inputs), *(t for t in state if id(t) not in ids)]


def _distance(a, b) -> int:
    """How many entries two keys differ in (argument leaves and state entries one by one)."""
    d = (a[0] != b[0]) + (a[2] != b[2]) + (a[3] != b[3]) + (a[5] != b[5]) + (a[6] != b[6])
    for part in (1, 4):
        x, y = a[part], b[part]
        d += abs(len(x) - len(y)) + sum(u != v for u, v in zip(x, y))
    return d


def _reason(old, new) -> str:
    """Why `new` needs another program than `old`: the first part of the key that differs."""
    if old is None:
        return "first call"
    if old[1] != new[1] or old[0] != new[0]:
        for i, (a, b) in enumerate(zip(old[1], new[1])):
            if a != b:
                return f"argument {i} changed: {_show(a)} -> {_show(b)}"
        if len(old[1]) != len(new[1]):
            return (f"{len(new[1])} arguments instead of {len(old[1])} (now "
                    f"{', '.join(_show(k) for k in new[1])})")
        return "the arguments' structure changed"
    if old[2] != new[2]:
        return f"grad mode changed to {'enabled' if new[2] else 'disabled'}"
    if old[5] != new[5]:
        return ("autocast is now " + (", ".join(f"{d}: {t}" for d, t in new[5]) if new[5]
                                      else "off"))
    if old[6] != new[6]:
        for a, b in zip(old[6], new[6]):
            if a != b:
                return (f"a Python value the function reads (a global or closure variable) "
                        f"changed: {_show_scalar(a)} -> {_show_scalar(b)}")
    if old[3] != new[3]:
        return "the same tensor is now passed as several arguments (or no longer)"
    for a, b in zip(old[4], new[4]):
        if a != b:
            return f"the state the function reaches changed: {_show_state(a, b)}"
    return "the state the function reaches changed (parameters, buffers or optimizer state " \
           "were added or removed)"


def _show(k) -> str:
    if isinstance(k, tuple) and len(k) == 2 and hasattr(k[0], "shape"):
        aval, rg = k
        return f"Tensor(shape={list(aval.shape)}, dtype={aval.dtype}, requires_grad={rg})"
    if isinstance(k, tuple) and len(k) == 2:
        return repr(k[1])
    return repr(k)


def _show_scalar(k) -> str:
    if isinstance(k, tuple):
        return repr(k[1])
    return f"a {k.__name__}" if isinstance(k, type) else repr(k)  # (a pinned object)


def _show_state(a, b) -> str:
    if isinstance(a, tuple) and a[:1] == ("optimizer hooks",):
        return "an optimizer's step hooks changed"
    if isinstance(a, tuple) and a[:1] == ("global hooks",):
        return "hooks registered on every module (register_module_*_hook) changed"
    if isinstance(a, tuple) and isinstance(b, tuple) and a and isinstance(a[0], type) \
            and a[0] is b[0] and len(a) == 7:
        if a[1] != b[1]:
            return f"{a[0].__name__}.training is now {b[1]} (model.train()/eval())"
        if a[6] != b[6]:
            return f"an attribute of a {a[0].__name__} changed: {a[6]!r} -> {b[6]!r}"
        return f"hooks of a {a[0].__name__} changed"
    if type(a) is int and type(b) is int and a in FLAG_NAMES and b in FLAG_NAMES:
        rg_a, rg_b, none_b = FLAG_NAMES[a][0], FLAG_NAMES[b][0], FLAG_NAMES[b][1]
        if rg_a != rg_b:
            return f"a tensor's requires_grad is now {rg_b}"
        return "a parameter's .grad is now " + ("None" if none_b else "set")
    return f"{a!r} -> {b!r}"


def compile_function(fn, **options) -> CompiledFunction:
    return CompiledFunction(fn, **options)


__all__ = ["CompiledFunction", "GraphBreak", "Unsupported", "is_compiling"]
