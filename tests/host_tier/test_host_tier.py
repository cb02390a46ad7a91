"""The host tier (_host_tier.py): a program's first calls evaluated with NumPy, the hot ones
compiled on another thread, results as PyTorch's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _program_soon, _programs, compile_stats

pytestmark = pytest.mark.skipif(not _programs.enabled(), reason="the program cache is off")


def _counts():
    s = compile_stats()
    return s.compiled, s.host_calls


def test_new_shape_runs_on_the_host_and_matches_pytorch(tier):
    x = np.random.default_rng(0).standard_normal((7, 13)).astype(np.float32)
    c0, h0 = _counts()
    got = torchjax.nn.functional.gelu(torchjax.tensor(x) * 3 - 1).softmax(-1)
    c1, h1 = _counts()
    want = torch.nn.functional.gelu(torch.tensor(x) * 3 - 1).softmax(-1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert h1 > h0
    assert c1 == c0  # nothing compiled for these new shapes


def test_large_outputs_reach_the_device_without_a_second_copy(tier):
    # (NumPy places an output off XLA's 64-byte alignment 3 times in 4; the host tier copies
    # a large one into aligned memory once, and the transfer then takes that memory as is)
    from torchjax import _host_put
    base = np.arange(130 * 768 + 16, dtype=np.float32)
    for shift in range(4):  # (4-byte steps: some of them off the alignment)
        o = base[shift:shift + 128 * 768].reshape(128, 768)
        a = _host_put.aligned_copy(o)
        assert a.ctypes.data % _host_put.ALIGN == 0 and a.shape == o.shape
        np.testing.assert_array_equal(a, o)
    x = np.random.default_rng(1).standard_normal((128, 768)).astype(np.float32)
    c0, h0 = _counts()
    ks = [2.0 + i for i in range(8)]
    got = [torchjax.tensor(x) * k + 1 for k in ks]
    assert _counts()[1] > h0 and _counts()[0] == c0  # (the host tier's)
    for k, g in zip(ks, got):
        np.testing.assert_array_equal(g.numpy(), x * np.float32(k) + np.float32(1))
        # the device buffer is the NumPy result's memory (no copy in the transfer)
        assert g._data.unsafe_buffer_pointer() == g._data._npy_value.ctypes.data


def test_contiguous_of_a_new_shape_compiles_nothing(tier):
    """contiguous()'s clone takes memory_format: a value the program cache names, so a new
    shape's copy is the host tier's (it was a plain jax.jit, compiled per shape)."""
    x = np.random.default_rng(1).standard_normal((1, 3, 7, 5)).astype(np.float32)
    c0, h0 = _counts()
    got = (torchjax.tensor(x) * 2).transpose(1, 2).contiguous()
    c1, h1 = _counts()
    want = (torch.tensor(x) * 2).transpose(1, 2).contiguous()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.is_contiguous() and got.stride() == want.stride()
    assert h1 > h0 and c1 == c0
    names = {torchjax._program_names.describe(f) for f in (
        torchjax.contiguous_format, torchjax.channels_last, torchjax.preserve_format)}
    assert len(names) == 3


def _twice_plus_one(x):
    return x * 2.0 + 1.0


def test_a_length_met_in_one_burst_is_not_compiled(tier, monkeypatch):
    """A program whose sizes keep changing (autoregressive generation: each token's length
    called once per layer, then never again) compiles none of its lengths after the first for
    calls in one burst; a length that stays is compiled once its calls go on past SPAN
    evaluations, and one that comes back after a later length at its return."""
    monkeypatch.setattr(tier, "HOT", 3)
    monkeypatch.setattr(tier, "SPAN", 60)
    monkeypatch.setattr(tier, "CHANGING", 1)  # (the default: conftest turns it off)
    f = _programs.program(_twice_plus_one, _programs.ident_of("test", "bursts", id(tier)))
    hot = []  # the sizes compiled because they were hot
    plain = _programs._Program.compile_soon

    def compile_soon(self, args, *rest, **kwargs):
        if self is f._program:
            hot.append(args[0].shape[0])
        return plain(self, args, *rest, **kwargs)

    monkeypatch.setattr(_programs._Program, "compile_soon", compile_soon)
    for n in range(1, 21):  # 20 lengths, each called 5 times in a row ("5 layers")
        for _ in range(5):
            np.testing.assert_array_equal(np.asarray(f(np.ones(n, np.float32))), np.full(n, 3.0))
    # (the first length, met before the program had a template of its lengths, is compiled
    # at HOT, as a program of one shape is)
    assert hot == [1]
    for _ in range(tier.SPAN + 10):  # the last length stays
        f(np.ones(20, np.float32))
    assert hot == [1, 20]
    f(np.ones(5, np.float32))  # a length met before comes back after later ones
    assert hot == [1, 20, 5]
    _program_soon.wait_all()


def test_a_size_held_by_a_static_argument_met_in_one_burst_is_not_compiled(tier, monkeypatch,
                                                                          tmp_path):
    """`x.view(1, T, 4, 8)` at each new length T is another program (its sizes are static
    arguments): from the FAMILIES-th such program on, a length called in one burst is not
    compiled (one that comes back after later ones is), and the results stay PyTorch's."""
    monkeypatch.setattr(tier, "HOT", 3)
    monkeypatch.setattr(tier, "FAMILIES", 8)  # (the default: conftest turns it off)
    # (an empty cache: a view compiled by an earlier run would be loaded, never hot)
    monkeypatch.setattr(torchjax._compile_cache, "directory", str(tmp_path))
    hot = []  # the lengths whose view was compiled because it was hot
    plain = _programs._Program.compile_soon

    def compile_soon(self, args, *rest, **kwargs):
        if "'view'" in self.ident and "int:4,int:8" in self.ident:
            hot.append(args[0].shape[1])
        return plain(self, args, *rest, **kwargs)

    monkeypatch.setattr(_programs._Program, "compile_soon", compile_soon)
    base = np.random.default_rng(3).standard_normal((1, 40, 32)).astype(np.float32)
    for n in range(11, 31):  # 20 lengths, each viewed 5 times in a row ("5 layers")
        x, y = torchjax.tensor(base[:, :n]), torch.tensor(base[:, :n])
        for _ in range(5):
            got = x.view(1, n, 4, 8)
        np.testing.assert_array_equal(got.numpy(), y.view(1, n, 4, 8).numpy())
    # (earlier tests may have made views like these: at most FAMILIES - 1 lengths are hot)
    assert len(hot) < tier.FAMILIES and hot == sorted(hot)
    x = torchjax.tensor(base[:, :25])
    for _ in range(3):  # length 25 (not compiled: a later one) comes back
        x.view(1, 25, 4, 8)
    assert hot[-1] == 25
    _program_soon.wait_all()


