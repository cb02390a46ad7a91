"""A warm process loads the programs its script needed last time AHEAD, on another thread.

A warm first step loads every program from the program cache (_programs.py) at the moment it
is first needed: ~1 ms for a small op, 30-50 ms for a fused backward or an optimizer's update
(HLO parsing and linking inside XLA), ~0.13-0.2 s of a GPT's 0.27 s warm first step, all on
the step's path. The programs a script needs, and their order, are the same from one run to
the next. So each process notes the first programs it needs (`note`, from the miss handler
and the compiles started ahead), in order, and at exit keeps that list in the program cache
as the script's manifest (named by its command line and working directory, and the rank of a
job of several processes). The next process of the same command line, at its first program,
reads the manifest and starts two threads that load the listed executables in that order,
the second one only the large ones (so a fused backward and an optimizer's update, the
slowest to load and to run the first time, are ready when the step needs them); the miss
handler takes a program from them (`take`) instead of reading the disk, waiting when a
thread is loading that very program, loading it itself when none has got to it yet (they
then skip it). A program made ahead of its use (the update, compiled from the first
zero_grad on) is listed where it is first used. XLA's deserialization releases the GIL for
much of its work, so the loads overlap the forward's Python and the runs of programs already
loaded.

Only scripts get manifests: a command line that names a Python file (`python train.py`,
`python -m torchjax train.py`); an interactive session, `python -c`, pytest or a notebook
kernel runs unrelated code under one command line. A manifest that cannot be read is ignored
with a warning (the programs load as before); a listed program whose entry is gone or does
not fit is loaded (or compiled) by the miss handler as before. TORCHJAX_PREFETCH=0 turns
this off.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import pickle
import sys
import threading
import time

from . import _compile_cache, _compile_stats, _program_entries

ON = [os.environ.get("TORCHJAX_PREFETCH", "1").strip().lower() not in ("0", "false", "off", "")]
MAX_KEYS = 256  # programs listed per manifest: the first ones a run needs
LOADERS = 2  # threads loading ahead (see _start)
_VERSION = 1

_lock = threading.Lock()
_state = {"started": False, "fingerprint": None, "listed": None, "listed_set": None}
_needed: list = []  # (key, input tree) of the programs this process needed, in order
_needed_keys: set = set()
_ahead: dict = {}  # key -> the same, of programs made ahead and not used yet
_ready: dict = {}  # key -> (executable loaded by the thread, seconds it took), not taken yet
_loading: dict = {}  # key -> threading.Event of the program the thread is loading now
_taken: set = set()  # keys the miss handler loads itself: the thread skips them
_stop = [False]
STATS = {"listed": 0, "taken": 0}  # for tests: programs the manifest listed, taken loaded


def _fingerprint():
    """The manifest's name for this process, or None where runs do not repeat a script."""
    argv = sys.argv
    if not argv or not argv[0] or argv[0] in ("-c", "-m"):
        return None
    script = os.path.abspath(argv[0])
    base = os.path.basename(script)
    # (`python -m pytest` names .../site-packages/pytest/__main__.py)
    if (not script.endswith(".py") or not os.path.isfile(script) or "pytest" in base
            or "ipykernel" in base or {"pytest", "_pytest"} & set(script.split(os.sep))):
        return None
    what = repr((_VERSION, script, argv[1:], os.getcwd(), os.environ.get("RANK", "")))
    return "manifest-" + hashlib.blake2b(what.encode(), digest_size=20).hexdigest()


def note(store, key, in_tree, platform, ahead=False) -> None:
    """A program this process needs (a miss; its input tree and its devices' platform), in
    the order needed; at the first one, the manifest of the last run starts loading. A
    program made `ahead` (the optimizer's update at the first zero_grad, a fused backward)
    is listed where it is first used (noted again then), or at the end if it never is."""
    if not _state["started"]:
        _start(store)
    # (nothing to keep where no manifest is written: pytest, a notebook, prefetch off)
    if _state["fingerprint"] is None or key in _needed_keys or len(_needed) >= MAX_KEYS:
        return
    if ahead:
        _ahead.setdefault(key, (key, in_tree, platform))
        return
    _ahead.pop(key, None)
    _needed_keys.add(key)
    _needed.append((key, in_tree, platform))


def recording() -> bool:
    """Whether this process may keep a manifest (undecided before its first program)."""
    return ON[0] and (_state["fingerprint"] is not None or not _state["started"])


def listed(store, key) -> bool:
    """Whether the manifest of the script's last run lists `key` (read, and its programs
    started loading, at the first question)."""
    if not _state["started"]:
        _start(store)
    return _state["listed_set"] is not None and key in _state["listed_set"]


