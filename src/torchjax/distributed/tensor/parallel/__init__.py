"""torchjax.distributed.tensor.parallel: tensor parallelism as weight and activation layouts."""

from ._api import parallelize_module
from ._style import (
                     ColwiseParallel,
                     ParallelStyle,
                     PrepareModuleInput,
                     PrepareModuleOutput,
                     RowwiseParallel,
                     SequenceParallel,
)

__all__ = ["parallelize_module", "ParallelStyle", "ColwiseParallel", "RowwiseParallel",
           "SequenceParallel", "PrepareModuleInput", "PrepareModuleOutput"]
