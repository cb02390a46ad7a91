"""Eager dispatch: unwrap -> cached jitted forward -> wrap -> record a tape node.

Forward: one jitted XLA call per (op, static arguments, compute dtype); JAX's own cache
handles shapes. With grad on, the forward is the same call: the node keeps the input arrays
the backward needs, and its backward is a cached jitted function that re-runs the op under
jax.vjp. XLA drops whatever part of the recomputation the gradient does not use, so this
costs one XLA call per node and no eager jax.vjp ever (DESIGN.md, measured costs).

Most calls take the fast path (`_fast_call`): rows of tensors and numbers without argument
checks, views or layouts find their compiled call and compute dtype in one lookup on
(static arguments, argument dtypes), then wrap or record the result; everything else
(autocast, result hooks, checkpoint capture, lists, errors) takes the general path.

The row as a pure function and its backward are in _pure.py; the public functions, methods
and operators generated from the table are in _generate.py; recording the tape node is in
_record.py; the in-place and out= forms are in _dispatch_inplace.py; Python numbers reach
the compiled call as kept device arrays (_scalar_args.py).
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from . import (
    _autocast,
    _deferred,
    _deferred_split,
    _deferred_views,
    _device_dtypes,
    _dtypes,
    _linearize,
    _meta,
    _programs,
    _residuals,
    _result_hooks,
    _saves,
)
from ._autograd import grad_mode
from ._autograd import saved_hooks as _saved_hooks
from ._autograd.node import node_class
from ._dispatch_args import (  # noqa: F401 (LAYOUTS re-exported: the sparse package fills it)
    LAYOUTS,
    _compute_dtype,
    _layout_handler,
    _unwrap,
)
from ._dispatch_explain import _explain, _explain_broadcast  # noqa: F401 (re-exported)
from ._dispatch_views import (  # noqa: F401 (re-exported: views made outside dispatch)
    _ITEM_OPS,
    _ItemView,
    _key_stat,
    _make_view,
    key_stat,
    make_view,
)
from ._linearize import ACTIVE as _LINEARIZE
from ._ops._registry import OpDef
from ._pure import _L, _S, _SCALARS, _T, _from_result, _hashable, _make_pure, _types
from ._scalar_args import on_device as _on_device
from ._tensor import Tensor
from ._x64 import EVAL as _EVAL
from ._x64 import KEPT as _KEPT
from ._x64 import TRACE as _TRACE
from ._x64 import X64 as _X64
from ._x64 import Allowed as _Allowed
from ._x64 import allow as _allow

_STATE = grad_mode.STATE
_DEFER = _deferred.ON
_DEFER_GRAD = _deferred.GRAD
_DEFER_COOL = _deferred.COOL  # grad deferral cooling down: grad ops turned away here
_defer, _defer_list = _deferred.record, _deferred.record_list
_AUTOCAST = _autocast.STATE
_DEVICE_DTYPES = _device_dtypes.STATE
_RESULT_HOOKS = _result_hooks.STATE
try:  # the class of a concrete jax array, named without making one: importing torchjax must
    # not start the XLA backend (DataLoader's forkserver imports torchjax before forking)
    from jax._src.array import ArrayImpl as _CONCRETE
except ImportError:  # moved in a newer jax: every result then takes the grad-mode check
    _CONCRETE = None
_SAVED_HOOKS = _saved_hooks.STATE
# torchjax.utils.checkpoint sets this to a callable while it discovers which tensors a
# region reads: called with each op's dynamic arguments before the op runs
CAPTURE = None
_INEXACT = frozenset(np.dtype(d) for d in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64,
                                             jnp.complex64, jnp.complex128))


class _Prepared:
    """Per-row data the hot path needs, computed once."""

    __slots__ = ("op", "kinds", "names", "fwd", "node_cls", "simple", "needs_pos", "plan",
                 "has_saved", "out_cls", "promote_kinds", "result_grad", "check", "grad_of",
                 "saves_of", "plans", "fast", "recorded", "list_fast",
                 "list_plain", "pieces", "views", "check_passes")

    def __init__(self, op: OpDef):
        self.op = op
        self.names = op.dynamic
        self.kinds = tuple(_L if n == op.tensor_list else _S if n in op.scalars else _T
                           for n in self.names)
        self.simple = all(k == _T for k in self.kinds) and op.promote_args is None
        pa = op.promote_args
        # kinds used for promotion and casting: parameters outside promote_args are left alone
        self.promote_kinds = tuple(k if pa is None or n in pa else _S
                                   for n, k in zip(self.names, self.kinds))
        self.fwd = {}
        overloaded = callable(op.grad)
        self.node_cls = None if overloaded else node_class(op.grad)
        self.grad_of = _bind_arguments(op, op.grad) if overloaded else None
        self.check = None if op.check is None else _bind_arguments(op, op.check)
        # (a row with a check takes the fast path for calls whose kinds it passes)
        self.check_passes = None if op.check_passes is None else \
            _bind_arguments(op, op.check_passes)
        needs = op.needs
        self.needs_pos = None if needs is None else frozenset(
            i for i, n in enumerate(self.names) if n in needs)
        self.saves_of = None
        if callable(op.saves):  # chosen per call (plan_for); every choice saves something
            self.saves_of = _bind_arguments(op, op.saves)
            self.plans = {}
            self.plan = None
            self.has_saved = True
        else:
            self.plan = self._plan(op.saves if op.saves is not None else op.needs)
            p = self.plan
            self.has_saved = bool(p.always or p.conditional or p.result)
        self.result_grad = op.result_grad
        self.out_cls = None
        if op.out_names:
            self.out_cls = _return_type(op.name, op.out_names)
        self.recorded = {}  # _record_simple's per-pattern data (which inputs require grad)
        # the fast path's table (dispatch): rows of tensors and numbers with no argument check,
        # no view, no layout and no named outputs
        self.fast = {} if (self.simple and isinstance(op.promote, str)
                           and (self.check is None or self.check_passes is not None)
                           and not op.view and op.layout is None and self.out_cls is None
                           and not op.residuals) \
            else None
        # rows whose one dynamic argument is a tensor list (cat, stack, einsum's operands):
        # their own fast path (_fast_list_call), same conditions otherwise
        self.list_fast = (self.kinds == (_L,) and isinstance(op.promote, str) and not op.residuals
                          and self.check is None and not op.view and op.layout is None
                          and self.out_cls is None)
        if self.list_fast:
            self.fast = {}
        # a list row that saves nothing and has one node class (cat, stack): _record_list
        self.list_plain = (self.list_fast and self.needs_pos == frozenset() and not
                           self.has_saved and self.node_cls is not None
                           and self.result_grad is None)
        # split, chunk, unbind: their pieces may be deferred (_deferred_split.py)
        self.pieces = _deferred_split.eligible(self)
        # single-output views: deferred too (_deferred_views.py)
        self.views = _deferred_views.eligible(self)

    def _plan(self, saves):
        return _saves.plan(saves, self.op, self.names, tuple(k == _S for k in self.kinds))

    def plan_for(self, dyn, stat):
        """The save plan of a row whose saves depend on the call (one per choice)."""
        saves = self.saves_of(dyn, stat)
        got = self.plans.get(id(saves))
        if got is None:
            got = self.plans[id(saves)] = (saves, self._plan(saves))
        return got[1]


_RETURN_TYPES: dict = {}


def _return_type(name, fields):
    cls = _RETURN_TYPES.get(name)
    if cls is None:
        cls = collections.namedtuple(name, fields)
        cls.__module__ = "torch.return_types"
        cls.__qualname__ = name
        cls.__repr__ = lambda self: (
            f"torch.return_types.{name}(\n" + ",\n".join(
                f"{f}={getattr(self, f)!r}" for f in fields) + ")")
        _RETURN_TYPES[name] = cls
    return cls


PREPARED: dict[str, _Prepared] = {}
FUNCTIONS: dict = {}


def _fwd_for(prep: _Prepared, stat, cd, out_cast=None):
    # the types are part of the key because True == 1 and hash alike, yet std(x, 1) (a dim)
    # and std(x, True) (unbiased) are different calls
    key = (stat, _types(stat), cd, out_cast)
    try:
        return prep.fwd[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable static argument (a list): normalise to tuples
        stat = _hashable(stat)
        key = (stat, _types(stat), cd, out_cast)
        f = prep.fwd.get(key)
        if f is not None:
            return f
    ident = _programs.ident_of("op", prep.op.name, prep.op.fn, stat, key[1], cd, out_cast)
    f = prep.fwd[key] = _programs.program(_make_pure(prep, stat, cd, out_cast), ident)
    return f


# -- the call --------------------------------------------------------------------------------

_VIEWS_WAITING = _deferred_views.WAITING

_FAST_CD: dict = {}  # (promote mode, argument keys) -> compute dtype; see _dtypes


def _fast_unwrap(prep, dyn):
    """The hot path for rows whose dynamic arguments are all tensors or numbers."""
    arrays = []
    keys = [prep.op.promote]
    rg = False
    for v in dyn:
        if isinstance(v, Tensor):
            a = v._data
            arrays.append(a)
            av = a.aval  # cheaper than a.dtype / a.ndim on a jax.Array, and works on tracers
            keys.append((av.dtype, not av.shape))
            if v._requires_grad:
                rg = True
        elif v is None:
            arrays.append(None)
        elif v.__class__ in _SCALARS:
            # a kept device array for a repeated number, outside JAX transformations and only
            # under x64 (the arrays are x64's); see _scalar_args
            arrays.append(_on_device(v) if _X64.value and _TRACE.value is _EVAL else v)
            keys.append(v.__class__)
        else:
            return None
    key = tuple(keys)
    cd = _FAST_CD.get(key)
    if cd is None:
        mode = prep.op.promote
        cd = _dtypes.result_type_of(dyn) if mode != "none" else False
        if mode == "float" and not (cd.is_floating_point or cd.is_complex):
            cd = _dtypes.get_default_dtype()
        _FAST_CD[key] = cd
    return arrays, rg, (cd or None)


_dtypes.on_default_dtype_change(_FAST_CD.clear)


# Entries kept per row in the fast-path tables (keyed on shapes: a workload of ever-new shapes
# starts over rather than grow them; an entry is cheap to make again)
_FAST_MAX = 512


def _fast_call(prep, fast, dyn, stat):
    """The result of a call of a row the fast path serves (Prepared.fast), recorded on the
    tape when grad mode is on and an input requires grad; or None for the general path: an
    argument that is not a tensor or a number, an unhashable static argument, the
    linearizing compiler's trace, a failed call (the general path runs it again and explains
    the error)."""
    arrays = []
    keys = [stat, _types(stat)]
    rg = none = False
    for v in dyn:
        if isinstance(v, Tensor):
            a = v._data
            arrays.append(a)
            av = a.aval
            keys.append(av.dtype)
            # the shape, not just whether it is 0-d (what promotion reads): the entry then
            # also keeps _record_simple's data, which follows from the shapes (the node's
            # name, the backward's zeros)
            keys.append(av.shape)
            if v._requires_grad:
                rg = True
        elif v.__class__ in _SCALARS:
            arrays.append(_on_device(v) if _X64.value and _TRACE.value is _EVAL else v)
            keys.append(v.__class__)
        elif v is None:  # (an absent optional tensor: linear's bias=False)
            arrays.append(None)
            keys.append(None)
            none = True
        else:
            return None
    if rg and (_LINEARIZE[0] or none):  # (_record_simple's data takes tensors and numbers)
        return None
    key = tuple(keys)
    try:
        hit = fast.get(key)
    except TypeError:  # a list among the static arguments
        return None
    if hit is None:
        if prep.check is not None and not prep.check_passes(dyn, stat):
            return None  # (the general path checks it: this key's values may fail it)
        got = _fast_unwrap(prep, dyn)
        if got is None:
            return None
        cd = got[2]
        if len(fast) >= _FAST_MAX:  # ever-new shapes must not grow the table
            fast.clear()
        # (compiled call, compute dtype, _record_simple's data per pattern of requires_grad,
        # _deferred's data)
        hit = fast[key] = (_fwd_for(prep, stat, cd), cd, {}, [])
        try:
            out = hit[0](*arrays)
        except (TypeError, ValueError, IndexError):
            return None
        if _DEFER[0]:  # the result's shape for deferring later calls, without a trace
            _deferred.seen_result(prep, stat, hit, out)
    else:
        try:
            out = hit[0](*arrays)
        except (TypeError, ValueError, IndexError):
            return None
    if out.__class__ is _CONCRETE:
        if rg and _STATE.grad_enabled and prep.op.differentiable:
            return _record_simple(prep, dyn, arrays, stat, hit[1], out, hit[2])
        return Tensor._wrap(out)
    # a traced result (inside a JAX transformation), or several
    if rg and _STATE.grad_enabled and prep.op.differentiable:
        return _record(prep, dyn, arrays, stat, hit[1], out)
    if not _STATE.grad_enabled:
        out = stop_traced(out)
    return _wrap_outputs(prep, dyn, stat, out, None)


def _fast_list_call(prep, fast, dyn, stat):
    """_fast_call for rows whose one dynamic argument is a list of tensors (cat, stack): keyed
    on (static arguments, per tensor its dtype and shape); None for the general
    path (anything but a list or tuple of tensors, a failed call, ...)."""
    seq = dyn[0]
    if seq.__class__ is not list and seq.__class__ is not tuple:
        return None
    arrays = []
    keys = [stat, _types(stat)]
    rg = False
    for v in seq:
        if not isinstance(v, Tensor):
            return None
        a = v._data
        arrays.append(a)
        av = a.aval
        keys.append(av.dtype)
        keys.append(av.shape)  # as in _fast_call: _record_list's data follows from the shapes
        if v._requires_grad:
            rg = True
    if rg and _LINEARIZE[0]:
        return None
    key = tuple(keys)
    try:
        hit = fast.get(key)
    except TypeError:  # a list among the static arguments
        return None
    if hit is None:
        cd = _compute_dtype(prep, dyn, stat)
        if len(fast) >= _FAST_MAX:
            fast.clear()
        hit = fast[key] = (_fwd_for(prep, stat, cd), cd, {}, [])  # as in _fast_call
    arrays = (tuple(arrays),)
    try:
        out = hit[0](*arrays)
    except (TypeError, ValueError, IndexError):
        return None
    if _DEFER[0] and not hit[3]:  # as in _fast_call (list rows are rarer: checked here)
        _deferred.seen_result(prep, stat, hit, out)
    if rg and _STATE.grad_enabled and prep.op.differentiable:
        return _record_list(prep, dyn, arrays, stat, hit[1], out, hit[2])
    if out.__class__ is not _CONCRETE and not _STATE.grad_enabled:
        out = stop_traced(out)
    return _wrap_outputs(prep, dyn, stat, out, None)


def _clear_fast():
    for prep in PREPARED.values():
        if prep.fast is not None:
            prep.fast.clear()


_dtypes.on_default_dtype_change(_clear_fast)


def _bind_arguments(op: OpDef, f):
    """f(**arguments) as a function of dispatch's (dynamic, static) argument tuples."""
    names = op.dynamic + op.statics

    def run(dyn, stat):
        return f(**dict(zip(names, dyn + stat)))
    return run


