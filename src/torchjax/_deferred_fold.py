"""An optimizer's update folded into the program of the forward and backward it follows.

Why: a small training step (the seed MLP's: 4 ops, SGD over 4 parameters) made two XLA calls,
the forward+backward program (_deferred_backward.py) and the optimizer's update, ~10 us of a
~95 us step for the update's call alone (each argument or result of an XLA CPU call costs
~0.6 us here, and the update takes parameters, gradients and states and returns them). The
update's inputs are all known when the backward runs, except whether `step()` will come and
with what: so the backward's program also computes the update, and `step()` uses it when
nothing it reads has changed since; otherwise it computes its update as before.

When: learned, never guessed. A step whose gradients all came, fresh (`.grad` was None), from
the last backward that ran as one program (with a `_Backward` of the thread's trace: the
step repeats op for op) is noted on that backward (`learn`). The next step that follows the
same trace and graph runs the program that also updates the noted groups (`plan`, compiled
on engine's background thread; the plain program runs meanwhile), provided every parameter
of each group has no `.grad` yet and its state is made (a first step makes it).

What step() checks (`take`), for the group's parameters with a gradient: the same
parameters, each still holding the array the program read, each `.grad` still the array the
program returned (reading `.grad` keeps it; an in-place change or a new tensor does not), the
same hyper-parameters (a changed `lr` is a changed input), options, state arrays. Then it
writes the program's results as its own update would have. Anything else: the update runs
as before, from the current values, and after MISSES such misses the backward stops folding
that group's update.
An update that no step took (a backward without a step, gradient accumulation) is dropped
at the next backward, and counts as a miss too.

The update is the optimizer's own pure `_update` (optim/_update_program._run_pure), so the results
are its own.
"""

from __future__ import annotations

import os
import threading
import weakref
from operator import is_ as _is

from jax.lax import optimization_barrier as _barrier

from ._autograd.node import AccumulateGrad
from ._tensor import Tensor

ON = [os.environ.get("TORCHJAX_FOLD", "1") not in ("", "0")]
MISSES = 2  # updates computed and not taken, after which a backward folds no more
STATS = {"folded": 0, "taken": 0, "missed": 0, "learned": 0}  # (tests, benchmarks)
OPTIM = None  # torchjax.optim.optimizer, set by it when imported (it imports this module)


class _Local(threading.local):
    def __init__(self):
        # (backward, nodes, gradients, arguments) of the thread's last one-program backward
        # that had a _Backward: what a step's gradients are checked against (`learn`)
        self.last = None
        # id(param group) -> _Pending: updates computed, not yet taken
        self.pending = {}


_LOCAL = _Local()


class Fold:
    """One optimizer group's update in a backward's program: the optimizer (weakly), its
    group, per updated parameter its index in the group, the index of its node among the
    graph's nodes, of its gradient among the leaves', of its array among the arguments;
    the update rule and its options."""

    __slots__ = ("opt", "gi", "n_params", "positions", "node_pos", "leaves", "args", "update",
                 "options", "maximize", "stateful", "reads", "snap", "hypers", "misses", "ps",
                 "pend")


class _Pending:
    """An update computed by a backward's program, waiting for its step."""

    __slots__ = ("ps", "params", "grads", "snap", "hypers", "states", "fold", "new_params",
                 "new_states", "bw")


def note(bw, nodes, grads, args):
    """A one-program backward with the _Backward `bw` ran: its gradients are what the next
    step's are checked against; an update computed before and not taken is a miss."""
    loc = _LOCAL
    if loc.pending:
        for p in loc.pending.values():
            p.params = p.grads = p.states = p.new_params = p.new_states = None
            _missed(p)
        loc.pending.clear()
    loc.last = (bw, nodes, grads, args) if ON[0] else None


def _missed(pend):
    """An update computed and not taken: after MISSES of them its fold is dropped, and that
    optimizer's group is not learned on that backward again."""
    STATS["missed"] += 1
    f = pend.fold
    f.misses += 1
    if f.misses >= MISSES:
        bw = pend.bw
        bw.folds = tuple(g for g in bw.folds if g is not f)
        bw.fprog = None
        bw.refused[(id(f.opt()), f.gi)] = f.opt


