"""The examples run end to end in short versions: the README's demo (two epochs) learns, and
each gallery example does what it shows. Each runs in its own process: scikit-learn's native
libraries stay out of the test workers, and the data-parallel one needs 8 virtual devices."""

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
needs_demo_extra = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("sklearn", "tqdm")),
    reason="the demo needs scikit-learn and tqdm (the test extra installs them)")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("tqdm") is None,
                                reason="the examples need tqdm (the test extra installs it)")


@needs_demo_extra
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


# The gallery's examples (examples/README.md), each in a short version and in its own process
# (the data-parallel one needs XLA_FLAGS before JAX starts). Each asserts what the example
# promises, on a run of a few seconds of work.

def _run_example(name, *args, extra_env=None, timeout=600):
    root = pathlib.Path(__file__).parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root / "src"), os.environ.get("PYTHONPATH", "")]), **(extra_env or {}))
    out = subprocess.run([sys.executable, str(root / "examples" / f"{name}.py"), *args],
                         capture_output=True, text=True, env=env, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_seed_walkthrough(tmp_path):
    out = _run_example("seed_walkthrough", "--steps", "40", "--out", str(tmp_path / "g"))
    assert "x.grad = 7.0" in out and "d2y/dx2 = 2.0" in out
    assert "MulBackward0" in out and "AccumulateGrad" in out
    picture = list(tmp_path.glob("g.*"))
    if importlib.util.find_spec("graphviz") is not None:  # the viz extra: a picture or its DOT
        assert len(picture) == 1 and "svg" in picture[0].read_text()[:3000].lower() \
            if picture[0].suffix == ".svg" else "digraph" in picture[0].read_text()
    c = [float(v) for v in re.search(r"\(c0, c1, c2\) = \[([^\]]+)\]", out).group(1).split(",")]
    assert abs(c[1] - 3) < 0.5  # the slope is learned first


def test_tree_net():
    out = _run_example("tree_net", "--samples", "96", "--test", "40", "--depth", "3",
                       "--batch", "8")
    assert re.search(r"test accuracy: [0-9.]+", out)
    assert " = " in out.splitlines()[0]  # printed sample trees with their values


def test_char_transformer():
    out = _run_example("char_transformer", "--steps", "4", "--block", "16", "--batch", "4",
                       "--length", "12", "--prompt", "The")
    loss = float(re.search(r"final training loss ([0-9.]+)", out).group(1))
    assert 0 < loss < 6
    sampled = out.split("--- sampled text ---\n")[1].rstrip("\n")
    assert sampled.startswith("The") and len(sampled) == 3 + 12


@pytest.mark.skipif(importlib.util.find_spec("optax") is None, reason="needs optax")
def test_checkpoint_to_jax(tmp_path):
    out = _run_example("checkpoint_to_jax", "--steps", "30", "--out", str(tmp_path / "ft.pt"))
    assert "apply_fn gives the module's outputs: True" in out
    before = float(re.search(r"trained for ([0-9.]+)", out).group(1))
    assert before < 0.01  # PyTorch's weights loaded as PyTorch trained them
    assert (tmp_path / "ft.pt").stat().st_size > 0
    if importlib.util.find_spec("torch") is not None:  # the oracle reads what we wrote
        check = subprocess.run([sys.executable, "-c", (
            "import torch; sd = torch.load(r'%s', weights_only=True); "
            "print(sorted(sd)[0], tuple(sd['0.weight'].shape))") % (tmp_path / "ft.pt")],
            capture_output=True, text=True, timeout=300)
        assert check.returncode == 0, check.stderr[-2000:]
        assert "(32, 4)" in check.stdout


def test_data_parallel_on_8_virtual_devices():
    out = _run_example("data_parallel", "--steps", "3", "--batch", "64",
                       extra_env={"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    assert "on 8 devices" in out
    assert "8 shards of 8 rows" in out
    assert "every device holds the same first weight after training: True" in out
