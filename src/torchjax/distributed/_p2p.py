"""send / recv between two processes, as the one thing JAX can run: a program both run.

JAX moves data between processes only inside a program every process of its mesh runs, so
a point-to-point transfer is a gather over a group of the two processes: the sender's rows
and the receiver's buffer are stacked, and the receiver keeps the sender's row. PyTorch pairs
a rank's send with its peer's recv; here each call first exchanges a small header (send or
recv, element count) so both sides take the same decision:

- send meets recv: the data moves (one gather);
- send meets send (two ranks exchanging, each sending first): both rows move, and each side
  keeps the other's in a mailbox that its next recv from that peer reads without
  communicating;
- recv meets recv, or sizes that differ: both sides raise, instead of waiting forever.

Calls are matched in the order each process makes them, as PyTorch's are on one pair.
Inside a compiled step of a job whose ranks trace together (_coordinated.py: one that made
a group of some of the processes) the roles come with the rounds' posts instead, and
the gather is one of the rounds (every other rank joins it).
"""

from __future__ import annotations

import collections
import contextlib

import jax
import numpy as np

from .._tensor import Tensor
from .._untraceable import Untraceable
from . import _coordinated, _per_rank
from ._collectives import Work, _process_group, _run, _write
from ._process_group import ProcessGroup

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv"]

_SEND, _RECV = 1, 2
_MAILBOX: dict = collections.defaultdict(collections.deque)  # peer -> rows it sent early


def _peer(peer, group, group_peer, what: str) -> int:
    g = _process_group(group)
    if group_peer is not None:
        peer = g.ranks[group_peer]
    if peer is None:
        raise NotImplementedError(f"{what} from any source (src=None) is not supported by "
                                  "torchjax: both processes must know each other to run the "
                                  "transfer; pass src")
    me = jax.process_index()
    if peer == me:
        kind = "destination" if what == "send" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         f"of the current process.")
    if not 0 <= peer < jax.process_count():
        raise ValueError(f"Invalid {'destination' if what == 'send' else 'source'} rank "
                         f"{peer}: the job has {jax.process_count()} processes")
    return peer


def _transfer(tensor: Tensor, peer: int, role: int) -> None:
    me = jax.process_index()
    if role == _RECV and _MAILBOX[peer]:
        _write(tensor, _MAILBOX[peer].popleft())
        return
    pair = ProcessGroup(sorted((me, peer)))
    traced = isinstance(tensor._data, jax.core.Tracer)
    if traced and not _coordinated.on() and pair.ranks != list(range(jax.process_count())):
        raise Untraceable("send/recv between two of more than 2 processes is traced into a "
                          "compiled step only in a job whose ranks trace their steps "
                          "together, which a group of some of the processes (new_group) "
                          "turns on; the step runs eagerly")
    if traced and _coordinated.on():
        # the ranks trace together in rounds (_coordinated.py): each side's role comes with
        # the rows, as the pair's header exchange would wait on a rank busy in the rounds
        rows, roles = _coordinated.rows(tensor._data.reshape(-1), pair, _per_rank._gather,
                                        role)
        rows = rows.reshape((2,) + tuple(tensor.shape))
        mine, theirs = (roles[pair.ranks.index(r)] for r in (me, peer))
        mine, theirs = (mine, tensor.numel()), (theirs, tensor.numel())
    else:
        header = _header(role, tensor.numel(), pair, traced)
        mine, theirs = header[pair.ranks.index(me)], header[pair.ranks.index(peer)]
    if mine[1] != theirs[1]:
        raise RuntimeError(f"send/recv between ranks {me} and {peer}: sizes differ "
                           f"({mine[1]} and {theirs[1]} elements)")
    if theirs[0] == _RECV and role == _RECV:
        raise RuntimeError(f"recv from rank {peer} met its recv from rank {me}: both ranks "
                           f"are waiting; send on one side first")
    picked = not traced and theirs[0] == _SEND
    if picked:  # eagerly: the peer's row taken by a named program (_eager_programs.post)
        rows = _run("gather", None, tensor, pair, (("row", pair.ranks.index(peer)),))
    elif not (traced and _coordinated.on()):
        rows = _run("gather", None, tensor, pair)
    if traced:  # a sender's program must run the gather too (XLA drops an unused one)
        _per_rank.keep(rows)
    if theirs[0] == _SEND:
        row = rows if picked else rows[pair.ranks.index(peer)]
        if role == _RECV:
            _write(tensor, row)
        else:  # both sent: each keeps the other's data for its next recv
            _MAILBOX[peer].append(row)


def _header(role: int, numel: int, pair, traced: bool):
    """Both sides' (role, size), exchanged now. Inside a compiled step's per-rank trace too:
    both ranks trace the step together (they call it together), and the roles decide what
    each traces, so they are exchanged while tracing, outside the program (each later call
    runs the same code, so the same roles)."""
    from .._creation import tensor as make
    with contextlib.ExitStack() as eagerly:
        if traced:
            eagerly.enter_context(jax.disable_jit(False))
            eagerly.enter_context(jax.ensure_compile_time_eval())
        return np.asarray(_run("gather", None, make([role, numel]), pair))


def drop_traced() -> bool:
    """Takes the traced rows a per-rank trace left in the mailbox out of it; whether there
    were any (a send inside the step whose recv is outside it)."""
    left = False
    for box in _MAILBOX.values():
        kept = [r for r in box if not isinstance(r, jax.core.Tracer)]
        left |= len(kept) != len(box)
        box.clear()
        box.extend(kept)
    return left


def send(tensor: Tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Sends tensor to rank dst (which calls recv with src= this rank)."""
    _transfer(tensor, _peer(dst, group, group_dst, "send"), _SEND)


def recv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receives rank src's sent tensor into tensor, in place; returns src."""
    peer = _peer(src, group, group_src, "recv")
    _transfer(tensor, peer, _RECV)
    return peer


def isend(tensor: Tensor, dst: int | None = None, group=None, tag: int = 0,
          group_dst: int | None = None) -> Work:
    """send, run now (JAX's transfer is done when it returns); the Work is complete."""
    send(tensor, dst, group, tag, group_dst)
    return Work()


def irecv(tensor: Tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None) -> Work:
    """`recv`, returning a finished Work: the transfer is done when the call returns.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.irecv.
    """
    recv(tensor, src, group, tag, group_src)
    return Work()


class P2POp:
    """One isend or irecv for batch_isend_irecv."""

    def __init__(self, op, tensor: Tensor, peer: int | None = None, group=None, tag: int = 0,
                 group_peer: int | None = None):
        if op not in (isend, irecv, send, recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list: list) -> list:
    """Runs the operations in order; every one is complete when this returns."""
    return [op.op(op.tensor, op.peer, op.group, op.tag, op.group_peer) or Work()
            for op in p2p_op_list]
