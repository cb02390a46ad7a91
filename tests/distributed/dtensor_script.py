"""DeviceMesh and DTensor checks on 8 virtual CPU devices (run by test_dtensor.py)."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

import torchjax as torch
from torchjax.distributed.device_mesh import DeviceMesh, init_device_mesh
from torchjax.distributed.tensor import (DTensor, Partial, Replicate, Shard,
                                         distribute_tensor)


def shard_shapes(t):
    return sorted({tuple(s.data.shape) for s in t._data.addressable_shards})


@check
def mesh_names_sizes_and_slices():
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    assert mesh.ndim == 2 and mesh.shape == (2, 4) and mesh.size() == 8
    assert mesh.mesh_dim_names == ("dp", "tp")
    assert mesh.size(1) == 4 and mesh.size("dp") == 2
    tp = mesh["tp"]
    assert tp.ndim == 1 and tp.size() == 4 and tp.mesh.tolist() == [0, 1, 2, 3]
    assert mesh["dp"].mesh.tolist() == [0, 4]
    assert mesh.mesh.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert mesh.get_coordinate() == (0, 0) and tp.get_local_rank() == 0
    assert mesh.get_group("tp").size() == 4 and mesh.get_group(0).size() == 2
    assert tuple(mesh.jax_mesh.axis_names) == ("dp", "tp")
    assert DeviceMesh("cpu", [[0, 1, 2, 3], [4, 5, 6, 7]], mesh_dim_names=("dp", "tp")) == mesh
    for bad, err in [(lambda: mesh["pp"], KeyError),
                     (lambda: init_device_mesh("cpu", (16,)), RuntimeError),
                     (lambda: init_device_mesh("cpu", (2, 4), mesh_dim_names=("a",)),
                      RuntimeError)]:
        try:
            bad()
        except err:
            pass
        else:
            raise AssertionError("no error")


@check
def distribute_tensor_lays_out_shards():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    x = torch.arange(64.0).reshape(16, 4)
    d = distribute_tensor(x, mesh, [Shard(0)])
    assert isinstance(d, DTensor) and isinstance(d, torch.Tensor)
    assert d.placements == (Shard(dim=0),) and d.device_mesh is mesh
    assert d._data.sharding == NamedSharding(mesh.jax_mesh, P("dp"))
    assert shard_shapes(d) == [(2, 4)] and d.shape == (16, 4)
    assert torch.equal(d.full_tensor(), x)
    assert torch.equal(d.to_local(), x[:2])
    r = distribute_tensor(x, mesh)  # default: replicated
    assert r.placements == (Replicate(),) and shard_shapes(r) == [(16, 4)]
    c = distribute_tensor(torch.ones(2, 16), mesh, [Shard(-1)])
    assert c.placements == (Shard(dim=1),)
    assert shard_shapes(distribute_tensor(torch.ones(2, 16), mesh, [Shard(-1)])) == [(2, 2)]
    m2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    d2 = distribute_tensor(x, m2, [Shard(0), Shard(1)])
    assert shard_shapes(d2) == [(8, 1)]
    assert torch.equal(d2.to_local(), x[:8, :1])
    d3 = distribute_tensor(x, m2["tp"], [Shard(0)])  # sharded on tp, replicated on dp
    assert d3._data.sharding.spec == P("tp") and shard_shapes(d3) == [(4, 4)]


@check
def redistribute_and_partial():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    x = torch.randn(8, 16)
    d = distribute_tensor(x, mesh, [Shard(0)])
    r = d.redistribute(mesh, [Shard(1)])
    assert r.placements == (Shard(dim=1),) and shard_shapes(r) == [(8, 2)]
    assert torch.equal(r.full_tensor(), x)
    rep = r.redistribute(placements=[Replicate()])
    assert shard_shapes(rep) == [(8, 16)] and torch.equal(rep.full_tensor(), x)
    try:  # PyTorch 2.13 refuses any redistribution to Partial (test_dtensor_errors.py)
        rep.redistribute(placements=[Partial()])
        raise AssertionError("redistributed to Partial")
    except RuntimeError as e:
        assert "redistributing to Partial is for internal use only" in str(e)
    p = DTensor.from_local(x / 8, mesh, [Partial()])  # each device's x / 8: the sum is x
    assert p.placements == (Partial("sum"),)
    assert torch.allclose(p.to_local(), x / 8)
    assert torch.allclose(p.redistribute(placements=[Replicate()]).full_tensor(), x)
    # from_local: every device's shard is the local tensor, as if each rank passed it
    loc = torch.randn(2, 3)
    f = DTensor.from_local(loc, mesh, [Shard(0)])
    assert f.shape == (16, 3) and torch.equal(f.full_tensor(), loc.repeat(8, 1))
    assert torch.equal(f.to_local(), loc)
    s = DTensor.from_local(loc, mesh, [Partial()])
    assert torch.allclose(s.full_tensor(), loc * 8) and torch.allclose(s.to_local(), loc)
    assert torch.equal(DTensor.from_local(loc, mesh, [Replicate()]).full_tensor(), loc)


@check
def ops_run_sharded_and_autograd_flows():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    xs = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    ws = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    x = distribute_tensor(torch.tensor(xs), mesh, [Shard(0)])
    w = distribute_tensor(torch.tensor(ws, requires_grad=True), mesh, [Replicate()])
    assert w.requires_grad and w.is_leaf
    y = torch.tanh(x @ w)
    # XLA kept the batch sharding through the ops
    assert y._data.sharding.spec[0] == "dp" and shard_shapes(y) == [(2, 3)]
    assert DTensor.from_sharded(y, mesh).placements == (Shard(0),)
    loss = y.pow(2).mean()
    loss.backward()
    # against the same function on one device, in JAX
    rl, rg = jax.value_and_grad(lambda w_: (jnp.tanh(xs @ w_) ** 2).mean())(ws)
    np.testing.assert_allclose(loss.item(), float(rl), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(w.grad._data), np.asarray(rg), rtol=1e-5, atol=1e-6)
    # through redistribute, to_local and from_local too
    a = torch.randn(16, 8, requires_grad=True)
    d = distribute_tensor(a, mesh, [Shard(0)])
    (d.redistribute(placements=[Shard(1)]).full_tensor() * 3).sum().backward()
    assert isinstance(d.grad, DTensor) and d.grad.placements == (Shard(0),)  # as PyTorch's
    assert torch.equal(d.grad.full_tensor(), torch.full((16, 8), 3.0))
    loc = torch.ones(2, 4, requires_grad=True)
    DTensor.from_local(loc, mesh, [Shard(0)]).sum().backward()
    assert torch.equal(loc.grad, torch.full((2, 4), 8.0))


@check
def compiled_step_keeps_shardings():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    w = distribute_tensor(torch.randn(8, 4, requires_grad=True), mesh, [Shard(0)])
    x = distribute_tensor(torch.randn(16, 8), mesh, [Shard(0)])

    @torch.compile
    def f(x):
        return (x @ w).relu().sum()

    eager = (x @ w).relu().sum()
    np.testing.assert_allclose(f(x).item(), eager.item(), rtol=1e-5)


def same_as_eager(eager, got):
    """got (a compiled call's result) is eager's: class, placements, values, and an array
    laid out as its placements say."""
    from torchjax.distributed.tensor._placements import sharding_of
    assert type(got) is type(eager), (type(got), type(eager))
    np.testing.assert_allclose(got.detach().numpy(), eager.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    if isinstance(eager, DTensor):
        assert got.placements == eager.placements, (got.placements, eager.placements)
        assert got.device_mesh is eager.device_mesh
        want = getattr(eager, "_sharding", None) or sharding_of(
            got.device_mesh, got.placements, tuple(got.shape))
        assert got._data.sharding.is_equivalent_to(want, got.ndim), got._data.sharding
    assert got._data.sharding.is_equivalent_to(eager._data.sharding, got.ndim)


@check
def compiled_dtensors_keep_placements():
    """Inside torchjax.compile, ops on DTensors give DTensors whose placements (read from
    the inputs' placements) are the ones eager mode gives, and the program's arrays carry
    them; parameters an optimizer updates inside the step stay DTensors laid out as before."""
    from torchjax.distributed.tensor.parallel import ColwiseParallel, parallelize_module
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    x = distribute_tensor(torch.randn(16, 8), mesh, [Shard(0)])
    w = distribute_tensor(torch.randn(8, 4), mesh, [Replicate()])
    c = distribute_tensor(torch.randn(8, 16), mesh, [Shard(1)])

    def f(x, w, c):
        y = (x @ w).relu() * 2
        return y, y.sum(), x.sum(0), w + 1, x.t() @ x, c @ x, x.t(), (x + 1).mean()

    eager, got = f(x, w, c), torch.compile(f)(x, w, c)
    assert [e.placements for e in eager] == [
        (Shard(0),), (Partial(),), (Partial(),), (Replicate(),), (Partial(),), (Partial(),),
        (Shard(1),), (Partial("avg"),)]
    for e, g in zip(eager, got):
        same_as_eager(e, g)

    # reductions over a dim that is not sharded, views keeping a leading shard, permutes:
    # the shard moves where eager's (XLA's, and PyTorch's) placements say
    x3 = distribute_tensor(torch.randn(16, 4, 6), mesh, [Shard(0)])

    def g(x3):
        return (x3.sum(1), x3.mean(-1), x3.sum(1, keepdim=True), x3.amax(2), x3.view(16, 24),
                x3.reshape(8, 2, 24), x3.flatten(0, 1), x3.permute(2, 0, 1), x3.unsqueeze(0),
                x3.transpose(0, 2), x3.sum((1, 2)), x3.std(1))

    eager, got = g(x3), torch.compile(g)(x3)
    assert [e.placements for e in eager] == [
        (Shard(0),)] * 7 + [(Shard(1),), (Shard(1),), (Shard(2),), (Shard(0),), (Shard(0),)], \
        [e.placements for e in eager]
    for e, r in zip(eager, got):
        same_as_eager(e, r)

    # a Linear under parallelize_module, on a plain and on a replicated DTensor input
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 16)
    parallelize_module(lin, mesh, ColwiseParallel())
    compiled = torch.compile(lin)
    for inp in (torch.randn(4, 8), distribute_tensor(torch.randn(4, 8), mesh, [Replicate()])):
        same_as_eager(lin(inp), compiled(inp))

    # optimizer steps over a DTensor leaf and tensor-parallel parameters, eager and compiled
    def train(compiled):
        torch.manual_seed(1)
        leaf = distribute_tensor(torch.randn(8, 4), mesh, [Shard(0)]).requires_grad_()
        model = torch.nn.Linear(4, 16)
        parallelize_module(model, mesh, ColwiseParallel())
        opt = torch.optim.Adam([leaf, *model.parameters()], lr=0.1)

        def step(inp):
            opt.zero_grad()
            loss = (inp @ leaf).pow(2).sum() + model(inp @ leaf).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        run_step = torch.compile(step) if compiled else step
        inp = distribute_tensor(torch.randn(16, 8), mesh, [Shard(0)])
        losses = [run_step(inp) for _ in range(3)]
        return losses, [leaf, model.weight, model.bias], opt

    (el, ep, eo), (gl, gp, go) = train(False), train(True)
    for e, g in zip(el, gl):
        same_as_eager(e, g)
    for e, g in zip(ep, gp):
        same_as_eager(e, g)
        same_as_eager(e.grad, g.grad)
        for k in ("exp_avg", "exp_avg_sq"):
            same_as_eager(eo.state[e][k], go.state[g][k])


@check
def uneven_shards_follow_torch_chunk():
    """A dim that does not split evenly: JAX refuses uneven shardings, so the dim is held
    whole, with a warning; placements, to_local() and values are PyTorch's (torch.chunk)."""
    import warnings

    import torch as pt
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    x = torch.arange(30.0).reshape(10, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = distribute_tensor(x, mesh, [Shard(0)])
        distribute_tensor(x, mesh, [Shard(0)])
    said = [w for w in caught if "does not split evenly over 8 devices" in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in caught]  # once per case
    assert d.placements == (Shard(0),) and d.shape == (10, 3)
    assert torch.equal(d.full_tensor(), x)
    assert torch.equal(d.to_local(), torch.tensor(pt.chunk(pt.arange(30.0).reshape(10, 3),
                                                           8)[0].numpy()))
    assert torch.equal((d * 2).sum(0).full_tensor(), (x * 2).sum(0))
    # held whole, so ops read Replicate (documented); never a Partial for a dim not reduced
    assert (d * 2).sum(1).placements == (Replicate(),)
    # a 2-d mesh: dp (2) splits dim 0 of 6, tp (4) does not split the remaining 3
    m2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    y = torch.arange(12.0).reshape(6, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d2 = distribute_tensor(y, m2, [Shard(0), Shard(0)])
    assert d2._data.sharding.spec == P("dp") and shard_shapes(d2) == [(3, 2)]
    want = pt.chunk(pt.chunk(pt.arange(12.0).reshape(6, 2), 2)[0], 4)[0]
    assert torch.equal(d2.to_local(), torch.tensor(want.numpy()))
    assert torch.equal(d2.redistribute(placements=[Replicate(), Replicate()]).full_tensor(), y)


def _placement_cases(t, mesh, dist):
    """Ops on DTensors, by name: (result, ...) for torch or torchjax (dist: the
    distribute_tensor of either, S/R: its Shard and Replicate)."""
    g = np.random.default_rng(3)
    x, w, ws0, ws1, xs1 = (
        dist(t.tensor(g.standard_normal(s).astype(np.float32)), mesh, [p]) for s, p in
        [((8, 16), "S0"), ((16, 8), "R"), ((16, 8), "S0"), ((16, 8), "S1"), ((8, 16), "S1")])
    F = t.nn.functional
    return {"add": x + 1, "relu": x.relu(), "mul": x * x, "softmax": x.softmax(-1),
            "sum_sharded_dim": x.sum(0), "sum_other_dim": x.sum(1), "sum_all": x.sum(),
            "mean_sharded_dim": x.mean(0), "amax_sharded_dim": x.amax(0),
            "amax_other_dim": x.amax(1), "mm_row_sharded": x @ w,
            "mm_contracted_sharded": xs1 @ ws0, "mm_col_sharded": w.t() @ ws1,
            "linear": F.linear(x, w.t()), "t": x.t(), "view": x.view(8, 4, 4),
            "partial_plus_partial": x.sum(0) + x.sum(0), "partial_times_2": x.sum(0) * 2,
            "relu_of_partial": x.sum(0).relu(), "gelu": F.gelu(x * 2)}


@check
def ops_give_dtensors_with_pytorchs_placements():
    import torch as pt
    import torch.distributed as pdist
    from torch.distributed.device_mesh import init_device_mesh as pmesh
    from torch.distributed.tensor import Replicate as PR
    from torch.distributed.tensor import Shard as PS
    from torch.distributed.tensor import distribute_tensor as pdistribute
    ours = {"S0": Shard(0), "S1": Shard(1), "R": Replicate()}
    theirs = {"S0": PS(0), "S1": PS(1), "R": PR()}
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    got = _placement_cases(torch, mesh, lambda v, m, p: distribute_tensor(v, m, [ours[p[0]]]))
    # PyTorch's rules, on a one-process gloo group (its propagation does not depend on the
    # mesh size)
    pdist.init_process_group("gloo", store=pdist.HashStore(), world_size=1, rank=0)
    try:
        pm = pmesh("cpu", (1,))
        want = _placement_cases(pt, pm, lambda v, m, p: pdistribute(v, m, [theirs[p[0]]]))
    finally:
        pdist.destroy_process_group()
    for name, w in want.items():
        d = got[name]
        assert isinstance(d, DTensor), (name, type(d))
        assert [str(p) for p in d.placements] == [str(p) for p in w.placements], (
            name, d.placements, w.placements)
        np.testing.assert_allclose(d.full_tensor().numpy(), w.full_tensor().numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=name)
        # the array really lies as the placements say (Partial: held reduced, replicated)
        if any(isinstance(p, Shard) for p in d.placements):
            assert d._data.sharding.spec != P(), name
    # autograd through DTensor results; a plain tensor mixed in is PyTorch's error
    a = distribute_tensor(torch.randn(16, 4, requires_grad=True), mesh, [Shard(0)])
    y = (a * 2).sum()
    assert isinstance(y, DTensor) and y.placements == (Partial("sum"),)
    y.backward()
    assert torch.equal(a.grad.full_tensor(), torch.full((16, 4), 2.0))
    try:
        a + torch.ones(16, 4)
    except RuntimeError as e:
        assert "got mixed torch.Tensor and DTensor" in str(e)
    else:
        raise AssertionError("mixing a Tensor and a DTensor did not raise")
    assert isinstance(a + torch.tensor(1.0), DTensor)  # a 0-d tensor is a scalar


@check
def optimizers_step_dtensor_leaves():
    """SGD and Adam with clip_grad_norm_ over a sharded DTensor leaf: its .grad is a DTensor
    laid out as the leaf, and the steps match the same on a plain tensor."""
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    start = np.random.default_rng(5).standard_normal((8, 4)).astype(np.float32)
    for opt_cls in (torch.optim.SGD, torch.optim.Adam):
        got = []
        for sharded in (True, False):
            w = torch.tensor(start, requires_grad=True)
            if sharded:
                w = distribute_tensor(w, mesh, [Shard(0)])
            opt = opt_cls([w], lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                (w * w).sum().backward()
                torch.nn.utils.clip_grad_norm_([w], 1.0)
                opt.step()
            if sharded:
                assert isinstance(w.grad, DTensor) and w.grad.placements == (Shard(0),)
                assert w.placements == (Shard(0),) and shard_shapes(w) == [(1, 4)]
                w = w.full_tensor()
            got.append(w.detach().numpy())
        np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)


@check
def mesh_printing_coordinates_and_slicing_as_pytorch():
    """A (2, 4) mesh's repr (named, unnamed, sliced, with a dimension of size 1), coordinate
    and a slice out of order, against PyTorch 2.13's DeviceMesh in a fake world of 8 ranks."""
    import importlib

    from torch.testing._internal.distributed.fake_pg import FakeStore
    pdist = importlib.import_module("torch.distributed")  # (`import torch` is torchjax here)
    pmesh = importlib.import_module("torch.distributed.device_mesh").init_device_mesh

    def surface(init):
        m = init("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        out = [repr(m), repr(m["tp"]), repr(m["dp"]), repr(m["dp", "tp"]),
               repr(init("cpu", (2, 4))), repr(init("cpu", (8,))),
               repr(init("cpu", (2, 1, 4), mesh_dim_names=("a", "b", "c"))),
               m.get_coordinate(), m["tp"].get_coordinate(), m.get_rank()]
        for bad in (lambda: m["tp", "dp"], lambda: m["pp"], lambda: m.get_group("pp")):
            try:
                bad()
                out.append(None)
            except KeyError as e:
                out.append(e.args)
        return out

    got = surface(init_device_mesh)
    pdist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    try:
        want = surface(pmesh)
    finally:
        pdist.destroy_process_group()
    assert got == want, (got, want)


if __name__ == "__main__":
    run()
