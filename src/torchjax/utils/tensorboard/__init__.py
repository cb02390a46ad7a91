"""torchjax.utils.tensorboard: SummaryWriter, for scalars, histograms and text.

It writes TensorBoard event files with the `tensorboard` package, which torchjax does not
require: without it, importing this module raises ImportError (as PyTorch's does).
"""

try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above: the "
                      "tensorboard package is not installed (pip install tensorboard)") from e

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
