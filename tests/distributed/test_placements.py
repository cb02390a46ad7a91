"""Placements, DTensor factories and the torch.distributed module paths against PyTorch 2.13,
in this process (one device: layouts are trivial here; tests/distributed/*_script.py check
them on 8)."""

import pytest
import torch
import torch.distributed.tensor as real

import torchjax
from torchjax.distributed import tensor as dt
from torchjax.distributed.device_mesh import init_device_mesh


@pytest.mark.parametrize("make", [lambda m: m.Shard(0), lambda m: m.Shard(2),
                                  lambda m: m.Replicate(), lambda m: m.Partial(),
                                  lambda m: m.Partial("avg"), lambda m: m.Partial("max")])
def test_placements_print_and_compare_as_pytorch(make):
    a, b = make(real), make(dt)
    assert repr(a) == repr(b) and str(a) == str(b)
    for q in ("is_shard", "is_replicate", "is_partial"):
        assert getattr(a, q)() == getattr(b, q)()
    assert b == make(dt) and hash(b) == hash(make(dt))
    assert a.is_shard(0) == b.is_shard(0)


def test_public_names_cover_pytorchs():
    import torchjax.distributed.fsdp as fsdp
    import torchjax.distributed.tensor.parallel as tp
    assert set(real.__all__) <= set(dt.__all__)
    assert {"ColwiseParallel", "RowwiseParallel", "SequenceParallel", "parallelize_module",
            "PrepareModuleInput", "PrepareModuleOutput", "ParallelStyle"} <= set(tp.__all__)
    assert {"fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy"} <= set(
        fsdp.__all__)


def test_factories_make_dtensors():
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    o = dt.ones(4, 2, device_mesh=mesh, placements=[dt.Shard(0)])
    assert isinstance(o, dt.DTensor) and o.placements == (dt.Shard(0),)
    assert torchjax.equal(o.full_tensor(), torchjax.ones(4, 2))
    f = dt.full((2, 3), 7.0, device_mesh=mesh, requires_grad=True)
    assert f.requires_grad and f.placements == (dt.Replicate(),) and f.sum().item() == 42
    assert dt.zeros((3,), device_mesh=mesh).shape == (3,)
    assert dt.randn(2, 2, device_mesh=mesh).dtype == torchjax.float32


def test_placement_errors():
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    with pytest.raises(ValueError, match="same length as `device_mesh.ndim`"):
        dt.distribute_tensor(torchjax.ones(2), mesh, [dt.Shard(0), dt.Replicate()])
    with pytest.raises(NotImplementedError, match="Partial\\('band'\\) is not supported"):
        dt.Partial("band")
    with pytest.raises(RuntimeError, match="without mesh_dim_names"):
        init_device_mesh("cpu", (1,))["dp"]
    with pytest.raises(RuntimeError, match="needs 2 cpu devices"):
        init_device_mesh("cpu", (2,))
    assert torch.distributed.is_available()
