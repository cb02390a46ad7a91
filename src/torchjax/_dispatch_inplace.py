"""The in-place (Tensor.<op>_) and out= forms of a row: computed as the out-of-place op by
_dispatch's forward, then written into self / out (with self's version counter, views and
CopySlices recording on a view's base).
"""

from __future__ import annotations

from . import _device_dtypes, _dispatch, _dtypes, _meta
from ._dispatch import (
    _AUTOCAST,
    _DEVICE_DTYPES,
    _EVAL,
    _INEXACT,
    _KEPT,
    _STATE,
    _TRACE,
    _X64,
    LAYOUTS,
    PREPARED,
    _allow,
    _Allowed,
    _compute_dtype,
    _explain,
    _fwd_for,
    _key_stat,
    _layout_handler,
    _Prepared,
    _unwrap,
    stop_traced,
)
from ._dispatch_views import _CREATION, check_inplace_on_view
from ._pure import _L, _make_pure
from ._record import _describe, _inference_saved, _record
from ._tensor import Tensor
from ._view_grad import record_copy_slices, regenerate_views

# rows whose PyTorch kernels check an in-place output's size themselves (the structured
# "Bad in-place call" check) rather than through TensorIterator's broadcast
_RESIZE_CHECKED = frozenset({"addmm", "baddbmm", "addmv"})


def dispatch_inplace(prep: _Prepared, dyn: tuple, stat: tuple):
    """Tensor.<op>_: compute as the out-of-place op, cast to self's dtype, write in place."""
    # torchjax's x64 scope, entered inline as in dispatch
    x64 = _KEPT if _X64.value else _X64.swap_local(True) if _TRACE.value is _EVAL else _allow()
    try:
        if _dispatch.CAPTURE is not None:  # set by torchjax.utils.checkpoint
            _dispatch.CAPTURE(dyn)
        self = dyn[0]
        if not isinstance(self, Tensor):
            raise TypeError(f"{prep.op.name}_(): self must be a Tensor")
        if prep.check is not None:
            prep.check(dyn, stat)
        arrays, rg = _unwrap(prep, dyn)
        grad_on = _STATE.grad_enabled
        if grad_on and self._requires_grad and self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        cd = _compute_dtype(prep, dyn, stat)
        sd = self.dtype
        if cd is not None and cd is not sd and not _dtypes.can_cast(cd, sd):
            raise RuntimeError(f"result type {_dtypes.SCALAR_NAMES[cd.name]} can't be cast to the "
                               f"desired output type {_dtypes.SCALAR_NAMES[sd.name]}")
        out_cast = sd  # the result takes self's dtype (a no-op cast when it already has it)
        if _DEVICE_DTYPES.on:  # a long stored as int32 stays int32 (_device_dtypes.py)
            out_cast = _device_dtypes.storage_dtype(self, sd)
        try:
            out = _fwd_for(prep, stat, cd, out_cast)(*arrays)
        except (TypeError, ValueError, IndexError) as e:
            if not _meta.any_meta(arrays):
                if LAYOUTS:
                    _layout_handler(prep, dyn, inplace=True)
                _explain(prep, dyn, stat, e)
            out = _meta.evaluate(_fwd_for(prep, stat, cd, out_cast), arrays)
            rg = False  # a meta tensor records no autograd history
        if out.shape != self._data.shape:
            have, want = ", ".join(map(str, self._data.shape)), ", ".join(map(str, out.shape))
            if prep.op.name in _RESIZE_CHECKED:
                raise RuntimeError(f"Bad in-place call: input tensor size [{have}] and output "
                                   f"tensor size [{want}] should match")
            raise RuntimeError(
                f"output with shape [{have}] doesn't match the broadcast shape [{want}]")
        record = rg and grad_on and prep.op.differentiable and self._data.dtype in _INEXACT
        view = self._base is not None and not self._detached
        # PyTorch's check of the view's creation: for every write autograd records, and for a
        # view made under no_grad of a tensor requiring grad, which records nothing itself
        if view and (record or (_CREATION and grad_on and self._base._requires_grad)):
            check_inplace_on_view(self)
        if record and view:
            return _inplace_on_view(prep, dyn, arrays, stat, cd, out_cast, out)
        if record:
            node, versions = _record(prep, dyn, arrays, stat, cd, out, inplace_self=self,
                                     out_cast=out_cast)
        elif not grad_on:
            out = stop_traced(out)
        self._write(out)
        if record:
            self._grad_fn = node
            self._output_nr = 0
            self._requires_grad = True
            # the op's own input snapshot is immutable, so only a saved result is checked later
            plan = prep.plan or prep.plan_for(dyn, stat)
            if plan.result and plan.saves_result(dyn):
                versions.append((self._counter(), self._version, _describe(self)))
            node._versions = tuple(versions)
            if self._views:
                regenerate_views(self)
        return self
    finally:
        if x64 is not _KEPT:
            _X64.set_local(x64) if x64.__class__ is not _Allowed else x64.restore()


