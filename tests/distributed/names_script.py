"""Run by test_program_names.py (8 virtual CPU devices): the programs torchjax.distributed
names for the program cache (_eager_programs.py, from_jax's, a view's) are named by
everything that changes them. Two calls that need different programs get different names
(a shared name would let a warm process load one for the other: a stale, wrong program),
and each named program computes its definition, checked against NumPy."""

from tests.distributed._checks import check, run  # noqa: I001  (sets XLA_FLAGS first)

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import torchjax as torch
from torchjax import _programs
from torchjax.distributed import ReduceOp
from torchjax.distributed import _collectives, _eager_programs
from torchjax.distributed.tensor import Partial, Replicate, Shard


def _name(f):
    """The name a program made by _programs.program carries (None: a plain jax.jit)."""
    prog = getattr(f, "_program", None)
    return None if prog is None else prog.ident


def _distinct(names):
    assert None not in names, names
    assert len(set(names)) == len(names), names


@check
def collective_programs_are_named_by_op_kind_and_group():
    """The collective's program (one per process of a group; here 4 devices of one process
    stand in for 4 processes' devices) by reduce op, kind and the group's devices in order:
    each name different, each result its definition."""
    assert _programs.enabled()  # (the suite's persistent cache is on: names are made)
    d = jax.devices()
    groups = {"0-3": d[:4], "4-7": d[4:], "3-0": d[:4][::-1]}
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((4, 2, 3)).astype(np.float32) + 2
    names, seen = [], {}
    for gname, devs in groups.items():
        mesh = Mesh(np.array(devs), ("ranks",))
        # device d holds rows[d.id % 4], as a process holds its own tensor: the group's
        # rows are its devices' pieces in the group's order (_eager_programs.stack_rows)
        mine = np.stack([rows[dev.id % 4] for dev in devs])
        cat = jax.make_array_from_single_device_arrays(
            (8, 3), NamedSharding(mesh, P("ranks")),
            [jax.device_put(rows[dev.id % 4], dev) for dev in devs])
        want = {"SUM": mine.sum(0), "MAX": mine.max(0), "MIN": mine.min(0),
                "AVG": mine.mean(0), "PRODUCT": mine.prod(0)}
        for opname, value in want.items():
            op = ReduceOp[opname]
            prog = _eager_programs.collective("reduce", op, _collectives._REDUCE[op], mesh, 4)
            names.append(_name(prog))
            got = prog(cat)
            assert got.sharding.is_fully_replicated
            np.testing.assert_allclose(np.asarray(got.addressable_data(0)), value, rtol=1e-5)
        prog = _eager_programs.collective("gather", None, None, mesh, 4)
        names.append(_name(prog))
        # a 0-d tensor's rows: the same concatenated array, another program (its rows keep
        # no axis of their own)
        names.append(_name(_eager_programs.collective("gather", None, None, mesh, 4, True)))
        gathered = np.asarray(prog(cat).addressable_data(0))
        np.testing.assert_array_equal(gathered, mine)
        seen[gname] = gathered
    _distinct(names)
    # the reversed group is another program, with the rows in its own order
    np.testing.assert_array_equal(seen["3-0"], seen["0-3"][::-1])


@check
def after_a_collective_each_step_and_rank_is_named():
    """What a rank does with a collective's result (post): by its steps and the rank."""
    x = jax.numpy.asarray(np.arange(24.0, dtype=np.float32).reshape(4, 6))
    host = np.asarray(x)
    cases = {
        ((("row", 1),), 0): host[1],
        ((("row", 2),), 0): host[2],
        ((("mine", 2, 0),), 0): host[0:2],
        ((("mine", 2, 0),), 1): host[2:4],
        ((("mine", 3, 1),), 1): host[:, 3:6],
        ((("mine", 2, 0), ("reshape", (12,))), 1): host[2:4].reshape(12),
        ((("mine", 2, 1), ("reshape", (4, 2)), ("rows",)), 1): tuple(host[:, 2:4]),
    }
    names = []
    for (steps, rank), want in cases.items():
        names.append(_name(_eager_programs._post_program(steps, rank)))
        got = _eager_programs.post(x, steps, rank)
        if isinstance(want, tuple):
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(np.asarray(a), b)
        else:
            np.testing.assert_array_equal(np.asarray(got), want)
    _distinct(names)


