"""torch.cond and torch.while_loop, PyTorch's control-flow operators, run eagerly: the branch
the predicate picks (or the loop body while the condition holds) is called on the operands,
so values and gradients are those of the ops inside. A predicate computed inside
torchjax.compile has no value while tracing: that raises a clear error rather than guessing
a branch (the compiled form, lowering to lax.cond / lax.while_loop, is not there yet).
"""

from __future__ import annotations

import jax

from ._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, what: str) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got "
                               f"{pred}.")
        if isinstance(pred._data, jax.core.Tracer):
            raise NotImplementedError(
                f"torch.cond / torch.while_loop with a {what} computed inside torchjax.compile "
                f"is not supported by torchjax yet: compute it outside the compiled function, "
                f"or use Python control flow on a value known before the call")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"Expected {what} to be bool or tensor, but got {pred}.")


def _check_operands(operands):
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands)."""
    take = _truth(pred, "pred")
    _check_operands(operands)
    return (true_fn if take else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Apply body_fn to the carried values while cond_fn holds; the final values, a tuple."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise AssertionError("Can't unpack scalar tensors.")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "cond_fn's result"):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried
