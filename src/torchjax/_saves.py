"""Which tensors a recorded op saves for backward, decided as PyTorch decides it.

torchjax's nodes keep immutable arrays, so a backward is right whatever happens to a tensor
later; the saved-tensor list exists to raise PyTorch's "modified by an inplace operation"
error exactly where PyTorch raises it, and nowhere else.

PyTorch's generated autograd code saves, per differentiable input, the tensors that input's
derivative formula reads (derivatives.yaml), with one refinement: a tensor that only one
formula reads is saved only when that formula's input requires grad, so `z * 5` keeps nothing
of z and `w * x` with x not requiring grad keeps nothing of w. A tensor two formulas read,
and an output any formula reads, are saved whenever the node is made. A formula belongs to a
PyTorch overload: when the input is a Python number here (PyTorch's Scalar overloads, or a
wrapped number that never requires grad), its formula does not exist in this call.

A row says this with `saves` (see _ops/_registry.py): a tuple of names saved whenever a node
is made, or a dict from each differentiable input to the names its formula reads, or a
function of the call's arguments returning one of those (attention saves differently per
kernel).
"""

from __future__ import annotations

from ._tensor import Tensor

RESULT = -1  # the position standing for the op's (first) output


class Plan:
    """What a row saves: `always` (positions saved whenever a node is made), `conditional`
    ((position, groups) pairs decided per call, a group being the positions of inputs whose
    formula reads it), whether the result may be saved and the groups that read it (() when
    unconditional)."""

    __slots__ = ("always", "conditional", "result", "result_users")

    def __init__(self, always, conditional=(), result=False, result_users=()):
        self.always = always
        self.conditional = conditional
        self.result = result
        self.result_users = result_users

    def positions(self, dyn):
        """The argument positions this call saves."""
        if not self.conditional:
            return self.always
        return (*self.always, *_saved_conditionally(self.conditional, dyn))

    def saves_result(self, dyn) -> bool:
        """Whether this call saves the op's output."""
        if not self.result:
            return False
        return not self.result_users or bool(_live(self.result_users, dyn))


def plan(saves, op, names: tuple[str, ...], kinds_scalar: tuple[bool, ...]) -> Plan:
    """The Plan of a row's declaration; None means every tensor argument, always."""
    pos = {n: i for i, n in enumerate(names)}
    if saves is None:
        return Plan(tuple(i for i, s in enumerate(kinds_scalar) if not s))
    if not isinstance(saves, dict):
        return Plan(tuple(pos[n] for n in names if n in saves), (), "result" in saves)
    if op.tensor_list is not None:
        # PyTorch's generator never guards saves of ops that take tensor lists
        raise ValueError(f"op {op.name}: per-input saves with a tensor list")
    users: dict[str, list[tuple[int, ...]]] = {}
    for inputs, read in saves.items():
        # a key names one input, or a group whose composite formula PyTorch runs when any of
        # them requires grad (attention's value is saved when query or key requires grad)
        group = tuple(pos[n] for n in ((inputs,) if isinstance(inputs, str) else inputs))
        for n in read:
            users.setdefault(n, []).append(group)
    result_users = tuple(users.pop("result", ()))
    conditional = tuple((pos[n], tuple(u)) for n, u in users.items())
    return Plan((), conditional, bool(result_users), result_users)


def _live(groups, dyn):
    """The groups whose formulas exist in this call (some input in them is a Tensor)."""
    return [g for g in groups if any(isinstance(dyn[i], Tensor) for i in g)]


def _saved_conditionally(conditional, dyn):
    out = []
    for i, groups in conditional:
        if not isinstance(dyn[i], Tensor):
            continue
        live = _live(groups, dyn)
        if len(live) > 1 or (live and any(isinstance(dyn[g], Tensor) and dyn[g]._requires_grad
                                          for g in live[0])):
            out.append(i)
    return out
