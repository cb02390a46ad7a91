"""torchjax.autograd.graph: the graph's Node type and hooks on what nodes save for backward."""

from __future__ import annotations

import jax

from .._autograd.node import Node
from .._autograd.saved_hooks import STATE as _STATE

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Inside this context, every tensor a new graph node saves for backward is replaced by
    pack_hook(tensor); backward gets unpack_hook(packed) back in its place.

    Example: keep saved activations elsewhere until backward needs them::

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = a * b
    """

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _STATE.disabled is not None:
            raise RuntimeError(_STATE.disabled)
        _STATE.stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args) -> None:
        _STATE.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors move to host (CPU) memory after the forward and back to their device for
    backward: trades transfer time for accelerator memory."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        from .._tensor import Tensor

        cpu = jax.devices("cpu")[0]

        def pack(t):
            arr = t._data
            # the sharding says where (and how split) the array lived: restored on unpack
            return (arr.sharding, jax.device_put(arr, cpu))

        def unpack(packed):
            sharding, arr = packed
            return Tensor._wrap(jax.device_put(arr, sharding))

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside this context, entering saved_tensors_hooks raises `error_message`."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self.prev = _STATE.disabled
        _STATE.disabled = self.error_message

    def __exit__(self, *args) -> None:
        _STATE.disabled = self.prev
