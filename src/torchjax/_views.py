"""Views: a view remembers its root base and the chain of view ops that maps base to view.

A write through a view scatters into the base through an index map (the same chain applied
to iota of the base's shape), then every live view of the base re-reads its values. Both are
cached jitted functions keyed by the chain, so repeated writes cost one XLA call each.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import _programs
from ._x64 import scoped


def _apply_chain(chain, arr):
    for op, skw in chain:
        arr = op.pure_view(skw, arr)
    return arr


_read_cache: dict = {}
_write_cache: dict = {}


# both run in torchjax's x64 scope: tensors write their views from outside ops too (.data =)
def chain_name(chain):
    """The chain as plain values for a program's name (_programs.ident_of), or None: each
    link by its kind, its op row's name and function, and its static arguments (a row's
    view and write rules are its table entry's, covered by the source fingerprint)."""
    parts = []
    for obj, skw in chain:
        row = getattr(obj, "op", obj)  # (a link picking output i of a multi-output view)
        if not (isinstance(getattr(row, "name", None), str) and callable(getattr(row, "fn", None))):
            return None
        parts.append((type(obj).__name__, row.name, row.fn, skw))
    return tuple(parts)


def _named(fn, what, chain):
    """fn as a program named by `what` and the chain (a plain jax.jit when it has no name)."""
    name = chain_name(chain)
    return _programs.program(fn, None if name is None else _programs.ident_of(what, name))


@scoped
def read_through(chain, base):
    f = _read_cache.get(chain)
    if f is None:
        f = _read_cache[chain] = _named(lambda b: _apply_chain(chain, b), "view read", chain)
    return f(base)


def _link_write(link):
    return getattr(link[0], "view_write", None)


def _write(chain, base, new):
    if not chain:
        return jnp.broadcast_to(new, base.shape).astype(base.dtype)
    # A link that changes the dtype (real, imag, view_as_real, ...) has its own write rule:
    # write the rest of the chain into that link's output, map it back through the rule, then
    # write the links before it by index map as usual.
    for k, link in enumerate(chain):
        rule = _link_write(link)
        if rule is not None:
            pre = chain[:k]
            mid = _apply_chain(pre, base)
            out = link[0].pure_view(link[1], mid)
            new_mid = rule(mid, _write(chain[k + 1:], out, new),
                           **dict(zip(link[0].statics, link[1])))
            return _write(pre, base, new_mid)
    iota = jnp.arange(base.size, dtype=jnp.int64 if base.size >= 2**31 else jnp.int32)
    idx = _apply_chain(chain, iota.reshape(base.shape))
    new = jnp.broadcast_to(new, idx.shape).astype(base.dtype)
    return base.reshape(-1).at[idx.reshape(-1)].set(new.reshape(-1)).reshape(base.shape)


@scoped
def write_through(chain, base, new):
    f = _write_cache.get(chain)
    if f is None:
        f = _write_cache[chain] = _named(lambda b, n: _write(chain, b, n), "view write",
                                         chain)
    return f(base, new)
