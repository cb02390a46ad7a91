"""torchjax.overrides: the __torch_function__ protocol's helpers, with no overrides in play.

torchjax does not dispatch to __torch_function__, so nothing ever has a torch function to
call: the has_torch_function* checks are False (code that guards on them takes its plain
path), the listings are empty, and asking to dispatch or to enter a TorchFunctionMode raises.
"""

from __future__ import annotations

import contextlib

from ._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "is_tensor_method_or_property",
           "get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "wrap_torch_function", "resolve_name", "enable_reentrant_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode"]

_UNSUPPORTED = ("__torch_function__ overrides are not supported by torchjax: its functions "
                "do not dispatch to them")


def has_torch_function(relevant_args) -> bool:
    """Always False: no argument can override a torchjax function.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return False


def has_torch_function_unary(arg) -> bool:
    """Always False: no argument can override a torchjax function.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return False


def has_torch_function_variadic(*args) -> bool:
    """Always False: no argument can override a torchjax function.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Raises NotImplementedError: `__torch_function__` overrides are not supported by torchjax.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    raise NotImplementedError(f"torch.overrides.handle_torch_function: {_UNSUPPORTED}")


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines __torch_function__."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func) -> bool:
    """Whether `func` is the Tensor method or property of that name.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return getattr(Tensor, getattr(func, "__name__", ""), None) is func


def get_ignored_functions() -> set:
    """An empty set: no torchjax function takes part in `__torch_function__` overriding.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return set()


def get_overridable_functions() -> dict:
    """An empty dict: torchjax does not dispatch through `__torch_function__`.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return {}


def get_testing_overrides() -> dict:
    """An empty dict: there are no overridable functions to test.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return {}


def wrap_torch_function(dispatcher):
    """A decorator that leaves the function as it is (nothing can override it)."""
    return lambda func: func


def resolve_name(f):
    """The dotted torch name of f, when it is one of torchjax's functions."""
    module = getattr(f, "__module__", None) or ""
    name = getattr(f, "__qualname__", None)
    if name is None or not module.startswith("torchjax"):
        return None
    return f"torch.{name}" if module == "torchjax" else f"{module}.{name}".replace(
        "torchjax", "torch", 1)


def enable_reentrant_dispatch():
    """A context manager that does nothing: torchjax has no dispatcher to re-enter.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """
    return contextlib.nullcontext()


class TorchFunctionMode:
    """Subclassable; entering a mode raises, as nothing would call its __torch_function__."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        raise NotImplementedError(f"torch.overrides.TorchFunctionMode: {_UNSUPPORTED}")

    def __exit__(self, *exc) -> bool:
        return False


class BaseTorchFunctionMode(TorchFunctionMode):
    """PyTorch's base class for `__torch_function__` modes; torchjax never calls into a mode.

    See https://pytorch.org/docs/stable/torch.overrides.html.
    """

    pass
