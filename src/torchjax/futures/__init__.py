"""torchjax.futures: torch.futures.Future, the results of RPC and torch.jit.fork; named, not
implemented.

`import torch.futures` works, and each of its names raises AttributeError "torch.futures.<name>
is not supported by torchjax: torchjax has no RPC; torch.jit.fork runs the function at once and
returns its result".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torchjax has no RPC; torch.jit.fork runs the function at once and returns its'
    ' result')
