"""torchjax turns JAX's x64 mode on only around its own work (src/torchjax/_x64.py): PyTorch's
int64 and float64 stay available to its tensors, and the user's own JAX code keeps JAX's
defaults (or the x64 setting the user chose)."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _run(code: str, **env) -> str:
    """Run code in a fresh interpreter (the process-wide JAX config is what is under test)."""
    full = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    full["PYTHONPATH"] = SRC + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


# Torchjax work of many kinds, in a subprocess: every kind that makes or computes arrays
_WORK = """
    import io, pickle
    import torchjax as torch
    from torchjax import nn
    a = torch.arange(3)
    assert a.dtype == torch.int64, a.dtype
    z = torch.zeros(2, dtype=torch.float64)
    assert z.dtype == torch.float64 and (z + 1).dtype == torch.float64
    assert repr(a) == "tensor([0, 1, 2])", repr(a)
    assert repr(z) == "tensor([0., 0.], dtype=torch.float64)", repr(z)
    assert a[torch.tensor([2, 0])].tolist() == [2, 0] and int(a.sum()) == 3
    assert (a * 2**40)[2].item() == 2 * 2**40  # no int32 wrap-around
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    m = nn.Linear(3, 2).double()
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    loss = m(x).tanh().sum()
    loss.backward()
    opt.step()
    assert m.weight.dtype == torch.float64 and x.grad.dtype == torch.float64
    assert opt.state[m.weight]["exp_avg"].dtype == torch.float64
    buf = io.BytesIO()
    torch.save({"a": a, "z": z}, buf)
    buf.seek(0)
    back = torch.load(buf)
    assert back["a"].dtype == torch.int64 and back["z"].dtype == torch.float64
    assert pickle.loads(pickle.dumps(a)).dtype == torch.int64
    assert torch.randint(0, 10, (3,)).dtype == torch.int64
    print(str(a), loss.dtype)
"""

_PROBE = """
    import jax, jax.numpy as jnp
    def defaults():
        return (str(jnp.zeros(2).dtype), str(jnp.arange(3).dtype),
                str(jax.random.normal(jax.random.key(0), (2,)).dtype),
                str(jax.jit(lambda v: v * 2)(jnp.arange(3)).dtype),
                jax.config.jax_enable_x64)
"""


def test_importing_and_using_torchjax_leaves_the_users_jax_defaults():
    out = _run(_PROBE + """
    before = defaults()
    import torchjax
    after_import = defaults()
    """ + _WORK + """
    after_work = defaults()
    print(before)
    print(after_import)
    print(after_work)
    """)
    lines = out.strip().splitlines()
    assert lines[0] == "tensor([0, 1, 2]) torch.float64"
    want = "('float32', 'int32', 'float32', 'int32', False)"
    assert lines[1:] == [want] * 3


@pytest.mark.parametrize("how", ["env", "config"])
def test_a_user_who_enabled_x64_keeps_it(how):
    enable = "" if how == "env" else "jax.config.update('jax_enable_x64', True)"
    env = {"JAX_ENABLE_X64": "1"} if how == "env" else {}
    out = _run(_PROBE + f"""
    {enable}
    before = defaults()
    """ + _WORK + """
    print(before)
    print(defaults())
    """, **env)
    lines = out.strip().splitlines()
    want = "('float64', 'int64', 'float64', 'int64', True)"
    assert lines[1:] == [want, want]


def test_scope_is_left_after_each_call_even_on_error():
    assert not jax.config.jax_enable_x64
    torchjax.arange(3) + 1
    assert jnp.zeros(2).dtype == jnp.float32
    with pytest.raises(RuntimeError):
        torchjax.ones(2, 3) + torchjax.ones(4)  # a broadcasting error inside the op
    with pytest.raises(RuntimeError):
        torchjax.zeros(2).index_add_(0, torchjax.tensor([0]), torchjax.ones(2, 2))
    assert jnp.zeros(2).dtype == jnp.float32 and jnp.arange(2).dtype == jnp.int32


def test_results_and_dtypes_match_pytorch():
    a = torchjax.arange(5)
    p = torch.arange(5)
    assert str(a.dtype) == str(p.dtype) == "torch.int64"
    for tj, pt in [((a * 3 + 1) // 2, (p * 3 + 1) // 2), (a.sum(), p.sum()),
                   (a.float().mean(), p.float().mean()), (a.double() / 3, p.double() / 3),
                   (torchjax.argmax(a), torch.argmax(p)),
                   (torchjax.tensor([2**40, 3]) * 2, torch.tensor([2**40, 3]) * 2)]:
        assert str(tj.dtype) == str(pt.dtype)
        np.testing.assert_array_equal(tj.numpy(), pt.numpy())


def test_scope_is_per_thread():
    """While torchjax runs (here: blocked inside a backward hook) on one thread, JAX code on
    another thread still sees the defaults."""
    inside, checked = threading.Event(), threading.Event()
    seen = {}

    def hook(g):
        seen["hook"] = jnp.zeros(1).dtype  # torchjax calls the hook inside its scope
        inside.set()
        assert checked.wait(30)
        return g

    def worker():
        x = torchjax.ones(3, dtype=torchjax.float64, requires_grad=True)
        x.register_hook(hook)
        (x * 2).sum().backward()
        seen["grad"] = x.grad.dtype

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(30)
    seen["main"] = jnp.zeros(1).dtype
    checked.set()
    t.join(30)
    assert seen == {"hook": jnp.float64, "main": jnp.float32, "grad": torchjax.float64}


def test_jax_functions_inside_torchjax_see_x64():
    """from_jax, torchjax.func and checkpoint trace the user's code in torchjax's scope, so it
    sees the tensors' dtypes."""
    from torchjax.interop import from_jax
    from torchjax.utils.checkpoint import checkpoint

    seen = []

    @from_jax
    def f(x):
        seen.append(jnp.zeros(1).dtype)
        return x * jnp.arange(x.shape[0])

    x = torchjax.ones(3, dtype=torchjax.float64, requires_grad=True)
    y = f(x)
    assert y.dtype == torchjax.float64 and {str(d) for d in seen} == {"float64"}
    y.sum().backward()
    assert x.grad.dtype == torchjax.float64

    def g(t):
        seen.append(jnp.zeros(1).dtype)
        return (t * t).sum()

    grad = torchjax.func.grad(g)(x.detach())
    assert grad.dtype == torchjax.float64 and seen[-1] == jnp.float64
    out = checkpoint(g, x, use_reentrant=False)
    assert out.dtype == torchjax.float64 and seen[-1] == jnp.float64
    assert jnp.zeros(1).dtype == jnp.float32


