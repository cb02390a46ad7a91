"""torch.distributed.tensor.placement_types: the placements."""

from ._placements import Partial, Placement, Replicate, Shard

__all__ = ["Placement", "Shard", "Replicate", "Partial"]
