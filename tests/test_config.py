"""What importing torchjax sets in JAX: inline CPU dispatch unless opted out, and not x64 (torchjax
turns it on only around its own work: tests/test_x64_scope.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = ("import torchjax, jax; v = jax.config.values; "
          "print(v['jax_enable_x64'], v['jax_cpu_enable_async_dispatch'])")


@pytest.mark.parametrize("env, expected", [({}, "False False"),
                                           ({"TORCHJAX_CPU_ASYNC_DISPATCH": "1"}, "False True")])
def test_import_configures_jax(env, expected):
    full = {k: v for k, v in os.environ.items() if k != "TORCHJAX_CPU_ASYNC_DISPATCH"}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == expected