def test_hot_signature_is_compiled_then_used(tier, monkeypatch):
    monkeypatch.setattr(tier, "HOT", 3)
    x = torchjax.arange(11 * 5, dtype=torchjax.float32).reshape(11, 5)
    results = []
    for _ in range(3):
        results.append((x.tanh() * 2).sum(0))
    _program_soon.wait_all()
    c0, h0 = _counts()
    after = (x.tanh() * 2).sum(0)
    c1, h1 = _counts()
    assert h1 == h0  # compiled by now: no host evaluation
    assert c1 == c0  # and not compiled again
    want = (torch.arange(55.).reshape(11, 5).tanh() * 2).sum(0)
    for r in results + [after]:
        np.testing.assert_allclose(r.numpy(), want.numpy(), rtol=1e-6)


def test_costly_evaluation_compiles_before_hot(tier, monkeypatch):
    monkeypatch.setattr(tier, "HOT", 1000)
    monkeypatch.setattr(tier, "BUDGET", 0.0)  # any evaluation has cost "a compile's worth"
    a = torchjax.ones(9, 17)
    a.exp()
    _program_soon.wait_all()
    _, h0 = _counts()
    a.exp()
    assert _counts()[1] == h0


def test_autograd_on_the_host_matches_pytorch(tier):
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((6, 19)), rng.standard_normal((5, 19))
    outs = []
    for lib in (torchjax, torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        loss = lib.nn.functional.linear(x, w).relu().pow(2).mean()
        loss.backward()
        outs.append([loss.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    for g, w in zip(*outs):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_convolution_and_pooling_on_the_host(tier):
    rng = np.random.default_rng(2)
    xs, ws = rng.standard_normal((3, 2, 9, 9)), rng.standard_normal((4, 2, 3, 3))
    outs = []
    for lib in (torchjax, torch):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        y = lib.nn.functional.max_pool2d(lib.nn.functional.conv2d(x, w, padding=1), 2)
        y.square().sum().backward()
        outs.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    for g, w in zip(*outs):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


def test_what_the_host_tier_leaves_to_xla(tier):
    # random draws keep XLA's bits (a seed gives the same values at every call)
    torchjax.manual_seed(3)
    a = torchjax.randn(13, 3)
    torchjax.manual_seed(3)
    b = torchjax.randn(13, 3)
    assert torchjax.equal(a, b)
    # low-precision floats: XLA keeps fused intermediates in float32
    c0, h0 = _counts()
    torchjax.ones(3, 23, dtype=torchjax.bfloat16).exp()
    assert _counts()[1] == h0
    # a form a rule declines at run time (a grouped convolution's weight gradient has batch
    # groups) is compiled, with PyTorch's result
    rng = np.random.default_rng(4)
    xs, ws = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((4, 2, 3, 3))
    grads = []
    for lib in (torchjax, torch):
        w = lib.tensor(ws, requires_grad=True)
        lib.nn.functional.conv2d(lib.tensor(xs), w, groups=2).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_committed_arguments_give_committed_results(tier):
    # placed on a device (committed), a program's results are committed there too, as
    # jax.jit's: the next op's signature is the same whichever tier ran this one
    import jax
    arr = jax.device_put(np.ones((3, 29), np.float32), jax.devices()[0])
    _, h0 = _counts()
    got = (torchjax.Tensor._wrap(arr) * 2)._data
    assert _counts()[1] > h0
    assert got._committed and jax.jit(lambda a: a * 2)(arr)._committed
    loose = (torchjax.Tensor._wrap(jax.numpy.ones((3, 31))) * 2)._data
    assert not loose._committed


_SCRIPT = textwrap.dedent("""
    import torchjax as torch
    out = []
    for n in range(1, 6):  # a new shape every step, as generation makes
        x = torch.ones(2, n, 8)
        out.append(float((torch.nn.functional.layer_norm(x * n, (8,)) + x).sum()))
    y = torch.ones(4, 4)
    for _ in range(5):  # one shape again and again: hot, compiled on another thread
        y = (y * 1.5).tanh()
    out.append(round(float(y.sum()), 4))
    torch._program_soon.wait_all()
    s = torch.compile_stats()
    print(s.compiled, s.host_calls, out)
""")


def _run(env):
    env = {**os.environ, **env}
    res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    compiled, host, out = res.stdout.strip().split(" ", 2)
    return int(compiled), int(host), out


def test_switch_and_cold_process(tmp_path):
    on = _run({"TORCHJAX_CACHE_DIR": str(tmp_path / "a"), "TORCHJAX_HOST_TIER": "1"})
    off = _run({"TORCHJAX_CACHE_DIR": str(tmp_path / "b"), "TORCHJAX_HOST_TIER": "0"})
    assert on[2] == off[2]  # (sums of exactly representable values: equal)
    assert on[1] > 0 and off[1] == 0
    assert on[0] < off[0], (on, off)  # each new length compiled programs without it


def test_warm_process_compiles_nothing(tmp_path):
    env = {"TORCHJAX_CACHE_DIR": str(tmp_path), "TORCHJAX_HOST_TIER": "1",
           "TORCHJAX_HOST_TIER_HOT": "3"}  # (the layer norm's program gets hot: compiled)
    cold = _run(env)
    warm = _run(env)
    assert warm[2] == cold[2]
    assert cold[0] > 0 and warm[0] == 0, (cold, warm)


_F64_SCRIPT = textwrap.dedent("""
    import jax, numpy as np, torchjax
    from torchjax import _programs
    def first_half(a):
        return jax.lax.slice(a, (0,), (a.shape[0] // 2,))
    arr = torchjax.arange(10, dtype=torchjax.float64)._data
    prog = _programs.program(first_half, _programs.ident_of("test", "host-tier-f64"))
    out = prog(arr)  # outside torchjax's x64 scope, as distributed's spread cuts pieces
    print(out.dtype, torchjax.compile_stats().host_calls,
          np.asarray(jax.jit(lambda v: v + 1)(out)).tolist())
""")


def test_float64_results_outside_the_x64_scope(tmp_path):
    # a program called outside torchjax's x64 scope on float64 arrays keeps float64 avals;
    # its results' buffers must be float64 too (XLA refused the next program's argument)
    env = {**os.environ, "TORCHJAX_CACHE_DIR": str(tmp_path), "TORCHJAX_HOST_TIER": "1"}
    res = subprocess.run([sys.executable, "-c", _F64_SCRIPT], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    dtype, host, values = res.stdout.strip().split(" ", 2)
    assert dtype == "float64" and int(host) == 1
    assert values == "[1.0, 2.0, 3.0, 4.0, 5.0]"


def test_a_large_product_is_compiled(tier, monkeypatch):
    # beyond MAX_FLOPS one BLAS thread would take longer than compiling and running on XLA's
    monkeypatch.setattr(tier, "MAX_FLOPS", 2 * 6 * 7 * 8 - 1)
    a, b = torchjax.ones(6, 7), torchjax.ones(7, 8)
    _, h0 = _counts()
    np.testing.assert_array_equal((a @ b).numpy(), np.full((6, 8), 7.0))
    assert _counts()[1] == h0
    monkeypatch.setattr(tier, "MAX_FLOPS", 2 * 6 * 7 * 9)
    c = torchjax.ones(7, 9)
    (a @ c).numpy()
    assert _counts()[1] > h0


def test_logs_name_what_the_host_tier_evaluates(tmp_path):
    env = {**os.environ, "TORCHJAX_CACHE_DIR": str(tmp_path), "TORCHJAX_HOST_TIER": "1",
           "TORCHJAX_LOGS": "compiles"}
    code = "import torchjax as t\nx = t.ones(3, 5)\ny = x.tanh()\nprint(t.compile_stats())\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert ("[torchjax.compiles] tanh: (float32[3,5]) evaluated with NumPy by the host tier"
            in res.stderr), res.stderr
    assert "<string>:3" in res.stderr
    assert res.stdout.strip().endswith("host tier: 1 calls")


def _double_plus_one(a):
    return a * 2 + 1


def test_compiled_signature_takes_the_fast_path(tier, monkeypatch):
    # a signature the host tier served was noted by JAX's C++ dispatcher as "always call
    # the Python miss handler": once compiled, its calls must take the C++ fast path again
    monkeypatch.setattr(tier, "HOT", 2)
    prog = _programs.program(_double_plus_one, _programs.ident_of("test", "fast-path-again"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + np.float32(np.random.rand())
    import jax
    arr = jax.numpy.asarray(x)
    for _ in range(3):
        prog(arr)
    _program_soon.wait_all()
    for _ in range(3):
        prog(arr)  # (compiled now; the next calls make the fast-path entry)
    misses = []
    real = _programs._fastpath
    monkeypatch.setattr(_programs, "_fastpath", lambda *a: misses.append(1) or real(*a))
    for _ in range(5):
        out = prog(arr)
    assert misses == []
    np.testing.assert_allclose(np.asarray(out), x * 2 + 1)


def test_leaving_the_slow_path_keeps_jax_trace_caches(tier, monkeypatch):
    # jax.jit's clear_cache also empties JAX's trace cache of the function: the next trace
    # (inside another, as checkpoint's recompute traces the ops) made a new jaxpr object,
    # and checkpoint's compiled backward, keyed on it, compiled again (test_checkpoint, cold)
    import jax
    monkeypatch.setattr(tier, "HOT", 2)
    prog = _programs.program(_double_plus_one, _programs.ident_of("test", "keep-trace-caches"))
    x = np.ones(3, np.float32) + np.float32(np.random.rand())

    def nested():
        return jax.make_jaxpr(lambda a: prog(a))(x).eqns[0].params["jaxpr"]
    before = nested()
    arr = jax.numpy.asarray(x)
    for _ in range(3):
        prog(arr)
    _program_soon.wait_all()
    for _ in range(2):
        prog(arr)  # (the first compiled call leaves the slow path)
    assert nested() is before


def test_a_sequence_whose_sizes_keep_changing_gets_no_program_per_length(tier, monkeypatch):
    """Deferred op sequences (_deferred_programs): each length's sequence run once per
    "layer" (6 times) then never again gets no program once its family has had FAMILIES
    programs; a length that stays gets one after LATER_SIGHTINGS more runs; values are
    PyTorch's throughout."""
    from torchjax import _deferred, _deferred_programs, _result_hooks
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    monkeypatch.setattr(_deferred, "ON", [True])
    monkeypatch.setattr(tier, "FAMILIES", 8)  # (the default: conftest turns it off)
    monkeypatch.setattr(_deferred_programs, "LATER", {})
    monkeypatch.setattr(_deferred_programs, "LATER_SIGHTINGS", 20)
    base = np.random.default_rng(5).standard_normal((40, 24)).astype(np.float32)

    def layer(lib, x):
        return ((x * 1.5 + 0.25).tanh() * x).sum(1)

    made = []
    with torchjax.no_grad():
        for n in range(3, 30):  # 27 lengths, each run by 6 "layers"
            x, y = torchjax.tensor(base[:n] + 0.0 * n), torch.tensor(base[:n] + 0.0 * n)
            before = _deferred_programs.STATS["compiled"]
            for _ in range(6):
                got = layer(torchjax, x)
                np.testing.assert_allclose(got.numpy(), layer(torch, y).numpy(), rtol=1e-5,
                                           atol=1e-5)
            made.append(_deferred_programs.STATS["compiled"] - before)
        assert sum(made) < tier.FAMILIES and sum(made[-10:]) == 0, made
        x = torchjax.tensor(base[:29])  # the last length stays
        for _ in range(_deferred_programs.LATER_SIGHTINGS + 5):
            layer(torchjax, x).numpy()
    assert _deferred_programs.STATS["compiled"] > before + made[-1]
    _deferred_programs.wait()
