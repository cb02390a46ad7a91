"""torch.nn.modules.batchnorm's names (scripts test `isinstance(m, _BatchNorm)` and list the
classes for torch.load's safe_globals); the classes live in normalization.py."""

from .normalization import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    SyncBatchNorm,
    _BatchNorm,
    _NormBase,
)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]
