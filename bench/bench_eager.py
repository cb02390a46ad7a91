"""Eager dispatch cost: torchjax vs raw jax.numpy vs PyTorch, side by side in one process.

    python bench/bench_eager.py            # full run (about two minutes)
    python bench/bench_eager.py --quick    # fewer repetitions

Prints per-op costs (forward with grad off; forward + backward with grad on) on 16x16 and
1024x1024 float32 inputs, a 3-op chain (mul, tanh, sum) against the issue's targets, the
seed MLP training step (Linear(4,8), ReLU, Linear(8,1), MSE, SGD), and resident memory
over 10,000 training steps.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import torchjax


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def timeit(fn, number: int, repeat: int = 5) -> float:
    """Median seconds per call over `repeat` runs of `number` calls (after warm-up)."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def interleaved(fns: dict, number: int, rounds: int) -> tuple[dict, dict]:
    """Median seconds per call of each function, and the median per-round ratio of each to the
    first one. Rounds alternate between the functions, so machine noise (this is a shared
    2-core VM) hits all of them alike and the ratios stay stable."""
    # warm-up: torchjax's host tier evaluates a program's first calls with NumPy and compiles
    # the signatures that repeat on a worker thread; enough calls to make each step's
    # programs hot, then their compiles finished, so that the rounds time the compiled steady
    # state (the time to get there is bench_startup's subject)
    warm = 3 + getattr(getattr(torchjax, "_host_tier", None), "HOT", 0)
    for f in fns.values():
        for _ in range(warm):
            f()
    _settle()
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
    base = next(iter(fns))
    ratios = {k: statistics.median(a / b for a, b in zip(v, times[base]))
              for k, v in times.items()}
    return {k: statistics.median(v) for k, v in times.items()}, ratios


def _settle():
    """Until torchjax's background compiles (host tier, deferred sequences, fused
    backward) are done."""
    for mod, fn in (("_program_soon", "wait_all"), ("_deferred_programs", "wait")):
        m = getattr(torchjax, mod, None)
        if m is not None and hasattr(m, fn):
            getattr(m, fn)()
    engine = getattr(getattr(torchjax, "_autograd", None), "engine", None)
    pending = getattr(engine, "_compiling", [None])[0]
    if pending is not None:
        pending.thread.join()


def block(x):
    if isinstance(x, torchjax.Tensor):
        x._data.block_until_ready()
    elif isinstance(x, jax.Array):
        x.block_until_ready()
    return x


