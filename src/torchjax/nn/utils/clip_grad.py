"""torchjax.nn.utils.clip_grad: clip gradients by their total norm or by value."""

from __future__ import annotations

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]

import functools
import math
import types
import warnings

from ... import _creation, linalg
from ..._autograd.grad_mode import no_grad
from ..._tensor import Tensor


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)
    return wrapper


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@_no_grad
def _get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """The norm_type-norm of the norms of tensors (the norm of all their elements together).
    foreach is accepted for PyTorch compatibility: every path computes the same thing."""
    from ... import stack
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    first_device = tensors[0].device
    norms = [linalg.vector_norm(g, norm_type).to(first_device) for g in tensors]
    total_norm = linalg.vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def _clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                           foreach: bool | None = None) -> None:
    """Scale the gradients of parameters in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    clip_coef_clamped = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients of parameters in place so that their total norm is at most
    max_norm; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated: clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient of parameters in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
