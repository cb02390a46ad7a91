"""The layers of torchjax.nn, one file per family (as in PyTorch); each file's __all__ is
re-exported here."""

# ruff: noqa: F403
from . import (
    activation,
    attention,
    container,
    conv,
    distance,
    dropout,
    flatten,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
from .activation import *
from .attention import *
from .container import *
from .conv import *
from .distance import *
from .dropout import *
from .flatten import *
from .linear import *
from .loss import *
from .module import *
from .normalization import *
from .padding import *
from .pixelshuffle import *
from .pooling import *
from .rnn import *
from .sparse import *
from .transformer import *
from .upsampling import *

_FILES = (module, container, linear, flatten, activation, loss, conv, padding, pooling,
          normalization, dropout, sparse, rnn, attention, transformer, pixelshuffle, upsampling,
          distance)
__all__ = [name for f in _FILES for name in f.__all__]
