"""Recording a tape node for an op dispatch just ran (grad mode on, an input requires grad).

The node keeps what the row's backward needs (the input arrays it reads, Python numbers as
they were given, or the result for rows whose derivative reads it), the edges to the inputs'
nodes, and the version counters of the saved tensors, checked again at backward.
_record_simple is the hot path for rows whose dynamic arguments are all tensors or numbers;
what follows from the kind of call alone (the backward spec, the node class, which inputs are
saved) it keeps in the fast path's entry, so per op it makes only the edges, the saved tuple
and the version stamps.
"""

from __future__ import annotations

from . import _residuals
from ._autograd import saved_hooks as _saved_hooks
from ._autograd.node import accumulator_of, list_edges
from ._dispatch import _CONCRETE, _INEXACT, _key_stat, _make_view, _node_cls, _wrap_outputs
from ._pure import _L, _S, _SCALARS, _T, _from_result, _hashable, _spec_for
from ._tensor import Tensor

_SAVED_HOOKS = _saved_hooks.STATE
_REC_MAX = 64  # kinds of call kept per fast-path entry (_record_simple's rec)


def _edges_and_diff(prep, dyn):
    edges = []
    diff = []
    for i, (k, v) in enumerate(zip(prep.kinds, dyn)):
        if k == _T:
            e = None
            if isinstance(v, Tensor) and v._requires_grad:
                fn = v._grad_fn
                e = (fn, v._output_nr) if fn is not None else (accumulator_of(v), 0)
                diff.append((i, -1))
            edges.append(e)
        elif k == _L:
            for j, x in enumerate(v):
                e = None
                if x._requires_grad:
                    fn = x._grad_fn
                    e = (fn, x._output_nr) if fn is not None else (accumulator_of(x), 0)
                    diff.append((i, j))
                edges.append(e)
    return tuple(edges), tuple(diff)


def _inference_saved():
    raise RuntimeError(
        "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
        "inference mode in computation tracked by autograd. To work around this, you can make "
        "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
        "instead of `torch.inference_mode()`.")


def _describe(t: Tensor):
    # the aval (shape and dtype) is all PyTorch's message needs; formatted only on error
    return t._data.aval


def _record_simple(prep, dyn, arrays, stat, cd, out, rec=None):
    """_record for rows whose dynamic arguments are all tensors or numbers (the hot path).

    rec: the fast path's dict for this (row, static arguments, argument dtypes and shapes),
    or None.
    With it, everything about the node that follows from the call's kind (its backward
    spec, class, saved positions) is worked out once and looked up per call: only the
    edges, saved arrays and version stamps are per call."""
    edges = []
    saved = []
    needs = prep.needs_pos
    nums = []  # the numbers among the arguments: a per-call node name may depend on them
    pattern = 0  # per argument: 2 a tensor requiring grad, 1 another tensor, 0 a number
    for i, v in enumerate(dyn):
        if isinstance(v, Tensor):
            if v._requires_grad:
                fn = v._grad_fn
                edges.append((fn, v._output_nr) if fn is not None else (accumulator_of(v), 0))
                pattern = pattern * 3 + 2
            else:
                edges.append(None)
                pattern = pattern * 3 + 1
            saved.append(arrays[i] if needs is None or i in needs else None)
        else:
            edges.append(None)
            saved.append(v)  # the number itself, not the device array the forward was given
            nums.append(v)
            pattern *= 3
    if rec is not None and prep.plan is not None:
        # rec belongs to the fast path's entry for (row, static arguments, argument dtypes
        # and shapes), which fixes everything the data depends on but which arguments
        # require grad, and, for a row whose node is named per call (grad_of, e.g. sdpa's
        # by dropout_p), the numbers given
        key = (pattern, tuple(nums)) if nums and prep.grad_of is not None else pattern
        got = rec.get(key)
        if got is None:
            if len(rec) >= _REC_MAX:  # ever-new numbers (NaN keys never match) stay bounded
                rec.clear()
            got = rec[key] = _call_data(prep, dyn, arrays, stat, cd, len(edges), True)
    else:
        got = _call_data(prep, dyn, arrays, stat, cd, len(edges), False)
    spec, cls, positions, saves_result, from_result = got
    versions = []
    for i in positions:
        v = dyn[i]
        if v._inference:
            _inference_saved()
        vc = v._vc
        if vc is None:
            vc = v._vc = [0]
        versions.append((vc, vc[0], v._data.aval))
    node = (cls or _node_cls(prep, dyn, stat))(spec, (out,) if from_result else tuple(saved),
                                               tuple(edges), (), 1, has_saved=prep.has_saved)
    t = Tensor._wrap(out)
    if out.dtype in _INEXACT:
        t._requires_grad = True
        t._grad_fn = node
    if prep.op.view:
        _make_view(t, dyn[0], ((prep.op, _key_stat(stat)),))
    elif prep.op.layout is not None:
        t._layout = prep.op.layout(dyn[0], *stat)
    if saves_result:
        vc = t._vc = [0]
        versions.append((vc, 0, out.aval))
    node._versions = tuple(versions)
    if _SAVED_HOOKS.stack and node._has_saved:
        _pack_saved(node, dyn, t, from_result)
    return t


