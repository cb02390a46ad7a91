"""Tensor's dtype and device conversions (to, cpu, cuda, float, ..., type, new_*), a base
class of Tensor kept in its own file."""

from __future__ import annotations

from . import _device, _dtypes, _memory_format, _meta, _strides


class _Conversions:
    """The conversion methods of Tensor (which adds the data they read)."""

    __slots__ = ()

    def type(self, dtype=None, non_blocking: bool = False):
        """The legacy type's name ('torch.FloatTensor'), or self converted to a dtype, a
        legacy type (torch.DoubleTensor, torch.cuda.FloatTensor) or a legacy type's name."""
        from . import _legacy_types
        if dtype is None:
            return _legacy_types.type_name(self)
        if isinstance(dtype, str) and dtype.startswith("torch.") and dtype.endswith("Tensor"):
            dtype = _legacy_types.lookup(dtype)
        if isinstance(dtype, _legacy_types.tensortype):
            return self.to("cuda" if dtype.is_cuda else "cpu", dtype.dtype)
        return self.to(dtype)

    def to(self, *args, **kwargs) -> _Conversions:
        """to(dtype), to(device), to(device, dtype), to(other); returns self when nothing changes."""
        dtype = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _Conversions):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, (_dtypes.dtype, type)) and not isinstance(a, str):
                dtype = a
            elif isinstance(a, (str, _device.device, int)):
                dev = a
            elif a is not None:
                raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
        t = self
        if dev is not None and (_device.is_meta(dev) or _meta.is_meta(t._data)):
            t = _to_or_from_meta(t, dev, copy)
        elif dev is not None:
            jd = _device.jax_device(dev)
            if _device.device_of(t._data) != _device.from_jax(jd) or copy:
                from ._dispatch import call_op
                t = call_op("_to_device", t, device=jd)
        if dtype is not None:
            dtype = _dtypes.to_dtype(dtype)
            if dtype is not t.dtype or (copy and t is self):
                from ._dispatch import call_op
                t = call_op("_to_dtype", t, dtype=dtype)
        if memory_format is not None and memory_format is not _memory_format.preserve_format:
            if t is self:
                t = t.contiguous(memory_format)
            else:  # already a fresh copy: only its layout changes (metadata, _strides.py)
                t._layout = _strides.for_format(tuple(t._data.shape), (), memory_format)
        return t

    def cpu(self) -> _Conversions:
        """A copy on the CPU (self if already there)."""
        return self.to("cpu")

    def cuda(self, device=None) -> _Conversions:
        """A copy on a CUDA device: `device` (an index or a device), or the default one."""
        return self.to("cuda" if device is None else _device.device("cuda", device)
                       if isinstance(device, int) else device)

    def float(self) -> _Conversions:
        """This tensor cast to float32 (self if it already is)."""
        return self.to(_dtypes.float32)

    def double(self) -> _Conversions:
        """This tensor cast to float64 (self if it already is)."""
        return self.to(_dtypes.float64)

    def half(self) -> _Conversions:
        """This tensor cast to float16 (self if it already is)."""
        return self.to(_dtypes.float16)

    def bfloat16(self) -> _Conversions:
        """This tensor cast to bfloat16 (self if it already is)."""
        return self.to(_dtypes.bfloat16)

    def long(self) -> _Conversions:
        """This tensor cast to int64 (self if it already is)."""
        return self.to(_dtypes.int64)

    def int(self) -> _Conversions:
        """This tensor cast to int32 (self if it already is)."""
        return self.to(_dtypes.int32)

    def short(self) -> _Conversions:
        """This tensor cast to int16 (self if it already is)."""
        return self.to(_dtypes.int16)

    def char(self) -> _Conversions:
        """This tensor cast to int8 (self if it already is)."""
        return self.to(_dtypes.int8)

    def byte(self) -> _Conversions:
        """This tensor cast to uint8 (self if it already is)."""
        return self.to(_dtypes.uint8)

    def bool(self) -> _Conversions:
        """This tensor cast to bool (self if it already is)."""
        return self.to(_dtypes.bool)

    def cfloat(self) -> _Conversions:
        """This tensor cast to complex64 (self if it already is)."""
        return self.to(_dtypes.complex64)

    def cdouble(self) -> _Conversions:
        """This tensor cast to complex128 (self if it already is)."""
        return self.to(_dtypes.complex128)

    def chalf(self, memory_format=None) -> _Conversions:
        """This tensor cast to complex32: raises, JAX has no complex half type."""
        from ._dtypes_storage_only import complex32
        return self.to(complex32)

    def type_as(self, other: _Conversions) -> _Conversions:
        """This tensor cast to the dtype of `other`."""
        return self.to(other.dtype)

    def new(self, *args, **kwargs):
        """The legacy Tensor.new: sizes give an uninitialised tensor of self's dtype and
        device, data a copy in that dtype, a tensor an alias of it."""
        if len(args) == 1 and isinstance(args[0], _Conversions) and not kwargs:
            return args[0].view_as(args[0])
        from ._creation import legacy_new
        kwargs.setdefault("device", self.device)
        return legacy_new(*args, dtype=kwargs.pop("dtype", self.dtype), **kwargs)

    def pin_memory(self, device=None):
        """self: JAX moves arrays between host and device itself, so there is no pinned copy
        to make (PyTorch without an accelerator raises instead)."""
        return self

    def is_pinned(self, device=None) -> bool:
        """Always False: JAX moves arrays between host and device itself, with no pinned memory."""
        return False

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> _Conversions:
        """A new tensor holding a copy of `data`, with this tensor's dtype and device unless given.
        """
        from ._creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def new_zeros(self, *args, size=None, dtype=None, device=None,
                  requires_grad=False) -> _Conversions:
        """A tensor of zeros of the given size (positional, or `size=`), with this tensor's dtype
        and device unless given."""
        from ._creation import zeros
        return zeros(*_size(args, size), dtype=dtype or self.dtype,
                     device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *args, size=None, dtype=None, device=None,
                 requires_grad=False) -> _Conversions:
        """A tensor of ones of the given size (positional, or `size=`), with this tensor's dtype
        and device unless given."""
        from ._creation import ones
        return ones(*_size(args, size, "new_ones"), dtype=dtype or self.dtype,
                    device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        """A tensor of the given size filled with `fill_value`, with this tensor's dtype and device
        unless given.
        """
        from ._creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_empty(self, *args, size=None, dtype=None, device=None,
                  requires_grad=False) -> _Conversions:
        """A tensor of the given size with this tensor's dtype and device unless given; XLA has no
        uninitialised memory, so it holds zeros.
        """
        return self.new_zeros(*_size(args, size, "new_empty"), dtype=dtype, device=device,
                              requires_grad=requires_grad)


def _size(args: tuple, size, name: str = "new_zeros") -> tuple:
    """new_zeros(2, 3), new_zeros((2, 3)) and new_zeros(size=(2, 3)) as the arguments of
    zeros()."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _to_or_from_meta(t, dev, copy: bool):
    """Tensor.to(device) where either side is the meta device: to meta keeps the shape and
    dtype only; from meta there is nothing to copy, as PyTorch says."""
    if not _device.is_meta(dev):
        raise _meta.no_data_error()
    if _meta.is_meta(t._data) and not copy:
        return t
    return type(t)._wrap(_meta.like(t._data), t._requires_grad)
