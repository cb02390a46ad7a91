"""Runs the 8-device scripts' checks in one process with 8 virtual CPU devices and reports each.

Imported first by every script in this folder (before jax), so XLA sees 8 devices. Each check
is a function; `<script>::<name>` and PASS or FAIL (with the traceback) are printed, one per
line, and the pytest side (conftest.run_check) turns every line into a test result.

`python tests/distributed/_checks.py ddp_script.py fsdp_script.py ...` runs several scripts'
checks in one process, one script after the other: the pytest side starts such a process for
each set of 8-device scripts it collected (conftest._SETS). Each process of its own paid ~2.5 s of start and
imports, and compiled again the programs the others had made (the same small nets, optimizers
and collectives on the same 8-device mesh). `python tests/distributed/ddp_script.py` runs one.
"""

import importlib
import os
import sys
import traceback

from tests.distributed._common import eight_devices

eight_devices()

import jax  # noqa: E402

jax.config.update("jax_disable_most_optimizations", True)

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def _script_of(fn) -> str:
    return os.path.basename(sys.modules[fn.__module__].__file__)


def run():
    assert len(jax.devices()) == 8, jax.devices()
    for fn in CHECKS:
        try:
            fn()
        except Exception:
            print(f"FAIL {_script_of(fn)}::{fn.__name__}: "
                  + traceback.format_exc().replace("\n", "\\n"), flush=True)
        else:
            print(f"PASS {_script_of(fn)}::{fn.__name__}", flush=True)
    sys.stdout.flush()


def run_scripts(names) -> None:
    """Each named script's checks, script by script (a script's checks register at its
    import; run() runs the ones registered so far and forgets them)."""
    for name in names:
        importlib.import_module("tests.distributed." + name.removesuffix(".py"))
        run()
        CHECKS.clear()


if __name__ == "__main__":
    # the scripts import this module as tests.distributed._checks: they must find these
    # CHECKS (and this jax configuration) there, not in a second copy of the module
    sys.modules["tests.distributed._checks"] = sys.modules["__main__"]
    run_scripts(sys.argv[1:])
