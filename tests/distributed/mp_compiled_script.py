"""Compiled steps across 2 processes (each one SPMD program) against the same steps run
eagerly: every collective, a fully_shard model and a tensor-parallel MLP training (checked
by test_mp_compiled.py). mp_script.py imports it in its job, once its own checks are done,
and reports `out` as its "compiled" entry: one 2-process job for both (a job's start and its
first compiles cost more than these checks). Run alone through
`python -m torchjax.distributed.run --nproc-per-node 2`, each process prints its results as
one JSON line."""

import faulthandler
import json
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import numpy as np
import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

from tests.distributed._common import train_step

if not dist.is_initialized():
    dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank}
R = dist.ReduceOp


def collectives(t):
    """Every rank-dependent collective; the results are fresh tensors each call."""
    red = t.clone()
    dist.reduce(red, dst=1, op=R.MAX)
    gathered = [torch.zeros(2) for _ in range(world)] if rank == 0 else None
    dist.gather(t * 2, gathered, dst=0)
    scattered = torch.zeros(2)
    dist.scatter(scattered, [t + 10 * r for r in range(world)] if rank == 1 else None, src=1)
    rs = torch.zeros(2)
    dist.reduce_scatter(rs, [t * (r + 1) for r in range(world)])
    a2a = [torch.zeros(2) for _ in range(world)]
    dist.all_to_all(a2a, [t + 100 * r for r in range(world)])
    return [red, rs, scattered] + a2a + (gathered or [])


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = torch.tensor([1.0, 2.0]) + 3 * rank
    out["collectives"] = [v.tolist() for v in collectives(x)]
    step = torch.compile(collectives)
    got = [step(x + k) for k in range(2)]
    out["collectives_compiled"] = [v.tolist() for v in got[0]]
    out["collectives_compiled_2"] = [v.tolist() for v in got[1]]
    out["collectives_eager_2"] = [v.tolist() for v in collectives(x + 1)]
    out["collectives_programs"] = [step.compiles, step.executions]

    def point_to_point(t):
        """A send met by a recv, then an exchange where both ranks send first."""
        got, theirs = torch.zeros(2), torch.zeros(2)
        if rank == 0:
            dist.send(t * 2, dst=1)
        else:
            dist.recv(got, src=0)
        peer = 1 - rank
        dist.batch_isend_irecv([dist.P2POp(dist.isend, t + 10, peer),
                                dist.P2POp(dist.irecv, theirs, peer)])
        return got, theirs
    p2p = torch.compile(point_to_point)
    out["p2p"] = [[v.tolist() for v in point_to_point(x + k)] for k in range(2)]
    out["p2p_compiled"] = [[v.tolist() for v in p2p(x + k)] for k in range(2)]
    out["p2p_programs"] = [p2p.compiles, p2p.executions]

    def every_reduce_op(f, i):
        """all_reduce with every ReduceOp PyTorch's gloo has: floats and integers (the
        bitwise ones); fresh tensors each call."""
        outs = []
        for op in (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX):
            a = f.clone()
            dist.all_reduce(a, op=op)
            outs.append(a)
        for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR):
            a = i.clone()
            dist.all_reduce(a, op=op)
            outs.append(a)
        return outs
    f_in, i_in = torch.tensor([1.5, -2.0]) * (rank + 1), torch.tensor([6, 3, 12]) + 5 * rank
    out["reduce_ops"] = [v.tolist() for v in every_reduce_op(f_in, i_in)]
    reduce_ops = torch.compile(every_reduce_op)
    out["reduce_ops_compiled"] = [v.tolist() for v in reduce_ops(f_in, i_in)]
    out["reduce_ops_dtypes"] = [str(v.dtype) for v in reduce_ops(f_in, i_in)]
    out["reduce_ops_programs"] = [reduce_ops.compiles, reduce_ops.executions]
    def gathered_and_broadcast(t):
        """all_gather into a list and broadcast from each rank over the whole world."""
        rows = [torch.zeros(2) for _ in range(world)]
        dist.all_gather(rows, t * 2)
        from0, from1 = t.clone(), t + 1
        dist.broadcast(from0, src=0)
        dist.broadcast(from1, src=1)
        return rows + [from0, from1]
    out["gather_broadcast"] = [v.tolist() for v in gathered_and_broadcast(f_in)]
    gb = torch.compile(gathered_and_broadcast)
    out["gather_broadcast_compiled"] = [v.tolist() for v in gb(f_in)]
    out["gather_broadcast_programs"] = [gb.compiles, gb.executions]
    try:  # (PyTorch's gloo has no PREMUL_SUM either)
        dist.all_reduce(f_in.clone(), op=R.PREMUL_SUM)
    except NotImplementedError as e:
        out["premul_sum"] = str(e)

    @torch.compile
    def made_inside(t):  # a constant of this rank's program: XLA must not fold it
        own = torch.tensor([float(rank + 1)])
        dist.all_reduce(own)
        return t + own
    out["made_inside"] = made_inside(torch.zeros(1)).tolist()
out["graph_breaks"] = [str(w.message) for w in caught if "Graph break" in str(w.message)]

# training steps: eagerly, then the same step compiled (one SPMD program over both
# processes); each rank feeds its own rows of a global batch of 16
g = np.random.default_rng(0)
data = [(torch.tensor(g.standard_normal((16, 4)).astype(np.float32)),
         torch.tensor(g.integers(0, 3, 16))) for _ in range(3)]


def train(wrap, compiled, rows_of_rank=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    wrap(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    step = train_step(model, opt)
    run = torch.compile(step) if compiled else step
    losses = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for xs, ys in data:
            rows = slice(rank * 8, (rank + 1) * 8) if rows_of_rank else slice(None)
            losses.append(run(xs[rows], ys[rows]).item())
    params = [(p.full_tensor() if hasattr(p, "full_tensor") else p).detach().numpy().tolist()
              for p in model.parameters()]
    return {"losses": losses, "params": params,
            "programs": [run.compiles, run.executions] if compiled else None,
            "local_shapes": [list(p._data.addressable_shards[0].data.shape)
                           for p in model.parameters()],
            "adam_local_shapes": [list(opt.state[p]["exp_avg"]._data.addressable_shards[0]
                                     .data.shape) for p in model.parameters()],
            "graph_breaks": [str(w.message) for w in caught if "Graph break" in str(w.message)]}


out["one_process"] = train(lambda model: None, False, rows_of_rank=False)  # the global batch
out["fsdp"] = train(fully_shard, False)
out["fsdp_compiled"] = train(fully_shard, True)
mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))

# reading this process's shard inside a compiled step breaks the graph (the step is traced
# per rank, each rank holding whole values) and runs eagerly, with eager's result
sharded = nn.Linear(4, 4)
fully_shard(sharded)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    shard_sum = torch.compile(lambda: sharded.weight.to_local().sum() * 1)()
out["to_local_compiled"] = [shard_sum.item(), sharded.weight.to_local().sum().item(),
                            [str(w.message) for w in caught if "Graph break" in str(w.message)]]


def tp(model):
    parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})


# tensor parallel: every rank the same (whole) batch, as PyTorch's TP expects
out["tp"] = train(tp, False, rows_of_rank=False)
out["tp_compiled"] = train(tp, True, rows_of_rank=False)

out["graph_breaks_everywhere"] = sum(len(v["graph_breaks"]) for v in out.values()
                                    if isinstance(v, dict))
if __name__ == "__main__":
    for r in range(world):  # one after the other: long lines written together would interleave
        if r == rank:
            print("RESULT " + json.dumps(out), flush=True)
        dist.barrier()
    dist.destroy_process_group()
