"""autograd.Function: user-defined ops with a Python forward and backward.

Two ways to write forward, as in PyTorch: `forward(ctx, *args)`, or `forward(*args)` plus
`setup_context(ctx, inputs, output)`. `apply` runs forward with grad mode off, then gives
the outputs a grad_fn of the generated class `<Name>Backward`, which is also the ctx.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from .._autograd.grad_mode import STATE, no_grad
from .._tensor import Tensor
from .._x64 import scope
from ._function_apply import bind_keywords, finish_forward
from ._function_ctx import FunctionCtx
from ._function_ctx import _ContextMethodMixin as _ContextMethodMixin  # old pickles
from ._function_node import BackwardCFunction, delayed_error
from ._function_traced import apply_traced, is_traced

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "FunctionMeta", "once_differentiable"]


class FunctionMeta(type):
    """Gives every Function subclass its node class, `_backward_cls` (named <Name>Backward)."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with static forward and backward; call it through `.apply(*args)`."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        """Override with the computation; it runs with autograd off. With `setup_context`, its
        arguments are just the inputs; otherwise the first is `ctx`.
        """
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override to save what backward needs on `ctx`, given the forward inputs and output; this
        lets `forward` omit `ctx` (and makes the Function usable with torchjax.func transforms).
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Override with the gradient formula: given `ctx` and one gradient per output, return one
        gradient per input of `forward` (None where there is none).
        """
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward  # the two names are aliases: a subclass overrides one of them
    """Another name for `backward`: override either one."""

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Override for forward-mode AD: given `ctx` and one tangent per input, return one tangent
        per output.
        """
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # accepted for compatibility; torchjax has no torch.vmap rule for Functions yet
    generate_vmap_rule = False
    clear_saved_tensors_on_access = False
    boxed_grads_call = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """Override to say how the Function batches under `torchjax.func.vmap`: given the batch
        dimensions of the inputs, return the outputs and their batch dimensions (or set
        `generate_vmap_rule = True`).
        """
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs the Function on the inputs and records it in the autograd graph, so its backward is
        used; call this, never `forward` directly.
        """
        new_style = cls.setup_context is not Function.setup_context
        if new_style:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        args = bind_keywords(cls.forward, args, kwargs, skip_ctx=not new_style)
        # forward runs in torchjax's x64 scope, as backward does (inside the engine): JAX code
        # in it sees the tensors' 64-bit dtypes
        with scope():
            if is_traced(args):  # inside a JAX transform: JAX differentiates, with our backward
                return apply_traced(cls, args, new_style)
            is_tensor = tuple(isinstance(a, Tensor) for a in args)
            needs = tuple(t and a._requires_grad for t, a in zip(is_tensor, args))
            ctx = cls._backward_cls(needs, is_tensor)
            executable = STATE.grad_enabled and any(needs)
            with no_grad():
                if new_style:
                    out = cls.forward(*args)
                    cls.setup_context(ctx, args, out)
                else:
                    out = cls.forward(ctx, *args)
            return finish_forward(ctx, args, out, executable)


_ONCE_MSG = ("trying to differentiate twice a function that was marked with "
             "@once_differentiable")


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs under no_grad, and
    differentiating its results (create_graph=True) raises PyTorch's error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not STATE.grad_enabled:
            return outputs
        # only a guess at requires_grad (as in PyTorch): some incoming gradient requires it
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        res = delayed_error(_ONCE_MSG, outputs if isinstance(outputs, tuple) else (outputs,))
        return res if isinstance(outputs, tuple) else res[0]

    return wrapper
