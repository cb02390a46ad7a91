"""What a program-cache entry holds, and how it is read back (_programs.py keys them): the
serialized executable, its output tree, the runtimes it needs set up before loading
(_program_runtime.py) and the devices it runs on."""

from __future__ import annotations

import os
import pickle
import time

import jax

from . import _compile_cache, _compile_stats, _program_runtime, _program_writes

try:  # (as _programs.py: jax 0.10.2's pieces; without them the program cache is off)
    from jax._src import tree_util as _tree_util
    from jax.experimental import serialize_executable as _serialize
except ImportError:  # pragma: no cover - another jax
    _tree_util = _serialize = None


def load(store, key, args, device, in_tree=None):
    """The executable of the entry `key` for `args` on `device`'s backend, or None (no entry,
    or an unusable one: warned, then compiled again by the caller)."""
    t0 = time.perf_counter()
    data = store.get(key)
    if data is None:
        return None
    if in_tree is None:
        _, in_tree = _tree_util.tree_flatten((args, {}))
    compiled = load_data(data, in_tree, device.client, key, t0=t0)
    if compiled is not None and not fits(compiled, args, in_tree):
        _compile_cache._warn(f"ignoring unusable program cache entry {key} (ValueError: "
                             "argument types differ from the entry's); compiling the program "
                             "again")
        return None
    return compiled


def load_data(data, in_tree, client, key, t0=None, quiet=False):
    """An entry's bytes made an executable on `client` (None, warned unless quiet, when they
    cannot be: damaged, foreign, or for another process's devices). Counted in compile_stats
    unless quiet (a load ahead is counted when it is taken)."""
    t0 = time.perf_counter() if t0 is None else t0
    try:
        payload, out_tree, runtimes, device_ids = pickle.loads(data)
        _program_runtime.set_up(runtimes)  # before the executable exists (see there)
        # onto the devices it was compiled for: by default deserialize_and_load takes all of
        # the backend's, and with 8 (virtual) devices the executable then expected 8 shards
        # of every argument ("Expected args ... to have 8 shards, got [1, 1]")
        # (every process's devices: an SPMD program over a mesh of several processes runs on
        # all of them. An entry on none of this process's devices is unusable here, a
        # KeyError, rather than an executable whose outputs this process cannot read)
        if not {d.id for d in client.local_devices()} & set(device_ids):
            raise KeyError(f"devices {device_ids} are another process's")
        by_id = {d.id: d for d in client.devices()}
        compiled = _serialize.deserialize_and_load(
            payload, in_tree, out_tree, backend=client,
            execution_devices=[by_id[i] for i in device_ids])
    except Exception as e:  # noqa: BLE001  (a damaged or foreign entry: compile it again)
        if not quiet:
            _compile_cache._warn(f"ignoring unusable program cache entry {key} "
                                 f"({type(e).__name__}: {e}); compiling the program again")
        return None
    if not quiet:
        _compile_stats.count_loaded(time.perf_counter() - t0)
    return compiled


def fits(compiled, args, in_tree) -> bool:
    """Belt and braces: the executable takes exactly these arguments' tree and types."""
    if compiled.in_tree != in_tree:
        return False
    want = [jax.typeof(x) for x in _tree_util.tree_leaves(args)]
    got = [a._aval for a in _tree_util.tree_leaves(compiled.args_info)]
    return len(want) == len(got) and all(
        (w.shape, w.dtype, w.weak_type) == (g.shape, g.dtype, g.weak_type)
        for w, g in zip(want, got))


def drop(store, key, err) -> None:
    """An entry that loaded but does not run: reported, deleted, compiled again."""
    _compile_cache._warn(f"ignoring unusable program cache entry {key} ({err}); compiling the "
                         "program again")
    if store is not None:
        try:
            os.unlink(store._file(key))
        except OSError:
            pass


def save(store, key, compiled, lowered) -> None:
    try:
        # (read here: the module lives in this thread's MLIR context, see _mlir_context)
        runtimes = _program_runtime.needs(lowered)
        # in the order of the executable's device assignment: a sharded program's shard i
        # runs on the i-th device of this list when it is loaded again
        device_ids = [d.id for d in compiled._executable._unloaded_executable.device_list]
    except Exception:  # noqa: BLE001  (a custom call no setup makes safe (NotKept))
        return

    def write():
        try:
            payload, _, out_tree = _serialize.serialize(compiled)
            data = pickle.dumps((payload, out_tree, runtimes, device_ids),
                                protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001  (constants in the program, a host callback, an
            return         # unpicklable output tree)
        store.put(key, data)

    _program_writes.submit(write)  # (off the step's path: _program_writes.py)
