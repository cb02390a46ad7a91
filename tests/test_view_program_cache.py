"""Writes through views with autograd, in a warm process: the programs that read and write
through a view chain, a view's backward (AsStridedBackward0) and CopySlices are named for the
program cache (torchjax/_views.py, _view_grad.py), so a second process on the same cache
directory traces none of them, and both give PyTorch's values and gradients."""

import json
import subprocess
import sys

import numpy as np
import torch as pt

from tests.test_compile_cache import _env

# one body for both libraries: `torch` is torchjax in the script and PyTorch in the test
BODY = r"""
def views(torch, a_np):
    a = torch.tensor(a_np, requires_grad=True)
    b = a * 2
    v = b[1:3].t()          # a view of a non-leaf
    w = b[0]                # another view of the same base, regenerated after the write
    v.mul_(3)               # in place through the view: CopySlices on b
    s = b.narrow(0, 2, 2)
    s.add_(1.5)
    d = b.diagonal()
    d.sub_(b[3].detach()[:4])
    loss = b.sin().sum() + w.pow(2).sum() + v.sum() + (s * s).sum() + d.sum()
    loss.backward()
    return [b.tolist(), a.grad.tolist(), w.tolist()]
"""

SCRIPT = BODY + r"""
import json
import numpy as np
import torchjax as torch
a_np = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
torch.compile_stats(reset=True)
out = views(torch, a_np)
print(json.dumps({"out": out, "traced": torch.compile_stats().traced}))
"""


def _run(cache_dir) -> dict:
    env = _env(TORCHJAX_CACHE_DIR=str(cache_dir))
    env.pop("TORCHJAX_CACHE", None)
    env.pop("TORCHJAX_CACHE_PROGRAMS", None)
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_writes_through_views_load_untraced_in_a_warm_process(tmp_path):
    cold, warm = _run(tmp_path), _run(tmp_path)
    assert cold["traced"] > 10
    assert warm["traced"] == 0, warm  # (6 before: the view programs took jax.jit's path)
    assert warm["out"] == cold["out"]
    scope = {}
    exec(BODY, scope)
    a_np = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    want = scope["views"](pt, a_np)
    for got, ref in zip(cold["out"], want):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