def _call_data(prep, dyn, arrays, stat, cd, n_edges, cached):
    """(backward spec, node class or None when it is named per call, positions of the saved
    tensors, whether the result is saved, whether the backward reads the result) of a call
    of a simple row. cached: the result is kept for every call of the same kind, so the node
    class is fixed only when it is a function of that kind."""
    plan = prep.plan
    if plan is not None:
        # what is saved, and the gradients taken, follow from the pattern alone: worked out
        # once per pattern (PyTorch's conditional saves cost a walk over the groups per call)
        pattern = tuple(2 if isinstance(v, Tensor) and v._requires_grad else
                        1 if isinstance(v, Tensor) else 0 for v in dyn)
        got = prep.recorded.get(pattern)
        if got is None:
            got = prep.recorded[pattern] = _pattern_data(plan, dyn)
        diff, positions, saves_result = got
    else:
        diff, positions, saves_result = _pattern_data(prep.plan_for(dyn, stat), dyn)
    from_result = prep.result_grad is not None and _from_result(prep, cd)
    unsaved = ()
    if not from_result and prep.needs_pos is not None:
        unsaved = tuple((i, -1, a.shape, a.dtype) for i, (v, a) in enumerate(zip(dyn, arrays))
                        if isinstance(v, Tensor) and i not in prep.needs_pos)
    spec = _spec_for(prep, stat, cd, None, diff, unsaved, n_edges)
    cls = _node_cls(prep, dyn, stat) if cached else None
    return spec, cls, positions, saves_result, from_result


def _record_list(prep, dyn, arrays, stat, cd, out, rec=None):
    """_record for a row whose one dynamic argument is a tensor list and which saves no
    tensor (cat, stack: PyTorch's node keeps only the sizes): no versions to stamp, no saved
    arrays, just the edges and the node. Other list rows go through _record.

    rec: the list fast path's dict for this (row, static arguments, element dtypes and
    shapes): the backward spec per pattern of requires_grad, looked up rather than made."""
    if not prep.list_plain or out.__class__ is not _CONCRETE:
        return _record(prep, dyn, arrays, stat, cd, out)
    seq = dyn[0]
    edges, pattern = list_edges(seq)
    spec = None if rec is None else rec.get(pattern)
    if spec is None:
        spec = _list_spec(prep, seq, stat, cd)
        if rec is not None:
            if len(rec) >= _REC_MAX:
                rec.clear()
            rec[pattern] = spec
    node = prep.node_cls(spec, ((None,) * len(edges),), tuple(edges), (), 1, has_saved=False)
    t = Tensor._wrap(out)
    if out.dtype in _INEXACT:
        t._requires_grad = True
        t._grad_fn = node
    return t


