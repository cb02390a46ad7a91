"""Program-cache entries serialized and written on a thread of their own.

Writing a new program's entry (serializing the executable, pickling, a temporary file and a
rename) cost ~2-5 ms per program on the calling thread, ~4% of a model's first step (gpt's 31
programs: 80-170 ms). None of it is needed by the step, so it goes to one writer thread (the
serialization and the file system calls release the GIL). Before the interpreter exits, the
writes still queued are finished (atexit), so the next process finds every entry; a forked
child starts with an empty queue of its own. An entry that fails to write is only missing:
the next process compiles that program again.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading

_queue: queue.Queue = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def submit(write) -> None:
    """Run write() on the writer thread (started at the first call)."""
    global _thread
    if _thread is None:
        with _lock:
            if _thread is None:
                _thread = threading.Thread(target=_run, daemon=True,
                                           name="torchjax-program-writes")
                _thread.start()
    _queue.put(write)


def _run() -> None:
    while True:
        write = _queue.get()
        try:
            write()
        except Exception:  # noqa: BLE001  (not written: compiled again by the next process)
            pass
        finally:
            _queue.task_done()


def flush() -> None:
    """Wait until every queued entry is written."""
    if _thread is not None:
        _queue.join()


def _after_fork_in_child() -> None:
    global _queue, _thread
    _queue, _thread = queue.Queue(), None


atexit.register(flush)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
