"""What runs inside a DataLoader worker process, and what the main process needs to read its
messages: WorkerInfo / get_worker_info, the exception wrapper, the control messages.

Protocol. The main process sends a worker, on its own index queue, `(task_id, index)` tasks,
`_ResumeIteration()` to start a new epoch (persistent workers), and None to stop. The worker
answers on the shared result queue with `(task_id, payload)`, where payload is the pickled
batch (bytes), or with `(_ResumeIteration, None)` to acknowledge a new epoch. A payload
unpickles as a batch, a `_WorkerError`, or an `_IterableDatasetStopIteration`.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ... import _random
from . import _collate, _fetch, _start

# How often a waiting worker checks that its parent is alive, and a waiting main process
# that its workers are (seconds), as PyTorch
MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker: its id, the number of workers, its
    seed (the loader's base seed + id) and its own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object | None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of the current DataLoader worker process; None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class _KeyErrorMessage(str):
    """KeyError shows repr() of its argument; this keeps a multi-line message readable."""

    def __repr__(self):
        return self


class _WorkerError:
    """An exception caught in a worker: its type and formatted traceback, re-raised in the
    main process as `Caught <Type> in DataLoader worker process <i>.` + the traceback."""

    def __init__(self, where: str):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            # an exception class that cannot be built from one message
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            # a local naming the exception would keep its traceback's frames (and the
            # loader's iterator in them) in a cycle: the iterator's shutdown would then wait
            # for the garbage collector, which may close its queues first
            del exc


def _encode(data, where: str) -> bytes:
    """Pickle a worker's answer here, not in the result queue's feeder thread: an unpicklable
    batch then reaches the main process as an error instead of being lost."""
    try:
        return pickle.dumps(data, pickle.HIGHEST_PROTOCOL)
    except Exception:
        err = _WorkerError(where)
    try:
        return pickle.dumps(err, pickle.HIGHEST_PROTOCOL)
    except Exception:  # the exception's own class cannot be pickled (a local class)
        err.exc_type = RuntimeError
        return pickle.dumps(err, pickle.HIGHEST_PROTOCOL)


def _host_only() -> None:
    """Keep a worker's JAX on the CPU: batches are host data, and a worker that initialised a
    GPU backend would claim accelerator memory the main process needs. Takes effect only if
    nothing in the worker has used JAX yet, hence the _HostOnly marker below."""
    import jax
    try:
        jax.config.update("jax_platforms", "cpu")
    except Exception:  # pragma: no cover - a JAX that refuses the change once initialised
        pass


class _HostOnly:
    """Passed as a worker's first argument: unpickling it in the new process switches JAX to
    the CPU before the dataset (which may hold tensors) is unpickled."""

    def __reduce__(self):
        return (_make_host_only, ())


def _make_host_only() -> _HostOnly:
    _host_only()
    return _HostOnly()


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Python's, torchjax's and numpy's global generators differently in every worker."""
    seed = base_seed + worker_id
    random.seed(seed)
    _random.manual_seed(seed)
    mix = np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32])
    np.random.seed(mix.generate_state(4))
    return seed


def create_fetcher(kind: int, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    """kind: 0 map-style, 1 iterable (the values of dataloader._DatasetKind)."""
    cls = _fetch._IterableDatasetFetcher if kind == 1 else _fetch._MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _worker_loop(_host_only_marker, dataset_kind, dataset, index_queue, data_queue, done_event,
                 auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                 num_workers, forked=False):
    """The body of a worker process (see the protocol in the module docstring)."""
    global _worker_info
    if forked:
        _start.guard_forked_worker()  # no XLA program in a forked process (see _start)
    else:
        _host_only()  # a no-op after _HostOnly's unpickling
    where = f"in DataLoader worker process {worker_id}"
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        collate_fn = _collate.for_worker(collate_fn)
        fetcher = init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            init_error = _encode(_WorkerError(where), where)
        ended = False
        # the loader's process (under forkserver the OS parent is the fork server instead)
        parent = multiprocessing.parent_process()
        while parent.is_alive():
            try:
                msg = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(msg, _ResumeIteration):
                data_queue.put((msg, None))
                ended = False
                if init_error is None:
                    fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                             drop_last)
                continue
            if msg is None:
                break
            if done_event.is_set() or ended:
                continue
            task_id, index = msg
            if init_error is not None:
                data_queue.put((task_id, init_error))
                continue
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if dataset_kind != 1:
                    data = _WorkerError(where)
                else:
                    data = _IterableDatasetStopIteration(worker_id)
                    ended = True
            except Exception:
                data = _WorkerError(where)
            data_queue.put((task_id, _encode(data, where)))
            del data, index, msg  # hold no batch while waiting for the next task
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group; the main process handles it
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
