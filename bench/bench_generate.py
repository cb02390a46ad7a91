"""Cold autoregressive generation: every token is a new sequence length, so every op of the
model meets a new shape at every step (issue 12, the host tier: docs/design.md).

    python bench/bench_generate.py                 # 3 rounds of each variant, ~2 minutes
    python bench/bench_generate.py --rounds 1 --tokens 8

The model is makemore's Transformer (github.com/karpathy/makemore) written here with the
PyTorch API: 4 blocks, d 64, 4 heads, causal attention with masked_fill/softmax, vocabulary 27,
block size 16; it samples `--tokens` tokens for a batch of 10 under no_grad, each step
feeding the whole sequence so far (as makemore's generate() does). Every measurement is a
fresh process with an empty cache directory (cold). Variants: torchjax (host tier on, the
default), torchjax-compiled (TORCHJAX_HOST_TIER=0: every op compiled), PyTorch eager.
Reported: the generation's wall time (model built before), programs compiled during it, calls
the host tier evaluated, and the process's whole wall time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

VOCAB, BLOCK, LAYERS, D, HEADS = 27, 16, 4, 64, 4


def build(lib):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(D, 3 * D)
            self.c_proj = nn.Linear(D, D)
            self.register_buffer("bias", lib.tril(lib.ones(BLOCK, BLOCK))
                                 .view(1, 1, BLOCK, BLOCK))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(D, dim=2)
            q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.attn = Attention()
            self.fc, self.proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.proj(F.gelu(self.fc(self.ln_2(x))))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(BLOCK, D)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(D)
            self.lm_head = nn.Linear(D, VOCAB, bias=False)

        def forward(self, idx):
            pos = lib.arange(0, idx.size(1), dtype=lib.long).unsqueeze(0)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    return Transformer()


def generate(lib, model, tokens):
    idx = lib.zeros(10, 1, dtype=lib.long)
    with lib.no_grad():
        for _ in range(tokens):
            cond = idx if idx.size(1) <= BLOCK else idx[:, -BLOCK:]
            logits = model(cond)[:, -1, :]
            probs = lib.nn.functional.softmax(logits, dim=-1)
            idx = lib.cat((idx, lib.multinomial(probs, num_samples=1)), dim=1)
    return idx


def child(variant, tokens):
    start = time.perf_counter()
    if variant == "torch":
        import torch as lib
    else:
        import torchjax as lib
    lib.manual_seed(0)
    model = build(lib)
    model.eval()
    t0 = time.perf_counter()
    before = lib.compile_stats() if hasattr(lib, "compile_stats") else None
    out = generate(lib, model, tokens)
    gen = time.perf_counter() - t0
    after = lib.compile_stats() if before is not None else None
    return {"generate_s": gen, "shape": list(out.shape), "start_s": t0 - start,
            "compiled": after.compiled - before.compiled if after else 0,
            "host_calls": getattr(after, "host_calls", 0) - getattr(before, "host_calls", 0)
            if after else 0}


def spawn(variant, tokens):
    env = dict(os.environ)
    env.pop("TORCHJAX_CACHE", None)
    env["TORCHJAX_HOST_TIER"] = "0" if variant == "torchjax-compiled" else "1"
    with tempfile.TemporaryDirectory() as cache:
        env["TORCHJAX_CACHE_DIR"] = cache
        t = time.perf_counter()
        res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", variant,
                              "--tokens", str(tokens)], capture_output=True, text=True, env=env)
        whole = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"{variant} failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["whole_s"] = whole
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="torchjax,torchjax-compiled,torch")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.tokens)))
        return
    variants = args.variants.split(",")
    runs = {v: [] for v in variants}
    for r in range(args.rounds):  # (rounds alternate the variants: the VM's noise hits all)
        for v in variants:
            runs[v].append(spawn(v, args.tokens))
            print(f"round {r} {v}: {runs[v][-1]['generate_s']:.2f} s", file=sys.stderr)
    print(f"load average at the end {os.getloadavg()[0]:.1f}\n")
    print("| variant | generate s (median, range) | programs compiled | host-tier calls | "
          "whole process s |\n|---|---|---|---|---|")
    for v in variants:
        g = [x["generate_s"] for x in runs[v]]
        print(f"| {v} | {statistics.median(g):.2f} ({min(g):.2f}-{max(g):.2f}) | "
              f"{statistics.median(x['compiled'] for x in runs[v]):.0f} | "
              f"{statistics.median(x['host_calls'] for x in runs[v]):.0f} | "
              f"{statistics.median(x['whole_s'] for x in runs[v]):.1f} |")


if __name__ == "__main__":
    main()
