"""Structural ops against PyTorch 2.13 beyond the op table: the composites (meshgrid, hstack,
atleast_*, broadcast_*, ...), writes through diagonal/unfold/tensor_split views, cdist gradients
at zero distance and at ties, grad_fn names and error messages."""

import warnings

import numpy as np
import pytest
import torch

import torchjax
from tests.ops import harness
from tests.ops.harness import S, make


def both(fn):
    return fn(torch), fn(torchjax)


def same(a, b):
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert str(b.dtype).replace("torchjax", "torch") == str(a.dtype)
    np.testing.assert_allclose(np.asarray(b.detach()._data), a.detach().numpy(), rtol=1e-6,
                               atol=1e-6)


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


# -- composites, compared with values, dtypes and gradients ------------------------------------

COMPOSITES = {
    "meshgrid": [
        S(make(3), make(2), call=_fn("meshgrid")),
        S(make(3), make(2), make(4), indexing="xy", call=_fn("meshgrid")),
        S(make(3), make(2), indexing="ij", call=_fn("meshgrid")),
        S([make(3), make(2)], call=_fn("meshgrid")),
        S(make(), make(2), call=_fn("meshgrid")),
        S(make(3), call=_fn("meshgrid")),
        S(make(3, dtype="int64"), make(2, dtype="int64"), call=_fn("meshgrid")),
    ],
    "cartesian_prod": [
        S(make(3), make(2), call=_fn("cartesian_prod")),
        S(make(3), make(2), make(2), call=_fn("cartesian_prod")),
        S(make(3), call=_fn("cartesian_prod")),
        S(make(3, dtype="int64"), make(2, dtype="int64"), call=_fn("cartesian_prod")),
    ],
    "combinations": [
        S(make(4), call=_fn("combinations")),
        S(make(4), 3, call=_fn("combinations")),
        S(make(4), r=2, with_replacement=True, call=_fn("combinations")),
        S(make(4), 1, call=_fn("combinations")),
        S(make(4), 0, call=_fn("combinations")),
        S(make(2), 3, call=_fn("combinations")),
        S(make(4, dtype="int64"), call=_fn("combinations")),
    ],
    "broadcast_to": [
        S(make(4), (3, 4), call=_fn("broadcast_to")),
        S(make(3, 1), [2, -1, 5], call=_fn("broadcast_to")),
        S(make(), (2,), call=_fn("broadcast_to")),
        S(make(1, 4), (3, 4), call=lambda lib, x, s: x.broadcast_to(s)),
        S(make(2, dtype="int64"), (2, 2), call=_fn("broadcast_to")),
    ],
    "broadcast_tensors": [
        S(make(4), make(3, 1), call=_fn("broadcast_tensors")),
        S(make(3, 4), make(4), make(), call=_fn("broadcast_tensors")),
        S(make(2, 2), call=_fn("broadcast_tensors")),
        S(make(2, dtype="int64"), make(2, 1), call=_fn("broadcast_tensors")),
    ],
    "atleast": [
        S(make(), call=_fn("atleast_1d")),
        S(make(3), call=_fn("atleast_1d")),
        S(make(), make(3), call=_fn("atleast_1d")),
        S(make(), call=_fn("atleast_2d")),
        S(make(3), call=_fn("atleast_2d")),
        S([make(3), make(2, 2)], call=_fn("atleast_2d")),
        S(make(), call=_fn("atleast_3d")),
        S(make(3), call=_fn("atleast_3d")),
        S(make(2, 3), call=_fn("atleast_3d")),
        S(make(2, 3, 4), make(3), call=_fn("atleast_3d")),
        S(make(3, dtype="int64"), call=_fn("atleast_2d")),
    ],
    "stacks": [
        S([make(3), make(2)], call=_fn("hstack")),
        S([make(2, 3), make(2, 1)], call=_fn("hstack")),
        S([make(), make()], call=_fn("hstack")),
        S((make(3), make(2, 3)), call=_fn("vstack")),
        S([make(), make(1)], call=_fn("vstack")),
        S([make(3), make(2, 3)], call=_fn("row_stack")),
        S([make(3), make(3)], call=_fn("dstack")),
        S([make(2, 3), make(2, 3, 2)], call=_fn("dstack")),
        S([make(3), make(3, 2), make(3)], call=_fn("column_stack")),
        S([make(), make(1, 2)], call=_fn("column_stack")),
        S([make(3, dtype="int64"), make(3)], call=_fn("hstack")),
        S([make(3, dtype="int32"), make(3, dtype="int64")], call=_fn("vstack")),
    ],
    "view_as": [
        S(make(3, 4), make(4, 3), call=lambda lib, x, o: x.view_as(o)),
        S(make(3, 4), make(12), call=lambda lib, x, o: x.view_as(o)),
    ],
}


