"""Compiled steps across 2 processes on 127.0.0.1 (`python -m torchjax.distributed.run`),
each one SPMD program, against the same steps run eagerly (mp_compiled_script.py, run in
test_multiprocess.py's job: its "compiled" entry)."""


import numpy as np
import pytest

from tests.distributed.conftest import rank_results

SCRIPT = "2 processes: mp_script.py"


@pytest.fixture(scope="module")
def ranks():
    return [r["compiled"] for r in rank_results(SCRIPT)]


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


def test_every_reduce_op_eager_and_compiled_matches_its_definition(ranks):
    """all_reduce with each ReduceOp across the 2 processes, eagerly and inside one compiled
    step, against the definitions (PyTorch's: AVG of integers is not allowed on gloo, and
    is left out); PREMUL_SUM, which gloo has not either, is refused by name."""
    f = [np.array([1.5, -2.0]) * (r + 1) for r in range(2)]
    i = [np.array([6, 3, 12]) + 5 * r for r in range(2)]
    want = [f[0] + f[1], (f[0] + f[1]) / 2, f[0] * f[1], np.minimum(*f), np.maximum(*f),
            i[0] + i[1], i[0] * i[1], np.minimum(*i), np.maximum(*i), i[0] & i[1],
            i[0] | i[1], i[0] ^ i[1]]
    for res in ranks:
        for got in (res["reduce_ops"], res["reduce_ops_compiled"]):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
        assert res["reduce_ops_dtypes"] == ["torch.float32"] * 5 + ["torch.int64"] * 7
        assert res["reduce_ops_programs"] == [1, 2]
        assert "PREMUL_SUM" in res["premul_sum"]


def test_all_gather_and_broadcast_eager_and_compiled(ranks):
    f = [np.array([1.5, -2.0]) * (r + 1) for r in range(2)]
    want = [2 * f[0], 2 * f[1], f[0], f[1] + 1]
    for res in ranks:
        for got in (res["gather_broadcast"], res["gather_broadcast_compiled"]):
            np.testing.assert_array_equal(got, want)
        assert res["gather_broadcast_programs"] == [1, 1]


def test_a_rank_constant_is_not_folded_through_a_collective(ranks):
    for res in ranks:
        assert res["made_inside"] == [3.0]


@pytest.mark.parametrize("kind", ["fsdp", "tp"])
def test_compiled_training_step_is_one_program_matching_eager(ranks, kind):
    """A fully_shard model (each rank its rows of the global batch) and a tensor-parallel MLP
    (colwise then rowwise, every rank the whole batch), 3 Adam steps compiled across the 2
    processes: one program, no graph break, eager's losses and parameters, the parameters
    and Adam's moments still split between the processes."""
    for res in ranks:
        got, want = res[kind + "_compiled"], res[kind]
        assert got["programs"] == [1, 3]
        assert got["graph_breaks"] == [] and want["graph_breaks"] == []
        np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-6)
        for a, b in zip(got["params"], want["params"]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        whole = [list(np.shape(p)) for p in want["params"]]
        halves = {"fsdp": [[4, 4], [4], [2, 8], [2]], "tp": [[4, 4], [4], [4, 4], [4]]}[kind]
        assert whole == [[8, 4], [8], [4, 8], [4]]
        for shapes in (got["local_shapes"], got["adam_local_shapes"], want["local_shapes"]):
            assert shapes == halves
    # eagerly, both train as one process with the global batch
    one = ranks[0]["one_process"]
    for res in ranks:
        for a, b in zip(res[kind]["params"], one["params"]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    if kind == "tp":  # every rank the whole batch: the global batch's loss
        np.testing.assert_allclose(ranks[0]["tp"]["losses"], one["losses"], rtol=1e-6)
    else:  # each rank the loss of its own rows, whose mean is the global batch's
        np.testing.assert_allclose(np.mean([r["fsdp"]["losses"] for r in ranks], axis=0),
                                   one["losses"], rtol=1e-5)


def test_reading_a_shard_inside_a_compiled_step_breaks_the_graph(ranks):
    for res in ranks:
        got, want, breaks = res["to_local_compiled"]
        assert got == want
        assert len(breaks) == 1 and "DTensor.to_local inside a compiled step" in breaks[0]
    assert ranks[0]["to_local_compiled"][0] != ranks[1]["to_local_compiled"][0]


def test_send_recv_inside_a_compiled_step(ranks):
    """send met by recv, and an exchange (both ranks send first): one program, eager's
    results (the roles are exchanged while the step is traced)."""
    xs = [np.array([1.0, 2.0]) + 3 * r for r in range(2)]
    for r, res in enumerate(ranks):
        assert res["p2p_compiled"] == res["p2p"]
        assert res["p2p_programs"] == [1, 2]
        for k in range(2):
            got, theirs = res["p2p"][k]
            assert got == ((2 * (xs[0] + k)).tolist() if r == 1 else [0.0, 0.0])
            assert theirs == (xs[1 - r] + k + 10).tolist()
