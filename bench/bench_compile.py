"""Compiled mode: a whole training step as one program, against hand-written jax.jit + optax.

    python bench/bench_compile.py                       # full run
    python bench/bench_compile.py --quick               # fewer rounds and samples, no cold
                                                        # Inductor compiles
    python bench/bench_compile.py --skip torch-compile  # leave a column out (repeatable)
    python bench/bench_compile.py --json out.json       # also write every raw number

Four training steps, each the same math in every column (same initial weights, same batch):
- seed-mlp: Linear(4, 8), tanh, Linear(8, 1), MSE, SGD lr 0.01, batch 16;
- mlp: 784-1024-1024-10 with ReLU, cross-entropy, Adam lr 1e-3, batch 256;
- cnn: examples/train_digits.py's DigitsCNN (2 conv + 2 max-pool + dropout 0.2 + 2 linear)
  on 8x8 inputs, cross-entropy, Adam lr 1e-3, batch 64;
- gpt: 2 pre-LayerNorm blocks, d_model 128, 4 heads, feed-forward 512 with GELU, causal
  scaled_dot_product_attention, token + position embeddings, seq 64, vocab 256, batch 16,
  next-token cross-entropy, AdamW lr 3e-4 weight_decay 0.01.

Columns: `jax` (the baseline: a params pytree, jax.value_and_grad, optax, one jax.jit with
params and optimizer state donated), `torchjax-compiled` (torchjax.compile(step)),
`torchjax-eager` (the same step uncompiled), `torch-eager`, `torch-compile` (inductor).

Three measurements:
- steady state: all columns of a model in one process, warmed up, then timed in interleaved
  rounds (bench_eager.interleaved); a timed call is one step ending with a host sync (the
  loss as a Python float); ratio = median over rounds of column time / jax time;
- first call: one fresh subprocess per column and model, every compile cache off, timing the
  first step (trace + compile + run) after the model and optimizer are built;
- dynamic batch: the mlp step over batch sizes cycling through 8 values, counting the XLA
  programs compiled by torchjax.compile with and without dynamic=True (and by jax.jit and
  torch.compile).

Compiles dominate the run time: at a load average of 10 on the 2-core VM (other jobs) the
full run took 45 minutes and --quick 17; a quiet machine should need about a third of that.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

COLUMNS = ("jax", "torchjax-compiled", "torchjax-eager", "torch-eager", "torch-compile")
BASELINE = "jax"
# the targets for torchjax-compiled against the jax column
STEADY_TARGET = {"seed-mlp": 1.2, "mlp": 1.05, "cnn": 1.05, "gpt": 1.05}
FIRST_CALL_TARGET = 1.5
BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
TRACE = "/jax/core/compile/jaxpr_trace_duration"

# GPT sizes
VOCAB, SEQ, D_MODEL, HEADS, FF, LAYERS = 256, 64, 128, 4, 512, 2


# -- parameter shapes, named as the modules' state_dict names them ------------------------------

def _linear_shapes(prefix, n_in, n_out, bias=True):
    shapes = {f"{prefix}.weight": (n_out, n_in)}
    if bias:
        shapes[f"{prefix}.bias"] = (n_out,)
    return shapes


def _norm_shapes(prefix, n):
    return {f"{prefix}.weight": (n,), f"{prefix}.bias": (n,)}


def param_shapes(model: str) -> dict:
    if model == "seed-mlp":
        return {**_linear_shapes("0", 4, 8), **_linear_shapes("2", 8, 1)}
    if model == "mlp":
        return {**_linear_shapes("0", 784, 1024), **_linear_shapes("2", 1024, 1024),
                **_linear_shapes("4", 1024, 10)}
    if model == "cnn":
        return {"features.0.weight": (16, 1, 3, 3), "features.0.bias": (16,),
                "features.3.weight": (32, 16, 3, 3), "features.3.bias": (32,),
                **_linear_shapes("classifier.0", 128, 64), **_linear_shapes("classifier.3", 64, 10)}
    shapes = {"tok.weight": (VOCAB, D_MODEL), "pos.weight": (SEQ, D_MODEL)}
    for i in range(LAYERS):
        b = f"blocks.{i}"
        shapes.update({**_norm_shapes(f"{b}.ln1", D_MODEL),
                       **_linear_shapes(f"{b}.qkv", D_MODEL, 3 * D_MODEL),
                       **_linear_shapes(f"{b}.proj", D_MODEL, D_MODEL),
                       **_norm_shapes(f"{b}.ln2", D_MODEL),
                       **_linear_shapes(f"{b}.fc1", D_MODEL, FF),
                       **_linear_shapes(f"{b}.fc2", FF, D_MODEL)})
    return {**shapes, **_norm_shapes("ln_f", D_MODEL), **_linear_shapes("head", D_MODEL, VOCAB,
                                                                        bias=False)}


def initial_weights(model: str) -> dict:
    """The same float32 weights for every column, drawn with numpy per parameter name (so a
    process that never imports torch gets them too): uniform +-1/sqrt(fan_in) as PyTorch's
    Linear and Conv2d, ones and zeros for LayerNorm."""
    shapes = param_shapes(model)
    out = {}
    for name, shape in shapes.items():
        rng = np.random.default_rng(zlib.crc32(f"{model}/{name}".encode()))
        if ".ln" in name or name.startswith("ln_"):
            out[name] = (np.ones if name.endswith("weight") else np.zeros)(shape, np.float32)
            continue
        weight = shapes[name[:-len("bias")] + "weight"] if name.endswith("bias") else shape
        bound = 1 / math.sqrt(math.prod(weight[1:]))
        out[name] = rng.uniform(-bound, bound, shape).astype(np.float32)
    return out


def batch(model: str, size: int | None = None, seed: int = 0):
    """One batch as numpy arrays (x, y); labels and tokens are int64 (PyTorch's index type)."""
    rng = np.random.default_rng(seed)
    if model == "seed-mlp":
        n = size or 16
        return (rng.standard_normal((n, 4)).astype(np.float32),
                rng.standard_normal((n, 1)).astype(np.float32))
    if model == "mlp":
        n = size or 256
        return rng.standard_normal((n, 784)).astype(np.float32), rng.integers(0, 10, n)
    if model == "cnn":
        n = size or 64
        return rng.uniform(size=(n, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, n)
    tokens = rng.integers(0, VOCAB, (size or 16, SEQ + 1))
    return tokens[:, :-1], tokens[:, 1:]


# -- the PyTorch-style models: one definition, run with torch or with torchjax ------------------

def build_module(lib, model: str):
    nn = lib.nn
    if model == "seed-mlp":
        return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    if model == "mlp":
        return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))
    if model == "cnn":
        class DigitsCNN(nn.Module):  # examples/train_digits.py
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(
                    nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
                self.classifier = nn.Sequential(nn.Linear(32 * 2 * 2, 64), nn.ReLU(),
                                                nn.Dropout(0.2), nn.Linear(64, 10))

            def forward(self, x):
                return self.classifier(self.features(x).flatten(1))
        return DigitsCNN()

    F = nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.fc1, self.fc2 = nn.Linear(D_MODEL, FF), nn.Linear(FF, D_MODEL)

        def forward(self, x):
            b, t, d = x.shape
            qkv = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(SEQ, D_MODEL)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1], device=idx.device))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))
    return GPT()


