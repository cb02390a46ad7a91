"""torch.fx.node: Node (one operation of a Graph), map_arg and map_aggregate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._side_effects import has_side_effect

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target", "has_side_effect"]

Target = Any
Argument = Any

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")


def _get_qualified_name(func) -> str:
    """PyTorch's helper: 'getattr' for a builtin, '_operator.add', 'torch.relu', ..."""
    import builtins

    from ._names import qualified_name
    name = getattr(func, "__name__", "")
    if getattr(builtins, name, None) is func:
        return name
    if getattr(func, "__module__", None) == "_operator":
        return f"_operator.{name}"
    return qualified_name(func)


def map_aggregate(a, fn: Callable):
    """Applies fn to each leaf of a nest of tuples, lists, dicts and slices (named tuples kept)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn: Callable):
    """Applies fn to each Node in a nest of arguments (other leaves are kept)."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _input_nodes(args, kwargs) -> dict:
    found: dict = {}
    map_arg((args, kwargs), lambda n: found.setdefault(n))
    return found


class Node:
    """One operation of a Graph: `op` is what kind, `target` what it calls or names.

    The Graph keeps its nodes in a doubly linked list (`prev`/`next`, with the graph's root
    node as sentinel), so inserting and erasing are O(1) while `graph.nodes` iterates in order.
    """

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict,
                 return_type=None):
        if op not in _OPS:
            raise ValueError(f"Node op must be one of {_OPS[:-1]}, got {op!r}")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and \
                not isinstance(target, str):
            raise ValueError(f"Node target must be a string for op {op!r}, got {target!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target).__name__} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # -- arguments and the use lists they imply ------------------------------------------
    def _update_args_kwargs(self, args, kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = map_aggregate(tuple(args), lambda x: x)
        self._kwargs = dict(map_aggregate(dict(kwargs), lambda x: x))
        self._input_nodes = _input_nodes(self._args, self._kwargs)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old: Node, new: Node) -> None:
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb=lambda user: True,
                              *, propagate_meta: bool = False) -> list:
        """Makes every user of this node use `replace_with`; returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # -- position in the graph's list ----------------------------------------------------
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    def prepend(self, x: Node) -> None:
        """Puts x just before this node (moving it if it is already in the graph)."""
        if x is self:
            raise AssertionError("Cannot prepend self")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Puts x just after this node."""
        self._next.prepend(x)

    # -- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        return self.name

    def _pretty_print_target(self, target) -> str:
        from ._names import qualified_name
        if isinstance(target, str):
            return target
        return qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node's line in print(graph); None for the graph's root."""
        from ._names import format_arg
        typ = f"{_type_repr(self.type)} " if self.type is not None else ""
        head = f"%{self.name} : {typ}[num_users={len(self.users)}] = "
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}get_attr[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"{head}{self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {format_arg(self.args)}, kwargs = {format_arg(self.kwargs)})")

    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether eliminate_dead_code must keep this node though nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            from ._side_effects import is_side_effectful
            return is_side_effectful(self.target, impure_random)
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return bool(getattr(mod.get_submodule(self.target), "_is_impure", False))
        return False

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")


def _type_repr(t) -> str:
    from ._names import torch_name
    name = torch_name(t) if isinstance(t, type) else None
    if name is not None:
        return name
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        mod = t.__module__
        if mod.startswith("torchjax"):
            mod = "torch" + mod[len("torchjax"):]
        return f"{mod}.{t.__qualname__}"
    return repr(t)
