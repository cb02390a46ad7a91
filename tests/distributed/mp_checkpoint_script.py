"""Run by test_mp_checkpoint.py as a 2-process job (torchjax's launcher): a fully_shard model
over both processes and its Adam state, saved with torch.distributed.checkpoint (each process
its own rows) and loaded into a fresh model, and saved per rank with torch.save / loaded
with torch.load as DTensors; a DDP model's replicated parameters through dcp; the checkpoint
in PyTorch's layout too. Each process prints its results as one JSON line."""

import faulthandler
import json
import os
import tempfile
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import numpy as np
import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

dist.init_process_group("gloo")
rank = dist.get_rank()
out = {"rank": rank}
box = [tempfile.mkdtemp(prefix="torchjax_dcp_") if rank == 0 else None]
dist.broadcast_object_list(box, src=0)
path = out["path"] = box[0]

g = np.random.default_rng(0)
data = [(torch.tensor(g.standard_normal((16, 4)).astype(np.float32)),
         torch.tensor(g.integers(0, 4, 16))) for _ in range(4)]


def model(seed):
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    fully_shard(m)
    return m, torch.optim.Adam(m.parameters(), lr=0.1)


def step(m, opt, xs, ys):
    opt.zero_grad()
    loss = F.cross_entropy(m(xs[rank * 8:(rank + 1) * 8]), ys[rank * 8:(rank + 1) * 8])
    loss.backward()
    opt.step()
    return loss.item()


def full(ps):
    return [p.detach().full_tensor().numpy().tolist() for p in ps]


def local(t):
    return np.asarray(t._data.addressable_shards[0].data).tolist()


mlp, opt = model(0)
for xs, ys in data[:2]:
    step(mlp, opt, xs, ys)
msd, osd = get_state_dict(mlp, opt)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    md = dcp.save({"model": msd, "optim": osd, "epoch": 2}, checkpoint_id=path)
out["save_warnings"] = [str(w.message) for w in seen]
out["files"] = sorted(os.listdir(path))
out["chunks"] = [[list(c.offsets), list(c.sizes)]
                 for c in md.state_dict_metadata["model.0.weight"].chunks]
out["params"] = full(mlp.parameters())
out["adam"] = [local(opt.state[p]["exp_avg"]) for p in mlp.parameters()]
# the same in PyTorch's layout (each process its .distcp file), for PyTorch's dcp.load
from torch.distributed.checkpoint.filesystem import (  # noqa: E402
    FileSystemWriter,
    SerializationFormat,
)

pt_path = os.path.join(path, "pytorch")
dcp.save({"model": msd, "optim": osd, "epoch": 2}, storage_writer=FileSystemWriter(
    pt_path, serialization_format=SerializationFormat.TORCH_SAVE))
out["pytorch_files"] = sorted(os.listdir(pt_path))

other, other_opt = model(1)
m2, o2 = get_state_dict(other, other_opt)
sd = {"model": m2, "optim": o2, "epoch": 0}
dcp.load(sd, checkpoint_id=path)
set_state_dict(other, other_opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
out["loaded_epoch"] = sd["epoch"]
out["loaded_params"] = full(other.parameters())
out["loaded_adam"] = [local(other_opt.state[p]["exp_avg"]) for p in other.parameters()]
out["losses"] = [step(mlp, opt, xs, ys) for xs, ys in data[2:]]
out["loaded_losses"] = [step(other, other_opt, xs, ys) for xs, ys in data[2:]]

# torch.save / torch.load per rank: this process's rows, loaded as DTensors of the layout
mine = os.path.join(path, f"rank{rank}.pt")
torch.save(mlp.state_dict(), mine)
loaded = torch.load(mine)
out["torch_load"] = {k: [type(v).__name__, [repr(p) for p in v.placements],
                         list(v._data.addressable_shards[0].data.shape)]
                     for k, v in loaded.items() if isinstance(v, DTensor)}
third, _ = model(2)
third.load_state_dict(loaded)
out["torch_load_params"] = full(third.parameters())
out["final_params"] = full(mlp.parameters())

# DDP on the global mesh: each parameter one array replicated over both processes, saved once
# (by the process holding its first replica) and loaded into another DDP model by both
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

torch.manual_seed(3)
ddp = DistributedDataParallel(nn.Linear(4, 3))
ddp_path = os.path.join(path, "ddp")
dcp.save({"model": ddp.state_dict()}, checkpoint_id=ddp_path)
torch.manual_seed(4)
ddp2 = DistributedDataParallel(nn.Linear(4, 3))
dcp.load({"model": ddp2.state_dict()}, checkpoint_id=ddp_path)
out["ddp"] = [[p.detach()._data.is_fully_addressable for p in ddp.parameters()],
              [np.asarray(p.detach()._data.addressable_shards[0].data).tolist()
               for p in ddp.parameters()],
              [np.asarray(p.detach()._data.addressable_shards[0].data).tolist()
               for p in ddp2.parameters()]]
for r in range(dist.get_world_size()):  # one after the other: long lines written together
    if r == rank:                          # would interleave (a line is ~10 KB)
        print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