def torch_style_step(lib, model: str, compiled: bool, x_np, y_np, **compile_kw):
    """(run, step): run() is one training step of `lib` ending with loss.item()."""
    lib.manual_seed(0)  # dropout masks
    module = build_module(lib, model)
    module.load_state_dict({k: lib.tensor(v) for k, v in initial_weights(model).items()})
    module.train()
    params = module.parameters()
    opt = (lib.optim.SGD(params, lr=0.01) if model == "seed-mlp" else
           lib.optim.AdamW(params, lr=3e-4, weight_decay=0.01) if model == "gpt" else
           lib.optim.Adam(params, lr=1e-3))
    F = lib.nn.functional

    def step(x, y):
        opt.zero_grad()
        out = module(x)
        if model == "seed-mlp":
            loss = F.mse_loss(out, y)
        else:
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = lib.compile(step, **compile_kw)
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def run(x=x, y=y):
        return step(x, y).item()
    return run, step


# -- the baseline: the same models written directly in JAX --------------------------------------

def jax_params(model: str):
    """The initial weights as a JAX pytree; Linear weights stored (in, out) as JAX code does."""
    import jax.numpy as jnp
    w = {k: jnp.asarray(v) for k, v in initial_weights(model).items()}

    def lin(prefix, bias=True):
        p = {"w": w[f"{prefix}.weight"].T}
        if bias:
            p["b"] = w[f"{prefix}.bias"]
        return p

    def norm(prefix):
        return {"g": w[f"{prefix}.weight"], "b": w[f"{prefix}.bias"]}

    if model == "seed-mlp":
        return [lin("0"), lin("2")]
    if model == "mlp":
        return [lin("0"), lin("2"), lin("4")]
    if model == "cnn":
        return {"conv": [{"w": w[f"features.{i}.weight"], "b": w[f"features.{i}.bias"]}
                         for i in (0, 3)],
                "fc": [lin("classifier.0"), lin("classifier.3")]}
    return {"tok": w["tok.weight"], "pos": w["pos.weight"],
            "blocks": [{"ln1": norm(f"blocks.{i}.ln1"), "qkv": lin(f"blocks.{i}.qkv"),
                        "proj": lin(f"blocks.{i}.proj"), "ln2": norm(f"blocks.{i}.ln2"),
                        "fc1": lin(f"blocks.{i}.fc1"), "fc2": lin(f"blocks.{i}.fc2")}
                       for i in range(LAYERS)],
            "ln_f": norm("ln_f"), "head": lin("head", bias=False)}


