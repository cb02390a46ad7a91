"""nn.Module's hooks: the hooks registered on every module (register_module_*_hook), and the
per-module registration and the call that runs them (Module._call_impl), as PyTorch's."""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..._hooks import RemovableHandle
from ..._tensor import Tensor
from ._backward_hook import BackwardHook, NodeHook, maybe_warn_non_full_backward_hook
from ._watched import WatchedOrderedDict


class _WrappedHook:
    """A hook called with its module (held weakly) as first argument."""

    def __init__(self, hook: Callable, module=None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# Hooks shared by every module (PyTorch keeps them for debugging and profiling); the global
# forward hooks fire before each module's own.
_global_buffer_registration_hooks: dict[int, Callable] = OrderedDict()
_global_module_registration_hooks: dict[int, Callable] = OrderedDict()
_global_parameter_registration_hooks: dict[int, Callable] = OrderedDict()
_global_forward_pre_hooks: dict[int, Callable] = WatchedOrderedDict()
_global_forward_hooks: dict[int, Callable] = WatchedOrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()


def _register_global(store: dict, hook: Callable) -> RemovableHandle:
    handle = RemovableHandle(store)
    store[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """hook(module, name, buffer) -> None or a replacement, run by every register_buffer."""
    return _register_global(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """hook(module, name, submodule) -> None or a replacement, run by every add_module."""
    return _register_global(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """hook(module, name, param) -> None or a replacement, run by every register_parameter."""
    return _register_global(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable[..., None]) -> RemovableHandle:
    """hook(module, args) -> None or new args, before every module's forward."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., None], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """hook(module, args, output) (or (module, args, kwargs, output)) -> None or a new output,
    after every module's forward."""
    handle = RemovableHandle(_global_forward_hooks,
                             extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


_global_backward_pre_hooks: dict[int, Callable] = WatchedOrderedDict()
_global_backward_hooks: dict[int, Callable] = WatchedOrderedDict()
# whether the global backward hooks are full ones (True) or legacy ones (False); set by the
# first registration and kept after the hooks are removed, as in PyTorch
# (which kind the global backward hooks are lives in nn.modules.module, where PyTorch keeps
# it and code resets it: `torch.nn.modules.module._global_is_full_backward_hook = None`)


def _module():
    from . import module
    return module


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Legacy hook(module, grad_input, grad_output) for every module (deprecated in favour of
    register_module_full_backward_hook)."""
    m = _module()
    if m._global_is_full_backward_hook is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    m._global_is_full_backward_hook = False
    return _register_global(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_output) -> None or a new grad_output, for every module; runs before
    the modules' own backward pre-hooks."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """hook(module, grad_input, grad_output) -> None or a new grad_input, for every module;
    runs before the modules' own backward hooks."""
    m = _module()
    if m._global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    m._global_is_full_backward_hook = True
    return _register_global(_global_backward_hooks, hook)


class ModuleHooks:
    """Module's hook methods (a base of Module)."""

    # -- hooks -----------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) -> None or new args (a single value is wrapped in a tuple); with
        with_kwargs, hook(module, args, kwargs) -> None or (new_args, new_kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) ->
        None or a new output; always_call hooks also run when forward raises."""
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs,
                                             self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) -> None or a new grad_output (a tuple, None for non-Tensor
        outputs), when the gradients of the module's outputs are known."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Legacy hook(module, grad_input, grad_output) on the grad_fn of the module's first
        output (deprecated in favour of register_full_backward_hook)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or a new grad_input, when the gradients
        of the module's positional inputs are known (grad_output's alone when no input needs a
        gradient). Entries are None for non-Tensor arguments."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _get_backward_hooks(self) -> tuple[list, list]:
        """(full hooks, legacy hooks) for this call: the global ones first."""
        full: list[Callable] = []
        legacy: list[Callable] = []
        for is_full, hooks in ((_module()._global_is_full_backward_hook,
                                _global_backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if is_full is True:
                full += hooks.values()
            elif is_full is False:
                legacy += hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_hooks
                or _global_forward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        result = None
        called_always = set()
        try:
            # the hook lists are taken before any hook runs (a forward pre-hook that registers
            # a backward hook affects the next call only)
            full_hooks, legacy_hooks = (self._get_backward_hooks() if self._backward_hooks
                                        or _global_backward_hooks else ([], []))
            backward_pre_hooks = (self._get_backward_pre_hooks() if self._backward_pre_hooks
                                  or _global_backward_pre_hooks else [])
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if isinstance(res, tuple) and len(res) == 2:
                            args, kwargs = res
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {res}.")
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            bw_hook = None
            if full_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            out = self.forward(*args, **kwargs)
            if bw_hook is not None:
                bw_hook.check_inputs_unchanged()
            result = out
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always.add(hook_id)
                if (hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs):
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  "Tensor or a tuple of Tensors but received "
                                  f"{type(result)}", stacklevel=2)
                result = bw_hook.setup_output_hook(result)
            if legacy_hooks:
                self._add_legacy_backward_hooks(legacy_hooks, args, result)
            return result
        except Exception:
            self._run_always_called_hooks(args, kwargs, result, called_always)
            raise

    def _add_legacy_backward_hooks(self, hooks: list, args: tuple, result) -> None:
        """Legacy hooks hang on the grad_fn of the first tensor found in the output."""
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(NodeHook(_WrappedHook(hook, self)))
            maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def _run_always_called_hooks(self, args, kwargs, result, called) -> None:
        """After forward (or a hook) raised: run the always_call hooks not run yet; their own
        errors become warnings so the original error propagates."""
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in called:
                try:
                    res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised "
                                  "an exception that was silenced as another error was raised "
                                  f"in forward: {str(e)}", stacklevel=3)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        res = hook(self, args, kwargs, result)
                    else:
                        res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  f"forward: {str(e)}", stacklevel=3)
