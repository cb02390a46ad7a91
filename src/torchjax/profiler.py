"""torchjax.profiler: wall-clock timing of the regions a script marks, in PyTorch's API.

`profile()` records each `record_function` region closed while it is recording (and, once
`step()` is called, each step as "ProfilerStep#N"); `key_averages().table()` sums them by
name and `export_chrome_trace()` writes them for chrome://tracing or Perfetto. It does not
time every op as PyTorch's profiler does: for op-level and device timing, take a JAX trace
(`jax.profiler.trace(log_dir)`), where every record_function region shows up as well, since
record_function also opens a `jax.profiler.TraceAnnotation`. Times are the host's: with
asynchronous dispatch (GPU), synchronize inside a region to include the device's work.

    with torch.profiler.profile() as prof:
        with torch.profiler.record_function("forward"):
            model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total"))
"""

from __future__ import annotations

import contextlib
import enum
import os
import threading
import time
from collections.abc import Callable

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "kineto_available",
           "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profiler can record; torchjax times CPU regions (and CUDA ones when a GPU is present).

    See https://pytorch.org/docs/stable/profiler.html.
    """

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during one step, as a schedule says."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities this machine supports: CPU, plus CUDA when JAX sees a GPU."""
    from . import cuda
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


def kineto_available() -> bool:
    """False: torchjax does not use PyTorch's Kineto tracer."""
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """Step number -> action: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last saves the trace), `repeat` times
    (0: no end). skip_first_wait drops the first cycle's wait."""
    for name, value, low in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                             ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
        if value < low:
            raise ValueError(f"schedule: {name} must be >= {low}, got {value}")
    period = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // period >= repeat:
            return ProfilerAction.NONE
        pos = step % period
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < period - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An on_trace_ready that writes each trace to `dir_name` as <worker>.<time>.pt.trace.json
    (TensorBoard's profiler plugin and Perfetto read these files)."""

    def handler(prof) -> None:
        import socket
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json")
        if use_gzip:
            path += ".gz"
        prof.export_chrome_trace(path)

    return handler


class FunctionEvent:
    """One closed region: its name, thread and times in microseconds."""

    def __init__(self, name: str, start_ns: int, thread: int):
        self.name = name
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.child_ns = 0
        self.count = 1

    key = property(lambda self: self.name, doc="The name events are grouped by.")
    cpu_time_total = property(lambda self: (self.end_ns - self.start_ns) / 1e3,
                              doc="Host time from start to end, in microseconds.")
    self_cpu_time_total = property(
        lambda self: (self.end_ns - self.start_ns - self.child_ns) / 1e3,
        doc="Host time in microseconds, not counting nested events.")
    cpu_time = cpu_time_total
    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return f"<FunctionEvent {self.name} cpu_time_total={self.cpu_time_total:.1f}us>"


class FunctionEventAvg:
    """The events of one name, summed (times in microseconds)."""

    def __init__(self, key: str):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event) -> FunctionEventAvg:
        """Adds the count and times of `event` to this average; returns it."""
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        """The mean host time per call, in microseconds."""
        return self.cpu_time_total / max(self.count, 1)

    device_time_total = cuda_time_total = self_device_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.1f}us>")


