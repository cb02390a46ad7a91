"""torchjax.nn.functional: the functional forms of layers and losses."""

from __future__ import annotations

import warnings

from .._autograd import grad_mode as _grad_mode
from .._dispatch import FUNCTIONS as _F
from .._dispatch import PREPARED, call_op_inplace, dispatch_out
from .._generate import namespace_functions as _namespace_functions
from .._tensor import Tensor

# Every row of the op table published in torch.nn.functional, under its public name; the
# wrappers below add `inplace=` and PyTorch's argument quirks, and the composites of each area
# (nn/_functional/<area>.py) come last.
globals().update(_namespace_functions("torch.nn.functional"))


def _row_or_inplace(name, inplace, input, *args):
    """The row `name`, written back into input when inplace (F.relu(x, inplace=True))."""
    if inplace:
        return call_op_inplace(name, input, *args)
    return _F[name](input, *args)


# rows of the torch namespace that torch.nn.functional also has
hardshrink = _F["hardshrink"]
prelu = _F["prelu"]
pixel_shuffle = _F["pixel_shuffle"]
pixel_unshuffle = _F["pixel_unshuffle"]
channel_shuffle = _F["channel_shuffle"]
native_channel_shuffle = _F["native_channel_shuffle"]
cosine_similarity = _F["cosine_similarity"]
pairwise_distance = _F["pairwise_distance"]
pdist = _F["pdist"]
conv_tbc = _F["conv_tbc"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0)."""
    return input.relu_() if inplace else input.relu()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("relu6", inplace, input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _row_or_inplace("elu", inplace, input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("selu", inplace, input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _row_or_inplace("celu", inplace, input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _row_or_inplace("leaky_relu", inplace, input, negative_slope)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _row_or_inplace("hardtanh", inplace, input, min_val, max_val)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("silu", inplace, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("mish", inplace, input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("hardswish", inplace, input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _row_or_inplace("hardsigmoid", inplace, input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _row_or_inplace("threshold", inplace, input, threshold, value)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with random slopes in [lower, upper] while training, (lower + upper) / 2
    otherwise."""
    from .. import rrelu as _rrelu
    from .. import rrelu_ as _rrelu_
    return (_rrelu_ if inplace else _rrelu)(input, lower, upper, training)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def _softmax_dim(name, input, dim, stacklevel):
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if input.dim() in (0, 1, 3) else 1


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["softmax"](input, _softmax_dim("softmax", input, dim, _stacklevel), dtype=dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["log_softmax"](input, _softmax_dim("log_softmax", input, dim, _stacklevel),
                             dtype=dtype)


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return _F["softmax"](-input, _softmax_dim("softmin", input, dim, _stacklevel), dtype=dtype)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(norm_p(input, dim), eps), written into out when given."""
    if out is not None:
        # PyTorch divides into out last, so its message names div
        if _grad_mode.STATE.grad_enabled and (input.requires_grad or out.requires_grad):
            raise RuntimeError("div(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return dispatch_out(PREPARED["normalize"], (input,), (p, dim, eps), out)
    return _F["normalize"](input, p, dim, eps)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def relu_(input):
    return input.relu_()


def threshold_(input, threshold, value):
    return _row_or_inplace("threshold", True, input, threshold, value)


# ruff: noqa: E402, F403
from ._functional.attention import *
from ._functional.conv import *
from ._functional.dropout import *
from ._functional.fractional_pooling import *
from ._functional.helpers import *
from ._functional.linear import *
from ._functional.loss import *
from ._functional.loss_binary import *
from ._functional.loss_classes import *
from ._functional.loss_ctc import *
from ._functional.loss_ranking import *
from ._functional.normalization import *
from ._functional.pooling import *
from ._functional.rnn import *
from ._functional.vision import *
