"""Runs the 8-device scripts' checks in one process with 8 virtual CPU devices and reports each.

Imported first by every script in this folder (before jax), so XLA sees 8 devices. Each check
is a function; `<script>::<name>` and PASS or FAIL (with the traceback) are printed, one per
line, and the pytest side (conftest.run_check) turns every line into a test result.

`python tests/distributed/_checks.py ddp_script.py fsdp_script.py ...` runs several scripts'
checks in one process, one script after the other: the pytest side starts such a process for
each set of 8-device scripts it collected (conftest._SETS). Each process of its own paid ~2.5 s of start and
imports, and compiled again the programs the others had made (the same small nets, optimizers
and collectives on the same 8-device mesh). `python tests/distributed/ddp_script.py` runs one;
`--traced` among the names also prints what JAX traced, by function name.
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


def count_traced() -> list:
    """The names of the functions JAX traces from now on (its trace event), in order: what a
    warm run (a second one on the same TORCHJAX_CACHE_DIR) could not load untraced."""
    traced: list = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, secs, **kw: traced.append(kw.get("fun_name"))
        if event == "/jax/core/compile/jaxpr_trace_duration" else None)
    return traced


if __name__ == "__main__":
    # the scripts import this module as tests.distributed._checks: they must find these
    # CHECKS (and this jax configuration) there, not in a second copy of the module
    sys.modules["tests.distributed._checks"] = sys.modules["__main__"]
    names = sys.argv[1:]
    traced = count_traced() if "--traced" in names else None  # (docs/performance_distributed.md)
    run_scripts([n for n in names if n != "--traced"])
    if traced is not None:
        import collections
        print(f"TRACED {len(traced)} {collections.Counter(traced).most_common()}")
