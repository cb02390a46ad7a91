"""scatter and friends beyond the op table: gradients at ties, PyTorch's errors (index bounds
are checked on concrete values before dispatch), backward errors and tracing."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax
from tests.ops import harness
from tests.ops.harness import Const, S


def _i(*v, shape=None):
    a = np.array(v, dtype=np.int64)
    return Const(a.reshape(shape) if shape is not None else a)


_X = np.array([[5., 1., 2., 0.], [0., 2., 2., 0.], [3., 3., -1., 0.]], np.float32)
_SRC = np.array([[5., 1., 2., 0.], [3., 1., 2., 0.], [5., 2., 7., 0.]], np.float32)
_IDX = _i(0, 0, 0, 2, 0, 0, 0, 2, 0, 2, 1, 2, shape=(3, 4))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean", "sum"])
def test_scatter_reduce_ties_and_zeros(reduce, include_self):
    # ties between self and src and within src, and zeros in products: the gradient is split
    # evenly among tied values, products at zeros are exact
    harness.compare("scatter_reduce", S(_X, 0, _IDX, _SRC, reduce, include_self=include_self))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean"])
def test_index_reduce_ties_and_zeros(reduce, include_self):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        harness.compare("index_reduce", S(_X, 0, _i(0, 0, 2), _SRC, reduce,
                                          include_self=include_self))


def test_scatter_add_duplicates_accumulate_gradients():
    harness.compare("scatter_add", S(_X, 1, _i(0, 0, 0, 3, 3, 3, 1, 1, 1, shape=(3, 3)),
                                     _SRC[:, :3]))


def test_index_put_accumulate_with_duplicates_matches_torch():
    def call(lib, x, v, i):
        return (x * 1).index_put_((i,), v, accumulate=True)
    harness.compare("_index_put", S(np.zeros(5, np.float32), np.arange(1, 5, dtype=np.float32),
                                    _i(0, 0, 3, 0), call=call))
    harness.compare("_index_put", S(_X, _SRC[0], _i(2, 2, -1), call=lambda lib, x, v, i:
                                    lib.index_put(x, (i,), v, accumulate=True)))


def _both(f):
    """Run f(torch) and f(torchjax); both must raise the same type with the same message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(Exception) as th:
            f(torch)
        with pytest.raises(Exception) as tj:
            f(torchjax)
    assert type(tj.value) is type(th.value), (tj.value, th.value)
    return str(tj.value), str(th.value)


def _x(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=getattr(lib, dtype) if dtype else None)


def _t(lib, v, dtype="int64"):
    return lib.tensor(v, dtype=getattr(lib, dtype))


