"""Moving a tensor's array onto a sharding: the one primitive every wrapper here is built on.

XLA's partitioner does the rest: an op whose inputs are sharded runs sharded, with the
collectives it needs inserted by XLA. A reshard is differentiable (its backward is JAX's
transpose of a sharding constraint) and traceable (inside torchjax.compile it is a
`with_sharding_constraint` in the step's program).
"""

from __future__ import annotations

import jax

from .._tensor import Tensor
from ..interop import from_jax
from . import _eager_programs, _per_rank


@from_jax(name="Reshard", _every_input=True)
def _constrain(x, sharding):
    return jax.lax.with_sharding_constraint(x, sharding)


def place_array(arr, sharding):
    """arr on `sharding`: a device_put eagerly, a sharding constraint while traced."""
    if isinstance(arr, jax.core.Tracer):
        if _per_rank.tracing():
            # the per-rank step runs inside shard_map, each rank's step whole on its own
            # devices: a layout over the mesh means nothing there (the program's results
            # go back onto their arrays' shardings when it returns, _per_rank._Runner)
            return arr
        return jax.lax.with_sharding_constraint(arr, sharding)
    if getattr(arr, "sharding", None) == sharding:
        return arr
    if isinstance(arr, jax.Array):  # (named programs: a warm process loads them untraced)
        spread = _eager_programs.spread(arr, sharding)
        if spread is not None:
            return spread
        return _eager_programs.reshard(arr, sharding)
    return jax.device_put(arr, sharding)


def reshard(t: Tensor, sharding) -> Tensor:
    """t's value on `sharding`, as a new Tensor (recorded on the tape when t requires grad)."""
    if t._requires_grad:
        if isinstance(t._data, jax.core.Tracer) and _per_rank.tracing():
            return t  # see place_array
        return _constrain(t, sharding)
    return Tensor._wrap(place_array(t._data, sharding))


def reshard_(t: Tensor, sharding) -> None:
    """Moves t (a parameter or buffer) onto `sharding` in place: same object, same value."""
    t._data = place_array(t._data, sharding)
    if t._grad is not None:
        t._grad._data = place_array(t._grad._data, sharding)

