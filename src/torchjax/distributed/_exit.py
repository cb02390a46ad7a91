"""A rank that fails in a job of several processes exits at once, as a rank under torchrun does.

JAX's exit handler (jax._src.api.clean_up, registered with atexit when jax is imported) shuts
its runtime down with a barrier that waits for every other process, while they wait for the
failing one in their next collective: the job hung for minutes. A failing rank therefore
leaves that handler out; the rest of Python's exit (the script's own atexit handlers, flushing
files) still runs, and the launcher (ours or torchrun) sees the exit and stops the others.

Two ways in: `python -m torchjax script.py` (torchjax/__main__.py) sees the script's exception
or exit code itself; a script started by plain `python script.py` (under torchrun, or with
torchrun's variables set by hand) gets `install()` from init_process_group, which decides at
exit: an uncaught exception (Python has set sys.last_value by then) or a non-zero sys.exit.
"""

from __future__ import annotations

import atexit
import sys
import threading

_state = {"installed": False, "exit_code": None, "sys_exit": None}


def in_multiprocess_job() -> bool:
    """Whether this process joined a JAX runtime of several processes (init_process_group)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import distributed
        return (distributed.global_state.client is not None
                and (distributed.global_state.num_processes or 1) > 1)
    except Exception:  # noqa: BLE001  (another jax: Python's usual exit)
        return False


def skip_exit_barrier() -> None:
    """Leaves JAX's exit handler (and its barrier) out of this process's exit, and JAX's
    distributed client and coordination service undestroyed: their destructors, run when
    Python's finalization drops its last reference to them, shut down with the same wait.
    Process 0, which hosts the service, then sat ~5 s after its atexit handlers until JAX's
    error poller aborted it (exit code 134 instead of its own). The operating system closes
    their connections when the process ends, which is what the other processes notice."""
    try:
        from jax._src import api
        atexit.unregister(api.clean_up)
    except (ImportError, AttributeError):  # pragma: no cover - another jax
        pass
    try:
        import ctypes

        from jax._src import distributed
        gs = distributed.global_state
        for obj in (gs.preemption_sync_manager, gs.client, gs.service):
            if obj is not None:  # one reference more than Python will ever drop
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    except Exception:  # noqa: BLE001  (another jax: its own exit)
        pass


def _exit(code=None):
    # sys.exit raises SystemExit, which Python's exit handles without sys.excepthook and
    # without recording it: the code is kept here for _at_exit. Only the main thread's: in
    # another thread sys.exit ends that thread, not the process. (A SystemExit the script
    # catches and carries on from still counts: that process then exits without the
    # barrier, which costs the others nothing but JAX's orderly disconnect.)
    if threading.current_thread() is threading.main_thread():
        _state["exit_code"] = code
    _state["sys_exit"](code)


def _failed() -> bool:
    if getattr(sys, "last_value", None) is not None:  # an uncaught exception
        return not isinstance(sys.last_value, SystemExit)
    return _state["exit_code"] not in (None, 0)


def _at_exit() -> None:
    # registered after jax's handler, so it runs before it (atexit runs in reverse order)
    if _failed() and in_multiprocess_job():
        skip_exit_barrier()


def install() -> None:
    """For a process that joined a job of several processes: a failure skips the barrier."""
    if _state["installed"]:
        return
    _state["installed"] = True
    _state["sys_exit"] = sys.exit
    sys.exit = _exit
    atexit.register(_at_exit)


def uninstall() -> None:
    """destroy_process_group: the job is over; sys.exit is Python's again."""
    if not _state["installed"]:
        return
    _state["installed"] = False
    if sys.exit is _exit:
        sys.exit = _state["sys_exit"]
    atexit.unregister(_at_exit)
