"""torchjax.export: exporting a model as an ExportedProgram; named, not implemented.

`import torch.export` works, and each of its names raises AttributeError "torch.export.<name> is
not supported by torchjax: there is no ExportedProgram; export a pure JAX function with
torchjax.func.functionalize and jax.export".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'there is no ExportedProgram; export a pure JAX function with'
    ' torchjax.func.functionalize and jax.export')
