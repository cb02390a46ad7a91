"""A nested state dict as PyTorch's distributed checkpoint flattens it: one key per leaf,
the path's parts joined by dots ({"model": {"w": t}} -> "model.w"); a list is walked into (its
indices are parts of the path) only when it holds tensors or dicts, otherwise it is one leaf."""

from __future__ import annotations

from collections.abc import Mapping

from ..._tensor import Tensor


def _terminal(value) -> bool:
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    return not any(isinstance(v, Tensor) or (isinstance(v, (Mapping, list)) and not _terminal(v))
                   for v in value)


def flatten(state_dict: dict) -> tuple[dict, dict]:
    """({dotted key: leaf}, {dotted key: path}) of a nested state dict."""
    flat, paths = {}, {}

    def walk(path, value):
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(path + (str(k),), v)
        elif not _terminal(value) and isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(path + (i,), v)
        else:
            key = ".".join(map(str, path))
            if key in flat:
                raise ValueError(f"duplicated flatten key {key}")
            flat[key] = value
            paths[key] = path

    for k, v in state_dict.items():
        walk((str(k),), v)
    return flat, paths


def set_element(root: dict, path: tuple, value) -> None:
    """Puts `value` at `path` of the nested dict (its keys matched as the strings they were
    flattened to)."""
    where = root
    for part in path[:-1]:
        where = where[_key(where, part)]
    where[_key(where, path[-1])] = value


def _key(container, part):
    if isinstance(container, Mapping):
        for k in container:
            if str(k) == part:
                return k
        return part
    return part