@pytest.mark.parametrize("group", sorted(COMPOSITES))
def test_composites(group):
    for s in COMPOSITES[group]:
        harness.compare(group, s)


@pytest.mark.parametrize("args", [(3, 4), (3, 4, 1), (4, 3, -1), (3, 3, 5), (3, 3, -5),
                                  (0, 3), (1, 1), (5, 2, 0)])
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_tri_indices(name, args):
    a, b = both(lambda lib: getattr(lib, name)(*args))
    same(a, b)
    a, b = both(lambda lib: getattr(lib, name)(*args, dtype=lib.int32))
    same(a, b)


def test_broadcast_shapes():
    for shapes in [((2, 1), 3, (1,)), ((5, 1, 4), [3, 1]), (), ((0, 1), (1, 4)), (4,),
                   (torch.Size([2, 1]), (2, 3))]:
        a, b = both(lambda lib: lib.broadcast_shapes(*shapes))
        assert type(b) is torchjax.Size and tuple(a) == tuple(b)


def test_one_tensor_composites_return_their_input():
    x = torchjax.ones(3, requires_grad=True)
    assert torchjax.atleast_1d(x) is x
    assert torchjax.cartesian_prod(x) is x
    assert torchjax.broadcast_tensors(x, torchjax.ones(1))[0] is x
    m = torchjax.ones(2, 3)
    assert torchjax.atleast_2d(m) is m
    assert torchjax.atleast_1d() == ()


# -- views -----------------------------------------------------------------------------------

def base(lib):
    return lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))


VIEWS = {
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset_dims": lambda x: torch_or_tj(x).diagonal(x, 1, -1, 1),
    "diagonal_of_view": lambda x: x.transpose(0, 2).diagonal(-1),
    "unfold": lambda x: x.unfold(2, 2, 2),
    # non-overlapping windows: a write through overlapping ones repeats in PyTorch (aliased memory)
    "unfold_rows": lambda x: x.unfold(1, 1, 2).select(2, 0),
    "swapdims": lambda x: x.swapdims(0, 2),
    "moveaxis": lambda x: torch_or_tj(x).moveaxis(x, 0, -1),
}

PIECES = {
    "tensor_split": lambda x: x.tensor_split(3, 2),
    "tensor_split_idx": lambda x: x.tensor_split([1, 2], 1),
    "hsplit": lambda x: x.hsplit([1]),
    "dsplit": lambda x: x.dsplit(2),
}


def torch_or_tj(x):
    return torch if isinstance(x, torch.Tensor) else torchjax


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_through_view(name):
    def run(lib):
        x = base(lib)
        other = x.view(-1)
        v = VIEWS[name](x)
        assert v._base is x
        v.mul_(-2.0)
        v.add_(lib.full(tuple(v.shape), 0.5))
        return x, v, other

    for a, b in zip(*both(run)):
        same(a, b)


