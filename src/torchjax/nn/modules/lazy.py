"""torch.nn.modules.lazy's name; the mixin lives in linear.py with LazyLinear."""

from .linear import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
