"""torchjax.cpp: PyTorch's C++ frontend bindings; named, not implemented.

`import torch.cpp` works, and each of its names raises AttributeError "torch.cpp.<name> is not
supported by torchjax: torchjax has no C++ frontend".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no C++ frontend')
