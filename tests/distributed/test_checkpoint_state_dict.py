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
from torchjax.distributed.fsdp import fully_shard as tj_fully_shard


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
    tj_fully_shard(mine, mesh=tj_mesh("cpu", (1,)))
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
    with pytest.raises(NotImplementedError, match="broadcast_from_rank0"):
        tj_sd.get_model_state_dict(model, options=tj_sd.StateDictOptions(
            broadcast_from_rank0=True))
    with pytest.raises(NotImplementedError, match="submodules"):
        tj_sd.get_model_state_dict(model, submodules={model})


# -- the optimizer's side ----------------------------------------------------------------------


def _optimizers(ref, mine, kind):
    if kind == "adam":
        return (torch.optim.Adam(ref.parameters(), lr=0.1),
                torchjax.optim.Adam(mine.parameters(), lr=0.1))
    return (torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9),
            torchjax.optim.SGD(mine.parameters(), lr=0.1, momentum=0.9))


def _step(model, opt, lib, k=0):
    x = lib.tensor(np.arange(8.0, dtype=np.float32).reshape(2, 4) / 7 + k)
    opt.zero_grad()
    model(x).square().sum().backward()
    opt.step()


def _osd_summary(osd, lib):
    """The structure of an optimizer state dict: keys, each value's kind and shape."""
    dtensor = (torch.distributed.tensor.DTensor if lib is torch
               else torchjax.distributed.tensor.DTensor)

    def kind(v):
        if isinstance(v, dtensor):
            return ("DTensor", tuple(map(repr, v.placements)), tuple(v.shape), str(v.dtype)[-7:])
        if isinstance(v, lib.Tensor):
            return ("Tensor", tuple(v.shape), str(v.dtype)[-7:])
        return v
    if "state" not in osd:
        return {k: kind(v) for k, v in osd.items()}
    return {"state": {f: {k: kind(v) for k, v in st.items()} for f, st in osd["state"].items()},
            "param_groups": [{k: kind(v) for k, v in g.items()} for g in osd["param_groups"]]}


def _osd_values(osd):
    flat = osd if "state" not in osd else {
        f"{f}.{k}": v for f, st in osd["state"].items() for k, v in st.items()}
    out = {}
    for k, v in flat.items():
        if hasattr(v, "detach"):
            v = v.detach()
            out[k] = (v.full_tensor() if hasattr(v, "full_tensor") else v).numpy()
    return out


@pytest.mark.parametrize("kind", ["adam", "sgd"])
@pytest.mark.parametrize("fields", [{}, {"full_state_dict": True},
                                    {"full_state_dict": True, "cpu_offload": True},
                                    {"flatten_optimizer_state_dict": True}])
def test_get_optimizer_state_dict_matches_pytorch(pt, kind, fields):
    """FQN keys, the parameters' layouts (DTensors, or full tensors), values, before any step
    (PyTorch's first step with zero gradients and lr 0) and after two."""
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    ref, mine = _models(pt)
    ref_opt, my_opt = _optimizers(ref, mine, kind)
    for steps in (0, 2):
        for k in range(steps):
            _step(ref, ref_opt, torch, k)
            _step(mine, my_opt, torchjax, k)
        want = pt_sd.get_optimizer_state_dict(ref, ref_opt,
                                              options=pt_sd.StateDictOptions(**fields))
        got = tj_sd.get_optimizer_state_dict(mine, my_opt,
                                             options=tj_sd.StateDictOptions(**fields))
        assert _osd_summary(got, torchjax) == _osd_summary(want, torch), steps
        for k, v in _osd_values(want).items():
            np.testing.assert_allclose(_osd_values(got)[k], v, rtol=1e-6, atol=1e-7)


# (full and flat together: PyTorch 2.13's own set_state_dict raises a KeyError)
@pytest.mark.parametrize("full,flat", [(False, False), (True, False), (False, True)])
def test_set_state_dict_resumes_training_as_pytorch(pt, full, flat):
    """get_state_dict after two Adam steps, loaded with set_state_dict into a fresh model and
    optimizer (sharded, full or flat form): the next two steps give PyTorch's parameters."""
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    fields = {"full_state_dict": full, "flatten_optimizer_state_dict": flat}
    ref, mine = _models(pt)
    ref_opt, my_opt = _optimizers(ref, mine, "adam")
    for k in range(2):
        _step(ref, ref_opt, torch, k)
        _step(mine, my_opt, torchjax, k)
    want_sd = pt_sd.get_state_dict(ref, ref_opt, options=pt_sd.StateDictOptions(**fields))
    got_sd = tj_sd.get_state_dict(mine, my_opt, options=tj_sd.StateDictOptions(**fields))
    ref2, mine2 = _models(pt)
    ref2_opt, my2_opt = _optimizers(ref2, mine2, "adam")
    pt_sd.set_state_dict(ref2, ref2_opt, model_state_dict=want_sd[0], optim_state_dict=want_sd[1],
                         options=pt_sd.StateDictOptions(**fields))
    keys = tj_sd.set_state_dict(mine2, my2_opt, model_state_dict=got_sd[0],
                                optim_state_dict=got_sd[1],
                                options=tj_sd.StateDictOptions(**fields))
    assert (list(keys.missing_keys), list(keys.unexpected_keys)) == ([], [])
    for p in mine2.parameters():  # state kept on the parameters' sharding
        for v in my2_opt.state[p].values():
            if v.ndim:
                assert v._data.sharding.is_equivalent_to(p._data.sharding, v.ndim)
    for k in range(2, 4):
        _step(ref2, ref2_opt, torch, k)
        _step(mine2, my2_opt, torchjax, k)
    for p, q in zip(mine2.parameters(), ref2.parameters()):
        np.testing.assert_allclose(p.detach().full_tensor().numpy(),
                                   q.detach().full_tensor().numpy(), rtol=1e-5, atol=1e-6)
    assert my2_opt.state_dict()["param_groups"][0]["lr"] == 0.1


def test_set_optimizer_state_dict_strict_and_errors_as_pytorch(pt):
    from torch.distributed.checkpoint import state_dict as pt_sd

    from torchjax.distributed.checkpoint import state_dict as tj_sd
    ref, mine = _models(pt)
    ref_opt, my_opt = _optimizers(ref, mine, "adam")
    want = pt_sd.get_optimizer_state_dict(ref, ref_opt)
    got = tj_sd.get_optimizer_state_dict(mine, my_opt)
    del want["state"]["0.bias"], got["state"]["0.bias"]
    with pytest.raises(RuntimeError, match="Missing optimizer state for parameter '0.bias'") as e:
        tj_sd.set_optimizer_state_dict(mine, my_opt, got)
    with pytest.raises(RuntimeError) as pe:
        pt_sd.set_optimizer_state_dict(ref, ref_opt, want)
    assert str(e.value) == str(pe.value)
    # non-strict loads the rest
    tj_sd.set_optimizer_state_dict(mine, my_opt, got,
                                   options=tj_sd.StateDictOptions(strict=False))
    with pytest.raises(RuntimeError, match="optim state_dict is empty"):
        tj_sd.set_optimizer_state_dict(mine, my_opt, {})
    with pytest.raises(RuntimeError, match="Optimizers are not passed in"):
        tj_sd.get_optimizer_state_dict(mine, [])
