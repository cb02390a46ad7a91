"""Activation layers: PyTorch's constructors, forward through torchjax.nn.functional, and the
same extra_repr so that repr(module) matches."""

from __future__ import annotations

import warnings

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink",
           "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .attention import MultiheadAttention  # noqa: F401
from .module import Module

# PyTorch defines MultiheadAttention in torch.nn.modules.activation, where scripts name it
# (safe_globals lists for torch.load); its home here is attention.py


def _inplace_repr(inplace: bool, sep: str = ", ") -> str:
    return f"{sep}inplace=True" if inplace else ""


class _Inplace(Module):
    """A layer whose only argument is `inplace`, shown when True."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, "")


class Threshold(Module):
    """value where input <= threshold, input elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        """Applies Threshold to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """The settings Threshold shows inside its `repr`, such as its sizes and flags."""
        return f"threshold={self.threshold}, value={self.value}{_inplace_repr(self.inplace)}"


class ReLU(_Inplace):
    """max(x, 0) elementwise."""

    def forward(self, input):
        """Applies ReLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training
    and is (lower + upper) / 2 in evaluation."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        """Applies RReLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The settings RReLU shows inside its `repr`, such as its sizes and flags."""
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace)}"


class Hardtanh(Module):
    """input clamped into [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):
        """Applies Hardtanh to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """The settings Hardtanh shows inside its `repr`, such as its sizes and flags."""
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_repr(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """The settings ReLU6 shows inside its `repr`, such as its sizes and flags."""
        return _inplace_repr(self.inplace, "")


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise (PyTorch's `torch.nn.Sigmoid`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Sigmoid.html.
    """

    def forward(self, input):
        """Applies Sigmoid to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return input.sigmoid()


class Hardsigmoid(Module):
    """relu6(x + 3) / 6 (PyTorch shows no arguments in its repr)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """Applies Hardsigmoid to `input`. Call the module (`m(x)`), not `forward`, so hooks run.
        """
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    """The hyperbolic tangent, elementwise (PyTorch's `torch.nn.Tanh`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Tanh.html.
    """

    def forward(self, input):
        """Applies Tanh to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return input.tanh()


class SiLU(_Inplace):
    """x * sigmoid(x)."""

    def forward(self, input):
        """Applies SiLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x))."""

    def forward(self, input):
        """Applies Mish to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.mish(input, inplace=self.inplace)


class Hardswish(Module):
    """x * relu6(x + 3) / 6 (PyTorch shows no arguments in its repr)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """Applies Hardswish to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.hardswish(input, self.inplace)


class _AlphaInplace(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace)}"


class ELU(_AlphaInplace):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def forward(self, input):
        """Applies ELU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaInplace):
    """x for x > 0, alpha * (exp(x / alpha) - 1) otherwise."""

    def forward(self, input):
        """Applies CELU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with the self-normalising constants."""

    def forward(self, input):
        """Applies SELU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.selu(input, self.inplace)


class GLU(Module):
    """a * sigmoid(b) for the halves a, b of the input along dim."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """Applies GLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        """The settings GLU shows inside its `repr`, such as its sizes and flags."""
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x); approximate='tanh' for the tanh form."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        """Applies GELU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """The settings GELU shows inside its `repr`, such as its sizes and flags."""
        return f"approximate={self.approximate!r}"


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, 0 elsewhere."""

    def forward(self, input):
        """Applies Hardshrink to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    def forward(self, input):
        """Applies Softshrink to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        """Applies LeakyReLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """The settings LeakyReLU shows inside its `repr`, such as its sizes and flags."""
        return f"negative_slope={self.negative_slope}{_inplace_repr(self.inplace)}"


class LogSigmoid(Module):
    """Log(sigmoid(x)), computed stably, elementwise (PyTorch's `torch.nn.LogSigmoid`).

    See https://pytorch.org/docs/stable/generated/torch.nn.LogSigmoid.html.
    """

    def forward(self, input):
        """Applies LogSigmoid to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        """Applies Softplus to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """The settings Softplus shows inside its `repr`, such as its sizes and flags."""
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learned slope: one for all channels, or one per channel (dim 1)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initializes PReLU's parameters in place, with the same scheme used at construction
        (the slope is refilled with `init`).
        """
        init.constant_(self.weight, self.init)

    def forward(self, input):
        """Applies PReLU to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The settings PReLU shows inside its `repr`, such as its sizes and flags."""
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """X / (1 + |x|), elementwise (PyTorch's `torch.nn.Softsign`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Softsign.html.
    """

    def forward(self, input):
        """Applies Softsign to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.softsign(input)


class Tanhshrink(Module):
    """X - tanh(x), elementwise (PyTorch's `torch.nn.Tanhshrink`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Tanhshrink.html.
    """

    def forward(self, input):
        """Applies Tanhshrink to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.tanhshrink(input)


class _SoftmaxLike(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxLike):
    """Softmax of -x along `dim` (PyTorch's `torch.nn.Softmin`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Softmin.html.
    """

    def forward(self, input):
        """Applies Softmin to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxLike):
    """Exp(x) normalised to sum to 1 along `dim` (PyTorch's `torch.nn.Softmax`).

    See https://pytorch.org/docs/stable/generated/torch.nn.Softmax.html.
    """

    def forward(self, input):
        """Applies Softmax to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxLike):
    """Log(softmax(x)) along `dim`, computed stably (PyTorch's `torch.nn.LogSoftmax`).

    See https://pytorch.org/docs/stable/generated/torch.nn.LogSoftmax.html.
    """

    def forward(self, input):
        """Applies LogSoftmax to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        """Applies Softmax2d to `input`. Call the module (`m(x)`), not `forward`, so hooks run."""
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
