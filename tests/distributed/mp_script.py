"""Run by test_multiprocess.py as `python -m torchjax.distributed.run --nproc-per-node 2`:
each of the 2 processes checks the collectives, DDP training and a DistributedSampler epoch,
then runs mp_compiled_script.py's checks (test_mp_compiled.py's), and prints its results as
JSON lines."""

import faulthandler
import json
import os
import sys
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import numpy as np
import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank, "world": world, "env_rank": int(os.environ["RANK"]),
       "torch_is_torchjax": torch.__name__ == "torchjax" or "torchjax" in repr(torch)}
R = dist.ReduceOp

x = torch.tensor([1.0, 2.0]) * (rank + 1)
for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
    t = x.clone()
    dist.all_reduce(t, op=getattr(R, op))
    out[f"all_reduce_{op}"] = t.tolist()
b = torch.tensor([6, 3]) + rank
dist.all_reduce(b, op=R.BAND)
out["all_reduce_BAND"] = b.tolist()

gathered = [torch.zeros(2) for _ in range(world)]
dist.all_gather(gathered, x)
out["all_gather"] = [g.tolist() for g in gathered]
into = torch.zeros(2 * world)
dist.all_gather_into_tensor(into, x)
out["all_gather_into_tensor"] = into.tolist()
rs = torch.zeros(2)
dist.reduce_scatter_tensor(rs, torch.arange(4.0) + 10 * rank)
out["reduce_scatter_tensor"] = rs.tolist()
bc = torch.tensor([float(rank)] * 3)
dist.broadcast(bc, src=1)
out["broadcast"] = bc.tolist()
a2a = torch.zeros(2)
dist.all_to_all_single(a2a, torch.tensor([10.0 * rank, 10.0 * rank + 1]))
out["all_to_all_single"] = a2a.tolist()
objs = [None] * world
dist.all_gather_object(objs, {"rank": rank})
out["all_gather_object"] = objs
# point to point: a send met by a recv; an exchange where both ranks send first
# (batch_isend_irecv); errors PyTorch also raises
peer = 1 - rank
if rank == 0:
    dist.send(torch.tensor([5.0, 6.0, 7.0]), dst=1)
    got = torch.zeros(3)
else:
    got = torch.zeros(3)
    assert dist.recv(got, src=0) == 0
out["send_recv"] = got.tolist()
mine, theirs = torch.full((2,), 10.0 + rank), torch.zeros(2)
works = dist.batch_isend_irecv([dist.P2POp(dist.isend, mine, peer),
                                dist.P2POp(dist.irecv, theirs, peer)])
[w.wait() for w in works]
out["exchange"] = theirs.tolist()
p2p_errors = []
for bad in (lambda: dist.send(mine, dst=rank), lambda: dist.recv(theirs)):
    try:
        bad()
    except (ValueError, NotImplementedError) as e:
        p2p_errors.append(type(e).__name__)
out["p2p_errors"] = p2p_errors
dist.barrier()

# DDP: each process its half of a global batch of 16, gradients averaged across processes
g = np.random.default_rng(0)
data = [(torch.tensor(g.standard_normal((16, 4)).astype(np.float32)),
         torch.tensor(g.integers(0, 3, 16))) for _ in range(3)]


def train_ddp(compiled=False, **ddp_kwargs):
    torch.manual_seed(rank)  # different initial weights: DDP broadcasts rank 0's
    model = DistributedDataParallel(nn.Linear(4, 3), **ddp_kwargs)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []

    def step(x, y):
        opt.zero_grad()
        pred = model(x)
        loss = F.cross_entropy(pred, y)
        loss.backward()
        opt.step()
        return loss, pred
    if compiled:
        step = torch.compile(step)
    for xs, ys in data:
        loss, pred = step(xs[rank * 8:(rank + 1) * 8], ys[rank * 8:(rank + 1) * 8])
        losses.append(loss.item())
    params = model.module.parameters()
    return {"losses": losses, "params": [p.detach().numpy().tolist() for p in params],
            "devices": [len(p._data.sharding.device_set) for p in model.module.parameters()],
            "pred_shape": list(pred.shape),
            "programs": [step.compiles, step.executions] if compiled else None}


