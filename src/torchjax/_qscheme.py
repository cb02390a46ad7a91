"""torch.qscheme and its five constants (torch.per_tensor_affine, ...).

Quantization code passes these around to say how a tensor is (or would be) quantized, compares
them and keys tables on them; they print, compare and pickle as PyTorch's do. torchjax has no
quantized tensors (see _ops/quantized_tensors.py), but the fake-quantization ops and observers'
configuration read these names.
"""

from __future__ import annotations

__all__ = ["qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams"]


class qscheme:  # noqa: N801  (PyTorch's name)
    """How a tensor is quantized: one of the torch.per_* constants (not made by users)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.qscheme' instances")

    @classmethod
    def _make(cls, name: str) -> qscheme:
        got = object.__new__(cls)
        got._name = name
        return got

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        # pickled by name, so a loaded scheme is the same constant (`is` comparisons hold)
        return _by_name, (self._name,)


def _by_name(name: str) -> qscheme:
    return globals()[name]


qscheme.__module__ = "torch"
per_tensor_affine = qscheme._make("per_tensor_affine")
per_channel_affine = qscheme._make("per_channel_affine")
per_tensor_symmetric = qscheme._make("per_tensor_symmetric")
per_channel_symmetric = qscheme._make("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme._make("per_channel_affine_float_qparams")
