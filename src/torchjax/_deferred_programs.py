"""How a deferred sequence (_deferred.py) gets its program: when, under which name, on which
thread.

- When: a sequence of two ops or more, once it has been seen COMPILE_AFTER times. Before that
  its ops run one by one through their own compiled calls, so sequences that never repeat
  compile nothing; a sequence of one op always does (its program would be the op's own
  program compiled a second time: the transformer's attention projections, cut by views).
- Name: kept in torchjax's program cache (_programs.py) under a name made of its rows' names,
  input sources, constants and returned results (`_ident`), so a later process loads it
  without tracing or compiling.
- Thread: at the top level, the XLA compile runs on another thread (BACKGROUND), as the
  fused backward's does (_autograd/engine.py, _Compiling): tracing and lowering stay on the
  calling thread, and until the compile is done the sequence keeps running op by op. A
  no-grad transformer forward's second and third calls compiled ~0.3 s of sequence programs
  inline (docs/performance_eager.md). One worker thread compiles them in order, all of them:
  leaving some for later (the fused backward's "one at a time, the others counted again")
  left a cold process without programs a warm one then had to compile.
"""

from __future__ import annotations

import collections
import os
import threading

from . import _host_shapes, _host_tier, _programs
from ._scalar_args import seen_enough as _seen_enough

COMPILE_AFTER = 2  # a sequence seen this many times gets its own program
# compile sequence programs on another thread (tests/conftest.py turns it off: the suite's
# tests check the fused program at once)
BACKGROUND = True
_MAX_PROGRAMS = 256  # kept sequence programs (cleared when full)
_MAX_SEEN = 4096
PROGRAMS: dict = {}
SEEN: dict = {}
# A sequence whose family (its name but for integers: the same ops at other sizes, or with
# other static sizes) has had _host_tier.FAMILIES programs already gets one only after
# LATER_SIGHTINGS more sightings: autoregressive generation runs each layer's sequence once
# per layer at each token's length, which reached the usual count at every token (minGPT's
# chargpt, 6 layers, 500 tokens: ~350 sequence programs compiled, each used for one token,
# ~40 s of a compile thread beside it). A length that stays (at the block size) is compiled
# a few tokens later.
LATER: dict = {}
LATER_SIGHTINGS = 64
# counts for tests and benchmarks: sequence programs made, sequences run op by op
# (and runs by windows; "waiting": op-by-op runs of a sequence whose program is compiling;
# "replayed": runs of a sequence that followed its trace to the end, _deferred_replay)
STATS = {"compiled": 0, "op_by_op": 0, "windows": 0, "waiting": 0, "replayed": 0}


def source(s, ext, vals):
    """An input of an op: ext[s], the result of op ~s, or a constant number (class, value)."""
    if s.__class__ is tuple:
        if s[0] is None:  # a list argument: (None, its sources)
            return tuple(source(x, ext, vals) for x in s[1])
        return s[1]
    return ext[s] if s >= 0 else vals[~s]


def op_by_op(ops, flat, ext, live):
    """The live results of a sequence run through its ops' own compiled calls."""
    vals = []
    for call, _, a, b in ops:
        vals.append(call(*[source(s, ext, vals) for s in flat[a:b]]))
    STATS["op_by_op"] += 1
    return [vals[i] for i in live]