# the default: one mesh over both processes' devices, one SPMD program over the global batch
# (each rank's batch its rows of it), each rank reading its own outputs and loss
out["ddp"] = train_ddp()
# given a process group: PyTorch's own scheme, a replica per process, gradients all-reduced
out["ddp_replicas"] = train_ddp(process_group=dist.group.WORLD)
# compiled, across processes: traced per rank and run as one SPMD program over both
# processes (the gradient average and the collectives are XLA's, inside the program)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["ddp_compiled"] = train_ddp(compiled=True)
    out["ddp_replicas_compiled"] = train_ddp(compiled=True, process_group=dist.group.WORLD)

    @torch.compile
    def doubled_then_summed(t):
        t = t * 2
        dist.all_reduce(t)
        return t + 1
    out["compiled_all_reduce"] = doubled_then_summed(torch.tensor([1.0 + rank])).tolist()

    @torch.compile
    def shuffled(t):
        gathered, scattered, swapped = torch.zeros(4), torch.zeros(2), torch.zeros(2)
        dist.all_gather_into_tensor(gathered, t)
        dist.reduce_scatter_tensor(scattered, gathered * (rank + 1))
        dist.all_to_all_single(swapped, t)
        return gathered, scattered, swapped
    out["compiled_shuffled"] = [v.tolist() for v in shuffled(torch.tensor([10.0 * rank,
                                                                           10.0 * rank + 1]))]

    @torch.compile
    def local_only(t):  # no collective, nothing spanning processes: rank 0 runs it alone
        return (t * 3).sum()
    if rank == 0:
        out["local_only"] = local_only(torch.ones(3)).item()

    @torch.compile
    def reduced(t):  # only rank dst keeps the result: a select by rank in the program
        dist.reduce(t, dst=0)
        return t
    out["compiled_reduce"] = reduced(torch.tensor([1.0 + rank])).tolist()

    # a compiled DDP forward whose backward runs outside it: eagerly, as the DDP step above
    torch.manual_seed(0)
    ddp = DistributedDataParallel(nn.Linear(4, 3))
    xs, ys = data[0]
    F.cross_entropy(torch.compile(ddp)(xs[rank * 8:(rank + 1) * 8]),
                    ys[rank * 8:(rank + 1) * 8]).backward()
    out["compiled_forward_grad"] = ddp.module.weight.grad.tolist()
out["graph_breaks"] = [str(w.message).split(":")[-1].strip() for w in caught
                       if "Graph break" in str(w.message)]

# fully_shard on one mesh over both processes: each parameter's rows split between them
from torch.distributed.fsdp import fully_shard  # noqa: E402

torch.manual_seed(rank)
mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
fully_shard(mlp)
opt = torch.optim.Adam(mlp.parameters(), lr=0.1)
fsdp = {"losses": []}
for xs, ys in data:
    opt.zero_grad()
    loss = F.cross_entropy(mlp(xs[rank * 8:(rank + 1) * 8]), ys[rank * 8:(rank + 1) * 8])
    loss.backward()
    opt.step()
    fsdp["losses"].append(loss.item())
fsdp["local_rows"] = [list(p.to_local().shape) for p in mlp.parameters()]
fsdp["params"] = [p.full_tensor().detach().numpy().tolist() for p in mlp.parameters()]
fsdp["adam_local_rows"] = [list(opt.state[p]["exp_avg"]._data.addressable_shards[0].data.shape)
                           for p in mlp.parameters()]
out["fsdp"] = fsdp

# one epoch of a DistributedSampler: the process group gives num_replicas and rank
ds = TensorDataset(torch.arange(10))
sampler = DistributedSampler(ds, seed=3)
sampler.set_epoch(1)
out["sampler"] = [int(v) for (batch,) in DataLoader(ds, batch_size=2, sampler=sampler)
                  for v in batch]

# a DeviceMesh over both processes' devices, a DTensor built from each process's shard, a
# sharded op (XLA's collective across the processes) and the whole value gathered back
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import DTensor, Shard  # noqa: E402

mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
d = DTensor.from_local(torch.tensor([[float(rank), 1.0]]), mesh, [Shard(0)])
out["dtensor_shape"] = list(d.shape)
out["dtensor_local"] = d.to_local().tolist()
out["dtensor_full"] = d.full_tensor().tolist()
out["dtensor_sum"] = (d * 2).sum().item()  # a sharded op: XLA reduces across the processes

# SyncBatchNorm, each rank its own batch: statistics (and their gradients) over both
# processes, eagerly and in a compiled step (a plain input there: see test_multiprocess.py)
g = np.random.default_rng(1)
bn_batches = [g.standard_normal((16, 3, 2)).astype(np.float32) for _ in range(2)]


def sync_bn(compiled):
    bn = nn.SyncBatchNorm(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    got = {"y": [], "x_grad": [], "w_grad": []}

    def step(x):
        y = bn(x)
        (y * y * torch.arange(3.0).reshape(1, 3, 1)).sum().backward()
        return y
    if compiled:
        step = torch.compile(step)
    for batch in bn_batches:
        x = torch.tensor(batch[rank * 8:(rank + 1) * 8], requires_grad=not compiled)
        bn.weight.grad = None
        got["y"].append(step(x).tolist())
        got["x_grad"].append(None if compiled else x.grad.tolist())
        got["w_grad"].append(bn.weight.grad.tolist())
    got["running"] = [bn.running_mean.tolist(), bn.running_var.tolist()]
    return got


out["sync_bn"] = sync_bn(False)
out["sync_bn_compiled"] = sync_bn(True)

# test_mp_compiled.py's checks, in this job (see there)
import mp_compiled_script  # noqa: E402

out["compiled"] = mp_compiled_script.out

for r in range(world):  # one after the other: long lines written together would interleave
    if r == rank:
        print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
dist.destroy_process_group()
sys.exit(0)