def _node_cls(prep, dyn, stat, inplace=False):
    if prep.node_cls is not None and not (inplace and prep.op.inplace_overloads):
        return prep.node_cls
    name = prep.op.grad if prep.grad_of is None else prep.grad_of(dyn, stat)
    if inplace and prep.op.inplace_overloads:
        stem, n = name.rsplit("Backward", 1)
        name = f"{stem}Backward{int(n) + prep.op.inplace_overloads}"
    return node_class(name)


def dispatch(prep: _Prepared, dyn: tuple, stat: tuple):
    """Run one op eagerly; record it on the tape when grad mode is on and an input needs it."""
    fast = prep.fast
    if fast is not None and _DEFER[0] and CAPTURE is None:  # before the scope: see
        # _deferred.record. Most ops of a training step record a node: turned away here,
        # inline (through record that check cost ~0.3 µs per op, inline ~0.05-0.1)
        v = None
        if _STATE.grad_enabled and (not _DEFER_GRAD[0] or _DEFER_COOL[0]):
            for v in dyn:
                if isinstance(v, Tensor) and v._requires_grad:
                    break
            else:
                v = None
        if v is None and not _AUTOCAST.on and not _RESULT_HOOKS.hooks:
            res = (_defer_list if prep.list_fast else _defer)(prep, fast, dyn, stat)
            if res is not None:
                return res
    elif prep.pieces and _DEFER[0] and CAPTURE is None and not _AUTOCAST.on \
            and not _RESULT_HOOKS.hooks and not (_DEFER_COOL[0] and _STATE.grad_enabled):
        res = _deferred_split.record(prep, dyn, stat)
        if res is not None:
            return res
    elif prep.views and _DEFER[0] and CAPTURE is None and not _AUTOCAST.on \
            and not _RESULT_HOOKS.hooks:
        res = _deferred_views.record(prep, dyn, stat)
        if res is not None:
            return res
    # torchjax's x64 scope (_x64.py), entered inline: every op passes here, and a
    # wrapper would add a frame to the stack its warnings point into
    x64 = _KEPT if _X64.value else _X64.swap_local(True) if _TRACE.value is _EVAL else _allow()
    try:
        if CAPTURE is not None:
            CAPTURE(dyn)
        fast = prep.fast
        if fast is not None and not _AUTOCAST.on and not _RESULT_HOOKS.hooks:
            # the fast path: (static arguments, argument dtypes) -> (compiled call, compute
            # dtype) in one lookup; anything unusual falls through to the general path below
            res = (_fast_list_call if prep.list_fast else _fast_call)(prep, fast, dyn, stat)
            if res is not None:
                return res
        if prep.check is not None and not _AUTOCAST.on:
            prep.check(dyn, stat)
        got = _fast_unwrap(prep, dyn) if prep.simple and isinstance(prep.op.promote, str) else None
        if got is not None:
            arrays, rg, cd = got
        else:
            arrays, rg = _unwrap(prep, dyn)
            cd = _compute_dtype(prep, dyn, stat)
        if _AUTOCAST.on:
            cd = _autocast.compute_dtype(prep.op, dyn, stat, cd)
            if prep.check is not None:  # PyTorch checks the inputs autocast has cast
                prep.check(_autocast.as_cast(cd, dyn), stat)
        lin = kept = None
        try:
            if rg and _STATE.grad_enabled and prep.op.differentiable:
                if _LINEARIZE[0]:
                    lin = _linearized(prep, dyn, stat, cd, arrays)
                elif prep.op.residuals:
                    kept = _residual_forward(prep, dyn, stat, cd, arrays)
            out = _fwd_for(prep, stat, cd)(*arrays) if lin is None and kept is None else \
                lin[0] if kept is None else kept[0]
        except (TypeError, ValueError, IndexError) as e:
            if not _meta.any_meta(arrays):
                if LAYOUTS:
                    handler = _layout_handler(prep, dyn)
                    if handler is not None:
                        return handler(prep, dyn, stat)
                _explain(prep, dyn, stat, e)
            # shapes and dtypes only; the node is recorded (grad_fn, requires_grad) but a
            # backward through it has no values to run on
            out = _meta.evaluate(_fwd_for(prep, stat, cd), arrays)
        if rg and _STATE.grad_enabled and prep.op.differentiable:
            res = _record(prep, dyn, arrays, stat, cd, out,
                          residuals=None if kept is None else kept[1:])
            if lin is not None:
                _keep_linearized(res, lin[1])
        else:
            if out.__class__ is not _CONCRETE and not _STATE.grad_enabled:
                out = stop_traced(out)  # only traced values (or tuples) need the grad-mode check
            res = _wrap_outputs(prep, dyn, stat, out, None)
        if _RESULT_HOOKS.hooks:  # _device_dtypes' policy, DTensor's placements
            for hook in _RESULT_HOOKS.hooks:
                res = hook(prep.op.name, dyn, res)
        return res
    finally:
        if x64 is not _KEPT:
            _X64.set_local(x64) if x64.__class__ is not _Allowed else x64.restore()


