"""Graph breaks: code a trace cannot turn into a program, and where the user wrote it.

A trace stops where Python needs a value the program only has at run time (`.item()`,
`bool(tensor)` in an `if`, `.tolist()`, `.numpy()`, printing, a shape that depends on the
values: `nonzero`, boolean-mask indexing, `unique`), or where the step changes state the
program cannot write back. That call signature then runs eagerly (one warning), or, with
`fullgraph=True`, raises `Unsupported` naming the user's file, line and the reason.
"""

from __future__ import annotations

import contextlib
import os
import threading
import traceback

import jax

from .. import _untraceable

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_JAX = os.path.dirname(os.path.abspath(jax.__file__))

# Tensor methods that need the values; named in the reason when the trace stops inside one
_NEEDS_VALUES = {
    "item": "Tensor.item() reads the value",
    "tolist": "Tensor.tolist() reads the values",
    "numpy": "Tensor.numpy() reads the values",
    "__array__": "converting a tensor to a NumPy array reads the values",
    "__bool__": "bool(tensor) (an `if` or `while` on a tensor) reads the value",
    "__float__": "float(tensor) reads the value",
    "__int__": "int(tensor) reads the value",
    "__index__": "using a tensor as an index or size reads the value",
    "__complex__": "complex(tensor) reads the value",
    "tensor_repr": "printing a tensor reads the values",
    "__format__": "formatting a tensor reads the value",
}

_CONCRETE_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                    jax.errors.TracerBoolConversionError,
                    jax.errors.TracerIntegerConversionError,
                    jax.errors.NonConcreteBooleanIndexError)


class GraphBreak(Exception):
    """Raised inside a trace where the step cannot be compiled; `reason` says why."""

    def __init__(self, reason: str, where: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.where = where
        if _SEEN[0] is not None:
            _SEEN[0].append(self)


_SEEN: list = [None]  # the breaks of the running trace, caught or not (see sticky)

# Tensor methods that read values; while tracing, each notes the error it raises on a tracer
_READERS = ("item", "tolist", "numpy", "__array__", "__bool__", "__float__", "__int__",
            "__index__", "__complex__", "__format__")


@contextlib.contextmanager
def sticky():
    """Note every graph break raised while the body runs, into the list it yields, including
    those the traced code catches itself: a break caught by a try/except would otherwise let
    the trace complete and compile what the except clause made of it (its message, a
    fallback value), where eager mode gives the values. The caller raises the first noted
    break once the trace ends."""
    with _PATCHING:
        yield from _sticky()


# Patching the class is process-wide: two threads tracing at once would each save the other's
# wrappers as "originals" and could leave them installed for good, so traces take turns (a
# trace runs Python for seconds at most; the programs then run without the lock).
_PATCHING = threading.RLock()


def _sticky():
    from .._tensor import Tensor

    seen: list = []
    prev = (_SEEN[0], _untraceable.ON_CREATE[0])
    _SEEN[0] = seen
    _untraceable.ON_CREATE[0] = seen.append
    # (where each reader is defined: Tensor or one of its bases, _tensor_host.py)
    originals = {}
    for name in _READERS:
        owner = next((c for c in Tensor.__mro__ if name in c.__dict__), None)
        if owner is not None and owner is not object:
            originals[name] = (owner, owner.__dict__[name])

    def noting(original):
        def reader(self, *args, **kwargs):
            try:
                return original(self, *args, **kwargs)
            except _CONCRETE_ERRORS as e:
                seen.append(e)
                raise
        return reader

    for name, (_, original) in originals.items():
        setattr(Tensor, name, noting(original))
    try:
        yield seen
    finally:
        for name, (owner, original) in originals.items():
            if owner is Tensor:
                setattr(Tensor, name, original)
            else:  # the base's own, found again through the MRO
                delattr(Tensor, name)
        _SEEN[0], _untraceable.ON_CREATE[0] = prev


class Unsupported(RuntimeError):
    """fullgraph=True and the function cannot be one program (torch._dynamo.exc.Unsupported)."""


def _is_internal(filename: str) -> bool:
    f = os.path.abspath(filename)
    return f.startswith(_PACKAGE) or f.startswith(_JAX) or "/site-packages/jax" in f \
        or os.path.basename(os.path.dirname(f)) in ("contextlib", "functools") \
        or f.endswith(("/contextlib.py", "/functools.py"))


def classify(exc: BaseException) -> GraphBreak | None:
    """The graph break an exception from a trace stands for, with the user's line, or None
    when it is an ordinary error of the user's code (re-raised as it is)."""
    if isinstance(exc, GraphBreak):
        reason = exc.reason
    elif isinstance(exc, _CONCRETE_ERRORS) or (
            isinstance(exc, RuntimeError) and "cannot be traced" in str(exc)):
        reason = None
    else:
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    inner = max((i for i, fr in enumerate(frames) if not _is_internal(fr.filename)),
                default=None)
    user = frames[inner] if inner is not None else None
    # the first torchjax method below the user's line that needed a value
    what = next((_NEEDS_VALUES[fr.name] for fr in frames[(inner or 0) + 1:]
                 if fr.name in _NEEDS_VALUES), None)
    if reason is None:
        if what is None:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            what = f"a value the program only has when it runs is needed ({first})"
        reason = what
    where = f"{user.filename}:{user.lineno}" + (f" ({user.line.strip()})" if user.line else "") \
        if user is not None else None
    return GraphBreak(reason, where)


def describe(brk: GraphBreak, fn_name: str) -> str:
    where = f" at {brk.where}" if brk.where else ""
    return f"Graph break in {fn_name}{where}: {brk.reason}"
