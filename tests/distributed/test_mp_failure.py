"""A rank that fails in a 2-process job (torchjax's launcher) ends the job
with its error, as under torchrun, instead of hanging: the failing rank used to wait in JAX's
exit barrier for the other rank, which waited for it in its next collective."""

import os
import signal
import subprocess

import pytest

from tests.distributed.conftest import ROOT, _env, launcher

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


def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(_JOB)
    env = _env()
    env["TORCHJAX_CACHE"] = "0"
    p = subprocess.Popen(launcher(2, script), env=env, cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"the job did not end in {_TIMEOUT} s after rank 1 failed")
    assert p.returncode != 0
    assert "RuntimeError: rank 1 fails here" in err
    assert "rank 0 finished" not in out
