"""Every script here runs in its own process (8 virtual CPU devices need XLA_FLAGS before jax
is imported); the scripts of a session start together, and each check they report is a test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SRC = str(HERE.parent.parent / "src")
ROOT = str(HERE.parent.parent)
_PROCS: dict = {}
_RESULTS: dict = {}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, ROOT, env.get("PYTHONPATH", "")])
    env.pop("XLA_FLAGS", None)
    return env


def _argv(script: str) -> list:
    if script.startswith("2 processes:"):  # through the launcher, as torchrun would
        return [sys.executable, "-m", "torchjax.distributed.run", "--nproc-per-node", "2",
                str(HERE / script.split(":", 1)[1].strip())]
    return [sys.executable, str(HERE / script)]


def _start(script: str):
    if script not in _PROCS and script not in _RESULTS:
        _PROCS[script] = subprocess.Popen(
            _argv(script), env=_env(), cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def output(script: str) -> tuple:
    """(exit code, stdout, stderr) of a script that reports in its own format."""
    _start(script)
    if script not in _RESULTS:
        p = _PROCS.pop(script)
        _RESULTS[script] = _finish(p)
    return _RESULTS[script]


def _finish(p):
    out, err = p.communicate(timeout=600)
    return p.returncode, out, err


def results(script: str) -> dict:
    """{check name: None if it passed, else its traceback} for one script."""
    _start(script)
    if script not in _RESULTS:
        p = _PROCS.pop(script)
        out, err = p.communicate(timeout=600)
        got = {}
        for line in out.splitlines():
            if line.startswith("PASS "):
                got[line[5:]] = None
            elif line.startswith("FAIL "):
                name, _, tb = line[5:].partition(": ")
                got[name] = tb.replace("\\n", "\n")
        if p.returncode != 0:
            got["__exit__"] = f"exit code {p.returncode}\n{err[-3000:]}"
        _RESULTS[script] = got
    return _RESULTS[script]


def run_check(script: str, name: str) -> None:
    got = results(script)
    if "__exit__" in got:
        pytest.fail(f"{script} failed: {got['__exit__']}")
    if name not in got:
        pytest.fail(f"{script} did not report {name}")
    if got[name] is not None:
        pytest.fail(f"{script}::{name}\n{got[name]}")


def pytest_collection_modifyitems(session, config, items):
    # every script of the session starts at once: their imports overlap
    for item in items:
        script = getattr(item.module, "SCRIPT", None)
        if script is not None:
            _start(script)


def pytest_sessionfinish(session, exitstatus):
    # scripts started for tests that were then deselected (-k) are not left running
    for p in _PROCS.values():
        p.kill()
        p.communicate()
    _PROCS.clear()
