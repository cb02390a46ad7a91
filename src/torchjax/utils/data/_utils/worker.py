"""torch.utils.data._utils.worker: WorkerInfo and get_worker_info."""

from .._worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
