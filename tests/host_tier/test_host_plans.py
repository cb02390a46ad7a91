"""The host tier's plans kept in the program cache (_host_plans.py): a second process
evaluates the signatures the first one traced without tracing them again, with the same
results (PyTorch's); a damaged entry is ignored with a warning and traced again."""

from __future__ import annotations

import glob
import json
import os
import pickle
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from torchjax import _compile_cache, _numpy_eval, _numpy_plan, _programs

pytestmark = pytest.mark.skipif(not _programs.enabled(), reason="the program cache is off")

LENGTHS = (5, 9, 13)

# an episode-shaped loss per length (stack, std, unbind, and their backward over n inputs):
# each length a new signature of each program
_SCRIPT = textwrap.dedent("""
    import json, sys
    import torchjax as torch
    out = []
    for n in %r:
        xs = [torch.tensor(float(i * i %% 7) - 2.5, requires_grad=True) for i in range(n)]
        s = torch.stack(xs)
        r = (s - s.mean()) / (s.std() + 1e-6)
        loss = torch.stack([a * b.exp() for a, b in zip(r.unbind(0), xs)]).sum()
        loss.backward()
        out.append([float(loss)] + [float(x.grad) for x in xs])
    torch._program_soon.wait_all()
    s = torch.compile_stats()
    print(json.dumps({"traced": s.host_plans_traced, "loaded": s.host_plans_loaded,
                      "out": out}))
""") % (LENGTHS,)


def _pytorch():
    out = []
    for n in LENGTHS:
        xs = [torch.tensor(float(i * i % 7) - 2.5, requires_grad=True) for i in range(n)]
        s = torch.stack(xs)
        r = (s - s.mean()) / (s.std() + 1e-6)
        loss = torch.stack([a * b.exp() for a, b in zip(r.unbind(0), xs)]).sum()
        loss.backward()
        out.append([float(loss)] + [float(x.grad) for x in xs])
    return out


def _run(cache):
    env = {**os.environ, "TORCHJAX_CACHE_DIR": str(cache), "TORCHJAX_HOST_TIER": "1",
           "TORCHJAX_HOST_TIER_HOT": "1000"}  # (every signature stays on the host tier)
    res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr


def _check(out, want):
    for got, w in zip(out, want):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)


def _plans(cache):
    return sorted(glob.glob(os.path.join(str(cache), "**", "h-*"), recursive=True))


def test_second_process_loads_the_plans_the_first_kept(tmp_path):
    want = _pytorch()
    cold, _ = _run(tmp_path)
    _check(cold["out"], want)
    assert cold["traced"] > 2 * len(LENGTHS) and cold["loaded"] == 0, cold
    assert len(_plans(tmp_path)) == cold["traced"]
    warm, _ = _run(tmp_path)
    assert warm["out"] == cold["out"]  # (the same NumPy evaluation: the same bits)
    assert warm["traced"] == 0 and warm["loaded"] == cold["traced"], (cold, warm)