def per_op(size: int, number: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    ta, tb = torchjax.tensor(a), torchjax.tensor(b)
    pa, pb = torch.tensor(a), torch.tensor(b)
    ops = {
        "add": (lambda x, y: x + y, jnp.add),
        "mul": (lambda x, y: x * y, jnp.multiply),
        "matmul": (lambda x, y: x @ y, jnp.matmul),
        "exp": (lambda x, y: x.exp(), lambda x, y: jnp.exp(x)),
        "sum": (lambda x, y: x.sum(), lambda x, y: jnp.sum(x)),
    }
    rows = []
    for name, (tf, jf) in ops.items():
        t_j = timeit(lambda: block(jf(ja, jb)), number)
        t_t = timeit(lambda: block(tf(ta, tb)), number)
        t_p = timeit(lambda: tf(pa, pb), number)
        # forward + backward with grad on
        ga = torchjax.tensor(a, requires_grad=True)
        gb = torchjax.tensor(b, requires_grad=True)
        qa = torch.tensor(a, requires_grad=True)
        qb = torch.tensor(b, requires_grad=True)

        def tj_fb():
            ga.grad = None
            out = tf(ga, gb).sum() if name != "sum" else tf(ga, gb)
            out.backward()
            block(ga.grad)

        def pt_fb():
            qa.grad = None
            out = tf(qa, qb).sum() if name != "sum" else tf(qa, qb)
            out.backward()

        fb_t = timeit(tj_fb, max(number // 4, 3))
        fb_p = timeit(pt_fb, max(number // 4, 3))
        rows.append((name, t_j, t_t, t_p, fb_t, fb_p))
    return rows


def chain(size: int, number: int, rounds: int):
    """The 3-op chain mul -> tanh -> sum: the targets in the foundation issue."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    ja, jb = jnp.asarray(a), jnp.asarray(b)

    def jnp_chain():
        return block(jnp.sum(jnp.tanh(ja * jb)))

    ta, tb = torchjax.tensor(a), torchjax.tensor(b)

    def tj_nograd():
        return block((ta * tb).tanh().sum())

    ga = torchjax.tensor(a, requires_grad=True)

    def tj_grad():
        ga.grad = None
        (ga * tb).tanh().sum().backward()
        return block(ga.grad)

    vg = jax.jit(jax.value_and_grad(lambda x, y: jnp.sum(jnp.tanh(x * y))))

    def jax_jit_vg():
        v, g = vg(ja, jb)
        return block(g)

    qa = torch.tensor(a, requires_grad=True)
    qb = torch.tensor(b)

    def pt_grad():
        qa.grad = None
        (qa * qb).tanh().sum().backward()

    def eager_vjp():
        out, f = jax.vjp(lambda x: jnp.sum(jnp.tanh(x * jb)), ja)
        return block(f(jnp.ones_like(out))[0])

    return interleaved({
        "jnp forward (eager, 3 ops)": jnp_chain,
        "torchjax forward, grad off": tj_nograd,
        "torchjax forward+backward": tj_grad,
        "jax.vjp eager forward+backward": eager_vjp,
        "jax.jit(value_and_grad) one program": jax_jit_vg,
        "PyTorch forward+backward": pt_grad,
    }, number, rounds)


def mlp_step(steps: int, rss_steps: int):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((10, 4)).astype(np.float32)
    Y = rng.standard_normal((10, 1)).astype(np.float32)

    def make(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 1))
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        loss_fn = lib.nn.MSELoss()
        x, y = lib.tensor(X), lib.tensor(Y)

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    tj_step, pt_step = make(torchjax), make(torch)
    t_tj = timeit(lambda: block(tj_step()), steps)
    t_pt = timeit(pt_step, steps)
    gc.collect()
    start = rss_mb()
    for i in range(rss_steps):
        loss = tj_step()
        if i == 999:
            after_1k = rss_mb()
    block(loss)
    gc.collect()
    end = rss_mb()
    return t_tj, t_pt, start, after_1k, end


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    n_small = 200 if args.quick else 1000
    n_big = 5 if args.quick else 20
    print(f"jax {jax.__version__}, torch {torch.__version__}, {jax.devices()[0].platform}, "
          f"{os.cpu_count()} cores")

    for size, n in ((16, n_small), (1024, n_big)):
        print(f"\n## Per-op cost, {size}x{size} float32 (microseconds per call)\n")
        print("| op | jnp eager | torchjax grad off | PyTorch | torchjax fwd+bwd | "
              "PyTorch fwd+bwd |")
        print("|---|---|---|---|---|---|")
        for name, tj_, tt, tp, fbt, fbp in per_op(size, n):
            print(f"| {name} | {tj_ * 1e6:.1f} | {tt * 1e6:.1f} | {tp * 1e6:.1f} | "
                  f"{fbt * 1e6:.1f} | {fbp * 1e6:.1f} |")

    print("\n## 3-op chain (mul, tanh, sum)\n")
    print("| size | " + " | ".join(["jnp fwd", "tj grad off", "tj fwd+bwd", "jax.vjp eager",
                                       "jit(value_and_grad)", "PyTorch fwd+bwd",
                                       "tj fwd+bwd / jnp fwd", "tj grad off / jnp fwd"]) + " |")
    print("|---" * 9 + "|")
    for size, n, rounds in ((16, n_small // 5, 31), (1024, max(n_big // 4, 2), 15)):
        t, r = chain(size, n, rounds)
        v = list(t.values())
        ratio = list(r.values())
        print(f"| {size}x{size} | " + " | ".join(f"{x * 1e6:.1f} µs" for x in v) +
              f" | {ratio[2]:.2f}x | {ratio[1]:.2f}x |")
    print("\nRatios are medians of per-round ratios; rounds interleave the variants.")

    steps = 200 if args.quick else 1000
    rss_steps = 2000 if args.quick else 10_000
    t_tj, t_pt, start, after_1k, end = mlp_step(steps, rss_steps)
    print("\n## Seed MLP training step (Linear(4,8), ReLU, Linear(8,1), MSE, SGD)\n")
    print(f"torchjax {t_tj * 1e6:.0f} µs/step, PyTorch {t_pt * 1e6:.0f} µs/step, "
          f"ratio {t_tj / t_pt:.2f}x")
    print(f"RSS over {rss_steps} steps: start {start:.1f} MB, after 1000 steps "
          f"{after_1k:.1f} MB, end {end:.1f} MB")


if __name__ == "__main__":
    main()
