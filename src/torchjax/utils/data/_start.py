"""How DataLoader workers start: the default start method, what a forked worker runs under,
and the checks that turn a worker that could not start into an error that says why.

On Linux workers are forked, as PyTorch's are: they inherit the dataset, the collate
function and the main module as they are, so unguarded scripts, classes defined in a
notebook or on standard input, lambdas, closures, open files and generators all work.

JAX's runtime does not survive fork (docs/design.md, "DataLoader workers", has the
measurements): in a child forked from a process that ran XLA programs, any program hangs,
and JAX cannot be reset there. Reading arrays' values, device_put, freeing arrays and
tracing still work. So a forked worker runs no XLA program: default_collate and TensorDataset
gathers use NumPy (_collate, _fetch), and `guard_forked_worker` makes every other JAX
computation (a dataset indexing or transforming torchjax tensors) a NumPy evaluation of its
jaxpr (_host_eval). What has no NumPy rule raises ForkedWorkerError, which reaches the main
process as "Caught ForkedWorkerError in DataLoader worker process i" and says what to do,
instead of hanging.

`multiprocessing_context="forkserver"` or `"spawn"` starts workers that run XLA, at
PyTorch's price there: everything they need is pickled and the main module is imported
again. Before starting them, `check_spawnable` finds what would make a worker die in its
bootstrap ("exited unexpectedly") and raises an error naming the fix.
"""

from __future__ import annotations

import ast
import io
import multiprocessing
import os
import pickle
import sys
import types
import warnings

_forkserver_preloaded = False


def _fork_guard_available() -> bool:
    """The guard replaces two private JAX functions; a JAX without them gets forkserver."""
    from jax._src import compiler, pjit
    return (hasattr(compiler, "compile_or_get_cached")
            and hasattr(pjit, "_pjit_call_impl_python"))


def default_context():
    """The start method PyTorch would use: the one the program set with
    multiprocessing.set_start_method, else fork on Linux, else the platform's default
    (forkserver with torchjax preloaded where fork is not the default and forkserver
    exists, spawn elsewhere)."""
    chosen = multiprocessing.get_start_method(allow_none=True)
    if chosen is not None:
        return context(multiprocessing.get_context(chosen))
    if sys.platform.startswith("linux") and _fork_guard_available():
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        return context(multiprocessing.get_context("forkserver"))
    return multiprocessing.get_context("spawn")


def context(ctx):
    """`ctx`, with torchjax preloaded in the fork server when it is forkserver: a worker
    then starts in milliseconds. Only torchjax (imported, no JAX backend started, so safe to
    fork from), not __main__, which could start JAX's threads in the fork server."""
    global _forkserver_preloaded
    if ctx.get_start_method() == "forkserver" and not _forkserver_preloaded:
        ctx.set_forkserver_preload(["torchjax"])
        _forkserver_preloaded = True
    return ctx


def start(process) -> None:
    """process.start(), without JAX's warning that fork and threads do not mix: the forked
    worker runs no XLA program (guard_forked_worker)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called")
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks")
        process.start()


# -- the forked worker ---------------------------------------------------------------------------

class ForkedWorkerError(RuntimeError):
    """JAX work asked of a DataLoader worker started with fork."""


def fork_message(what: str) -> str:
    return (
        f"{what} in a DataLoader worker started with fork: JAX's runtime does not survive "
        "fork(), so a forked worker computes with NumPy, which cannot do this. Return NumPy "
        "arrays or Python numbers from the dataset (default_collate makes the tensors in the "
        "main process), or pass multiprocessing_context='forkserver' (its workers run XLA; "
        "they pickle the dataset and import the main module again, so define the dataset "
        "in an importable module and guard the script with `if __name__ == \"__main__\":`).")


def _refuse(*args, **kwargs):
    raise ForkedWorkerError(fork_message("torchjax cannot compile an XLA program"))


def guard_forked_worker() -> None:
    """Compute with NumPy instead of XLA in this (forked) worker; never hang.

    Programs the parent compiled are found through caches keyed by JAX's trace context;
    a new user context makes every one of those lookups miss, so every jitted call and
    every eager primitive reaches JAX's Python call of a jitted function, which here
    evaluates the traced jaxpr with NumPy (_host_eval). Should anything still reach the
    compiler, it raises. Reading arrays' values, device_put and freeing arrays need no
    program and keep working."""
    import jax
    from jax._src import compiler, pjit

    from ... import _programs
    from . import _host_eval
    _programs.forked_worker()  # its dispatchers' misses go to jax.jit's path, guarded here
    jax.make_user_context("torchjax: forked DataLoader worker")
    pjit._pjit_call_impl_python = _host_eval.run_jitted
    compiler.compile_or_get_cached = _refuse


# -- checks before spawn / forkserver --------------------------------------------------------------

class _MainRecorder(pickle.Pickler):
    """Pickles to nowhere, noting the classes and functions it meets that live in __main__
    (a spawned worker finds those by importing the main module again)."""

    def __init__(self):
        super().__init__(io.BytesIO(), pickle.HIGHEST_PROTOCOL)
        self.from_main: list[str] = []

    def reducer_override(self, obj):
        if isinstance(obj, (type, types.FunctionType)) and obj.__module__ == "__main__":
            self.from_main.append(obj.__qualname__)
        elif type(obj).__module__ == "__main__":
            self.from_main.append(type(obj).__qualname__)
        return NotImplemented


def _main_file() -> str | None:
    """The file a spawned worker runs as its main module, or None when there is none it can
    run (an interactive session, a notebook, standard input)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or not os.path.isfile(path):
        return None
    return path


def _has_main_guard(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return True  # cannot tell: do not stand in the way
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and \
                "__main__" in ast.unparse(node.test):
            return True
    return False


def check_spawnable(method: str, parts: dict) -> None:
    """Raise what a spawn or forkserver worker would die of in its bootstrap: an argument
    that cannot be pickled, a class or function of a main module that cannot be imported
    again, or a main script without a main guard (each worker would run it again).

    parts: argument name -> value (dataset, collate_fn, worker_init_fn)."""
    fix_fork = "or pass multiprocessing_context='fork'"
    from_main = []
    for name, value in parts.items():
        recorder = _MainRecorder()
        try:
            recorder.dump(value)
        except Exception as e:  # noqa: BLE001 - any failure to pickle is the user's to fix
            raise pickle.PicklingError(
                f"DataLoader workers started with '{method}' receive the {name} pickled, "
                f"and it cannot be pickled ({type(e).__name__}: {e}). Define it at module "
                f"level in an importable module (not a lambda, closure or local class), "
                f"{fix_fork}.") from e
        from_main += [(name, q) for q in recorder.from_main]
    path = _main_file()
    if from_main and path is None:
        name, qualname = from_main[0]
        raise RuntimeError(
            f"DataLoader workers started with '{method}' cannot load {qualname} (used by the "
            f"{name}): it is defined in __main__, which they cannot import (an interactive "
            f"session, a notebook or standard input). Define it in a module and import it, "
            f"{fix_fork}.")
    if path is not None and not _has_main_guard(path):
        raise RuntimeError(
            f"DataLoader workers started with '{method}' run the main script {path} again as "
            f"they start, and it has no `if __name__ == \"__main__\":` guard, so each worker "
            f"would start the program over. Put the script's top-level work under that guard, "
            f"{fix_fork}.")
