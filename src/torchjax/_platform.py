"""torch.get_device_module, is_storage, is_distributed, compiled_with_cxx11_abi,
init_num_threads and set_flush_denormal: queries and switches about the build and platform
that scripts call at their start, answered for torchjax's."""

from __future__ import annotations

import importlib

import numpy as np

from ._device import device as _device_type
from ._tensor import Tensor

__all__ = ["get_device_module", "is_storage", "is_distributed", "compiled_with_cxx11_abi",
           "init_num_threads", "set_flush_denormal", "is_vulkan_available"]


def get_device_module(device=None):
    """The torch.<type> module of a device (torch.cuda for "cuda:0"); with no device, that of
    the accelerator JAX has, else torch.cpu."""
    if device is None:
        from . import cuda
        return cuda if cuda.is_available() else importlib.import_module("torchjax.cpu")
    kind = _device_type(device).type if isinstance(device, (str, _device_type)) else None
    if kind is None:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           f"None")
    if kind in ("cpu", "cuda"):
        return importlib.import_module(f"torchjax.{kind}")
    raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                       f"'torch.{kind}'.")


def is_storage(obj, /) -> bool:
    """Whether obj is a storage (what Tensor.untyped_storage() / storage() return)."""
    from .storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_distributed(input) -> bool:
    """False: a torchjax tensor is never a distributed one."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


def compiled_with_cxx11_abi() -> bool:
    """True, as PyTorch 2.13's builds: C++ extensions built against torch cannot load into
    torchjax in any case."""
    return True


def init_num_threads() -> None:
    """Nothing to do: XLA sizes its thread pool when its CPU backend starts."""


def set_flush_denormal(mode) -> bool:
    """False, PyTorch's answer where flushing denormals is not supported: XLA's CPU kernels
    decide it themselves."""
    if not isinstance(mode, (bool, np.bool_)):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def is_vulkan_available() -> bool:
    """False: no Vulkan backend."""
    return False


_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
    "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
    "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
    "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
    "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


def _reinforce(self, reward):
    """Removed from PyTorch: raises its RuntimeError pointing to torch.distributions."""
    raise RuntimeError(_REINFORCE)


Tensor.reinforce = _reinforce


def _tensor_is_distributed(self) -> bool:
    """False: a torchjax tensor is never a distributed one."""
    return False


def _module_load(self, other, assign=False):
    """What nn.Module.load_state_dict puts in this parameter's place when swapping tensors:
    other detached (assign=True), or self with other's values copied in, detached."""
    return other.detach() if assign else self.copy_(other).detach()


Tensor.is_distributed = _tensor_is_distributed
Tensor.module_load = _module_load


# Device kinds and layouts torchjax tensors never are (JAX's devices are torch's cpu, cuda and
# tpu; no MKL-DNN, quantized or nested tensors). Scripts written for several backends test
# them before choosing a path (dcgan: `input.is_cuda or input.is_xpu`). is_xla stays False
# too: scripts that see it use torch_xla's own calls (xm.mark_step), which torchjax lacks.
_NEVER = ("is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia", "is_vulkan",
          "is_mkldnn", "is_quantized", "is_nested")


def _never(name):
    return property(lambda self: False,
                    doc=f"False: a torchjax tensor is never one that `Tensor.{name}` is True for.")


for _name in _NEVER:
    setattr(Tensor, _name, _never(_name))
