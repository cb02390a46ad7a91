"""Every script here runs in a process of its own (8 virtual CPU devices need XLA_FLAGS before
jax is imported), once per test session, and each check it reports is a test.

The 8-device scripts (ddp_script.py, ...) collected in a session share two processes
(_checks.py runs a set of them one after the other, _SETS): a process of its own per script
paid its start and imports and compiled the programs the others had made again. A multi-process job
("2 processes: mp_script.py") is a process per rank under the launcher.

Without xdist the session's jobs start together at collection (their imports overlap).
With xdist, the tests of one job form an xdist group (pyproject's --dist loadgroup), so one
worker runs the job and its tests. Should its tests still land on several workers (another
--dist mode), the first worker that needs a job runs it under a file lock in the session's
shared temporary directory and leaves its output there; the others read it.
"""

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _FAST_COMPILE
from tests.distributed._common import job_env

HERE = Path(__file__).parent
SRC = str(HERE.parent.parent / "src")
ROOT = str(HERE.parent.parent)
_PROCS: dict = {}
_RESULTS: dict = {}
_JOB: dict = {}  # an 8-device script -> the job that runs it with others of its set
_CHECKS_JOB = "checks: "
# The 8-device scripts that share a process: those training the same small nets (their
# programs are the others'; checkpoint_script.py's sharded nets and Adam too), and the
# rest. Two processes, not one: a session without xdist runs them side by side on two cores
# (one process for all five took longer than the slowest of the five processes before). A
# script in no set runs alone.
_SETS = (("ddp_script.py", "fsdp_script.py", "tp_script.py", "checkpoint_script.py"),
         ("collectives_script.py", "dtensor_script.py", "names_script.py"))
_SHARED: list = []  # the directory xdist workers share (set by the session fixture)


# XLA:CPU's legacy emitters compile the scripts' hundreds of small programs faster than its
# fusion emitters (one run each, user CPU: dtensor_script.py 9.5 s to 7.6 s, fsdp_script.py
# 7.5 s to 5.0 s), as the in-process tests use them; every check here passes under both,
# each at its own tolerance against PyTorch or one device. tests/conftest.py found whether
# this XLA still knows the option (an XLA that did not would abort on the flag)
_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false" if _FAST_COMPILE else ""


def _env():
    return job_env(_XLA_FLAGS)  # (the 8-device scripts add their devices to it)


def launcher(n: int, script) -> list:
    """The command of an n-process job of `script` through torchjax's launcher.

    mp_script.py's job runs it as users do, `python -m torchjax.distributed.run`; the others
    run its file, the same code without importing torchjax and jax first (the package's
    __init__ runs before any module of it: ~1.6 s of the launcher's start, before the first
    rank starts, in each job)."""
    if Path(script).name == "mp_script.py":
        return [sys.executable, "-m", "torchjax.distributed.run", "--nproc-per-node", str(n),
                str(script)]
    return [sys.executable, os.path.join(SRC, "torchjax", "distributed", "run.py"),
            "--nproc-per-node", str(n), str(script)]


def run_job(script, env, timeout: float, hang: str) -> tuple:
    """(returncode, stdout, stderr) of a 2-process job of `script` through the launcher, in
    its own session: a job still running after `timeout` seconds is killed whole (the
    launcher and both ranks) and the test fails with `hang` and the end of its stderr."""
    p = subprocess.Popen(launcher(2, script), env=env, cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"{hang} ({timeout} s)\n{err[-3000:]}")
    return p.returncode, out, err


def _argv(script: str) -> list:
    if script.startswith(_CHECKS_JOB):  # "checks: a.py b.py": their checks in one process
        return [sys.executable, str(HERE / "_checks.py")] + script[len(_CHECKS_JOB):].split()
    if " processes:" in script:  # "N processes: x.py": through the launcher, as torchrun
        n, _, name = script.partition(" processes:")
        return launcher(int(n), HERE / name.strip())
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
    code, out, err = output(_JOB.get(script, script))
    got = {}
    mine = script + "::"
    for line in out.splitlines():
        if line.startswith("PASS " + mine):
            got[line[5 + len(mine):]] = None
        elif line.startswith("FAIL " + mine):
            name, _, tb = line[5 + len(mine):].partition(": ")
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
    collected = {script for _, script in ours}
    for members in _SETS:  # (every xdist worker collects the same items: the same jobs)
        job = _CHECKS_JOB + " ".join(s for s in members if s in collected)
        for script in members:
            if script in collected:
                _JOB[script] = job
    for item, script in ours:
        item.add_marker(pytest.mark.xdist_group(f"script-{_JOB.get(script, script)}"))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # each worker would start every job: they run on first use instead
    for _, script in ours:
        _start(_JOB.get(script, script))


def pytest_sessionfinish(session, exitstatus):
    # scripts started for tests that were then deselected (-k) are not left running
    for p in _PROCS.values():
        p.kill()
        p.communicate()
    _PROCS.clear()
