"""In a job that made a group of some of the processes (new_group), the ranks trace each
compiled step together (_coordinated.py), so every rank must call it: a rank calling one
alone used to wait forever in the first exchange of the ranks' posts. Now it waits for the
others at a barrier of JAX's coordination service for the process group's timeout and then
raises, naming the feature and what to do instead. PyTorch itself lets a rank run a
compiled function alone; torchjax cannot while its traces meet (one program over every
process). Ranks that arrive at different moments within the timeout still trace together."""

import json
import time

from tests.distributed.conftest import _env, run_job

_JOB = """
import datetime
import json
import time
import warnings
import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=8))
rank = dist.get_rank()
sub = dist.new_group([0])  # a group of some of the processes: the ranks trace together
torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.arange(12.0).reshape(4, 3)


@torch.compile
def together(x):
    y = model(x)
    dist.all_reduce(y)
    return y.sum()


if rank == 1:
    time.sleep(1.0)  # arrives later, within the timeout: still one trace together
with warnings.catch_warnings(record=True) as caught, torch.no_grad():
    warnings.simplefilter("always")
    got = together(x * (rank + 1)).item()
    want = (model(x).sum() + model(2 * x).sum()).item()
line = "RESULT " + json.dumps({"rank": rank, "got": got, "want": want,
                              "programs": [together.compiles, together.executions],
                              "warnings": [str(w.message) for w in caught]})
for r in range(2):  # one after the other: lines written together would interleave
    if r == rank:
        print(line, flush=True)
    dist.barrier()


@torch.compile
def evaluate(x):  # no collective at all: PyTorch would run it on rank 0 alone
    return model(x).sum()


if rank == 0:
    t0 = time.time()
    try:
        evaluate(x)
    except RuntimeError as e:
        print("ERROR " + json.dumps({"message": str(e), "waited": time.time() - t0}),
              flush=True)
        raise
dist.barrier()
"""
_TIMEOUT = 150  # a hang fails the test


def test_a_rank_tracing_a_step_alone_raises_instead_of_hanging(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(_JOB)
    env = _env()
    env["TORCHJAX_CACHE_DIR"] = str(tmp_path / "cache")
    t0 = time.time()
    code, out, err = run_job(script, env, _TIMEOUT, "the job hung: still running")
    took = time.time() - t0
    results = [json.loads(v[7:]) for v in out.splitlines() if v.startswith("RESULT ")]
    assert len(results) == 2, (out, err[-3000:])
    for r in results:  # the step both ranks call: traced together, its all_reduce met
        assert abs(r["got"] - r["want"]) < 1e-4 * abs(r["want"]), r
        assert r["warnings"] == [] and r["programs"] == [1, 1], r  # one program, run once
    [error] = [json.loads(v[6:]) for v in out.splitlines() if v.startswith("ERROR ")]
    msg = error["message"]
    assert "new_group" in msg and "every rank must call" in msg and "timeout (8 s)" in msg
    assert "torch.compiler.disable" in msg
    assert 7.5 < error["waited"] < 60, error
    assert code != 0  # rank 0's error ends the job, as torchrun's would
    assert took < _TIMEOUT
