"""A rank that fails in a 2-process job ends the job with its error, as under torchrun, instead
of hanging: the failing rank used to wait in JAX's exit barrier for the other rank, which
waited for it in its next collective. Through torchjax's launcher, and with each rank started
by plain `python job.py` and torchrun's variables (init_process_group installs the exit)."""

import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from tests.distributed.conftest import ROOT, _env, run_job

_JOB = """
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(2)
dist.all_reduce(t)  # both ranks have joined gloo's collectives
if rank == 1:
    raise RuntimeError("rank 1 fails here")
dist.all_reduce(t)  # rank 0 waits here for rank 1, which never comes
print("rank 0 finished", flush=True)
"""
_TIMEOUT = 150  # a hang fails the test (JAX's exit barrier waits longer than this)
# a hang fails the test (without the fix both ranks were still running at 90 s)
_PLAIN_TIMEOUT = 90


def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(_JOB)
    env = _env()
    env["TORCHJAX_CACHE"] = "0"
    code, out, err = run_job(script, env, _TIMEOUT, "the job did not end after rank 1 failed")
    assert code != 0
    assert "RuntimeError: rank 1 fails here" in err
    assert "rank 0 finished" not in out


# plain `python job.py` on each rank, torchrun's variables set by hand (no launcher, so no
# one stops the other rank): init_process_group makes a failing rank skip JAX's exit barrier
_PLAIN_JOB = """
import sys
import threading
import torchjax as torch
import torchjax.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(2)
dist.all_reduce(t)
how, failing = sys.argv[1], int(sys.argv[2])
if rank == failing:
    if how == "raise":
        raise RuntimeError(f"rank {rank} fails here")
    print(f"rank {rank} exits with 3", file=sys.stderr, flush=True)
    sys.exit(3)
dist.all_reduce(t)  # the failing rank never comes: its process ends, which ends this one
print(f"rank {rank} finished", flush=True)
"""


# rank 1 raises; rank 0, which hosts JAX's coordination service, calls sys.exit(3)
@pytest.mark.parametrize("how, failing", [("raise", 1), ("exit", 0)])
def test_a_failing_rank_exits_without_the_launcher(tmp_path, how, failing):
    script = tmp_path / "job.py"
    script.write_text(_PLAIN_JOB)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(2):
        env = _env()
        env.update(TORCHJAX_CACHE="0", RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, str(script), how, str(failing)],
                                      env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      start_new_session=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=_PLAIN_TIMEOUT))
    except subprocess.TimeoutExpired:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        pytest.fail(f"the ranks did not end in {_PLAIN_TIMEOUT} s after rank {failing} failed")
    bad, other = procs[failing], procs[1 - failing]
    err = outs[failing][1]
    # the failing rank's own exit code: before its JAX client and service were kept
    # undestroyed at exit, rank 0 waited in their teardown until JAX's error poller
    # aborted it (134)
    if how == "raise":
        assert bad.returncode == 1 and "RuntimeError: rank 1 fails here" in err
    else:
        assert bad.returncode == 3 and "rank 0 exits with 3" in err
    assert other.returncode != 0 and "finished" not in outs[1 - failing][0]


def test_only_the_main_threads_exit_code_counts(monkeypatch):
    """sys.exit in another thread ends that thread only: it must not make a process that
    then exits normally skip the barrier."""
    from torchjax.distributed import _exit
    monkeypatch.delattr(sys, "last_value", raising=False)  # (pytest sets it on failures)
    _exit.install()
    try:
        def thread_exits():
            try:
                sys.exit(2)
            except SystemExit:  # (as the thread's end would; pytest reports it otherwise)
                pass
        t = threading.Thread(target=thread_exits)
        t.start()
        t.join()
        assert not _exit._failed()
        with pytest.raises(SystemExit):
            sys.exit(3)
        assert _exit._failed()
    finally:
        _exit._state["exit_code"] = None
        _exit.uninstall()
    assert sys.exit is _exit._state["sys_exit"]
