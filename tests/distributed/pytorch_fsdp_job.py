"""Run by test_dcp_pytorch_format.py under PyTorch's own launcher (torchrun, 2 processes,
gloo; plain PyTorch, not torchjax): an FSDP2 model and its Adam state after 2 steps, saved with
PyTorch's dcp.save (each rank its half of every weight in its own .distcp file). Rank 0 prints
the full parameters and first moments, which torchjax's load must give."""

import json
import os
import sys
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

warnings.simplefilter("ignore")
dist.init_process_group("gloo")
rank = dist.get_rank()
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
for layer in (model[0], model[2]):
    fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(rank)  # (each rank its own batch)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(6, 4, generator=g)).square().mean().backward()
    opt.step()
msd, osd = get_state_dict(model, opt)
dcp.save({"model": msd, "optim": osd, "epoch": 2}, checkpoint_id=sys.argv[1])
params = {k: v.full_tensor().tolist() for k, v in model.state_dict().items()}
moments = {k: opt.state[p]["exp_avg"].full_tensor().tolist()
           for k, p in model.named_parameters()}
if rank == 0:
    print("RESULT " + json.dumps({"params": params, "exp_avg": moments,
                                  "files": sorted(os.listdir(sys.argv[1]))}), flush=True)
dist.barrier()
# (Under a loaded test run, gloo's teardown at interpreter exit has aborted the process,
# "terminate called without an active exception", after all the work was done: both ranks
# leave at once after the barrier instead.)
sys.stdout.flush()
os._exit(0)
