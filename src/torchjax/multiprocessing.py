"""torchjax.multiprocessing: Python's multiprocessing, with PyTorch's spawn().

A tensor in shared memory (Tensor.share_memory_(), Module.share_memory(): _shared_memory.py)
reaches a process started here, or a Queue, as that memory: writes on either side are seen on
the other (Hogwild training). Any other tensor is pickled, that is copied (PyTorch would move
it to shared memory first, so a receiver's writes would reach the sender: share it explicitly
for that). The sharing strategies are accepted and only recorded: blocks are always named
POSIX shared memory.
"""

from __future__ import annotations

import multiprocessing as _mp
import signal
import traceback
from multiprocessing import *  # noqa: F403

__all__ = list(_mp.__all__) + [
    "spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
    "get_all_sharing_strategies"]

_SHARING_STRATEGIES = {"file_descriptor", "file_system"}
_sharing_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set:
    """The tensor sharing strategies PyTorch names; torchjax records the choice only (tensors cross processes by pickling)."""
    return set(_SHARING_STRATEGIES)


def get_sharing_strategy() -> str:
    """The strategy set by `set_sharing_strategy` (recorded only)."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Recorded only: torchjax copies tensors between processes."""
    global _sharing_strategy
    if new_strategy not in _SHARING_STRATEGIES:
        raise ValueError(f"unknown sharing strategy {new_strategy!r}; expected one of "
                         f"{sorted(_SHARING_STRATEGIES)}")
    _sharing_strategy = new_strategy


class ProcessException(Exception):
    """A process started by `spawn` failed: `error_index` is its rank, `pid` its process id."""

    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process started by spawn() raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process started by spawn() died with a non-zero exit code or a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run(fn, i, args, errors) -> None:
    """The body of process i: fn(i, *args); a failure's traceback goes back to the parent."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes spawn() started; join() waits for them and re-raises a failure."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list:
        """The process ids of the spawned processes."""
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for a process to end; True once all ended well. A failure stops the others and
        is raised here, with the failing process's traceback."""
        from multiprocessing.connection import wait
        alive = [p.sentinel for p in self.processes if p.exitcode is None]
        if alive:
            wait(alive, timeout)
        for i, p in enumerate(self.processes):
            if p.exitcode not in (None, 0):
                self._stop_all()
                raise self._failure(i, p)
        return all(p.exitcode == 0 for p in self.processes)

    def _stop_all(self) -> None:
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()

    def _failure(self, i: int, p) -> ProcessException:
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            return ProcessRaisedException(
                f"\n\n-- Process {i} terminated with the following error:\n{tb}", i, p.pid)
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            return ProcessExitedException(f"process {i} terminated with signal {name}", i,
                                          p.pid, p.exitcode, name)
        return ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}",
                                      i, p.pid, p.exitcode)


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """Run fn(i, *args) for i in range(nprocs), each in its own process."""
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_run, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """torch.multiprocessing.spawn: fn(i, *args) in nprocs fresh processes (see
    start_processes)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
