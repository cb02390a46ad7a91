"""Views against PyTorch 2.13: writes through a view reach the base and every other view, writes
to the base reach the views, detach()/.data share values, version counters are shared, grad_fn
names, and the errors of the shape and matrix ops."""

import numpy as np
import pytest
import torch

import torchjax


def both(fn):
    """fn(lib) run with torch and with torchjax."""
    return fn(torch), fn(torchjax)


def same(a, b):
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    np.testing.assert_array_equal(np.asarray(b.detach()._data), a.detach().numpy())


def base(lib, requires_grad=False):
    x = lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    return x.requires_grad_(requires_grad)


# Single-output view ops on a (2, 3, 4) base
VIEWS = {
    "view": lambda x: x.view(6, 4),
    "view_flat": lambda x: x.view(-1),
    "reshape": lambda x: x.reshape(4, 6),
    "flatten": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(1),
    "unsqueeze": lambda x: x.unsqueeze(-1),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "swapaxes": lambda x: x.swapaxes(1, 2),
    "t": lambda x: x.select(0, 1).t(),
    "narrow": lambda x: x.narrow(2, 1, 2),
    "select": lambda x: x.select(1, -1),
    "movedim": lambda x: x.movedim(0, -1),
    "chain": lambda x: x.view(6, 4).t().narrow(1, 2, 3).unsqueeze(0),
}

# Multi-output view ops: every piece is a view of the base
PIECES = {
    "split": lambda x: x.split(1, 1),
    "split_sections": lambda x: x.split((1, 3), 2),
    "chunk": lambda x: x.chunk(2, 2),
    "unbind": lambda x: x.unbind(1),
}


def _others(x):
    """Other live views of x that must see every write."""
    return [x.view(-1), x.transpose(0, 1), x.select(2, 0), x.narrow(1, 1, 2)]


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("write", ["add_", "mul_", "sub_"])
def test_write_through_view(name, write):
    def run(lib):
        x = base(lib)
        others = _others(x)
        v = VIEWS[name](x)
        assert v._base is x
        getattr(v, write)(lib.full(tuple(v.shape), 3.0))
        return x, v, others

    (xt, vt, ot), (xj, vj, oj) = both(run)
    same(xt, xj)
    same(vt, vj)
    for a, b in zip(ot, oj):
        same(a, b)


@pytest.mark.parametrize("name", sorted(PIECES))
def test_write_through_pieces(name):
    def run(lib):
        x = base(lib)
        others = _others(x)
        pieces = PIECES[name](x)
        assert all(p._base is x for p in pieces)
        pieces[0].add_(100.0)
        pieces[-1].mul_(-1.0)
        return x, pieces, others

    (xt, pt, ot), (xj, pj, oj) = both(run)
    assert type(pj) is type(pt) is tuple
    same(xt, xj)
    for a, b in zip(pt + tuple(ot), pj + tuple(oj)):
        same(a, b)


@pytest.mark.parametrize("name", sorted(VIEWS) + sorted(PIECES))
def test_base_write_reaches_views(name):
    def run(lib):
        x = base(lib)
        v = (VIEWS.get(name) or PIECES[name])(x)
        e = x.select(0, 0).select(0, 0).unsqueeze(0).expand(3, 4)
        x.mul_(2.0).add_(1.0)
        return (v if isinstance(v, tuple) else (v,)) + (e,)

    for a, b in zip(*both(run)):
        same(a, b)


def test_write_through_requires_grad_base_under_no_grad():
    def run(lib):
        x = base(lib, requires_grad=True)
        v = x.view(-1)
        with lib.no_grad():
            v.add_(1.0)
            x.select(0, 1).mul_(0.5)
        return x, v

    (xt, vt), (xj, vj) = both(run)
    same(xt, xj)
    same(vt, vj)
    assert xj.requires_grad and xj.is_leaf


def test_view_of_view_and_view_of_piece():
    def run(lib):
        x = base(lib)
        a, b = x.chunk(2, dim=1)
        w = b.squeeze(1).narrow(1, 1, 2)
        w.add_(1000.0)
        a.transpose(0, 2).select(0, 0).mul_(0.0)
        return x, a, b, w

    for p, q in zip(*both(run)):
        same(p, q)


