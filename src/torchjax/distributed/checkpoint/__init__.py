"""torchjax.distributed.checkpoint: the state-dict helpers of PyTorch's distributed
checkpointing (`state_dict`: a model's state dict sharded or full, and loading either). The
checkpoint writers (`save`, `load` with their storage layouts) are not provided: a sharded
model's state dict goes through torchjax.save/load."""

from . import state_dict

__all__ = ["state_dict"]
