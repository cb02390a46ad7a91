"""torchjax.backends.xla: how 64-bit dtypes are stored on accelerators (torchjax only).

PyTorch/XLA users set `XLA_USE_32BIT_LONG=1` to keep `torch.long` tensors as 32-bit integers
on TPU; torchjax reads the same variable and offers the switch per JAX platform here. See
docs/distributed.md, "Dtypes on accelerators".

    import torchjax as torch
    torch.backends.xla.set_dtype_policy("gpu", long="int32")
    torch.backends.xla.get_dtype_policy("tpu")   # {'long': 'int32', 'double': 'error'}
"""

from .._device_dtypes import get_dtype_policy, set_dtype_policy

__all__ = ["set_dtype_policy", "get_dtype_policy"]
