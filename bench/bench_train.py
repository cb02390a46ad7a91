"""Training-step cost: torchjax eager against PyTorch eager, side by side in one process.

    python bench/bench_train.py            # full run
    python bench/bench_train.py --quick    # fewer rounds

Two steps, each zero_grad + forward + cross-entropy + backward + Adam step, with the same
code in both libraries (only the module differs):
- the MLP 784-1024-1024-10 on a batch of 256 (the issue's target: within 1.5x of PyTorch);
- the demo's small CNN (examples/train_digits.py) on a batch of 64 8x8 digits.
Rounds alternate between the libraries (interleaved), so noise on the shared VM hits both;
the ratio is the median of the per-round ratios.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from bench_eager import interleaved  # same interleaved rounds and per-round ratios

import torchjax


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def make_step(lib, build, x_np, y_np):
    lib.manual_seed(0)
    model = build(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def run():
        return float(step().item())  # .item() waits for the step, in both libraries
    return run


def bench(name, build, x_np, y_np, number, rounds):
    fns = {"torch": make_step(torch, build, x_np, y_np),
           "torchjax": make_step(torchjax, build, x_np, y_np)}
    med, ratio = interleaved(fns, number, rounds)
    print(f"{name}: torch {med['torch'] * 1e3:.2f} ms/step, torchjax "
          f"{med['torchjax'] * 1e3:.2f} ms/step, ratio {ratio['torchjax']:.2f}x")
    return ratio["torchjax"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = 5 if args.quick else 15
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), torchjax on "
          f"{torchjax.__name__} / jax {__import__('jax').__version__}")
    x = rng.normal(size=(256, 784)).astype(np.float32)
    y = rng.integers(0, 10, size=256)
    r = bench("MLP 784-1024-1024-10, batch 256, Adam", mlp, x, y, 5, rounds)
    print(f"  target: within 1.5x of PyTorch eager -> {'met' if r <= 1.5 else 'NOT met'}")
    x = rng.uniform(size=(64, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, size=64)
    bench("digits CNN, batch 64, Adam", cnn, x, y, 20, rounds)


if __name__ == "__main__":
    main()
