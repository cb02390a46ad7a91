"""DeviceMesh, DTensor, parallelize_module, DistributedDataParallel and fully_shard called
wrongly fail (or warn) as PyTorch 2.13's do (a mesh of one CPU device; PyTorch's on a
one-process gloo group): the same exception type and message. 8 devices:
dtensor_script.py's mesh_printing_coordinates_and_slicing_as_pytorch."""

import warnings

import pytest
import torch

import torchjax
from tests.distributed._common import pytorch_world_of_one, raised
from torchjax.distributed import device_mesh as tj_mesh
from torchjax.distributed import tensor as tj_tensor


@pytest.fixture(scope="module")
def libs():
    from torch.distributed import device_mesh as pt_mesh
    from torch.distributed import tensor as pt_tensor
    gen = pytorch_world_of_one()
    next(gen)
    try:
        yield {"torch": (torch, pt_mesh, pt_tensor), "torchjax": (torchjax, tj_mesh, tj_tensor)}
    finally:
        gen.close()


def _d(lib, m, t, placements):
    mesh = m.init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    return t.distribute_tensor(lib.arange(6.0).reshape(2, 3), mesh, placements)


CASES = {
    "mesh_dim_names of another length": lambda lib, m, t: m.init_device_mesh(
        "cpu", (1,), mesh_dim_names=("a", "b")),
    "a slice by an unknown name": lambda lib, m, t: m.init_device_mesh(
        "cpu", (1,), mesh_dim_names=("dp",))["zz"],
    "get_group of an unknown name": lambda lib, m, t: m.init_device_mesh(
        "cpu", (1,), mesh_dim_names=("dp",)).get_group("zz"),
    "Shard of a dim out of range": lambda lib, m, t: _d(lib, m, t, [t.Shard(2)]),
    "placements of another length": lambda lib, m, t: _d(lib, m, t, [t.Shard(0),
                                                                     t.Replicate()]),
    "redistribute to Partial from Shard": lambda lib, m, t: _d(
        lib, m, t, [t.Shard(0)]).redistribute(placements=[t.Partial()]),
    "redistribute to Partial from Replicate": lambda lib, m, t: _d(
        lib, m, t, [t.Replicate()]).redistribute(placements=[t.Partial()]),
    "redistribute without placements": lambda lib, m, t: _d(
        lib, m, t, [t.Shard(0)]).redistribute(),
    "distribute_tensor of a DTensor to other placements": lambda lib, m, t: t.distribute_tensor(
        _d(lib, m, t, [t.Shard(0)]), _d(lib, m, t, [t.Shard(0)]).device_mesh,
        [t.Replicate()]),
}


def _outcome(fn, *args):
    e = raised(fn, *args)
    return None if e is None else (type(e).__name__, e.args)


@pytest.mark.parametrize("name", list(CASES))
def test_mistakes_fail_as_pytorchs(libs, name):
    want = _outcome(CASES[name], *libs["torch"])
    got = _outcome(CASES[name], *libs["torchjax"])
    assert want is not None and got == want, (got, want)


def test_what_pytorch_allows_still_runs(libs):
    """distribute_tensor of a DTensor onto its own layout gives it back; redistribute from
    Partial to the same Partial is allowed; a mesh's coordinate is a tuple, its repr
    PyTorch's."""
    for name in ("torch", "torchjax"):
        lib, m, t = libs[name]
        d = _d(lib, m, t, [t.Shard(0)])
        assert t.distribute_tensor(d, d.device_mesh, [t.Shard(0)]) is d
        p = t.DTensor.from_local(lib.ones(2), d.device_mesh, [t.Partial()])
        assert p.redistribute(placements=[t.Partial()]).placements == (t.Partial(),)
        assert d.device_mesh.get_coordinate() == (0,) and d.device_mesh.get_rank() == 0
        assert repr(d.device_mesh) == "DeviceMesh((dp=1), 'cpu', stride=((),))"


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 4))


