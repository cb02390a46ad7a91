"""torchjax.quasirandom: SobolEngine; named, not implemented.

`import torch.quasirandom` works, and each of its names raises AttributeError
"torch.quasirandom.<name> is not supported by torchjax: SobolEngine is not implemented
(scipy.stats.qmc.Sobol draws Sobol sequences)".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'SobolEngine is not implemented (scipy.stats.qmc.Sobol draws Sobol sequences)')
