"""CPU convolutions (issue 14): torchjax eager against PyTorch eager, and the lowerings measured.

    python bench/bench_conv.py            # full run
    python bench/bench_conv.py --quick    # fewer rounds

Rows, each group in interleaved rounds in one process (bench_eager.interleaved), so the noise of
the shared 2-core VM hits every column alike; a ratio is the median of the per-round ratios:
- the issue's CNN training step, Conv(1,32,3)-ReLU-Conv(32,64,3)-ReLU-MaxPool2-Linear(9216,128)-
  Linear(128,10) on 64 28x28 images, cross-entropy, Adam: PyTorch eager vs torchjax eager;
- the issue's single convolution, 64x32x26x26 by 64x32x3x3, forward + backward (input and
  weight gradients) as one jitted program: lax.conv_general_dilated, im2col (nine shifted
  slices concatenated, one matmul, differentiated by JAX), torchjax's CPU form
  (_ops/conv_cpu.py), then torchjax eager (two calls: forward, backward) and PyTorch eager;
- a stride-2 transposed convolution (32x64x12x12 by 64x32x3x3, output_padding 1), max_pool2d
  and avg_pool2d (2x2 over 64x64x24x24), forward + backward, torchjax eager vs PyTorch eager.
To see the lowering's effect on the eager rows, run this file against another checkout's
source (PYTHONPATH=/path/to/src) and compare the ratios.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import torch
from bench_eager import interleaved  # same interleaved rounds and per-round ratios
from jax import lax

import torchjax

try:
    from torchjax._ops import conv_cpu
except ImportError:  # a checkout from before the CPU form
    conv_cpu = None


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(9216, 128),
                         nn.Linear(128, 10))


def cnn_step(lib, x_np, y_np):
    lib.manual_seed(0)
    model = cnn(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def run():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())  # .item() waits for the step, in both libraries
    return run


def report(title, fns, number, rounds):
    med, ratio = interleaved(fns, number, rounds)
    base = next(iter(fns))
    print(title)
    for k in fns:
        print(f"  {k:<22} {med[k] * 1e3:9.2f} ms   {ratio[k]:5.2f}x {base}")
    return med, ratio


# -- the single convolution, as jitted JAX programs --------------------------------------------

def lax_conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def im2col_conv(x, w):
    """Nine shifted slices concatenated along channels, then one matmul."""
    k = w.shape[2]
    ho, wo = x.shape[2] - k + 1, x.shape[3] - k + 1
    cols = jnp.concatenate([x[:, :, i:i + ho, j:j + wo] for i in range(k) for j in range(k)],
                           axis=1)  # (N, k*k*C, ho, wo), tap-major
    wm = w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1)
    return jnp.einsum("ok,nkhw->nohw", wm, cols)


def jitted_fwd_bwd(conv, x, w, ct):
    step = jax.jit(lambda x, w, ct: jax.vjp(conv, x, w)[1](ct))
    return lambda: jax.block_until_ready(step(x, w, ct))


def eager_fwd_bwd(lib, call, arrays, ct_np):
    """One call and its backward in eager mode, on tensors made once."""
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    ct = lib.tensor(ct_np)

    def run():
        for t in tensors:
            t.grad = None
        call(lib.nn.functional, *tensors).backward(ct)
        return float(tensors[0].grad.reshape(-1)[0])  # waits for the backward
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = 5 if args.quick else 11
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), jax "
          f"{jax.__version__} ({jax.default_backend()}), torchjax from "
          f"{torchjax.__file__.rsplit('/', 2)[0]}, CPU form: "
          f"{'yes' if conv_cpu is not None else 'no'}")

    x = rng.uniform(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=64)
    report("CNN training step (issue 14), batch 64, Adam",
           {"PyTorch eager": cnn_step(torch, x, y),
            "torchjax eager": cnn_step(torchjax, x, y)}, 2, rounds)

    x = rng.normal(size=(64, 32, 26, 26)).astype(np.float32)
    w = (rng.normal(size=(64, 32, 3, 3)) * 0.1).astype(np.float32)
    ct = rng.normal(size=(64, 64, 24, 24)).astype(np.float32)
    jx, jw, jct = jnp.asarray(x), jnp.asarray(w), jnp.asarray(ct)
    fns = {"PyTorch eager": eager_fwd_bwd(torch, lambda F, x, w: F.conv2d(x, w), (x, w), ct),
           "lax.conv (jit)": jitted_fwd_bwd(lax_conv, jx, jw, jct),
           "im2col (jit)": jitted_fwd_bwd(im2col_conv, jx, jw, jct)}
    if conv_cpu is not None:
        fns["CPU form (jit)"] = jitted_fwd_bwd(
            lambda x, w: conv_cpu.cpu_conv(x, w, (1, 1), (0, 0), (1, 1), 1), jx, jw, jct)
    fns["torchjax eager"] = eager_fwd_bwd(torchjax, lambda F, x, w: F.conv2d(x, w), (x, w), ct)
    report("conv2d 64x32x26x26 by 64x32x3x3, forward + backward", fns, 1, rounds)

    x = rng.normal(size=(32, 64, 12, 12)).astype(np.float32)
    w = (rng.normal(size=(64, 32, 3, 3)) * 0.1).astype(np.float32)
    ct = rng.normal(size=(32, 32, 24, 24)).astype(np.float32)

    def up(F, x, w):
        return F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    report("conv_transpose2d 32x64x12x12 by 64x32x3x3, stride 2, forward + backward",
           {"PyTorch eager": eager_fwd_bwd(torch, up, (x, w), ct),
            "torchjax eager": eager_fwd_bwd(torchjax, up, (x, w), ct)}, 2, rounds)

    x = rng.normal(size=(64, 64, 24, 24)).astype(np.float32)
    ct = rng.normal(size=(64, 64, 12, 12)).astype(np.float32)
    for name in ("max_pool2d", "avg_pool2d"):
        def pool(F, x, name=name):
            return getattr(F, name)(x, 2)
        report(f"{name} 2x2 over 64x64x24x24, forward + backward",
               {"PyTorch eager": eager_fwd_bwd(torch, pool, (x,), ct),
                "torchjax eager": eager_fwd_bwd(torchjax, pool, (x,), ct)}, 3, rounds)


if __name__ == "__main__":
    main()
