"""A collective called wrongly fails as PyTorch 2.13's does (a world of one process, gloo, in
this process for both libraries): the same exception type and message for each mistake, where
torchjax reshaped or indexed its way into an unrelated error or ran the call. Where PyTorch
has only an internal assertion of its backend, torchjax raises its own RuntimeError."""


import pytest
import torch

import torchjax
import torchjax.distributed as tj_dist
from tests.distributed._common import pytorch_world_of_one, raised


@pytest.fixture(scope="module")
def worlds():
    gen = pytorch_world_of_one()
    next(gen)
    import torch.distributed as pt_dist
    tj_dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        yield {"torch": (torch, pt_dist, pt_dist.new_group([0])),
               "torchjax": (torchjax, tj_dist, tj_dist.new_group([0]))}
    finally:
        tj_dist.destroy_process_group()
        gen.close()


def _t(lib, *values, dtype=None):
    return lib.tensor(list(values) or [1.0, 2.0], dtype=dtype)


# name -> fn(lib, dist, subgroup): a wrong call
CASES = {
    "all_reduce of a list": lambda lib, d, g: d.all_reduce([_t(lib)]),
    "all_gather into a tensor": lambda lib, d, g: d.all_gather(_t(lib), _t(lib)),
    "all_gather list too long": lambda lib, d, g: d.all_gather([_t(lib), _t(lib)], _t(lib)),
    "all_gather of another size": lambda lib, d, g: d.all_gather([lib.zeros(3)], _t(lib)),
    "all_gather of another dtype": lambda lib, d, g: d.all_gather(
        [lib.zeros(2, dtype=lib.float64)], _t(lib)),
    "all_gather_into_tensor of another size": lambda lib, d, g: d.all_gather_into_tensor(
        lib.zeros(3, 4), lib.zeros(2, 4)),
    "broadcast from a rank not in the world": lambda lib, d, g: d.broadcast(_t(lib), src=3),
    "broadcast from a rank not in the group": lambda lib, d, g: d.broadcast(_t(lib), src=3,
                                                                            group=g),
    "reduce to a rank not in the world": lambda lib, d, g: d.reduce(_t(lib), dst=2),
    "broadcast_object_list from a rank not in the world": lambda lib, d, g:
        d.broadcast_object_list([1], src=3),
    "gather without gather_list on dst": lambda lib, d, g: d.gather(_t(lib), None, dst=0),
    "gather with an empty gather_list on dst": lambda lib, d, g: d.gather(_t(lib), [], dst=0),
    "gather_list too long": lambda lib, d, g: d.gather(_t(lib), [_t(lib), _t(lib)], dst=0),
    "scatter without scatter_list on src": lambda lib, d, g: d.scatter(lib.zeros(2), None,
                                                                       src=0),
    "scatter_list too long": lambda lib, d, g: d.scatter(lib.zeros(2), [_t(lib), _t(lib)],
                                                         src=0),
    "all_to_all output list too long": lambda lib, d, g: d.all_to_all([_t(lib), _t(lib)],
                                                                      [_t(lib)]),
    "reduce_scatter input list too long": lambda lib, d, g: d.reduce_scatter(
        lib.zeros(2), [_t(lib), _t(lib)]),
    "send to itself": lambda lib, d, g: d.send(_t(lib), dst=0),
    "new_group larger than the world": lambda lib, d, g: d.new_group([0, 5]),
    "new_group of a rank out of range": lambda lib, d, g: d.new_group([5]),
    "BAND of floats": lambda lib, d, g: d.all_reduce(_t(lib), op=d.ReduceOp.BAND),
    "AVG of integers on gloo": lambda lib, d, g: d.all_reduce(_t(lib, 1, 2),
                                                               op=d.ReduceOp.AVG),
}


def _error(fn, *args):
    e = raised(fn, *args)
    return None if e is None else (type(e).__name__, str(e))


@pytest.mark.parametrize("name", list(CASES))
def test_mistakes_fail_as_pytorchs(worlds, name):
    want = _error(CASES[name], *worlds["torch"])
    got = _error(CASES[name], *worlds["torchjax"])
    assert want is not None and got is not None, (want, got)
    if name == "broadcast from a rank not in the group":
        # (PyTorch names its group by the object's address; torchjax's by its ranks)
        want = (want[0], want[1].split(" <")[0])
        got = (got[0], got[1].split(" ProcessGroup(")[0])
    assert got == want


@pytest.mark.parametrize("call", ["reduce_scatter_tensor", "all_to_all_single"])
def test_shape_mistakes_pytorch_only_asserts_are_named(worlds, call):
    _, dist, _ = worlds["torchjax"]
    with pytest.raises(RuntimeError, match=f"^{call}: "):
        getattr(dist, call)(torchjax.zeros(3), torchjax.zeros(2))


def test_right_calls_still_run(worlds):
    """The checks let PyTorch's valid forms through, NCCL's stacked all_gather_into_tensor
    output too (gloo's PyTorch refuses it: torchjax's CPU and GPU jobs take both)."""
    _, dist, g = worlds["torchjax"]
    x = torchjax.tensor([1.0, 2.0])
    out = torchjax.zeros(1, 2)
    dist.all_gather_into_tensor(out, x)
    assert out.tolist() == [[1.0, 2.0]]
    gl = [torchjax.zeros(2)]
    dist.gather(x, gl, dst=0, group=g)
    sc = torchjax.zeros(2)
    dist.scatter(sc, [x * 3], src=0)
    ints = torchjax.tensor([3, 5])
    dist.all_reduce(ints, op=dist.ReduceOp.BXOR)
    assert gl[0].tolist() == [1.0, 2.0] and sc.tolist() == [3.0, 6.0] and ints.tolist() == [3, 5]
