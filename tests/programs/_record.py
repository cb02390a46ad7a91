"""What the programs in this directory share with the test that runs them: deterministic
weights and data (PyTorch's and torchjax's random streams differ, so the programs draw from
NumPy where a comparison needs equal inputs), and the record of results each prints.

Each program is an ordinary PyTorch script (`import torch`); test_programs.py runs it with
PyTorch and with `python -m torchjax` and compares the two records.
"""

from __future__ import annotations

import json
import math

import numpy as np
import torch

_RECORD: dict = {}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def seed_parameters(model, seed: int = 0, scale: float = 1.0) -> None:
    """Overwrite every randomly initialised parameter with NumPy draws (normal, std
    scale / sqrt(fan_in)), by name, so both libraries start equal; parameters whose
    initialiser is deterministic (LayerNorm's ones and zeros) keep it. The initialisers
    themselves ran before, and init_stats recorded their spread."""
    g = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.numel() > 1 and float(p.std()) == 0:
                continue
            fan_in = math.prod(p.shape[1:]) if p.dim() > 1 else p.shape[0]
            arr = g.normal(0.0, scale / math.sqrt(fan_in), size=tuple(p.shape))
            p.data.copy_(torch.from_numpy(arr.astype(np.float32)))


def record(name: str, value) -> None:
    """Keep a value to compare: a number, a tensor, or a list of them."""
    _RECORD[name] = _plain(value)


def _plain(v):
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().double().numpy().tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    return float(v)


def init_stats(model) -> dict:
    """Name -> [centre, std] of each larger parameter as initialised: the initialisers are
    random, so only where they centre (the mean within five standard errors of zero) and
    their spread can be compared (test_programs compares keys starting with "init" to
    within sampling error)."""
    out = {}
    for name, p in sorted(model.named_parameters()):
        if p.numel() >= 256:
            mean, std = float(p.mean()), float(p.std())
            # whether the mean is where the initialiser centres it, and the spread
            out[name] = [abs(mean) < 5 * std / math.sqrt(p.numel()) if std else mean, std]
    return out


def grad_norms(model) -> dict:
    return {n: (math.sqrt(float((p.grad.double() ** 2).sum())) if p.grad is not None else None)
            for n, p in sorted(model.named_parameters())}


def finish() -> None:
    """Print the record as the program's last line."""
    print("RECORD " + json.dumps(_RECORD))
