"""torch.distributed.checkpoint.state_dict: a model's state dict as FSDP2 and tensor-parallel
users save it, sharded or full.

`get_model_state_dict(model)` is the model's state dict (a fully_shard or parallelize_module
model's holds DTensors, as `model.state_dict()` does); with
`StateDictOptions(full_state_dict=True)` each DTensor is its full value as a plain tensor, the
form a single-device model loads. `set_model_state_dict` loads either form back (a full
value is copied into the sharded parameter and laid out again). A DistributedDataParallel or
DataParallel wrapper is looked through: its keys have no `module.` prefix, as PyTorch's.

`get_optimizer_state_dict(model, optimizers)` is the optimizers' state keyed by the
parameters' FQNs (an optimizer that has taken no step takes one with zero gradients and lr 0
first, as PyTorch's does, so its state exists); `full_state_dict`, `cpu_offload` and
`flatten_optimizer_state_dict` as for the model; `set_optimizer_state_dict` loads either form
(a full value is laid out on its parameter's sharding), `strict` refusing a parameter with no
saved state. `get_state_dict` / `set_state_dict` do both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tensor._dtensor import DTensor
from . import _optimizer_state

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


def _full_or_cpu(value, options: StateDictOptions):
    """`full_state_dict`: each DTensor's full value; `cpu_offload`: tensors on the CPU (through
    dicts, lists and tuples, as PyTorch's)."""
    if isinstance(value, dict):
        return {k: _full_or_cpu(v, options) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_full_or_cpu(v, options) for v in value)
    if options.full_state_dict and isinstance(value, DTensor):
        value = value.full_tensor()
    if options.cpu_offload and hasattr(value, "cpu"):
        value = value.cpu()
    return value


def _rank_zero_only(options: StateDictOptions) -> bool:
    # full values on the CPU go to rank 0 only, as PyTorch's: the others get {}
    if not (options.full_state_dict and options.cpu_offload):
        return False
    from .. import _process_group
    return _process_group.is_initialized() and _process_group.get_rank() != 0


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
    if _rank_zero_only(options):
        return {}
    for k, v in sd.items():
        sd[k] = _full_or_cpu(v, options)
    return sd


def set_model_state_dict(model, model_state_dict: dict, *, options=None):
    """Loads a state dict of either form into the model (`strict` as load_state_dict's);
    returns load_state_dict's missing and unexpected keys."""
    options = _options(options, None)
    return _unwrapped(model).load_state_dict(model_state_dict, strict=options.strict)


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None) -> dict:
    """The optimizers' state dict keyed by parameter FQNs: {"state": {fqn: {...}},
    "param_groups": [{..., "params": [fqn, ...]}]} (flat keys with
    `flatten_optimizer_state_dict`)."""
    options = _options(options, submodules)
    optimizers = _optimizer_state.optimizer_tuple(optimizers)
    if not optimizers:
        raise RuntimeError("Optimizers are not passed in but optim_only is set to True.")
    osd = _optimizer_state.get(_unwrapped(model), optimizers,
                               options.flatten_optimizer_state_dict)
    if _rank_zero_only(options):
        return {}
    return _full_or_cpu(osd, options)


def set_optimizer_state_dict(model, optimizers, optim_state_dict: dict, *,
                             options=None) -> None:
    """Loads an FQN-keyed optimizer state dict (sharded, full or flat) into the optimizers."""
    options = _options(options, None)
    optimizers = _optimizer_state.optimizer_tuple(optimizers)
    if not optimizers:
        raise RuntimeError("Optimizers are not passed in but optim_only is set to True.")
    _check_not_empty(optim_state_dict, options)
    _optimizer_state.set_(_unwrapped(model), optimizers, optim_state_dict, options.strict)


def _check_not_empty(optim_state_dict, options) -> None:
    if not optim_state_dict and not (options.cpu_offload and options.full_state_dict):
        raise RuntimeError(f"The option indicates that model state_dict is required to save, "
                           f"or load but optim state_dict is empty. {optim_state_dict}")


def get_state_dict(model, optimizers, *, submodules=None, options=None) -> tuple:
    """(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules,
                                     options=options))


def set_state_dict(model, optimizers, *, model_state_dict: dict, optim_state_dict: dict,
                   options=None):
    """Loads the optimizers' state, then the model's; returns the model's missing and
    unexpected keys."""
    opts = _options(options, None)
    _check_not_empty(optim_state_dict, opts)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return set_model_state_dict(model, model_state_dict, options=options)