def _parallel(lib, plan):
    tp = (__import__("torch.distributed.tensor.parallel", fromlist=["x"]) if lib is torch
          else __import__("torchjax.distributed.tensor.parallel", fromlist=["x"]))
    mesh = (tj_mesh if lib is torchjax else __import__(
        "torch.distributed.device_mesh", fromlist=["x"])).init_device_mesh("cpu", (1,))
    return tp.parallelize_module(_mlp(lib), mesh, plan(tp))


PLANS = {
    "a key nothing matches": lambda tp: {"9": tp.ColwiseParallel(), "0": tp.ColwiseParallel()},
    "a deeper key nothing matches": lambda tp: {"*.weight": tp.ColwiseParallel()},
    "no plan": lambda tp: None,
    "a plan of another type": lambda tp: 3,
    "ColwiseParallel of a ReLU": lambda tp: {"1": tp.ColwiseParallel()},
    "RowwiseParallel of a ReLU": lambda tp: {"1": tp.RowwiseParallel()},
}


@pytest.mark.parametrize("name", list(PLANS))
def test_tensor_parallel_plans_as_pytorchs(libs, name):
    """What parallelize_module warns or raises, word for word (a key that matches nothing
    warns, naming the module as printed, and is skipped), and which weights it laid out."""
    def outcome(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                m = _parallel(lib, PLANS[name])
                laid = [type(p).__name__ != "Parameter" for p in m.parameters()]
            except Exception as e:  # noqa: BLE001
                laid = (type(e).__name__, str(e))
        return laid, [str(w.message) for w in seen if "parallel" in str(w.message).lower()]
    assert outcome(torchjax) == outcome(torch)


WRAPPERS = {
    "DDP of a module with nothing to train": lambda lib, fs, mesh, ddp: ddp(
        lib.nn.Linear(2, 2).requires_grad_(False)),
    "fully_shard twice": lambda lib, fs, mesh, ddp: fs(fs(lib.nn.Linear(2, 2))),
    "fully_shard on a 3-d mesh": lambda lib, fs, mesh, ddp: fs(
        lib.nn.Linear(2, 2), mesh=mesh.init_device_mesh("cpu", (1, 1, 1))),
}


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_wrapper_mistakes_as_pytorchs(libs, name):
    import torch.distributed.device_mesh as pt_mesh
    from torch.distributed.fsdp import fully_shard as pt_fs
    from torch.nn.parallel import DistributedDataParallel as PtDDP

    from torchjax.distributed.fsdp import fully_shard as tj_fs
    from torchjax.nn.parallel import DistributedDataParallel as TjDDP
    want = _outcome(WRAPPERS[name], torch, pt_fs, pt_mesh, PtDDP)
    got = _outcome(WRAPPERS[name], torchjax, tj_fs, tj_mesh, TjDDP)
    assert want is not None and got == want, (got, want)


def _printed(lib, m, t):
    from torch.distributed.fsdp import fully_shard as pt_fs

    from torchjax.distributed.fsdp import fully_shard as tj_fs
    mesh = m.init_device_mesh("cpu", (1,))
    leaf = t.distribute_tensor(lib.ones(2, requires_grad=True), mesh, [t.Replicate()])
    lin = lib.nn.Linear(2, 1)
    with lib.no_grad():
        lin.weight.fill_(1.0)
    (pt_fs if lib is torch else tj_fs)(lin, mesh=mesh)
    shown = {"leaf": leaf, "op": leaf * 2, "sum, 0-d": (leaf * 2).sum(),
             "detach": (leaf * 2).detach(), "parameter": lin.weight,
             "from_local": t.DTensor.from_local(lib.ones(2, requires_grad=True), mesh,
                                                [t.Shard(0)]),
             "named": t.distribute_tensor(lib.arange(6.0).reshape(2, 3), m.init_device_mesh(
                 "cpu", (1,), mesh_dim_names=("dp",)), [t.Shard(1)])}
    return {k: repr(v) for k, v in shown.items()}


def test_dtensors_print_as_pytorchs(libs):
    """repr of DTensors: the local tensor without history (requiring grad where PyTorch's
    does: a leaf's, from_local's input; not a Parameter's), a 0-d one as its value, the mesh
    and placements as PyTorch 2.13 prints them."""
    assert _printed(*libs["torchjax"]) == _printed(*libs["torch"])
