"""Checkpoints of a model sharded over 2 processes on 127.0.0.1 (mp_checkpoint_script.py,
through torchjax's launcher): torch.distributed.checkpoint writes each process's rows into its
own file and loads them into a fresh model and optimizer that then train as the saved ones;
the same checkpoint loads into one process of 8 devices and one of a single device;
torch.save / torch.load per rank give DTensors of the layout back."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.distributed._common import job_env
from tests.distributed.conftest import ROOT, rank_results

SCRIPT = "2 processes: mp_checkpoint_script.py"


@pytest.fixture(scope="module")
def ranks():
    got = rank_results(SCRIPT)
    yield got
    shutil.rmtree(got[0]["path"], ignore_errors=True)


def test_each_process_writes_its_own_rows(ranks):
    from safetensors import safe_open
    for res in ranks:
        assert res["files"] == [".metadata.json", "__0_0.safetensors", "__1_0.safetensors"]
        assert res["chunks"] == [[[0, 0], [4, 4]], [[4, 0], [4, 4]]]
    path = ranks[0]["path"]
    for r in range(2):
        with safe_open(os.path.join(path, f"__{r}_0.safetensors"), framework="numpy") as f:
            weights = [k for k in f.keys() if k.startswith("model.0.weight/")]
            assert [f.get_slice(k).get_shape() for k in weights] == [[4, 4]]
            got = f.get_tensor(weights[0])
        np.testing.assert_array_equal(got, np.array(ranks[0]["params"][0])[4 * r:4 * r + 4])


def test_loaded_model_and_optimizer_train_as_the_saved_ones(ranks):
    for res in ranks:
        assert res["loaded_epoch"] == 2
        assert res["loaded_params"] == res["params"]
        assert res["loaded_adam"] == res["adam"]  # this process's rows of the moments
        np.testing.assert_allclose(res["loaded_losses"], res["losses"], rtol=1e-6)
    assert ranks[0]["adam"] != ranks[1]["adam"]


def test_torch_save_per_rank_loads_dtensors(ranks):
    for res in ranks:
        for name, (kind, placements, rows) in res["torch_load"].items():
            assert kind == "DTensor" and placements == ["Shard(dim=0)"], name
            assert rows[0] * 2 in (4, 8), (name, rows)  # half of each parameter's rows
        assert res["torch_load_params"] == res["final_params"]


def test_ddp_replicated_parameters_round_trip(ranks):
    for res in ranks:
        fully, saved, loaded = res["ddp"]
        assert fully == [False, False]  # one array over both processes
        assert loaded == saved
    assert ranks[0]["ddp"][1] == ranks[1]["ddp"][1]


_ONE_PROCESS = """
import json, sys, warnings
sys.path.insert(0, {root!r})
from tests.distributed._common import eight_devices
if {eight}:
    eight_devices()
import numpy as np
import torchjax as torch
import torchjax.distributed.checkpoint as dcp
from torchjax import nn
from torchjax.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torchjax.distributed.fsdp import fully_shard
warnings.simplefilter("ignore")
torch.manual_seed(5)
m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
if {eight}:
    fully_shard(m)
opt = torch.optim.Adam(m.parameters(), lr=0.1)
msd, osd = get_state_dict(m, opt)
sd = {{"model": msd, "optim": osd, "epoch": 0}}
dcp.load(sd, checkpoint_id={path!r})
set_state_dict(m, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
full = lambda t: (t.full_tensor() if hasattr(t, "full_tensor") else t).detach().numpy()
print("RESULT " + json.dumps({{
    "params": [full(p).tolist() for p in m.parameters()],
    "adam": [full(opt.state[p]["exp_avg"]).tolist() for p in m.parameters()],
    "devices": [len(p._data.sharding.device_set) for p in m.parameters()]}}))
"""


@pytest.mark.parametrize("eight", [True, False])
def test_the_checkpoint_loads_in_one_process(ranks, eight):
    """Saved by 2 processes, loaded by one with 8 devices (each parameter over all 8) or one
    device: the same values, the two ranks' rows of the moments put together."""
    script = _ONE_PROCESS.format(root=ROOT, eight=eight, path=ranks[0]["path"])
    out = subprocess.run([sys.executable, "-c", script], env=job_env(), cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    [line] = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
    got = json.loads(line[7:])
    assert got["params"] == ranks[0]["params"]
    assert got["devices"] == [8 if eight else 1] * 4
    for p, (a, b) in enumerate(zip(ranks[0]["adam"], ranks[1]["adam"])):
        np.testing.assert_array_equal(np.array(got["adam"][p]), np.concatenate([a, b]))


def test_pytorch_reads_both_processes_files_in_its_layout(ranks):
    """FileSystemWriter(serialization_format=TORCH_SAVE): each process wrote its rows into its
    own .distcp file; PyTorch's dcp.load in one process puts them together."""
    import warnings

    import torch
    import torch.distributed.checkpoint as pt_dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    for res in ranks:
        assert res["pytorch_files"] == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    opt = torch.optim.Adam(net.parameters(), lr=0.1)
    m, o = get_state_dict(net, opt)
    sd = {"model": m, "optim": o, "epoch": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pt_dcp.load(sd, checkpoint_id=os.path.join(ranks[0]["path"], "pytorch"))
    set_state_dict(net, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    assert sd["epoch"] == 2
    assert [p.detach().numpy().tolist() for p in net.parameters()] == ranks[0]["params"]
    for i, p in enumerate(net.parameters()):
        rows = np.concatenate([np.asarray(ranks[r]["adam"][i]) for r in range(2)])
        np.testing.assert_array_equal(opt.state[p]["exp_avg"].numpy(), rows)
