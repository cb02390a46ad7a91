"""torchjax's x64 scope: PyTorch's int64 and float64 without changing the user's own JAX.

PyTorch's dtypes need JAX's x64 mode (int64 indices and sizes, float64 tensors, 64-bit
seeds), but turning it on for the whole process would change every other JAX program in it:
the user's `jnp.zeros(2)` would become float64, `jnp.arange(3)` int64, and their jitted steps
slower. So torchjax turns x64 on only while its own code runs, and only for the calling
thread (JAX keeps a config context per thread), and puts the caller's setting back on the way
out. A user who enabled x64 themselves keeps it: the scope then changes nothing.

Where it is entered: every op of the op table passes through _dispatch.dispatch /
dispatch_inplace / dispatch_out, which enter it inline (the hot path pays two calls into
JAX's config and no Python frame). Every other entry point that makes or computes arrays
(factories, backward, optimizer steps, serialization, torchjax.func, ...) enters it too,
in one of two ways:
- `with scope():` inside the function: adds no frame, so the warnings raised below keep
  pointing where their stacklevel says (the user's line). Public functions that warn, or
  call code that warns, use this.
- the `scoped` decorator: shorter, but its wrapper is one more frame on the stack; for
  functions no such warning passes through (factories, pickle's reconstructors, callbacks
  handed back to the user).
Code that torchjax calls back from inside (backward hooks, Function.forward/backward,
from_jax functions, the functions given to torchjax.func, optimizer closures) therefore runs
in the scope and sees the dtypes of the tensors it is handed. A Module's forward is the
user's code: each torchjax call in it enters the scope itself.

Inside a JAX transformation the user started with x64 off (their own jax.jit or jax.grad
over code that uses torchjax), x64 mode is not switched on: a trace must see one setting from
start to end (JAX lowers the whole program under the setting its caller has). The scope
allows explicitly requested 64-bit dtypes there instead (JAX's jax_explicit_x64_dtypes,
thread-locally): JAX's defaults in that program stay 32-bit, while a torchjax tensor that is
int64 or float64 keeps its dtype, as it does eagerly (an exported BatchNorm counts its
batches in int64 under the user's jax.jit). Such programs lower as any mixed-width program.

Compiled programs are not shared across the two settings: jax.jit keys its caches on x64,
so torchjax's programs and the user's stay separate.
"""

from __future__ import annotations

import functools
import inspect

import jax

# The jax_enable_x64 config state. Its swap_local / set_local change the setting for this
# thread only and are two calls into C++; `with jax.enable_x64(True):` makes the same two
# calls (the option has no update hooks) from four Python ones, about 4x the cost, on a path
# every op takes.
X64 = jax.enable_x64

try:
    # The current trace: JAX's eval trace when no transformation is running. Read directly
    # (one config lookup) because this is checked on every op when x64 is off.
    from jax._src.core import eval_trace as EVAL
    from jax._src.core import trace_state_strong_ref as TRACE
except ImportError:  # moved in a newer jax: behave as if never inside a user's transformation
    class _TopLevel:
        value = None

    TRACE, EVAL = _TopLevel(), None

# The token of a scope that changed nothing (swap_local returns the previous thread-local
# value, never None)
KEPT = None

try:
    from jax._src.config import ExplicitX64Mode as _Mode
    from jax._src.config import explicit_x64_dtypes as EXPLICIT
    _ALLOW = _Mode.ALLOW
except ImportError:  # a jax without the option: inside user transforms nothing is changed
    EXPLICIT = None


class Allowed:
    """The token of a scope entered inside a user's x64-off transformation: it allowed
    explicit 64-bit dtypes, and puts the previous mode back."""

    __slots__ = ("prev",)

    def restore(self):
        EXPLICIT.set_local(self.prev)


def enter():
    """Enter the scope; returns the token `leave` takes. Hot paths inline the first branch."""
    if X64.value:
        return KEPT
    if TRACE.value is EVAL:
        return X64.swap_local(True)
    return allow()


def allow():
    """Allow explicit 64-bit dtypes (the scope inside a user's x64-off transformation)."""
    if EXPLICIT is None:
        return KEPT
    token = Allowed()
    token.prev = EXPLICIT.swap_local(_ALLOW)
    return token


def leave(token):
    if token is not KEPT:
        if token.__class__ is Allowed:
            token.restore()
        else:
            X64.set_local(token)


class scope:
    """`with scope():` the x64 scope around a block (see the module docstring)."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = enter()

    def __exit__(self, *exc):
        leave(self.token)


def scoped(fn):
    """fn, run inside the x64 scope (see the module docstring)."""
    if inspect.isgeneratorfunction(fn):
        # the body of a generator runs at each next(), after the wrapper has returned
        raise TypeError(f"scoped: {fn.__qualname__} is a generator function; scope its caller "
                        "or each step instead")

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if X64.value:
            return fn(*args, **kwargs)
        token = enter()
        try:
            return fn(*args, **kwargs)
        finally:
            leave(token)

    run.__torchjax_x64__ = True
    return run


def scope_functions(namespace: dict, names=None) -> None:
    """Replace the public functions defined in a module (namespace: its globals()) by scoped
    ones, so callers inside and outside the module get the scoped version. `names`: only
    these (default: every public name whose function was defined in this module)."""
    module = namespace["__name__"]
    for name in list(namespace if names is None else names):
        fn = namespace[name]
        if names is None and (name.startswith("_") or not inspect.isfunction(fn)
                              or fn.__module__ != module):
            continue
        if not getattr(fn, "__torchjax_x64__", False):
            namespace[name] = scoped(fn)
