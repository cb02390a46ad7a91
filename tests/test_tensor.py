"""Tensor attributes, conversions, creation, dtypes, devices and tracing, against PyTorch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax

LIBS = [torch, torchjax]


def same(fn):
    a, b = fn(torch), fn(torchjax)
    assert str(a) == str(b), (a, b)
    return a, b


# -- metadata and conversions ------------------------------------------------------------------

def test_metadata():
    for lib in LIBS:
        t = lib.zeros(2, 3, 4)
        assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(1) == 3
        assert t.size(-1) == 4 and t.dim() == 3 and t.ndim == 3 and t.numel() == 24
        assert len(t) == 2 and t.is_leaf and not t.requires_grad and t.grad is None
        assert t.element_size() == 4 and t.is_floating_point()
    same(lambda lib: lib.zeros(2, 3).shape)
    same(lambda lib: lib.zeros(2, 3).dtype)
    same(lambda lib: lib.zeros(2, 3).device)
    same(lambda lib: lib.zeros(2, 3).type())
    same(lambda lib: lib.zeros(2, dtype=lib.int64).type())


def test_size_errors():
    for lib in LIBS:
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.zeros(2, 3).size(2)
        with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
            len(lib.tensor(1.0))


def test_scalar_conversions():
    for lib in LIBS:
        assert lib.tensor(2.5).item() == 2.5
        assert lib.tensor([3]).item() == 3
        assert float(lib.tensor([1.5])) == 1.5
        assert int(lib.tensor(7)) == 7
        assert bool(lib.tensor(1.0)) is True
        assert [1, 2, 3][lib.tensor(1)] == 2
        assert lib.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
        with pytest.raises(RuntimeError, match="elements cannot be converted to Scalar"):
            lib.tensor([1.0, 2.0]).item()
        with pytest.raises(ValueError, match="only one element tensors can be converted"):
            float(lib.tensor([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one "
                                               "value is ambiguous"):
            bool(lib.tensor([1.0, 2.0]))
        with pytest.raises(TypeError):
            [1, 2][lib.tensor(1.0)]
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                               "grad"):
            lib.tensor([1.0], requires_grad=True).numpy()


def test_numpy_and_array_protocols():
    t = torchjax.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, [[1, 2], [3, 4]])
    assert jnp.asarray(t).shape == (2, 2)


def test_hash_is_identity_and_iteration():
    a, b = torchjax.tensor([1.0]), torchjax.tensor([1.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1
    for lib in LIBS:
        rows = [r.tolist() for r in lib.tensor([[1, 2], [3, 4]])]
        assert rows == [[1, 2], [3, 4]]


def test_detach_clone_and_to():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert not x.detach().requires_grad
        c = x.clone()
        assert c.requires_grad and c.grad_fn is not None
        assert x.to(lib.float64).dtype == lib.float64
        assert x.to("cpu") is x and x.to(lib.float32) is x
        assert x.double().dtype == lib.float64 and x.long().dtype == lib.int64
        assert x.int().dtype == lib.int32 and x.bool().dtype == lib.bool
        assert x.half().dtype == lib.float16 and x.bfloat16().dtype == lib.bfloat16
        assert x.float().dtype == lib.float32
        assert x.type_as(lib.tensor([1])).dtype == lib.int64
        y = x.detach()
        y.detach_()
        assert not y.requires_grad
    same(lambda lib: lib.tensor([1.5, -2.5]).to(lib.int32))
    same(lambda lib: lib.tensor([1.5, -2.5], requires_grad=True).double())


def test_grad_assignment():
    x = torchjax.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torchjax.tensor([3.0, 4.0])
    assert x.grad.tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = torchjax.tensor([1.0])
    x.grad = None
    assert x.grad is None


# -- printing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(25.0),
    lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    lambda lib: (lib.tensor(2.0, requires_grad=True) + 3) ** 2,
    lambda lib: lib.tensor([1, 2, 3]),
    lambda lib: lib.tensor([True, False]),
    lambda lib: lib.tensor([1.0, 2.5, -3.0]),
    lambda lib: lib.tensor([1e10, 1.0]),
    lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64),
    lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16),
    lambda lib: lib.tensor([1.0, 2.0], dtype=lib.bfloat16),
    lambda lib: lib.arange(2000).float(),
    lambda lib: lib.zeros(0, 3),
])
def test_repr_matches(make):
    same(lambda lib: repr(make(lib)))


# -- creation ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(2.0),
    lambda lib: lib.tensor(3),
    lambda lib: lib.tensor(True),
    lambda lib: lib.tensor([1, 2.5]),
    lambda lib: lib.tensor([[1, 2], [3, 4]]),
    lambda lib: lib.tensor(np.array([1.0, 2.0])),
    lambda lib: lib.tensor(np.array([1, 2], dtype=np.int32)),
    lambda lib: lib.tensor([1.7, -1.7], dtype=lib.int64),
    lambda lib: lib.tensor([]),
    lambda lib: lib.as_tensor([1, 2]),
    lambda lib: lib.from_numpy(np.arange(3, dtype=np.int16)),
    lambda lib: lib.zeros(2, 3),
    lambda lib: lib.zeros((2, 3), dtype=lib.int32),
    lambda lib: lib.ones([2]),
    lambda lib: lib.full((2,), 4),
    lambda lib: lib.full((2,), 4.0),
    lambda lib: lib.full((2,), True),
    lambda lib: lib.empty(2, 3).shape,
    lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.ones_like(lib.ones(2, 2)),
    lambda lib: lib.full_like(lib.ones(2), 7),
    lambda lib: lib.empty_like(lib.ones(2, 3)).shape,
    lambda lib: lib.arange(5),
    lambda lib: lib.arange(1, 4),
    lambda lib: lib.arange(0, 1, 0.25),
    lambda lib: lib.arange(5, dtype=lib.float32),
    lambda lib: lib.arange(10, 0, -3),
    lambda lib: lib.linspace(0, 1, 5),
    lambda lib: lib.linspace(-3, 7, 11),
    lambda lib: lib.linspace(0, 1, 1),
    lambda lib: lib.eye(3),
    lambda lib: lib.eye(2, 3, dtype=lib.int64),
    lambda lib: lib.rand(2, 3).shape,
    lambda lib: lib.randn(4).dtype,
    lambda lib: lib.randint(0, 10, (3,)).dtype,
    lambda lib: lib.randint(5, (2, 2)).shape,
    lambda lib: lib.normal(0.0, 1.0, size=(2, 3)).shape,
    lambda lib: lib.rand_like(lib.ones(2, dtype=lib.float64)).dtype,
    lambda lib: lib.randn_like(lib.ones(3)).shape,
])
def test_creation_matches(make):
    same(make)


def test_creation_errors():
    for lib in LIBS:
        with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1 \\(got 3\\)"):
            lib.tensor([[1, 2], [3, 4, 5]])
        with pytest.raises(RuntimeError, match="Trying to create tensor with negative "
                                               "dimension"):
            lib.ones(-1)
        with pytest.raises(RuntimeError, match="zeros: Dimension size must be non-negative"):
            lib.zeros(-1)


def test_random_values_in_range_and_seeded():
    torchjax.manual_seed(3)
    a = torchjax.rand(1000)
    torchjax.manual_seed(3)
    b = torchjax.rand(1000)
    assert a.tolist() == b.tolist()
    assert 0 <= float(a.min()) and float(a.max()) < 1
    assert abs(float(a.mean()) - 0.5) < 0.05
    n = torchjax.randn(10000)
    assert abs(float(n.mean())) < 0.05 and abs(float(n.std()) - 1) < 0.05
    r = torchjax.randint(3, 7, (1000,))
    assert set(r.tolist()) == {3, 4, 5, 6}
    g = torchjax.Generator().manual_seed(1)
    g2 = torchjax.Generator().manual_seed(1)
    assert torchjax.randn(5, generator=g).tolist() == torchjax.randn(5, generator=g2).tolist()
    state = torchjax.get_rng_state()
    c = torchjax.rand(3)
    torchjax.set_rng_state(state)
    assert torchjax.rand(3).tolist() == c.tolist()
    m = torchjax.normal(torchjax.zeros(3), torchjax.ones(3))
    assert m.shape == (3,)
    perm = torchjax.randperm(10)
    assert sorted(perm.tolist()) == list(range(10)) and perm.dtype == torchjax.int64


# -- dtypes and promotion ------------------------------------------------------------------------

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promote_types_matches(a, b):
    assert str(torchjax.promote_types(getattr(torchjax, a), getattr(torchjax, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("other", [
    ("scalar", 2), ("scalar", 2.5), ("scalar", True),
    ("0d", "int64"), ("0d", "float64"), ("0d", "int8"), ("0d", "float16"), ("0d", "bool"),
    ("1d", "int32"), ("1d", "float64"),
])
def test_result_type_matches(a, other):
    kind, v = other

    def f(lib):
        x = lib.ones(3, dtype=getattr(lib, a))
        if kind == "scalar":
            y = v
        elif kind == "0d":
            y = lib.ones((), dtype=getattr(lib, v))
        else:
            y = lib.ones(3, dtype=getattr(lib, v))
        return lib.result_type(x, y)
    same(f)


def test_default_dtype():
    assert torchjax.get_default_dtype() == torchjax.float32
    try:
        torchjax.set_default_dtype(torchjax.float64)
        assert torchjax.tensor(1.5).dtype == torchjax.float64
        assert torchjax.zeros(2).dtype == torchjax.float64
        assert (torchjax.tensor([1, 2]) / 2).dtype == torchjax.float64
    finally:
        torchjax.set_default_dtype(torchjax.float32)
    assert (torchjax.tensor([1, 2]) / 2).dtype == torchjax.float32
    with pytest.raises(TypeError, match="only floating-point types"):
        torchjax.set_default_dtype(torchjax.int64)


def test_dtype_aliases_and_properties():
    assert torchjax.float is torchjax.float32 and torchjax.double is torchjax.float64
    assert torchjax.long is torchjax.int64 and torchjax.half is torchjax.float16
    assert torchjax.int is torchjax.int32 and torchjax.short is torchjax.int16
    for name in DTYPES:
        assert repr(getattr(torchjax, name)) == repr(getattr(torch, name))
        assert getattr(torchjax, name).is_floating_point == getattr(torch, name).is_floating_point


def test_inplace_cast_error():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type Long"):
            lib.tensor([1, 2]).add_(1.5)


# -- devices -------------------------------------------------------------------------------------

def test_devices():
    same(lambda lib: lib.device("cpu"))
    same(lambda lib: lib.device("cuda:1"))
    same(lambda lib: str(lib.device("cuda", 0)))
    assert torchjax.device("cpu") == "cpu"
    assert torchjax.cuda.is_available() == bool([d for d in jax.devices()
                                                  if d.platform == "gpu"])
    assert torchjax.cuda.device_count() >= 0
    t = torchjax.ones(2, device="cpu")
    assert t.device == torchjax.device("cpu")
    if not torchjax.cuda.is_available():
        with pytest.raises(RuntimeError, match="not available"):
            torchjax.ones(2, device="cuda")
        with pytest.raises(RuntimeError, match="not available"):
            t.to("cuda:0")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        torchjax.device("gpux")


# -- tracing: the eager code path under jax.jit ----------------------------------------------------

def test_ops_and_backward_work_on_tracers():
    def f(a, b):
        x = torchjax.Tensor._wrap(a, requires_grad=True)
        y = torchjax.Tensor._wrap(b)
        loss = ((x * y).tanh() + x ** 2).sum() / 3
        loss.backward()
        return loss._data, x.grad._data

    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    b = np.ones((2, 3), np.float32)
    v, g = jax.jit(f)(a, b)
    v2, g2 = f(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(v, v2, rtol=1e-6)
    np.testing.assert_allclose(g, g2, rtol=1e-6)
    ref = jax.grad(lambda a: ((jnp.tanh(a * b) + a ** 2).sum() / 3))(a)
    np.testing.assert_allclose(g, ref, rtol=1e-6)


def test_modules_work_on_tracers():
    torchjax.manual_seed(0)
    model = torchjax.nn.Sequential(torchjax.nn.Linear(3, 4), torchjax.nn.ReLU())

    def f(x):
        return model(torchjax.Tensor._wrap(x)).sum()._data

    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(jax.jit(f)(x), f(jnp.asarray(x)), rtol=1e-6)
