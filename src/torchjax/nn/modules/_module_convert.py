"""Module's dtype and device conversions (to, cuda, cpu, float, double, half, bfloat16,
type, to_empty) and _apply, the walk over parameters and buffers they share: a mixin of
nn.Module, whose methods are named Module.<name> as in PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..._autograd.grad_mode import no_grad
from ..._tensor import Tensor

if TYPE_CHECKING:  # annotations only: module.py imports this file
    from .module import Module


class ModuleConversions:
    """The conversions of nn.Module (see module.py)."""

    def _apply(self, fn, recurse: bool = True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            # The Parameter object stays the same (optimizers hold it); only its data changes
            with no_grad():
                param_applied = fn(param)
            param.data = param_applied
            grad = param._grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]):
        """Call fn on every submodule (children first) and then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        """Moves parameters and buffers to a GPU that JAX sees (raises when there is none).

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.cuda.html.
        """
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Moves parameters and buffers to the host.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.cpu.html.
        """
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Casts every parameter and buffer to `dst_type`.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.type.html.
        """
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Casts floating parameters and buffers to float32.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.float.html.
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating parameters and buffers to float64.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.double.html.
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Casts floating parameters and buffers to float16.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.half.html.
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating parameters and buffers to bfloat16.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.bfloat16.html.
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse: bool = True):
        """Move the parameters and buffers to device without keeping their values."""
        from ... import _creation
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False), to(dtype, non_blocking=False),
        to(tensor, non_blocking=False): moves every parameter and buffer, and casts the
        floating point and complex ones."""
        memory_format = kwargs.pop("memory_format", None)
        device, dtype, _non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn(
                    "Complex modules are a new feature under active development whose design "
                    "may change, and some modules might not work as expected when using "
                    "complex tensors as parameters or buffers. Please file an issue at "
                    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if "
                    "a complex module does not work as expected.", stacklevel=2)

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
                if t.is_meta and str(device).split(":")[0] != "meta":
                    raise NotImplementedError(
                        "Cannot copy out of meta tensor; no data! Please use "
                        "torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving "
                        "module from meta to a different device.")
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                kw["dtype"] = dtype
            if memory_format is not None and t.dim() in (4, 5):  # as PyTorch: conv weights
                kw["memory_format"] = memory_format
            return t.to(**kw) if kw else t

        return self._apply(convert)


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking) from Module.to's forms."""
    from ... import _dtypes
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected "
                        f"keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[0], Tensor):
        t = args.pop(0)
        device, dtype = t.device, t.dtype
    elif args and isinstance(args[0], _dtypes.dtype):
        dtype = args.pop(0)
    elif args and (args[0] is None or not isinstance(args[0], bool)):
        device = args.pop(0)
        if args and (args[0] is None or isinstance(args[0], _dtypes.dtype)):
            dtype = args.pop(0)
    if args and isinstance(args[0], bool):
        non_blocking = args.pop(0)
    if args:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"{tuple(type(a).__name__ for a in args)}")
    if dtype is not None:
        dtype = _dtypes.to_dtype(dtype)
    return device, dtype, non_blocking
