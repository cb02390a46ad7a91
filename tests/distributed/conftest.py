"""Every script here runs in its own process (8 virtual CPU devices need XLA_FLAGS before jax
is imported), once per test session, and each check it reports is a test.

Without xdist the scripts of a session start together at collection (their imports overlap).
With xdist, the tests of one script form an xdist group (pyproject's --dist loadgroup), so one
worker runs the script and its tests. Should its tests still land on several workers (another
--dist mode), the first worker that needs a script runs it under a file lock in the session's
shared temporary directory and leaves its output there; the others read it.
"""

import fcntl
import json
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
_SHARED: list = []  # the directory xdist workers share (set by the session fixture)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, ROOT, env.get("PYTHONPATH", "")])
    env.pop("XLA_FLAGS", None)
    return env


def _argv(script: str) -> list:
    if " processes:" in script:  # "N processes: x.py": through the launcher, as torchrun
        n, _, name = script.partition(" processes:")
        return [sys.executable, "-m", "torchjax.distributed.run", "--nproc-per-node", n,
                str(HERE / name.strip())]
    return [sys.executable, str(HERE / script)]


def _start(script: str):
    if script not in _PROCS and script not in _RESULTS:
        _PROCS[script] = subprocess.Popen(
            _argv(script), env=_env(), cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(script: str) -> list:
    p = _PROCS.pop(script)
    out, err = p.communicate(timeout=600)
    return [p.returncode, out, err]


def output(script: str) -> tuple:
    """(exit code, stdout, stderr) of one run of the script in this session."""
    if script in _RESULTS:
        return _RESULTS[script]
    if script in _PROCS or not _SHARED:
        _start(script)
        _RESULTS[script] = tuple(_finish(script))
        return _RESULTS[script]
    name = "".join(c if c.isalnum() else "_" for c in script)
    done = _SHARED[0] / f"{name}.json"
    with open(_SHARED[0] / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _start(script)
            done.write_text(json.dumps(_finish(script)))
    _RESULTS[script] = tuple(json.loads(done.read_text()))
    return _RESULTS[script]


def rank_results(script: str, n: int = 2) -> list:
    """The `RESULT <json>` line of each of a multi-process script's n ranks, by rank."""
    code, out, err = output(script)
    assert code == 0, err[-3000:]
    got = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(got) == n, (out, err[-3000:])
    return sorted(got, key=lambda r: r["rank"])


def results(script: str) -> dict:
    """{check name: None if it passed, else its traceback} for one script."""
    code, out, err = output(script)
    got = {}
    for line in out.splitlines():
        if line.startswith("PASS "):
            got[line[5:]] = None
        elif line.startswith("FAIL "):
            name, _, tb = line[5:].partition(": ")
            got[name] = tb.replace("\\n", "\n")
    if code != 0:
        got["__exit__"] = f"exit code {code}\n{err[-3000:]}"
    return got


def run_check(script: str, name: str) -> None:
    got = results(script)
    if "__exit__" in got:
        pytest.fail(f"{script} failed: {got['__exit__']}")
    if name not in got:
        pytest.fail(f"{script} did not report {name}")
    if got[name] is not None:
        pytest.fail(f"{script}::{name}\n{got[name]}")


@pytest.fixture(scope="session", autouse=True)
def _shared_dir(tmp_path_factory):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _SHARED.append(tmp_path_factory.getbasetemp().parent)
    yield


@pytest.hookimpl(tryfirst=True)  # (before xdist reads the groups)
def pytest_collection_modifyitems(session, config, items):
    # a script's tests run on one xdist worker (pyproject's --dist loadgroup), which runs it;
    # spread over both, one worker would wait on the file lock for the other's run
    # (the hook sees the whole session's items: only this directory's modules name scripts
    # here; other test files have a SCRIPT of their own meaning)
    here = os.path.dirname(os.path.abspath(__file__))
    ours = [(item, item.module.SCRIPT) for item in items
            if getattr(item.module, "SCRIPT", None) is not None
            and os.path.dirname(str(item.path)) == here]
    for item, script in ours:
        item.add_marker(pytest.mark.xdist_group(f"script-{script}"))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # each worker would start every script: they run on first use instead
    for _, script in ours:
        _start(script)


def pytest_sessionfinish(session, exitstatus):
    # scripts started for tests that were then deselected (-k) are not left running
    for p in _PROCS.values():
        p.kill()
        p.communicate()
    _PROCS.clear()
