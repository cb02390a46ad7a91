"""Time to first step: how long a fresh process takes from its first op to the end of its first
optimizer step, cold (nothing compiled yet) and warm (programs in the persistent cache).

    python bench/bench_startup.py                      # every case and variant, ~10 minutes
    python bench/bench_startup.py --cases cnn --repeat 1

Every measurement is a FRESH process (`--child`), because in-process caches would hide the
cost. Cases, the same code with `import torch` and `import torchjax as torch`:
- cnn:  the digits CNN of examples/train_digits.py, batch 64 of 8x8 images, Adam;
- gpt:  2 GPT blocks (d=128, 4 heads, causal attention with matmul/masked_fill/softmax,
        GELU MLP), byte vocabulary, seq 64, batch 16, AdamW;
- lstm: byte-level language model, Embedding(256, 256) + 2-layer LSTM(256) + Linear, seq 64,
        batch 16, Adam.
Variants:
- torchjax-cold: an empty TORCHJAX_CACHE_DIR; torchjax-warm: a second process on the cache
  the cold one left (it loads the programs the cold one listed ahead, on another thread:
  _program_prefetch.py); torchjax-warm-noahead: the same with TORCHJAX_PREFETCH=0; torchjax-nocache: TORCHJAX_CACHE=0 (the cost of writing the cache);
  torchjax-serial: cold, with the optimizer's first update and dropout's first kernel
  compiled in line rather than on other threads (what those threads save);
- torch: PyTorch eager, same code;
- jax-cold / jax-warm: the same model written by hand in JAX, the whole step (forward,
  backward, optax update) one `jax.jit`; cold without a persistent cache, warm with JAX's
  persistent cache (all programs kept) filled by a previous process.
"first step" runs from the first op (building the model) to the end of the first optimizer
step, loss read back on the host; "step 2" is the second step (torchjax compiles the fused
backward program there, the first time a graph is seen again); "steady" is the median of
later steps (torchjax: after its fused backward, compiled on another thread from step 2, is
ready); "whole run" is the child process's wall time, start to exit. Parameters of
the JAX variant come from NumPy, so its first step is the jitted step's first call (trace +
lower + compile + run).
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

import numpy as np

VOCAB, SEQ, BATCH = 256, 64, 16
D_MODEL, HEADS, LAYERS = 128, 4, 2
HIDDEN = 256


# ---------------------------------------------------------------- the PyTorch-API models
def build_cnn(lib):
    nn = lib.nn

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

    model = DigitsCNN()
    return model, lib.optim.Adam(model.parameters(), lr=1e-3)


def build_gpt(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(),
                                     nn.Linear(4 * D_MODEL, D_MODEL))
            self.register_buffer("causal", lib.tril(lib.ones(SEQ, SEQ, dtype=lib.bool)))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // HEADS))
            att = att.masked_fill(~self.causal[:T, :T], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(SEQ, D_MODEL)
            self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            return self.head(self.ln(self.blocks(x)))

    model = GPT()
    return model, lib.optim.AdamW(model.parameters(), lr=3e-4)


def build_lstm(lib):
    nn = lib.nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, HIDDEN)
            self.lstm = nn.LSTM(HIDDEN, HIDDEN, num_layers=2, batch_first=True)
            self.head = nn.Linear(HIDDEN, VOCAB)

        def forward(self, idx):
            out, _ = self.lstm(self.emb(idx))
            return self.head(out)

    model = LSTMLM()
    return model, lib.optim.Adam(model.parameters(), lr=1e-3)


def data(case):
    rng = np.random.default_rng(0)
    if case == "cnn":
        return (rng.uniform(size=(64, 1, 8, 8)).astype(np.float32),
                rng.integers(0, 10, size=64).astype(np.int64))
    tokens = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int64)
    return tokens[:, :-1], tokens[:, 1:]


BUILD = {"cnn": build_cnn, "gpt": build_gpt, "lstm": build_lstm}


def training_step(lib, case, x_np, y_np):
    """Build `case`'s model and optimizer in lib and put the batch on the device: the
    training step, returning the loss as a float (bench_emitters_ab.py times it too)."""
    F = lib.nn.functional
    model, opt = BUILD[case](lib)
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def step():
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()
    return step


def torch_api_run(lib, case, steps):
    """Times after building + the first step, the second step and each later one; losses;
    compile_stats after the first and the second step (torchjax only); CPU seconds of the
    first step; seconds of the model build alone."""
    x_np, y_np = data(case)
    lib.manual_seed(0)
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    step = training_step(lib, case, x_np, y_np)
    built = time.perf_counter()

    stats = getattr(lib, "compile_stats", None)
    snaps = []  # torchjax's compile_stats after the first and the second step
    losses = [step()]
    t1, c1, m1 = time.perf_counter(), time.process_time(), time.thread_time()
    snaps.append(vars(stats()) if stats else None)
    losses.append(step())
    t2 = time.perf_counter()
    snaps.append(vars(stats()) if stats else None)
    # torchjax compiles the fused backward on another thread from step 2 on (the steps run
    # node by node meanwhile): wait for it, so that "steady" is the fused program's speed
    engine = getattr(getattr(lib, "_autograd", None), "engine", None)
    pending = getattr(engine, "_compiling", [None])[0]
    if pending is not None:
        pending.thread.join()
    # torchjax's host tier (_host_tier.py) evaluates a program's first calls with NumPy and
    # compiles the hot ones in turn on another thread: a few more steps make every program of
    # the step hot, then wait for their compiles, so that "steady" is the compiled speed
    soon = getattr(lib, "_program_soon", None)
    if soon is not None and hasattr(soon, "wait_all"):
        for _ in range(lib._host_tier.HOT):
            losses.append(step())
        soon.wait_all()
    marks = [t0, t1, t2, time.perf_counter()]
    for _ in range(steps):
        losses.append(step())
        marks.append(time.perf_counter())
    return marks, losses, snaps, (c1 - c0, m1 - m0), built - t0


# ---------------------------------------------------------------- the hand-written JAX step
def jax_params(case):
    """Parameters from NumPy (no compiles before the step's first call)."""
    rng = np.random.default_rng(0)

    def w(*shape, fan_in=None):
        fan_in = fan_in or shape[-1]
        return (rng.uniform(-1, 1, size=shape) / math.sqrt(fan_in)).astype(np.float32)

    def z(*shape):
        return np.zeros(shape, np.float32)

    if case == "cnn":
        return {"c1": w(16, 1, 3, 3, fan_in=9), "c1b": z(16),
                "c2": w(32, 16, 3, 3, fan_in=144), "c2b": z(32),
                "f1": w(64, 128), "f1b": z(64), "f2": w(10, 64), "f2b": z(10)}
    if case == "gpt":
        blocks = [{"ln1": (np.ones(D_MODEL, np.float32), z(D_MODEL)),
                   "ln2": (np.ones(D_MODEL, np.float32), z(D_MODEL)),
                   "qkv": (w(3 * D_MODEL, D_MODEL), z(3 * D_MODEL)),
                   "proj": (w(D_MODEL, D_MODEL), z(D_MODEL)),
                   "fc1": (w(4 * D_MODEL, D_MODEL), z(4 * D_MODEL)),
                   "fc2": (w(D_MODEL, 4 * D_MODEL), z(D_MODEL))} for _ in range(LAYERS)]
        return {"tok": w(VOCAB, D_MODEL, fan_in=1), "pos": w(SEQ, D_MODEL, fan_in=1),
                "blocks": blocks, "ln": (np.ones(D_MODEL, np.float32), z(D_MODEL)),
                "head": w(VOCAB, D_MODEL)}
    layers = [{"wi": w(4 * HIDDEN, HIDDEN), "wh": w(4 * HIDDEN, HIDDEN),
               "b": z(4 * HIDDEN)} for _ in range(2)]
    return {"emb": w(VOCAB, HIDDEN, fan_in=1), "lstm": layers, "head": w(VOCAB, HIDDEN),
            "headb": z(VOCAB)}


def jax_loss_fn(case):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def linear(p, x):
        w, b = p
        return x @ w.T + b

    def layer_norm(p, x):
        g, b = p
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * lax.rsqrt(var + 1e-5) * g + b

    def xent(logits, y):
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, y[..., None], axis=-1).mean()

    def cnn(params, x, y, key):
        def conv(x, w, b):
            out = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                           dimension_numbers=("NCHW", "OIHW", "NCHW"))
            return out + b[None, :, None, None]

        def pool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

        h = pool(jax.nn.relu(conv(x, params["c1"], params["c1b"])))
        h = pool(jax.nn.relu(conv(h, params["c2"], params["c2b"]))).reshape(x.shape[0], -1)
        h = jax.nn.relu(linear((params["f1"], params["f1b"]), h))
        keep = jax.random.bernoulli(key, 0.8, h.shape)
        h = jnp.where(keep, h / 0.8, 0.0)
        return xent(linear((params["f2"], params["f2b"]), h), y)

    def gpt(params, idx, y, key):
        B, T = idx.shape
        x = params["tok"][idx] + params["pos"][:T]
        causal = jnp.tril(jnp.ones((T, T), bool))
        for p in params["blocks"]:
            q, k, v = jnp.split(linear(p["qkv"], layer_norm(p["ln1"], x)), 3, axis=-1)
            q, k, v = (t.reshape(B, T, HEADS, -1).transpose(0, 2, 1, 3) for t in (q, k, v))
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D_MODEL // HEADS)
            att = jax.nn.softmax(jnp.where(causal, att, -jnp.inf), axis=-1)
            x = x + linear(p["proj"], (att @ v).transpose(0, 2, 1, 3).reshape(B, T, -1))
            h = jax.nn.gelu(linear(p["fc1"], layer_norm(p["ln2"], x)), approximate=False)
            x = x + linear(p["fc2"], h)
        return xent(layer_norm(params["ln"], x) @ params["head"].T, y)

    def lstm(params, idx, y, key):
        x = params["emb"][idx].transpose(1, 0, 2)  # time major for the scan
        for p in params["lstm"]:
            xi = x @ p["wi"].T + p["b"]

            def cell(carry, xt, p=p):
                h, c = carry
                i, f, g, o = jnp.split(xt + h @ p["wh"].T, 4, axis=-1)
                c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
                h = jax.nn.sigmoid(o) * jnp.tanh(c)
                return (h, c), h

            zeros = jnp.zeros((x.shape[1], HIDDEN), x.dtype)
            _, x = lax.scan(cell, (zeros, zeros), xi)
        return xent(x.transpose(1, 0, 2) @ params["head"].T + params["headb"], y)

    return {"cnn": cnn, "gpt": gpt, "lstm": lstm}[case]