def test_a_damaged_plan_is_ignored_with_a_warning(tmp_path):
    want = _pytorch()
    cold, _ = _run(tmp_path)
    files = _plans(tmp_path)
    store = _compile_cache._FileCache(os.path.dirname(files[0]))
    # one cut short (its digest fails), one whose bytes are sound but not a plan
    with open(files[0], "r+b") as f:
        f.truncate(os.path.getsize(files[0]) // 2)
    store.put(os.path.basename(files[1]).rsplit(".", 1)[0], pickle.dumps(("not", "a plan")))
    warm, err = _run(tmp_path)
    assert "ignoring corrupted compilation cache entry" in err, err[-2000:]
    assert "ignoring unusable host-tier plan" in err, err[-2000:]
    _check(warm["out"], want)
    assert warm["traced"] == 2 and warm["loaded"] == cold["traced"] - 2, (cold, warm)
    again, err = _run(tmp_path)  # (traced again, kept again)
    assert again["traced"] == 0 and "ignoring" not in err, err[-2000:]
    assert again["out"] == warm["out"]


def _nested(x, i):
    # a call (jnp's own jitted helpers) inside, and a scatter-add: both in a recipe
    y = jax.jit(lambda a: jnp.tanh(a) * 2)(x) + jnp.std(x)
    return y.at[i].add(x[::-1] ** 2)


def test_recipe_rebuilds_the_same_plan():
    x = np.linspace(-1.5, 2.0, 6).astype(np.float32)
    i = np.array([0, 2, 2, 5, 1, 0])
    closed = jax.make_jaxpr(_nested)(x, i)
    plan = _numpy_plan.make(closed.jaxpr, closed.consts)
    assert plan.recipe is not None
    assert all(name != "pjit" for name, *_ in plan.recipe)  # (inlined)
    data = pickle.dumps((plan.recipe, plan.size, plan.consts, plan.ins, plan.outs))
    again = _numpy_plan.from_recipe(*pickle.loads(data))
    got = _numpy_plan.run(again, [x, i])[0]
    np.testing.assert_array_equal(got, _numpy_plan.run(plan, [x, i])[0])
    np.testing.assert_array_equal(got, _numpy_eval.evaluate(closed.jaxpr, closed.consts,
                                                            [x, i])[0])
    t = torch.tensor(x)
    want = (torch.tanh(t) * 2 + t.std(unbiased=False)).index_add(0, torch.tensor(i),
                                                                 t.flip(0) ** 2)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)


def test_control_flow_plans_are_not_kept():
    def f(x):
        return jax.lax.fori_loop(0, 3, lambda k, a: a * 2 + k, x)

    x = np.arange(4, dtype=np.float32)
    closed = jax.make_jaxpr(f)(x)
    plan = _numpy_plan.make(closed.jaxpr, closed.consts)
    assert plan.recipe is None
    want = torch.tensor(x)
    for k in range(3):
        want = want * 2 + k
    np.testing.assert_array_equal(_numpy_plan.run(plan, [x])[0], want.numpy())


# a generate-shaped loop: each length's ops called 4 times in a row ("4 layers"), then never
# again; HOT 3, so every length is hot unless the CHANGING rule holds it back
_GENERATE = textwrap.dedent("""
    import json
    import numpy as np
    import torchjax as torch
    import torchjax.nn.functional as F
    base = torch.tensor(np.random.default_rng(0).standard_normal((1, 40, 16)).astype("f4"))
    w, b = torch.ones(16) * 1.5, torch.zeros(16) + 0.25
    out = []
    with torch.no_grad():
        for n in range(1, 25):
            x = base[:, :n]
            for _ in range(4):
                y = F.layer_norm(x, (16,), w, b)
            out.append(float(y.sum()))
    torch._program_soon.wait_all()
    s = torch.compile_stats()
    print(json.dumps({"compiled": s.compiled, "loaded": s.host_plans_loaded, "out": out}))
""")


def test_a_warm_process_compiles_no_length_met_in_one_burst(tmp_path):
    """A process that reads the kept plans of lengths an earlier one made from a template
    counts those lengths as the template did (_host_shapes.served): it compiles none of the
    lengths called in one burst (it compiled each again before: no template in that process,
    so no count of lengths)."""
    env = {**os.environ, "TORCHJAX_CACHE_DIR": str(tmp_path), "TORCHJAX_HOST_TIER": "1",
           "TORCHJAX_HOST_TIER_HOT": "3"}

    def run():
        res = subprocess.run([sys.executable, "-c", _GENERATE], capture_output=True, text=True,
                             env=env, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout.strip().splitlines()[-1])
    cold, warm = run(), run()
    x = np.random.default_rng(0).standard_normal((1, 40, 16)).astype(np.float32)
    want = [float(torch.nn.functional.layer_norm(torch.tensor(x[:, :n]), (16,),
                                                 torch.ones(16) * 1.5, torch.zeros(16) + 0.25)
                  .sum()) for n in range(1, 25)]
    np.testing.assert_allclose(cold["out"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(warm["out"], want, rtol=1e-4, atol=1e-4)
    assert warm["loaded"] > 0
    assert warm["compiled"] == 0, (cold, warm)
