"""torchjax.ops: PyTorch's operator registry (torch.ops.aten.add, torch.ops.load_library, ...);
named, not implemented.

`import torch.ops` works, and each of its names raises AttributeError "torch.ops.<name> is not
supported by torchjax: torchjax has no operator registry or C++ extension loading; call the
torch function (torch.add) instead".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no operator registry or C++ extension loading; call the torch'
    ' function (torch.add) instead')
