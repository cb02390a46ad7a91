"""torch.compiler's markers for Dynamo, which libraries call at import (einx registers its
ops with allow_in_graph): torchjax's compile runs the Python it traces, so a function marked
to be kept whole, or whose result is to be taken as a constant, is already treated so."""

from __future__ import annotations

from ._compiled import is_compiling


def allow_in_graph(fn):
    """Dynamo: put `fn` into the graph without looking inside. torchjax traces by running
    Python: returns `fn` (or the list of them) unchanged."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """Dynamo: the result of `fn` is a constant of the graph. A trace here runs `fn` once and
    keeps what it returned: returns `fn` unchanged."""
    return fn


def is_dynamo_compiling() -> bool:
    """Whether this code runs under torchjax.compile's trace (PyTorch: under Dynamo's)."""
    return is_compiling()


def is_exporting() -> bool:
    """Whether torch.export is tracing this code: never in torchjax."""
    return False


def cudagraph_mark_step_begin() -> None:
    """CUDA graphs' step marker: torchjax records none, so there is nothing to mark."""
