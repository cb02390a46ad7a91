"""nn.Parameter, nn.Buffer and the uninitialized (lazy) parameters and buffers."""

from __future__ import annotations

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]

import jax.numpy as jnp

from .. import _programs
from .._numpy_shared import adopt
from .._tensor import Tensor, _init_from
from .._x64 import scoped


def _default_empty(device=None, dtype=None) -> Tensor:
    from .. import _creation
    return _creation.empty(0, device=device, dtype=dtype)


class Parameter(Tensor):
    """A Tensor that is a module parameter; requires grad by default."""

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = _default_empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        _init_from(self, data._data)
        adopt(self, data)  # a parameter over an ndarray's memory shares it, as in PyTorch
        self._inference = data._inference
        self.requires_grad = bool(requires_grad)  # the setter refuses inference tensors

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        import numpy as np
        return (_rebuild_parameter, (type(self), np.asarray(self._data), self._requires_grad,
                                     dict(self.__dict__)))

    @scoped  # jnp.array would turn a float64 copy into float32 outside the x64 scope
    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = type(self)(Tensor._wrap(_copy(self._data)), self._requires_grad)
        memo[id(self)] = p
        return p


def _copied(a):
    return jnp.array(a, copy=True)


# named (the program cache): copying a model's parameters (copy.deepcopy of a model laid out
# over a mesh) then loads its copy programs in a warm process instead of tracing each
_copy = _programs.lazy_jit(_copied)


@scoped  # called by pickle, outside any torchjax call
def _rebuild_parameter(cls, arr, requires_grad, state=None):
    p = cls(Tensor._wrap(jnp.asarray(arr)), requires_grad)
    if state:
        p.__dict__.update(state)
    return p


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (lazy modules): materialize() gives
    it a shape and turns it into cls_to_become."""

    cls_to_become: type

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor a shape (uninitialized values) and its final class."""
        from .. import _creation
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = _creation.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        """Raises: an uninitialized parameter has no shape until the first forward (or a loaded
        state_dict) gives it one.
        """
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        """Raises: an uninitialized parameter has no data to share; run a forward first."""
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param) -> bool:
    """Whether param is an uninitialized (lazy) parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module, before its first forward gives it a shape."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        Parameter.__init__(self, _default_empty(device, dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class _BufferMeta(type):
    # Buffer(...) returns a plain Tensor marked as a buffer, as in PyTorch; isinstance sees it
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and \
                instance.__dict__.get("_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute;
    persistent=False leaves it out of the state_dict."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = _default_empty()
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module, before its first forward gives it a shape."""

    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        _init_from(self, _default_empty(device, dtype)._data)
        self.requires_grad = requires_grad
        self.persistent = persistent
        self._is_buffer = True
