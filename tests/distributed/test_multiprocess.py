"""Two processes on 127.0.0.1 started by `python -m torchjax.distributed.run` (JAX's CPU
collectives across processes, through gloo): the collectives, DDP training (eager and
compiled as one SPMD program), SyncBatchNorm and a DistributedSampler epoch (mp_script.py),
against their definitions and PyTorch."""


import numpy as np
import pytest
import torch

import torchjax
import torchjax.nn.functional as F
from tests.distributed.conftest import rank_results

SCRIPT = "2 processes: mp_script.py"


@pytest.fixture(scope="module")
def ranks():
    return rank_results(SCRIPT)


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


def test_send_recv_between_the_processes(ranks):
    assert ranks[1]["send_recv"] == [5.0, 6.0, 7.0]
    for r, res in enumerate(ranks):
        assert res["exchange"] == [10.0 + (1 - r)] * 2  # the peer's, though both sent first
        assert res["p2p_errors"] == ["ValueError", "NotImplementedError"]  # self, any source


def test_compiled_steps_across_processes_are_one_program_matching_eager(ranks):
    """A compiled step is traced per rank and runs as one SPMD program over both processes:
    DDP (both schemes) trains exactly as eagerly, each rank seeing its own loss, with one
    program and no graph break; collectives run inside it."""
    for r, res in enumerate(ranks):
        for scheme in ("ddp", "ddp_replicas"):
            got, want = res[scheme + "_compiled"], res[scheme]
            np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-6)
            for a, b in zip(got["params"], want["params"]):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
            assert got["programs"] == [1, 3]  # one program, run by every step
        assert res["compiled_all_reduce"] == [2.0 * 1 + 2.0 * 2 + 1]
        gathered = [0.0, 1.0, 10.0, 11.0]
        assert res["compiled_shuffled"] == [gathered, [3 * v for v in gathered][2 * r:2 * r + 2],
                                            [r, 10.0 + r]]
        assert res["compiled_reduce"] == ([3.0] if r == 0 else [2.0])
        # only a forward whose backward runs outside the program breaks the graph, and says
        # why; it then runs eagerly
        assert len(res["graph_breaks"]) == 1, res["graph_breaks"]
        assert "backward runs outside it" in res["graph_breaks"][0]
    # DDP averaged the ranks' gradients as in the eager steps: the same on both ranks
    assert ranks[0]["compiled_forward_grad"] == ranks[1]["compiled_forward_grad"]
    torchjax.manual_seed(0)
    model = torchjax.nn.Linear(4, 3)
    g = np.random.default_rng(0)
    x = torchjax.tensor(g.standard_normal((16, 4)).astype(np.float32))
    F.cross_entropy(model(x), torchjax.tensor(g.integers(0, 3, 16))).backward()
    np.testing.assert_allclose(ranks[0]["compiled_forward_grad"], model.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    assert ranks[0]["local_only"] == 9.0


@pytest.mark.parametrize("scheme", ["ddp", "ddp_replicas"])
def test_ddp_across_processes_matches_one_process_with_the_global_batch(ranks, scheme):
    """The default (one mesh over both processes: its parameters are arrays on both
    processes' devices) and the replica-per-process scheme both train as one process with the
    global batch, each rank seeing its own outputs and loss."""
    got = [r[scheme] for r in ranks]
    assert got[0]["params"] == got[1]["params"]
    assert got[0]["pred_shape"] == [8, 3]  # this rank's rows only
    assert got[0]["devices"] == ([2, 2] if scheme == "ddp" else [1, 1])
    torchjax.manual_seed(0)  # rank 0's initial weights, which DDP broadcast
    model = torchjax.nn.Linear(4, 3)
    opt = torchjax.optim.SGD(model.parameters(), lr=0.5)
    g = np.random.default_rng(0)
    losses, halves = [], []
    for _ in range(3):
        x = torchjax.tensor(g.standard_normal((16, 4)).astype(np.float32))
        y = torchjax.tensor(g.integers(0, 3, 16))
        with torchjax.no_grad():
            halves.append([F.cross_entropy(model(x[r * 8:(r + 1) * 8]), y[r * 8:(r + 1) * 8])
                           .item() for r in range(2)])
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for got_p, want in zip(got[0]["params"], model.parameters()):
        np.testing.assert_allclose(got_p, want.detach().numpy(), rtol=1e-5, atol=1e-6)
    # each rank's loss is its own half's, as PyTorch's replicas report
    for r in range(2):
        np.testing.assert_allclose(got[r]["losses"], [h[r] for h in halves], rtol=1e-5)


def test_fully_shard_across_processes_matches_one_process(ranks):
    """Each process keeps half of each parameter's rows (and of Adam's moments); training
    matches one process with the global batch, each rank seeing its own loss."""
    got = [r["fsdp"] for r in ranks]
    assert got[0]["local_rows"] == [[4, 4], [4], [2, 8], [2]]
    assert got[0]["adam_local_rows"] == got[0]["local_rows"]
    assert got[0]["params"] == got[1]["params"]
    torchjax.manual_seed(0)
    nn = torchjax.nn
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    opt = torchjax.optim.Adam(mlp.parameters(), lr=0.1)
    g = np.random.default_rng(0)
    halves = []
    for _ in range(3):
        x = torchjax.tensor(g.standard_normal((16, 4)).astype(np.float32))
        y = torchjax.tensor(g.integers(0, 3, 16))
        with torchjax.no_grad():
            halves.append([F.cross_entropy(mlp(x[r * 8:(r + 1) * 8]), y[r * 8:(r + 1) * 8])
                           .item() for r in range(2)])
        opt.zero_grad()
        F.cross_entropy(mlp(x), y).backward()
        opt.step()
    for got_p, want in zip(got[0]["params"], mlp.parameters()):
        np.testing.assert_allclose(got_p, want.detach().numpy(), rtol=1e-4, atol=1e-5)
    for r in range(2):
        np.testing.assert_allclose(got[r]["losses"], [h[r] for h in halves], rtol=1e-5)


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


def test_sync_batchnorm_across_processes_matches_pytorch_on_the_global_batch(ranks):
    """Each rank's SyncBatchNorm output, input gradient (of every rank's loss, as PyTorch's
    SyncBatchNorm gives), weight gradient (of its own loss) and running statistics are
    PyTorch's BatchNorm's on the global batch; compiled per rank as eagerly."""
    g = np.random.default_rng(1)
    batches = [g.standard_normal((16, 3, 2)).astype(np.float32) for _ in range(2)]
    bn = torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    scale = torch.arange(3.0).reshape(1, 3, 1)
    for k, batch in enumerate(batches):
        x = torch.tensor(batch, requires_grad=True)
        y = bn(x)
        per_row = (y * y * scale).sum(dim=(1, 2))
        w_grads = [torch.autograd.grad(per_row[r * 8:(r + 1) * 8].sum(), bn.weight,
                                       retain_graph=True)[0] for r in range(2)]
        per_row.sum().backward()
        for r, res in enumerate(ranks):
            rows = slice(r * 8, (r + 1) * 8)
            for got in (res["sync_bn"], res["sync_bn_compiled"]):
                np.testing.assert_allclose(got["y"][k], y[rows].detach().numpy(), rtol=1e-4,
                                           atol=1e-5)
                np.testing.assert_allclose(got["w_grad"][k], w_grads[r].numpy(), rtol=1e-4,
                                           atol=1e-4)
            np.testing.assert_allclose(res["sync_bn"]["x_grad"][k], x.grad[rows].numpy(),
                                       rtol=1e-4, atol=1e-4)
    for res in ranks:
        for got in (res["sync_bn"], res["sync_bn_compiled"]):
            np.testing.assert_allclose(got["running"][0], bn.running_mean.numpy(), rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_allclose(got["running"][1], bn.running_var.numpy(), rtol=1e-5,
                                       atol=1e-6)