def _inplace_on_view(prep, dyn, arrays, stat, cd, out_cast, out):
    """An in-place op through a view, recorded on the base as PyTorch's CopySlices."""
    self = dyn[0]
    base = self._base
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    # scalars and tensor lists (index_put_'s indices) take part as constants; a tensor list
    # that itself needs gradients has no write rule here
    if any(k == _L and any(isinstance(x, Tensor) and x._requires_grad for x in dyn[i])
           for i, k in enumerate(prep.kinds)):
        raise NotImplementedError(f"{prep.op.name}_(): an in-place write through a view with a "
                                  "list of tensors that require grad does not record gradients; "
                                  "write to a clone() instead")
    versions = []
    for i in (prep.plan or prep.plan_for(dyn, stat)).positions(dyn):
        v = dyn[i]
        if i and isinstance(v, Tensor):
            if v._inference:
                _inference_saved()
            versions.append((v._counter(), v._version, _describe(v)))
    node = record_copy_slices(self, (prep, _key_stat(stat), cd, out_cast),
                              _make_pure(prep, stat, cd, out_cast), dyn, arrays, versions)
    self._write(out)
    base._grad_fn = node
    base._output_nr = 0
    base._requires_grad = True
    regenerate_views(base)
    return self


def dispatch_out(prep: _Prepared, dyn: tuple, stat: tuple, out: Tensor):
    """The out= form: compute, then write the result into `out` (resized as needed)."""
    # torchjax's x64 scope, entered inline as in dispatch
    x64 = _KEPT if _X64.value else _X64.swap_local(True) if _TRACE.value is _EVAL else _allow()
    autocast_on = _AUTOCAST.on
    try:
        # out= calls are not eligible for autocast (PyTorch's rule): run the op as written
        _AUTOCAST.on = False
        try:
            res = _dispatch.dispatch(prep, dyn, stat)
        finally:
            _AUTOCAST.on = autocast_on
        if not isinstance(out, Tensor):
            raise TypeError(f"{prep.op.name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        if _STATE.grad_enabled and (out._requires_grad or res._requires_grad):
            raise RuntimeError(f"{prep.op.name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        data = res._data
        if out.dtype is not res.dtype:
            if not _dtypes.can_cast(res.dtype, out.dtype):
                raise RuntimeError(f"result type {_dtypes.SCALAR_NAMES[res.dtype.name]} can't be "
                                   f"cast to the desired output type "
                                   f"{_dtypes.SCALAR_NAMES[out.dtype.name]}")
            # (a long that the device dtype policy stores as int32 keeps its int32 array)
            data = data.astype(_device_dtypes.storage_dtype(out, out.dtype).np)
        if data.shape != out._data.shape and out._base is None:
            out._data = data
            out._counter()[0] += 1
        else:
            out._write(data)
        return out
    finally:
        if x64 is not _KEPT:
            _X64.set_local(x64) if x64.__class__ is not _Allowed else x64.restore()


def call_op_inplace(name: str, *args, **kwargs):
    """The in-place form of a row by name: the result is written into the first argument."""
    prep = PREPARED[name]
    b = prep.op.signature.bind(*args, **kwargs)
    b.apply_defaults()
    a = b.arguments
    return dispatch_inplace(prep, tuple(a[n] for n in prep.names),
                            tuple(a[n] for n in prep.op.statics))
