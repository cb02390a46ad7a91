"""Op-table row and composite: torch.native_dropout, dropout returning its keep mask too:
(input * mask / (1 - p), mask) in training, (a copy of input, all True) otherwise, the output
under PyTorch's NativeDropoutBackward0 in both. The mask is a Bernoulli(1 - p) draw from
torchjax's generator (other draws than PyTorch's, the same distribution)."""

from __future__ import annotations

from ._registry import function, op


@op(tensors=("input", "mask"), scalars=("scale",), promote="none", function=False,
    method=False, grad="NativeDropoutBackward0", saves=("mask",))
def _native_dropout_apply(input, mask, scale):
    """input where mask holds, times scale; zero elsewhere."""
    return input * mask.astype(input.dtype) * scale


@function(name="native_dropout", method=False)
def native_dropout(input, p, train):
    """(output, mask): dropout's output and the bool mask of the elements kept."""
    from .. import _creation, _dtypes
    from .._dispatch import call_op
    from .._sampling import scalar_name
    if train is None or train:
        if not 0 <= 1 - p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p:g}")
        if not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{scalar_name(input.dtype)}")
        u = _creation.rand(tuple(input.shape), dtype=_dtypes.float32, device=input.device)
        mask = u < (1 - p)
        scale = 1.0 / (1 - p) if p < 1 else 0.0
    else:
        mask = _creation.ones(tuple(input.shape), dtype=_dtypes.bool, device=input.device)
        scale = 1.0
    return call_op("_native_dropout_apply", input, mask, scale), mask
