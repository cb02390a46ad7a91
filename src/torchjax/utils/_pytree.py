"""torch.utils._pytree: nested containers flattened to a list of leaves and a TreeSpec.

Private in PyTorch, but libraries import it (x-transformers, torch-einops-utils, Hugging
Face's): `tree_flatten`, `tree_unflatten`, `tree_map`, `tree_map_only`, `register_pytree_node`.
Its rules, which are not jax.tree_util's: tuple, list, dict (in insertion order, not sorted),
namedtuple, OrderedDict, defaultdict and deque are containers, and so are the classes
registered here; everything else is a leaf, None and tensors included.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "PyTree", "TreeSpec", "LeafSpec", "SequenceKey", "MappingKey", "GetAttrKey", "KeyEntry",
    "register_pytree_node", "register_dataclass", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_", "tree_map_with_path", "tree_map_only", "tree_map_only_",
    "map_only", "tree_all", "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf",
    "treespec_leaf", "treespec_tuple", "treespec_dict", "keystr", "key_get", "arg_tree_leaves",
    "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
]

PyTree = Any


class NodeDef(NamedTuple):
    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict = {}


# -- key paths ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = Any


def keystr(kp) -> str:
    """A key path as text: ['a'][0].x"""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# -- registration ---------------------------------------------------------------------------

def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None) -> None:
    """Make instances of `cls` containers: flatten_fn(node) -> (children, context),
    unflatten_fn(children, context) -> node."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None,
                          maybe_from_str_fn=None, *, serialized_type_name=None,
                          to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None) -> None:
    """The older private name (Hugging Face's code calls it)."""
    register_pytree_node(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn=flatten_with_keys_fn)


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None):
    """A dataclass as a container of its fields (field_names: those that are children; the
    others, but for drop_field_names, are kept in the context)."""
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"Class {cls} must be a dataclass")
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    drop = set(drop_field_names or ())
    children = [f for f in fields if f not in drop] if field_names is None else list(field_names)
    static = [f for f in fields if f not in children and f not in drop]

    def flatten(obj):
        return [getattr(obj, f) for f in children], [getattr(obj, f) for f in static]

    def unflatten(values, context):
        return cls(**dict(zip(children, values)), **dict(zip(static, context)))

    def with_keys(obj):
        return [(GetAttrKey(f), getattr(obj, f)) for f in children], [getattr(obj, f)
                                                                       for f in static]

    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=with_keys)
    return cls


def is_namedtuple_class(cls) -> bool:
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    """A namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _seq_keys(context, children):
    return [SequenceKey(i) for i in range(len(children))]


def _builtin(cls, flatten, unflatten, keys):
    """A built-in container; keys(context, children) are its children's key entries."""
    def with_keys(node):
        children, context = flatten(node)
        return list(zip(keys(context, children), children)), context

    SUPPORTED_NODES[cls] = NodeDef(cls, flatten, unflatten, with_keys)


def _mapping_keys(context, children):
    return [MappingKey(k) for k in context]


_builtin(tuple, lambda t: (list(t), None), lambda ch, ctx: tuple(ch), _seq_keys)
_builtin(list, lambda t: (list(t), None), lambda ch, ctx: list(ch), _seq_keys)
_builtin(dict, lambda d: (list(d.values()), list(d.keys())),
         lambda ch, ctx: dict(zip(ctx, ch)), _mapping_keys)
_builtin(namedtuple, lambda t: (list(t), type(t)), lambda ch, ctx: ctx(*ch),
         lambda ctx, ch: [GetAttrKey(f) for f in ctx._fields])
_builtin(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
         lambda ch, ctx: OrderedDict(zip(ctx, ch)), _mapping_keys)
_builtin(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
         lambda ch, ctx: defaultdict(ctx[0], zip(ctx[1], ch)),
         lambda ctx, ch: _mapping_keys(ctx[1], ch))
_builtin(deque, lambda d: (list(d), d.maxlen), lambda ch, ctx: deque(ch, maxlen=ctx), _seq_keys)


def _node_type(tree):
    if is_namedtuple_instance(tree):
        return namedtuple
    return type(tree)


def tree_is_leaf(tree, is_leaf=None) -> bool:
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# -- TreeSpec -------------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: its node type, the node's context and its children's
    specs (a leaf: type None)."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self._children = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
        self.num_leaves = (1 if type is None and not self._children
                           else sum(c.num_leaves for c in self._children))
        self.num_children = len(self._children)

    @property
    def children_specs(self):
        return self._children

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type == other.type and self.context == other.context
                and self._children == other._children)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self._children)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = self.type.__name__
        text = f"TreeSpec({name}, {self.context}, ["
        if self._children:
            indent += 2
            text += self._children[0].__repr__(indent)
            text += "," if self.num_children > 1 else ""
            text += ",".join("\n" + " " * indent + c.__repr__(indent)
                             for c in self._children[1:])
        return text + "])"

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self}).")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.is_leaf():
            return next(it)
        children = [c._build(it) for c in self._children]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (tree_map's other trees)."""
        out = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out):
        if self.is_leaf():
            out.append(tree)
            return
        kind = _node_type(tree)
        if kind is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {kind!r}.")
        children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                             f"{len(children)}.")
        if context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        for spec, child in zip(self._children, children):
            spec._up_to(child, out)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def treespec_leaf() -> TreeSpec:
    return _LEAF


def treespec_tuple(iterable=()) -> TreeSpec:
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping=(), **kwargs) -> TreeSpec:
    d = dict(mapping, **kwargs)
    return TreeSpec(dict, list(d.keys()), list(d.values()))


# -- flatten, unflatten, map ----------------------------------------------------------------

def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF
    node = SUPPORTED_NODES[_node_type(tree)]
    children, context = node.flatten_fn(tree)
    return TreeSpec(node.type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """(the leaves, left to right, and the TreeSpec to rebuild the tree from them)."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)
    for c in children:
        yield from tree_iter(c, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs) -> list:
    return tree_leaves(args) + tree_leaves(kwargs)


def tree_map(func, tree, *rests, is_leaf=None):
    """func applied to each leaf (and the matching subtrees of `rests`), in the tree's shape."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """func applied to each leaf for its effect; returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for args in zip(leaves, *others):
        func(*args)
    return tree


def _predicate(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)) or (
            type(type_or_types_or_pred).__name__ == "UnionType"):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def map_only(type_or_types_or_pred):
    """A decorator: func applied to the leaves that are of these types (or pass the
    predicate), the others left as they are."""
    pred = _predicate(type_or_types_or_pred)

    def wrap(func):
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrap


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# -- key paths ------------------------------------------------------------------------------

def _with_path(tree, is_leaf, path, out):
    """Appends (key path, leaf) of every leaf to `out`; returns the tree's TreeSpec (one walk
    for both)."""
    if tree_is_leaf(tree, is_leaf):
        out.append((path, tree))
        return _LEAF
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node.type}. Please "
                         "pass a flatten_with_keys_fn argument to register_pytree_node.")
    pairs, context = node.flatten_with_keys_fn(tree)
    return TreeSpec(node.type, context,
                    [_with_path(child, is_leaf, (*path, k), out) for k, child in pairs])


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], TreeSpec)."""
    out = []
    spec = _with_path(tree, is_leaf, (), out)
    return out, spec


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(p, x, *xs) for (p, x), *xs in zip(pairs, *others))
