"""Names in FX graphs: node names, the printed name of a target, and how arguments print.

A node's name comes from its target (`add`, `relu`, `seq_0`, `sum_1`: `sum` is a builtin) and
is unique in its Graph; a torchjax function prints under its torch name (`torch.relu`,
`torch.nn.functional.gelu`) by finding it in the public namespaces torchjax stands in for.
"""

from __future__ import annotations

import builtins
import keyword
import operator
import re
import sys

_ILLEGAL_CHAR = re.compile(r"[^0-9a-zA-Z_]+")
_NAME_SUFFIX = re.compile(r"(.*)_(\d+)$")
# names the generated code itself uses: a node named after one would shadow it
_RESERVED = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}
# public namespaces (torch's top level last) whose functions print as torch.X.name
NAMESPACES = ("torchjax.nn.functional", "torchjax.special", "torchjax.linalg", "torchjax.fft",
              "torchjax")


def snake_case(s: str) -> str:
    """CamelCase to snake_case the way FX names nodes (`ReLU` -> `re_l_u` is not wanted:
    only a lower-case letter or digit followed by an upper-case one gets the underscore)."""
    out = []
    prev_lower = False
    for c in s:
        if c.isupper() and prev_lower:
            out.append("_")
        out.append(c.lower())
        prev_lower = c.islower()
    return "".join(out)


def _is_magic(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def target_to_str(target) -> str:
    """The name a new node gets from its target before it is made unique."""
    if callable(target) and not isinstance(target, str):
        op = getattr(target, "__name__", None) or type(target).__name__
    else:
        op = str(target)
    if _is_magic(op):
        op = op[2:-2]
    return snake_case(op)


class Namespace:
    """Unique, legal Python names for the nodes of one Graph."""

    def __init__(self):
        self._obj_to_name: dict = {}
        self._used: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj=None) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _ILLEGAL_CHAR.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        m = _NAME_SUFFIX.match(candidate)
        if m is None:
            base, num = candidate, None
        else:
            base, num = m.group(1), int(m.group(2))
            candidate = f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used or self._illegal(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def _illegal(self, name: str, obj) -> bool:
        if name in keyword.kwlist or name in _RESERVED:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        return False

    def associate_name_with_obj(self, name: str, obj) -> None:
        self._obj_to_name[obj] = name

    def remove(self, name: str) -> None:
        self._used.discard(name)


_public_names: dict = {}   # id(obj) -> (torch name, obj)


def _index_namespaces() -> None:
    # torch's top level first: an object there too (torch.Tensor, torch.conv2d, which
    # F.conv2d is) prints under it; the others under their own namespace
    seen: set = set()
    for modname in reversed(NAMESPACES):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        prefix = "torch" + modname[len("torchjax"):] + "."
        for attr, obj in list(vars(mod).items()):
            if callable(obj) and not attr.startswith("__") and id(obj) not in seen:
                seen.add(id(obj))
                _public_names[id(obj)] = (prefix + attr, obj)


def torch_name(obj) -> str | None:
    """'torch.nn.functional.relu' for the object torchjax.nn.functional.relu is, else None."""
    for attempt in (0, 1):
        found = _public_names.get(id(obj))
        if found is not None and found[1] is obj:
            return found[0]
        if attempt == 0:
            _index_namespaces()
    return None


def qualified_name(func) -> str:
    """The dotted name a function target prints under (operator.add, torch.relu, ...)."""
    if getattr(func, "__module__", None) == "_operator" or \
            getattr(operator, getattr(func, "__name__", ""), None) is func:
        return f"operator.{func.__name__}"
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return f"builtins.{func.__name__}"
    name = torch_name(func)
    if name is not None:
        return name
    mod = getattr(func, "__module__", None) or "__main__"
    if mod.startswith("torchjax"):
        mod = "torch" + mod[len("torchjax"):]
    return f"{mod}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}"


def format_arg(arg) -> str:
    """How print(graph) shows an argument: %node for nodes, dict keys unquoted."""
    from .node import Node
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)
