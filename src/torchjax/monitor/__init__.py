"""torchjax.monitor: PyTorch's C++ event and stat counters; named, not implemented.

`import torch.monitor` works, and each of its names raises AttributeError "torch.monitor.<name>
is not supported by torchjax: torchjax has no C++ counters to report".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no C++ counters to report')
