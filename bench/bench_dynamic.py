"""Eager steps whose graph changes (issue 14): torchjax eager against PyTorch eager, one process.

    python bench/bench_dynamic.py                  # every row (about four minutes)
    python bench/bench_dynamic.py --rows tree_new,chain --rounds 5

Rows (the same PyTorch-API code runs with `torch` and with `torchjax`; rounds alternate
between the libraries, so the shared VM's noise hits both; the ratio is the median of the
per-round ratios):
- tree_new: a recursive tree net over a NEW random binary tree of 32 leaves every sample
  (64-dim embeddings, h = tanh(Linear(cat(hl, hr))), loss = root.sum(), SGD);
- tree_same: the same net, one tree shape repeated;
- transformer: a 2-layer encoder (d 128, 4 heads, FF 512, seq 64, batch 16), attention
  written with matmul/softmax, Adam;
- chain: `(x * 2 + 1).sum()` on 16x16 under no_grad (also a bare jax.jit of the same chain);
- mlp_seed: Linear(4, 8)-ReLU-Linear(8, 1), MSE, SGD, batch 10;
- mlp_big: MLP 784-1024-1024-10, batch 256, cross-entropy, Adam.
`--profile ROW` prints a cProfile of torchjax's step instead.

PyTorch runs the transformer row with one intra-op thread (`torch.set_num_threads(1)`): on this
shared 2-core machine its two threads fight each other and the other jobs (its step took
~10x longer with two: 936 ms against 78-80 ms in eager17's check). `--torch-threads N` pins
every row instead (0: PyTorch's default everywhere).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch
from bench_eager import interleaved  # interleaved rounds, median per-round ratios

import torchjax

LEAVES, DIM = 32, 64


def random_tree(rng: random.Random, lo: int, hi: int):
    """A random binary tree over leaves lo..hi-1: an int for a leaf, a pair for a node."""
    if hi - lo == 1:
        return lo
    cut = rng.randint(lo + 1, hi - 1)
    return (random_tree(rng, lo, cut), random_tree(rng, cut, hi))


def tree_net(lib):
    """The tree net's pieces: (embedding, optimizer, the fixed tree, the leaf tokens, encode),
    where encode(tree, leaves) folds the tree with h = tanh(Linear(cat(hl, hr)))."""
    lib.manual_seed(0)
    nn = lib.nn
    emb = nn.Embedding(100, DIM)
    cell = nn.Linear(2 * DIM, DIM)
    params = list(emb.parameters()) + list(cell.parameters())
    opt = lib.optim.SGD(params, lr=0.01)
    fixed = random_tree(random.Random(1), 0, LEAVES)
    tokens = lib.tensor(np.random.default_rng(0).integers(0, 100, LEAVES))

    def encode(node, leaves):
        if isinstance(node, int):
            return leaves[node]
        return lib.tanh(cell(lib.cat((encode(node[0], leaves), encode(node[1], leaves)), 1)))
    return emb, opt, fixed, tokens, encode


def tree_step(lib, new_shape: bool, seed: int = 0):
    """One SGD step of the tree net; `seed` picks the sequence of new trees (two torchjax
    steps in one process must not share it: the second would meet every tree a second time,
    and fuse each one's backward)."""
    emb, opt, fixed, tokens, encode = tree_net(lib)
    rng = random.Random(seed)

    def step():
        tree = random_tree(rng, 0, LEAVES) if new_shape else fixed
        opt.zero_grad()
        leaves = emb(tokens).split(1)
        loss = encode(tree, leaves).sum()
        loss.backward()
        opt.step()
        return float(loss.item())
    return step


class Encoder:
    """One post-norm transformer encoder layer, attention by matmul and softmax."""

    def __init__(self, lib, d, heads, ff):
        nn = lib.nn
        self.lib, self.heads = lib, heads
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def parameters(self):
        return [p for m in (self.qkv, self.out, self.ff1, self.ff2, self.n1, self.n2)
                for p in m.parameters()]

    def __call__(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).view(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = self.lib.softmax(q @ k.transpose(-2, -1) / (d // h) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = self.n1(x + self.out(y))
        return self.n2(x + self.ff2(self.lib.relu(self.ff1(x))))


def transformer_step(lib):
    lib.manual_seed(0)
    layers = [Encoder(lib, 128, 4, 512) for _ in range(2)]
    opt = lib.optim.Adam([p for m in layers for p in m.parameters()], lr=1e-3)
    x = lib.tensor(np.random.default_rng(0).normal(size=(16, 64, 128)).astype(np.float32))

    def step():
        opt.zero_grad()
        h = x
        for m in layers:
            h = m(h)
        loss = (h * h).mean()
        loss.backward()
        opt.step()
        return float(loss.item())
    return step


def chain_step(lib):
    x = lib.tensor(np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32))

    def step():
        with lib.no_grad():
            y = (x * 2 + 1).sum()
        if isinstance(y, torchjax.Tensor):
            y._data.block_until_ready()
        return y
    return step


def jit_chain_step():
    f = jax.jit(lambda a: (a * 2 + 1).sum())
    x = jnp.asarray(np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32))
    return lambda: f(x).block_until_ready()


def mlp_step(lib, sizes, batch, opt_name, loss_name):
    lib.manual_seed(0)
    nn = lib.nn
    mods = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        mods += [nn.Linear(a, b)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    model = nn.Sequential(*mods)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.normal(size=(batch, sizes[0])).astype(np.float32))
    if loss_name == "mse":
        y = lib.tensor(rng.normal(size=(batch, sizes[-1])).astype(np.float32))
        loss_fn = nn.MSELoss()
    else:
        y = lib.tensor(rng.integers(0, sizes[-1], batch))
        loss_fn = nn.CrossEntropyLoss()
    opt = (lib.optim.SGD(model.parameters(), lr=0.01) if opt_name == "sgd"
           else lib.optim.Adam(model.parameters(), lr=1e-3))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())
    return step


# rows where PyTorch runs with one intra-op thread unless --torch-threads says otherwise
ONE_THREAD = frozenset({"transformer"})

ROWS = {  # name: (title, step factory over a library, calls per round)
    "tree_new": ("tree net, a new random tree over 32 leaves every sample, SGD",
                 lambda lib: tree_step(lib, True), 10),
    "tree_same": ("tree net, one tree shape repeated, SGD", lambda lib: tree_step(lib, False), 10),
    "transformer": ("2-layer transformer encoder d128 h4 ff512, seq 64, batch 16, Adam",
                    transformer_step, 2),
    "chain": ("3-op chain (x*2+1).sum() on 16x16, no grad", chain_step, 200),
    "mlp_seed": ("seed MLP 4-8-1, SGD", lambda lib: mlp_step(lib, (4, 8, 1), 10, "sgd", "mse"),
                 100),
    "mlp_big": ("MLP 784-1024-1024-10, batch 256, Adam",
                lambda lib: mlp_step(lib, (784, 1024, 1024, 10), 256, "adam", "ce"), 2),
}


def run_row(name, rounds, threads=None, clock="wall"):
    title, make, number = ROWS[name]
    default = torch.get_num_threads()
    if threads is None:
        threads = 1 if name in ONE_THREAD else default
    torch.set_num_threads(threads or default)
    try:
        _run_row(name, title, make, number, rounds, torch.get_num_threads(), clock)
    finally:
        torch.set_num_threads(default)


def _run_row(name, title, make, number, rounds, threads, clock="wall"):
    # each row is its own workload, as in a process of its own: grad deferral's cool-down
    # (one per process) left by an earlier row (new trees, the seed MLP's short forwards)
    # would keep the next row's grad ops eager for up to 256 steps (docs/performance_eager.md)
    from torchjax import _deferred_grad
    getattr(_deferred_grad, "reset", lambda: None)()  # (an older checkout has none)
    fns = {"torch": make(torch), "torchjax": make(torchjax)}
    if name == "chain":
        fns["jax.jit"] = jit_chain_step()
    if TEMPLATE_AB[0]:  # torchjax again with the template programs off, in the same rounds
        # (its own trees: the same seed would meet every tree a second time)
        other = tree_step(torchjax, True, seed=1) if name == "tree_new" else make(torchjax)
        fns["templates off"] = _switched_off(other)
    for f in fns.values():  # compile every program (new tree shapes keep coming: a few)
        for _ in range(20):
            f()
        settle(f)
    if clock == "thread":
        # the calling thread's CPU time: steadier than wall time on a loaded machine, but
        # blind to other threads' work (PyTorch's intra-op pool, XLA's): small-op rows only
        from bench_deferred_ab import interleaved as interleaved_on
        med, ratio = interleaved_on(fns, number, rounds, time.thread_time)
    else:
        med, ratio = interleaved(fns, number, rounds)
    extra = (f", bare jax.jit {med['jax.jit'] * 1e6:.1f} us" if "jax.jit" in med else "")
    if "templates off" in med:
        extra += f", templates off **{ratio['templates off']:.2f}x**"
    unit, scale = ("us", 1e6) if med["torch"] < 1e-3 else ("ms", 1e3)
    print(f"| {title} | {med['torch'] * scale:.2f} {unit} ({threads} thr) | "
          f"{med['torchjax'] * scale:.2f} {unit} | **{ratio['torchjax']:.2f}x** |{extra}",
          flush=True)


TEMPLATE_AB = [False]


def _switched_off(step):
    """step with _deferred_template off while it runs (--template-ab), with a grad-deferral
    cool-down of its own (the process's one would carry one side's misses to the other)."""
    from torchjax import _deferred_grad, _deferred_template
    state = [[0], [0], [_deferred_grad.COOL_STEPS], [False], [False]]
    cells = (_deferred_grad._MISSES, _deferred_grad._COOL, _deferred_grad._NEXT_COOL,
             _deferred_grad._SHORT, _deferred_grad._NEW)

    def swap():
        for mine, cell in zip(state, cells):
            mine[0], cell[0] = cell[0], mine[0]

    def off():
        _deferred_template.ON[0] = False
        swap()
        try:
            return step()
        finally:
            swap()
            _deferred_template.ON[0] = True
    return off


def settle(step):
    """Wait for torchjax's programs compiling on its worker threads (a deferred sequence's,
    a fused backward's), then run a few more steps on them: the rows time steady steps. On
    a loaded machine a program compiled in the background can take longer than the warm-up
    steps, and the timed steps then ran op by op."""
    from torchjax import _deferred_programs
    from torchjax._autograd import engine
    _deferred_programs.wait()
    busy = engine._compiling[0]
    if busy is not None:
        busy.thread.join()
    for _ in range(10):
        step()


def profile_row(name, steps):
    step = ROWS[name][1](torchjax)
    for _ in range(20):
        step()
    settle(step)
    torchjax.compile_stats(reset=True)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    print(f"compiles during the profile: {torchjax.compile_stats()}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--profile", default=None, help="a row name: cProfile torchjax's step")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="PyTorch's intra-op threads for every row (0: its default); by "
                         "default one thread for the transformer row, the default elsewhere")
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall time, or the calling thread's CPU time (small-op rows)")
    ap.add_argument("--template-ab", action="store_true",
                    help="also torchjax with _deferred_template off, in the same rounds")
    ap.add_argument("--batched", action="store_true",
                    help="first backward of a new graph level-batched (engine.BATCHED)")
    args = ap.parse_args()
    TEMPLATE_AB[0] = args.template_ab
    if args.batched:
        from torchjax._autograd import engine
        engine.BATCHED = True
    if args.profile:
        profile_row(args.profile, 20)
        return
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), jax {jax.__version__}")
    print("| workload | PyTorch eager | torchjax eager | ratio |\n|---|---|---|---|")
    for name in args.rows.split(","):
        run_row(name, args.rounds, args.torch_threads, args.clock)


if __name__ == "__main__":
    main()
