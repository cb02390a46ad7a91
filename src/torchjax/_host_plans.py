"""The host tier's plans kept in the program cache, so that a warm process does not trace
again a signature an earlier process evaluated with NumPy (_host_tier.py).

Why: the program cache keeps compiled executables, but a signature the host tier evaluated
and never compiled (used fewer than HOT times) left nothing on disk, and every run traced it
again. A workload whose shapes keep changing is made of such signatures: a
reinforcement-learning script's every episode length is a new one for each per-episode
program (cat and stack and their backward over T inputs, std, unbind, ...), and a warm
actor-critic run spent ~3 s of its ~11 s tracing them (1-20 ms each, ~430 in 60 episodes).

An entry is the plan's recipe (_numpy_plan: per equation its primitive's name and
parameters, plain values), its constants, and the types of its inputs and outputs, pickled
under the program's own key with another prefix (`h-` for the executable's `p-`): the same
name covers everything the executable's does (the program's ident, the signature, JAX's
configuration, the versions of torchjax's sources and of jax). Written on the program
cache's writer thread (_program_writes); read by the first call of the signature in a later
process. An entry that cannot be read or does not fit is ignored with a warning and the
program is traced again, as the program cache does with executables. Plans with control
flow (their jaxprs are not plain values) are not kept.
"""

from __future__ import annotations

import enum
import pickle

import numpy as np

from . import _compile_cache, _numpy_plan, _program_writes

_FORMAT = "torchjax-host-plan-2"


def key_of(program_key: str) -> str:
    """The entry of the plan for the program-cache entry `program_key`."""
    return "h-" + program_key[2:]


def load(store, key, leaves):
    """(plan, in_avals, out_tree, out_avals, blas, mark) kept for `key`, or None (none kept,
    or an unusable entry: warned). `mark`: the template it was made from (_host_shapes.mark)."""
    data = store.get(key)
    if data is None:
        return None
    try:
        parts = pickle.loads(data)
        if parts[0] != _FORMAT:
            raise ValueError(f"format {parts[0]!r}")
        _, recipe, size, consts, ins, outs, out_tree, in_types, out_types, blas, mark = parts
        if len(in_types) != len(leaves) or any(
                tuple(shape) != np.shape(x) for (shape, _, _), x in zip(in_types, leaves)):
            raise ValueError("argument shapes differ from the entry's")
        plan = _numpy_plan.from_recipe(recipe, size, consts, ins, outs)
        in_avals = [_aval(t) for t in in_types]
        out_avals = [_aval(t) for t in out_types]
    except Exception as e:  # noqa: BLE001  (damaged, foreign, or another torchjax's rules)
        _compile_cache._warn(f"ignoring unusable host-tier plan {key} ({type(e).__name__}: "
                             f"{e}); tracing the program again")
        return None
    return plan, in_avals, out_tree, out_avals, blas, mark


def save(store, key, entry) -> None:
    """Keep `entry`'s plan (a _host_tier.Entry) under `key`, on the writer thread."""
    plan = entry.plan
    if plan.recipe is None or not all(_plain(p) for _, p, _, _, _ in plan.recipe):
        return
    parts = (_FORMAT, plan.recipe, plan.size, plan.consts, plan.ins, plan.outs,
             entry.out_tree, [_type(a) for a in entry.in_avals],
             [_type(a) for a in entry.avals], entry.blas, entry.mark)
    # (the recipe's only reader is this write: a process keeping hundreds of plans would
    # otherwise hold each one's equations twice, more objects for the cyclic GC to walk)
    plan.recipe = None

    def write():
        try:
            data = pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001  (a parameter that does not pickle: not kept)
            return
        store.put(key, data)

    _program_writes.submit(write)


_ATOMS = (type(None), bool, int, float, complex, str, np.dtype, np.ndarray, np.generic,
          enum.Enum)


def _plain(value) -> bool:
    """Whether a parameter is made of values that pickle as themselves: numbers, strings,
    dtypes, arrays, enums and tuples of them (NamedTuples: dimension numbers). A jaxpr,
    a function or a sharding would not come back the same, or at all: such plans are not
    kept."""
    if isinstance(value, _ATOMS):
        return True
    if isinstance(value, (tuple, list, frozenset)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return isinstance(value, type) and issubclass(value, np.generic)


def _type(aval):
    return tuple(aval.shape), np.dtype(aval.dtype), bool(getattr(aval, "weak_type", False))


def _aval(t):
    from jax._src import core
    shape, dtype, weak = t
    return core.ShapedArray(tuple(shape), dtype, weak_type=weak)
