"""Runs a script's checks in one process with 8 virtual CPU devices and reports each.

Imported first by every script in this folder (before jax), so XLA sees 8 devices. Each check
is a function; its name and PASS or FAIL (with the traceback) are printed, one per line, and
the pytest side (conftest.run_checks) turns every line into a test result.
"""

import os
import sys
import traceback

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_disable_most_optimizations", True)

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def run():
    assert len(jax.devices()) == 8, jax.devices()
    for fn in CHECKS:
        try:
            fn()
        except Exception:
            print(f"FAIL {fn.__name__}: " + traceback.format_exc().replace("\n", "\\n"),
                  flush=True)
        else:
            print(f"PASS {fn.__name__}", flush=True)
    sys.stdout.flush()
