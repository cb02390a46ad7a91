"""torchjax.nn: modules, parameters, functional forms and initialisers."""

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["functional", "init", "parallel", "utils", "Parameter", "Buffer",
           "UninitializedParameter", "UninitializedBuffer", "DataParallel", *_modules_all]