def _list_spec(prep, seq, stat, cd):
    diff = []
    unsaved = []
    for j, x in enumerate(seq):
        av = x._data.aval
        unsaved.append((0, j, av.shape, av.dtype))
        if x._requires_grad:
            diff.append((0, j))
    return _spec_for(prep, stat, cd, None, tuple(diff), tuple(unsaved), len(seq))


def _pattern_data(plan, dyn):
    """(gradient positions, saved tensor positions, whether the result is saved) of a call
    of a simple row; a function of which arguments are tensors and which require grad."""
    diff = tuple((i, -1) for i, v in enumerate(dyn)
                 if isinstance(v, Tensor) and v._requires_grad)
    positions = tuple(i for i in plan.positions(dyn) if isinstance(dyn[i], Tensor))
    return diff, positions, bool(plan.result and plan.saves_result(dyn))


def _record(prep, dyn, arrays, stat, cd, out, inplace_self=None, out_cast=None,
            residuals=None):
    """Record the node of a call of any row. residuals: (residual arrays, argument avals)
    when the forward ran as its vjp's forward (_residuals.py): the node keeps them after
    its saved values and its backward applies the vjp to them."""
    if (prep.simple and inplace_self is None and residuals is None
            and not isinstance(out, (tuple, list))):
        return _record_simple(prep, dyn, arrays, stat, cd, out)
    edges, diff = _edges_and_diff(prep, dyn)
    needs = prep.needs_pos
    if needs is None:
        saved = tuple(arrays)
        unsaved = ()
    else:
        saved = []
        unsaved = []
        for i, (k, a) in enumerate(zip(prep.kinds, arrays)):
            if k == _S or i in needs:
                saved.append(a)
            elif k == _T:
                saved.append(None)
                if a is not None and not isinstance(a, _SCALARS):
                    unsaved.append((i, -1, a.shape, a.dtype))
                elif a is not None:
                    saved[-1] = a  # Python numbers cost nothing to keep
            else:
                saved.append(tuple(None for _ in a))
                unsaved.extend((i, j, x.shape, x.dtype) for j, x in enumerate(a))
        saved = tuple(saved)
        unsaved = tuple(unsaved)
    versions = []
    plan = prep.plan or prep.plan_for(dyn, stat)
    for i in plan.positions(dyn):
        v = dyn[i]
        if isinstance(v, Tensor):
            if v._inference:
                _inference_saved()
            if v is inplace_self:
                continue  # its new version is checked through "result"
            versions.append((v._counter(), v._version, _describe(v)))
        elif prep.kinds[i] == _L:
            if any(x._inference for x in v):
                _inference_saved()
            versions.extend((x._counter(), x._version, _describe(x)) for x in v)
    if _from_result(prep, cd):
        saved, unsaved = (out,), ()
    spec = _spec_for(prep, stat, cd, out_cast, diff, unsaved, len(edges))
    if residuals is not None:
        spec = _residuals.spec_for(spec, prep, _hashable(stat), cd, diff, residuals[1])
        saved = tuple(saved) + (residuals[0],)
    n_out = len(out) if isinstance(out, (tuple, list)) else 1
    node = _node_cls(prep, dyn, stat, inplace_self is not None)(
        spec, saved, edges, (), n_out, has_saved=prep.has_saved or residuals is not None)
    if inplace_self is not None:
        return node, versions
    result = _wrap_outputs(prep, dyn, stat, out, node)
    if plan.result and plan.saves_result(dyn):
        r = result if isinstance(result, Tensor) else result[0]
        versions.append((r._counter(), r._version, _describe(r)))
    node._versions = tuple(versions)
    if _SAVED_HOOKS.stack and node._has_saved:
        _pack_saved(node, dyn, result, _from_result(prep, cd))
    return result


def _pack_saved(node, dyn, result, from_result):
    """saved_tensors_hooks: hand each tensor the node saves to the active pack hook."""
    if from_result:
        tensors = (result,)
    else:
        tensors = tuple(v if isinstance(v, Tensor) else tuple(v) if isinstance(v, (list, tuple))
                        and all(isinstance(x, Tensor) for x in v) else None for v in dyn)
    node._saved = _saved_hooks.pack(node._saved, tensors)
