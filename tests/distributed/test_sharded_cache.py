"""torchjax's program cache keys programs whose arguments are laid out over a mesh (DTensor's,
fully_shard's and DDP's arrays): a second process running the same script on the same cache
directory loads every one of them, tracing and lowering none, and gets the first one's
results, which are the same computation's on one device (_programs.py, _program_names.py)."""


import numpy as np

from tests.distributed._common import run_on_cache
from tests.distributed.conftest import _env

_SCRIPT = r"""
from tests.distributed._common import eight_devices
eight_devices()

import json
import numpy as np
import torchjax as torch
from torchjax import _programs, nn
from torchjax.distributed.device_mesh import DeviceMesh
from torchjax.distributed.fsdp import fully_shard
from torchjax.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torchjax.nn.parallel import DistributedDataParallel
from tests.distributed._common import train_step

# torchjax's programs that were made (compiled, or run as plain jax.jit because the key
# could not name their arguments) rather than loaded from the program cache
made = {"compiled": 0, "unkeyed": 0}
_compile, _signature = _programs._Program._compile, _programs.signature


def counted_compile(self, args, key):
    made["compiled"] += 1
    return _compile(self, args, key)


def counted_signature(args):
    sig = _signature(args)
    made["unkeyed"] += sig is None
    return sig


_programs._Program._compile = counted_compile
_programs.signature = counted_signature

# the functions JAX traced to a jaxpr, by name
import jax  # noqa: E402
traced = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, secs, **kw: traced.append(kw.get("fun_name"))
    if event == "/jax/core/compile/jaxpr_trace_duration" else None)

# devices in another order than jax.devices(): a loaded executable must run each shard on
# the device it was compiled for
mesh = DeviceMesh("cpu", [[3, 1, 2, 0], [4, 5, 6, 7]], mesh_dim_names=("dp", "tp"))
g = np.random.default_rng(0)
a_np, w_np = (g.standard_normal(s).astype(np.float32) for s in ((8, 4), (4, 8)))
out = {}
for kind in ("one device", "sharded"):
    a = torch.tensor(a_np, requires_grad=True)
    w = torch.tensor(w_np, requires_grad=True)
    if kind == "sharded":
        da = distribute_tensor(a, mesh, [Shard(0), Replicate()])
        dw = distribute_tensor(w, mesh, [Replicate(), Shard(1)])
    else:
        da, dw = a, w
    y = (da @ dw).tanh() * 2 - da.sum(1, keepdim=True)
    y.sum().backward()
    got = [y, da.grad, dw.grad]  # (distribute_tensor's result is a leaf, as in PyTorch)
    if kind == "sharded":
        got = [t.full_tensor() for t in got]
    out[kind] = [t.detach().numpy().tolist() for t in got]
# from_local's Reshard (a from_jax op) loaded from the cache states its input's layout as a
# GSPMDSharding; its argument (one device's, uncommitted) is cut by the named program too
loc = torch.ones(2, 4, requires_grad=True)
DTensor.from_local(loc, mesh, [Shard(0), Replicate()]).sum().backward()
out["from_local grad"] = loc.grad.numpy().tolist()


def train(wrap, steps=2, compiled=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    model = wrap(model) or model
    step = train_step(model, torch.optim.Adam(model.parameters(), lr=0.1))
    if compiled:
        step = torch.compile(step)
    x = torch.tensor(a_np)
    y = torch.tensor(np.arange(8) % 3)
    return [step(x, y).item() for _ in range(steps)]


out["ddp"] = train(DistributedDataParallel)
out["fsdp"] = train(fully_shard)
# one SPMD program per step, its labels (one device's, uncommitted) placed by the program
out["ddp compiled"] = train(DistributedDataParallel, compiled=True)
out["fsdp compiled"] = train(fully_shard, compiled=True)
out["one device training"] = train(lambda m: None)
print("RESULT " + json.dumps({"out": out, "made": made, "traced": traced,
                              "stats": vars(torch.compile_stats())}))
"""


def _run(cache_dir) -> dict:
    env = _env()
    env["TORCHJAX_HOST_TIER"] = "0"  # (about compiled programs on disk; see test_compile_cache)
    return run_on_cache(_SCRIPT, env, cache_dir)


def test_a_second_process_loads_every_sharded_program(tmp_path):
    cold, warm = _run(tmp_path), _run(tmp_path)
    assert cold["made"]["compiled"] > 30  # (18 before sharded programs were kept)
    # nothing of torchjax's was traced, lowered or compiled again: every program came from
    # the program cache, sharded ones included (before, those took jax.jit's path: traced
    # and lowered, then found in JAX's persistent cache)
    assert warm["made"] == {"compiled": 0, "unkeyed": 0}, warm["made"]
    assert warm["stats"]["compiled"] == 0
    # and nothing else of torchjax's is traced either: distribute_tensor's, fully_shard's and
    # DDP's placing of one device's array over the mesh, from_jax's Reshard (forward and
    # backward) and copying a parameter are named programs (7 traced before), and so are
    # the compiled steps' programs (named by their jaxpr) and the placing of the labels (one
    # device's, not laid out by DDP, which lays out the module's inputs only) onto a loaded
    # program's mesh, which was JAX's own `_multi_slice` (3 more traced before). What remains
    # is the user's code: torchjax.compile's trace of each compiled step (`body`)
    assert warm["traced"] == ["body", "body"], warm["traced"]
    assert warm["out"] == cold["out"]
    one, sharded = cold["out"]["one device"], cold["out"]["sharded"]
    for got, want in zip(sharded, one):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for kind in ("ddp", "fsdp", "ddp compiled", "fsdp compiled"):
        np.testing.assert_allclose(cold["out"][kind], cold["out"]["one device training"],
                                   rtol=1e-5)