def test_under_the_users_own_jit_torchjax_follows_its_x64_setting():
    """A trace sees one x64 setting: inside a jax.jit the user started with x64 off, torchjax's
    float32 code traces as it runs eagerly, and int64 is kept, with x64 on or off."""
    model = torchjax.nn.Linear(3, 2)

    def f(a):
        return model(torchjax.Tensor._wrap(a)).relu().sum()._data

    a = np.ones((4, 3), np.float32)
    np.testing.assert_allclose(jax.jit(f)(a), f(jnp.asarray(a)), rtol=1e-6)

    def idx(a):
        t = torchjax.Tensor._wrap(a)
        return t.argmax()._data, torchjax.arange(3)._data

    with jax.enable_x64(True):
        i, r = jax.jit(idx)(np.array([1.0, 3.0, 2.0]))
    assert (i.dtype, r.dtype) == (np.int64, np.int64) and int(i) == 1
    # with x64 off, JAX's defaults in the user's program stay 32-bit, torchjax's int64 stays
    i, r = jax.jit(idx)(np.array([1.0, 3.0, 2.0]))
    assert (i.dtype, r.dtype) == (np.int64, np.int64) and int(i) == 1
    assert jax.jit(lambda a: jnp.arange(3) + a)(1).dtype == jnp.int32


def test_the_users_jit_programs_are_not_changed_by_torchjax():
    step = jax.jit(lambda w, v: jnp.tanh(w * v).sum())
    w = jnp.ones((4, 4))
    before = step(w, 2.0)
    torchjax.randn(4, 4, dtype=torchjax.float64).sum()  # torchjax programs compiled meanwhile
    after = step(w, 2.0)
    assert before.dtype == after.dtype == jnp.float32 and before == after


def test_pickle_and_deepcopy_outside_torchjax_keep_64_bit_dtypes():
    a = torchjax.tensor([1, 2**40])
    p = torchjax.nn.Parameter(torchjax.ones(2, dtype=torchjax.float64))
    # pickle's reconstructors run outside any torchjax call
    assert pickle.loads(pickle.dumps(a)).tolist() == [1, 2**40]
    assert pickle.loads(pickle.dumps(p)).dtype == torchjax.float64
    assert copy.deepcopy(p).dtype == torchjax.float64
    assert copy.deepcopy(a).dtype == torchjax.int64


def test_dataloader_batches_keep_int64():
    from torchjax.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(torchjax.arange(6), torchjax.ones(6, dtype=torchjax.float64))
    for xb, yb in DataLoader(ds, batch_size=3):
        assert (xb.dtype, yb.dtype) == (torchjax.int64, torchjax.float64)
    for (b,) in DataLoader([(i,) for i in range(4)], batch_size=2):
        assert b.dtype == torchjax.int64
