"""Compiled steps across 3 processes on 127.0.0.1 (`python -m torchjax.distributed.run`) with
collectives on groups of some of the processes and send/recv between pairs of them, each
one SPMD program, against the same steps run eagerly and the collectives' definitions
(mp_groups_script.py)."""

import numpy as np
import pytest

from tests.distributed.conftest import rank_results

SCRIPT = "3 processes: mp_groups_script.py"


@pytest.fixture(scope="module")
def ranks():
    return rank_results(SCRIPT, 3)


def _x(rank, k):
    return np.array([1.0, 2.0]) + 3 * rank + k


@pytest.mark.parametrize("name", ["groups", "ring"])
def test_compiled_step_is_one_program_matching_eager(ranks, name):
    for res in ranks:
        assert res["graph_breaks"] == []
        assert res[name + "_programs"] == [1, 2]
        assert res[name + "_compiled"] == res[name]


def test_group_collectives_match_their_definitions(ranks):
    for k in range(2):
        x = [_x(r, k) for r in range(3)]
        for r, res in enumerate(ranks):
            a, b, c, gathered, d = (np.array(v) for v in res["groups"][k])
            np.testing.assert_array_equal(a, x[0] + x[1] if r < 2 else x[2])
            np.testing.assert_array_equal(b, 2 * x[2] if r else 2 * x[0])
            np.testing.assert_array_equal(
                gathered, np.stack(x[:2]) if r < 2 else np.zeros((2, 2)))
            np.testing.assert_array_equal(d, 3 * (x[0] + x[1]) if r < 2 else 3 * x[2])
            # all_to_all_single on [1, 2]: member j's half of each member's 10 * x
            a2a = [np.array([10 * x[1][j], 10 * x[2][j]]) for j in range(2)]
            c_all = [x[0] + 1, x[1] + 1 + a2a[0], x[2] + 1 + a2a[1]]
            np.testing.assert_array_equal(c, np.max(c_all, axis=0))


def test_point_to_point_among_three_matches_its_definition(ranks):
    for k in range(2):
        for r, res in enumerate(ranks):
            got, back = (np.array(v) for v in res["ring"][k])
            np.testing.assert_array_equal(got, _x((r - 1) % 3, k) + 1)
            np.testing.assert_array_equal(back, np.zeros(2) if r == 1 else 5 * _x(2 - r, k))


def test_a_break_on_one_rank_breaks_every_rank(ranks):
    """Rank 2 alone reads a value in Python: every rank runs the step eagerly (the others'
    programs would wait for rank 2's), with eager's results and a warning naming the line."""
    for r, res in enumerate(ranks):
        assert res["breaks_compiled"] == res["breaks"]
        [msg] = res["breaks_warnings"]
        if r == 2:
            assert "float(a.sum())" in msg
        else:
            assert "dist.all_reduce(a, group=g01)" in msg and "another rank's trace" in msg
    x = [_x(r, 0) for r in range(3)]
    want = 2 * (x[0] + x[1]) + x[2] + 1
    for res in ranks:
        np.testing.assert_array_equal(res["breaks"][0], want)
