"""stride(), storage_offset(), is_contiguous(), contiguous() and memory formats report what
PyTorch reports (metadata: the arrays stay XLA's)."""

import random

import numpy as np
import pytest
import torch

import torchjax as tj


def _view_ops(shape, rng):
    """(name, f(lib, x)) view and copy ops that apply to a tensor of `shape`, arguments drawn
    once so both libraries get the same call."""
    n = len(shape)
    ops = [("unsqueeze", lambda L, x, u=rng.randint(0, n): x.unsqueeze(u)),
           ("view(-1)", lambda L, x: x.view(-1)),
           ("contiguous", lambda L, x: x.contiguous()),
           ("clone", lambda L, x: x.clone()),
           ("to", lambda L, x: x.to(L.float64)),
           ("zeros_like", lambda L, x: L.zeros_like(x))]
    if n >= 2:
        a, b = rng.randrange(n), rng.randrange(n)
        perm = tuple(rng.sample(range(n), n))
        ops += [("transpose", lambda L, x: x.transpose(a, b)),
                ("permute", lambda L, x: x.permute(*perm)),
                ("mT", lambda L, x: x.mT),
                ("diagonal", lambda L, x, o=rng.randint(-1, 1): x.diagonal(o, 0, 1))]
    if n == 4:
        ops.append(("channels_last", lambda L, x: x.contiguous(memory_format=L.channels_last)))
        ops.append(("empty_like cl", lambda L, x: L.empty_like(x, memory_format=L.channels_last)))
    if n >= 1:
        d = rng.randrange(n)
        ops += [("x[..., None, :]", lambda L, x: x[..., None, :]),
                ("squeeze", lambda L, x: x.squeeze()),
                ("squeeze(d)", lambda L, x: x.squeeze(d)),
                ("flatten", lambda L, x: x.flatten()),
                ("reshape", lambda L, x: x.reshape(-1, shape[-1]) if shape[-1] else x),
                ("movedim", lambda L, x: x.movedim(d, 0)),
                ("expand", lambda L, x: x.unsqueeze(0).expand(2, *shape))]
        if shape[d] > 1:
            s = rng.randrange(shape[d])
            e = rng.randint(s, shape[d])
            st = rng.randint(1, 3)
            ops += [("slice", lambda L, x: x[(slice(None),) * d + (slice(s, e, st),)]),
                    ("narrow", lambda L, x: x.narrow(d, s, e - s)),
                    ("select", lambda L, x: x.select(d, s)),
                    ("unfold", lambda L, x: x.unfold(d, 2, 1)),
                    ("split", lambda L, x: x.split(2, d)[-1]),
                    ("chunk", lambda L, x: x.chunk(3, d)[-1]),
                    ("tensor_split", lambda L, x: x.tensor_split(3, d)[1]),
                    ("unbind", lambda L, x: x.unbind(d)[-1])]
    return ops


def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous()


@pytest.mark.parametrize("seed", range(2))
def test_chains_of_views_report_pytorchs_strides(seed):
    # on the meta device: strides are metadata, so no program is compiled (each op is the
    # op's eval_shape, traced once per argument types)
    rng = random.Random(seed)
    for _ in range(150):
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(0, 4)))
        a, b = torch.zeros(shape), tj.zeros(shape, device="meta")
        names = []
        for _ in range(rng.randint(1, 4)):
            name, f = rng.choice(_view_ops(tuple(a.shape), rng))
            names.append(name)
            try:
                ra = f(torch, a)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=str(e).split("(")[0][:30]):
                    f(tj, b)
                break
            a, b = ra, f(tj, b)
            assert _layout(b) == _layout(a), (shape, names)
            if a.dim() == 4:
                cl = torch.channels_last
                assert b.is_contiguous(memory_format=tj.channels_last) == \
                    a.is_contiguous(memory_format=cl), (shape, names)


def test_real_and_meta_tensors_agree():
    x = tj.arange(24.0).reshape(2, 3, 4)
    m = tj.zeros(2, 3, 4, device="meta")
    for f in (lambda x: x.transpose(0, 2)[1:, ::2], lambda x: x.unfold(2, 2, 1),
              lambda x: x.diagonal(0, 1, 2), lambda x: x.chunk(2, 2)[1].clone()):
        assert _layout(f(x)) == _layout(f(m))


def test_view_of_a_transposed_tensor_raises_pytorchs_error():
    x = tj.zeros(3, 4)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's "
                                           "size and stride"):
        x.t().view(-1)
    assert x.t().reshape(-1).shape == (12,)
    assert x.view(2, 6).t().view(6, 2).stride() == (1, 6)  # still viewable: no error


def test_reshape_that_must_copy_is_not_a_view():
    # PyTorch copies when no view exists: a write to the result does not reach the input
    for lib in (torch, tj):
        x = lib.arange(6.0).reshape(2, 3)
        y = x.t().reshape(-1)
        y[0] = 100.0
        assert x[0, 0].item() == 0.0
        z = x.reshape(3, 2)  # a view
        z[0, 0] = 7.0
        assert x[0, 0].item() == 7.0


