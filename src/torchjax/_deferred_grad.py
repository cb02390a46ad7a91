"""Deferred ops that record a tape node (_deferred.py with GRAD on, the default).

Why: a forward that records grad (the tree net) runs one XLA call per op; deferring it
lets the whole forward run as one program. The node is made at once, as _record_simple /
_record_list make it (edges, version stamps, class and backward spec from the fast path's
per-kind data), except that a saved value that is a pending result of the sequence is held
as a `Ref` to that op. When the sequence runs, the values the nodes still alive refer to are
outputs of its program too, and each such node's saved tuple is patched with them.

Every backward starts by running the calling thread's pending sequence
(engine.BEFORE_BACKWARD), so the engine only ever sees arrays; a node's own apply (a user
calling grad_fn) does the same. The exception: a plain graph whose forward is that pending
sequence, seen before, runs forward and backward as one program (_deferred_backward.py),
where the Refs become the program's own values.

Only calls the eager path has already recorded once for the same pattern of which inputs
require grad are deferred (the per-kind data must exist); saved-tensor hooks, anomaly
mode, the linearizing compiler and inference tensors keep the eager path.
"""

from __future__ import annotations

import sys

import jax.numpy as jnp
import numpy as np

from ._autograd import anomaly, engine
from ._autograd import saved_hooks as _saved_hooks
from ._autograd.node import accumulator_of, list_edges
from ._linearize import ACTIVE as _LINEARIZE
from ._tensor import Tensor

_SAVED_HOOKS = _saved_hooks.STATE
_new = object.__new__
_ANOMALY = anomaly.STATE
# the dtypes a result requires grad in (_dispatch._INEXACT; _dispatch imports this module)
_INEXACT = frozenset(np.dtype(d) for d in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64,
                                             jnp.complex64, jnp.complex128))


class Ref:
    """A saved value that is the result of op `i` of the pending sequence `seq`."""

    __slots__ = ("i", "seq")

    def __init__(self, i, seq):
        self.i = i
        self.seq = seq


# A graph whose structure is new every step finds no program: its sequences run op by op and
# the recording is pure cost. After MISS_LIMIT such runs in a row, grad ops run eagerly for
# the next COOL_STEPS backward passes, then deferral tries again at the start of a forward; a
# repeated structure finds its programs by its second step and never cools down. Counted in
# backward passes, not ops: dispatch then turns grad ops away inline while cooling (one
# check, no call), and deferral never resumes mid-forward (it did when counted in ops: a
# repeated step's sequence then started at another op every time, was new, and cooled it
# down again). A sequence of fewer than MIN_OPS ops counts as a miss even with a program:
# recording a grad op with its node costs about as much as the XLA call it saves, so short
# forwards only lose (the seed MLP's 4-op forward as one program: 1.06x its eager step),
# while a tree's 94-op forward gains (docs/performance_eager.md). Each cool-down that follows
# another with no fused sequence between doubles, up to MAX_COOL_STEPS: a workload whose
# structure is always new then pays the recording on a few retries per thousand steps.
#
# The counts are the process's, so they must not outlive the workload that made them: a
# repeated structure that came after new ones waited out their cool-down (up to 256 steps at
# ~1.5x its deferred step's time) and, its first runs counted as misses, could start one of
# its own. Hence (a) a long sequence seen before that runs op by op is warming up (its
# program is being made), not a miss; (b) a cool-down made by new long sequences ends, and
# its doubling is forgotten, as soon as the backward meets a graph structure it has seen
# before (engine.REPEATED): the workload has changed, or repeats after all. A cool-down made
# by short sequences is kept: their graphs repeat, and deferring them again would only lose.
MISS_LIMIT = 4
COOL_STEPS = 16
MAX_COOL_STEPS = 256
MIN_OPS = 16
_MISSES = [0]
_COOL = [0]  # backward passes left to cool down (read inline by _dispatch.dispatch)
_NEXT_COOL = [COOL_STEPS]
# whether a short sequence was among the misses counted since the last fused run, and
# whether the cool-down in force came from new long sequences only (ended by `repeated`)
_SHORT = [False]
_NEW = [False]


# torchjax._deferred, set by it when imported (it imports this module; an import inside a
# function costs ~1 us a call, and run_together is on every step of a small model)
DEFERRED = [None]


def reset():
    """Forget the cool-down and the misses (a benchmark starting another workload)."""
    _MISSES[0] = _COOL[0] = 0
    _NEXT_COOL[0] = COOL_STEPS
    _SHORT[0] = _NEW[0] = False


def usable(prep):
    """Whether a call of this row that records grad may be deferred now."""
    return (not _COOL[0] and prep.op.differentiable and not _SAVED_HOOKS.stack
            and not _ANOMALY.enabled and not _LINEARIZE[0])


def step_ended():
    """A backward is starting: one step less to cool down."""
    if _COOL[0]:
        _COOL[0] -= 1


def ran(fused, n_ops=MIN_OPS, seen=False):
    """A sequence of n_ops ops with tape nodes ran, as one program (fused) or op by op;
    seen: its key had been seen before (it ran op by op while its program is being made)."""
    short = n_ops < MIN_OPS
    if fused and not short:
        _MISSES[0] = 0
        _SHORT[0] = False
        _NEXT_COOL[0] = COOL_STEPS
    elif seen and not short:
        return  # warming up: neither a miss nor a fused run
    else:
        _MISSES[0] += 1
        _SHORT[0] = _SHORT[0] or short
        if _MISSES[0] >= MISS_LIMIT:
            _MISSES[0] = 0
            _COOL[0] = _NEXT_COOL[0]
            _NEW[0] = not _SHORT[0]
            _SHORT[0] = False
            _NEXT_COOL[0] = min(2 * _NEXT_COOL[0], MAX_COOL_STEPS)