def jax_loss_fn(model: str):
    """loss(params, x, y, key) of the model in plain jax.numpy."""
    import jax
    import jax.numpy as jnp
    import optax

    def dense(p, x):
        return x @ p["w"] + p["b"] if "b" in p else x @ p["w"]

    def cross_entropy(logits, y):
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    if model == "seed-mlp":
        def loss(p, x, y, key):
            return jnp.mean((dense(p[1], jnp.tanh(dense(p[0], x))) - y) ** 2)
        return loss
    if model == "mlp":
        def loss(p, x, y, key):
            h = jax.nn.relu(dense(p[0], x))
            return cross_entropy(dense(p[2], jax.nn.relu(dense(p[1], h))), y)
        return loss
    if model == "cnn":
        def loss(p, x, y, key):
            for c in p["conv"]:
                x = jax.lax.conv_general_dilated(x, c["w"], (1, 1), ((1, 1), (1, 1)),
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
                x = jax.nn.relu(x + c["b"][:, None, None])
                x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                          "VALID")
            h = jax.nn.relu(dense(p["fc"][0], x.reshape(x.shape[0], -1)))
            keep = jax.random.bernoulli(key, 0.8, h.shape)  # nn.Dropout(0.2) in training mode
            return cross_entropy(dense(p["fc"][1], jnp.where(keep, h / 0.8, 0)), y)
        return loss

    def layer_norm(p, x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]

    def loss(p, idx, y, key):
        b, t = idx.shape
        hd = D_MODEL // HEADS
        causal = jnp.tril(jnp.ones((t, t), bool))
        # activations stay (tokens, features): a dense layer on (b, t, d) differentiates
        # into a dot with two contracting dimensions, which XLA's CPU backend runs about 2x
        # slower than the same product on 2-D operands (the GPT step took 1.2x longer)
        x = (p["tok"][idx] + p["pos"][:t]).reshape(b * t, D_MODEL)
        for blk in p["blocks"]:
            qkv = dense(blk["qkv"], layer_norm(blk["ln1"], x)).reshape(b, t, 3, HEADS, hd)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(hd)
            a = jax.nn.softmax(jnp.where(causal, s, -jnp.inf), axis=-1)
            x = x + dense(blk["proj"], jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b * t, -1))
            h = jax.nn.gelu(dense(blk["fc1"], layer_norm(blk["ln2"], x)), approximate=False)
            x = x + dense(blk["fc2"], h)
        logits = dense(p["head"], layer_norm(p["ln_f"], x))
        return cross_entropy(logits, y.reshape(-1))
    return loss


