"""The jitted group update an optimizer's step runs: its rule's pure `_update` over lists of
arrays (complex parameters as real pairs, as PyTorch's view_as_real), kept in the program
cache, and the per-parameter "state just made" flags it takes. Split out of optimizer.py."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer
from jax.sharding import NamedSharding, PartitionSpec

from .. import _one_off, _programs


def _as_real(x):
    """PyTorch updates complex parameters through view_as_real: real and imaginary parts
    are independent coordinates."""
    return jnp.stack([x.real, x.imag], -1) if jnp.iscomplexobj(x) else x


def _like(x, original):
    if jnp.iscomplexobj(original):
        return jax.lax.complex(x[..., 0], x[..., 1])
    return x


@functools.lru_cache(maxsize=256)
def _runner(update, options, maximize):
    """The jitted group update of one (update rule, options, maximize), kept in the program
    cache when the rule is torchjax's own (a user's subclass runs as a plain jax.jit)."""

    def run(hypers, params, grads, states, fresh):
        return _run_pure(update, options, maximize, hypers, params, grads, states, fresh)

    return _programs.jit(run)


def _run_pure(update, options, maximize, hypers, params, grads, states, fresh):
    real_params = [_as_real(p) for p in params]
    real_grads = [_as_real(-g if maximize else g) for g in grads]
    real_states = [{k: _as_real(v) for k, v in s.items()} for s in states]
    new_params, new_states = update(options, hypers, real_params, real_grads, real_states, fresh)
    new_params = [_like(n, p).astype(p.dtype) for n, p in zip(new_params, params)]
    new_states = [{k: _like(v, old[k]).astype(old[k].dtype) for k, v in ns.items()}
                  for ns, old in zip(new_states, states)]
    return new_params, new_states


_FRESH: dict = {}  # (flags, placement) -> the flags as one device array (_fresh_flags)


def _fresh_flags(fresh, like, hooked):
    """The per-parameter "state just made" flags as the update takes them: one kept bool
    array on the parameters' device, not a Python bool per parameter (each Python scalar is
    an argument JAX converts at every call: four of them cost ~5 us of a small model's ~10 us
    update call). Inside a trace (torchjax.compile; `hooked`: its hyper-parameter hook is
    set) the list as it is."""
    if hooked or not _one_off.top_level() or isinstance(like, Tracer):
        return fresh
    where = like.sharding if getattr(like, "committed", False) else None
    if where is not None and not where.is_fully_replicated:
        # (a sharded parameter's placement would split the flags too, and their length need
        # not divide: the flags go to every device of its mesh instead)
        if not isinstance(where, NamedSharding):
            return fresh
        where = NamedSharding(where.mesh, PartitionSpec())
    key = (tuple(fresh), where)
    got = _FRESH.get(key)
    if got is None:
        if len(_FRESH) >= 64:
            _FRESH.clear()
        host = np.array(fresh, dtype=bool)
        got = _one_off.place(host, where) if where is not None else _one_off.to_device(host)
        _FRESH[key] = got
    return got
