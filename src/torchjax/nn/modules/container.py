"""Containers: Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict."""

from __future__ import annotations

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]

import operator
import warnings
from collections import OrderedDict
from collections import abc as container_abcs
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _typename


def _addindent(s: str, num_spaces: int) -> str:
    # ModuleList's repr indents blank lines too (it has its own copy of the helper in PyTorch)
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


def _class_str(obj) -> str:
    """str(type(obj)), with torchjax's classes named as PyTorch's."""
    return f"<class '{_typename(type(obj))}'>"


def _abs_index(n: int, idx) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _renumber(module: Module) -> None:
    """Rename the children 0..n-1 after a deletion, keeping their order."""
    module._modules = OrderedDict(
        (str(i), m) for i, m in enumerate(module._modules.values()))


class Container(Module):
    """Deprecated: a Module whose children are given as keyword arguments."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Runs its modules in order: Sequential(*modules) or Sequential(OrderedDict)."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key_at(self, idx) -> str:
        keys = self._modules.keys()
        return next(islice(keys, _abs_index(len(self), idx), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._key_at(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{_class_str(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def pop(self, key):
        """Removes the submodule at `key` (an index) and returns it."""
        v = self[key]
        del self[key]
        return v

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{_class_str(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other) -> None:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {_class_str(self)} and "
                            f"{_class_str(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for "
                             f"{_class_str(self)}")

    def __mul__(self, other: int) -> Sequential:
        self._check_factor(other)
        combined = Sequential()
        for offset, module in enumerate(m for _ in range(other) for m in self):
            combined.add_module(str(offset), module)
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int):
        self._check_factor(other)
        n = len(self)
        for offset in range(n, n * other, n):
            for i in range(n):
                self.add_module(str(i + offset), self._modules[str(i)])
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, input):
        """Applies the Sequential layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module):
        """Adds `module` at the end and returns this Sequential."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module):
        """Inserts `module` before position `index` (negative counts from the end) and returns this
        Sequential.
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: <class '{_typename(Module)}'>")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """Appends every module of `sequential` (any iterable of modules) and returns this
        Sequential.
        """
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of modules, registered as children named "0", "1", ..."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _abs_key(self, idx) -> str:
        return str(_abs_index(len(self), idx))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._abs_key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._abs_key(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._abs_key(idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """Runs of identical children print once, as "(i-j): n x <repr>"."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            if start == end:
                local = f"({start}): {r}"
            else:
                local = f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Inserts `module` before position `index`, shifting the later entries up."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module):
        """Adds `module` at the end and returns this ModuleList."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Removes the module at index `key` and returns it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Appends every module of the iterable `modules` and returns this ModuleList."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _pairs(what: str, items):
    """The (key, value) pairs of an update() argument that is a sequence of pairs."""
    for j, p in enumerate(items):
        if not isinstance(p, container_abcs.Iterable):
            raise TypeError(f"{what} update sequence element #{j} should be Iterable; is"
                            + type(p).__name__)
        if not len(p) == 2:
            raise ValueError(f"{what} update sequence element #{j} has length {len(p)}; 2 is "
                             "required")
        yield p[0], p[1]


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Removes every entry."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Removes the module under `key` and returns it."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """The (key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules) -> None:
        """Adds or replaces entries from a mapping or an iterable of (key, module) pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            pairs = modules.items()
        else:
            pairs = _pairs("ModuleDict", modules)
        for key, module in pairs:
            self[key] = module


def _entry_repr(k, p, type_name) -> str:
    """One line of ParameterList/ParameterDict's repr."""
    if not isinstance(p, Tensor):
        return f"  ({k}): Object of type: {type(p).__name__}"
    size_str = "x".join(str(size) for size in p.size())
    device_str = f" ({p.device})" if p.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"  ({k}): {kind} containing: [{type_name(p)} of size {size_str}{device_str}]"


class ParameterList(Module):
    """A list of parameters (plain tensors are made Parameters) registered as "0", "1", ..."""

    def __init__(self, values=None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _abs_key(self, idx) -> str:
        return str(_abs_index(len(self), idx))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._abs_key(idx))

    def __setitem__(self, idx: int, param) -> None:
        key = self._abs_key(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        """Adds `value` at the end (a tensor that is not a Parameter is wrapped in one) and returns
        this ParameterList.
        """
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """Appends every value of the iterable `values` and returns this ParameterList."""
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """The settings ParameterList shows inside its `repr`, such as its sizes and flags."""
        return "\n".join(_entry_repr(k, p, lambda t: str(t.dtype)) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are made Parameters) under string keys."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}'). Open an issue on "
                            "github if you need non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters (the tensors are shared, not copied)."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default=None):
        """Returns the entry under `key`, first storing `default` there if the key is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Removes every entry."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str):
        """Removes the entry under `key` and returns it."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Removes the most recently inserted entry and returns it as a (key, value) pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None  # del self[k] below removes it again
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        """The entry under `key`, or `default` when the key is absent."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> ParameterDict:
        """A new ParameterDict with every key in `keys` mapped to `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """The (key, value) pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Adds or replaces entries from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = parameters.items()
        elif isinstance(parameters, container_abcs.Mapping):
            pairs = sorted(parameters.items())  # a plain mapping is taken in key order
        else:
            pairs = _pairs("ParameterDict", parameters)
        for key, parameter in pairs:
            self[key] = parameter

    def extra_repr(self) -> str:
        """The settings ParameterDict shows inside its `repr`, such as its sizes and flags."""
        return "\n".join(_entry_repr(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict):
        self.update(other)
        return self
