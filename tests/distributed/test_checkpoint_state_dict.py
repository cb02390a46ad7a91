"""torch.distributed.checkpoint.state_dict's model helpers against PyTorch's own (gloo, a
world of one process, a mesh of one CPU device): get_model_state_dict sharded (DTensors) or
full (plain tensors), frozen parameters left out on request, a data-parallel wrapper looked
through, set_model_state_dict loading either form into a sharded model, strict's errors, and
what is not provided refused by name. On 8 devices fsdp_script.py checks the sharded
state_dict itself."""

import numpy as np
import pytest
import torch

import torchjax
from tests.distributed._common import pytorch_world_of_one
from torchjax.distributed.device_mesh import init_device_mesh as tj_mesh


@pytest.fixture(scope="module")
def pt():
    yield from pytorch_world_of_one()


def _models(pt, frozen=False):
    """The same 4-3-2 MLP in both libraries, fully_shard'ed on each one's mesh of one device."""
    from torch.distributed.fsdp import fully_shard
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    mine = torchjax.nn.Sequential(torchjax.nn.Linear(4, 3), torchjax.nn.ReLU(),
                                  torchjax.nn.Linear(3, 2))
    mine.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    if frozen:
        ref[0].bias.requires_grad_(False)
        mine[0].bias.requires_grad_(False)
    fully_shard(ref, mesh=pt)
    torchjax.distributed.fsdp.fully_shard(mine, mesh=tj_mesh("cpu", (1,)))
    return ref, mine


def _kinds(sd, lib):
    dtensor = (torch.distributed.tensor.DTensor if lib is torch
               else torchjax.distributed.tensor.DTensor)
    return {k: (isinstance(v, dtensor), v.requires_grad, tuple(v.shape)) for k, v in sd.items()}


def _values(sd):
    out = {}
    for k, v in sd.items():
        v = v.detach()
        out[k] = (v.full_tensor() if hasattr(v, "full_tensor") else v).numpy()
    return out


@pytest.mark.parametrize("fields", [{}, {"full_state_dict": True},
                                    {"full_state_dict": True, "cpu_offload": True},
                                    {"ignore_frozen_params": True}])
def test_get_model_state_dict_matches_pytorch(pt, fields):
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    ref, mine = _models(pt, frozen=True)
    want = pt_sd.get_model_state_dict(ref, options=pt_sd.StateDictOptions(**fields))
    got = tj_sd.get_model_state_dict(mine, options=tj_sd.StateDictOptions(**fields))
    assert list(got) == list(want)
    assert _kinds(got, torchjax) == _kinds(want, torch)
    for k, v in _values(want).items():
        np.testing.assert_array_equal(_values(got)[k], v)


def test_set_model_state_dict_loads_either_form_as_pytorch(pt):
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    for full in (True, False):
        ref, mine = _models(pt)
        pt_opts, tj_opts = (pt_sd.StateDictOptions(full_state_dict=full),
                            tj_sd.StateDictOptions(full_state_dict=full))
        want_sd = {k: v * 2 for k, v in pt_sd.get_model_state_dict(ref, options=pt_opts).items()}
        got_sd = {k: v * 2 for k, v in tj_sd.get_model_state_dict(mine, options=tj_opts).items()}
        want = pt_sd.set_model_state_dict(ref, want_sd, options=pt_opts)
        got = tj_sd.set_model_state_dict(mine, got_sd, options=tj_opts)
        assert (list(got.missing_keys), list(got.unexpected_keys)) == ([], [])
        assert (list(want.missing_keys), list(want.unexpected_keys)) == ([], [])
        for (k, p), q in zip(mine.named_parameters(), ref.parameters()):
            assert isinstance(p, torchjax.distributed.tensor.DTensor), k  # still sharded
            np.testing.assert_array_equal(p.detach().full_tensor().numpy(),
                                          q.detach().full_tensor().numpy())
    # strict, as PyTorch's: a missing key is an error, non-strict reports it
    ref, mine = _models(pt)
    part = {"0.weight": tj_sd.get_model_state_dict(mine)["0.weight"]}
    with pytest.raises(RuntimeError, match="Missing key"):
        tj_sd.set_model_state_dict(mine, part)
    got = tj_sd.set_model_state_dict(mine, part, options=tj_sd.StateDictOptions(strict=False))
    want = pt_sd.set_model_state_dict(
        ref, {"0.weight": pt_sd.get_model_state_dict(ref)["0.weight"]},
        options=pt_sd.StateDictOptions(strict=False))
    assert list(got.missing_keys) == list(want.missing_keys)


def test_a_data_parallel_wrapper_is_looked_through(pt):
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    want = pt_sd.get_model_state_dict(torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(2, 2)))
    got = tj_sd.get_model_state_dict(torchjax.nn.parallel.DistributedDataParallel(
        torchjax.nn.Linear(2, 2)))
    assert list(got) == list(want) == ["weight", "bias"]


def test_what_is_not_provided_is_refused_by_name():
    from torchjax.distributed.checkpoint import state_dict as tj_sd
    model = torchjax.nn.Linear(2, 2)
    opt = torchjax.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(NotImplementedError, match="get_optimizer_state_dict"):
        tj_sd.get_optimizer_state_dict(model, opt)
    with pytest.raises(NotImplementedError, match="broadcast_from_rank0"):
        tj_sd.get_model_state_dict(model, options=tj_sd.StateDictOptions(
            broadcast_from_rank0=True))
    with pytest.raises(NotImplementedError, match="submodules"):
        tj_sd.get_model_state_dict(model, submodules={model})
