"""Checkpoints of sharded state on 8 virtual CPU devices (run by test_checkpoint.py):
torch.save / torch.load of DTensors on meshes of several dimensions, and
torch.distributed.checkpoint (dcp) save / load with resharding."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)
from tests.distributed import _common
from tests.distributed._common import close, train_step

import copy
import functools
import io
import os
import tempfile
import warnings

import numpy as np

import torchjax as torch
from torchjax import nn
import torchjax.distributed.checkpoint as dcp
from torchjax.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torchjax.distributed.device_mesh import init_device_mesh
from torchjax.distributed.fsdp import fully_shard
from torchjax.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

warnings.filterwarnings("ignore", "torch.distributed is disabled")
warnings.filterwarnings("ignore", r"Shard\(0\) of a tensor of shape \(10,\)")  # (uneven: meant)


def net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 8))


batches = functools.partial(_common.batches, 16, 8)


def sharded(model, mesh=None):
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


def trained(model, steps=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = train_step(model, opt)
    for x, y in batches(steps):
        step(x, y)
    return opt


def full(t):
    t = t.detach()
    return (t.full_tensor() if isinstance(t, DTensor) else t).numpy()


def round_trip(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return torch.load(io.BytesIO(buf.getvalue()))


@check
def dtensors_keep_mesh_and_placements_through_save_and_load():
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    x = torch.arange(64.0).reshape(8, 8)
    cases = {
        "rows": distribute_tensor(x, mesh, [Shard(0), Replicate()]),
        "both": distribute_tensor(x, mesh, [Shard(0), Shard(1)]),
        "same_dim": distribute_tensor(x, mesh, [Shard(1), Shard(1)]),
        "sub": distribute_tensor(x, mesh["tp"], [Shard(1)]),
        "partial": DTensor.from_local(x, mesh["dp"], [Partial()]),
        "uneven": distribute_tensor(torch.arange(10.0), mesh["tp"], [Shard(0)]),
        "bf16": distribute_tensor(x.bfloat16(), mesh, [Replicate(), Shard(0)]),
        "f64": distribute_tensor(x.double(), mesh, [Shard(1), Replicate()]),
        "i64": distribute_tensor(x.long(), mesh, [Shard(0), Shard(1)]),
    }
    got = round_trip(cases)
    for k, want in cases.items():
        d = got[k]
        assert isinstance(d, DTensor), k
        assert d.placements == want.placements and d.device_mesh == want.device_mesh, k
        assert d.dtype == want.dtype and not d.requires_grad, k
        assert d._data.sharding.is_equivalent_to(want._data.sharding, d.ndim), k
        np.testing.assert_array_equal(full(d).astype(np.float64), full(want).astype(np.float64))
    assert got["rows"].device_mesh is got["both"].device_mesh  # one mesh per file
    # a fully_shard model's parameters saved whole are DTensor parameters again
    model = sharded(net())
    params = round_trip(dict(model.named_parameters()))
    for k, p in model.named_parameters():
        assert isinstance(params[k], nn.Parameter) and isinstance(params[k], DTensor), k
        assert params[k].placements == p.placements and params[k].requires_grad
        np.testing.assert_array_equal(full(params[k]), full(p))


@check
def pytorch_reads_a_dtensor_file_of_a_two_dimensional_mesh():
    """PyTorch (a fake 8-rank world in this process) reads torchjax's DTensor file of a (2, 4)
    mesh weights-only: its DeviceMesh of the same shape, names and ranks, the placements and
    the global shape. (Its local tensor is this process's block: all of it, where a PyTorch
    rank holds its own shard.)"""
    import importlib

    import torch.distributed as pt_dist
    from torch.testing._internal.distributed.fake_pg import FakeStore
    pt = importlib.import_module("torch")  # (an `import torch` would hide torchjax here)
    importlib.import_module("torch.distributed.tensor")  # allowlists DTensor, as PyTorch asks
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    d = distribute_tensor(torch.arange(32.0).reshape(8, 4), mesh, [Shard(0), Replicate()])
    buf = io.BytesIO()
    torch.save({"d": d, "sub": distribute_tensor(torch.ones(4, 8), mesh["tp"], [Shard(1)])}, buf)
    pt_dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = pt.load(io.BytesIO(buf.getvalue()), weights_only=True)
        g = got["d"]
        assert type(g).__name__ == "DTensor" and tuple(g.shape) == (8, 4)
        assert [repr(p) for p in g.placements] == ["Shard(dim=0)", "Replicate()"]
        assert g.device_mesh.mesh.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert g.device_mesh.mesh_dim_names == ("dp", "tp")
        sub = got["sub"].device_mesh
        assert sub.mesh_dim_names == ("tp",) and sub.mesh.tolist() == [0, 1, 2, 3]
        assert [repr(p) for p in got["sub"].placements] == ["Shard(dim=1)"]
    finally:
        pt_dist.destroy_process_group()


@check
def dcp_saves_each_piece_once_and_reshards_on_load():
    """An FSDP model and its Adam state after 2 steps, dcp.save'd from 8 devices, loaded into
    an HSDP model on a (2, 4) mesh and into a model on one device: the same values on the
    targets' layouts; training on matches the model that was saved."""
    model = sharded(net())
    opt = trained(model)
    msd, osd = get_state_dict(model, opt)
    path = tempfile.mkdtemp()
    md = dcp.save({"model": msd, "optim": osd, "epoch": 7}, checkpoint_id=path)
    assert sorted(os.listdir(path)) == [".metadata.json", "__0_0.safetensors"]
    w = md.state_dict_metadata["model.0.weight"]
    assert tuple(w.size) == (64, 16) and len(w.chunks) == 8  # each device's rows, once
    assert len(md.state_dict_metadata["optim.state.0.weight.step"].chunks) == 1
    assert type(md.state_dict_metadata["epoch"]).__name__ == "BytesStorageMetadata"
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("replicate", "shard"))
    other = sharded(copy.deepcopy(net()), mesh=mesh)
    other_opt = torch.optim.Adam(other.parameters(), lr=1e-2)
    m2, o2 = get_state_dict(other, other_opt)
    sd = {"model": m2, "optim": o2, "epoch": 0}
    dcp.load(sd, checkpoint_id=path)
    assert sd["epoch"] == 7 and sd["model"] is m2
    set_state_dict(other, other_opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    for (k, p), q in zip(other.named_parameters(), model.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
        assert tuple(p._data.sharding.spec) == ("shard",), k  # HSDP: over "shard"
        for key, v in other_opt.state[p].items():
            np.testing.assert_array_equal(np.asarray(v._data), np.asarray(opt.state[q][key]._data))
            if v.ndim:
                assert v._data.sharding.is_equivalent_to(p._data.sharding, v.ndim), (k, key)
    # in place: a state_dict()'s DTensors are the parameters' aliases, so dcp.load alone
    # updates the model (as PyTorch's, whose state_dict shares the parameters' storage)
    alone = sharded(copy.deepcopy(net()))
    with torch.no_grad():
        for p in alone.parameters():
            p.zero_()
    dcp.load({"model": alone.state_dict()}, checkpoint_id=path)
    for p, q in zip(alone.parameters(), model.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
    # onto one device, a plain model
    plain = net()
    dcp.load({"model": plain.state_dict()}, checkpoint_id=path)
    for p, q in zip(plain.parameters(), model.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
        assert len(p._data.sharding.device_set) == 1
    # training on: the reloaded HSDP model and optimizer follow the saved ones
    step, other_step = train_step(model, opt), train_step(other, other_opt)
    for x, y in batches(4)[2:]:
        close(step(x, y), other_step(x, y))
    for p, q in zip(other.parameters(), model.parameters()):
        close(p.full_tensor(), q.full_tensor())


@check
def dcp_loads_a_checkpoint_of_one_device_onto_eight():
    plain = net()
    opt = trained(plain)
    path = tempfile.mkdtemp()
    msd, osd = get_state_dict(plain, opt)
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=path)
    model = sharded(copy.deepcopy(net()))
    model_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    m2, o2 = get_state_dict(model, model_opt)  # (its state made by a step of lr 0)
    sd = {"model": m2, "optim": o2}
    dcp.load(sd, checkpoint_id=path)
    set_state_dict(model, model_opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    for p, q in zip(model.parameters(), plain.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
        assert isinstance(p, DTensor) and tuple(p._data.sharding.spec) == ("dim_0",)
        for key, v in model_opt.state[p].items():
            np.testing.assert_array_equal(np.asarray(v._data), np.asarray(opt.state[q][key]._data))


@check
def pytorchs_dcp_directory_of_a_sharded_model_both_ways():
    """An FSDP model and its Adam state in PyTorch's layout (FileSystemWriter's TORCH_SAVE:
    8 chunks of each weight in __0_0.distcp): PyTorch's dcp.load (one process, no process
    group) puts them together into its plain model and Adam; PyTorch's directory of that
    model loads onto a fresh FSDP model on 8 devices, which trains on as the saved one."""
    import importlib

    from torchjax.distributed.checkpoint.filesystem import FileSystemWriter, SerializationFormat
    pt = importlib.import_module("torch")  # (an `import torch` would hide torchjax here)
    pt_dcp = importlib.import_module("torch.distributed.checkpoint")
    pt_sd = importlib.import_module("torch.distributed.checkpoint.state_dict")
    model = sharded(net())
    opt = trained(model)
    msd, osd = get_state_dict(model, opt)
    path = tempfile.mkdtemp()
    md = dcp.save({"model": msd, "optim": osd}, storage_writer=FileSystemWriter(
        path, serialization_format=SerializationFormat.TORCH_SAVE))
    assert sorted(os.listdir(path)) == [".metadata", "__0_0.distcp"]
    assert len(md.state_dict_metadata["model.0.weight"].chunks) == 8
    pt_net = pt.nn.Sequential(pt.nn.Linear(16, 64), pt.nn.ReLU(), pt.nn.Linear(64, 8))
    pt_opt = pt.optim.Adam(pt_net.parameters(), lr=1e-2)
    m, o = pt_sd.get_state_dict(pt_net, pt_opt)
    sd = {"model": m, "optim": o}
    pt_dcp.load(sd, checkpoint_id=path)
    pt_sd.set_state_dict(pt_net, pt_opt, model_state_dict=sd["model"],
                         optim_state_dict=sd["optim"])
    for (k, p), q in zip(model.named_parameters(), pt_net.parameters()):
        np.testing.assert_array_equal(full(p), q.detach().numpy(), err_msg=k)
        for key, v in opt.state[p].items():
            np.testing.assert_array_equal(np.asarray(v._data), pt_opt.state[q][key].numpy())
    # torchjax reads its own .distcp chunks too: onto one device, and onto HSDP's layout
    plain = net()
    dcp.load({"model": plain.state_dict()}, checkpoint_id=path)
    hsdp = sharded(copy.deepcopy(net()), mesh=init_device_mesh("cpu", (2, 4),
                                                               mesh_dim_names=("r", "s")))
    dcp.load({"model": hsdp.state_dict()}, checkpoint_id=path)
    for p, h, q in zip(plain.parameters(), hsdp.parameters(), model.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
        np.testing.assert_array_equal(full(h), full(q))
    back = tempfile.mkdtemp()
    m, o = pt_sd.get_state_dict(pt_net, pt_opt)
    pt_dcp.save({"model": m, "optim": o}, checkpoint_id=back)
    other = sharded(copy.deepcopy(net()))
    other_opt = torch.optim.Adam(other.parameters(), lr=1e-2)
    m2, o2 = get_state_dict(other, other_opt)
    sd = {"model": m2, "optim": o2}
    dcp.load(sd, checkpoint_id=back)
    set_state_dict(other, other_opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    for p, q in zip(other.parameters(), model.parameters()):
        np.testing.assert_array_equal(full(p), full(q))
        assert isinstance(p, DTensor) and len(p._data.sharding.device_set) == 8
        for key, v in other_opt.state[p].items():
            np.testing.assert_array_equal(np.asarray(v._data), np.asarray(opt.state[q][key]._data))
    step, other_step = train_step(model, opt), train_step(other, other_opt)
    for x, y in batches(4)[2:]:
        close(step(x, y), other_step(x, y))


@check
def map_location_moves_a_gpu_jobs_dtensors_onto_this_jobs_devices():
    """A GPU job's file of DTensors on a (2, 4) "cuda" mesh and its sub-mesh, loaded with
    map_location="cpu": the same placements and values on a CPU mesh of the same shape,
    names and device ids, laid out over its 8 devices."""
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("gdp", "gtp"))
    mesh.device_type = "cuda"  # (what the file says of the mesh; read by the saver only)
    x = torch.arange(64.0).reshape(8, 8)
    saved = {"both": distribute_tensor(x, mesh, [Shard(0), Shard(1)]),
             "sub": distribute_tensor(x, mesh["gtp"], [Shard(1)])}
    buf = io.BytesIO()
    torch.save(saved, buf)
    raw = _common.as_saved_on_cuda(buf.getvalue())
    try:
        torch.load(io.BytesIO(raw))
        raise AssertionError("a CUDA storage loaded on a CPU-only machine")
    except RuntimeError as e:
        assert "Attempting to deserialize object on a CUDA device" in str(e)
    got = torch.load(io.BytesIO(raw), map_location="cpu")
    want_mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("gdp", "gtp"))
    for k, want in saved.items():
        d = got[k]
        assert isinstance(d, DTensor) and d.placements == want.placements, k
        assert d.device_mesh.device_type == "cpu" and d.device.type == "cpu", k
        assert d._data.sharding.is_equivalent_to(want._data.sharding, d.ndim), k
        assert len(d._data.sharding.device_set) == 8, k
        np.testing.assert_array_equal(full(d), x.numpy())
    assert got["both"].device_mesh == want_mesh
    assert got["sub"].device_mesh == want_mesh["gtp"]


if __name__ == "__main__":
    run()
