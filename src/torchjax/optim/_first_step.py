"""The first optimizer step's update program, compiled while the first backward runs.

A script's first step waits for every program it needs, one after the other: the forward's
ops, the fused backward, then the optimizer's update (0.15-0.3 s of XLA compile for Adam over
a small model's parameters). The update's arguments are known before the step: the
parameters, gradients shaped like them, and the optimizer's state. So when a training step
shows it is coming - the optimizer's first `zero_grad()`, or a backward that reaches its
parameters - its update program is traced, lowered and compiled on another thread (XLA's
compile releases the GIL), beside the forward's or the backward's own compiles; the step then
finds it made, or waits for it, never compiles it twice (_programs.compile_soon).

Why not when the optimizer is made: inside torchjax.compile the step is traced into one
program and the eager update is never run (zero_grad and backward are then inside the trace,
and start nothing), and a test or script that makes an optimizer without training would
compile for nothing. A process with the program cache off (TORCHJAX_CACHE=0) gets no head start:
the guess is only ever found through that cache's exact signature.
"""

from __future__ import annotations

import weakref

from .. import _one_off
from .._autograd import engine
from .._autograd.node import AccumulateGrad
from .._x64 import scope

# off: every update program is compiled by its first step, as before
AHEAD = [True]
# parameters beyond this many bytes: the guess makes state it then drops (the first step makes
# it again), whose allocation would cost more than the overlap saves
MAX_BYTES = 256 << 20
# an optimizer none of whose parameters this many backwards reached is left alone (one kept
# alive but never stepped, e.g. by a test, would otherwise cost a walk of every graph)
_PATIENCE = 3
_waiting: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> backwards
# False once _waiting was seen empty (until the next register): every backward and zero_grad
# asks, and a WeakKeyDictionary's len() is a Python call (~0.5 µs of a ~100 µs small step)
ANY = [False]


def waiting() -> bool:
    """Whether an optimizer's first update may still be started (ANY kept up to date)."""
    if not ANY[0]:
        return False
    if not _waiting:
        ANY[0] = False
        return False
    return True


def register(optimizer) -> None:
    """`optimizer` is new: its update program is started by its first zero_grad(), or by the
    first top-level backward that reaches one of its parameters."""
    if AHEAD[0]:
        _waiting[optimizer] = 0
        ANY[0] = True


def _leaves(roots) -> set:
    """ids of the leaf tensors a backward from `roots` accumulates into."""
    seen, stack, leaves = set(), [node for node, _ in roots], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            leaves.add(id(node.variable))
        else:
            stack.extend(e[0] for e in node._edges if e is not None)
    return leaves


def zero_grad(optimizer) -> None:
    """optimizer.zero_grad() ran: a training step is starting (its forward is next), the
    earliest sure sign; the update then compiles beside the forward's own compiles."""
    if optimizer in _waiting and _one_off.top_level():
        _start(optimizer)


def _start(optimizer) -> None:
    del _waiting[optimizer]
    try:
        with scope():  # the step runs in torchjax's x64 scope: its signature is keyed so
            optimizer._compile_first_update()
    except Exception:  # noqa: BLE001  (a guess: the step makes its program, or raises, itself)
        pass


def _before_backward(roots) -> None:
    if not (ANY[0] and waiting()) or not _one_off.top_level():
        return
    leaves = _leaves(roots)
    for optimizer, seen in list(_waiting.items()):
        if any(id(p) in leaves for g in optimizer.param_groups for p in g["params"]):
            _start(optimizer)
        elif seen + 1 >= _PATIENCE:
            del _waiting[optimizer]
        else:
            _waiting[optimizer] = seen + 1


engine.GRAPH_HOOKS.append(_before_backward)