def _start(store) -> None:
    with _lock:
        if _state["started"]:
            return
        _state["started"] = True
    fp = _fingerprint() if ON[0] else None
    if fp is None:
        return
    _state["fingerprint"] = fp
    atexit.register(_write, store)
    data = store.get(fp)
    if data is None:
        return
    try:
        listed = pickle.loads(data)
        if not (isinstance(listed, list) and all(len(x) == 3 for x in listed)):
            raise ValueError("not a list of (key, tree, platform)")
    except Exception as e:  # noqa: BLE001
        _compile_cache._warn(f"ignoring unreadable program cache manifest {fp} "
                             f"({type(e).__name__}: {e})")
        return
    _state["listed"] = [x[0] for x in listed]
    _state["listed_set"] = frozenset(_state["listed"])
    STATS["listed"] = len(listed)
    try:  # (before the interpreter joins its threads: the thread stops after its current load)
        threading._register_atexit(_stop_loading)
    except (AttributeError, RuntimeError):  # pragma: no cover - another Python
        return
    # not a daemon: the interpreter waits for its current load rather than tearing XLA down
    # under it
    # two loaders: one in the order needed; the other first takes the large entries, also in
    # that order (a fused backward, an optimizer's update: 30-60 ms to load, up to ~0.1 s for
    # a first run: behind the forward's small ones, the step waited for them), then helps the
    # first one (the list is shared: each program is taken once)
    # (the second one sizes the entries itself: off the step's path)
    in_order = iter(listed)
    queues = [lambda: in_order,
              lambda: itertools.chain(_large_ones(store, listed), in_order)][:LOADERS]
    for i, queue in enumerate(queues):
        threading.Thread(target=_load_listed, args=(store, queue, i == len(queues) - 1),
                         daemon=False, name=f"torchjax-prefetch-{i}").start()


def _large_ones(store, listed):
    large = []
    for x in listed:
        try:
            if os.path.getsize(store._file(x[0])) >= BIG:
                large.append(x)
        except (AttributeError, OSError, ValueError):
            continue
    return large


BIG = 64 << 10  # bytes of an entry the second loader takes (a small op's: 2-30 KB)
# A loaded program is not run on zeros by its loader (_program_first_run), though its first
# run costs more than its later ones. Measured (session 24, warm first step, 4 fresh processes
# each; quiet, load 1.3): no zeros runs / every program's / the large ones' only: gpt
# 0.21-0.23 / 0.25-0.27 / 0.25-0.26 s, lstm 0.18-0.20 / 0.20-0.22 / 0.20-0.21, cnn
# 0.077-0.083 / 0.086-0.109 / 0.077-0.083 (a large one's made after it is handed over, for the
# step to take it meanwhile: no better). A zeros run (the zeros, the whole run, the first-run
# cost) costs the loaders more than the first-run cost saves the step, and a large program's
# (a GPT backward's ~0.1 s) made the step wait.


def _stop_loading() -> None:
    _stop[0] = True


def _load_listed(store, make_queue, prepare=False) -> None:
    import jax  # (the backend is up: a program was needed)

    queue = make_queue()
    if prepare:
        # (off the step's path: the BLAS libraries the host tier limits to one thread, a
        # ~5 ms scan of the loaded libraries that its first matrix product would make)
        from . import _host_tier
        if _host_tier.ON[0]:
            _host_tier._blas_libraries()
    clients = {}
    while True:
        with _lock:
            if _stop[0]:
                return
            key, in_tree, platform = next(queue, (None, None, None))
            if key is None:
                return
            if key in _taken or key in _ready or key in _loading:
                continue
            done = _loading[key] = threading.Event()
        got, t0 = None, time.perf_counter()
        try:
            data = store.get(key)
            if data is not None:
                if platform not in clients:
                    clients[platform] = jax.devices(platform)[0].client
                # (quiet: a failure is the miss handler's to report, when it loads it)
                got = _program_entries.load_data(data, in_tree, clients[platform], key,
                                                 quiet=True)
        except Exception:  # noqa: BLE001  (a platform this process does not have)
            pass
        finally:
            with _lock:
                if got is not None:
                    _ready[key] = got, time.perf_counter() - t0
                del _loading[key]
            done.set()


def take(key, args, in_tree):
    """The executable the thread loaded for `key` (waiting if it is loading it now), or None:
    the caller loads it (and the thread will not)."""
    if _state["listed"] is None:
        return None
    with _lock:
        got = _ready.pop(key, None)
        done = _loading.get(key) if got is None else None
        # (taken either way: the other loader, which may have queued it too, skips it; out
        # of `_ready` and not marked, a large entry taken late was loaded a second time)
        _taken.add(key)
        if got is None and done is None:
            return None
    if done is not None:
        done.wait()
        with _lock:
            got = _ready.pop(key, None)
    if got is None or not _program_entries.fits(got[0], args, in_tree):
        return None
    _compile_stats.count_loaded(got[1], ahead=True)
    STATS["taken"] += 1
    return got[0]


def _write(store) -> None:
    """At exit: keep this run's list as the script's manifest when it differs from the one
    read (a cold run's, or a run that needed other programs)."""
    _stop[0] = True
    fp = _state["fingerprint"]
    needed = (_needed + list(_ahead.values()))[:MAX_KEYS]
    if fp is None or not needed or [x[0] for x in needed] == _state["listed"]:
        return
    try:
        store.put(fp, pickle.dumps(needed, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001  (an input tree that does not pickle: no manifest)
        pass


def _after_fork_in_child():
    """A forked child has no loading thread: nothing is waited for, nothing is written (its
    parent writes the script's manifest)."""
    global _lock
    _lock = threading.Lock()
    for done in _loading.values():
        done.set()
    _loading.clear()
    _ready.clear()
    _state["fingerprint"] = None
    _stop[0] = True


os.register_at_fork(after_in_child=_after_fork_in_child)
