"""Tensor.set_, Tensor.as_strided_ / torch.as_strided_, Tensor.is_set_to and
torch.slice_inverse: storage sharing, values, versions and errors against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from ._same_error import raises_as_pytorch


def _plain(r):
    if isinstance(r, (torch.Tensor, torchjax.Tensor)):
        return (str(r.dtype).replace("torchjax", "torch"), tuple(r.shape), r.stride(),
                r.storage_offset(), r.detach().numpy().tolist())
    if isinstance(r, (list, tuple)):
        return [_plain(x) for x in r]
    return r


def _set_shares(t):
    a, b = t.zeros(2), t.arange(6.).view(2, 3)
    same = a.set_(b) is a
    a[0, 0] = 100
    b[1, 1] = -1
    return same, a, b, a.is_set_to(b), b.is_set_to(a), a._version, b._version


def _set_to_view(t):
    v = t.arange(6.)[1:4]
    z = t.zeros(2)
    z.set_(v)
    z[0] = 50
    return z, v, z.is_set_to(v)


def _set_keeps_old_views(t):
    x = t.arange(4.)
    xv = x[:2]
    x.set_(t.ones(3))
    xv[0] = 9  # the view still reads the old storage, which x no longer has
    x[1] = -2
    return x, xv


def _set_window(t):
    c = t.arange(4.)
    c.set_(t.tensor([1.0, 2.0, 3.0]), 1, (2,), (1,))
    return c, c._version


def _set_under_no_grad(t):
    w = t.ones(3, requires_grad=True)
    with t.no_grad():
        e = t.zeros(2).set_(w)
    return e, e.requires_grad


def _as_strided_root(t):
    a = t.arange(6.)
    r = t.as_strided_(a, (2, 2), (1, 2))
    same = r is a
    a.add_(10)
    return same, a, a._version


def _as_strided_keeps_views(t):
    q = t.arange(6.)
    qv = q[2:]
    q.as_strided_((2,), (3,), 1)
    q.mul_(-1)
    return q, qv


def _as_strided_of_view(t):
    p = t.arange(6.)
    pv = p.view(2, 3)
    pv.as_strided_((3,), (2,))
    pv.zero_()
    return pv, p


def _is_set_to(t):
    s = t.arange(6.)
    return (t.ones(3).is_set_to(t.ones(3)), s.is_set_to(s[:]), s.is_set_to(s.view(6)),
            s.view(2, 3).is_set_to(s), s.is_set_to(s.detach()), s[1:].is_set_to(s[1:]))


def _slice_inverse(t):
    z = t.arange(20.).view(5, 4)
    return (t.slice_inverse(z[1:3], z, 0, 1, 3, 1), z[:, 1:4:2].slice_inverse(z, 1, 1, 4, 2),
            t.slice_inverse(z[2:], t.zeros(5, 4), 0, 2))


def _slice_inverse_grad(t):
    x = t.arange(12.).view(3, 4).requires_grad_()
    q = x * 1
    r = t.slice_inverse(q[:2], q, 0, 0, 2)
    (r * t.arange(12.).view(3, 4)).sum().backward()
    return r, x.grad


CALLS = {
    "set_ shares storage": _set_shares,
    "set_ to a view": _set_to_view,
    "set_ leaves old views": _set_keeps_old_views,
    "set_ with a window": _set_window,
    "set_ under no_grad": _set_under_no_grad,
    "set_()": lambda t: t.arange(3.).set_(),
    "as_strided_ of a root": _as_strided_root,
    "as_strided_ keeps views": _as_strided_keeps_views,
    "as_strided_ of a view": _as_strided_of_view,
    "is_set_to": _is_set_to,
    "slice_inverse": _slice_inverse,
    "slice_inverse grad": _slice_inverse_grad,
}


@pytest.mark.parametrize("name", CALLS)
def test_against_pytorch(name):
    assert _plain(CALLS[name](torchjax)) == _plain(CALLS[name](torch))


ERRORS = [
    (lambda t: t.zeros(2).set_(t.arange(3)), RuntimeError,
     "Could not set tensor of type long int to a tensor of type float"),
    (lambda t: t.zeros(2, requires_grad=True).set_(t.ones(3)), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda t: t.zeros(2, requires_grad=True).as_strided_((1,), (1,)), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda t: t.arange(6.).as_strided_((3,), (4,)), RuntimeError,
     "setStorage: sizes [3], strides [4], storage offset 0, and itemsize 4 requiring a "
     "storage size of 36 are out of bounds for storage of size 24"),
    (lambda t: t.slice_inverse(t.ones(2, 4), t.zeros(3, 4), 0, 1, 4, 1), RuntimeError,
     "are out of bounds for storage of size 32"),
    (lambda t: t.zeros(2).is_set_to(3), TypeError,
     "is_set_to(): argument 'tensor' (position 1) must be Tensor, not int"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    raises_as_pytorch(*ERRORS[case])


def test_what_torchjax_does_not_support_says_so():
    w = torchjax.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="with a source that requires grad"):
        torchjax.zeros(2).set_(w)  # PyTorch records it, then cannot backpropagate through it
    with pytest.raises(NotImplementedError, match="a tensor that requires grad"):
        (w * 2).as_strided_((1,), (1,))
    with pytest.raises(NotImplementedError, match="storage"):
        torchjax.zeros(2).set_(torchjax.ones(2).untyped_storage())
    # nothing changed
    np.testing.assert_array_equal(w.detach().numpy(), np.ones(3))
