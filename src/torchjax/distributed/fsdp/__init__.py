"""torchjax.distributed.fsdp: FSDP2's fully_shard on JAX shardings."""

from ._fully_shard import (
                           CPUOffloadPolicy,
                           FSDPModule,
                           MixedPrecisionPolicy,
                           OffloadPolicy,
                           fully_shard,
)

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]
