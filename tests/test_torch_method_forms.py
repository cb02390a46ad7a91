"""torch.exp_(x), torch.clamp_(x, ...), torch.is_signed(x) and the other torch.X forms of Tensor
methods (src/torchjax/_torch_method_forms.py) against PyTorch 2.13: the same call in both
libraries returns the input itself, with the same values, version bump, grad_fn name and
gradient; and PyTorch's TypeError for an input that is not a Tensor."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _torch_method_forms

_rng = np.random.default_rng(1)


def _u(low, high, shape=(3, 4)):
    return _rng.uniform(low, high, size=shape)


ANY = _u(-2, 2)
UNIT = _u(-0.9, 0.9)
POS = _u(0.2, 2)
ABOVE1 = _u(1.1, 3)
PROB = _u(0.1, 0.9)
INTS = np.array([[12, 18, -4, 7], [0, 9, 15, 21], [6, 5, 4, 3]])
WITH_NAN = np.where(np.arange(12).reshape(3, 4) % 5 == 0, np.nan, ANY)


def _t(lib, a):
    return lib.tensor(a)


# name -> (input array, fn(lib) -> (args, kwargs), differentiable)
SAMPLES = {
    **{n: (ANY, None, True) for n in (
        "abs_", "neg_", "negative_", "ceil_", "floor_", "frac_", "trunc_", "fix_", "round_",
        "cos_", "sin_", "tan_", "tanh_", "sinh_", "cosh_", "sigmoid_", "exp_", "exp2_",
        "expm1_", "erf_", "erfc_", "sinc_", "i0_", "deg2rad_", "rad2deg_", "square_", "relu_",
        "asinh_", "arcsinh_", "atan_", "arctan_", "zero_")},
    **{n: (UNIT, None, True) for n in (
        "acos_", "asin_", "arccos_", "arcsin_", "atanh_", "arctanh_")},
    **{n: (ABOVE1, None, True) for n in ("acosh_", "arccosh_")},
    **{n: (POS, None, True) for n in ("log_", "log10_", "log2_", "sqrt_", "rsqrt_",
                                      "reciprocal_", "log1p_")},
    "logit_": (PROB, lambda t: ((), {"eps": 0.2}), True),
    "clamp_": (ANY, lambda t: ((-0.5,), {"max": 0.7}), True),
    "clip_": (ANY, lambda t: ((_t(t, _u(-1, 0, (4,))), _t(t, _u(0, 1, (4,)))), {}), True),
    "clamp_min_": (ANY, lambda t: ((0.1,), {}), True),
    "clamp_max_": (ANY, lambda t: ((_t(t, np.full(4, 0.1)),), {}), True),
    "fill_": (ANY, lambda t: ((2.5,), {}), True),
    "nan_to_num_": (WITH_NAN, lambda t: ((), {"nan": 7.0, "posinf": 1.0}), True),
    "round_ decimals": (ANY, lambda t: ((), {"decimals": 1}), True),
    "gcd_": (INTS, lambda t: ((_t(t, INTS[::-1].copy()),), {}), False),
    "lcm_": (INTS, lambda t: ((_t(t, INTS[::-1].copy()),), {}), False),
    "ldexp_": (ANY, lambda t: ((_t(t, np.array([1, -2, 3, 0])),), {}), True),
    "xlogy_": (ANY, lambda t: ((_t(t, POS),), {}), True),
    "addmv_": (_u(-1, 1, (3,)), lambda t: ((_t(t, _u(-1, 1, (3, 4))), _t(t, _u(-1, 1, (4,)))),
                                         {"beta": 0.5, "alpha": 2.0}), True),
    "index_put_": (ANY, lambda t: (((_t(t, np.array([0, 2, 0])),), _t(t, _u(-1, 1, (4,)))),
                                   {"accumulate": True}), True),
    "conj_physical_": (ANY, None, True),
    "detach_": (ANY, None, False),
}


# PyTorch 2.13 has no derivative for these in place: backward raises NotImplementedError
# ("the derivative for 'inplace version of acosh' is not implemented."), in both libraries
NO_TORCH_GRAD = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}


def _run(lib, name, array, make, differentiable):
    args, kwargs = make(lib) if make else ((), {})
    # the argument arrays are made once per library from the same numbers
    leaf = lib.tensor(array, requires_grad=differentiable)
    x = leaf.clone() if differentiable else leaf
    before = x._version
    out = getattr(lib, name.split()[0])(x, *args, **kwargs)
    assert out is x
    grad_fn = out.grad_fn
    name_of = None if grad_fn is None else (
        grad_fn.name() if hasattr(grad_fn, "name") else type(grad_fn).__name__)
    grad = None
    if differentiable:
        weights = lib.tensor(np.cos(np.arange(out.numel()) + 0.5).reshape(out.shape))
        try:
            out.mul(weights).sum().backward()
            grad = leaf.grad.numpy()
        except NotImplementedError as e:
            if name not in NO_TORCH_GRAD:
                raise
            grad = str(e)  # compared as the error message
    return out.detach().numpy(), out._version - before, name_of, grad, out.requires_grad


def test_table_is_sampled_and_covers_pytorch():
    sampled = {n.split()[0] for n in SAMPLES}
    assert set(_torch_method_forms.IN_PLACE) == sampled
    for n in _torch_method_forms.__all__:
        assert hasattr(torch, n), n  # PyTorch publishes each name
        assert getattr(torchjax, n) is getattr(_torch_method_forms, n)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_in_place_form_matches_torch(name):
    array, make, differentiable = SAMPLES[name]
    # same argument values in both libraries: draw them once
    state = _rng.bit_generator.state
    t_res = _run(torch, name, array, make, differentiable)
    _rng.bit_generator.state = state
    j_res = _run(torchjax, name, array, make, differentiable)
    t_val, t_ver, t_fn, t_grad, t_rg = t_res
    j_val, j_ver, j_fn, j_grad, j_rg = j_res
    assert j_val.dtype == t_val.dtype and j_val.shape == t_val.shape
    np.testing.assert_allclose(j_val, t_val, rtol=1e-12, atol=1e-14, equal_nan=True)
    assert (j_ver, j_fn, j_rg) == (t_ver, t_fn, t_rg)
    if name in NO_TORCH_GRAD:
        assert "derivative for 'inplace version of" in t_grad and j_grad == t_grad
    elif t_grad is not None:
        np.testing.assert_allclose(j_grad, t_grad, rtol=1e-12, atol=1e-14)


def test_keyword_input():
    for lib in (torch, torchjax):
        x = lib.tensor(ANY)
        assert lib.clamp_(input=x, min=0.0) is x
        assert float(x.min()) == 0.0


@pytest.mark.parametrize("name", ["abs_", "fill_", "is_signed", "detach"])
def test_not_a_tensor(name):
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(TypeError) as e:
            getattr(lib, name)(3, 1) if name == "fill_" else getattr(lib, name)(3)
        msgs.append(str(e.value))
    phrase = f"{name}(): argument 'input' (position 1) must be Tensor, not int"
    if name == "fill_":  # an overloaded function: PyTorch's parser words it differently
        phrase = "fill_() received an invalid combination of arguments - got (int, int)"
    assert phrase in msgs[0] and phrase in msgs[1], msgs


def test_integer_input_error():
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError) as e:
            lib.sqrt_(lib.tensor([4, 9]))
        msgs.append(str(e.value))
    assert "result type Float can't be cast to the desired output type Long" in msgs[0]
    assert "result type Float can't be cast to the desired output type Long" in msgs[1], msgs


def test_leaf_error():
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError) as e:
            lib.exp_(lib.tensor(ANY, requires_grad=True))
        msgs.append(str(e.value))
    phrase = "a leaf Variable that requires grad is being used in an in-place operation."
    assert phrase in msgs[0] and phrase in msgs[1], msgs


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "float16", "float32",
                                   "float64", "bool", "complex64"])
def test_is_signed(dtype):
    got = [lib.is_signed(lib.zeros(2, dtype=getattr(lib, dtype))) for lib in (torch, torchjax)]
    assert got[0] == got[1]


def test_is_same_size():
    for a, b in [((2, 3), (2, 3)), ((2, 3), (3, 2)), ((), ()), ((6,), (2, 3))]:
        got = [lib.is_same_size(lib.zeros(a), lib.zeros(b)) for lib in (torch, torchjax)]
        assert got[0] == got[1]


def test_is_inference():
    for lib in (torch, torchjax):
        assert lib.is_inference(lib.zeros(2)) is False
        with lib.inference_mode():
            assert lib.is_inference(lib.zeros(2)) is True


def test_detach():
    res = []
    for lib in (torch, torchjax):
        leaf = lib.tensor(ANY, requires_grad=True)
        y = leaf * 2
        d = lib.detach(y)
        assert d is not y and not d.requires_grad and d.grad_fn is None
        d.add_(1)  # shares y's storage, as PyTorch's detach does
        res.append((y.detach().numpy(), y._version, d._version))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    assert res[1][1:] == res[0][1:]
