"""DDP and FSDP training steps on 8 virtual CPU devices, against the same model written by
hand with jax.jit and NamedSharding.

    python bench/bench_distributed.py            # default: 10 interleaved rounds
    python bench/bench_distributed.py --quick    # 4 rounds
    python bench/bench_distributed.py --json out.json

The model: an MLP 256-1024-1024-256 (ReLU), cross-entropy over 256 classes, Adam lr 1e-3,
a global batch of 256, the same initial weights and batch in every column.

Columns (each step ends with the loss read as a Python float):
- jax-ddp: parameters and Adam state replicated (NamedSharding(mesh, P())), the batch
  sharded on dim 0 (P("dp")), jax.value_and_grad + optax.adam in one jax.jit, donated;
- torchjax-ddp: DistributedDataParallel(model) and torchjax.compile(step);
- jax-fsdp: as jax-ddp with every parameter and its Adam moments sharded on dim 0 (P("dp"));
- torchjax-fsdp: fully_shard on each Linear and the model, torchjax.compile(step);
- torchjax-ddp-eager: the DDP step uncompiled (information only).
Ratios are medians over rounds of torchjax / jax time (interleaved rounds: the VM is shared).
Memory: bytes of parameters + optimizer state that device 0 holds (from addressable shards).
"""

from __future__ import annotations

import os
import sys

# the helpers the distributed tests use too (8 devices, the step, device 0's bytes)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.distributed._common import device0_bytes, eight_devices, train_step  # noqa: E402

eight_devices()

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import AxisType, Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import torchjax as torch  # noqa: E402
from torchjax import nn  # noqa: E402
from torchjax.distributed.fsdp import fully_shard  # noqa: E402
from torchjax.nn.parallel import DistributedDataParallel  # noqa: E402

DIMS = (256, 1024, 1024, 256)
BATCH = 256


def build():
    torch.manual_seed(0)
    layers = []
    for i in range(len(DIMS) - 1):
        layers.append(nn.Linear(DIMS[i], DIMS[i + 1]))
        if i < len(DIMS) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def data():
    g = np.random.default_rng(0)
    return (g.standard_normal((BATCH, DIMS[0])).astype(np.float32),
            g.integers(0, DIMS[-1], BATCH).astype(np.int32))


def torchjax_step(model, compiled=True):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data()
    x, y = torch.tensor(x), torch.tensor(y.astype(np.int64))
    step = train_step(model, opt)
    fn = torch.compile(step) if compiled else step

    def run():
        return fn(x, y).item()
    first = run()  # also creates the optimizer state

    def memory():
        arrays = [p._data for p in model.parameters()]
        arrays += [s[k]._data for s in opt.state.values() for k in ("exp_avg", "exp_avg_sq")]
        return device0_bytes(arrays)
    return run, memory, first


def jax_step(model, fsdp: bool):
    mesh = Mesh(np.array(jax.devices()), ("dp",), axis_types=(AxisType.Auto,))
    layout = NamedSharding(mesh, P("dp") if fsdp else P())
    params = [jax.device_put(np.asarray(p.detach()._data), layout) for p in model.parameters()]
    tx = optax.adam(1e-3)
    opt_state = tx.init(params)
    x, y = data()
    x = jax.device_put(x, NamedSharding(mesh, P("dp")))
    y = jax.device_put(y, NamedSharding(mesh, P("dp")))

    def forward(params, x):
        for i in range(0, len(params), 2):
            x = x @ params[i].T + params[i + 1]
            if i < len(params) - 2:
                x = jax.nn.relu(x)
        return x

    def step(params, opt_state, x, y):
        def loss_fn(p):
            return optax.softmax_cross_entropy_with_integer_labels(forward(p, x), y).mean()
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    step = jax.jit(step, donate_argnums=(0, 1))
    box = {"params": params, "opt": opt_state}

    def run():
        box["params"], box["opt"], loss = step(box["params"], box["opt"], x, y)
        return float(loss)

    def memory():
        moments = [a for a in jax.tree_util.tree_leaves(box["opt"]) if a.ndim > 0]
        return device0_bytes(list(box["params"]) + moments)
    return run, memory, run()


def interleaved(fns: dict, number: int, rounds: int):
    for f in fns.values():
        for _ in range(2):
            f()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            times[k].append((time.perf_counter() - t0) / number)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rounds = args.rounds or (4 if args.quick else 10)
    assert len(jax.devices()) == 8
    base = build()
    runs, mems, first = {}, {}, {}
    for name, make in [
        ("jax-ddp", lambda: jax_step(base, fsdp=False)),
        ("torchjax-ddp", lambda: torchjax_step(DistributedDataParallel(copy.deepcopy(base)))),
        ("jax-fsdp", lambda: jax_step(base, fsdp=True)),
        ("torchjax-fsdp", lambda: torchjax_step(_fsdp(copy.deepcopy(base)))),
        ("torchjax-ddp-eager", lambda: torchjax_step(
            DistributedDataParallel(copy.deepcopy(base)), compiled=False)),
    ]:
        run, memory, first[name] = make()  # the loss of step 1, the same in every column
        runs[name], mems[name] = run, memory
    times = interleaved(runs, number=5, rounds=rounds)
    med = {k: statistics.median(v) for k, v in times.items()}

    def ratio(a, b):
        return statistics.median(x / y for x, y in zip(times[a], times[b]))
    print(f"jax {jax.__version__}, {len(jax.devices())} virtual CPU devices, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, {rounds} rounds")
    print(f"{'column':22s} {'ms/step':>9s} {'vs jax':>7s} {'device 0 bytes':>15s} "
          f"{'of total':>9s} {'first loss':>11s}")
    rows = {}
    for k in runs:
        ref = "jax-fsdp" if "fsdp" in k else "jax-ddp"
        mine, total = mems[k]()
        r = ratio(k, ref)
        rows[k] = {"ms": med[k] * 1e3, "ratio": r, "device0_bytes": mine,
                   "total_bytes": total, "first_loss": first[k]}
        print(f"{k:22s} {med[k] * 1e3:9.2f} {r:7.2f} {mine:15,d} {mine / total:9.3f} "
              f"{first[k]:11.6f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": rounds, "columns": rows, "times": times}, f, indent=1)


def _fsdp(model):
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    return fully_shard(model)


if __name__ == "__main__":
    main()