def program_for(key, ops, live, ext, top):
    """The sequence's program (something called with `ext`), or None: run it op by op."""
    if len(ops) < 2:
        return None
    later = LATER.get(key)  # (a length of a family that keeps changing: see LATER)
    on = _host_tier.ON[0]
    after = later if later is not None else (
        max(COMPILE_AFTER, _host_tier.SEQUENCE_AFTER) if on else COMPILE_AFTER)
    if not _seen_enough(SEEN, key, after, _MAX_SEEN):
        return None
    flat = key[0]
    ident = _ident(ops, flat, live)
    if later is None and on and ident is not None and \
            _host_shapes.variants(_host_shapes.family_of(ident)) >= _host_tier.FAMILIES:
        if len(LATER) >= _MAX_SEEN:
            LATER.clear()
        LATER[key] = LATER_SIGHTINGS
        return None
    prog = _program([(p, flat[a:b]) for _, p, a, b in ops], live, ident)
    if BACKGROUND and top and getattr(prog, "_program", None) is not None:
        # (a plain jax.jit, the program cache off, compiles inline: an executable compiled
        # apart from it would not reach its cache)
        # (the arguments as the calls pass them, a tuple: a list is another signature)
        prog = _Compiling(prog, _programs.compile_ahead(prog, tuple(ext)), key, ops, live)
    if len(PROGRAMS) >= _MAX_PROGRAMS:
        PROGRAMS.clear()
    PROGRAMS[key] = prog
    STATS["compiled"] += 1
    return prog


class _Compiling:
    """A sequence program whose XLA compile is queued for the worker thread. Called like the
    program: op by op until the compile is done, then the program (which replaces this in
    PROGRAMS)."""

    __slots__ = ("fn", "work", "done", "key", "ops", "live")

    def __init__(self, fn, work, key, ops, live):
        self.fn, self.work, self.key, self.ops, self.live = fn, work, key, ops, live
        self.done = False
        with _lock:
            _queue.append(self)
            if _worker[0] is None:
                # not a daemon: the interpreter waits for it at exit rather than tearing
                # XLA down under a running compile (and a cold run leaves every program)
                t = _worker[0] = threading.Thread(target=_drain,
                                                  name="torchjax-deferred-sequences")
                t.start()

    def __call__(self, *ext):
        if not self.done:
            STATS["waiting"] += 1
            return op_by_op(self.ops, self.key[0], ext, self.live)
        if PROGRAMS.get(self.key) is self:
            PROGRAMS[self.key] = self.fn
        return self.fn(*ext)


_queue: collections.deque = collections.deque()
_worker: list = [None]  # the running worker thread, None when there is none
_lock = threading.Lock()


def _drain():
    while True:
        with _lock:
            if not _queue:
                _worker[0] = None
                return
            job = _queue.popleft()
        try:
            job.work()  # fills fn's executables: its next call runs the program
        except Exception:  # noqa: BLE001  (the next call of fn compiles again, and raises)
            pass
        job.work = None
        job.done = True


def _after_fork_in_child():
    """A forked child has no worker thread (and the lock may have been held at the fork):
    start over; programs whose compile was queued compile at their next call instead."""
    global _lock
    _lock = threading.Lock()
    _queue.clear()
    _worker[0] = None
    for p in list(PROGRAMS.values()):
        if p.__class__ is _Compiling:
            p.done = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def wait():
    """Until every queued compile is done (tests, benchmarks)."""
    t = _worker[0]
    while t is not None:
        t.join()
        t = _worker[0]


def _ident(ops, flat, live):
    """The sequence program's name in the program cache (_programs.py): per op the name of
    its row's compiled call (the op, its static arguments, compute dtype: the same pure
    function the sequence runs) and where each input comes from (an argument's index, an
    earlier result, a constant number by class and value), then which results are returned.
    The arguments' signature is added by the cache. None (a plain jax.jit) when a row's call
    has no name (the cache is off, or the row holds a value that cannot be named)."""
    parts = []
    for call, _, a, b in ops:
        prog = getattr(call, "_program", None)
        if prog is None:
            return None
        parts.append((prog.ident, flat[a:b]))
    return _programs.ident_of("deferred", tuple(parts), live)


def _program(ops, live, ident):
    """One jitted function running the sequence's rows in order, returning the live
    results; kept in the program cache under `ident` (None: a plain jax.jit)."""
    def sequence(*ext):
        vals = []
        for pure, srcs in ops:
            vals.append(pure(*[source(s, ext, vals) for s in srcs]))
        return tuple(vals[i] for i in live)
    return _programs.program(sequence, ident)

