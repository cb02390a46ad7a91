"""How torchjax's program cache names a program (_programs.py): `describe` gives an exact,
process-independent text for a value that picks a program, or raises Uncacheable. Split out
of _programs.py (re-exported there)."""

from __future__ import annotations

import hashlib


class Uncacheable(Exception):
    """A value the key cannot name exactly: the program runs as a plain jax.jit."""


# -- naming a program --------------------------------------------------------------------------

_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def describe(v) -> str:
    """An exact, process-independent text for a value that picks a program; Uncacheable when
    there is none. Floats by repr (round-trips exactly, keeps -0.0 and nan apart)."""
    t = type(v)
    if t in _PLAIN:
        return f"{t.__name__}:{v!r}"
    if t is tuple or t is list:
        return f"{t.__name__}(" + ",".join(describe(x) for x in v) + ")"
    if t is slice:
        return f"slice({describe(v.start)},{describe(v.stop)},{describe(v.step)})"
    if v is Ellipsis:
        return "..."
    if isinstance(v, type):
        return f"type:{_qualified(v)}"
    if callable(v) and hasattr(v, "__code__"):
        return describe_function(v)
    if callable(v) and type(v).__name__ in ("builtin_function_or_method", "ufunc",
                                            "PjitFunction", "custom_jvp", "custom_vjp"):
        return f"fn:{_qualified(v)}"
    # torchjax's own value types that say exactly what they are
    from . import _dtypes
    if isinstance(v, _dtypes.dtype):
        return f"dtype:{v.name}"
    import numpy as np
    if isinstance(v, np.dtype):
        return f"npdtype:{v.str}:{v.name}"
    if isinstance(v, np.generic):
        return f"np:{v.dtype.str}:{v.item()!r}"
    from jax import sharding
    if isinstance(v, (sharding.NamedSharding, sharding.Mesh, sharding.PartitionSpec)):
        return describe_layout(v)
    # a value type of torchjax's own that names itself, all of its state (a DTensor
    # placement: Shard(dim=0)); by its exact class, so a subclass elsewhere is not named
    name = getattr(t, "_program_name", None)
    if name is not None and _own(getattr(t, "__module__", "") or ""):
        return f"{_qualified(t)}:{v._program_name()}"
    raise Uncacheable(t.__name__)


def describe_layout(v) -> str:
    """A jax Mesh, PartitionSpec or NamedSharding, exactly: for a mesh its axis names, sizes
    and types and its devices' ids in order (the same mesh of other devices, or of the same
    devices in another order, is another program; device ids are global, so a mesh over
    several processes names the same devices in each of them, and the key holds the process
    index besides); for a sharding its mesh, spec and memory kind."""
    from jax import sharding
    if isinstance(v, sharding.PartitionSpec):
        # (sets of axis names sorted: their order follows string hashes, per process)
        extra = [repr(sorted(getattr(v, k))) for k in ("unreduced", "reduced")
                 if getattr(v, k, None)]
        return "P" + repr(tuple(v)) + "".join(extra)
    if isinstance(v, sharding.Mesh):
        devs = list(v.devices.flat)
        return (f"mesh({tuple(v.axis_names)!r},{tuple(v.devices.shape)!r},"
                f"{tuple(str(a) for a in v.axis_types)!r},{devs[0].platform}:"
                f"{tuple(d.id for d in devs)!r})")
    if isinstance(v, sharding.NamedSharding):
        ids = getattr(v, "_logical_device_ids", None)
        return (f"ns({describe_layout(v.mesh)},{describe_layout(v.spec)},{v.memory_kind},"
                f"{None if ids is None else tuple(ids)!r})")
    raise Uncacheable(type(v).__name__)


def _qualified(f) -> str:
    mod = getattr(f, "__module__", None) or ""
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if not name or "<locals>" in name and not hasattr(f, "__code__") or not _own(mod):
        raise Uncacheable(f"{mod}.{name}")
    return f"{mod}.{name}"


def _own(mod: str) -> bool:
    return mod in ("jax", "numpy", "math", "operator", "builtins") or mod.startswith(
        ("torchjax.", "jax.", "jaxlib.", "numpy."))


def describe_function(f) -> str:
    """A torchjax (or jax, numpy) function: its name, a digest of its code, and the values
    its closure holds. A function of any other module (a user's) is Uncacheable: the source
    fingerprint covers only torchjax's own files."""
    if isinstance(getattr(f, "__self__", None), object) and hasattr(f, "__func__"):
        raise Uncacheable("bound method")
    name = _qualified(f)
    h = hashlib.blake2b(digest_size=8)
    _digest_code(h, f.__code__)
    parts = [name, h.hexdigest()]
    for cell in f.__closure__ or ():
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell (a name bound later in the enclosing function)
            raise Uncacheable("empty closure cell") from None
        parts.append(describe(content))
    if f.__defaults__:
        parts.append(describe(f.__defaults__))
    if f.__kwdefaults__:
        parts.append(describe(tuple(sorted(f.__kwdefaults__.items()))))
    return "fn:" + "|".join(parts)


def _digest_code(h, code) -> None:
    """Feed a code object to h the same way in every process: nested functions' code by
    content (their repr holds an address), sets sorted (their order follows string hashes,
    which differ per process)."""
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        if type(c).__name__ == "code":
            _digest_code(h, c)
        elif isinstance(c, frozenset):
            h.update(repr(sorted(map(repr, c))).encode())
        else:
            h.update(repr(c).encode())
