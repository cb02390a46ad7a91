"""torchjax.package: PackageExporter / PackageImporter archives; named, not implemented.

`import torch.package` works, and each of its names raises AttributeError "torch.package.<name>
is not supported by torchjax: torch.package archives are not implemented; save a state_dict with
torch.save".
"""

from .._unsupported_module import unsupported_getattr

__all__: list = []
__getattr__ = unsupported_getattr(
    __name__,
    'torch.package archives are not implemented; save a state_dict with torch.save')
