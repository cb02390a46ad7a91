"""Collectives on a group of some of the processes inside a compiled step: the ranks trace
together, in rounds.

A compiled step across processes is one program over every process (_per_rank.py), and
every process's program must make the same collectives, in the same order, with the same
shapes. PyTorch's ranks outside a group do not call its collectives (nor do the ranks not in
a send/recv pair), so their traces alone would lack them. So in a job that may have such
calls (one that made a group of some of the processes with new_group), every rank's trace of
a step meets the others' at each collective and at its end, in rounds:

- each rank posts what it is at (a collective: its group, shape, dtype; the end of its
  trace; or a trace that raised), exchanged eagerly while tracing (the ranks trace the step
  together, as they call it together);
- a collective whose group's ranks are all at it runs (and with it any other such one of the
  same shape on a group apart from the ones chosen): one all-gather over the process axis,
  to which every other rank gives zeros, its members keeping their group's rows;
- the rounds go on until every rank is at its end. A trace that raised, or collectives that
  cannot meet (a member at another group's collective, or at its end), break the graph on
  every rank, which then all run the step eagerly.

Every rank sees the same posts, so every rank takes the same decisions, and each round is
one all-gather in every rank's program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

SUBGROUPS = [False]  # new_group made a group of some of the processes (every rank calls it)
_STATE = {"done": False, "broken": False}


def on() -> bool:
    """Whether this job's compiled steps trace their ranks together (see the module): once
    it made a group of some of the processes (new_group, which every rank calls: all agree).
    Not in every job of more than 2 processes: there a compiled step with no collective (an
    evaluation rank 0 runs alone) stays its own process's program, and coordinating would
    make that rank wait for the others forever."""
    return SUBGROUPS[0]


_TRACES = [0]  # the traces this process began in such a job (ranks count them alike)


def start(what: str = "a compiled step") -> None:
    """The start of this rank's trace of a step: every rank must be at the start of its
    trace of the same step, within the process group's timeout (else RuntimeError)."""
    _meet(what)
    _STATE.update(done=False, broken=False)


def _meet(what: str) -> None:
    """Waits at a barrier of JAX's coordination service for every rank to begin its trace.
    Without it, a rank tracing a step the others never call (an evaluation on rank 0) would
    wait forever in the first exchange of posts, an eager collective they never join (or
    meet another collective of theirs by mistake)."""
    from jax._src import distributed

    from . import _process_group
    client = distributed.global_state.client
    if client is None:  # (a job of one process coordinates nothing)
        return
    _TRACES[0] += 1
    secs = _process_group.timeout_seconds()
    try:
        client.wait_at_barrier(f"torchjax_trace_together_{_TRACES[0]}", int(secs * 1000))
    except Exception as e:  # noqa: BLE001  (jax's runtime error: the barrier timed out)
        raise RuntimeError(
            f"rank {jax.process_index()} began tracing {what} that the other ranks did not "
            f"trace within the process group's timeout ({secs:g} s): in a job that made a "
            "group of some of the processes (new_group), every rank must call each "
            "torch.compile'd step together (torchjax traces the ranks' steps together so that "
            "a group's collectives meet in one program over every process; PyTorch lets a "
            "rank run a compiled function alone). Call the compiled function on every rank, "
            "or run it uncompiled on the ranks that call it alone (torch.compiler.disable, "
            "or no torch.compile). The coordination service said: "
            f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
        ) from None


def _exchange(post):
    """Every rank's post, exchanged now (eagerly, while tracing)."""
    from ._collectives import _object_rows
    from ._process_group import ProcessGroup
    with jax.disable_jit(False), jax.ensure_compile_time_eval():
        return _object_rows(post, ProcessGroup(range(jax.process_count())))


def _round(posts):
    """(ranks, shape, dtype) of this round's all-gather, or None when the rounds end (then
    _STATE says whether the graph breaks). The same on every rank: a function of the posts."""
    chosen, members = None, set()
    for post in posts:
        if post[0] != "op" or set(post[1]) & members:
            continue
        if all(posts[r][:4] == post[:4] for r in post[1]):
            if chosen is None:
                chosen = post[2:4]
            elif post[2:4] != chosen:
                continue
            members |= set(post[1])
    if chosen is not None and not any(p[0] == "abort" for p in posts):
        return members, chosen[0], chosen[1]
    _STATE.update(done=True, broken=any(p[0] != "end" for p in posts))
    return None


def rows(arr, g, gather, info=None):
    """The rows of g's ranks of a collective on g inside the step's trace (see the module),
    and each member's `info` (send/recv's role, which decides what each side traces);
    `gather` is the all-gather over the process axis."""
    from ..compiler._breaks import GraphBreak
    me = jax.process_index()
    post = ("op", tuple(g.ranks), tuple(arr.shape), jnp.dtype(arr.dtype).name, info)
    while True:
        posts = _exchange(post)
        got = _round(posts)
        if got is None:
            why = ("another rank's trace of the step broke the graph" if any(
                p[0] == "abort" for p in posts) else "a member is at another collective or "
                "at the end of the step")
            raise GraphBreak(f"a collective on the processes {g.ranks} inside a compiled "
                             f"step did not meet the other ranks' ({why})")
        members, shape, dtype = got
        if me in members:
            return gather(arr)[np.array(g.ranks)], [posts[r][4] for r in g.ranks]
        _join(shape, dtype, gather)


def _join(shape, dtype, gather):
    """Another group's collective in this rank's program too: zeros in, nothing used (kept,
    as XLA drops an unused collective)."""
    from . import _per_rank
    _per_rank.keep(gather(jnp.zeros(shape, dtype)))


def finish(ok: bool, gather) -> bool:
    """The end of this rank's trace (ok: traced whole; gather None outside the trace, where
    it cannot join any more). Whether the graph breaks on every rank."""
    while not _STATE["done"]:
        got = _round(_exchange(("end",) if ok and gather else ("abort",)))
        if got is not None:
            _join(got[1], got[2], gather)
    return _STATE["broken"]
