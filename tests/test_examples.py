"""The README's demo runs end to end (two epochs) and learns. It runs in its own process:
scikit-learn's native libraries stay out of the test workers."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

# find_spec, not importorskip: importing scikit-learn (its OpenMP runtime) into a test worker
# was followed by a segfault in a later XLA compile in that worker
pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("sklearn", "tqdm")),
    reason="the demo needs scikit-learn and tqdm (the test extra installs them)")


def test_digits_demo_trains():
    root = pathlib.Path(__file__).parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root / "src"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(root / "examples" / "train_digits.py"),
                          "--epochs", "2"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)", out.stdout).group(1))
    assert accuracy > 0.5  # chance is 0.1