# PyTorch's sort keys -> the attribute that holds the time here (device times are the host's)
_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "count": "count"}
for _dev in ("cuda", "device", "xpu"):
    _SORT_KEYS.update({f"{_dev}_time_total": "cpu_time_total", f"{_dev}_time": "cpu_time",
                       f"self_{_dev}_time_total": "self_cpu_time_total"})


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """Recorded events (or their key_averages), with table() and export_chrome_trace()."""

    def key_averages(self) -> EventList:
        """The events grouped by name, one FunctionEventAvg per name with its count and summed
        times.
        """
        averages: dict = {}
        for event in self:
            averages.setdefault(event.key, FunctionEventAvg(event.key)).add(event)
        return EventList(averages.values())

    def total_average(self) -> FunctionEventAvg:
        """One FunctionEventAvg summing every event."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of the events, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None, **kwargs) -> str:
        """The events as a text table: name, self time, total time, average, calls."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS and not sort_by.endswith("memory_usage"):
                raise ValueError(f"table: unknown sort_by {sort_by!r}; use one of "
                                 f"{sorted(_SORT_KEYS)}")
            if sort_by in _SORT_KEYS:  # memory is not recorded: keep the order
                rows.sort(key=lambda e: getattr(e, _SORT_KEYS[sort_by]), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        width = min(max([len("Name")] + [len(e.key) for e in rows]), max_name_column_width)
        columns = ("Self CPU", "CPU total", "CPU time avg", "# of Calls")
        line = "-" * width + "  " + "  ".join("-" * 12 for _ in columns)
        out = [header] if header else []
        out += [line, f"{'Name':<{width}}  " + "  ".join(f"{c:<12}" for c in columns), line]
        for e in rows:
            name = e.key if len(e.key) <= width else e.key[:width - 3] + "..."
            cells = (_format_time(e.self_cpu_time_total), _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time), str(e.count))
            out.append(f"{name:<{width}}  " + "  ".join(f"{c:<12}" for c in cells))
        out += [line, f"Self CPU time total: {_format_time(self.self_cpu_time_total)}"]
        return "\n".join(row.rstrip() for row in out) + "\n"

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events to `path` as a Chrome trace (JSON, gzipped if the name ends in .gz),
        viewable in Perfetto or chrome://tracing.
        """
        import gzip
        import json
        events = [{"name": e.name, "ph": "X", "cat": "user_annotation", "pid": os.getpid(),
                   "tid": e.thread, "ts": e.start_ns / 1e3, "dur": e.cpu_time_total}
                  for e in self if isinstance(e, FunctionEvent)]
        data = json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}).encode()
        with (gzip.open if path.endswith(".gz") else open)(path, "wb") as f:
            f.write(data)


# Profilers now recording; every region closed while one is goes to it.
_recording: list = []
_open_regions = threading.local()


def _open(name: str) -> FunctionEvent:
    stack = _open_regions.__dict__.setdefault("stack", [])
    event = FunctionEvent(name, time.perf_counter_ns(), threading.get_ident())
    stack.append(event)
    return event


def _close(event: FunctionEvent) -> None:
    event.end_ns = time.perf_counter_ns()
    stack = _open_regions.__dict__.setdefault("stack", [])
    if event in stack:
        stack.remove(event)
    if stack:  # a region's own time excludes the regions inside it
        stack[-1].child_ns += event.end_ns - event.start_ns
    for prof in _recording:
        prof._events.append(event)


class record_function(contextlib.ContextDecorator):
    """A named region, as a context manager or a decorator, timed by the active profile()."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._event = None
        self._annotation = None

    def __enter__(self):
        import jax.profiler
        self._annotation = jax.profiler.TraceAnnotation(self.name)
        self._annotation.__enter__()
        self._event = _open(self.name)
        return self

    def __exit__(self, *exc) -> bool:
        if self._event is not None:
            _close(self._event)
            self._event = None
        if self._annotation is not None:
            self._annotation.__exit__(*exc)
            self._annotation = None
        return False

    def _recreate_cm(self):
        # each decorated call gets its own region, so recursion and threads time correctly
        return record_function(self.name, self.args)


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """Records record_function regions between start() and stop() (or in a `with` block).

    With a `schedule`, call step() once per training step: steps the schedule marks RECORD
    are recorded, and at the end of each RECORD_AND_SAVE step `on_trace_ready(prof)` is
    called (e.g. tensorboard_trace_handler(dir)). The activity and detail options
    (record_shapes, profile_memory, with_stack, ...) are accepted; only times are recorded.
    """

    def __init__(self, *, activities=None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = set(activities) if activities else {ProfilerActivity.CPU}
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._events: list = []
        self._trace = EventList()
        self._step_event: FunctionEvent | None = None

    def _action_at(self, step: int) -> ProfilerAction:
        return self.schedule(step) if self.schedule is not None else ProfilerAction.RECORD

    def _set_action(self, action: ProfilerAction) -> None:
        self.current_action = action
        if action in _RECORDING and self not in _recording:
            _recording.append(self)
        elif action not in _RECORDING and self in _recording:
            _recording.remove(self)

    def _save_trace(self) -> None:
        self._trace = EventList(self._events)
        self._events = []
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _close_step(self) -> None:
        if self._step_event is not None:
            _close(self._step_event)
            self._step_event = None

    def start(self) -> None:
        """Starts profiling (what entering the `with` block does)."""
        self._set_action(self._action_at(self.step_num))
        if self.schedule is not None and self.current_action in _RECORDING:
            self._step_event = _open(f"ProfilerStep#{self.step_num}")

    def step(self) -> None:
        """Mark the end of a training step; the schedule decides what the next one does."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self._set_action(self._action_at(self.step_num))
        if previous == ProfilerAction.RECORD_AND_SAVE:
            self._save_trace()
        if self.current_action in _RECORDING:
            self._step_event = _open(f"ProfilerStep#{self.step_num}")

    def stop(self) -> None:
        """Stops profiling and, if recording, hands the trace to `on_trace_ready` (what leaving the
        `with` block does).
        """
        self._close_step()
        if self.current_action in _RECORDING:
            self._save_trace()
        self._set_action(ProfilerAction.NONE)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    def events(self) -> EventList:
        """The regions of the last saved trace."""
        return self._trace

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     **kwargs) -> EventList:
        """The last saved trace's regions summed by name (call .table() to print them)."""
        return self._trace.key_averages()

    def export_chrome_trace(self, path: str) -> None:
        """Write the last saved trace as Chrome trace JSON (gzipped if path ends in .gz)."""
        self._trace.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Not supported: torchjax records no stacks, so this raises NotImplementedError; use
        `export_chrome_trace`.
        """
        raise NotImplementedError("torch.profiler.profile.export_stacks is not supported by "
                                  "torchjax: no stacks are recorded (use export_chrome_trace)")

    @property
    def self_cpu_time_total(self) -> float:
        """The total host time in microseconds spent in the recorded events, not counting their
        children.
        """
        return self._trace.self_cpu_time_total
