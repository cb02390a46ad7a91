"""Ops under autocast are named in the program cache by their cast (`_autocast.Cast`): a
second process on the same TORCHJAX_CACHE_DIR runs an autocast training loop with a
GradScaler tracing nothing (every op, backward and update was traced again on every run), and
float16 and bfloat16 are different programs with PyTorch's dtypes and values."""

import numpy as np
import torch

from tests.distributed._common import run_on_cache
from tests.test_compile_cache import _env

# one training loop for both libraries (lib: torch or torchjax), run by the script below in
# torchjax's processes and here with PyTorch
_TRAIN = r"""
def train(lib, low):
    import numpy as np
    g = np.random.default_rng(0)
    w1 = g.standard_normal((16, 8)).astype(np.float32)
    w2 = g.standard_normal((4, 16)).astype(np.float32)
    x, y = g.standard_normal((6, 8)).astype(np.float32), np.arange(6) % 4
    net = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 4))
    with lib.no_grad():
        net[0].weight.copy_(lib.tensor(w1))
        net[2].weight.copy_(lib.tensor(w2))
        net[0].bias.zero_()
        net[2].bias.zero_()
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", enabled=low == "float16")
    losses, dtypes = [], []
    for _ in range(3):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=getattr(lib, low)):
            logits = net(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        dtypes.append([str(logits.dtype), str(loss.dtype)])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return {"losses": losses, "dtypes": dtypes,
            "weight": net[0].weight.detach().numpy().tolist()}
"""

_SCRIPT = _TRAIN + r"""
import json
import jax
import torchjax

traced = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, secs, **kw: traced.append(kw.get("fun_name"))
    if event == "/jax/core/compile/jaxpr_trace_duration" else None)
out = {low: train(torchjax, low) for low in ("float16", "bfloat16")}
out["traced"] = traced
print("RESULT " + json.dumps(out))
"""


def _pytorch(low):
    space: dict = {}
    exec(_TRAIN, space)
    return space["train"](torch, low)


def test_a_second_process_runs_autocast_training_untraced(tmp_path):
    cold = run_on_cache(_SCRIPT, _env(), tmp_path)
    warm = run_on_cache(_SCRIPT, _env(), tmp_path)
    assert len(cold["traced"]) > 10
    assert warm["traced"] == []  # (linear, cross_entropy and the backward were, each run)
    for low in ("float16", "bfloat16"):
        assert warm[low] == cold[low], low
        want = _pytorch(low)
        assert cold[low]["dtypes"] == want["dtypes"], low
        np.testing.assert_allclose(cold[low]["losses"], want["losses"], rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(cold[low]["weight"], want["weight"], rtol=2e-2, atol=2e-2)
