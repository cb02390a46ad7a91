"""Two processes on 127.0.0.1 started by `python -m torchjax.distributed.run` (JAX's CPU
collectives across processes, through gloo): the collectives, DDP training and a
DistributedSampler epoch (mp_script.py), against their definitions and PyTorch."""

import json

import numpy as np
import pytest
import torch

import torchjax
import torchjax.nn.functional as F
from tests.distributed.conftest import output

SCRIPT = "2 processes: mp_script.py"


@pytest.fixture(scope="module")
def ranks():
    code, out, err = output(SCRIPT)
    assert code == 0, err[-3000:]
    got = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(got) == 2, (out, err[-3000:])
    return sorted(got, key=lambda r: r["rank"])


def test_launcher_sets_torchrun_variables(ranks):
    for r, res in enumerate(ranks):
        assert res["rank"] == res["env_rank"] == r and res["world"] == 2
        assert res["torch_is_torchjax"]


def test_collectives_match_their_definitions(ranks):
    xs = [np.array([1.0, 2.0]) * (r + 1) for r in range(2)]
    expect = {"all_reduce_SUM": xs[0] + xs[1], "all_reduce_AVG": (xs[0] + xs[1]) / 2,
              "all_reduce_PRODUCT": xs[0] * xs[1], "all_reduce_MIN": np.minimum(*xs),
              "all_reduce_MAX": np.maximum(*xs), "all_reduce_BAND": [6 & 7, 3 & 4],
              "all_gather": [xs[0], xs[1]], "all_gather_into_tensor": np.concatenate(xs),
              "broadcast": [1.0] * 3, "all_gather_object": [{"rank": 0}, {"rank": 1}]}
    total = np.arange(4.0) * 2 + 10
    for r, res in enumerate(ranks):
        for k, v in expect.items():
            assert np.array_equal(np.asarray(res[k]), np.asarray(v, dtype=object)
                                  if k == "all_gather_object" else np.asarray(v)), (k, res[k])
        assert res["reduce_scatter_tensor"] == total[2 * r:2 * r + 2].tolist()
        assert res["all_to_all_single"] == [r, 10.0 + r]


def test_ddp_across_processes_matches_one_process_with_the_global_batch(ranks):
    assert ranks[0]["ddp_params"] == ranks[1]["ddp_params"]
    torchjax.manual_seed(0)  # rank 0's initial weights, which DDP broadcast
    model = torchjax.nn.Linear(4, 3)
    opt = torchjax.optim.SGD(model.parameters(), lr=0.5)
    g = np.random.default_rng(0)
    losses = []
    for _ in range(3):
        x = torchjax.tensor(g.standard_normal((16, 4)).astype(np.float32))
        y = torchjax.tensor(g.integers(0, 3, 16))
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for got, want in zip(ranks[0]["ddp_params"], model.parameters()):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-6)
    # each rank's loss is its half's mean; their average is the global batch's loss
    np.testing.assert_allclose([(a + b) / 2 for a, b in zip(ranks[0]["ddp_losses"],
                                                            ranks[1]["ddp_losses"])],
                               losses, rtol=1e-5)


def test_distributed_sampler_epoch_matches_pytorch(ranks):
    ds = list(range(10))
    for r, res in enumerate(ranks):
        s = torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=r, seed=3)
        s.set_epoch(1)
        assert res["sampler"] == list(s)


def test_dtensor_across_processes(ranks):
    for r, res in enumerate(ranks):
        assert res["dtensor_shape"] == [2, 2]
        assert res["dtensor_local"] == [[float(r), 1.0]]
        assert res["dtensor_full"] == [[0.0, 1.0], [1.0, 1.0]]
        assert res["dtensor_sum"] == 6.0
