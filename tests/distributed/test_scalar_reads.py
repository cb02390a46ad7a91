"""bool(), float(), int() and item() of a 0-d sharded tensor (a DTensor's loss, a replicated
flag) read its value without a program: the reshape to () they took was traced again in
every process, warm or not."""

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")

CODE = r"""
import torchjax
import torchjax.distributed.tensor as dt
from torchjax.distributed.device_mesh import init_device_mesh

mesh = init_device_mesh("cpu", (2,))
d = dt.distribute_tensor(torchjax.tensor(2.5), mesh, [dt.Replicate()])
a = d.to_local()
before = torchjax.compile_stats().traced
got = (bool(d), float(d), int(d), d.item(), float(a))
assert got == (True, 2.5, 2, 2.5, 2.5), got
assert torchjax.compile_stats().traced == before, torchjax.compile_stats()
print("ok")
"""


def test_scalar_reads_of_a_sharded_0d_tensor_trace_nothing():
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "TORCHJAX_CACHE": "0",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    res = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-3000:]