def repeated():
    """A backward met a graph structure seen before (engine.REPEATED): a cool-down that new
    structures made ends here, and the next one starts from COOL_STEPS again."""
    if _NEW[0]:
        _NEW[0] = False
        _COOL[0] = _MISSES[0] = 0
        _NEXT_COOL[0] = COOL_STEPS


engine.REPEATED.append(repeated)


def run_together(seq, live, results, call):
    """Run the pending sequence `seq` with its backward as one program (`call()` gives the
    values of the results in `live` and the gradients; _deferred_backward, _deferred_template)
    as the usual path's flush would run it: one backward less to cool down, the sequence done,
    its live results written, a fused run counted. Returns the gradients."""
    step_ended()
    deferred = DEFERRED[0]
    if deferred._ALONE or len(results) == 1:  # (_ran_alone has nothing to do otherwise)
        deferred.materialize(seq)
        deferred._ran_alone(seq.ops, seq.key)
    seq.done = True
    seq.ops = seq.ext = seq.results = seq.key = seq.nodes = seq.where = None
    try:
        outs, grads = call()
    except BaseException as e:
        seq.error = e
        seq.finished = True
        raise
    ran(True)
    for i, o in zip(live, outs):
        t = results[i]
        t._data = o
        t.__dict__.pop("_lazy", None)  # (see _deferred._run)
    seq.finished = True
    return grads


def attach(t, prep, hit, dyn, seq, i, pattern, aval):
    """Give t, the pending result of call i of `seq` (a simple row), its node, as
    _record_simple gives an eager result its node; False (t unchanged) when the node cannot
    be made without running the call (no per-kind data yet, a node named per call, an
    inference tensor). pattern: per argument 2 a tensor requiring grad, 1 another tensor, 0
    a number (record counts it)."""
    if prep.plan is None or hit[2] is None:
        return False
    got = hit[2].get(pattern)
    if got is None or got[1] is None:
        return False
    spec, cls, positions, saves_result, from_result = got
    if prep.grad_of is not None:  # a node named per call may depend on the numbers
        for v in dyn:
            if not isinstance(v, Tensor):
                return False
    needs = prep.needs_pos
    edges = []
    saved = []
    refs = False
    j = 0
    for v in dyn:
        if isinstance(v, Tensor):
            if v._requires_grad:
                fn = v._grad_fn
                edges.append((fn, v._output_nr) if fn is not None else (accumulator_of(v), 0))
            else:
                edges.append(None)
            if needs is None or j in needs:
                lz = v._lazy
                if lz is not None:
                    r = _new(Ref)  # (Ref(lz[1], seq) without its __init__'s call)
                    r.i, r.seq = lz[1], seq
                    saved.append(r)
                    refs = True
                else:
                    saved.append(v._data)
            else:
                saved.append(None)
        else:
            edges.append(None)
            saved.append(v)
        j += 1
    versions = []
    for j in positions:
        v = dyn[j]
        if v._inference:
            return False  # the eager path raises PyTorch's error
        vc = v._vc
        if vc is None:
            vc = v._vc = [0]
        lz = v._lazy
        versions.append((vc, vc[0], lz[2] if lz is not None else v._data.aval))
    if from_result:
        saved = (Ref(i, seq),)
        refs = True
    if saves_result:
        vc = t._vc = [0]
        versions.append((vc, 0, aval))
    # (Node.__init__ written out, as AccumulateGrad's is: a small model's forward makes a
    # node per op every step; anomaly mode, which __init__ also serves, is never deferred)
    node = _new(cls)
    node._spec = spec
    node._saved = tuple(saved)
    node._edges = tuple(edges)
    node._versions = tuple(versions)
    node._n_out = 1
    node._retained = node._pre_hooks = node._hooks = node._tensor_hooks = None
    node._has_saved = prep.has_saved
    node._released = False
    if aval.dtype in _INEXACT:
        t._requires_grad = True
        t._grad_fn = node
    if refs:
        seq.nodes.append(node)
    return True


def list_node(prep, hit, tensors):
    """The node of a deferred cat/stack (_record_list's rows: no saved tensor), or None."""
    if not prep.list_plain or hit[2] is None:
        return None
    edges, pattern = list_edges(tensors)
    spec = hit[2].get(pattern)
    if spec is None:
        return None
    return prep.node_cls(spec, ((None,) * len(edges),), tuple(edges), (), 1, has_saved=False)


def give(t, node, aval):
    """The pending result t gets its node (a list row's: nothing saved, no stamps)."""
    if aval.dtype in _INEXACT:
        t._requires_grad = True
        t._grad_fn = node


def needed(nodes):
    """(the results the nodes still alive refer to, those nodes); a node only the list
    holds is dead."""
    refs = sys.getrefcount
    need = set()
    alive = []
    for n in nodes:
        if refs(n) > 3:  # the list, this loop, getrefcount's argument
            saved = n._saved
            if saved.__class__ is tuple:
                alive.append(n)
                for x in saved:
                    if x.__class__ is Ref:
                        need.add(x.i)
    return need, alive


def patch(nodes, value_of):
    for n in nodes:
        n._saved = tuple(value_of[x.i] if x.__class__ is Ref else x for x in n._saved)
