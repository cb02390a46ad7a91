"""Run by test_mp_compiled.py as `python -m torchjax.distributed.run --nproc-per-node 2`:
compiled steps across the 2 processes (each one SPMD program) against the same steps run
eagerly: every collective, a fully_shard model and a tensor-parallel MLP training. Each
process prints its results as one JSON line."""

import faulthandler
import json
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank}
R = dist.ReduceOp


def collectives(t):
    """Every rank-dependent collective; the results are fresh tensors each call."""
    red = t.clone()
    dist.reduce(red, dst=1, op=R.MAX)
    gathered = [torch.zeros(2) for _ in range(world)] if rank == 0 else None
    dist.gather(t * 2, gathered, dst=0)
    scattered = torch.zeros(2)
    dist.scatter(scattered, [t + 10 * r for r in range(world)] if rank == 1 else None, src=1)
    rs = torch.zeros(2)
    dist.reduce_scatter(rs, [t * (r + 1) for r in range(world)])
    a2a = [torch.zeros(2) for _ in range(world)]
    dist.all_to_all(a2a, [t + 100 * r for r in range(world)])
    return [red, rs, scattered] + a2a + (gathered or [])


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = torch.tensor([1.0, 2.0]) + 3 * rank
    out["collectives"] = [v.tolist() for v in collectives(x)]
    step = torch.compile(collectives)
    got = [step(x + k) for k in range(2)]
    out["collectives_compiled"] = [v.tolist() for v in got[0]]
    out["collectives_compiled_2"] = [v.tolist() for v in got[1]]
    out["collectives_eager_2"] = [v.tolist() for v in collectives(x + 1)]
    out["collectives_programs"] = [step.compiles, step.executions]

    @torch.compile
    def made_inside(t):  # a constant of this rank's program: XLA must not fold it
        own = torch.tensor([float(rank + 1)])
        dist.all_reduce(own)
        return t + own
    out["made_inside"] = made_inside(torch.zeros(1)).tolist()
out["graph_breaks"] = [str(w.message) for w in caught if "Graph break" in str(w.message)]

print("RESULT " + json.dumps(out), flush=True)
dist.destroy_process_group()