@pytest.mark.parametrize("name", sorted(PIECES))
def test_write_through_pieces(name):
    def run(lib):
        x = base(lib)
        pieces = PIECES[name](x)
        assert all(p._base is x for p in pieces)
        pieces[0].add_(100.0)
        pieces[-1].mul_(-1.0)
        return (x,) + tuple(pieces)

    for a, b in zip(*both(run)):
        same(a, b)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_base_write_reaches_views(name):
    def run(lib):
        x = base(lib)
        v = VIEWS[name](x)
        x.mul_(3.0).sub_(1.0)
        return v

    same(*both(run))


def test_diagonal_write_backward():
    def run(lib):
        w = lib.tensor(np.arange(9, dtype=np.float32).reshape(3, 3), requires_grad=True)
        x = w * 1.0
        x.diagonal().mul_(2.0)
        x.sum().backward()
        return x, w.grad

    for a, b in zip(*both(run)):
        same(a, b)


# -- cdist gradients where the norm has a kink -------------------------------------------------

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, 0.0, float("inf")])
def test_cdist_gradient_at_zero_distance(p):
    x = make(4, 3, seed=3)
    y = np.concatenate([x[:2], make(2, 3, seed=4)])  # two zero distances
    y[3, 0] = x[2, 0]  # one zero coordinate in a nonzero distance
    for dt in ("float32", "float64"):
        harness.compare("cdist", S(x.astype(dt), y.astype(dt), p=p))


def test_cdist_gradient_at_ties_of_inf_norm():
    x = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.5]], dtype=np.float64)
    y = np.array([[1.0, -1.0, 1.0], [0.0, 0.0, 0.0]], dtype=np.float64)
    harness.compare("cdist", S(x, y, p=float("inf")))


@pytest.mark.parametrize("increasing", [False, True])
def test_vander_gradient(increasing):
    # PyTorch 2.13's own vander backward raises, so check ours by finite differences, including
    # at x = 0 where the running product keeps the derivative exact
    x = np.array([0.0, 1.5, -0.7], dtype=np.float64)
    call = lambda lib, x, N: lib.vander(x, N, increasing=increasing)  # noqa: E731
    assert harness.gradcheck("vander", S(x, 4, call=call))
    x = torchjax.tensor([0.0, 2.0], requires_grad=True)
    torchjax.vander(x, 4, increasing=increasing).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad._data), [1.0, 1 + 4 + 12])


# -- grad_fn names -----------------------------------------------------------------------------

GRAD_FNS = {
    "tril": lambda lib, x: lib.tril(x),
    "triu_": lambda lib, x: x.clone().triu_(),
    "diag_1d": lambda lib, x: lib.diag(x[0, 0]),
    "diag_2d": lambda lib, x: lib.diag(x[0]),
    "diagonal": lambda lib, x: x.diagonal(),
    "diag_embed": lambda lib, x: lib.diag_embed(x),
    "diagflat": lambda lib, x: lib.diagflat(x),
    "trace": lambda lib, x: lib.trace(x[0]),
    "flip": lambda lib, x: x.flip(0),
    "fliplr": lambda lib, x: lib.fliplr(x),
    "roll": lambda lib, x: lib.roll(x, 1),
    "rot90": lambda lib, x: lib.rot90(x),
    "tile": lambda lib, x: lib.tile(x, (2,)),
    "repeat_interleave": lambda lib, x: lib.repeat_interleave(x, 2, 1),
    "repeat_interleave_t": lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 2]), 0),
    "meshgrid": lambda lib, x: lib.meshgrid(x[0, 0], x[0, 1])[1],
    "cartesian_prod": lambda lib, x: lib.cartesian_prod(x[0, 0], x[0, 1]),
    "combinations": lambda lib, x: lib.combinations(x[0, 0]),
    "broadcast_to": lambda lib, x: lib.broadcast_to(x, (2, 2, 3, 4)),
    "atleast_3d": lambda lib, x: lib.atleast_3d(x[0]),
    "hstack": lambda lib, x: lib.hstack([x, x]),
    "column_stack": lambda lib, x: lib.column_stack([x[0, 0], x[0, 1]]),
    "block_diag": lambda lib, x: lib.block_diag(x[0], x[1]),
    "tensor_split": lambda lib, x: lib.tensor_split(x, 2, 1)[1],
    "hsplit": lambda lib, x: lib.hsplit(x, 3)[0],
    "unfold": lambda lib, x: x.unfold(2, 2, 1),
    "kron": lambda lib, x: lib.kron(x[0], x[1]),
    "tensordot": lambda lib, x: lib.tensordot(x, x, 3),
    "cross": lambda lib, x: lib.cross(x[0, :, :3], x[1, :, 1:], dim=1),
    "cdist": lambda lib, x: lib.cdist(x[0], x[1]),
    "vander": lambda lib, x: lib.vander(x[0, 0]),
    "vander_increasing": lambda lib, x: lib.vander(x[0, 0], increasing=True),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_fn_names(name):
    def run(lib):
        x = lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), requires_grad=True)
        return type(GRAD_FNS[name](lib, x).grad_fn).__name__

    a, b = both(run)
    assert a == b


