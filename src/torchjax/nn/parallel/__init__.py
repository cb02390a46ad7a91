"""torchjax.nn.parallel: DataParallel on one device, and DistributedDataParallel's name.

DataParallel wraps a module and calls it as it is: torchjax runs a model on one device per
process, so there is nothing to split. It keeps PyTorch's shape of the wrapper (`.module`,
state_dict keys prefixed "module."), so checkpoints and code written for it still fit.
DistributedDataParallel needs torch.distributed's process groups, which torchjax does not
have yet: constructing one raises.
"""

from __future__ import annotations

import warnings

from ..modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """Calls `module` on one device; device_ids with more than one device warns."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if device_ids is not None and len(device_ids) > 1:
            warnings.warn("DataParallel: torchjax runs the module on one device; the batch is "
                          "not split across device_ids", stacklevel=2)
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """module(*inputs, **module_kwargs), on one device."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))


class DistributedDataParallel(Module):
    """Importable for scripts that refer to it; constructing one raises."""

    def __init__(self, module: Module, *args, **kwargs):
        raise NotImplementedError(
            "torch.nn.parallel.DistributedDataParallel is not supported by torchjax: "
            "multi-process data parallel training is not available yet (torch.distributed has "
            "no process groups); train in one process, or use DataParallel(model), which runs "
            "the model on one device")