def learn(opt, group, ps, grads, states, fresh):
    """A group's step is computing its update the usual way: note it on the last backward
    when that backward gave every one of its gradients."""
    last = _LOCAL.last
    if last is None or not ps:
        return
    bw, nodes, out, args = last
    if any(fresh):
        return
    gi = _group_index(opt, group)
    if gi is None or any(f.opt() is opt and f.gi == gi for f in bw.folds):
        return
    refused = bw.refused.get((id(opt), gi))
    if refused is not None and refused() is opt:
        return
    for st in states:
        for v in st.values():
            if v.__class__ is not Tensor:
                return
    leaf = {}
    k = 0
    for i, n in enumerate(nodes):
        if type(n) is AccumulateGrad:
            leaf[id(n.variable)] = (i, k)
            k += 1
    arg = {id(a): i for i, a in enumerate(args)}
    where = {id(p): i for i, p in enumerate(group["params"])}
    positions, node_pos, leaves, at = [], [], [], []
    for p, g in zip(ps, grads):
        got = leaf.get(id(p))
        j = arg.get(id(p._data))
        if got is None or j is None or out[got[1]] is not g:
            return  # (a gradient from elsewhere, or accumulated)
        positions.append(where[id(p)])
        node_pos.append(got[0])
        leaves.append(got[1])
        at.append(j)
    f = Fold()
    f.opt, f.gi = weakref.ref(opt), gi
    f.positions, f.node_pos, f.leaves, f.args = (tuple(positions), tuple(node_pos),
                                                 tuple(leaves), tuple(at))
    f.update = type(opt)._update
    f.options = opt._options(group)
    f.maximize = bool(group.get("maximize", False))
    f.stateful = opt._stateful(group)
    f.reads = None  # (the hyper-parameters the update reads: found when it is compiled)
    f.n_params = len(group["params"])
    f.snap = f.hypers = None  # (the group's values when its hypers were read: `plan`)
    f.misses = 0
    f.ps = tuple(ps)
    pend = f.pend = _Pending()
    pend.ps, pend.fold, pend.bw = f.ps, f, bw
    bw.folds = tuple(g for g in bw.folds if g.opt() is not None) + (f,)
    bw.fprog = None  # (a program for the new set of folds)
    STATS["learned"] += 1


def _group_index(opt, group):
    for i, g in enumerate(opt.param_groups):
        if g is group:
            return i
    return None


def plan(bw, nodes, args):
    """Per fold (group, hyper-parameters, states, the group's values) for this backward's
    updates, when every fold of `bw` can be computed now; else None (the plain program).
    A fold that no longer fits (its optimizer gone, its group's parameters or options
    changed) is dropped: a later step may learn the update again."""
    if OPTIM.HYPER_HOOK is not None:
        return None
    ups = []
    for f in bw.folds:
        group = _group_of(f, nodes, args)
        if group is None:
            bw.folds = tuple(g for g in bw.folds if g is not f)
            bw.fprog = None
            return None
        params = group["params"]
        for p in params:
            if p._grad is not None:
                return None  # (its gradient would be added to: the step reads the sum)
        # the group's values, each the same object as when its hyper-parameters and options
        # were last read: they are those (none of them can change in place: see _values)
        snap = tuple(group.values())
        if f.snap is None or len(snap) != len(f.snap) or not all(map(_is, snap, f.snap)):
            opt = f.opt()
            if type(opt)._update is not f.update or opt._options(group) != f.options \
                    or bool(group.get("maximize", False)) != f.maximize:
                bw.folds = tuple(g for g in bw.folds if g is not f)
                bw.fprog = None
                return None
            hypers = opt._hypers(group)
            if hypers.__class__ is not dict:
                return None
            f.hypers = hypers
            f.snap = snap if _values(group) else None
        states = []
        if f.stateful:
            state = f.opt().state
            for i in f.positions:
                st = state.get(params[i])
                if not st:
                    return None
                states.append(st)
        ups.append((group, f.hypers, states, snap))
    return ups


def _group_of(f, nodes, args):
    """f's group, if its optimizer is alive and the parameters f updates are still the
    leaves and arguments it found (else None)."""
    opt = f.opt()
    if opt is None:
        return None
    groups = opt.param_groups
    if f.gi >= len(groups):
        return None
    group = groups[f.gi]
    params = group["params"]
    if len(params) != f.n_params:
        return None
    for p, i, j, a in zip(f.ps, f.positions, f.node_pos, f.args):
        if params[i] is not p or nodes[j].variable is not p or args[a] is not p._data:
            return None
    return group


_IMMUTABLE = frozenset((float, int, bool, str, type(None), tuple, frozenset))


def _values(group) -> bool:
    """Whether the group's hyper-parameters and options follow from its values' identities:
    no value that can change in place (a tensor `lr`, a list) but the parameters."""
    for k, v in group.items():
        if v.__class__ not in _IMMUTABLE and k not in ("params", "param_names"):
            return False
    return True


def program(bw, forward_backward):
    """forward_backward(args, root_grads) extended with the updates of bw's folds:
    (args, root_grads, per fold (the hyper-parameters it reads, state arrays)) -> (live
    results, gradients, per fold (new parameters, new states)). The state of a folded
    group is made (`plan`): its "fresh" flags are constants, not inputs."""
    _run_pure = OPTIM._run_pure
    folds = [(f.args, f.leaves, f.update, f.options, f.maximize) for f in bw.folds]

    def forward_backward_update(args, root_grads, ups):
        outs, grads = forward_backward(args, root_grads)
        # (the update reads the gradients the plain program returns, as the step's own
        # update call would: nothing of it is fused into their computation)
        grads = _barrier(grads)
        res = []
        for (at, leaves, update, options, maximize), (hypers, states) in zip(folds, ups):
            n = len(at)
            res.append(_run_pure(update, options, maximize, dict(hypers),
                                 [args[i] for i in at], [grads[k] for k in leaves],
                                 states or [{}] * n, [False] * n))
        return outs, grads, tuple(res)
    return forward_backward_update


