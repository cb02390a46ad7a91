"""torch.distributed.checkpoint.state_dict: a model's state dict as FSDP2 and tensor-parallel
users save it, sharded or full.

`get_model_state_dict(model)` is the model's state dict (a fully_shard or parallelize_module
model's holds DTensors, as `model.state_dict()` does); with
`StateDictOptions(full_state_dict=True)` each DTensor is its full value as a plain tensor, the
form a single-device model loads. `set_model_state_dict` loads either form back (a full
value is copied into the sharded parameter and laid out again). A DistributedDataParallel or
DataParallel wrapper is looked through: its keys have no `module.` prefix, as PyTorch's.
The optimizer's side (get/set_optimizer_state_dict, get/set_state_dict) is not provided.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tensor._dtensor import DTensor

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict",
           "get_optimizer_state_dict", "set_optimizer_state_dict", "get_state_dict",
           "set_state_dict"]


@dataclass
class StateDictOptions:
    """How get_model_state_dict and set_model_state_dict treat the state (PyTorch's fields)."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options, submodules) -> StateDictOptions:
    options = StateDictOptions() if options is None else options
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict(submodules=) is not supported by "
                                  "torchjax (PyTorch deprecates it): select the keys instead")
    if options.broadcast_from_rank0:
        raise NotImplementedError("StateDictOptions(broadcast_from_rank0=True) is not "
                                  "supported by torchjax: load the full state on every rank")
    if options.dsd_fqn_modifiers != "_fqn_modifiers":
        raise NotImplementedError("StateDictOptions(dsd_fqn_modifiers=) is not supported by "
                                  "torchjax")
    return options


def _unwrapped(model):
    """The module whose names the state dict uses: a data-parallel wrapper's module."""
    from .._data_parallel import DataParallel, DistributedDataParallel
    while isinstance(model, (DistributedDataParallel, DataParallel)):
        model = model.module
    return model


def get_model_state_dict(model, *, submodules=None, options=None) -> dict:
    """The model's state dict: DTensors where its parameters are (sharded), or with
    `full_state_dict` each one's full value. With `cpu_offload` too the values are on the CPU,
    and, as PyTorch's, only rank 0 gets them (the others an empty dict)."""
    options = _options(options, submodules)
    module = _unwrapped(model)
    sd = module.state_dict()
    if options.ignore_frozen_params:
        for name, p in module.named_parameters():
            if not p.requires_grad:
                sd.pop(name, None)
    if options.full_state_dict:
        if options.cpu_offload:
            from .. import _process_group
            if _process_group.is_initialized() and _process_group.get_rank() != 0:
                return {}
        for k, v in sd.items():
            if isinstance(v, DTensor):
                sd[k] = v.full_tensor()
    if options.cpu_offload:
        for k, v in sd.items():
            if hasattr(v, "cpu"):
                sd[k] = v.cpu()
    return sd


def set_model_state_dict(model, model_state_dict: dict, *, options=None):
    """Loads a state dict of either form into the model (`strict` as load_state_dict's);
    returns load_state_dict's missing and unexpected keys."""
    options = _options(options, None)
    return _unwrapped(model).load_state_dict(model_state_dict, strict=options.strict)


def _optimizer_side(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"torch.distributed.checkpoint.state_dict.{name} is not supported by torchjax: "
            "use optimizer.state_dict() / load_state_dict() (its sharded state is kept as "
            "it is) with get_model_state_dict / set_model_state_dict for the model")
    refuse.__name__ = name
    return refuse


get_optimizer_state_dict = _optimizer_side("get_optimizer_state_dict")
set_optimizer_state_dict = _optimizer_side("set_optimizer_state_dict")
get_state_dict = _optimizer_side("get_state_dict")
set_state_dict = _optimizer_side("set_state_dict")
