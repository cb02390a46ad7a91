"""torchjax.optim: optimizers whose update math comes from optax."""

from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD"]
