"""One MLIR context per thread for torchjax's own lowerings, instead of a new one each.

JAX lowers every program in a fresh MLIR context (jax._src.interpreters.mlir.make_ir_context):
making it and loading its dialects costs 3-9 ms, 40-75% of lowering one of eager mode's small
programs (measured: a jitted tanh-sum of a 64x64 array lowers in 6.3-11.6 ms with a fresh
context, 2.1-2.6 ms reusing one), and eager mode lowers one program per op, shape and backward
(a model's first step 20-40 programs, the test suite ~18,000). So while torchjax's program
cache lowers a program that it then compiles on the same thread (_programs._Program._compile),
the context is this thread's own, kept for RESET_AFTER lowerings (a context keeps every
attribute it has uniqued, constants included, until it is dropped) and then made anew.

Only there: a program lowered here and compiled on another thread (the fused backward's,
_programs.compile_ahead) gets a fresh context, so no context is ever used by two threads at
once; the user's own jax.jit programs, and anything else JAX lowers, are untouched. Without
the JAX internals this needs (another JAX version), lowering goes on as JAX does it.
"""

from __future__ import annotations

import threading

try:
    from jax._src.interpreters import mlir as _mlir

    _REAL = _mlir.make_ir_context
except (ImportError, AttributeError):  # pragma: no cover - another jax
    _mlir = _REAL = None

RESET_AFTER = 128
_tls = threading.local()


def _make_ir_context():
    if not getattr(_tls, "depth", 0):
        return _REAL()
    uses = getattr(_tls, "uses", RESET_AFTER)
    if uses >= RESET_AFTER:
        _tls.context, uses = _REAL(), 0
    _tls.uses = uses + 1
    return _tls.context


class shared:
    """`with shared():` JAX's lowerings on this thread use its kept context."""

    __slots__ = ()

    def __enter__(self):
        _tls.depth = getattr(_tls, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _tls.depth -= 1
        return False


def install() -> None:
    """Route JAX's make_ir_context through _make_ir_context (which calls JAX's own outside
    `shared`). Once per process; nothing without the internals."""
    if _mlir is not None and _mlir.make_ir_context is _REAL:
        _mlir.make_ir_context = _make_ir_context
