"""torchjax.nn.utils.convert_parameters: parameters to one flat vector and back."""

from __future__ import annotations

__all__ = ["parameters_to_vector", "vector_to_parameters"]

from ..._tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated into one vector."""
    from ... import cat
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Give the parameters, in order, the consecutive slices of vec (as their new data)."""
    if not isinstance(vec, Tensor):
        from ..modules.module import _typename
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param: Tensor, old_param_device: int | None) -> int:
    """The index of param's accelerator (-1 for the CPU); all parameters must share it."""
    device = param.device
    index = -1 if device.type == "cpu" else (device.index or 0)
    if old_param_device is None:
        return index
    if index != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device