class _Reads(dict):
    """A hyper-parameter dict that notes which keys the update reads (`reads`); None when it
    was read some other way than by key (then every one is passed)."""

    def __init__(self, d):
        super().__init__(d)
        self.read = set()

    def __getitem__(self, k):
        if self.read is not None:
            self.read.add(k)
        return dict.__getitem__(self, k)

    def get(self, k, default=None):
        self.read = None
        return dict.get(self, k, default)

    def keys(self):
        self.read = None
        return dict.keys(self)

    def values(self):
        self.read = None
        return dict.values(self)

    def items(self):
        self.read = None
        return dict.items(self)

    def __iter__(self):
        self.read = None
        return dict.__iter__(self)


def reads(f, hypers, params, states):
    """The keys of `hypers` that f's update reads (all of them when that cannot be told), so
    that the program takes only those: each Python number is an argument JAX converts at
    every call (SGD without momentum reads `lr` alone of its four)."""
    import jax  # (once per fold)
    seen = []

    def probe(h, ps, sts):
        r = _Reads(h)
        out = OPTIM._run_pure(f.update, f.options, f.maximize, r, ps, ps, sts,
                              [False] * len(ps))
        seen.append(r.read)
        return out
    try:
        jax.eval_shape(probe, hypers, params, states)
    except Exception:  # noqa: BLE001  (then every hyper-parameter is passed)
        return tuple(hypers)
    read = seen[0] if seen else None
    return tuple(hypers) if read is None else tuple(k for k in hypers if k in read)


def ident_of(bw):
    """The folds' part of the program's name (None: one of the updates has none)."""
    _runner = OPTIM._runner
    parts = []
    for f in bw.folds:
        prog = getattr(_runner(f.update, f.options, f.maximize), "_program", None)
        if prog is None:
            return None
        parts.append((prog.ident, f.args, f.leaves, f.reads))
    return tuple(parts)


def inputs(bw, ups):
    """The program's per-fold inputs, from plan's list: (the hyper-parameters the update
    reads, as Python numbers, as the update's own call passes them: a number kept on device
    once it repeats would change the program's signature then, a second executable and one
    call evaluated by the host tier; the state arrays)."""
    out = []
    for f, (group, hypers, states, _) in zip(bw.folds, ups):
        if f.reads is None:
            f.reads = reads(f, hypers, [p._data for p in _params(group, f)],
                            [{k: v._data for k, v in st.items()} for st in states]
                            or [{}] * len(f.positions))
        out.append(({k: hypers[k] for k in f.reads},
                    [{k: v._data for k, v in st.items()} for st in states]))
    return out


def _params(group, f):
    params = group["params"]
    return [params[i] for i in f.positions]


def keep(bw, ups, args, grads, res):
    """The program ran: each fold's update waits for its step."""
    pending = _LOCAL.pending
    for f, (group, hypers, states, snap), (new_params, new_states) in zip(bw.folds, ups, res):
        pend = f.pend  # (one per fold, written again at each of its backwards)
        pend.params = [args[i] for i in f.args]
        pend.grads = [grads[k] for k in f.leaves]
        pend.snap = snap if f.snap is not None else None
        pend.hypers = hypers
        pend.states = [{k: v._data for k, v in st.items()} for st in states] if states else ()
        pend.new_params, pend.new_states = new_params, new_states
        pending[id(group)] = pend
    STATS["folded"] += 1


def take(opt, group, ps, grads):
    """The group's update, computed by the backward's program, if it is still the update of
    these parameters, gradients, hyper-parameters and states: (new params, new states);
    else None (and the computed one is dropped)."""
    pend = _LOCAL.pending.pop(id(group), None)
    if pend is None:
        return None
    ok = len(ps) == len(pend.ps) and OPTIM.HYPER_HOOK is None
    if ok:
        for p, q, g, a, b in zip(ps, pend.ps, grads, pend.params, pend.grads):
            if p is not q or g is not b or p._data is not a:
                ok = False
                break
    if ok:
        snap = pend.snap
        if snap is not None:
            values = tuple(group.values())
            ok = len(values) == len(snap) and all(map(_is, values, snap))
        else:
            f = pend.fold
            ok = (opt._hypers(group) == pend.hypers and opt._options(group) == f.options
                  and bool(group.get("maximize", False)) == f.maximize
                  and type(opt)._update is f.update)
    if ok and pend.states:
        state = opt.state
        for p, arrays in zip(ps, pend.states):
            st = state.get(p)
            if st is None or len(st) != len(arrays):
                ok = False
                break
            for k, v in st.items():
                if v.__class__ is not Tensor or v._data is not arrays.get(k):
                    ok = False
                    break
            if not ok:
                break
    got = (pend.new_params, pend.new_states) if ok else None
    # (the fold's record is kept for its next backward: the arrays are not)
    pend.params = pend.grads = pend.states = pend.new_params = pend.new_states = None
    if not ok:
        _missed(pend)
        return None
    STATS["taken"] += 1
    return got