ERRORS = {
    "scatter out of bounds": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [[3, 0]]), 1.0),
    "scatter negative": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [[-1, 0]]), 1.0),
    "scatter dim 1": lambda lib: _x(lib, 3, 4).scatter_(1, _t(lib, [[4]]), _x(lib, 1, 1)),
    "scatter index dtype": lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0], "int16"), 1.0),
    "scatter float index": lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0], "float32"), 1.),
    "scatter src dtype": lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0]),
                                                 _x(lib, 1, dtype="float64")),
    "scatter index dims": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [0]), 1.0),
    "scatter src dims": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [[0]]), _x(lib, 4)),
    "scatter index too big": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [[0] * 5]), 1.),
    "scatter index > src": lambda lib: lib.scatter(_x(lib, 3, 4), 0, _t(lib, [[0], [1]]),
                                                   _x(lib, 1, 4)),
    "scatter dim range": lambda lib: lib.scatter(_x(lib, 3, 4), 2, _t(lib, [[0]]), 1.0),
    "scatter reduce name": lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0]), 1.0,
                                                   reduce="sum"),
    "scatter complex value": lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0]), 1j),
    "scatter_add bounds": lambda lib: lib.scatter_add(_x(lib, 3), 0, _t(lib, [5]), _x(lib, 1)),
    "scatter_add dtype": lambda lib: _x(lib, 3).scatter_add_(0, _t(lib, [0]),
                                                             _x(lib, 1, dtype="float64")),
    "scatter_reduce name": lambda lib: lib.scatter_reduce(_x(lib, 3), 0, _t(lib, [5]),
                                                          _x(lib, 1), "add"),
    "scatter_reduce bounds": lambda lib: lib.scatter_reduce(_x(lib, 3), 0, _t(lib, [5]),
                                                            _x(lib, 1), "amax"),
    "scatter_reduce bool mean": lambda lib: lib.scatter_reduce(
        _x(lib, 3, dtype="bool"), 0, _t(lib, [0]), _x(lib, 1, dtype="bool"), "mean"),
    "index_add bounds": lambda lib: lib.index_add(_x(lib, 3, 4), 0, _t(lib, [3]),
                                                  _x(lib, 1, 4)),
    "index_add negative": lambda lib: _x(lib, 3, 4).index_add_(0, _t(lib, [-1]),
                                                               _x(lib, 1, 4)),
    "index_add index dtype": lambda lib: lib.index_add(_x(lib, 3), 0, _t(lib, [0], "int16"),
                                                       _x(lib, 1)),
    "index_add index dims": lambda lib: lib.index_add(_x(lib, 3), 0, _t(lib, [[0]]),
                                                      _x(lib, 1)),
    "index_add dtype": lambda lib: lib.index_add(_x(lib, 3), 0, _t(lib, [0]),
                                                 _x(lib, 1, dtype="float64")),
    "index_add count": lambda lib: lib.index_add(_x(lib, 3, 4), 0, _t(lib, [0, 1]),
                                                 _x(lib, 3, 4)),
    "index_add shape": lambda lib: lib.index_add(_x(lib, 3, 4), 0, _t(lib, [0, 1]),
                                                 _x(lib, 2, 3)),
    "index_copy bounds": lambda lib: lib.index_copy(_x(lib, 3, 4), 0, _t(lib, [3]),
                                                    _x(lib, 1, 4)),
    "index_copy negative": lambda lib: lib.index_copy(_x(lib, 3, 4), 0, _t(lib, [-1]),
                                                      _x(lib, 1, 4)),
    "index_copy int32 index": lambda lib: lib.index_copy(_x(lib, 3), 0, _t(lib, [0], "int32"),
                                                         _x(lib, 1)),
    "index_copy dtype": lambda lib: lib.index_copy(_x(lib, 3), 0, _t(lib, [0]),
                                                   _x(lib, 1, dtype="float64")),
    "index_copy count": lambda lib: lib.index_copy(_x(lib, 3, 4), 0, _t(lib, [0, 1]),
                                                   _x(lib, 3, 4)),
    "index_copy dims": lambda lib: lib.index_copy(_x(lib, 3, 4), 1, _t(lib, 1), _x(lib, 3)),
    "index_copy index dims": lambda lib: lib.index_copy(_x(lib, 3, 4), 0, _t(lib, [[0]]),
                                                        _x(lib, 1, 4)),
    "index_fill bounds": lambda lib: lib.index_fill(_x(lib, 3, 4), 1, _t(lib, [-5]), 1.0),
    "index_fill int32 index": lambda lib: lib.index_fill(_x(lib, 3), 0, _t(lib, [0], "int32"),
                                                         1.0),
    "index_fill value dims": lambda lib: lib.index_fill(_x(lib, 3), 0, _t(lib, [0]),
                                                        _x(lib, 1)),
    "index_fill index dims": lambda lib: lib.index_fill(_x(lib, 3), 0, _t(lib, [[0]]), 1.0),
    "put bounds": lambda lib: lib.put(_x(lib, 3, 4), _t(lib, [0, 12]), _x(lib, 2)),
    "put negative bounds": lambda lib: _x(lib, 3, 4).put_(_t(lib, [-13]), _x(lib, 1)),
    "put index dtype": lambda lib: lib.put(_x(lib, 3), _t(lib, [0], "int32"), _x(lib, 1)),
    "put dtype": lambda lib: lib.put(_x(lib, 3), _t(lib, [0]), _x(lib, 1, dtype="float64")),
    "put count": lambda lib: lib.put(_x(lib, 3), _t(lib, [0]), _x(lib, 2)),
    "masked_scatter count": lambda lib: lib.masked_scatter(
        _x(lib, 3, 4), _t(lib, [True, False, True, True], "bool"), _x(lib, 5)),
    "masked_scatter mask dtype": lambda lib: lib.masked_scatter(
        _x(lib, 3, 4), _t(lib, [1, 0, 1, 1]), _x(lib, 20)),
    "masked_scatter dtype": lambda lib: lib.masked_scatter(
        _x(lib, 4), _t(lib, [1, 0, 1, 1], "bool"), _x(lib, 20, dtype="float64")),
    "masked_scatter shape": lambda lib: lib.masked_scatter(
        _x(lib, 3, 4), _t(lib, [1, 0, 1], "bool"), _x(lib, 20)),
    "masked_scatter_ expand": lambda lib: _x(lib, 4).masked_scatter_(
        _t(lib, [[1, 0, 1, 1]] * 2, "bool"), _x(lib, 20)),
    "index_reduce sum": lambda lib: lib.index_reduce(_x(lib, 3), 0, _t(lib, [0]), _x(lib, 1),
                                                     "sum"),
    "index_reduce bounds": lambda lib: lib.index_reduce(_x(lib, 3), 0, _t(lib, [3]),
                                                        _x(lib, 1), "prod"),
    "index_reduce dtype": lambda lib: lib.index_reduce(_x(lib, 3), 0, _t(lib, [0]),
                                                       _x(lib, 1, dtype="float64"), "prod"),
    "index_reduce bool": lambda lib: lib.index_reduce(
        _x(lib, 3, dtype="bool"), 0, _t(lib, [0]), _x(lib, 1, dtype="bool"), "amax"),
    "diagonal_scatter size": lambda lib: lib.diagonal_scatter(_x(lib, 3, 4), _x(lib, 4)),
    "diagonal_scatter dims": lambda lib: lib.diagonal_scatter(_x(lib, 3, 4), _x(lib, 3), 0,
                                                              0, 0),
    "select_scatter index": lambda lib: lib.select_scatter(_x(lib, 3, 4), _x(lib, 4), 0, 3),
    "select_scatter size": lambda lib: lib.select_scatter(_x(lib, 3, 4), _x(lib, 1, 4), 0, 1),
    "slice_scatter size": lambda lib: lib.slice_scatter(_x(lib, 3, 4), _x(lib, 3, 3), 1, 0, 4,
                                                        2),
    "slice_scatter step": lambda lib: lib.slice_scatter(_x(lib, 3, 4), _x(lib, 3, 2), 1, 0, 4,
                                                        0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = _both(ERRORS[name])
    assert ours == theirs


def test_scatter_argument_combinations_are_type_errors():
    for f in (lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0])),
              lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0]), _x(lib, 1), value=1.0),
              lambda lib: lib.scatter(_x(lib, 3), 0, _t(lib, [0]), None)):
        _both(f)


