"""An executable compiled on another thread (_programs.compile_soon): the optimizer's first
update while the first backward runs (optim/_first_step.py), dropout's first kernel, and the
programs the host tier found hot (_host_tier.py)."""

from __future__ import annotations

import os
import threading


class Soon:
    """An executable being compiled on another thread (XLA's compile releases the GIL, so on
    a second core it overlaps the caller's work): its own thread, or with `queued` the one
    worker that compiles the host tier's hot programs in turn (a burst of them at once would
    otherwise be as many threads fighting over two cores). Threads are not daemons: the
    interpreter waits for them at exit rather than tearing XLA down under a running compile."""

    __slots__ = ("done", "label")

    def __init__(self, work, label, queued=None):
        self.done = threading.Event()
        self.label = label
        if queued is not None:  # (its priority: the worker takes the highest first)
            with _lock:
                _queue.append((queued, self, work, label))
                if _worker[0] is None:
                    t = _worker[0] = threading.Thread(target=_drain,
                                                      name="torchjax-compile-soon (hot)")
                    t.start()
            return
        # (the name is what TORCHJAX_LOGS=compiles reports: _compile_stats._origin)
        threading.Thread(target=self._run, args=(work,), daemon=False,
                         name=f"torchjax-compile-soon {label}").start()

    def _run(self, work):
        try:
            work()  # stores the executable under its signature
        except Exception:  # noqa: BLE001  (the caller's own call compiles again, and raises)
            pass
        finally:
            self.done.set()

    def busy(self) -> bool:
        return not self.done.is_set()

    def wait(self, table, sig):
        """The executable once made (None if the compile failed: the caller makes it)."""
        self.done.wait()
        got = table.get(sig)
        if got is self:
            del table[sig]
            return None
        return got


_queue: list = []
_worker: list = [None]
_lock = threading.Lock()


def _drain():
    me = threading.current_thread()
    while True:
        with _lock:
            if not _queue:
                _worker[0] = None
                return
            job = max(_queue, key=lambda j: j[0])
            _queue.remove(job)
            _, soon, work, label = job
        me.name = f"torchjax-compile-soon {label}"
        soon._run(work)


def _drop_queued():
    """At exit: the queued compiles that have not started are given up (the one running
    finishes). A script that ends before its hot programs are compiled would otherwise wait
    for all of them; a later run evaluates them on the host again."""
    with _lock:
        for _, soon, _, _ in _queue:
            soon.done.set()
        _queue.clear()


try:  # (runs before the interpreter joins its threads, as concurrent.futures' hook does)
    threading._register_atexit(_drop_queued)
except (AttributeError, RuntimeError):  # pragma: no cover - another Python
    pass


def _after_fork_in_child():
    """A forked child has no worker: queued compiles are given up (their callers compile)."""
    global _lock
    _lock = threading.Lock()
    for _, soon, _, _ in _queue:
        soon.done.set()
    _queue.clear()
    _worker[0] = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def wait_all() -> None:
    """Until every queued compile is done (tests, benchmarks)."""
    t = _worker[0]
    while t is not None:
        t.join()
        t = _worker[0]
