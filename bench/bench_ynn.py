"""What XLA:CPU's YNNPACK fusions cost at an executable's first run, and save at later ones.

    python bench/bench_ynn.py                  # default fusions, then without reductions
    python bench/bench_ynn.py --variants default,-reduce,-individual_dot

An executable's first run builds a YNNPACK pipeline per YNN fusion (a reduction, a matrix
product): 0.5-2 ms each, on the calling thread, once per executable (a loaded one too). A
GPT's fused backward has ~70 of them, ~0.1 s of its warm first step (docs/performance_startup.md,
sessions 24-25). Each variant runs in a fresh process with
`XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=<variant>` ("default": no flag) and reports,
per program, its first run and the median of 300 later ones (microseconds). Pure JAX: no
torchjax in the measured processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASES = {  # name: (expression of `a` and `b`, shape of a, shape of b or None)
    "sum over batch 1024x128": ("a.sum(0)", (1024, 128), None),
    "sum of squares 1024x128": ("(a * a).sum(1)", (1024, 128), None),
    "sum over batch 64x9216": ("a.sum(0)", (64, 9216), None),
    "conv bias grad 64x32x26x26": ("a.sum((0, 2, 3))", (64, 32, 26, 26), None),
    "matmul 1024x128 @ 128x384": ("a @ b", (1024, 128), (128, 384)),
    "matmul 32x128 @ 128x512": ("a @ b", (32, 128), (128, 512)),
    "matmul 4x4 @ 4x8": ("a @ b", (4, 4), (4, 8)),
}


def child() -> None:
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np

    out = {}
    rng = np.random.default_rng(0)
    for name, (expr, sa, sb) in CASES.items():
        a = jnp.asarray(rng.random(sa, np.float32))
        b = jnp.asarray(rng.random(sb, np.float32)) if sb else a
        run = jax.jit(eval(f"lambda a, b: {expr}")).lower(a, b).compile()  # noqa: S307
        t = time.perf_counter()
        jax.block_until_ready(run(a, b))
        first = time.perf_counter() - t
        times = []
        for i in range(320):
            t = time.perf_counter()
            jax.block_until_ready(run(a, b))
            if i >= 20:
                times.append(time.perf_counter() - t)
        out[name] = (first * 1e6, float(np.median(times)) * 1e6)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--variants", default="default,-reduce")
    args = ap.parse_args()
    if args.child:
        child()
        return
    results = {}
    for v in args.variants.split(","):
        env = dict(os.environ)
        env["XLA_FLAGS"] = "" if v == "default" else (
            f"--xla_cpu_experimental_ynn_fusion_type={v}")
        got = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                             capture_output=True, text=True).stdout
        results[v] = json.loads(got.strip().splitlines()[-1])
    variants = list(results)
    print("| program | " + " | ".join(f"{v}: first / later us" for v in variants) + " |")
    print("|---|" + "---|" * len(variants))
    for name in CASES:
        cells = [f"{results[v][name][0]:.0f} / {results[v][name][1]:.1f}" for v in variants]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
