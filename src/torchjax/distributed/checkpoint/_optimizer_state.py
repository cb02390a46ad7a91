"""The optimizer side of torch.distributed.checkpoint.state_dict: an optimizer's state dict
keyed by the parameters' names (FQNs) instead of their positions, so it loads into another
parallelism or another number of processes, as PyTorch's.

{"state": {fqn: {"step": ..., "exp_avg": ...}}, "param_groups": [{..., "params": [fqn]}]};
the state of a sharded (DTensor) parameter is a DTensor of its layout, as PyTorch's FSDP2
optimizer state is (torchjax's optimizer keeps it as a tensor of the parameter's sharding).
"""

from __future__ import annotations

from ..._tensor import Tensor
from ..tensor._dtensor import DTensor, _same_layout

_STATE, _PG, _PARAMS = "state", "param_groups", "params"


def optimizer_tuple(optimizers) -> tuple:
    from ...optim.optimizer import Optimizer
    return (optimizers,) if isinstance(optimizers, Optimizer) else tuple(optimizers)


def init_state(optim) -> None:
    """PyTorch's: an optimizer that has taken no step takes one with zero gradients and a
    learning rate of 0, so its state exists (to be saved, or loaded into)."""
    if optim.state:
        return
    params = [p for g in optim.param_groups for p in g[_PARAMS]]
    if any(p.grad is not None for p in params):
        return
    from ... import _creation
    for p in params:
        if p.requires_grad:
            p.grad = _creation.zeros_like(p)
    lrs = []
    for g in optim.param_groups:
        if "lr" in g:
            lrs.append(g["lr"])
            g["lr"] = _creation.tensor(0.0) if isinstance(g["lr"], Tensor) else 0.0
    optim.step(closure=None)
    for g in optim.param_groups:
        if "lr" in g:
            g["lr"] = lrs.pop(0)
    optim.zero_grad(set_to_none=True)


def _names(model) -> dict:
    """id(parameter) -> its FQN in the model (the first name of a shared one)."""
    return {id(p): name for name, p in model.named_parameters()}


def _laid_out(value, param):
    """A state tensor of a DTensor parameter's shape as a DTensor of its layout (an alias)."""
    if (isinstance(param, DTensor) and isinstance(value, Tensor)
            and not isinstance(value, DTensor) and tuple(value.shape) == tuple(param.shape)):
        return _same_layout(Tensor.detach(value), param)
    return value


def get(model, optimizers, flatten: bool) -> dict:
    names = _names(model)
    out: dict = {_STATE: {}, _PG: []}
    for optim in optimizers:
        init_state(optim)
        osd = optim.state_dict()
        params = [p for g in optim.param_groups for p in g[_PARAMS]]
        fqn_of = {}
        for pid, p in enumerate(params):
            if id(p) not in names:
                raise RuntimeError(f"get_optimizer_state_dict: the optimizer's parameter {pid} "
                                   f"(shape {tuple(p.shape)}) is not a parameter of the model")
            fqn_of.setdefault(pid, names[id(p)])
        for pid, state in osd[_STATE].items():
            param = params[pid]
            out[_STATE][fqn_of[pid]] = {k: _laid_out(v, param) for k, v in state.items()}
        for group in osd[_PG]:
            out[_PG].append(dict(group, params=[fqn_of[pid] for pid in group[_PARAMS]]))
    return flatten_state(out) if flatten else out


def flatten_state(osd: dict) -> dict:
    """PyTorch's flat form: "state.<fqn>.<key>" and "param_groups.<fqn>.<key>"."""
    flat: dict = {}

    def walk(value, key):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{key}.{k}")
        elif isinstance(value, (Tensor, int, float)):
            flat[key] = value
        else:
            raise NotImplementedError(f"Flattening optimizer state_dict only supports tensor, "
                                      f"int, float, dict states now. Type is {type(value)}.")

    for fqn, state in osd[_STATE].items():
        walk(state, f"{_STATE}.{fqn}")
    for group in osd[_PG]:
        for fqn in group[_PARAMS]:
            for k, v in group.items():
                if k != _PARAMS:
                    flat[f"{_PG}.{fqn}.{k}"] = v
    return flat


def _nested(flat: dict, prefix: str) -> dict:
    out: dict = {}
    for key, value in flat.items():
        if key.startswith(prefix + "."):
            *path, last = key[len(prefix) + 1:].split(".")
            where = out
            for part in path:
                where = where.setdefault(part, {})
            where[last] = value
    return out


def _split(optim, osd: dict, names: dict, strict: bool) -> dict:
    """The part of a (nested or flat) FQN-keyed state dict that is this optimizer's, keyed
    by position as Optimizer.load_state_dict takes it."""
    flat = _STATE not in osd
    state, groups, pid = {}, [], 0
    for group in optim.param_groups:
        mine: dict = {_PARAMS: []}
        for p in group[_PARAMS]:
            fqn = names[id(p)]
            mine[_PARAMS].append(pid)
            if p.requires_grad:
                key = f"{_STATE}.{fqn}"
                found = (_nested(osd, key) or None) if flat else osd[_STATE].get(fqn)
                if found is not None:
                    state[pid] = {k: _placed(v, p) for k, v in found.items()}
                elif strict:
                    raise RuntimeError(
                        f"Missing optimizer state for parameter '{fqn}' in checkpoint. The "
                        f"parameter requires gradients but has no saved optimizer state. To "
                        f"load anyway, use StateDictOptions(strict=False).")
            pid += 1
        mine.update(_settings(osd, flat, group, [names[id(p)] for p in group[_PARAMS]]))
        groups.append(mine)
    return {_STATE: state, _PG: groups}


def _settings(osd, flat: bool, group: dict, fqns: list) -> dict:
    """The saved settings (lr, betas, ...) of the group holding these parameters: the
    loaded group's (nested form), or each of this group's settings by its first parameter's
    flat key; the group's own where the checkpoint has none."""
    out = {k: v for k, v in group.items() if k != _PARAMS}
    if flat:
        for k in out:
            for fqn in fqns:
                if f"{_PG}.{fqn}.{k}" in osd:
                    out[k] = osd[f"{_PG}.{fqn}.{k}"]
                    break
        return out
    for g in osd[_PG]:
        if any(fqn in g[_PARAMS] for fqn in fqns):
            return {k: v for k, v in g.items() if k != _PARAMS}
    return out


def _placed(value, param):
    """A loaded state value as the optimizer keeps it: a tensor of the parameter's shape on
    the parameter's sharding (a full value is laid out, a DTensor's array taken as it is)."""
    if not isinstance(value, Tensor):
        return value
    if isinstance(value, DTensor):
        value = Tensor._wrap(value._data)
    if isinstance(param, DTensor) and tuple(value.shape) == tuple(param.shape):
        from .._reshard import place_array
        value = Tensor._wrap(place_array(value._data, param._data.sharding))
    return value


def set_(model, optimizers, osd: dict, strict: bool) -> None:
    names = _names(model)
    for optim in optimizers:
        init_state(optim)
        for p in (p for g in optim.param_groups for p in g[_PARAMS]):
            if id(p) not in names:
                raise RuntimeError(f"set_optimizer_state_dict: an optimizer's parameter (shape "
                                   f"{tuple(p.shape)}) is not a parameter of the model")
        if not osd:
            continue
        if _STATE in osd and all(isinstance(k, int) for k in osd[_STATE]):
            optim.load_state_dict(osd)  # keyed by position already, as PyTorch lets it
        else:
            optim.load_state_dict(_split(optim, osd, names, strict))

