"""Compiled steps across 2 processes on 127.0.0.1 (`python -m torchjax.distributed.run`),
each one SPMD program, against the same steps run eagerly (mp_compiled_script.py)."""

import json

import numpy as np
import pytest

from tests.distributed.conftest import output

SCRIPT = "2 processes: mp_compiled_script.py"


@pytest.fixture(scope="module")
def ranks():
    code, out, err = output(SCRIPT)
    assert code == 0, err[-3000:]
    got = [json.loads(line[7:]) for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(got) == 2, (out, err[-3000:])
    return sorted(got, key=lambda r: r["rank"])


def test_rank_dependent_collectives_compile_to_one_program(ranks):
    """reduce, gather, scatter, reduce_scatter and all_to_all (a result only some ranks keep,
    or tensors only some ranks pass) inside one compiled step: one program per signature,
    no graph break, the eager results on both calls."""
    for res in ranks:
        assert res["graph_breaks"] == []
        assert res["collectives_compiled"] == res["collectives"]
        assert res["collectives_compiled_2"] == res["collectives_eager_2"]
        assert res["collectives_programs"] == [1, 2]
    xs = [np.array([1.0, 2.0]) + 3 * r for r in range(2)]
    r0, r1 = ranks[0]["collectives"], ranks[1]["collectives"]
    assert r0[0] == xs[0].tolist() and r1[0] == np.maximum(*xs).tolist()  # reduce to 1
    for r, got in enumerate((r0, r1)):
        assert got[1] == ((r + 1) * (xs[0] + xs[1])).tolist()  # reduce_scatter
        assert got[2] == (xs[1] + 10 * r).tolist()  # scatter from 1
        assert got[3:5] == [(xs[j] + 100 * r).tolist() for j in range(2)]  # all_to_all
    assert r0[5:] == [(2 * x).tolist() for x in xs] and len(r1) == 5  # gather to 0


def test_a_rank_constant_is_not_folded_through_a_collective(ranks):
    for res in ranks:
        assert res["made_inside"] == [3.0]