def test_detach_and_data_share_values():
    def run(lib):
        x = base(lib, requires_grad=True)
        d = x.detach()
        d.add_(1.0)
        x.data.mul_(2.0)
        v = x.view(-1)
        vd = v.detach()
        vd.sub_(3.0)
        return x, d, v, vd, x._version, d._version

    (xt, dt, vt, vdt, xvt, dvt), (xj, dj, vj, vdj, xvj, dvj) = both(run)
    for a, b in ((xt, xj), (dt, dj), (vt, vj), (vdt, vdj)):
        same(a, b)
    assert (xvj, dvj) == (xvt, dvt)
    assert not dj.requires_grad and xj.requires_grad


def test_data_of_a_leaf_is_a_plain_alias_for_initialisation():
    # what every _init_weights does: in-place initialisation through .data of a parameter
    def run(lib):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.ones(2, 3))
        w.data.normal_(0, 0.02)
        w.data.uniform_(-1, 1)
        w.data[0].fill_(3.0)  # a view of the alias is no view of the leaf either
        w.data.zero_()
        w.data.fill_(1.0)
        w.data.copy_(lib.full((2, 3), 2.0))
        w.data.mul_(lib.tensor(0.5, requires_grad=True).detach())
        w.detach().add_(1.0)
        (w * 3).sum().backward()
        return w, w.grad, w.is_leaf, w.grad_fn

    (wt, gt, lt, ft), (wj, gj, lj, fj) = both(run)
    same(wt, wj)
    same(gt, gj)
    assert (lj, fj) == (lt, ft) == (True, None)


def test_detached_alias_keeps_no_history_after_writes_to_its_base():
    def run(lib):
        x = lib.ones(3, requires_grad=True) * 1
        d, e = x.detach(), x.data
        x.mul_(2)  # the base gets a new grad_fn; its aliases stay detached
        return d.requires_grad, d.grad_fn, e.requires_grad, d._is_view(), d, e

    got, want = both(run)
    assert got[:4] == want[:4] == (False, None, False, False)
    same(got[4], want[4])
    same(got[5], want[5])


def test_version_counters_are_shared():
    def run(lib):
        x = base(lib)
        versions = []
        v = x.view(-1)
        s = x.select(0, 0)
        a, b = x.split(2, dim=2)
        versions.append((x._version, v._version, s._version, a._version))
        v.add_(1.0)
        versions.append((x._version, v._version, s._version, a._version))
        x.mul_(2.0)
        b.add_(1.0)
        versions.append((x._version, v._version, s._version, a._version, b._version))
        x.detach().add_(1.0)
        versions.append((x._version, v._version))
        x.data.add_(1.0)  # .data has a version counter of its own
        versions.append((x._version, v._version))
        return versions

    vt, vj = both(run)
    assert vj == vt


def test_inplace_on_base_after_view_op_is_caught():
    # matmul saves its inputs: changing one in place (here through a view) breaks backward
    def run(lib):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.arange(9, dtype=lib.float32).reshape(3, 3)
        y = lib.matmul(w, x)
        x.view(-1).add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

    both(run)


# -- gradients through chains of views ---------------------------------------------------------

