"""torch.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine (values, dtypes,
straight-through gradients, node names, errors), the qscheme constants and the quantized-tensor
names torchjax does not support, against PyTorch."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import torchjax

from ._same_error import raises_as_pytorch

# values on both sides of the clamp, exact halves of the grid (x * (1/scale) decides them) and
# values far outside the range
_VALUES = [-3.0, -0.26, -0.25, -0.15, -0.05, 0.0, 0.05, 0.1, 0.15, 0.25, 0.35, 0.45, 1.0, 2.9, 5.0]


def _run(lib, fn, values, dtype, grad_weights=None):
    x = lib.tensor(values, dtype=getattr(lib, dtype))
    if x.is_floating_point() and dtype != "bfloat16":
        x.requires_grad_()
    y = fn(lib, x)
    got = {"value": y.detach().double().numpy().tolist(), "dtype": str(y.dtype)[-8:],
           "grad_fn": type(y.grad_fn).__name__ if y.grad_fn is not None else None}
    if x.requires_grad:
        w = lib.arange(float(y.numel())).reshape(y.shape).to(y.dtype)
        y.backward(w)
        got["grad"] = x.grad.double().numpy().tolist()
    return got


def _same(fn, values, dtype="float32"):
    want = _run(torch, fn, values, dtype)
    got = _run(torchjax, fn, values, dtype)
    assert got == want


PER_TENSOR = {
    "scalar": lambda t, x: t.fake_quantize_per_tensor_affine(x, 0.1, 3, -8, 7),
    "uint8 range": lambda t, x: t.fake_quantize_per_tensor_affine(x, 0.02, 128, 0, 255),
    "negative scale": lambda t, x: t.fake_quantize_per_tensor_affine(x, -0.1, 3, -8, 7),
    "int scale": lambda t, x: t.fake_quantize_per_tensor_affine(x, 1, 0, -2, 2),
    "tensor qparams": lambda t, x: t.fake_quantize_per_tensor_affine(
        x, t.tensor(0.1), t.tensor(3), -8, 7),
    "tensor qparams, shape [1], float64 scale": lambda t, x: t.fake_quantize_per_tensor_affine(
        x, t.tensor([0.1], dtype=t.float64), t.tensor([3]), -8, 7),
    "tensor qparams, float zero point truncated": lambda t, x: t.fake_quantize_per_tensor_affine(
        x, t.tensor(0.1), t.tensor(-3.7), -8, 7),
    "tensor qparams, zero point outside the range": lambda t, x:
        t.fake_quantize_per_tensor_affine(x, t.tensor(0.1), t.tensor(30), -8, 7),
    "2-d input": lambda t, x: t.fake_quantize_per_tensor_affine(x.reshape(3, 5), 0.2, 0, -4, 4),
}


# float32 values: in a float64 tensor they are not the decimal values above (0.35f is below
# 0.35), which tells float32 arithmetic from float64
_VALUES32 = np.array(_VALUES, dtype=np.float32).astype(np.float64).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", PER_TENSOR)
def test_per_tensor(name, dtype):
    _same(PER_TENSOR[name], _VALUES, dtype)
    _same(PER_TENSOR[name], _VALUES32, dtype)


def _channel_args(t, zp_dtype="int32"):
    scale = t.tensor([0.1, 0.2, 0.05])
    zero_point = t.tensor([0, 1, -2]).to(getattr(t, zp_dtype))
    return scale, zero_point


_W = np.random.default_rng(0).standard_normal((3, 5)).round(3).tolist()

PER_CHANNEL = {
    "axis 0": lambda t, x: t.fake_quantize_per_channel_affine(x, *_channel_args(t), 0, -4, 3),
    "axis 1": lambda t, x: t.fake_quantize_per_channel_affine(
        x.t(), *_channel_args(t), 1, -4, 3),
    "3-d, axis 1": lambda t, x: t.fake_quantize_per_channel_affine(
        x.reshape(1, 3, 5).expand(2, 3, 5), *_channel_args(t), 1, -4, 3),
    "float zero point": lambda t, x: t.fake_quantize_per_channel_affine(
        x, _channel_args(t)[0], _channel_args(t, "float32")[1] + 0.5, 0, -4, 3),
    "half zero point": lambda t, x: t.fake_quantize_per_channel_affine(
        x, _channel_args(t)[0], _channel_args(t, "float16")[1] * 10, 0, -40, 30),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", PER_CHANNEL)
def test_per_channel(name, dtype):
    _same(PER_CHANNEL[name], _W, dtype)


def test_grad_through_a_qat_step():
    """A linear layer whose weight and activations are fake-quantized, one SGD step."""
    def step(lib):
        lib.manual_seed(0)
        w = lib.tensor(_W, requires_grad=True)
        x = lib.tensor(np.linspace(-1, 1, 10).reshape(2, 5).tolist())
        scale = w.detach().abs().amax(1) / 7
        wq = lib.fake_quantize_per_channel_affine(w, scale, lib.zeros(3, dtype=lib.int32),
                                                  0, -8, 7)
        y = lib.fake_quantize_per_tensor_affine(x @ wq.t(), 0.05, 0, -128, 127)
        (y ** 2).sum().backward()
        return w.grad.numpy()
    np.testing.assert_allclose(step(torchjax), step(torch), rtol=1e-6, atol=1e-6)


_X = [0.1, 0.2]
ERRORS = [
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor(_X), 0.1, 30, -8, 7), RuntimeError,
     "`zero_point` must be between `quant_min` and `quant_max`."),
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor(_X), 0.1, 3, 7, -8), RuntimeError,
     "`quant_min` should be less than or"),
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor([1, 2]), 0.1, 3, -8, 7),
     NotImplementedError, "not implemented for 'Long'"),
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor(_X), 0.1, 3.5, -8, 7), TypeError,
     "received an invalid combination of arguments"),
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor(_X), t.tensor([0.1, 0.2]),
                                                 t.tensor([3, 3]), -8, 7), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
    (lambda t: t.fake_quantize_per_tensor_affine(t.tensor(_X), t.tensor(0.1, requires_grad=True),
                                                 t.tensor(3), -8, 7), RuntimeError,
     "is not differentiable with respect to argument 'scale'"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), *_channel_args(t, "int64"), 0,
                                                  -4, 3), RuntimeError,
     "Zero-point must be Int32, Float or Half, found Long"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), _channel_args(t)[0].double(),
                                                  _channel_args(t)[1], 0, -4, 3), RuntimeError,
     "Scale must be Float or BFloat16, found Double"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), *_channel_args(t), 1, -4, 3),
     RuntimeError, "dimensions of scale and zero-point are not consistent with input tensor"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), *_channel_args(t), 2, -4, 3),
     IndexError, "Dimension out of range"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), _channel_args(t)[0],
                                                  _channel_args(t)[1] * 5, 0, -4, 3),
     RuntimeError, "`zero_point` must be between `quant_min` and `quant_max`."),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), _channel_args(t)[0],
                                                  _channel_args(t)[1][:2], 0, -4, 3),
     RuntimeError, "scale and zero-point need to have the same dimensions"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), _channel_args(t)[0].view(3, 1),
                                                  _channel_args(t)[1], 0, -4, 3),
     RuntimeError, "scale should be a 1-D tensor"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), *_channel_args(t), 0, 3, -4),
     RuntimeError, "`quant_min` should be less than or"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2), 0.1, _channel_args(t)[1], 0,
                                                  -4, 3),
     TypeError, "argument 'scale' (position 2) must be Tensor, not float"),
    (lambda t: t.fake_quantize_per_channel_affine(t.ones(3, 2).long(), *_channel_args(t), 0,
                                                  -4, 3),
     NotImplementedError, "not implemented for 'Long'"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    raises_as_pytorch(*ERRORS[case])


def test_qscheme_constants():
    names = ["per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
             "per_channel_symmetric", "per_channel_affine_float_qparams"]
    for name in names:
        ours, theirs = getattr(torchjax, name), getattr(torch, name)
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert isinstance(ours, torchjax.qscheme)
        assert pickle.loads(pickle.dumps(ours)) is ours
        assert hash(ours) == hash(ours) and ours == ours
    assert len({getattr(torchjax, n) for n in names}) == len(names)
    assert repr(torchjax.qscheme) == repr(torch.qscheme)
    raises_as_pytorch(lambda t: t.qscheme(), TypeError, "cannot create 'torch.qscheme' instances")


@pytest.mark.parametrize("name", ["q_scale", "q_zero_point", "int_repr", "qscheme",
                                  "q_per_channel_scales", "q_per_channel_zero_points",
                                  "q_per_channel_axis"])
def test_quantized_parameters_of_a_float_tensor(name):
    raises_as_pytorch(lambda t: getattr(t.ones(2), name)(), NotImplementedError,
                      f"Could not run 'aten::{name}' with arguments from the 'CPU' backend")


def test_dequantize_of_a_float_tensor():
    for lib in (torch, torchjax):
        x = lib.ones(2)
        assert x.dequantize() is x and lib.dequantize(x) is x
    raises_as_pytorch(lambda t: t.dequantize([t.ones(2)]), NotImplementedError,
                      "Could not run 'aten::dequantize.tensors'")


@pytest.mark.parametrize("call", [
    lambda t: t.quantize_per_tensor(t.ones(2), 0.1, 3, t.quint8),
    lambda t: t.quantize_per_channel(t.ones(2, 2), t.ones(2), t.zeros(2), 0, t.qint8),
    lambda t: t.quantize_per_tensor_dynamic(t.ones(2), t.quint8, False),
])
def test_making_a_quantized_tensor_says_so(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch 2.13 deprecates them
        assert call(torch).is_quantized
    with pytest.raises(NotImplementedError, match="quantized tensors are not supported"):
        call(torchjax)


def test_qat_steps_compiled():
    """Three SGD steps of a fake-quantized linear map: torchjax.compile against PyTorch eager
    (the scale is a tensor the step computes, so the zero-point checks meet traced values)."""
    def run(lib, compile):
        w = lib.nn.Parameter(lib.linspace(-1.3, 1.7, 12).view(3, 4))
        opt = lib.optim.SGD([w], lr=0.1)
        x = lib.linspace(-1, 1, 8).view(2, 4)

        def step():
            opt.zero_grad()
            s = w.detach().abs().amax(1) / 7
            wq = lib.fake_quantize_per_channel_affine(w, s, lib.zeros(3, dtype=lib.int32), 0,
                                                      -8, 7)
            y = lib.fake_quantize_per_tensor_affine(x @ wq.t(), lib.tensor(0.05),
                                                    lib.tensor(0), -128, 127)
            loss = (y ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        step = lib.compile(step) if compile else step
        return [step().item() for _ in range(3)], w.detach().numpy()

    ours, theirs = run(torchjax, True), run(torch, False)
    # (XLA's fused float32 products round differently in the last bits)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