def jax_step(model: str, x_np, y_np):
    """run() = one hand-written jax.jit training step ending with float(loss)."""
    import jax
    import jax.numpy as jnp
    import optax

    # PyTorch's defaults: Adam/AdamW betas (0.9, 0.999), eps 1e-8 outside the square root
    tx = (optax.sgd(0.01) if model == "seed-mlp" else
          optax.adamw(3e-4, weight_decay=0.01) if model == "gpt" else optax.adam(1e-3))
    loss_fn = jax_loss_fn(model)

    if model == "cnn":  # dropout: the key is state, split every step
        def step(params, opt_state, key, x, y):
            key, sub = jax.random.split(key)
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y, sub)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, key, loss
    else:
        def step(params, opt_state, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y, None)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

    # donate what the step replaces, as a JAX training loop does
    step = jax.jit(step, donate_argnums=(0, 1, 2) if model == "cnn" else (0, 1))
    # importing torchjax turns x64 on for the whole process; the baseline runs as it would in
    # a pure-JAX process (float32 bias corrections in optax, int32 indices)
    x64_off = jax.enable_x64(False)
    with x64_off:
        params = jax_params(model)
        state = [params, tx.init(params)] + ([jax.random.key(0)] if model == "cnn" else [])
        x = jnp.asarray(x_np, jnp.int32 if model == "gpt" else jnp.float32)
        y = jnp.asarray(y_np, jnp.float32 if model == "seed-mlp" else jnp.int32)

    def run(x=x, y=y):
        with x64_off:
            *state[:], loss = step(*state, x, y)  # the new params, optimizer state (and key)
            return float(loss)
    return run, step


def make_run(column: str, model: str, x_np, y_np, **compile_kw):
    if column == "jax":
        return jax_step(model, x_np, y_np)
    lib = importlib.import_module("torch" if column.startswith("torch-") else "torchjax")
    return torch_style_step(lib, model, column.endswith("compiled") or column.endswith("compile"),
                            x_np, y_np, **compile_kw)


# -- jax.monitoring: programs compiled --------------------------------------------------------

class CompileCounter:
    """Counts XLA compiles and sums compile and trace seconds (jax.monitoring events)."""

    def __init__(self):
        import jax
        self.compiles = 0
        self.compile_s = 0.0
        self.trace_s = 0.0

        def listen(event, duration_secs, **kw):
            if event == BACKEND_COMPILE:
                self.compiles += 1
                self.compile_s += duration_secs
            elif event == TRACE:
                self.trace_s += duration_secs
        jax.monitoring.register_event_duration_secs_listener(listen)

    def snapshot(self):
        return {"xla_compiles": self.compiles, "xla_compile_s": self.compile_s,
                "trace_s": self.trace_s}


def compiled_count(fn):
    """What the object torchjax.compile returns says about its own compiles, if anything."""
    for name in ("compiles", "compile_count", "num_compiles"):
        value = getattr(fn, name, None)
        if value is not None:
            try:
                return int(value() if callable(value) else value)
            except (TypeError, ValueError):
                pass
    return None


# -- child processes: first call and dynamic batch --------------------------------------------

