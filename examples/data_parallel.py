"""Data-parallel training on 8 devices, on a plain CPU: DeviceMesh, DistributedDataParallel, compile.

    pip install -e ".[demo]" && python examples/data_parallel.py
    python examples/data_parallel.py --devices 4 --no-compile

The script asks XLA for 8 virtual CPU devices (XLA_FLAGS=--xla_force_host_platform_device_count
=8, set before JAX starts), so it runs anywhere; on a machine with 8 GPUs the same code uses
them. One process drives every device, the usual JAX way: init_device_mesh builds a mesh over
them, DistributedDataParallel replicates the parameters over the mesh and splits each input
batch along dim 0, and torch.compile makes each training step one SPMD program in which XLA
averages the gradients over the devices. The script prints where the parameters and a batch
live, trains a classifier on a synthetic task with a progress bar, and checks that every
device holds the same parameters at the end.
Takes about a minute on 2 CPU cores.
"""

import argparse
import os
import sys


def _devices_from_argv(argv) -> int:
    """The --devices value, read before JAX starts (XLA_FLAGS is read once, at start-up)."""
    args = sys.argv[1:] if argv is None else argv
    for i, a in enumerate(args):
        if a == "--devices" and i + 1 < len(args):
            return int(args[i + 1])
        if a.startswith("--devices="):
            return int(a.split("=", 1)[1])
    return 8


def main(argv=None):
    n = _devices_from_argv(argv)
    if "jax" not in sys.modules:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_force_host_platform_device_count={n}").strip()
    import jax
    import numpy as np
    from _progress import trange

    import torchjax as torch
    import torchjax.nn.functional as F
    from torchjax import nn
    from torchjax.distributed.device_mesh import init_device_mesh
    from torchjax.nn.parallel import DistributedDataParallel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8, help="virtual CPU devices to use")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=256, help="global batch (all devices)")
    parser.add_argument("--no-compile", action="store_true", help="run the step eagerly")
    args = parser.parse_args(argv)
    if len(jax.devices()) < args.devices:
        raise SystemExit(f"JAX sees {len(jax.devices())} devices, fewer than --devices "
                         f"{args.devices}: it was started before this script set XLA_FLAGS")
    if args.batch % args.devices:
        raise SystemExit(f"--batch {args.batch} must divide by --devices {args.devices}")

    torch.manual_seed(0)
    mesh = init_device_mesh("cpu", (args.devices,), mesh_dim_names=("dp",))
    print(f"mesh: {mesh}")
    net = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                        nn.Linear(128, 4))
    model = DistributedDataParallel(net, device_mesh=mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)

    # a synthetic task: which of four fixed directions a noisy input points to
    centers = torch.randn(4, 16) * 2

    def batch(size):
        labels = torch.randint(0, 4, (size,))
        return centers[labels] + torch.randn(size, 16), labels

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step = train_step if args.no_compile else torch.compile(train_step)
    # a Tensor hands its jax.Array to JAX through __jax_array__ (JAX's own protocol)
    weight = net[0].weight.__jax_array__()
    print(f"first weight: shape {weight.shape}, {weight.sharding.spec} on "
          f"{len(weight.sharding.device_set)} devices (an empty spec: replicated)")

    bar = trange(args.steps, desc=f"training on {args.devices} devices")
    for _ in bar:
        x, y = batch(args.batch)
        loss = step(x, y)
        bar.set_postfix(loss=f"{loss.item():.4f}")

    x, y = batch(args.batch)
    with torch.no_grad():
        logits = model(x)
        accuracy = (logits.argmax(1) == y).float().mean().item()
    shards = logits.__jax_array__().addressable_shards
    print(f"a batch of {args.batch}: its logits live in {len(shards)} shards of "
          f"{shards[0].data.shape[0]} rows, one per device")
    copies = [np.asarray(s.data) for s in net[0].weight.__jax_array__().addressable_shards]
    same = all(np.array_equal(c, copies[0]) for c in copies)
    print(f"every device holds the same first weight after training: {same}")
    print(f"accuracy on a fresh batch: {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
