"""Tensor.as_subclass, dim_order, storage_type, grad_dtype, chalf, record_stream and the
compressed-sparse index accessors and *_copy functions, against PyTorch."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

import torchjax

from ._same_error import outcome, raises_as_pytorch


def _res(f, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's TypedStorage deprecation
        return outcome(f, lib, _plain)


def _plain(r):
    if isinstance(r, (torch.Tensor, torchjax.Tensor)):
        return (type(r).__name__, str(r.dtype).replace("torchjax", "torch"), tuple(r.shape),
                r.detach().numpy().tolist())
    if isinstance(r, (list, tuple)):
        return [_plain(x) for x in r]
    if isinstance(r, type):  # a storage class
        return r.__name__
    if isinstance(r, (torch.dtype, torchjax.dtype)):
        return str(r).replace("torchjax", "torch")
    return r


def _subclass(lib):
    class M(lib.Tensor):
        pass
    x = lib.ones(2, 3, requires_grad=True)
    m = x.as_subclass(M)
    (m * lib.arange(6.).view(2, 3)).sum().backward()
    y = lib.zeros(3)
    my = y.as_subclass(M)
    my[0] = 5
    y[1] = 7
    return (repr(m).replace("M(", "_("), type(m).__name__, type(m.grad_fn).__name__,
            m.data_ptr() == x.data_ptr(), x.grad, my, isinstance(my, M),
            repr(lib.tensor(3.).as_subclass(M)), repr(lib.ones(2).as_subclass(lib.nn.Parameter)),
            x.as_subclass(lib.Tensor) is x)


def _grad_dtype(lib):
    x = lib.ones(2, requires_grad=True)
    before = x.grad_dtype
    x.grad_dtype = lib.float64
    copied = copy.deepcopy(x).grad_dtype  # a copy starts from the default
    (x.sum() * 1).backward()
    (x.sum() * 2).backward()  # accumulated in float64
    grad64 = x.grad
    y = lib.ones(2, requires_grad=True)
    y.grad_dtype = None
    (y * 3).sum().backward()
    z = lib.ones(2)
    z.grad_dtype = lib.float64
    x.grad = None
    x.grad_dtype = x.dtype
    (x.sum() * 1).backward()
    return before, grad64, copied, x.grad_dtype, x.grad, y.grad_dtype, y.grad, z.grad_dtype, \
        lib.ones(2, dtype=lib.int64).grad_dtype


def _dim_orders(lib):
    x = lib.randn(2, 3, 4, 5)
    views = [x, x.permute(0, 2, 3, 1), x.transpose(1, 3), x[:, :, ::2], x[:1],
             lib.randn(3, 1, 1, 4).permute(2, 1, 0, 3), lib.randn(2, 2).t().expand(3, 2, 2),
             lib.randn(2, 3, 4, 5, 6).to(memory_format=lib.channels_last_3d),
             lib.randn(4, 4).as_strided((4, 4), (1, 1)), lib.randn(2, 1, 4).transpose(0, 1),
             lib.tensor(1.0), lib.ones(3)]
    out = []
    for v in views:
        for check in (False, True, [lib.contiguous_format]):
            out.append(_res(lambda _: v.dim_order(ambiguity_check=check), lib))
    return out


def _grad_dtype_change(lib, dtype):
    x = lib.ones(2, requires_grad=True)
    x.grad_dtype = lib.float64
    x.sum().backward()
    x.grad_dtype = dtype
    return x.grad_dtype, x.grad


def _grad_any_dtype(lib):
    x = lib.ones(2, requires_grad=True)
    x.grad_dtype = None
    x.grad = lib.ones(2, dtype=lib.float64)
    x.grad_dtype = lib.float64
    y = lib.ones(2, requires_grad=True)
    y.grad_dtype = lib.float16
    return x.grad, _res(lambda _: setattr(y, "grad", lib.ones(2)), lib)


CALLS = {
    "as_subclass": _subclass,
    "as_subclass of a non-Tensor class": lambda t: t.ones(2).as_subclass(int),
    "grad_dtype": _grad_dtype,
    "grad_dtype of a non-leaf": lambda t: (t.ones(2, requires_grad=True) * 2).grad_dtype,
    "grad_dtype set on a non-leaf": lambda t: setattr(t.ones(2, requires_grad=True) * 2,
                                                      "grad_dtype", t.float64),
    "grad_dtype changed under a gradient": lambda t: _grad_dtype_change(t, t.float32),
    "grad_dtype set to the gradient's": lambda t: _grad_dtype_change(t, t.float64),
    "grad of another dtype": lambda t: setattr(t.ones(2, requires_grad=True), "grad",
                                               t.ones(2, dtype=t.float64)),
    "grad of another dtype, grad_dtype None": _grad_any_dtype,
    "grad_dtype set to a number": lambda t: setattr(t.ones(2, requires_grad=True),
                                                    "grad_dtype", 3),
    "dim_order": _dim_orders,
    "dim_order bad ambiguity_check": lambda t: t.ones(2, 1).dim_order(ambiguity_check=(1,)),
    "storage_type": lambda t: [t.ones(2, dtype=d).storage_type() for d in (
        t.float32, t.float64, t.int64, t.int8, t.bool, t.bfloat16, t.uint16, t.complex64)],
    "record_stream of a non-stream": lambda t: t.ones(2).record_stream(5),
    "record_stream of None": lambda t: t.ones(2).record_stream(None),
}


@pytest.mark.parametrize("name", CALLS)
def test_against_pytorch(name):
    assert _res(CALLS[name], torchjax) == _res(CALLS[name], torch)


def test_chalf_names_complex32():
    assert torch.ones(2).chalf().dtype == torch.complex32
    with pytest.raises(TypeError, match="complex32"):
        torchjax.ones(2).chalf()


def _sparse(t):
    return t.sparse_coo_tensor(t.tensor([[0, 1], [1, 0]]), t.tensor([1.0, 2.0]), (2, 2))


@pytest.mark.parametrize("name", ["crow_indices", "col_indices", "ccol_indices",
                                  "row_indices"])
@pytest.mark.parametrize("sparse", [False, True])
def test_compressed_index_accessors(name, sparse):
    make = _sparse if sparse else (lambda t: t.ones(2, 2))
    got = "Sparse" if sparse else "Strided"
    raises_as_pytorch(lambda t: getattr(make(t), name)(), RuntimeError,
                      f"{name} expected sparse ")
    raises_as_pytorch(lambda t: getattr(make(t), name)(), RuntimeError, f"but got {got}")


@pytest.mark.parametrize("name", ["indices", "values", "crow_indices", "col_indices",
                                  "ccol_indices", "row_indices"])
def test_index_copies(name):
    fname = f"{name}_copy"
    raises_as_pytorch(lambda t: getattr(t, fname)(t.ones(2, 2)), RuntimeError,
                      f"{name} expected sparse ")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's sparse invariant-checks notice
        raises_as_pytorch(lambda t: getattr(t, fname)(_sparse(t)), NotImplementedError,
                          f"Could not run 'aten::{fname}' with arguments from the 'SparseCPU' "
                          f"backend")
