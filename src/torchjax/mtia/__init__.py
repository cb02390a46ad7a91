"""torchjax.mtia: Meta's MTIA accelerator; named, not implemented.

`import torch.mtia` works, and each of its names raises AttributeError "torch.mtia.<name> is not
supported by torchjax: torchjax has no MTIA backend".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no MTIA backend')
