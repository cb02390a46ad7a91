"""Optimizer base: param_groups, state, zero_grad, and one jitted update for all parameters."""

from __future__ import annotations

from collections import defaultdict

from .._tensor import Tensor


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Holds param_groups (dicts of params and hyper-parameters) and per-parameter state."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state: dict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {k}")
            param_group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad._data = p._grad._data * 0

    def step(self, closure=None):
        raise NotImplementedError

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"
