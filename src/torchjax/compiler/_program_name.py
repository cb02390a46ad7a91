"""A compiled step's program named for torchjax's program cache by its jaxpr (_programs.py).

torchjax.compile traces the user's step once per process into a jaxpr (that trace runs the
user's Python: no cache can spare it). The program torchjax then makes of the jaxpr (a
jax.jit of its evaluation; across processes, that under shard_map) was traced again, lowered
and looked up in JAX's persistent cache on every run. Named by the jaxpr itself, a warm
process loads the executable instead. The name must determine the program exactly, so it is
rendered here from the jaxpr's structure rather than from its printed form (which shows a
mesh without its devices, and a large constant in part): every equation's primitive, its
parameters (nested jaxprs rendered the same way, layouts by _programs.describe_layout,
constants by their bytes) and its variables with their types. A parameter this cannot render
exactly (a Python function: a callback) leaves the step a plain jax.jit. A custom derivative's
rules are left out: the program runs the function itself (custom_jvp_call and custom_vjp_call
lower their call_jaxpr alone), and its derivative is taken from the jaxpr, not from them.
"""

from __future__ import annotations

import enum
import hashlib

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from .. import _programs

# parameters that only differentiation reads (see the module docstring)
_RULES = {"custom_jvp_call": ("jvp_jaxpr_fun", "jvp_jaxpr_thunk"),
          "custom_vjp_call": ("fwd_jaxpr_thunk", "bwd", "out_trees")}


def ident(what: str, jaxpr, *parts) -> str | None:
    """The program-cache ident of the program `what` made of `jaxpr` (a Jaxpr or ClosedJaxpr)
    and `parts` (plain values), or None when it cannot be named exactly (or the cache is
    off: rendering a large step costs milliseconds)."""
    if not _programs.enabled():
        return None
    render = _Render()
    try:
        render.jaxpr(jaxpr)
    except Exception:  # noqa: BLE001  (Uncacheable, or a value that fails to render: no
        return None    # cache, never an error)
    # (parts joined by NUL, which no part holds: reprs escape it)
    digest = hashlib.blake2b("\0".join(render.parts).encode(), digest_size=32).hexdigest()
    return _programs.ident_of(what, digest, *parts)


class _Render:
    def __init__(self):
        self.parts: list = []
        self.out = self.parts.append
        self.avals: dict = {}  # aval -> its text (most variables share a few types)
        self.seen: dict = {}  # id of a jaxpr rendered -> its number

    def jaxpr(self, j) -> None:
        # a nested jaxpr met again (one per jitted function, shared by its calls) by its
        # place in this rendering (the object is alive meanwhile, so its id is its own)
        seen = self.seen.get(id(j))
        if seen is not None:
            self.out(f"jaxpr#{seen}")
            return
        self.seen[id(j)] = len(self.seen)
        self.out(f"jaxpr {len(self.seen) - 1}")
        if isinstance(j, ClosedJaxpr):
            self.out("closed")
            for c in j.consts:
                self.value(c)
            j = j.jaxpr
        names: dict = {}

        def bind(vs):
            for v in vs:
                names[v] = len(names)
                self.out(f"v{names[v]}:{self.aval(v.aval)}")

        self.out("in")
        bind(j.constvars)
        self.out("|")
        bind(j.invars)
        for e in j.eqns:
            self.out(f"eqn {e.primitive.name}")
            skip = _RULES.get(e.primitive.name, ())
            for k in sorted(e.params):
                if k not in skip:
                    self.out(k)
                    self.value(e.params[k])
            self.atoms(e.invars, names)
            self.out("->")
            bind(e.outvars)
            self.out(_effects(e.effects))
        self.out("out")
        self.atoms(j.outvars, names)
        self.out(_effects(j.effects))

    def atoms(self, vs, names) -> None:
        for v in vs:
            if isinstance(v, Literal):
                self.out(f"lit:{self.aval(v.aval)}")
                self.value(v.val)
            elif v in names:
                self.out(f"v{names[v]}")
            else:  # a dropped output (`_`) or a variable bound outside: by type only
                self.out(f"_:{self.aval(v.aval)}")

    def aval(self, a) -> str:
        try:
            text = self.avals.get(a)
        except TypeError:  # (an unhashable aval)
            return _aval(a)
        if text is None:
            text = self.avals[a] = _aval(a)
        return text

    def value(self, v) -> None:
        t = type(v)
        if t in _programs._PLAIN:  # (most parameters: said first, and exactly by repr)
            self.out(f"{t.__name__}:{v!r}")
        elif t is tuple and all(type(x) is int for x in v):  # (shapes, axes, permutations)
            self.out(f"ints{v!r}")
        elif isinstance(v, (Jaxpr, ClosedJaxpr)):
            self.jaxpr(v)
        elif t in (tuple, list) or isinstance(v, tuple) and hasattr(v, "_fields"):
            self.out(f"{t.__module__}.{t.__qualname__}({len(v)}")  # (a NamedTuple by name)
            for x in v:
                self.value(x)
            self.out(")")
        elif t in (set, frozenset):
            self.out(f"set{sorted(repr(x) for x in v)}")  # (plain values: axis names)
            if not all(type(x) in _programs._PLAIN for x in v):
                raise _programs.Uncacheable("a set of objects")
        elif t is dict:
            for k in sorted(v, key=repr):
                self.out(repr(k))
                self.value(v[k])
        elif isinstance(v, np.dtype):
            self.out(f"dtype:{v}")
        elif isinstance(v, (np.ndarray, np.generic, jax.Array)):
            a = np.asarray(v)
            self.out(f"array:{a.dtype}:{a.shape}:"
                     f"{hashlib.blake2b(a.tobytes(), digest_size=16).hexdigest()}")
        elif isinstance(v, jax.sharding.Mesh) and v.empty:  # (no mesh in context)
            self.out("mesh:empty")
        elif isinstance(v, enum.Enum):
            self.out(f"enum:{type(v).__module__}.{type(v).__qualname__}.{v.name}")
        elif isinstance(v, type) and issubclass(v, np.generic):  # (a dtype given as a type)
            self.out(f"dtype:{np.dtype(v)}")
        else:
            self.out(_other(v))


def _effects(effects) -> str:
    text = f"effects {sorted(map(repr, effects))}"
    if " at 0x" in text:
        raise _programs.Uncacheable("an effect")
    return text


def _aval(a) -> str:
    """A variable's type: dtype, shape, weak type, and its sharding and manual axes where
    the aval has them (the abstract mesh has no devices: the layouts that name devices are
    parameters, rendered exactly)."""
    text = (f"{getattr(a, 'dtype', None)}{getattr(a, 'shape', None)}"
            f"w{getattr(a, 'weak_type', None)}"
            f"{getattr(a, 'sharding', None)!r}{sorted(getattr(a, 'vma', ()) or ())}")
    if " at 0x" in text:
        raise _programs.Uncacheable("an aval")
    return text


def _other(v) -> str:
    """Any other parameter: a layout or a plain value exactly (describe); a value of JAX's
    own whose repr says all of it (an abstract mesh, a sharding spec left unspecified);
    anything else (a function) Uncacheable."""
    try:
        return _programs.describe(v)
    except _programs.Uncacheable:
        pass
    t = type(v)
    if callable(v) or not t.__module__.startswith(("jax.", "jaxlib.")):
        raise _programs.Uncacheable(t.__name__)
    r = repr(v)
    if " at 0x" in r or "..." in r:
        raise _programs.Uncacheable(t.__name__)
    return f"{t.__module__}.{t.__qualname__}:{r}"
