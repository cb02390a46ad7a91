"""torchjax.nested: nested (ragged) tensors; named, not implemented.

`import torch.nested` works, and each of its names raises AttributeError "torch.nested.<name> is
not supported by torchjax: nested tensors are not implemented; pad the sequences
(torch.nn.utils.rnn.pad_sequence) and pass a mask".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'nested tensors are not implemented; pad the sequences'
    ' (torch.nn.utils.rnn.pad_sequence) and pass a mask')
