"""Peak memory and step time of eager training with and without activation checkpointing.

A deep MLP, `layers` x (Linear + ReLU) grouped into blocks of `--per-block` layers, plus a
Linear head, trained with SGD three ways: no checkpointing ("none"), every block
checkpointed with torch.utils.checkpoint.checkpoint ("block"), and checkpoint_sequential
over the blocks in `--segments` segments ("sequential"). The same code runs with torch and
with torchjax (`--lib`).

Memory: each variant runs in its own process. CPU devices report no memory statistics
(jax.devices()[0].memory_stats() is None), so the peak is the process's resident set: after
the warm-up steps the kernel's high-water mark (VmHWM) is reset through /proc/self/clear_refs,
and read after the measured steps; "over base" is that peak minus the resident set at the
reset (parameters, compiled programs and buffers of the runtime already in place), i.e. what
one training step adds. If clear_refs cannot be written, ru_maxrss (the whole run's peak) is
reported instead. glibc's malloc keeps freed blocks under its dynamic mmap threshold, which
would hide the difference, so these processes run with MALLOC_MMAP_THRESHOLD_=65536: every
activation buffer is its own mapping and freeing it returns the memory.

Time: one more process per library with the default allocator runs the three variants in
interleaved rounds (the machine's load changes over a run); reported is the median step time
and the median over rounds of the ratio to "none".

    python bench/bench_checkpoint.py [--layers 32] [--width 512] [--batch 1024]
        [--per-block 2] [--segments 4] [--steps 3] [--rounds 5] [--lib torchjax|torch|both]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

VARIANTS = ("none", "block", "sequential")


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _trainer(lib: str, a):
    """step(variant) -> loss, for one model shared by the variants."""
    if lib == "torch":
        import torch
        sync = lambda t: t  # noqa: E731  (eager torch is synchronous on CPU)
    else:
        import jax

        import torchjax as torch
        sync = lambda t: jax.block_until_ready(t._data)  # noqa: E731
    ck = torch.utils.checkpoint

    torch.manual_seed(0)
    nn = torch.nn
    blocks = [nn.Sequential(*[m for _ in range(a.per_block)
                              for m in (nn.Linear(a.width, a.width), nn.ReLU())])
              for _ in range(a.layers // a.per_block)]
    body = nn.Sequential(*blocks)
    head = nn.Linear(a.width, 10)
    params = list(body.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=1e-3)
    x = torch.randn(a.batch, a.width)
    target = torch.randn(a.batch, 10)

    def forward(variant):
        if variant == "none":
            return head(body(x))
        if variant == "block":
            h = x
            for b in blocks:
                h = ck.checkpoint(b, h, use_reentrant=False)
            return head(h)
        return head(ck.checkpoint_sequential(body, a.segments, x, use_reentrant=False))

    def step(variant):
        loss = torch.nn.functional.mse_loss(forward(variant), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(sync(loss))

    return step


def child_memory(lib: str, variant: str, a) -> dict:
    step = _trainer(lib, a)
    for _ in range(3):  # compile, and let the engine see the graph structure repeat
        step(variant)
    base = _status("VmRSS")
    exact = _reset_peak()
    for _ in range(a.steps):
        step(variant)
    if exact:
        peak = _status("VmHWM")
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"peak_mb": peak / 2**20, "over_base_mb": (peak - base) / 2**20, "exact": exact}


def child_time(lib: str, a) -> dict:
    step = _trainer(lib, a)
    for v in VARIANTS:
        for _ in range(3):
            step(v)
    times = {v: [] for v in VARIANTS}
    for _ in range(a.rounds):
        for v in VARIANTS:
            t0 = time.perf_counter()
            step(v)
            times[v].append(time.perf_counter() - t0)
    return {v: {"step_s": statistics.median(ts),
                "ratio": statistics.median(t / p for t, p in zip(ts, times["none"]))}
            for v, ts in times.items()}


def _run(args, env) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--per-block", type=int, default=2)
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lib", default="torchjax", choices=("torchjax", "torch", "both"))
    ap.add_argument("--child", nargs=2, metavar=("LIB", "VARIANT|time"))
    a = ap.parse_args()
    if a.child:
        lib, what = a.child
        print(json.dumps(child_time(lib, a) if what == "time" else child_memory(lib, what, a)))
        return
    shape = ["--layers", str(a.layers), "--width", str(a.width), "--batch", str(a.batch),
             "--per-block", str(a.per_block), "--segments", str(a.segments),
             "--steps", str(a.steps), "--rounds", str(a.rounds)]
    mem_env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    libs = ("torchjax", "torch") if a.lib == "both" else (a.lib,)
    act = a.batch * a.width * 4 / 2**20
    print(f"MLP: {a.layers} x (Linear({a.width}, {a.width}) + ReLU) in blocks of "
          f"{a.per_block}, batch {a.batch}, SGD; one activation = {act:.1f} MB; "
          f"checkpoint_sequential segments = {a.segments}")
    print(f"{'lib':9} {'variant':11} {'step ms':>8} {'vs none':>8} {'peak MB':>8} "
          f"{'over base MB':>13}")
    for lib in libs:
        times = _run(["--child", lib, "time", *shape], os.environ)
        for v in VARIANTS:
            m = _run(["--child", lib, v, *shape], mem_env)
            t = times[v]
            print(f"{lib:9} {v:11} {t['step_s'] * 1e3:8.1f} {t['ratio']:7.2f}x "
                  f"{m['peak_mb']:8.0f} {m['over_base_mb']:13.0f}"
                  + ("" if m["exact"] else "  (ru_maxrss)"))


if __name__ == "__main__":
    main()
