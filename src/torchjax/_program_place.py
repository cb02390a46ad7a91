"""Placing an uncommitted argument of a program-cache program (_programs.py) that its
executable takes laid out over a mesh: a batch's labels on one device, which DDP does not
lay out, going into a sharded step.

JAX places such an argument itself, cutting it into the mesh's pieces with `_multi_slice`, a
jax.jit of its own: traced in every process, a loaded program's call too, so a warm process
traced it though every program of torchjax's came from the cache. torchjax.distributed sets
`spread` (its named program that cuts one device's array into a layout's pieces,
distributed/_eager_programs.py); it is used in the call that makes or loads a program
(`placed`, JAX's Python path) and by the C++ dispatcher for later calls (`shard_arg`, its
fallback for an argument whose layout is not the executable's). Where it does not apply
(None: a replicated layout, another process's devices, a committed array) JAX places it.
"""

from __future__ import annotations

try:  # (as _programs.py: jax 0.10.2's pieces)
    from jax._src import tree_util as _tree_util
    from jax._src.interpreters import pxla as _pxla
    from jax._src.lib import _jax
    _ARRAY = _jax.ArrayImpl
except (ImportError, AttributeError):  # pragma: no cover - another jax (no program cache)
    _tree_util = _pxla = _ARRAY = None

# (array, sharding) -> the array laid out so, or None to leave it to JAX; set by
# torchjax.distributed
spread = None


def placed(compiled, args):
    """args with each uncommitted one-device array that the executable takes laid out over a
    mesh already laid out so (by `spread`), for a call through JAX's Python path."""
    if spread is None:
        return args
    leaves, tree = _tree_util.tree_flatten(args)
    if not any(type(x) is _ARRAY and not x._committed for x in leaves):
        return args
    try:  # the executable's shardings are of the arguments it keeps (jax.jit drops unused
        ex = compiled._executable  # ones), counted after its constants
        n = len(compiled._params.const_args)
        targets = dict(zip((i - n for i in sorted(ex._kept_var_idx)), ex._in_shardings))
    except (AttributeError, TypeError):  # pragma: no cover - another jax
        return args
    out = list(leaves)
    for i, x in enumerate(leaves):
        s = targets.get(i)
        # (a loaded executable says a mesh's layout as a GSPMDSharding: any over devices)
        if type(x) is _ARRAY and not x._committed and s is not None and len(s.device_set) > 1:
            out[i] = shard_arg(x, s, None)
    return _tree_util.tree_unflatten(tree, out)


def shard_arg(x, sharding, layout):
    """The C++ dispatcher's placing of an argument whose layout is not the executable's (an
    uncommitted array, a NumPy array): `spread` where it applies, else JAX's."""
    if spread is not None and layout is None and type(x) is _ARRAY and not x._committed:
        got = spread(x, sharding)
        if got is not None:
            return got
    return _pxla.cc_shard_arg(x, sharding, layout)