def jax_run(case, steps):
    import jax
    import optax

    x_np, y_np = data(case)
    t0, c0 = time.perf_counter(), time.process_time()
    params = jax.device_put(jax_params(case))
    x, y = jax.device_put(x_np), jax.device_put(y_np)
    opt = optax.adamw(3e-4, weight_decay=0.01) if case == "gpt" else optax.adam(1e-3)
    opt_state = opt.init(params)
    loss_fn = jax_loss_fn(case)

    @jax.jit
    def step(params, opt_state, key, x, y):
        key, sub = jax.random.split(key)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, sub)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, key, loss

    key = jax.random.key(0)
    marks, losses, cpu = [t0], [], None
    m0 = time.thread_time()
    for _ in range(steps + 2):
        params, opt_state, key, loss = step(params, opt_state, key, x, y)
        losses.append(float(loss))
        marks.append(time.perf_counter())
        cpu = (time.process_time() - c0, time.thread_time() - m0) if cpu is None else cpu
    return marks, losses, cpu


# ---------------------------------------------------------------- one fresh process
def child(case, variant, steps):
    out = {"case": case, "variant": variant}
    t_import = time.perf_counter()
    if variant.startswith("torchjax"):
        import torchjax as lib

        if variant == "torchjax-serial":  # cold, without the compiles started on other threads
            from torchjax.nn._functional import dropout
            from torchjax.optim import _first_step
            _first_step.AHEAD[0] = False
            dropout._CHUNKED_MAX = 0

        out["import_s"] = time.perf_counter() - t_import
        marks, losses, snaps, cpu, out["build_s"] = torch_api_run(lib, case, steps)
        # the whole run (an older torchjax, compared with PYTHONPATH, may not count)
        out["stats"] = vars(lib.compile_stats()) if hasattr(lib, "compile_stats") else {}
        out["first_stats"], out["second_stats"] = snaps
    elif variant == "torch":
        import torch as lib

        out["import_s"] = time.perf_counter() - t_import
        marks, losses, _, cpu, out["build_s"] = torch_api_run(lib, case, steps)
    else:
        import jax

        if variant == "jax-warm":  # JAX's persistent cache, every program kept
            jax.config.update("jax_compilation_cache_dir", os.environ["BENCH_JAX_CACHE"])
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        compiled = {"n": 0, "hits": 0}
        from jax import monitoring

        def on_event(event, **kw):
            compiled["hits"] += event == "/jax/compilation_cache/cache_hits"

        def on_duration(event, secs, **kw):
            compiled["n"] += event == "/jax/core/compile/backend_compile_duration"

        monitoring.register_event_listener(on_event)
        monitoring.register_event_duration_secs_listener(on_duration)
        out["import_s"] = time.perf_counter() - t_import
        marks, losses, cpu = jax_run(case, steps)
        out["build_s"] = 0.0  # parameters from NumPy
        out["stats"] = {"compiled": compiled["n"] - compiled["hits"],
                        "cache_hits": compiled["hits"]}
    out["first_s"] = marks[1] - marks[0]
    # CPU time of the process (all threads), and of the calling thread alone: less hurt by a
    # busy VM; the second is what a first step costs when the compiles started on other
    # threads (torchjax's optimizer update, dropout's kernel) find a free core
    out["first_cpu_s"], out["first_thread_cpu_s"] = cpu
    out["second_s"] = marks[2] - marks[1]
    later = [b - a for a, b in zip(marks[3:], marks[4:])]
    out["steady_ms"] = statistics.median(later[len(later) // 4:]) * 1e3 if later else 0.0
    out["loss"] = [losses[0], losses[-1]]
    return out


def spawn(case, variant, steps, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case, variant,
           "--steps", str(steps)]
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"{case}/{variant} failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    # the whole run: interpreter start, imports, the steps, and the exit (which waits for a
    # compile still running on another thread)
    out["total_s"] = time.perf_counter() - start
    return out


VARIANTS = ("torchjax-cold", "torchjax-warm", "torchjax-warm-noahead", "torchjax-nocache",
            "torch", "jax-cold", "jax-warm", "torchjax-serial")


def run_case(case, steps, repeat, variants=VARIANTS):
    """Each variant `repeat` times (fresh cache directories per repetition)."""
    results = {v: [] for v in variants}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tj, tempfile.TemporaryDirectory() as jx:
            env = dict(os.environ, TORCHJAX_CACHE_DIR=tj, BENCH_JAX_CACHE=jx)
            env.pop("TORCHJAX_CACHE", None)
            env.pop("TORCHJAX_LOGS", None)
            for v in variants:
                e = dict(env)
                if v == "torchjax-nocache":
                    e["TORCHJAX_CACHE"] = "0"
                if v == "torchjax-warm-noahead":  # warm, loading each program when needed
                    e["TORCHJAX_PREFETCH"] = "0"
                if v == "torchjax-serial":  # cold too: a cache directory of its own
                    e["TORCHJAX_CACHE_DIR"] = tempfile.mkdtemp(dir=tj)
                if v == "jax-warm":  # fill JAX's cache first, then measure a fresh process
                    spawn(case, v, 0, e)
                results[v].append(spawn(case, v, steps, e))
                print(f"  {case} {v}: first {results[v][-1]['first_s']:.2f} s", flush=True)
    return results


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def report_rows(case, results):
    rows = []
    for v, runs in results.items():
        st = runs[0].get("stats", {})
        programs = (f"{st.get('compiled', 0)} compiled, {st.get('cache_hits', 0)} loaded"
                    if st else "-")
        rows.append(f"| {case} | {v} | {med(runs, 'import_s'):.2f} | "
                    f"{med(runs, 'first_s'):.2f} | {med(runs, 'build_s'):.2f} | "
                    f"{med(runs, 'first_cpu_s'):.2f} | "
                    f"{med(runs, 'second_s'):.2f} | {programs} | {med(runs, 'steady_ms'):.2f} |"
                    f" {med(runs, 'total_s'):.1f} |")
    return rows


def report(case, results):
    rows = report_rows(case, results)

    def ratio(a, b, key):
        return med(results[a], key) / med(results[b], key)

    checks = (f"{case}: warm/cold first step {ratio('torchjax-warm', 'torchjax-cold', 'first_s'):.2f}x"
              f" (CPU {ratio('torchjax-warm', 'torchjax-cold', 'first_cpu_s'):.2f}x; target <= 0.2x);"
              f" cold / jax.jit first call {ratio('torchjax-cold', 'jax-cold', 'first_s'):.2f}x"
              f" (CPU {ratio('torchjax-cold', 'jax-cold', 'first_cpu_s'):.2f}x; target <= 1x);"
              f" steady warm / no cache {ratio('torchjax-warm', 'torchjax-nocache', 'steady_ms'):.2f}x"
              f" (target 1x); whole run / PyTorch's: cold"
              f" {ratio('torchjax-cold', 'torch', 'total_s'):.1f}x (target <= 3x), warm"
              f" {ratio('torchjax-warm', 'torch', 'total_s'):.1f}x (target <= 1.5x)")
    return rows, checks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=2, metavar=("CASE", "VARIANT"))
    ap.add_argument("--cases", default="cnn,gpt,lstm")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="a subset, e.g. torchjax-cold,torchjax-warm (ratios need all)")
    args = ap.parse_args()
    if args.child:
        # the cold and the warm process are one script run twice: the same command line,
        # which names the manifest of programs a warm process loads ahead
        # (torchjax/_program_prefetch.py)
        sys.argv = [sys.argv[0], "--child", args.child[0]]
        print(json.dumps(child(*args.child, args.steps)))
        return
    import jax
    import torch

    print(f"jax {jax.__version__}, torch {torch.__version__} ({torch.get_num_threads()} "
          f"threads), {os.cpu_count()} cores; median of {args.repeat} fresh-process runs; "
          f"load average {os.getloadavg()[0]:.1f}")
    table, checks, breakdown = [], [], []
    for case in args.cases.split(","):
        results = run_case(case, args.steps, args.repeat, args.variants.split(","))
        try:
            rows, check = report(case, results)
        except KeyError:  # a ratio's variant was not run
            rows, check = report_rows(case, results), ""
        table += rows
        checks.append(check)
        for name in ("cold", "warm"):
            if f"torchjax-{name}" not in results:  # a variant not asked for
                continue
            st = results[f"torchjax-{name}"][0]["first_stats"]
            per = st["compile_seconds"] / st["compiled"] * 1e3 if st["compiled"] else 0.0
            breakdown.append(
                f"| {case} | {name} | {st['traced']} | {st['trace_seconds']:.2f} | "
                f"{st['lower_seconds']:.2f} | {st['compiled']} | {st['compile_seconds']:.2f} | "
                f"{per:.0f} | {st['cache_hits']} | {st['cache_load_seconds']:.2f} |")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n| case | variant | import s | first step s | of which model build s | "
          "first step CPU s | step 2 s | programs (whole run) | steady ms | whole run s |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(table))
    print("\n" + "\n".join(checks))
    print("\ntorchjax's first step (model build + step 1), compile_stats:\n"
          "| case | cache | programs traced | trace s | lowering s | XLA compiled | "
          "compile s | ms per compile | loaded from cache | load s |\n"
          "|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(breakdown))


if __name__ == "__main__":
    main()
