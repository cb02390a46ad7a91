"""In-place samplers on Tensor (uniform_, normal_), honouring manual_seed and a Generator."""

from __future__ import annotations

from . import _creation
from ._autograd import grad_mode
from ._tensor import Tensor


def _check_leaf(t: Tensor):
    if grad_mode.STATE.grad_enabled and t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from U(from_, to)."""
    _check_leaf(self)
    arr = _creation._sample("uniform", tuple(self._data.shape), self.dtype, generator,
                            float(from_), float(to))
    self._write(arr)
    return self


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from N(mean, std**2)."""
    _check_leaf(self)
    arr = _creation._sample("normal", tuple(self._data.shape), self.dtype, generator,
                            float(mean), float(std))
    self._write(arr)
    return self


def install(tensor_cls=Tensor):
    tensor_cls.uniform_ = uniform_
    tensor_cls.normal_ = normal_
