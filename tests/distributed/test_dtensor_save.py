"""torch.save / torch.load of DTensors against PyTorch's own (gloo, a world of one process, a
mesh of one CPU device): each library reads the other's file as a DTensor with the same
placements, mesh and values, weights-only; a fully_shard model's state_dict round-trips into
load_state_dict; PyTorch's refusal when torch.distributed.tensor is not imported. On 8
devices fsdp_script.py checks the round trip of a sharded model's state dict, and
checkpoint_script.py meshes of several dimensions."""

import io
import subprocess
import sys

import numpy as np
import pytest
import torch

import torchjax
from tests.distributed._common import job_env, pytorch_world_of_one
from torchjax.distributed.device_mesh import init_device_mesh as tj_mesh
from torchjax.distributed.fsdp import fully_shard as tj_fully_shard
from torchjax.distributed.tensor import DTensor as TjDTensor
from torchjax.distributed.tensor import Partial as TjPartial
from torchjax.distributed.tensor import Replicate as TjReplicate
from torchjax.distributed.tensor import Shard as TjShard
from torchjax.distributed.tensor import distribute_tensor as tj_distribute


@pytest.fixture(scope="module")
def pt():
    yield from pytorch_world_of_one()


X = np.arange(12.0, dtype=np.float32).reshape(4, 3)
CASES = [("Shard", 0), ("Shard", 1), ("Replicate", None)]


def _placement(lib, kind, dim):
    if lib is torch:
        from torch.distributed.tensor import Replicate, Shard
    else:
        Replicate, Shard = TjReplicate, TjShard
    return Shard(dim) if kind == "Shard" else Replicate()


def _summary(d):
    mesh = d.device_mesh
    return (type(d).__name__, tuple(map(repr, d.placements)), tuple(mesh.shape),
            mesh.mesh_dim_names, d.requires_grad, tuple(d.shape))


@pytest.mark.parametrize("kind,dim", CASES)
def test_pytorch_reads_torchjax_dtensors(pt, kind, dim):
    from torch.distributed.tensor import DTensor, distribute_tensor
    mesh = tj_mesh("cpu", (1,))
    mine = tj_distribute(torchjax.tensor(X), mesh, [_placement(torchjax, kind, dim)])
    buf = io.BytesIO()
    torchjax.save({"w": mine, "n": 3}, buf)
    got = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    want = distribute_tensor(torch.tensor(X), pt, [_placement(torch, kind, dim)])
    assert isinstance(got["w"], DTensor) and got["n"] == 3
    assert _summary(got["w"]) == _summary(want)
    np.testing.assert_array_equal(got["w"].full_tensor().numpy(), X)
    np.testing.assert_array_equal(got["w"].to_local().numpy(), want.to_local().numpy())


@pytest.mark.parametrize("kind,dim", CASES)
def test_torchjax_reads_pytorch_dtensors(pt, kind, dim):
    from torch.distributed.tensor import distribute_tensor
    want = distribute_tensor(torch.tensor(X), pt, [_placement(torch, kind, dim)])
    buf = io.BytesIO()
    torch.save({"w": want}, buf)
    got = torchjax.load(io.BytesIO(buf.getvalue()))["w"]
    assert isinstance(got, TjDTensor)
    assert _summary(got) == _summary(want)
    assert got.device_mesh == tj_mesh("cpu", (1,))
    np.testing.assert_array_equal(got.full_tensor().numpy(), X)
    # weights_only=False reads it the same
    again = torchjax.load(io.BytesIO(buf.getvalue()), weights_only=False)["w"]
    assert _summary(again) == _summary(want)


def test_named_mesh_requires_grad_and_partial_round_trip(pt):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial
    mesh = tj_mesh("cpu", (1,), mesh_dim_names=("dp",))
    mine = TjDTensor.from_local(torchjax.tensor(X), mesh, [TjPartial()])
    leaf = tj_distribute(torchjax.tensor(X, requires_grad=True), mesh, [TjShard(0)])
    buf = io.BytesIO()
    torchjax.save([mine, leaf], buf)
    got = torchjax.load(io.BytesIO(buf.getvalue()))
    pt_mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    want = DTensor.from_local(torch.tensor(X), pt_mesh, [Partial()])
    theirs = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    assert _summary(got[0]) == _summary(theirs[0]) == _summary(want)
    assert got[1].requires_grad and theirs[1].requires_grad and got[1].is_leaf
    assert got[0].device_mesh is got[1].device_mesh  # one mesh in the file, one when loaded
    np.testing.assert_array_equal(got[0].full_tensor().numpy(), X)
    np.testing.assert_array_equal(theirs[0].full_tensor().numpy(), X)