def test_contiguous_returns_self_or_a_copy():
    x = tj.arange(6.0).reshape(2, 3)
    assert x.contiguous() is x
    t = x.t()
    c = t.contiguous()
    assert c is not t and c.is_contiguous() and c.stride() == (2, 1)
    c[0, 0] = -1.0  # a copy: x unchanged
    assert x[0, 0].item() == 0.0
    np.testing.assert_array_equal(c.detach().numpy()[1:], t.numpy()[1:])
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=tj.preserve_format)


def test_channels_last_formats():
    for lib in (torch, tj):
        x = lib.zeros(2, 3, 4, 5)
        y = x.to(memory_format=lib.channels_last)
        assert y.stride() == (60, 1, 15, 3)
        assert y.is_contiguous(memory_format=lib.channels_last) and not y.is_contiguous()
        assert y.contiguous(memory_format=lib.channels_last) is y
        assert lib.zeros_like(y).stride() == (60, 1, 15, 3)  # preserve_format
        assert lib.zeros_like(y, memory_format=lib.contiguous_format).stride() == (60, 20, 5, 1)
        assert (y + 1).shape == (2, 3, 4, 5)
        assert y.clone().stride() == (60, 1, 15, 3)
        assert y.double().stride() == (60, 1, 15, 3)
        e = lib.empty(2, 3, 4, 5, memory_format=lib.channels_last)
        assert e.stride() == (60, 1, 15, 3)
        z = lib.zeros(1, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last_3d)
        assert z.stride() == (120, 1, 40, 10, 2)
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            lib.zeros(2, 3).contiguous(memory_format=lib.channels_last)
    assert repr(tj.channels_last) == repr(torch.channels_last) == "torch.channels_last"


def test_module_to_channels_last_converts_4d_parameters():
    for lib in (torch, tj):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Linear(4, 2))
        m.to(memory_format=lib.channels_last)
        assert m[0].weight.is_contiguous(memory_format=lib.channels_last)
        assert m[0].weight.stride() == (27, 1, 9, 3)
        assert m[1].weight.stride() == (4, 1)


def test_empty_strided_and_as_strided_match_pytorch():
    for lib in (torch, tj):
        e = lib.empty_strided((2, 3), (1, 2))
        assert e.stride() == (1, 2) and not e.is_contiguous()
    xa = torch.arange(12.0, requires_grad=True)
    xb = tj.arange(12.0, requires_grad=True)
    for args in (((3, 3), (3, 1)), ((2, 2), (1, 1), 2), ((4,), (3,)), ((2, 3), (0, 2), 1)):
        ra, rb = xa.as_strided(*args), xb.as_strided(*args)
        np.testing.assert_array_equal(rb.detach().numpy(), ra.detach().numpy())
        assert _layout(rb) == _layout(ra)
        ra.pow(2).sum().backward()
        rb.pow(2).sum().backward()
        np.testing.assert_array_equal(xb.grad.numpy(), xa.grad.numpy())
    # a view's as_strided reads its base's storage, from the view's offset by default
    va, vb = torch.arange(12.0).reshape(3, 4)[1:], tj.arange(12.0).reshape(3, 4)[1:]
    np.testing.assert_array_equal(vb.as_strided((2,), (5,)).numpy(),
                                  va.as_strided((2,), (5,)).numpy())
    # channels_last storage is in NHWC order
    ca = torch.arange(24.0).reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last)
    cb = tj.arange(24.0).reshape(1, 2, 3, 4).contiguous(memory_format=tj.channels_last)
    np.testing.assert_array_equal(cb.as_strided((6,), (1,)).numpy(),
                                  ca.as_strided((6,), (1,)).numpy())
    # a write through it reaches the base
    base = tj.zeros(6)
    base.as_strided((2,), (3,))[1] = 5.0
    assert base.tolist() == [0, 0, 0, 5, 0, 0]
    with pytest.raises(RuntimeError, match="out of bounds for storage of size"):
        tj.zeros(4).as_strided((3,), (2,))


def test_as_strided_scatter_gradient_by_finite_differences():
    # PyTorch 2.13's own gradients are wrong here (its gradcheck fails): the overwritten
    # elements of input get none, the others theirs; src gets the elements it was written to
    rng = np.random.default_rng(0)
    src = tj.tensor(rng.normal(size=(2, 2)), requires_grad=True)
    for view in (lambda a: a * 2, lambda a: a.t(), lambda a: a[1:]):
        a = tj.tensor(rng.normal(size=(3, 4)), requires_grad=True)
        assert tj.autograd.gradcheck(
            lambda a, src: tj.as_strided_scatter(view(a), src, (2, 2), (3, 1), 1), (a, src))
