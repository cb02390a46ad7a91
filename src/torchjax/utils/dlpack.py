"""torchjax.utils.dlpack (torch.utils.dlpack): from_dlpack and to_dlpack."""

from .._dlpack import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
