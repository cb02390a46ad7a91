"""Importing torch.distributed.tensor costs a program nothing until it makes a DTensor: the
hook that gives DTensor results (which every op then pays, and which turns deferred op
sequences off) is installed by the first DTensor."""

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")

CODE = r"""
import torchjax
import torchjax.distributed.tensor as dt
from torchjax import _result_hooks
from torchjax.distributed.device_mesh import init_device_mesh

x = torchjax.ones(3) * 2 + 1  # (the first op settles the dtype policy's own hook)
assert _result_hooks.STATE.hooks == (), _result_hooks.STATE.hooks
mesh = init_device_mesh("cpu", (1,))
d = dt.distribute_tensor(torchjax.arange(4.0), mesh, [dt.Replicate()])
assert [h.__module__ for h in _result_hooks.STATE.hooks] == [
    "torchjax.distributed.tensor._propagate"], _result_hooks.STATE.hooks
y = d * 2
assert isinstance(y, dt.DTensor) and y.placements == (dt.Replicate(),), type(y)
print("ok")
"""


def test_the_first_dtensor_installs_the_op_hook():
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "TORCHJAX_CACHE": "0"}
    res = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
