"""Run by test_collectives.py: every collective inside torchjax.compile in a job of one process
(8 virtual CPU devices), against the same calls run eagerly."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)

import warnings

import torchjax as torch
import torchjax.distributed as dist


def every_collective(t):
    R = dist.ReduceOp
    outs = []
    for op in (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX):
        a = t.clone()
        dist.all_reduce(a, op=op)
        outs.append(a)
    red = t.clone()
    dist.reduce(red, dst=0, op=R.SUM)
    gathered, gl = [torch.zeros(2)], [torch.zeros(2)]
    dist.all_gather(gathered, t)
    dist.gather(t * 2, gl, dst=0)
    into, rst, rs, sc, bc = (torch.zeros(2) for _ in range(5))
    dist.all_gather_into_tensor(into, t)
    dist.reduce_scatter_tensor(rst, t * 3)
    dist.reduce_scatter(rs, [t * 4])
    dist.scatter(sc, [t + 5], src=0)
    bc.copy_(t)
    dist.broadcast(bc, src=0)
    a2a, a2a_list = torch.zeros(2), [torch.zeros(2)]
    dist.all_to_all_single(a2a, t + 6)
    dist.all_to_all(a2a_list, [t + 7])
    return outs + [red, gathered[0], gl[0], into, rst, rs, sc, bc, a2a, a2a_list[0]]


@check
def compiled_collectives_on_one_process():
    """A world of one process: every collective traces into one program (no graph break),
    with eager's results."""
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        x = torch.tensor([1.5, -2.0])
        want = every_collective(x)
        step = torch.compile(every_collective)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a graph break warns
            got = step(x)
            got2 = step(x + 1)
        assert [step.compiles, step.executions] == [1, 2]
        for g, w in zip(got, want):
            assert torch.equal(g, w), (g, w)
        for g, w in zip(got2, every_collective(x + 1)):
            assert torch.equal(g, w), (g, w)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    run()
