"""PyTorch's torch.utils.data._utils paths, which its documentation shows for custom collation
(`from torch.utils.data._utils.collate import collate, default_collate_fn_map`)."""

from . import collate, worker

__all__ = ["collate", "worker"]