@check
def layout_moves_are_named_by_their_target():
    """A reshard by its target sharding (the source is in the argument's signature), the cut
    of a one-device array by its pieces' bounds: results and layouts are device_put's."""
    d = jax.devices()
    m24 = Mesh(np.array(d).reshape(2, 4), ("a", "b"))
    m8 = Mesh(np.array(d[::-1]), ("x",))
    host = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    one = jax.device_put(host, d[2])
    targets = [NamedSharding(m24, P("a")), NamedSharding(m24, P(None, "b")),
               NamedSharding(m24, P("b", "a")), NamedSharding(m24, P(("a", "b"))),
               NamedSharding(m8, P("x"))]
    cut_names, move_names = [], []
    for t in targets:
        got = _eager_programs.spread(one, t)
        ref = jax.device_put(host, t)
        assert got.sharding == t
        for a, b in zip(got.addressable_shards, ref.addressable_shards):
            assert a.device == b.device and a.index == b.index
            np.testing.assert_array_equal(np.asarray(a.data), np.asarray(b.data))
        where = t.addressable_devices_indices_map(host.shape)
        bounds = []
        for index in where.values():
            b = (tuple(s.start or 0 for s in index),
                 tuple(n if s.stop is None else s.stop for s, n in zip(index, host.shape)))
            if b not in bounds:
                bounds.append(b)
        cut_names.append(_name(_eager_programs._cutter(tuple(bounds))))
    # (two of the layouts cut the same pieces, for other devices: one program serves both)
    assert len(set(cut_names)) == 4 and None not in cut_names, cut_names
    start = jax.device_put(host, targets[0])
    for t in targets[1:4]:
        moved = _eager_programs.reshard(start, t)
        assert moved.sharding == t
        np.testing.assert_array_equal(np.asarray(moved), host)
        move_names.append(_name(_eager_programs._resharder(t)))
    _distinct(move_names)
    assert _eager_programs.spread(one, NamedSharding(m24, P())) is None  # device_put's own


@check
def from_jax_and_views_are_named_only_by_what_picks_them():
    """from_jax names torchjax's own functions (with their static arguments, placements
    included), never a user's; a view chain by each link's op and statics."""
    from torchjax.distributed.tensor import _dtensor
    from torchjax.interop import _ident

    tree = jax.tree_util.tree_structure(((0, 0, 0), {}))
    fn = _dtensor._take.__wrapped__
    a = _ident(fn, tree, (0,), ((1, ((0, 4),)), (2, 1)))
    b = _ident(fn, tree, (0,), ((1, ((4, 8),)), (2, 1)))
    c = _ident(fn, tree, (0,), ((1, ((0, 4),)), (2, 2)))
    fl = _dtensor._from_local.__wrapped__
    placed = [_ident(fl, tree, (0,), ((1, (p,)), (2, (2,))))
              for p in (Shard(0), Shard(1), Replicate(), Partial("sum"), Partial("max"))]
    _distinct([a, b, c] + placed)

    def users(x):
        return x * 2
    assert _ident(users, tree, (0,), ()) is None  # a user's code is never a key

    from torchjax._views import chain_name
    x = torch.randn(6, 6)
    chains = [x[1:3]._view_chain, x[2:4]._view_chain, x[1:3].t()._view_chain,
              x.split(2)[1]._view_chain, x.split(3)[1]._view_chain, x.chunk(3)[1]._view_chain]
    _distinct([_programs.ident_of("view", chain_name(c)) for c in chains])


if __name__ == "__main__":
    run()
