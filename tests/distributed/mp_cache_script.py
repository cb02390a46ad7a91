"""Run twice by test_mp_cache.py with one temporary TORCHJAX_CACHE_DIR, as
`python -m torchjax.distributed.run --nproc-per-node 2`: a short job of every kind of program
a multi-process run makes (a program without arguments, per-process ops, collectives, DDP
eager and compiled, fully_shard compiled: SPMD programs over both processes). Each process
prints its results and torchjax.compile_stats() as one JSON line."""

import faulthandler
import json
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import jax
import numpy as np
import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard
from torch.nn.parallel import DistributedDataParallel

from tests.distributed._common import train_step
from torchjax import _programs

# torchjax's programs whose arguments its program cache could not name (they run as a plain
# jax.jit: traced and lowered on every run to be found in JAX's cache)
unkeyed = [0]
_signature = _programs.signature


def counted_signature(args):
    sig = _signature(args)
    unkeyed[0] += sig is None
    return sig


_programs.signature = counted_signature

# the functions JAX traced (to a jaxpr: what a warm run should no longer do), by name
traced = []


def on_duration(event, secs, **kwargs):
    if event == "/jax/core/compile/jaxpr_trace_duration":
        traced.append(kwargs.get("fun_name"))


jax.monitoring.register_event_duration_secs_listener(on_duration)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.compile_stats(reset=True)
traced.clear()
out = {"rank": rank}

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    # a program without array arguments runs on this process's default device: rank 0's
    # entry loaded on rank 1 put its output on rank 0's device (a cross-host transfer error
    # at the next write, and the other rank then waited in its collective for good). Rank 1
    # makes it first, so that the entry on disk is rank 0's.
    for r in (1, 0):
        if r == rank:
            z = torch.zeros(2)
        dist.barrier()
    x = torch.tensor([1.0, 2.0]) * (rank + 1)
    out["local"] = (x.tanh() * 3 + z).sum().item()
    t = x.clone()
    dist.all_reduce(t)
    rs = torch.zeros(2)
    dist.reduce_scatter_tensor(rs, torch.arange(4.0) + 10 * rank)
    out["collectives"] = [t.tolist(), rs.tolist()]
    # the same shapes again under other reduce ops, sources and collectives: each is a
    # program of its own (one keyed wrongly would give a warm run another one's result)
    R = dist.ReduceOp
    others = {}
    for op in (R.MAX, R.AVG, R.MIN, R.PRODUCT):
        a = x.clone()
        dist.all_reduce(a, op=op)
        others[op.name] = a.tolist()
    for src in (1, 0):
        b = x.clone()
        dist.broadcast(b, src=src)
        others[f"broadcast{src}"] = b.tolist()
    gl = [torch.zeros(2), torch.zeros(2)]
    dist.all_gather(gl, x)
    others["all_gather"] = [v.tolist() for v in gl]
    into = torch.zeros(4)
    dist.all_gather_into_tensor(into, x)
    others["all_gather_into_tensor"] = into.tolist()
    a2a = torch.zeros(2)
    dist.all_to_all_single(a2a, x + 10 * rank)
    others["all_to_all_single"] = a2a.tolist()
    sc = torch.zeros(2)
    dist.scatter(sc, [x * 0 + 7, x * 0 + 8] if rank == 1 else None, src=1)
    others["scatter"] = sc.tolist()
    gathered = [torch.zeros(2), torch.zeros(2)]
    dist.gather(x, gathered if rank == 0 else None, dst=0)
    others["gather"] = [v.tolist() for v in gathered]
    lst = [None]
    dist.broadcast_object_list(lst if rank else [{"from": 0}], src=0)
    others["object"] = lst[0] if rank else None
    # 0-d tensors keep their shape (each rank's piece of the rows gets an axis first)
    s0 = torch.tensor(float(rank + 1))
    dist.all_reduce(s0)
    s1 = torch.tensor([float(rank + 1)])
    dist.all_reduce(s1, op=R.MAX)
    sl = [torch.tensor(0.0), torch.tensor(0.0)]
    dist.all_gather(sl, torch.tensor(float(rank * 5)))
    others["scalars"] = [s0.tolist(), list(s0.shape), s1.tolist(), list(s1.shape),
                         [v.tolist() for v in sl], [list(v.shape) for v in sl]]
    out["other_collectives"] = others

    g = np.random.default_rng(0)
    data = [(torch.tensor(g.standard_normal((16, 4)).astype(np.float32)),
             torch.tensor(g.integers(0, 3, 16))) for _ in range(2)]

    def train(wrap, compiled):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        model = wrap(model) or model
        step = train_step(model, torch.optim.Adam(model.parameters(), lr=0.1))
        run = torch.compile(step) if compiled else step
        rows = slice(rank * 8, (rank + 1) * 8)
        losses = [run(xb[rows], yb[rows]).item() for xb, yb in data]
        params = [(p.full_tensor() if hasattr(p, "full_tensor") else p).detach().numpy()
                  .tolist() for p in model.parameters()]
        return {"losses": losses, "params": params}

    out["ddp"] = train(DistributedDataParallel, False)
    out["ddp_compiled"] = train(DistributedDataParallel, True)
    out["fsdp_compiled"] = train(fully_shard, True)
out["warnings"] = [str(w.message) for w in caught if "cache" in str(w.message)]
s = torch.compile_stats()
out["stats"] = {"compiled": s.compiled, "cache_hits": s.cache_hits, "traced": s.traced,
                "unkeyed": unkeyed[0], "traced_names": traced}
for r in range(world):  # one after the other: long lines written together would interleave
    if r == rank:
        print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
dist.destroy_process_group()
