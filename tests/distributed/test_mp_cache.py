"""The on-disk caches in a job of 2 processes (`python -m torchjax.distributed.run`): the
same job run twice with one temporary cache directory. The second run loads every program
(torchjax's program cache for per-process programs and for the SPMD programs over both
processes it names: collectives, DDP's and FSDP's arrays, the compiled steps' SPMD programs)
on every rank, compiles none, traces none of torchjax's programs, and gives the first run's
results, which are the definitions' (mp_cache_script.py)."""

import json

import numpy as np
import pytest

from tests.distributed.conftest import HERE, _env, run_job

_TIMEOUT = 300  # a hang (a rank waiting for the other in a collective) fails the test


def _run_job(cache_dir) -> list:
    env = _env()
    env["TORCHJAX_CACHE_DIR"] = str(cache_dir)
    env.pop("TORCHJAX_CACHE", None)
    env.pop("TORCHJAX_CACHE_PROGRAMS", None)
    code, out, err = run_job(HERE / "mp_cache_script.py", env, _TIMEOUT,
                             "the 2-process job did not finish")
    assert code == 0, err[-3000:]
    got = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(got) == 2, (out, err[-3000:])
    return sorted(got, key=lambda r: r["rank"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cache = tmp_path_factory.mktemp("mp_cache")
    return _run_job(cache), _run_job(cache)


def test_second_run_compiles_nothing(runs):
    cold, warm = runs
    for r in range(2):
        # (the cold run may load a few programs it wrote itself: one made again elsewhere)
        assert cold[r]["stats"]["compiled"] > 20
        # every program of every rank came from disk: per-process and SPMD ones alike
        assert warm[r]["stats"]["compiled"] == 0, (r, cold[r]["stats"], warm[r]["stats"])
        assert warm[r]["stats"]["cache_hits"] == (cold[r]["stats"]["compiled"]
                                                 + cold[r]["stats"]["cache_hits"])
        assert cold[r]["warnings"] == [] and warm[r]["warnings"] == []
        # and nothing of torchjax's was traced to be looked up: programs on DDP's and FSDP's
        # arrays over both processes are in the program cache too (14 per rank were not)
        assert warm[r]["stats"]["unkeyed"] == 0, warm[r]["stats"]
        assert warm[r]["stats"]["traced"] < cold[r]["stats"]["traced"]


# What a warm run still traces, per rank: nothing. The two compiled steps' SPMD programs
# (DDP's and fully_shard's, `per_rank`: jax.shard_map over the jaxpr of the user's step) are
# named by that jaxpr now (compiler/_program_name.py; they were traced on every run, 2 per
# rank); the step itself is traced by torchjax.compile, per rank under the process axis,
# which JAX's trace event does not report. Before that the collectives, DDP's broadcast, the
# per-rank step's row and reshard programs, from_jax's Reshard and the optimizer's fills were
# named: 59 per rank.
_STILL_TRACED: dict = {}


def test_second_run_traces_only_the_users_steps(runs):
    cold, warm = runs
    for r in range(2):
        names = warm[r]["stats"]["traced_names"]
        assert len(names) == warm[r]["stats"]["traced"], warm[r]["stats"]
        counts = {n: names.count(n) for n in set(names)}
        assert counts == _STILL_TRACED, (r, counts)


def test_second_run_gives_the_first_runs_results(runs):
    cold, warm = runs
    for r in range(2):
        for k, v in cold[r].items():
            if k != "stats":
                assert warm[r][k] == v, (r, k)


def test_results_are_the_definitions(runs):
    cold, _ = runs
    for r, res in enumerate(cold):
        x = np.array([1.0, 2.0]) * (r + 1)
        np.testing.assert_allclose(res["local"], (np.tanh(x) * 3).sum(), rtol=1e-6)
        assert res["collectives"] == [[3.0, 6.0], [10.0 + 4 * r, 12.0 + 4 * r]]
        # the same shapes under other ops and sources (x is [1, 2] on rank 0, [2, 4] on 1)
        o = res["other_collectives"]
        assert o["MAX"] == [2.0, 4.0] and o["MIN"] == [1.0, 2.0]
        assert o["AVG"] == [1.5, 3.0] and o["PRODUCT"] == [2.0, 8.0]
        assert o["broadcast1"] == [2.0, 4.0] and o["broadcast0"] == [1.0, 2.0]
        assert o["all_gather"] == [[1.0, 2.0], [2.0, 4.0]]
        assert o["all_gather_into_tensor"] == [1.0, 2.0, 2.0, 4.0]
        assert o["all_to_all_single"] == [[1.0, 12.0], [2.0, 14.0]][r]
        assert o["scatter"] == [[7.0, 7.0], [8.0, 8.0]][r]
        assert o["gather"] == [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]][r]
        assert o["object"] == [None, {"from": 0}][r]
        assert o["scalars"] == [3.0, [], [2.0], [1], [0.0, 5.0], [[], []]]
        # the compiled steps (one SPMD program over both processes) train as eagerly
        for kind in ("ddp_compiled", "fsdp_compiled"):
            np.testing.assert_allclose(res[kind]["losses"], res["ddp"]["losses"], rtol=1e-5)
            for a, b in zip(res[kind]["params"], res["ddp"]["params"]):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert cold[0]["ddp"]["params"] == cold[1]["ddp"]["params"]
