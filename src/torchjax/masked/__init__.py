"""torchjax.masked: masked tensors and the masked reductions (masked.sum, ...); named, not
implemented.

`import torch.masked` works, and each of its names raises AttributeError "torch.masked.<name> is
not supported by torchjax: masked tensors are not implemented; use torch.where with a boolean
mask".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'masked tensors are not implemented; use torch.where with a boolean mask')
