"""Run by test_mp_groups.py as `python -m torchjax.distributed.run --nproc-per-node 3`:
compiled steps with collectives on groups of some of the 3 processes (members alone call
them) and send/recv between pairs of them, against the same steps run eagerly. Each process
prints its results as one JSON line."""

import faulthandler
import json
import sys
import warnings

faulthandler.dump_traceback_later(240, exit=True)  # a collective that waits forever fails

import torch  # torchjax: the launcher runs scripts through `python -m torchjax`
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 3
out = {"rank": rank}
g01, g12 = dist.new_group([0, 1]), dist.new_group([1, 2])
own = dist.new_group([0, 1]) if rank < 2 else dist.new_group([2])  # each rank's own group
# (new_group is called by every rank, in the same order, as PyTorch requires)
g2 = dist.new_group([2])


def groups(t):
    """Collectives on groups of some of the ranks, called by their members only."""
    a, b, c = t.clone(), t * 2, t + 1
    gathered = torch.zeros(2, 2)
    if rank in (0, 1):
        dist.all_reduce(a, group=g01)
        dist.all_gather_into_tensor(gathered, t, group=g01)
    if rank in (1, 2):
        dist.broadcast(b, src=2, group=g12)
        a2a = torch.zeros(2)
        dist.all_to_all_single(a2a, t * 10, group=g12)  # each member's half of the other's
        c = c + a2a
    dist.all_reduce(c, op=dist.ReduceOp.MAX)  # and one on every rank
    d = t * 3
    dist.all_reduce(d, group=g01 if rank < 2 else g2)  # each rank on its own group
    return a, b, c, gathered, d


def ring(t):
    """Each rank sends to the next and receives from the one before (the order PyTorch's
    blocking calls need), then ranks 0 and 2 exchange, both sending first."""
    got, back = torch.zeros(2), torch.zeros(2)
    nxt, prev = (rank + 1) % world, (rank - 1) % world
    if rank == 0:
        dist.send(t + 1, dst=nxt)
        dist.recv(got, src=prev)
    else:
        dist.recv(got, src=prev)
        dist.send(t + 1, dst=nxt)
    if rank != 1:
        peer = 2 - rank
        dist.batch_isend_irecv([dist.P2POp(dist.isend, t * 5, peer),
                                dist.P2POp(dist.irecv, back, peer)])
    return got, back


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for name, fn in (("groups", groups), ("ring", ring)):
        step = torch.compile(fn)
        xs = [torch.tensor([1.0, 2.0]) + 3 * rank + k for k in range(2)]
        out[name] = [[v.tolist() for v in fn(x)] for x in xs]
        out[name + "_compiled"] = [[v.tolist() for v in step(x)] for x in xs]
        out[name + "_programs"] = [step.compiles, step.executions]
out["graph_breaks"] = [str(w.message) for w in caught if "Graph break" in str(w.message)]


def one_rank_breaks(t):
    """A step whose trace breaks on rank 2 alone (a value read in Python): every rank must
    then run it eagerly, as the others' programs would wait for rank 2's."""
    a = t.clone()
    if rank in (0, 1):
        dist.all_reduce(a, group=g01)
    if rank == 2 and float(a.sum()) > 0:
        a = a + 1
    dist.all_reduce(a)
    return a


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    step = torch.compile(one_rank_breaks)
    xs = [torch.tensor([1.0, 2.0]) + 3 * rank + k for k in range(2)]
    out["breaks"] = [one_rank_breaks(x).tolist() for x in xs]
    out["breaks_compiled"] = [step(x).tolist() for x in xs]
out["breaks_warnings"] = [str(w.message) for w in caught if "Graph break" in str(w.message)]
# one write (the launcher's processes share its stdout; print may write in two parts)
sys.stdout.write("RESULT " + json.dumps(out) + "\n")
sys.stdout.flush()
dist.destroy_process_group()
