"""Forked DataLoader workers while JAX works in the parent: 50 loaders started and exhausted
between training steps, in a subprocess under a timeout (a deadlock fails, never hangs)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

PROGRAM = pathlib.Path(__file__).parent / "programs" / "worker_stress.py"
SRC = str(pathlib.Path(__file__).parents[2] / "src")


def test_fifty_forked_loaders_between_training_steps():
    res = subprocess.run([sys.executable, str(PROGRAM), "50"], capture_output=True, text=True,
                         timeout=180, env={**os.environ, "PYTHONPATH": SRC})
    assert res.returncode == 0, res.stderr[-3000:]
    epochs, first, last, seconds = res.stdout.split()
    assert int(epochs) == 50
    assert float(last) < float(first) / 5  # it trained on the workers' batches
