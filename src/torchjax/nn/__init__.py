"""torchjax.nn: modules, parameters, functional forms and initialisers."""

from . import functional, init
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

__all__ = ["functional", "init", "Parameter", "Buffer", *_modules_all]