def test_legacy_reduce_and_max_alias_have_no_backward():
    for lib in (torch, torchjax):
        x = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = lib.scatter(x, 0, lib.tensor([0, 0]), lib.ones(2), reduce="add")
        assert out.requires_grad and type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not impl"):
            out.sum().backward()
        out = lib.scatter_reduce(x, 0, lib.tensor([0, 0]), lib.ones(2), "max")
        assert type(out.grad_fn).__name__ == "ScatterReduceBackward0"
        with pytest.raises(RuntimeError, match="Expected 'reduce' to be one of"):
            out.sum().backward()


def test_grad_fn_names():
    names = {}
    for lib in (torch, torchjax):
        x = lib.zeros(3, 4, requires_grad=True)
        s = lib.ones(1, 4, requires_grad=True)
        i = lib.tensor([[0, 1, 2, 0]])
        j = lib.tensor([0, 2])
        outs = [lib.scatter(x, 0, i, s), lib.scatter(x, 0, i, 2.0), lib.scatter_add(x, 0, i, s),
                lib.index_fill(x, 0, j, 1.0), lib.index_fill(x, 0, j, lib.tensor(1.0)),
                lib.put(x, j, lib.ones(2)), x.clone().put_(j, lib.ones(2)),
                lib.masked_scatter(x, x > 0, lib.ones(12)),
                lib.select_scatter(x, lib.ones(4), 0, 0)]
        names[lib] = [type(o.grad_fn).__name__ for o in outs]
    assert names[torchjax] == names[torch]


def test_inplace_writes_keep_identity_and_versions():
    x = torchjax.zeros(3, 4)
    v = x._version
    y = x.scatter_(0, torchjax.tensor([[0, 1, 2, 0]]), 1.0)
    assert y is x and x._version > v
    y = x.index_fill_(1, torchjax.tensor([3]), 2.0)
    assert y is x and x[0, 3].item() == 2.0


def test_inplace_on_leaf_requiring_grad_raises():
    for lib in (torch, torchjax):
        x = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.index_add_(0, lib.tensor([0]), lib.ones(1))


def test_ops_work_on_tracers():
    # index values are tracers here: the bounds checks are skipped, the ops still run
    def f(a, idx, mask):
        x = torchjax.Tensor._wrap(a, requires_grad=True)
        i = torchjax.Tensor._wrap(idx)
        m = torchjax.Tensor._wrap(mask)
        out = (x.scatter_add(0, i.view(1, 4), x[:1] * 2).sum()
               + x.index_add(1, i[:2], x[:, :2]).sum()
               + torchjax.put(x, i, x[0], accumulate=True).sum()
               + x.scatter_reduce(0, i.view(1, 4), x[1:2], "amax").sum()
               + x.masked_scatter(m, x.flatten() * 3).sum())
        out.backward()
        return out._data, x.grad._data

    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    idx = np.array([2, 0, 2, 1], np.int64)
    mask = np.array([[True, False, True, False]] * 3)
    # under a jax.jit of its own, torchjax follows the x64 setting that jit runs with:
    # int64 indices (and the jnp.asarray of them) need it on
    with jax.enable_x64(True):
        v, g = jax.jit(f)(a, idx, mask)
        v2, g2 = f(jnp.asarray(a), jnp.asarray(idx), jnp.asarray(mask))
    np.testing.assert_allclose(v, v2, rtol=1e-6)
    np.testing.assert_allclose(g, g2, rtol=1e-6)

    def ref(lib):
        x = lib.tensor(a, requires_grad=True)
        i = lib.tensor(idx)
        m = lib.tensor(mask)
        out = (x.scatter_add(0, i.view(1, 4), x[:1] * 2).sum()
               + x.index_add(1, i[:2], x[:, :2]).sum()
               + lib.put(x, i, x[0], accumulate=True).sum()
               + x.scatter_reduce(0, i.view(1, 4), x[1:2], "amax").sum()
               + x.masked_scatter(m, x.flatten() * 3).sum())
        out.backward()
        return out.detach().numpy(), x.grad.numpy()

    tv, tg = ref(torch)
    np.testing.assert_allclose(v, tv, rtol=1e-5)
    np.testing.assert_allclose(g, tg, rtol=1e-5)
