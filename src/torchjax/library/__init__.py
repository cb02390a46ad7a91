"""torchjax.library: registering custom operators with PyTorch's dispatcher; named, not
implemented.

`import torch.library` works, and each of its names raises AttributeError "torch.library.<name>
is not supported by torchjax: torchjax has no operator dispatcher to register with; call the
Python function directly (torch.autograd.Function for a custom gradient)".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no operator dispatcher to register with; call the Python function'
    ' directly (torch.autograd.Function for a custom gradient)')
