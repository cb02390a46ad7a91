"""torch.distributed.checkpoint.default_planner: the planners' settings torchjax honours (its
save and load plans are fixed: see state_dict_saver and state_dict_loader)."""

from __future__ import annotations

__all__ = ["DefaultSavePlanner", "DefaultLoadPlanner"]


class DefaultSavePlanner:
    """Saves every key of the flattened state dict, each piece once."""

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank: bool = False,
                 enable_plan_caching: bool = False):
        if not flatten_state_dict:
            raise NotImplementedError("DefaultSavePlanner(flatten_state_dict=False) is not "
                                      "supported by torchjax")


class DefaultLoadPlanner:
    """Loads every key of the target state dict; `allow_partial_load` lets keys the
    checkpoint lacks keep their values (otherwise PyTorch's "Missing key" error)."""

    def __init__(self, flatten_state_dict: bool = True, flatten_sharded_tensors: bool = True,
                 allow_partial_load: bool = False):
        if not flatten_state_dict:
            raise NotImplementedError("DefaultLoadPlanner(flatten_state_dict=False) is not "
                                      "supported by torchjax")
        self.allow_partial_load = allow_partial_load
