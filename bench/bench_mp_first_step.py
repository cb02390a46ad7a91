"""Time to first step of a 2-process job (`python -m torchjax.distributed.run
--nproc-per-node 2`), cold (an empty cache directory) and warm (a second job on the cache the
cold one left), per rank.

    python bench/bench_mp_first_step.py               # eager and compiled DDP, 1 round
    python bench/bench_mp_first_step.py --rounds 3 --json out.json

The job: an MLP 64-256-256-10 (ReLU) under DistributedDataParallel, cross-entropy, Adam, each
rank a batch of 32; the step eager (`eager`) or `torch.compile(step)` (one SPMD program over
both processes, `compiled`). "first step" is wall time from starting the launcher to the end
of the rank's first step (loss read back), so it includes starting Python, importing
torchjax, joining JAX's distributed runtime and DDP's broadcast of the parameters; "programs"
is what torchjax.compile_stats() counted by then (compiled / loaded from a cache), "traced"
the functions JAX traced to a jaxpr by then (in a warm job: what the caches could not
spare). "after join" is first step minus joined: the part a cache can shorten. Every job
is a fresh launcher with fresh processes: in-process caches would hide the cost. The two
ranks share the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the helpers the distributed tests use too (a job's environment, the step)
sys.path.insert(0, os.path.join(HERE, ".."))
from tests.distributed._common import job_env, train_step  # noqa: E402


def child(variant: str) -> None:
    """One rank of the job (run by the launcher)."""
    t0 = float(os.environ["BENCH_T0"])
    started = time.time() - t0  # Python started, torchjax imported (`python -m torchjax`)
    import numpy as np
    import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    joined = time.time() - t0
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)))
    step = train_step(model, torch.optim.Adam(model.parameters(), lr=1e-3))
    run = torch.compile(step) if variant == "compiled" else step
    g = np.random.default_rng(rank)
    x = torch.tensor(g.standard_normal((32, 64)).astype(np.float32))
    y = torch.tensor(g.integers(0, 10, 32))
    loss = run(x, y).item()
    first = time.time() - t0
    s = torch.compile_stats()
    losses = [loss] + [run(x, y).item() for _ in range(2)]
    line = "RESULT " + json.dumps({"rank": rank, "first_step": first, "started": started,
                                   "joined": joined, "compiled": s.compiled,
                                   "loaded": s.cache_hits, "traced": s.traced,
                                   "losses": losses})
    for r in range(dist.get_world_size()):  # one after the other: lines would interleave
        if r == rank:
            print(line, flush=True)
        dist.barrier()
    dist.destroy_process_group()


def job(variant: str, cache_dir: str) -> list:
    env = job_env(TORCHJAX_CACHE_DIR=cache_dir, BENCH_T0=repr(time.time()))
    p = subprocess.run([sys.executable, "-m", "torchjax.distributed.run", "--nproc-per-node",
                        "2", os.path.abspath(__file__), "--child", variant], env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    got = [json.loads(line[7:]) for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    return sorted(got, key=lambda r: r["rank"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--variants", default="eager,compiled")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    rows = {}
    for _ in range(args.rounds):
        for variant in args.variants.split(","):
            cache = tempfile.mkdtemp(prefix="bench_mp_first_step_")
            try:
                cold, warm = job(variant, cache), job(variant, cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            for r in range(2):
                assert cold[r]["losses"] == warm[r]["losses"], "a warm job changed the losses"
            for kind, res in (("cold", cold), ("warm", warm)):
                rows.setdefault((variant, kind), []).append(res)
    print("| step | cache | rank | first step s | of which: started, joined s | after join s "
          "| programs compiled / loaded | traced |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for (variant, kind), runs in rows.items():
        for r in range(2):
            first = statistics.median(run[r]["first_step"] for run in runs)
            last = runs[-1][r]
            started = statistics.median(run[r]["started"] for run in runs)
            joined = statistics.median(run[r]["joined"] for run in runs)
            after = statistics.median(run[r]["first_step"] - run[r]["joined"] for run in runs)
            print(f"| {variant} | {kind} | {r} | {first:.2f} | {started:.2f}, {joined:.2f} | "
                  f"{after:.2f} | {last['compiled']} / {last['loaded']} | {last['traced']} |")
            out.append({"variant": variant, "cache": kind, "rank": r, "first_step": first,
                        "started": started, "joined": joined, "after_join": after,
                        "compiled": last["compiled"], "loaded": last["loaded"],
                        "traced": last["traced"]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