CHAINS = {
    "view_chain": lambda lib, x: x.view(6, 4).t().narrow(0, 1, 2).unsqueeze(0).expand(3, -1, -1),
    "pieces": lambda lib, x: lib.cat([p * (i + 1) for i, p in enumerate(x.split([1, 3], 2))], 2),
    "unused_piece": lambda lib, x: x.chunk(3, 1)[1] * 2,
    "unbind_stack": lambda lib, x: lib.stack(x.unbind(2)[::-1], 0),
    "matmul": lambda lib, x: lib.matmul(x.permute(0, 2, 1), x.select(0, 0)).squeeze(),
    "einsum": lambda lib, x: lib.einsum("bij,bkj->bik", x, x),
    "repeat": lambda lib, x: x.narrow(2, 0, 2).repeat(2, 1, 3).sum(0),
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_backward_through_views(name):
    def run(lib):
        x = base(lib).div(7.0).requires_grad_(True)
        out = CHAINS[name](lib, x)
        w = lib.tensor(np.random.default_rng(3).uniform(-1, 1, tuple(out.shape))
                       .astype(np.float32))
        (out * w).sum().backward()
        return out, x.grad

    (ot, gt), (oj, gj) = both(run)
    np.testing.assert_allclose(np.asarray(oj.detach()._data), ot.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(gj._data), gt.numpy(), rtol=1e-5, atol=1e-5)


# -- grad_fn names -----------------------------------------------------------------------------

GRAD_FNS = {
    "view": lambda lib, x: x.view(6, 4),
    "reshape": lambda lib, x: x.reshape(6, 4),
    "flatten": lambda lib, x: x.flatten(),
    "unflatten": lambda lib, x: x.unflatten(1, (3, 1)),
    "squeeze": lambda lib, x: x.unsqueeze(1).squeeze(),
    "squeeze_dim": lambda lib, x: x.unsqueeze(1).squeeze(1),
    "squeeze_dims": lambda lib, x: x.unsqueeze(1).squeeze((1, 0)),
    "unsqueeze": lambda lib, x: x.unsqueeze(0),
    "permute": lambda lib, x: x.permute(2, 0, 1),
    "transpose": lambda lib, x: x.transpose(0, 1),
    "t": lambda lib, x: x.select(0, 0).t(),
    "expand": lambda lib, x: x.unsqueeze(0).expand(2, -1, -1, -1),
    "repeat": lambda lib, x: x.repeat(1, 2, 1),
    "cat": lambda lib, x: lib.cat([x, x]),
    "stack": lambda lib, x: lib.stack([x, x]),
    "split": lambda lib, x: x.split(2, 2)[0],
    "split_with_sizes": lambda lib, x: lib.split(x, [1, 3], 2)[1],
    "chunk": lambda lib, x: x.chunk(2, 2)[1],
    "unbind": lambda lib, x: x.unbind(1)[0],
    "narrow": lambda lib, x: x.narrow(2, 1, 2),
    "select": lambda lib, x: x.select(2, 1),
    "movedim": lambda lib, x: x.movedim(0, 2),
    "mm": lambda lib, x: lib.mm(x.select(0, 0), x.select(0, 1).t()),
    "matmul_2d": lambda lib, x: lib.matmul(x.select(0, 0), x.select(0, 1).t()),
    "bmm": lambda lib, x: lib.bmm(x, x.transpose(1, 2)),
    "dot": lambda lib, x: lib.dot(x.view(-1), x.view(-1)),
    "mv": lambda lib, x: lib.mv(x.select(0, 0), x.select(0, 0).select(0, 0)),
    "outer": lambda lib, x: lib.outer(x.view(-1), x.view(-1)),
    "einsum": lambda lib, x: lib.einsum("bij,bkj->bik", x, x),
    "addmm": lambda lib, x: lib.addmm(x.select(0, 0).narrow(1, 0, 2), x.select(0, 0),
                                      x.select(0, 1).t().narrow(1, 0, 2)),
    "baddbmm": lambda lib, x: lib.baddbmm(x.narrow(2, 0, 3), x, x.transpose(1, 2)),
}
# Known differences (one grad_fn name per row): matmul of 1-D or batched operands gives DotBackward0 / MvBackward0 / UnsafeViewBackward0;
# einsum without a contraction gives MulBackward0, PermuteBackward0 or SumBackward1.


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_fn_names(name):
    def run(lib):
        return type(GRAD_FNS[name](lib, base(lib, requires_grad=True)).grad_fn).__name__

    t, j = both(run)
    assert j == t


# -- errors --------------------------------------------------------------------------------------

def _x(lib):
    return lib.ones(2, 3, 4)


ERRORS = {
    "view": lambda lib: lib.ones(6).view(2, 5),
    "view_two_inferred": lambda lib: lib.ones(6).view(-1, -1),
    "reshape": lambda lib: lib.reshape(lib.ones(6), (4, -1)),
    "flatten_order": lambda lib: _x(lib).flatten(2, 1),
    "flatten_range": lambda lib: _x(lib).flatten(0, 3),
    "unflatten": lambda lib: _x(lib).unflatten(-1, (3, -1)),
    "squeeze_range": lambda lib: _x(lib).squeeze(3),
    "unsqueeze_range": lambda lib: _x(lib).unsqueeze(4),
    "permute_dup": lambda lib: _x(lib).permute(0, 1, 1),
    "permute_range": lambda lib: _x(lib).permute(0, 1, 3),
    "transpose_range": lambda lib: _x(lib).transpose(0, 3),
    "expand": lambda lib: lib.ones(3, 2).expand(3, 4),
    "expand_leading": lambda lib: lib.ones(3).expand(-1, 3),
    "repeat": lambda lib: _x(lib).repeat(2, 2),
    "cat_sizes": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3, 3)], 1),
    "cat_ndim": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2)]),
    "cat_0d": lambda lib: lib.cat([lib.ones(()), lib.ones(())]),
    "cat_empty": lambda lib: lib.cat([]),
    "cat_range": lambda lib: lib.cat([lib.ones(2), lib.ones(2)], 1),
    "stack": lambda lib: lib.stack([lib.ones(2, 3), lib.ones(3, 2)]),
    "stack_range": lambda lib: lib.stack([lib.ones(2), lib.ones(2)], 2),
    "split_sizes": lambda lib: _x(lib).split([1, 2], 2),
    "split_zero": lambda lib: _x(lib).split(0, 2),
    "chunk_zero": lambda lib: _x(lib).chunk(0),
    "unbind_range": lambda lib: _x(lib).unbind(3),
    "narrow": lambda lib: _x(lib).narrow(2, 3, 2),
    "narrow_start": lambda lib: _x(lib).narrow(2, 5, 0),
    "select": lambda lib: _x(lib).select(2, 4),
    "select_0d": lambda lib: lib.ones(()).select(0, 0),
    "movedim": lambda lib: _x(lib).movedim((0, 0), (1, 2)),
    "t_3d": lambda lib: _x(lib).t(),
    "mm_shapes": lambda lib: lib.mm(lib.ones(10, 3), lib.ones(4, 8)),
    "mm_1d": lambda lib: lib.mm(lib.ones(3), lib.ones(3, 2)),
    "mm_dtype": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64)),
    "bmm_2d": lambda lib: lib.bmm(lib.ones(2, 3), lib.ones(2, 3, 4)),
    "bmm_batch": lambda lib: lib.bmm(lib.ones(5, 2, 3), lib.ones(4, 3, 4)),
    "matmul_2d": lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(2, 3)),
    "matmul_1d": lambda lib: lib.matmul(lib.ones(3), lib.ones(4)),
    "matmul_mv": lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(4)),
    "matmul_vm": lambda lib: lib.matmul(lib.ones(4), lib.ones(2, 3)),
    "matmul_folded": lambda lib: lib.ones(5, 2, 3) @ lib.ones(2, 3),
    "matmul_batched": lambda lib: lib.matmul(lib.ones(5, 2, 3), lib.ones(5, 2, 3)),
    "matmul_broadcast": lambda lib: lib.matmul(lib.ones(7, 5, 2, 3), lib.ones(6, 3, 4)),
    "matmul_0d": lambda lib: lib.matmul(lib.ones(()), lib.ones(2, 3)),
    "matmul_dtype": lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64)),
    "dot_2d": lambda lib: lib.dot(lib.ones(2, 2), lib.ones(2, 2)),
    "dot_size": lambda lib: lib.dot(lib.ones(3), lib.ones(4)),
    "dot_dtype": lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "mv": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2, 3)),
    "mv_size": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(4)),
    "outer": lambda lib: lib.outer(lib.ones(2, 3), lib.ones(3)),
    "einsum_fewer": lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3)),
    "einsum_more": lambda lib: lib.einsum("ij", lib.ones(2, 3), lib.ones(3, 4)),
    "einsum_dtype": lambda lib: lib.einsum("ij,jk", lib.ones(2, 3),
                                           lib.ones(3, 2, dtype=lib.float64)),
}
# PyTorch prints "permute(sparse_coo): ..." for a dense tensor; the rest of the message matches
PHRASE_ONLY = {"permute_len": "does not match the length of the desired ordering of dimensions"}
ERRORS["permute_len"] = lambda lib: _x(lib).permute(0, 1)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as et:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ej:
        ERRORS[name](torchjax)
    assert et.type is ej.type, (et.value, ej.value)
    if name in PHRASE_ONLY:
        assert PHRASE_ONLY[name] in str(ej.value) and PHRASE_ONLY[name] in str(et.value)
    else:
        assert str(ej.value) == str(et.value)


@pytest.mark.parametrize("make_view", [
    lambda x: x.reshape([4, 6]),
    lambda x: x.permute([2, 0, 1]),
    lambda x: x.unflatten(2, [2, 2]),
])
def test_views_with_list_arguments(make_view):
    def run(lib):
        x = base(lib)
        v = make_view(x)
        v.add_(1.0)
        x.mul_(2.0)
        return x, v

    (xt, vt), (xj, vj) = both(run)
    same(xt, xj)
    same(vt, vj)
