"""PyTorch's quantized-tensor API, which torchjax does not have: each name raises saying so.

Quantized tensors (torch.quint8 & co., made by torch.quantize_per_tensor) need integer storage
with a scale and zero point carried along, and kernels for every op on them; PyTorch 2.13
deprecates them. Quantization-aware training does not need them: its fake quantization keeps
float tensors (fake_quantize.py). So making one raises NotImplementedError naming "quantized
tensors", and reading a quantized tensor's parameters from a torchjax tensor (which is never
quantized) raises PyTorch's own error for a tensor that is not quantized.
"""

from __future__ import annotations

from ._registry import function

_INSTEAD = ("quantized tensors are not supported by torchjax (PyTorch 2.13 deprecates them); "
            "for quantization-aware training use torch.fake_quantize_per_tensor_affine or "
            "torch.fake_quantize_per_channel_affine, which keep float tensors")


def _raising(name, doc, message, *, method=True, function_form=True):
    """torch.<name> / Tensor.<name> raising NotImplementedError(message(*arguments))."""
    def call(*args, **kwargs):
        raise NotImplementedError(message(*args))
    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return function(name, method=method, function=function_form)(call)


def _unsupported(name):
    return _raising(name, f"Not supported: torch.{name} makes a quantized tensor.",
                    lambda *_: f"torch.{name}: {_INSTEAD}", method=False)


quantize_per_tensor = _unsupported("quantize_per_tensor")
quantize_per_channel = _unsupported("quantize_per_channel")
quantize_per_tensor_dynamic = _unsupported("quantize_per_tensor_dynamic")
empty_quantized = _unsupported("empty_quantized")


def _not_quantized(name, function_form=True):
    # PyTorch's error for these on a tensor that is not quantized (torchjax's never are)
    return _raising(
        name, f"Raises: torch.{name} reads a quantized tensor, which torchjax never has.",
        lambda self, *_: f"Could not run 'aten::{name}' with arguments from the "
                         f"'{self.device.type.upper()}' backend: the tensor is not quantized "
                         f"(torchjax has no quantized tensors)", function_form=function_form)


int_repr = _not_quantized("int_repr")
q_scale = _not_quantized("q_scale")
q_zero_point = _not_quantized("q_zero_point")
q_per_channel_scales = _not_quantized("q_per_channel_scales")
q_per_channel_zero_points = _not_quantized("q_per_channel_zero_points")
q_per_channel_axis = _not_quantized("q_per_channel_axis")
# torch.qscheme is the class of the scheme constants (_qscheme.py): only the method
qscheme = _not_quantized("qscheme", function_form=False)


@function()
def dequantize(input):
    """The float tensor of a quantized one: a tensor that is not quantized comes back as is."""
    if isinstance(input, (list, tuple)):
        device = input[0].device.type.upper() if input else "CPU"
        raise NotImplementedError(
            f"Could not run 'aten::dequantize.tensors' with arguments from the '{device}' "
            f"backend: the tensors are not quantized (torchjax has no quantized tensors)")
    return input
