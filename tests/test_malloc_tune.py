"""glibc malloc's thresholds set at import (torchjax/_malloc_tune.py): on by default on Linux
with glibc, off with TORCHJAX_MALLOC_TUNE=0 or when the environment sets glibc's own malloc
settings; results are the same either way. (Its effect on speed is measured in
bench/bench_startup.py, docs/performance_startup.md.)"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt only")

_SCRIPT = """
import json
import torchjax
from torchjax import _malloc_tune
x = torchjax.arange(300000, dtype=torchjax.float32).reshape(600, 500)
y = (x * 0.5 + 1.0).tanh().sum(0)
print(json.dumps({"applied": _malloc_tune.APPLIED[0], "sum": float(y.sum())}))
"""


def _run(**env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("TORCHJAX_MALLOC_TUNE", "MALLOC_TRIM_THRESHOLD_",
                         "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    full.update(env)
    res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         env=full, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_set_at_import_unless_switched_off_or_the_user_set_malloc():
    on = _run()
    assert on["applied"] is True
    assert _run(TORCHJAX_MALLOC_TUNE="0")["applied"] is False
    assert _run(MALLOC_TRIM_THRESHOLD_="1048576")["applied"] is False
    off = _run(TORCHJAX_MALLOC_TUNE="0")
    want = np.tanh(np.arange(300000, dtype=np.float32).reshape(600, 500) * 0.5 + 1.0).sum()
    np.testing.assert_allclose([on["sum"], off["sum"]], [want, want], rtol=1e-5)
