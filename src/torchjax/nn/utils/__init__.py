"""torchjax.nn.utils: gradient clipping, parameter/vector conversion, parametrizations and the
packed-sequence helpers of nn.utils.rnn."""

# ruff: noqa: F403
from . import clip_grad, convert_parameters, parametrizations, parametrize, rnn
from .clip_grad import *
from .convert_parameters import *

__all__ = ["rnn", "parametrize", "parametrizations", *clip_grad.__all__,
           *convert_parameters.__all__]