def cold_env() -> dict:
    """Environment of a child process with every compile cache off: torchjax's, JAX's
    persistent cache, and inductor's (a fresh cache directory, FX and autograd caches off)."""
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.update(TORCHJAX_CACHE="0", JAX_ENABLE_COMPILATION_CACHE="false",
               TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
               TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(prefix="bench_compile_inductor_"),
               PYTHONWARNINGS="ignore")
    return env


def child(args: list[str], timeout: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), *args]
    env = cold_env()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    finally:
        shutil.rmtree(env["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"exit {p.returncode}: {tail[:300]}"}


def _uses_jax(column):
    return not column.startswith("torch-")


def first_call_child(column: str, model: str) -> dict:
    """Seconds of steps 1 and 2 in this fresh process, and the XLA compiles each made."""
    t0 = time.perf_counter()
    if column == "jax":
        import jax  # noqa: F401  # a pure-JAX process: torchjax is not imported
    else:
        importlib.import_module("torch" if column.startswith("torch-") else "torchjax")
    t_import = time.perf_counter() - t0
    counter = CompileCounter() if _uses_jax(column) else None
    x, y = batch(model)
    t0 = time.perf_counter()
    run, _ = make_run(column, model, x, y)
    t_build = time.perf_counter() - t0

    def counted(call):
        before = counter.snapshot() if counter else {}
        t0 = time.perf_counter()
        loss = call()
        seconds = time.perf_counter() - t0
        after = counter.snapshot() if counter else {}
        return loss, seconds, {k: v - before[k] for k, v in after.items()}

    loss, t_first, first = counted(run)
    _, t_second, second = counted(run)
    return {"column": column, "model": model, "import_s": t_import, "build_s": t_build,
            "first_s": t_first, "second_s": t_second, "first_loss": loss, "first": first,
            "second": second}


DYNAMIC_VARIANTS = {
    "jax": "jax.jit",
    "static": "torchjax.compile(step)",
    "dynamic": "torchjax.compile(step, dynamic=True)",
    "torch": "torch.compile(step)",
    "torch-dynamic": "torch.compile(step, dynamic=True)",
}


def dynamic_child(variant: str, sizes: list[int], cycles: int) -> dict:
    """The mlp step over batch sizes cycling through `sizes`: programs compiled and time."""
    import warnings
    data = {n: batch("mlp", n, seed=n) for n in sizes}
    kw = {"dynamic": True} if variant.endswith("dynamic") else {}
    if variant.startswith("torch"):
        import torch
        from torch._dynamo.utils import counters
        run, fn = torch_style_step(torch, "mlp", True, *data[sizes[0]], **kw)
        arrays = {n: (torch.tensor(x), torch.tensor(y)) for n, (x, y) in data.items()}
    elif variant == "jax":
        import jax.numpy as jnp
        counter = CompileCounter()
        run, fn = jax_step("mlp", *data[sizes[0]])
        arrays = {n: (jnp.asarray(x), jnp.asarray(y, jnp.int32)) for n, (x, y) in data.items()}
    else:
        import torchjax
        counter = CompileCounter()
        run, fn = torch_style_step(torchjax, "mlp", True, *data[sizes[0]], **kw)
        arrays = {n: (torchjax.tensor(x), torchjax.tensor(y)) for n, (x, y) in data.items()}
    before = None if variant.startswith("torch") else counter.snapshot()
    per_cycle = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(cycles):
            t0 = time.perf_counter()
            for n in sizes:
                run(*arrays[n])
            per_cycle.append(time.perf_counter() - t0)
    said = [str(w.message) for w in caught if "compile" in str(w.message)]
    out = {"variant": variant, "sizes": sizes, "cycles": cycles, "cycle_s": per_cycle,
           "warnings": len(said), "first_warning": said[0][:300] if said else None}
    if variant.startswith("torch"):
        # graphs Dynamo captured and handed to Inductor (forward+backward and optimizer
        # graphs count separately)
        return {**out, "programs": counters["stats"]["unique_graphs"], "object_count": None}
    after = counter.snapshot()
    return {**out, "programs": after["xla_compiles"] - before["xla_compiles"],
            "object_count": compiled_count(fn),
            **{k: v - before[k] for k, v in after.items()}}


# -- the parent -------------------------------------------------------------------------------

def steady_state(model: str, columns: list[str], number: int, rounds: int) -> dict:
    from bench_eager import interleaved  # same interleaved rounds and per-round ratios
    x, y = batch(model)
    runs, errors, losses = {}, {}, {}
    for column in columns:
        try:
            run, _ = make_run(column, model, x, y)
            t0 = time.perf_counter()
            losses[column] = [run()]
            warm = time.perf_counter() - t0
            losses[column].append(run())
            runs[column] = run
            print(f"  {model} / {column}: warm-up (first call, warm caches) {warm:.2f} s",
                  flush=True)
        except Exception as e:  # a column that cannot run is reported, the others go on
            errors[column] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            print(f"  {model} / {column}: FAILED {errors[column]}", flush=True)
    if not runs:
        return {"errors": errors}
    calls = {c: [] for c in runs}

    def recorded(column):
        """The column's step, also recording each call's seconds (the raw numbers for --json;
        two perf_counter calls cost well under a microsecond)."""
        run = runs[column]

        def f():
            t0 = time.perf_counter()
            loss = run()
            calls[column].append(time.perf_counter() - t0)
            return loss
        return f
    times, ratios = interleaved({c: recorded(c) for c in runs}, number, rounds)
    # interleaved warms each function up with 3 calls, then runs `number` calls per round
    per_round = {c: [statistics.fmean(v[3 + i * number:3 + (i + 1) * number])
                     for i in range(rounds)] for c, v in calls.items()}
    final = {c: runs[c]() for c in runs}
    return {"median_s": times, "ratio": ratios, "base": next(iter(runs)), "errors": errors,
            "per_round_s": per_round,
            "first_losses": {c: v[0] for c, v in losses.items()}, "final_loss": final}


def fmt_ms(s):
    return f"{s * 1e3:.3f}" if s < 1e-2 else f"{s * 1e3:.2f}" if s < 1 else f"{s * 1e3:.0f}"


def print_steady(results: dict, columns: list[str]):
    print("\n## Steady-state step time (ms per step; ratio to jax.jit + optax in brackets)\n")
    print("| model | " + " | ".join(columns) + " | compiled target |")
    print("|---" * (len(columns) + 2) + "|")
    for model, r in results.items():
        cells = []
        for c in columns:
            if c in r.get("median_s", {}):
                cells.append(f"{fmt_ms(r['median_s'][c])} ({r['ratio'][c]:.2f}x)")
            else:
                cells.append("n/a" if c not in r.get("errors", {}) else "failed")
        target = STEADY_TARGET[model]
        got = r.get("ratio", {}).get("torchjax-compiled")
        verdict = "" if got is None else (" met" if got <= target else " **missed**")
        print(f"| {model} | " + " | ".join(cells) + f" | ≤ {target}x{verdict} |")
    for model, r in results.items():
        for c, e in r.get("errors", {}).items():
            print(f"- {model} / {c} failed: {e}")


def print_first(results: dict, columns: list[str], models: list[str]):
    for r in results.values():
        if "first_s" in r:
            r["first_two_s"] = r["first_s"] + r["second_s"]
    for key, title in (("first_s", "First call: trace + compile + run of step 1"),
                       ("first_two_s", "Steps 1 and 2 together (a recompile at step 2 shows "
                                       "here)")):
        print(f"\n## {title} (seconds; fresh process, every compile cache off; ratio to "
              "jax.jit in brackets)\n")
        print("| model | " + " | ".join(columns) + " | compiled target |")
        print("|---" * (len(columns) + 2) + "|")
        for model in models:
            base = results.get((BASELINE, model), {}).get(key)
            cells = []
            for c in columns:
                r = results.get((c, model))
                if r is None:
                    cells.append("n/a")
                elif key not in r:
                    cells.append("failed")
                else:
                    ratio = f" ({r[key] / base:.2f}x)" if base else ""
                    cells.append(f"{r[key]:.3f}{ratio}" if r[key] < 0.1 else
                                 f"{r[key]:.2f}{ratio}")
            got = results.get(("torchjax-compiled", model), {}).get(key)
            verdict = ("" if got is None or not base or key != "first_s" else
                       " met" if got / base <= FIRST_CALL_TARGET else " **missed**")
            target = f"≤ {FIRST_CALL_TARGET}x{verdict}" if key == "first_s" else ""
            print(f"| {model} | " + " | ".join(cells) + f" | {target} |")
    jax_columns = [c for c in columns if _uses_jax(c)]
    print("\nXLA programs compiled in steps 1 and 2 (count, seconds compiling, seconds "
          "tracing to jaxprs):\n")
    print("| model | " + " | ".join(f"{c} step {i}" for c in jax_columns for i in (1, 2)) +
          " |")
    print("|---" * (2 * len(jax_columns) + 1) + "|")
    for model in models:
        cells = []
        for c in jax_columns:
            r = results.get((c, model), {})
            for step in ("first", "second"):
                d = r.get(step)
                cells.append(f"{d['xla_compiles']}, {d['xla_compile_s']:.2f} s, "
                             f"{d['trace_s']:.2f} s" if d else "n/a")
        print(f"| {model} | " + " | ".join(cells) + " |")
    for (c, model), r in results.items():
        if "error" in r:
            print(f"- {model} / {c} failed: {r['error']}")


def print_dynamic(dyn: dict, sizes: list[int], cycles: int):
    print(f"\n## Batch size changing every step (mlp step, batch sizes {sizes} in turn, "
          f"{cycles} cycles = {cycles * len(sizes)} steps, fresh process, caches off)\n")
    print("| variant | programs compiled | the object's count | eager-fallback warnings | "
          + " | ".join(f"cycle {i + 1} s" for i in range(cycles)) + " |")
    print("|---" * (4 + cycles) + "|")
    for v, r in dyn.items():
        if "error" in r:
            print(f"| {DYNAMIC_VARIANTS[v]} | failed: {r['error']} |" + " |" * (2 + cycles))
            continue
        print(f"| {DYNAMIC_VARIANTS[v]} | {r['programs']} | {r['object_count']} | "
              f"{r['warnings']} | " + " | ".join(f"{c:.2f}" for c in r["cycle_s"]) + " |")
    print("\nPrograms: XLA compiles for the JAX-based variants (jax.monitoring), Dynamo's "
          "unique graphs for torch.compile.")
    for v, r in dyn.items():
        if r.get("first_warning"):
            print(f"- {DYNAMIC_VARIANTS[v]} warned: {r['first_warning']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and samples")
    ap.add_argument("--skip", action="append", default=[], choices=COLUMNS,
                    help="leave out a column (repeatable)")
    ap.add_argument("--models", default="seed-mlp,mlp,cnn,gpt")
    ap.add_argument("--rounds", type=int, default=None,
                    help="interleaved rounds of the steady state (default 5 quick, 15 full)")
    ap.add_argument("--no-steady", action="store_true")
    ap.add_argument("--no-first-call", action="store_true")
    ap.add_argument("--no-dynamic", action="store_true")
    ap.add_argument("--first-call-samples", type=int, default=None,
                    help="fresh processes per column and model (default 1 quick, 2 full)")
    ap.add_argument("--json", metavar="PATH", help="write every raw number to PATH")
    ap.add_argument("--child-first-call", nargs=2, metavar=("COLUMN", "MODEL"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--child-dynamic", metavar="VARIANT", help=argparse.SUPPRESS)
    ap.add_argument("--cycles", type=int, default=3, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child_first_call:
        print(json.dumps(first_call_child(*args.child_first_call)))
        return
    sizes = [32, 64, 96, 128, 160, 192, 224, 256]
    cycles = 3  # the third cycle shows the steady state once every size was seen
    if args.child_dynamic:
        print(json.dumps(dynamic_child(args.child_dynamic, sizes, args.cycles)))
        return

    import jax
    import torch

    columns = [c for c in COLUMNS if c not in args.skip]
    models = args.models.split(",")
    # calls per round: about 20-50 ms of jax.jit work per column and round
    number = {"seed-mlp": 200, "mlp": 3, "cnn": 20, "gpt": 2}
    rounds = args.rounds or (5 if args.quick else 15)
    samples = args.first_call_samples or (1 if args.quick else 2)
    out = {"argv": sys.argv[1:], "jax": jax.__version__, "torch": torch.__version__,
           "torch_threads": torch.get_num_threads(), "cores": os.cpu_count(),
           "loadavg_start": os.getloadavg(), "columns": columns, "models": models,
           "rounds": rounds, "number": number}
    print(f"jax {jax.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads),"
          f" {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        import torchjax
        has_compile = hasattr(torchjax, "compile")
    except ImportError:
        has_compile = False
    if not has_compile and "torchjax-compiled" in columns:
        print("torchjax.compile does not exist yet: skipping the torchjax-compiled column")
        columns.remove("torchjax-compiled")
    t_start = time.perf_counter()

    if not args.no_steady:
        steady = {}
        for model in models:
            print(f"steady state: {model}", flush=True)
            steady[model] = steady_state(model, columns, number[model], rounds)
        out["steady"] = steady
        print_steady(steady, columns)
        print("\nTimes are medians over rounds; ratios are medians of per-round ratios "
              f"({rounds} interleaved rounds). Losses at step 1 and at the last step (every "
              "column ran the same number of steps from the same weights on the same batch; "
              "the cnn's dropout masks differ between libraries):")
        for model, r in steady.items():
            first, last = r.get("first_losses", {}), r.get("final_loss", {})
            print(f"- {model}: " + ", ".join(f"{c} {v:.6f} -> {last[c]:.6f}"
                                             for c, v in first.items() if c in last))

    if not args.no_first_call:
        first, raw = {}, {}
        for model in models:
            for column in columns:
                if column == "torch-compile" and args.quick:
                    continue  # inductor's cold compiles take minutes: not in a quick run
                # ... and one sample of those in a full run
                n = 1 if column == "torch-compile" else samples
                samples_ = [child(["--child-first-call", column, model], 900) for _ in range(n)]
                raw[f"{column}/{model}"] = samples_
                good = [s for s in samples_ if "first_s" in s]
                if good:  # the median sample (the lower one of two)
                    first[(column, model)] = sorted(good, key=lambda s: s["first_s"])[
                        (len(good) - 1) // 2]
                else:
                    first[(column, model)] = samples_[0]
                print(f"  first call {model} / {column}: "
                      f"{[round(s.get('first_s', float('nan')), 2) for s in samples_]}",
                      flush=True)
        out["first_call"] = raw
        print_first(first, columns, models)

    if not args.no_dynamic:
        variants = [v for v, col in (("jax", "jax"), ("static", "torchjax-compiled"),
                                     ("dynamic", "torchjax-compiled"),
                                     ("torch", "torch-compile"),
                                     ("torch-dynamic", "torch-compile"))
                    if col in columns and not (args.quick and col == "torch-compile")]
        dyn = {}
        for v in variants:
            dyn[v] = child(["--child-dynamic", v, "--cycles", str(cycles)], 900)
            print(f"  dynamic batch {DYNAMIC_VARIANTS[v]}: {dyn[v].get('programs')} programs, "
                  f"{dyn[v].get('error', '')}", flush=True)
        out["dynamic"] = dyn
        print_dynamic(dyn, sizes, cycles)

    out["loadavg_end"] = os.getloadavg()
    out["total_s"] = time.perf_counter() - t_start
    print(f"\ntotal {out['total_s']:.0f} s, load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()
