"""DataLoader: batches from a dataset, in the main process or in worker processes.

Workers are real processes, started as PyTorch starts them: forked on Linux (so they
inherit the dataset, the collate function and the main module, whatever those are), or
with `multiprocessing_context`'s method. JAX cannot run programs in a forked process, so a
forked worker runs none: workers batch numbers and numpy arrays with numpy and send the
arrays, and the main process turns them into tensors as it unpickles them (see _collate);
_start says what a forked worker can and cannot do, and checks what spawn and forkserver
workers need before they start.
"""

from __future__ import annotations

import atexit
import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import signal
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from . import _start, _worker
from ._collate import default_collate, default_convert
from ._worker import MP_STATUS_CHECK_INTERVAL, get_worker_info
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_T_co = TypeVar("_T_co", covariant=True)

# Set at interpreter exit: iterators collected then must not talk to workers, whose queues
# and modules may already be gone (daemonic workers are terminated by multiprocessing).
_python_exiting = False


def _set_exiting() -> None:
    global _python_exiting
    _python_exiting = True


atexit.register(_set_exiting)


class _DatasetKind:
    """Which kind of dataset a DataLoader fetches from: map-style or iterable (PyTorch's name)."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        """Makes the object that fetches a batch from `dataset` (map-style or iterable) for the
        loader.
        """
        return _worker.create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        try:
            return len(os.sched_getaffinity(0))
        except OSError:
            pass
    return os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Iterates over batches of `dataset` (see PyTorch's torch.utils.data.DataLoader)."""

    __initialized = False

    def __init__(self, dataset: Dataset[_T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            # PyTorch's message (its literals are joined without a space)
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None  # len(dataset) as reported by len(loader)
        self._iterator = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The multiprocessing context the worker processes are started with (None for the
        default).
        """
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Map:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(
                length / self.batch_size)
        return length

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpus = _cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker "
                          "in current system.")
        else:
            cpuset = "" if hasattr(os, "sched_getaffinity") else (
                " (`cpuset` is not taken into account)")
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{cpuset}, which is smaller than what this DataLoader is going to "
                          "create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggestion} Please be aware that excessive worker creation "
                      "might get DataLoader running slow or even freeze, lower the worker "
                      "number to avoid potential slowness/freeze if necessary.", stacklevel=2)


def _accelerator_available() -> bool:
    import jax
    return jax.default_backend() != "cpu"


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        # pin_memory is accepted and does nothing: pinned host memory has no JAX counterpart
        # (host-to-device copies are JAX's business); PyTorch's warnings are kept
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          "used as the device,ignore "
                          f"pin_memory_device='{loader.pin_memory_device}'.", stacklevel=2)
        if loader.pin_memory and not _accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if (self._dataset_kind == _DatasetKind.Iterable and reported is not None
                and self._num_yielded > reported):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {reported}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been "
                   "fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # StopIteration ends the epoch
        return self._dataset_fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Keeps prefetch_factor tasks per worker in flight, hands tasks out round robin and
    returns results in task order (or as they come with in_order=False)."""

    _shutdown = True  # until there are workers to shut down

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context
        ctx = _start.default_context() if ctx is None else _start.context(ctx)
        self._start_method = method = ctx.get_start_method()
        if method != "fork":
            _start.check_spawnable(method, {"dataset": self._dataset,
                                            "collate_fn": self._collate_fn,
                                            "worker_init_fn": loader.worker_init_fn})
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        self._owner_pid = os.getpid()  # a forked worker inherits this iterator: not its own
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()  # never block exit on unsent tasks
                w = ctx.Process(target=_worker._worker_loop, daemon=True, args=(
                    _worker._HostOnly(), self._dataset_kind, self._dataset, index_queue,
                    self._worker_result_queue, self._workers_done_event, self._auto_collation,
                    self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn,
                    i, self._num_workers, method == "fork"))
                _start.start(w)
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the id of the next task to send
        self._rcvd_idx = 0  # the id of the next task to return
        self._task_info = {}  # task id -> (worker id,) or, once received early, (worker id, data)
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart every worker's epoch and drop what is still in
            # flight from the previous one (it arrives before the acknowledgements)
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending:
                task_id, _ = self._get_data()
                if isinstance(task_id, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = MP_STATUS_CHECK_INTERVAL):
        # wait for a message or for an active worker to exit, whichever comes first: a
        # worker that dies is reported at once, not at the next status check
        active = [w for i, w in enumerate(self._workers) if self._workers_status[i]]
        multiprocessing.connection.wait(
            [self._data_queue._reader, *(w.sentinel for w in active)], timeout)
        try:
            return True, self._data_queue.get(block=False)
        except queue.Empty:
            failed = [w for w in active if not w.is_alive()]
            if failed:
                for i, w in enumerate(self._workers):
                    if w in failed:
                        self._mark_worker_as_unavailable(i)
                raise RuntimeError(self._exit_message(failed)) from None
            return False, None

    def _exit_message(self, failed) -> str:
        killed = [w for w in failed if w.exitcode is not None and w.exitcode < 0]
        if killed:
            w = killed[0]
            return (f"DataLoader worker (pid {w.pid}) is killed by signal: "
                    f"{signal.strsignal(-w.exitcode)}.")
        pids = ", ".join(str(w.pid) for w in failed)
        msg = f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
        if self._start_method != "fork":
            msg += (f". Workers started with '{self._start_method}' import the main module "
                    "again and unpickle the dataset, collate_fn and worker_init_fn; the "
                    "worker's own error output says what failed there. Passing "
                    "multiprocessing_context='fork' avoids both")
        return msg

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip the tasks of workers that stopped (an exhausted iterable dataset)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived early
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            task_id, payload = self._get_data()
            data = pickle.loads(payload)
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task_id == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(task_id)[0]
                if task_id == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            self._task_info[task_id] += (data,)

    def _next_worker(self) -> int | None:
        """The next active worker (round robin) with room for a task, if any."""
        max_tasks = self._prefetch_factor * self._num_workers
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if not self._workers_status[worker_id]:
                continue
            if self._in_order or (self._workers_num_tasks[worker_id]
                                  < max_tasks // sum(self._workers_status)):
                return worker_id
        return None

    def _try_put_index(self) -> None:
        worker_id = self._next_worker()
        if worker_id is None:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _worker._WorkerError):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._index_queues[worker_id].put(None)  # asks the worker to exit
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if _python_exiting or self._shutdown or os.getpid() != self._owner_pid:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            # before the first _reset (a failed start) every worker counts as active
            status = getattr(self, "_workers_status", [True] * len(self._workers))
            for i, active in enumerate(status):
                if active or self._persistent_workers:
                    self._mark_worker_as_unavailable(i)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        self._shutdown_workers()
