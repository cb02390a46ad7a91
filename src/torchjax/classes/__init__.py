"""torchjax.classes: TorchScript custom classes registered from C++; named, not implemented.

`import torch.classes` works, and each of its names raises AttributeError "torch.classes.<name>
is not supported by torchjax: torchjax does not load TorchScript custom classes".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax does not load TorchScript custom classes')