# -- errors ----------------------------------------------------------------------------------

ERRORS = {
    "tril_1d": lambda lib: lib.tril(lib.ones(3)),
    "triu_1d": lambda lib: lib.ones(3).triu(),
    "tri_indices_float": lambda lib: lib.tril_indices(3, 3, dtype=lib.float32),
    "diag_3d": lambda lib: lib.diag(lib.ones(2, 2, 2)),
    "diag_0d": lambda lib: lib.diag(lib.tensor(1.0)),
    "diagonal_same_dims": lambda lib: lib.diagonal(lib.ones(2, 2), 0, 1, 1),
    "diagonal_0d": lambda lib: lib.diagonal(lib.tensor(1.0)),
    "diag_embed_same_dims": lambda lib: lib.diag_embed(lib.ones(3), 0, 0, 0),
    "trace_1d": lambda lib: lib.trace(lib.ones(3)),
    "trace_bool": lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)),
    "flip_repeated": lambda lib: lib.flip(lib.ones(2, 2), (0, -2)),
    "flip_out_of_range": lambda lib: lib.flip(lib.ones(2, 2), (2,)),
    "fliplr_1d": lambda lib: lib.fliplr(lib.ones(3)),
    "flipud_0d": lambda lib: lib.flipud(lib.tensor(1.0)),
    "roll_misaligned": lambda lib: lib.roll(lib.ones(2, 2), (1, 2), 0),
    "roll_no_dims": lambda lib: lib.roll(lib.ones(2, 2), (1, 2)),
    "roll_empty": lambda lib: lib.roll(lib.ones(2, 2), [], []),
    "rot90_one_dim": lambda lib: lib.rot90(lib.ones(2, 2), 1, [0]),
    "rot90_same_dims": lambda lib: lib.rot90(lib.ones(2, 2), 1, [1, 1]),
    "rot90_1d": lambda lib: lib.rot90(lib.ones(3)),
    "tile_negative": lambda lib: lib.ones(3, 4).tile(-1),
    "repeat_interleave_negative": lambda lib: lib.repeat_interleave(lib.ones(3), -1),
    "repeat_interleave_bad_size": lambda lib: lib.repeat_interleave(
        lib.ones(3), lib.tensor([1, 2])),
    "repeat_interleave_neg_tensor": lambda lib: lib.repeat_interleave(
        lib.ones(2), lib.tensor([1, -2])),
    "repeat_interleave_float_repeats": lambda lib: lib.repeat_interleave(
        lib.ones(2), lib.tensor([1.0, 2.0])),
    "repeat_interleave_2d_repeats": lambda lib: lib.repeat_interleave(lib.tensor([[1, 2]])),
    "repeat_interleave_output_size": lambda lib: lib.repeat_interleave(
        lib.ones(2), 2, output_size=3),
    "repeat_interleave_output_size_t": lambda lib: lib.repeat_interleave(
        lib.ones(2), lib.tensor([1, 2]), output_size=2),
    "meshgrid_empty": lambda lib: lib.meshgrid(),
    "meshgrid_indexing": lambda lib: lib.meshgrid(lib.ones(2), indexing="yx"),
    "meshgrid_dtypes": lambda lib: lib.meshgrid(lib.ones(2), lib.ones(2, dtype=lib.int64)),
    "combinations_2d": lambda lib: lib.combinations(lib.ones(2, 2)),
    "combinations_negative": lambda lib: lib.combinations(lib.ones(2), -1),
    "cartesian_prod_2d": lambda lib: lib.cartesian_prod(lib.ones(2), lib.ones(2, 2)),
    "broadcast_shapes": lambda lib: lib.broadcast_shapes((2, 1), (3, 4)),
    "broadcast_shapes_negative": lambda lib: lib.broadcast_shapes((-1,)),
    "broadcast_to": lambda lib: lib.broadcast_to(lib.ones(3, 4), (4, 4)),
    "broadcast_tensors": lambda lib: lib.broadcast_tensors(lib.ones(3), lib.ones(2)),
    "hstack_empty": lambda lib: lib.hstack([]),
    "column_stack_empty": lambda lib: lib.column_stack([]),
    "block_diag_3d": lambda lib: lib.block_diag(lib.ones(2, 2, 2)),
    "tensor_split_zero": lambda lib: lib.tensor_split(lib.ones(3), 0),
    "tensor_split_0d": lambda lib: lib.tensor_split(lib.tensor(1.0), 1),
    "tensor_split_2d_tensor": lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([[1]])),
    "tensor_split_float_tensor": lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([1.0])),
    "hsplit_indivisible": lambda lib: lib.hsplit(lib.ones(3, 4), 3),
    "hsplit_0d": lambda lib: lib.hsplit(lib.tensor(1.0), 1),
    "vsplit_1d": lambda lib: lib.vsplit(lib.ones(4), 2),
    "dsplit_2d": lambda lib: lib.dsplit(lib.ones(2, 2), 2),
    "unfold_too_big": lambda lib: lib.ones(3, 4).unfold(1, 5, 1),
    "unfold_step_zero": lambda lib: lib.ones(3, 4).unfold(1, 2, 0),
    "tensordot_dims": lambda lib: lib.tensordot(lib.ones(2, 2), lib.ones(2, 2), 3),
    "tensordot_negative": lambda lib: lib.tensordot(lib.ones(2, 2), lib.ones(2, 2), -1),
    "tensordot_sizes": lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(3, 4), ([1], [0])),
    "tensordot_dtypes": lambda lib: lib.tensordot(lib.ones(2), lib.ones(2, dtype=lib.int64), 1),
    "cross_no_size_3": lambda lib: lib.cross(lib.ones(2, 4), lib.ones(2, 4)),
    "cross_dim_not_3": lambda lib: lib.cross(lib.ones(2, 4), lib.ones(2, 4), dim=1),
    "cross_ndim": lambda lib: lib.cross(lib.ones(3), lib.ones(2, 3), dim=-1),
    "cross_dtypes": lambda lib: lib.cross(lib.ones(3), lib.ones(3, dtype=lib.int64), dim=0),
    "cdist_1d": lambda lib: lib.cdist(lib.ones(3), lib.ones(2, 3)),
    "cdist_columns": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)),
    "cdist_negative_p": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1),
    "cdist_int": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64),
                                       lib.ones(2, 3, dtype=lib.int64)),
    "cdist_half": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float16),
                                        lib.ones(2, 3, dtype=lib.float16)),
    "cdist_dtypes": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 3)),
    "vander_2d": lambda lib: lib.vander(lib.ones(2, 2)),
    "vander_negative": lambda lib: lib.vander(lib.ones(2), -1),
    "cdist_mode": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="x"),
}


def _error(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:
            return e
    raise AssertionError(f"{lib.__name__} did not raise")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    et, ej = both(lambda lib: _error(ERRORS[name], lib))
    assert type(ej) is type(et), (et, ej)
    key = str(et).split("\n")[0][:40]
    assert key in str(ej), (str(et), str(ej))
