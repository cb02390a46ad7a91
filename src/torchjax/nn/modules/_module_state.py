"""nn.Module's state dict: state_dict, load_state_dict and their hooks, as PyTorch's."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..._autograd.grad_mode import no_grad
from ..._hooks import RemovableHandle
from ..._tensor import Tensor
from ..parameter import Parameter, is_lazy
from ._module_hooks import _register_global, _WrappedHook

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(NamedTuple("IncompatibleKeys", [("missing_keys", list),
                                                        ("unexpected_keys", list)])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class ModuleStateDict:
    """Module's state-dict methods (a base of Module)."""

    def get_extra_state(self) -> Any:
        """Override (with set_extra_state) to store extra picklable state in the state_dict."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Override (with get_extra_state) to restore extra state from a loaded state_dict."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    # -- state dict ------------------------------------------------------------------------

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None or a new state_dict (used
        only when returned to the root module's call)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _register_global(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None; may edit state_dict."""
        hook._from_public_api = True
        return _register_global(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """hook(module, prefix, keep_vars) -> None, before state_dict collects this module."""
        return _register_global(self._state_dict_pre_hooks, hook)

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not ModuleStateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer (detached unless keep_vars),
        keyed by dotted names: each module's own entries first, then its children's."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) (with the module first when with_module), before this module loads."""
        return _register_global(self._load_state_dict_pre_hooks,
                                _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None, before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """hook(module, incompatible_keys) -> None, after load_state_dict loaded this module;
        it may edit the key lists in place (clearing them avoids the strict error)."""
        return _register_global(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        """Load this module's own parameters and persistent buffers (not its children's)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(input_param)}")
                continue
            lazy = is_lazy(param)
            # a 1-element 1-d checkpoint entry loads into a 0-d parameter (old checkpoints)
            if (not lazy and len(param.shape) == 0 and len(input_param.shape) == 1
                    and input_param.shape[0] == 1):
                input_param = input_param[0]
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not ModuleStateDict.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False):
        """Copy parameters and buffers from state_dict into this module and its descendants.

        Returns (missing_keys, unexpected_keys). With strict, either list being non-empty is an
        error; a size mismatch always is. On an error nothing is changed: the module's tensors
        are restored before the RuntimeError is raised."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items()
                                        if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        snapshot = _snapshot(self)
        try:
            load(self, state_dict)
        except BaseException:
            _restore(snapshot)
            raise
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            _restore(snapshot)
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)


def _snapshot(root) -> list:
    """What load_state_dict may change: each module's parameter/buffer tables and each
    tensor's values and class (a lazy parameter materialises into a Parameter)."""
    snap = []
    for m in root.modules():
        tensors = [(t, t._data, t.__class__)
                   for t in itertools.chain(m._parameters.values(), m._buffers.values())
                   if t is not None]
        snap.append((m, dict(m._parameters), dict(m._buffers), tensors))
    return snap


def _restore(snap: list) -> None:
    for m, params, buffers, tensors in snap:
        m._parameters.clear()
        m._parameters.update(params)
        m._buffers.clear()
        m._buffers.update(buffers)
        for t, data, cls in tensors:
            if t.__class__ is not cls:
                t.__class__ = cls
            if t._data is not data:
                t.data = Tensor._wrap(data)
