"""torchjax.quantization: the older name of torch.ao.quantization; named, not implemented.

`import torch.quantization` works, and each of its names raises AttributeError
"torch.quantization.<name> is not supported by torchjax: quantization is not supported by
torchjax".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'quantization is not supported by torchjax')