def _linearized(prep, dyn, stat, cd, arrays):
    """(out, backward) of this call run under jax.vjp (_linearize.py), or None."""
    if _SAVED_HOOKS.stack or _from_result(prep, cd):
        return None
    diff = _edges_and_diff(prep, dyn)[1]
    if not diff:
        return None
    return _linearize.run(_make_pure(prep, stat, cd, None), arrays, diff)


def _residual_forward(prep, dyn, stat, cd, arrays):
    """(out, residuals, avals) of a `residuals=True` row's call run as its vjp's forward
    (_residuals.py), or None where the call keeps the usual path: saved-tensor hooks (they
    pack the inputs the backward re-runs on), a result-based backward, a JAX trace around
    the call (torchjax.func, checkpoint: JAX differentiates there), no input to
    differentiate."""
    if _SAVED_HOOKS.stack or _from_result(prep, cd) or any(
            isinstance(a, jax.core.Tracer) for a in jax.tree_util.tree_leaves(arrays)):
        return None
    diff = _edges_and_diff(prep, dyn)[1]
    if not diff:
        return None
    return _residuals.forward(prep, _hashable(stat), cd, arrays, diff)


def _keep_linearized(res, backward):
    """Give the node just recorded for `res` the linear map its forward kept."""
    for t in (res,) if isinstance(res, Tensor) else res:
        node = t._grad_fn if isinstance(t, Tensor) else None
        if node is not None:
            if node._spec.__class__ is not _linearize.Linearized:
                node._spec = _linearize.Linearized(node._spec, backward)
            return


