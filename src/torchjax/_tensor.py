"""Tensor: a jax.Array plus autograd metadata, a version counter and a view base. No math here:
every op method is generated from the op table (see _generate.py)."""

from __future__ import annotations

import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _device_dtypes, _dtypes, _meta
from ._autograd import grad_mode
from ._autograd.node import accumulator_of
from ._tensor_convert import _Conversions
from ._tensor_host import _ArrayImpl, _HostReads  # noqa: F401 (_ArrayImpl: compiler's)
from ._tensor_layout import _Layout, _wrap_dim  # noqa: F401 (_wrap_dim: the ops')
from ._x64 import scoped


class Size(tuple):
    """torch.Size: a tuple of ints that prints as torch.Size([...])."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape has (the product of the sizes)."""
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


_TENSOR_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor",
}


# _deferred.force, set when that module is imported (it imports this one)
_FORCE = [None]


class Tensor(_HostReads, _Conversions, _Layout):
    """A multi-dimensional array with PyTorch's semantics, backed by a jax.Array."""

    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_vc",
                 "_base", "_view_chain", "_views", "_retains_grad", "_acc", "_hooks",
                 "_post_acc_hooks", "_detached", "_inference", "_layout", "__weakref__",
                 "__dict__")

    __array_priority__ = 1000  # numpy defers to our reflected operators

    # a pending result of a deferred op (_deferred.py) holds (sequence, index, aval) here, in
    # its __dict__, and has no `_data` yet: reading `_data` then lands in __getattr__
    _lazy = None

    def __getattr__(self, name):
        # only called when normal lookup failed: an unset `_data` slot is a pending result
        if name == "_data" and self.__dict__.get("_lazy") is not None:
            return _FORCE[0](self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'",
                             name=name, obj=self)

    # -- construction ----------------------------------------------------------------------

    def __init__(self, *args, **kwargs):
        # The legacy constructor: torch.Tensor(2, 3) is uninitialised float, torch.Tensor(list).
        from ._creation import legacy_new
        t = legacy_new(*args, **kwargs)
        _init_from(self, t._data)

    @classmethod
    def _wrap(cls, arr, requires_grad=False) -> Tensor:
        t = object.__new__(cls)
        t._data = arr
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._vc = None
        t._base = None
        t._view_chain = None
        t._views = None
        t._retains_grad = False
        t._acc = None
        t._hooks = None
        t._post_acc_hooks = None
        t._detached = False
        # made under inference_mode: an inference tensor (see is_inference)
        t._inference = _INFERENCE.inference
        # PyTorch's strides and storage offset, as metadata (_strides.py): None is contiguous
        t._layout = None
        return t

    @classmethod
    def _pending(cls, lazy) -> Tensor:
        """_wrap for a pending result of a deferred op (_deferred.py): every slot as _wrap
        sets it but `_data`, left unset (its first read runs the sequence), and `lazy`, the
        (sequence, index, aval) of the op, in its __dict__. (_wrap then `del t._data` cost
        ~50 ns more an op; tests/test_deferred_replay.py checks the two agree.)"""
        t = object.__new__(cls)
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._vc = None
        t._base = None
        t._view_chain = None
        t._views = None
        t._retains_grad = False
        t._acc = None
        t._hooks = None
        t._post_acc_hooks = None
        t._detached = False
        t._inference = _INFERENCE.inference
        t._layout = None
        t._lazy = lazy
        return t

    # -- metadata --------------------------------------------------------------------------

    # (a pending result, _deferred, answers shape reads from the aval it was recorded with:
    # running its sequence there cut forwards in two, at mse_loss's size check)
    @property
    def shape(self) -> Size:
        """The size of each dimension, as a `torchjax.Size` (a tuple subclass)."""
        return Size((self._data if self._lazy is None else self._lazy[2]).shape)

    def size(self, dim: int | None = None):
        """The shape as a `torchjax.Size`, or the size of dimension `dim` (negative counts from the
        end) as an int.
        """
        shape = (self._data if self._lazy is None else self._lazy[2]).shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    def dim(self) -> int:
        """The number of dimensions (`ndimension` is another name for it)."""
        return (self._data if self._lazy is None else self._lazy[2]).ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return (self._data if self._lazy is None else self._lazy[2]).ndim

    def numel(self) -> int:
        """The number of elements (`nelement` is another name for it)."""
        return int(np.prod(self._data.shape, dtype=np.int64))

    nelement = numel

    @property
    def T(self) -> Tensor:
        """All dims reversed (PyTorch deprecates this for ndim != 2 but allows it)."""
        return self.permute(*range(self._data.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped."""
        return self.transpose(-2, -1)

    @property
    def real(self) -> Tensor:
        """The real part, a view (the tensor itself for a real tensor, as in PyTorch)."""
        if not self.is_complex():
            return self
        from ._dispatch import FUNCTIONS
        return FUNCTIONS["real"](self)

    @real.setter
    def real(self, value) -> None:
        self.real.copy_(value)

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a view; PyTorch raises for real tensors."""
        from ._dispatch import FUNCTIONS
        return FUNCTIONS["imag"](self)

    @imag.setter
    def imag(self, value) -> None:
        self.imag.copy_(value)

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a 2-D tensor (the plain transpose for real tensors)."""
        return self.T.conj() if self.is_complex() else self.T

    @property
    def mH(self) -> Tensor:
        """The conjugate transpose of the last two dimensions (for batches of matrices)."""
        return self.mT.conj() if self.is_complex() else self.mT

    @property
    def dtype(self) -> _dtypes.dtype:
        """The element type, a `torchjax.dtype`; an int64 tensor kept as int32 on an accelerator
        (see the x64 notes) still reports int64.
        """
        d = _dtypes.from_jax(self._data.dtype)
        if d is _dtypes.int32 and _DEVICE_DTYPES.on:  # a long stored as int32 (_device_dtypes)
            return _device_dtypes.reported(self, d)
        return d

    @property
    def device(self) -> _device.device:
        """The device the wrapped jax.Array lives on, as a `torchjax.device`."""
        return _device.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor is on a CUDA (GPU) device."""
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        """Whether this tensor is on the meta device: a shape and a dtype, no data."""
        return _meta.is_meta(self._data)

    @property
    def layout(self):
        """Always `torchjax.strided` for a dense tensor (sparse COO tensors are their own class).
        """
        from ._layout import strided
        return strided

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor is on the CPU."""
        return self.device.type == "cpu"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point type."""
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is a complex type."""
        return self.dtype.is_complex

    # the reported dtype's sizes, as PyTorch/XLA's 32-bit longs still report 8 bytes
    @property
    def itemsize(self) -> int:
        """Bytes per element of the reported dtype (8 for int64 even where it is stored as int32).
        """
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take at the reported dtype: `numel() * itemsize`."""
        return self.numel() * self.dtype.itemsize

    def is_signed(self) -> bool:
        """Whether the dtype is signed."""
        return self.dtype.is_signed

    def is_same_size(self, other) -> bool:
        """Whether `other` has the same shape as this tensor."""
        return tuple(self._data.shape) == tuple(other._data.shape)

    def element_size(self) -> int:
        """Bytes per element of the reported dtype, as `itemsize`."""
        return self.dtype.itemsize

    @property
    def _version(self) -> int:
        return 0 if self._vc is None else self._vc[0]

    def _counter(self) -> list:
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    @property
    def is_leaf(self) -> bool:
        """Whether the tensor is a leaf of the autograd graph: made by the user (or by an op with
        no grad-requiring input), so it has no `grad_fn`.
        """
        return self._grad_fn is None

    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (0 for leaves)."""
        return self._output_nr

    def _is_view(self) -> bool:
        return self._base is not None and not (self._detached and not self._view_chain)

    def _autograd_view(self) -> bool:
        """Whether in-place writes to self are autograd writes into its base (CopySlices).
        detach()/.data aliases, and views taken from them, share their root's values but not
        its history: as in PyTorch they are leaves of their own."""
        return self._base is not None and not self._detached

    @property
    def requires_grad(self) -> bool:
        """Whether autograd records operations on this tensor; settable on leaves (floating or
        complex dtypes only).
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool):
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        value = bool(value)
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and self._inference and not _INFERENCE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Sets `requires_grad` in place (True by default) and returns the tensor."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        """The autograd node that made this tensor, or None for a leaf."""
        return self._grad_fn

    @property
    def grad(self):
        """The gradient accumulated into this tensor by `backward` (None until then); reading it on
        a non-leaf that does not retain its gradient warns, as in PyTorch.
        """
        if self._grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(_grad_dtype_message(value.dtype, self.dtype))
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def retain_grad(self) -> None:
        """Makes a non-leaf tensor keep its gradient in `.grad` during backward (a no-op on
        leaves).
        """
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        node = self._grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        """Whether `retain_grad()` was called on this non-leaf tensor."""
        return self._retains_grad

    def _store_grad(self, ct) -> None:
        """Add a gradient array into .grad (AccumulateGrad, retain_grad, backward(inputs=)),
        then run the post-accumulate hooks; the engine has already run the tensor hooks."""
        g = self._grad
        if g is None:
            self._grad = Tensor._wrap(ct)
        else:
            from ._autograd.engine import _add
            g._data = _add(g._data, ct)
            g._counter()[0] += 1
        self._post_accumulate()

    def _store_grad_graph(self, ct: Tensor) -> None:
        """_store_grad for create_graph=True: .grad keeps the graph of its computation."""
        g = self._grad
        self._grad = ct if g is None else g + ct
        self._post_accumulate()

    def _post_accumulate(self) -> None:
        if self._post_acc_hooks and self._grad_fn is None:
            for hook in tuple(self._post_acc_hooks.values()):
                if hook(self) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; it may return a new grad.

        On a non-leaf the hook belongs to the current grad_fn's output (as in PyTorch: after an
        in-place op, hooks registered before it see the gradient of the old value)."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from ._hooks import add_hook
        node = self._grad_fn
        if node is None:
            self._hooks, handle = add_hook(self._hooks, hook)
            return handle
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
        store, handle = add_hook(node._tensor_hooks.get(self._output_nr), hook)
        node._tensor_hooks[self._output_nr] = store
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Registers `hook(tensor)`, called on a leaf after a gradient has been added into its
        `.grad`; returns a handle whose `remove()` unregisters it.
        """
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        from ._hooks import add_hook
        self._post_acc_hooks, handle = add_hook(self._post_acc_hooks, hook)
        return handle

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the .grad of the leaves it depends on."""
        _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- data, detaching, copies -------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        # Shares values with self (a write to either is seen by the other) but not autograd
        # history or the version counter, as in PyTorch.
        """The same values without the autograd history: writes through either are seen by both,
        but `.data` shares no version counter, so autograd cannot detect them.
        """
        return _no_grad_alias(self, share_version=False)

    @data.setter
    def data(self, value: Tensor):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data
        if self._lazy is not None:  # a pending result (_deferred): its value is replaced
            del self._lazy  # (out of __dict__, the tensor's Python state: see _deferred._run)
        self._layout = value._layout
        self._refresh_views()

    def detach(self) -> Tensor:
        """A tensor sharing this one's values with no autograd history (`requires_grad` False);
        in-place changes to either are seen by both and tracked by the shared version counter.
        """
        return _no_grad_alias(self, share_version=True)

    def detach_(self) -> Tensor:
        """Detaches this tensor from the graph in place (it becomes a leaf without `requires_grad`)
        and returns it; not allowed on a view.
        """
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def is_inference(self) -> bool:
        """Whether this tensor was made under inference_mode (or is a view or detach() of one).
        Outside inference_mode it cannot be changed in place or saved for backward."""
        return self._inference

    def _write(self, new) -> None:
        """Replace the values in place: bump the shared version, update the base and views."""
        if self._inference and not _INFERENCE.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You "
                "can make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details.")
        if _meta.is_meta(self._data):  # no values to write, in self or its base
            self._counter()[0] += 1
            return
        self._counter()[0] += 1
        base = self._base
        if base is None:
            self._data = new
            if self._views:
                self._refresh_views()
            return
        from ._views import write_through
        base._data = write_through(self._view_chain, base._data, new)
        base._refresh_views()

    def _refresh_views(self) -> None:
        if not self._views:
            return
        from ._views import read_through
        alive = []
        for ref in self._views:
            v = ref()
            if v is not None:
                v._data = read_through(v._view_chain, self._data)
                alive.append(ref)
        self._views = alive


def _grad_dtype_message(got, allowed) -> str:
    """PyTorch's error for a .grad whose dtype is not the tensor's grad_dtype."""
    return (f"attempting to assign a gradient with dtype '{_dtypes.CPP_NAMES.get(got.name)}' to a "
            f"tensor with grad_dtype '{_dtypes.SCALAR_NAMES.get(allowed.name)}'. The gradient "
            f"must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
            f"the tensor's grad_dtype attribute with a specific dtype, or None to allow any "
            f"dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its "
            f"gradient may break downstream systems that assume they match.")


def _init_from(t: Tensor, arr) -> None:
    fresh = Tensor._wrap(arr)
    for name in Tensor.__slots__:
        if name not in ("__weakref__", "__dict__"):
            object.__setattr__(t, name, getattr(fresh, name))


@scoped  # called by pickle, outside any torchjax call: int64 values must stay int64
def _rebuild(arr, requires_grad):
    return Tensor._wrap(jnp.asarray(arr), requires_grad)


def _alias(t: Tensor, share_version: bool) -> Tensor:
    """A tensor sharing values with t (an identity view) but with no autograd history."""
    out = Tensor._wrap(t._data)
    base = t._base if t._base is not None else t
    out._base = base
    out._view_chain = t._view_chain if t._base is not None else ()
    out._detached = True
    out._inference = t._inference
    out._layout = t._layout
    if share_version:
        out._vc = base._counter()
    else:
        out._vc = [0]
    if base._views is None:
        base._views = []
    base._views.append(weakref.ref(out))
    return out


def _no_grad_alias(t: Tensor, share_version: bool) -> Tensor:
    """detach() / .data: inside a JAX transform (torchjax.func, checkpoint's recomputation) the
    values also stop JAX's gradient, as detaching stops PyTorch's."""
    out = _alias(t, share_version)
    if isinstance(out._data, jax.core.Tracer):
        out._data = jax.lax.stop_gradient(out._data)
    return out


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


# JAX sees a Tensor as its array (jnp.asarray(t), jax.jit(f)(t) through __jax_array__)
jax.tree_util.register_pytree_node(
    Tensor, lambda t: ((t._data,), None), lambda _, xs: Tensor._wrap(xs[0]))

_ = grad_mode, accumulator_of  # re-exported for the dispatcher
_INFERENCE = grad_mode.STATE
_DEVICE_DTYPES = _device_dtypes.STATE


def _autograd_backward(*args, **kwargs):
    # bound on first use: torchjax.autograd imports this module
    global _autograd_backward
    from .autograd import backward
    _autograd_backward = backward
    return backward(*args, **kwargs)