def test_fully_shard_state_dict_round_trips_as_pytorch(pt):
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    ref = torch.nn.Linear(4, 3)
    mine = torchjax.nn.Linear(4, 3)
    mine.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    fully_shard(ref, mesh=pt)
    tj_fully_shard(mine, mesh=tj_mesh("cpu", (1,)))
    buf, pbuf = io.BytesIO(), io.BytesIO()
    torchjax.save(mine.state_dict(), buf)
    torch.save(ref.state_dict(), pbuf)
    got = torchjax.load(io.BytesIO(buf.getvalue()))
    want = torch.load(io.BytesIO(pbuf.getvalue()))
    assert {k: _summary(v) for k, v in got.items()} == {k: _summary(v) for k, v in want.items()}
    other = torchjax.nn.Linear(4, 3)
    tj_fully_shard(other, mesh=tj_mesh("cpu", (1,)))
    other.load_state_dict(got)
    for k, p in other.named_parameters():
        assert isinstance(p, TjDTensor) and p.placements == (TjShard(0),), k
        np.testing.assert_array_equal(p.detach().full_tensor().numpy(),
                                      ref.state_dict()[k].full_tensor().numpy())


def test_without_the_distributed_package_imported_the_load_is_refused(tmp_path):
    mesh = tj_mesh("cpu", (1,))
    torchjax.save({"w": tj_distribute(torchjax.tensor(X), mesh, [TjShard(0)])},
                  tmp_path / "d.pt")
    script = (f"import pickle, torchjax\n"
              f"try:\n    torchjax.load({str(tmp_path / 'd.pt')!r})\n"
              f"except pickle.UnpicklingError as e:\n    print('REFUSED', e)\n"
              f"import torchjax.distributed.tensor\n"
              f"print(type(torchjax.load({str(tmp_path / 'd.pt')!r})['w']).__name__)\n")
    out = subprocess.run([sys.executable, "-c", script], env=job_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    # PyTorch's message, under torch.load's "Weights only load failed" as PyTorch's is
    refused, loaded = out.stdout.split("\nDTensor")[0], out.stdout.splitlines()[-1]
    assert refused.startswith("REFUSED Weights only load failed"), out.stdout
    assert "``torch.distributed.tensor`` must be imported to load DTensors" in refused
    assert loaded == "DTensor"


def test_a_mesh_this_job_lacks_is_named(pt):
    from torch.distributed.tensor import DTensor, Shard
    want = DTensor.from_local(torch.tensor(X), pt, [Shard(0)])
    buf = io.BytesIO()
    torch.save(want, buf)
    # the same file with the mesh's rank map pointing at a device this process lacks
    data = buf.getvalue()
    state = want._spec.mesh.__getstate__()
    assert state["_rank_map"].tolist() == [0]
    want._spec.mesh._rank_map = torch.tensor([5], dtype=torch.int32)
    buf = io.BytesIO()
    torch.save(want, buf)
    want._spec.mesh._rank_map = state["_rank_map"]
    with pytest.raises(RuntimeError, match=r"DeviceMesh of cpu devices \[5\]"):
        torchjax.load(io.BytesIO(buf.getvalue()))
    assert isinstance(torchjax.load(io.BytesIO(data)), TjDTensor)


def test_a_rank_file_of_another_job_layout_is_named(pt):
    """A rank's file of a 2-rank job (its local tensor half the rows) loaded by a job whose
    one process holds every row: refused, naming both shapes, not misread."""
    from torch.distributed.tensor import DTensor, Shard
    half = DTensor.from_local(torch.tensor(X[:2]), pt, [Shard(0)], shape=(4, 3), stride=(3, 1))
    buf = io.BytesIO()
    torch.save(half, buf)
    with pytest.raises(RuntimeError, match=r"local tensor has shape \(2, 3\).*\[\(0, 4\), "
                                           r"\(0, 3\)\]"):
        torchjax.load(io.BytesIO(buf.getvalue()))
