"""PyTorch's deprecated scalar-first overloads, which it still accepts with a warning:
`p.data.add_(-lr, grad)`, `exp_avg.mul_(beta1).add_(1 - beta1, grad)`,
`exp_avg_sq.addcmul_(1 - beta2, grad, grad)`, `p.addcdiv_(-step, exp_avg, denom)`: the
optimizers of many older scripts are written this way.

The op table's rows keep PyTorch's current signatures; install() wraps the torchjax.X and
Tensor.X / X_ forms of add, sub, addcmul and addcdiv so that a Number first, followed by
tensors, is moved into its keyword (alpha= or value=), with PyTorch's warning, once per
process as PyTorch gives it. Every other call goes straight to the row.
"""

from __future__ import annotations

import functools
import numbers
import warnings

from ._tensor import Tensor

_WARNED = [False]

# name -> (the scalar's keyword, how many tensors follow it, the tensors' names)
_FORMS = {"add": ("alpha", ("other",)), "sub": ("alpha", ("other",)),
          "addcmul": ("value", ("tensor1", "tensor2")),
          "addcdiv": ("value", ("tensor1", "tensor2"))}


def _warn(name: str, keyword: str, tensors: tuple, function: bool) -> None:
    if _WARNED[0]:
        return
    _WARNED[0] = True
    first = "Tensor input, " if function else ""
    out = ", *, Tensor out = None" if function else ""
    outs = ", Tensor out = None" if function else ""
    given = ", ".join(f"Tensor {t}" for t in tensors)
    warnings.warn(
        f"This overload of {name} is deprecated:\n\t{name}({first}Number {keyword}, {given}"
        f"{out})\nConsider using one of the following signatures instead:\n\t{name}({first}"
        f"{given}, *, Number {keyword} = 1{outs})", UserWarning, stacklevel=3)


def _wrap(fn, name: str, function: bool):
    keyword, tensors = _FORMS[name.rstrip("_")]
    n = len(tensors)

    @functools.wraps(fn)
    def call(input, *args, **kwargs):
        if (len(args) == n + 1 and isinstance(args[0], numbers.Number) and keyword not in kwargs
                and all(isinstance(a, Tensor) for a in args[1:])):
            _warn(name, keyword, tensors, function)
            kwargs[keyword] = args[0]
            args = args[1:]
        return fn(input, *args, **kwargs)
    return call


def install(namespace: dict) -> None:
    """Wrap torchjax.<name> in `namespace` and Tensor.<name>, Tensor.<name>_."""
    for name in _FORMS:
        namespace[name] = _wrap(namespace[name], name, True)
        for method in (name, name + "_"):
            setattr(Tensor, method, _wrap(getattr(Tensor, method), method, False))
