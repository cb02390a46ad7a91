"""An executable compiled on its own thread (_programs.compile_soon): the optimizer's first
update while the first backward runs (optim/_first_step.py)."""

from __future__ import annotations

import threading


class Soon:
    """An executable being compiled on its own thread (XLA's compile releases the GIL, so on
    a second core it overlaps the caller's work). Not a daemon: the interpreter waits for it
    at exit rather than tearing XLA down under a running compile."""

    __slots__ = ("thread",)

    def __init__(self, work, label):
        # (the name is what TORCHJAX_LOGS=compiles reports: _compile_stats._origin)
        self.thread = threading.Thread(target=self._run, args=(work,), daemon=False,
                                       name=f"torchjax-compile-soon {label}")
        self.thread.start()

    @staticmethod
    def _run(work):
        try:
            work()  # stores the executable under its signature
        except Exception:  # noqa: BLE001  (the caller's own call compiles again, and raises)
            pass

    def wait(self, table, sig):
        """The executable once made (None if the compile failed: the caller makes it)."""
        self.thread.join()
        got = table.get(sig)
        if got is self:
            del table[sig]
            return None
        return got
