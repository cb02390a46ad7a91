"""What dcp.save and dcp.load share: the job's processes, the storage a call uses."""

from __future__ import annotations

import warnings


def job(no_dist: bool, process_group, verb: str) -> tuple:
    """(rank, world size) of this call, warning as PyTorch does without a process group."""
    import jax

    from .. import _process_group
    if process_group is not None:
        raise NotImplementedError(f"dcp.{verb}(process_group=) is not supported by torchjax: "
                                  f"every process of the job takes part")
    if no_dist or not _process_group.is_initialized():
        warnings.warn(f"torch.distributed is disabled, unavailable or uninitialized, assuming "
                      f"the intent is to {verb} in a single process.", stacklevel=3)
        if jax.process_count() > 1:
            raise NotImplementedError(f"dcp.{verb}(no_dist=True) in a job of several "
                                      f"processes is not supported by torchjax")
    return jax.process_index(), jax.process_count()


def storage(given, checkpoint_id, kind):
    if given is not None:
        if checkpoint_id is not None:
            given.reset(checkpoint_id)
        return given
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer "
                           "is None.")
    if not kind.validate_checkpoint_id(checkpoint_id):
        raise RuntimeError("Cannot detect which StorageReader or StorageWriter to use. Please "
                           "specify the storage_reader/storage_writer.")
    return kind(checkpoint_id)


def refuse_planner(planner, verb: str, allowed) -> None:
    if planner is not None and not isinstance(planner, allowed):
        raise NotImplementedError(f"dcp.{verb}(planner={type(planner).__name__}) is not "
                                  f"supported by torchjax: only {allowed.__name__}")
