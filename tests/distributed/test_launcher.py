"""python -m torchjax.distributed.run: the variables it sets and how it stops (no JAX needed:
--no-python runs a shell script)."""

import os
import stat
import time

import pytest

from torchjax.distributed import run


def _script(tmp_path, body: str):
    path = tmp_path / "job.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_sets_torchrun_variables(tmp_path):
    job = _script(tmp_path, f'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK '
                            f'$MASTER_ADDR $MASTER_PORT $TORCHELASTIC_RUN_ID $1" '
                            f'> {tmp_path}/out.$RANK\n')
    code = run.main(["--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "2",
                     "--master-port", "29123", "--run-id", "abc", "--no-python", job, "x"])
    assert code == 0
    lines = [(tmp_path / f"out.{r}").read_text().split() for r in (2, 3)]
    assert lines[0] == ["2", "0", "4", "2", "1", "127.0.0.1", "29123", "abc", "x"]
    assert lines[1] == ["3", "1", "4", "2", "1", "127.0.0.1", "29123", "abc", "x"]


def test_one_failure_stops_the_others_and_gives_its_code(tmp_path):
    job = _script(tmp_path, 'if [ "$RANK" = 1 ]; then exit 3; fi\nexec sleep 60\n')
    t0 = time.monotonic()
    assert run.main(["--nproc-per-node", "2", "--no-python", job]) == 3
    assert time.monotonic() - t0 < 30


def test_refuses_what_it_cannot_do():
    with pytest.raises(SystemExit, match="max-restarts is not supported"):
        run.main(["--max-restarts", "2", "x.py"])
    with pytest.raises(SystemExit, match="must be an int"):
        run.main(["--nproc-per-node", "many", "x.py"])
    with pytest.raises(SystemExit, match="need --master-port"):
        run.main(["--nnodes", "2", "x.py"])
    assert os.environ.get("RANK") is None  # the launcher sets variables only for its children


def test_init_process_group_names_the_missing_variable_as_pytorch(monkeypatch):
    """PyTorch's env:// rendezvous reads RANK, then WORLD_SIZE (its messages, word for word,
    checked against torch 2.13's). A job of one process needs no MASTER_ADDR/MASTER_PORT here
    (no rendezvous happens), where PyTorch asks for them."""
    import torchjax.distributed as dist
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    for missing, env in (("RANK", {}), ("WORLD_SIZE", {"RANK": "0"})):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        with pytest.raises(ValueError, match=f"^Error initializing torch.distributed using "
                                             f"env:// rendezvous: environment variable "
                                             f"{missing} expected, but not set"):
            dist.init_process_group("gloo")
    assert not dist.is_initialized()
