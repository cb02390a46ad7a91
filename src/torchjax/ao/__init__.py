"""torchjax.ao: quantization and pruning (torch.ao.quantization, torch.ao.nn, torch.ao.pruning);
named, not implemented.

`import torch.ao` works, and each of its names raises AttributeError "torch.ao.<name> is not
supported by torchjax: quantization is not supported by torchjax".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'quantization is not supported by torchjax')
