"""torchjax.nn.functional: the functional forms of layers and losses."""

from __future__ import annotations

from .._dispatch import FUNCTIONS as _F
from .._dispatch import call_op_inplace
from .._dispatch import namespace_functions as _namespace_functions
from .._tensor import Tensor

# Every row of the op table published in torch.nn.functional, under its public name; the
# wrappers below add `inplace=` and PyTorch's argument quirks, and the composites of each area
# (nn/_functional/<area>.py) come last.
globals().update(_namespace_functions("torch.nn.functional"))


def _inplace(name):
    """F.<name>(input, ..., inplace=False): the row, written back into input when inplace."""
    row = _F[name]

    def fn(input, *args, inplace: bool = False, **kwargs):
        if inplace:
            return call_op_inplace(name, input, *args, **kwargs)
        return row(input, *args, **kwargs)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = row.__doc__
    return fn


def _plain(name):
    return _F[name]


linear = _plain("linear")
gelu = _plain("gelu")
silu = _inplace("silu")
leaky_relu = _inplace("leaky_relu")
elu = _inplace("elu")
selu = _inplace("selu")
celu = _inplace("celu")
hardtanh = _inplace("hardtanh")
relu6 = _inplace("relu6")
softplus = _plain("softplus")
logsigmoid = _plain("logsigmoid")
mish = _inplace("mish")
hardsigmoid = _inplace("hardsigmoid")
hardswish = _inplace("hardswish")
softsign = _plain("softsign")
tanhshrink = _plain("tanhshrink")
softshrink = _plain("softshrink")
hardshrink = _plain("hardshrink")
threshold = _inplace("threshold")
mse_loss = _plain("mse_loss")
l1_loss = _plain("l1_loss")
cross_entropy = _plain("cross_entropy")
nll_loss = _plain("nll_loss")


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0)."""
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["softmax"](input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["log_softmax"](input, dim, dtype=dtype)


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["softmax"](-input, dim, dtype=dtype)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu_(input):
    return input.relu_()


def threshold_(input, threshold_value, value):
    return threshold(input, threshold_value, value, inplace=True)


# ruff: noqa: E402, F403
from ._functional.attention import *
from ._functional.conv import *
from ._functional.loss import *
from ._functional.normalization import *
from ._functional.pooling import *
from ._functional.rnn import *
from ._functional.vision import *
