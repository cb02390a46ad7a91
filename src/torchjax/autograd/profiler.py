"""torchjax.autograd.profiler: the older profiler API, on torchjax.profiler's recorder."""

from __future__ import annotations

from ..profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerActivity,
    kineto_available,
    record_function,
)
from ..profiler import profile as _profile

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg",
           "ProfilerActivity", "kineto_available", "emit_nvtx", "emit_itt"]


class profile(_profile):
    """torch.autograd.profiler.profile(enabled=True, ...): records while `enabled`."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack)
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self.start()
        return self

    def __exit__(self, *exc) -> bool:
        if self.enabled:
            self.stop()
        return False

    @property
    def function_events(self) -> EventList:
        return self.events()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        return self.events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)


class emit_nvtx:
    """Accepted and inert: NVTX ranges come from record_function's JAX annotations."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


emit_itt = emit_nvtx