def stop_traced(out):
    """no_grad inside a JAX transform (torchjax.func, checkpoint's recomputation): JAX does
    the differentiating there, so results computed without grad become its constants."""
    if isinstance(out, jax.core.Tracer):
        return jax.lax.stop_gradient(out)
    if isinstance(out, (tuple, list)) and any(isinstance(o, jax.core.Tracer) for o in out):
        return type(out)(jax.lax.stop_gradient(o) if isinstance(o, jax.core.Tracer) else o
                         for o in out)
    return out


def _wrap_outputs(prep, dyn, stat, out, node):
    op = prep.op
    if isinstance(out, (tuple, list)):
        ts = []
        for i, o in enumerate(out):
            t = Tensor._wrap(o)
            if node is not None and o.dtype in _INEXACT:
                t._requires_grad = True
                t._grad_fn = node
                t._output_nr = i
            ts.append(t)
        if op.view:
            for i, t in enumerate(ts):
                _make_view(t, dyn[0], ((_ITEM_OPS[op.name], (_key_stat(stat), i)),))
        if prep.out_cls is not None:
            return prep.out_cls(*ts)
        return tuple(ts) if not op.returns_list else list(ts)
    t = Tensor._wrap(out)
    if node is not None and out.dtype in _INEXACT:
        t._requires_grad = True
        t._grad_fn = node
    if op.view:
        _make_view(t, dyn[0], ((op, _key_stat(stat)),))
    elif op.layout is not None:
        t._layout = op.layout(dyn[0], *stat)
    if prep.views and node is None and _VIEWS_WAITING[0]:  # (its kind's aval: _deferred_views)
        _deferred_views.seen(prep, stat, dyn[0], t)
    return t


def call_op(name: str, *args, **kwargs):
    """Call a row by name with Python argument binding (for internal, non-hot paths)."""
    prep = PREPARED[name]
    b = prep.op.signature.bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    return dispatch(prep, tuple(a[n] for n in prep.names), tuple(a[n] for n in prep.op.statics))


# recording and the in-place and out= forms live in their own modules; imported last, as
# they read this one
from ._dispatch_inplace import (  # noqa: E402, F401 (re-exported)
    call_op_inplace,
    dispatch_inplace,
    dispatch_out,
)
from ._record import (  # noqa: E402, F401 (re-exported)
    _edges_and_diff,
    _pack_saved,
    _record,
    _record_list,
    _record_simple,
)
