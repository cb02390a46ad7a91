"""torchjax.torch_version: torch.torch_version.TorchVersion, the class of torch.__version__."""

from .version import TorchVersion, __version__

__all__ = ["TorchVersion", "__version__"]
