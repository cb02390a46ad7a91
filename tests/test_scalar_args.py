"""Python numbers reach an op's compiled call as kept device arrays (_scalar_args.py): the
results, dtypes and errors must be those of passing the number, compared with PyTorch."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch

import torchjax
from torchjax import _scalar_args

# enough calls for every value to be kept (and used kept) a few times
_REPEAT = _scalar_args._AFTER + 3


def _both(fn, data, dtype):
    want = fn(torch.tensor(data, dtype=getattr(torch, dtype)))
    x = torchjax.tensor(data, dtype=getattr(torchjax, dtype))
    got = [fn(x) for _ in range(_REPEAT)]
    return want, got


CASES = [
    ("float32", lambda t: t * 2),
    ("float32", lambda t: t + 1),
    ("float32", lambda t: t * 2.5),
    ("float32", lambda t: t * True),
    ("float16", lambda t: t * 3.0),
    ("bfloat16", lambda t: t - 0.1),
    ("float64", lambda t: t * 0.1),
    ("int32", lambda t: t * 2),
    ("int32", lambda t: t * 2.5),  # int tensor, float number: default float dtype
    ("int8", lambda t: t + 1),
    ("int64", lambda t: t + 2 ** 40),
    ("int32", lambda t: t + 2 ** 40),  # wraps in the tensor's dtype, as in PyTorch
    ("bool", lambda t: t & True),
    ("bool", lambda t: t + 1),
    ("float32", lambda t: 1 / (t * -0.0)),  # -0.0 must not be the kept 0.0
    ("float32", lambda t: 1 / (t * 0.0)),
    ("float32", lambda t: t * float("nan")),
    ("float32", lambda t: t * float("inf")),
    ("float32", lambda t: torch.where(t > 0, t, 0.5) if isinstance(t, torch.Tensor)
     else torchjax.where(t > 0, t, 0.5)),
]


@pytest.mark.parametrize("dtype,fn", CASES)
def test_repeated_numbers_match_pytorch(dtype, fn):
    data = [[1, -2, 3], [0, 5, 1]] if dtype != "bool" else [[True, False, True]]
    want, got = _both(fn, data, dtype)
    for g in got:
        assert str(g.dtype) == str(want.dtype)
        np.testing.assert_array_equal(g.float().numpy() if g.dtype == torchjax.bfloat16
                                      else g.numpy(), want.float().numpy()
                                      if want.dtype == torch.bfloat16 else want.numpy())


def test_numbers_are_kept_by_class_and_value():
    x = torchjax.ones(2)
    for _ in range(_REPEAT):
        x * 7, x * 7.0, x * True
        x * -0.0, x * float("nan")
    kept = _scalar_args._ARRAYS
    for key in ((int, 7), (float, 7.0), (bool, True)):
        assert key in kept
        # the array JAX makes of the number itself: weakly typed, except a bool (JAX's bool
        # numbers are bool[], strongly typed, whether passed as numbers or arrays)
        assert kept[key].weak_type is (key[0] is not bool)
    assert (float, 0.0) not in kept and (float, -0.0) not in kept
    assert not any(k[0] is float and k[1] != k[1] for k in kept)


def test_an_int_outside_int64_raises_as_before():
    x = torchjax.ones(2, dtype=torchjax.int64)
    for _ in range(_REPEAT):
        with pytest.raises(OverflowError):
            x + 2 ** 70


def test_tables_stay_bounded():
    x = torchjax.ones(2)
    for i in range(_scalar_args._MAX + 10):
        x + (i + 0.5)
    assert len(_scalar_args._SEEN) <= _scalar_args._MAX
    assert len(_scalar_args._ARRAYS) <= _scalar_args._MAX


def test_grad_through_kept_numbers_matches_pytorch():
    for _ in range(_REPEAT):
        y = torchjax.tensor([1.0, 2.0, 3.0], requires_grad=True)
        ((y * 3 + 1) ** 2 / 2).sum().backward()
    ty = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ((ty * 3 + 1) ** 2 / 2).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
    # the tape keeps the number, not the device array the forward call was given
    node = (y * 3)._grad_fn
    assert any(type(s) is int and s == 3 for s in node._saved)
    assert not any(isinstance(s, jax.Array) and s.ndim == 0 for s in node._saved)


def test_numbers_inside_a_jax_transformation():
    x = torchjax.tensor([1.0, 2.0])
    for _ in range(_REPEAT):
        x * 2  # kept at the top level; inside the transforms the number is traced

    def f(t):
        return ((t * 2 + 1) ** 2).sum()

    g = torchjax.func.grad(f)(x)
    np.testing.assert_allclose(g.numpy(), [12.0, 20.0])
    v = torchjax.func.vmap(lambda t: t * 2 + 1)(torchjax.tensor([[1.0], [2.0]]))
    np.testing.assert_allclose(v.numpy(), [[3.0], [5.0]])
