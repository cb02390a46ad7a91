"""nn.Module: parameters, buffers and submodules registered by attribute assignment, modes,
gradients and printing, with PyTorch's rules and messages. Its bases hold the rest, each a
concept of its own: hooks (_module_hooks), state dicts (_module_state), dtype and device
conversion (_module_convert) and traversal (_module_traversal)."""

from __future__ import annotations

__all__ = ["Module"]

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..._tensor import Tensor
from ..parameter import Buffer, Parameter
from . import _watched
from ._module_convert import ModuleConversions
from ._module_hooks import (  # noqa: F401 - PyTorch's names in torch.nn.modules.module
    ModuleHooks,
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_buffer_registration_hooks,
    _global_forward_hooks,
    _global_forward_hooks_always_called,
    _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks,
    _global_module_registration_hooks,
    _global_parameter_registration_hooks,
    _WrappedHook,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from ._module_state import _EXTRA_STATE_KEY_SUFFIX, ModuleStateDict, _IncompatibleKeys  # noqa: F401
from ._module_traversal import ModuleTraversal
from ._watched import WatchedDict, WatchedOrderedDict

# whether the global backward hooks are full ones (True), legacy ones (False) or none yet
# (read and set by _module_hooks; PyTorch keeps it here)
_global_is_full_backward_hook: bool | None = None


def _typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a tensor, the qualified class name otherwise
    (torchjax's own classes are named as PyTorch's)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    if module == "torchjax" or module.startswith("torchjax."):
        module = "torch" + module[len("torchjax"):]
    return f"{module}.{qualname}"


def _addindent(s: str, num_spaces: int) -> str:
    """Indent every line after the first; blank lines stay empty (as PyTorch 2.13 prints)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    rest = [" " * num_spaces + line if line.strip() else "" for line in lines[1:]]
    return lines[0] + "\n" + "\n".join(rest)


def _forward_unimplemented(self, *input: Any) -> None:
    """The computation: every subclass overrides it. Call the module (`m(x)`), not `forward`,
    so that forward pre-hooks and hooks run.
    """
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module(ModuleHooks, ModuleStateDict, ModuleConversions, ModuleTraversal):
    """Base class of every layer and model, with PyTorch's registration rules."""

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__ skips Module.__setattr__'s registration logic for the internals
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", WatchedDict())
        setattr_("_buffers", WatchedDict())
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", WatchedOrderedDict())
        setattr_("_backward_hooks", WatchedOrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", WatchedOrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", WatchedOrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", WatchedDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented
    """The computation: every subclass overrides it. Call the module (`m(x)`), not `forward`,
    so that forward pre-hooks and hooks run."""

    # -- registration ----------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter); non-persistent buffers are left out of
        the state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a slot that state_dict and conversions skip)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as an attribute."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("" is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless strict, add) the submodule at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer


    # Module.compile() sets this (on the instance) to the compiled _call_impl
    _compiled_call_impl = None

    def __call__(self, *args, **kwargs):
        compiled = self._compiled_call_impl
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def share_memory(self) -> Module:
        """Tensor.share_memory_ on every parameter, gradient and buffer: processes started
        by torch.multiprocessing then train one model (Hogwild)."""
        from ..._shared_memory import share_module
        return share_module(self)

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's calls in place (PyTorch 2's Module.compile): the arguments
        are torchjax.compile's. The compiled call runs the module's _call_impl, hooks
        included."""
        from ...compiler import CompiledFunction, compile
        compiled = compile(self._call_impl, *args, **kwargs)
        if isinstance(compiled, CompiledFunction):
            object.__setattr__(self, "_compiled_call_impl", compiled)

    # -- attributes ------------------------------------------------------------------------

    def __getstate__(self):
        # the watched dicts are torchjax's own bookkeeping: pickle them as the plain dicts
        # PyTorch's modules hold, so a saved module names only globals PyTorch's
        # weights_only loader allows (torch.serialization.safe_globals lists modules only)
        state = self.__dict__.copy()
        for name in _watched.ATTRS & state.keys():
            state[name] = _watched.plain(state[name])
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled by older versions lack the newer internals
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        for name in _watched.ATTRS & self.__dict__.keys():  # (pickled by an older version)
            self.__dict__[name] = _watched.watched(self.__dict__[name])
        _watched.CHANGES[0] += 1
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*stores):
            for s in stores:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            self._set_module(modules, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._set_module(modules, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        # what compiled functions' guards read (see _watched): any attribute, since a
        # module's forward may read its numbers and flags (Dropout's p, a scale)
        _watched.CHANGES[0] += 1
        if name in _watched.ATTRS:
            value = _watched.watched(value)
        object.__setattr__(self, name, value)

    def _set_module(self, modules: dict, name: str, value) -> None:
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, value)
            if output is not None:
                value = output
        modules[name] = value

    def __delattr__(self, name) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            _watched.CHANGES[0] += 1
            super().__delattr__(name)

    # -- modes and gradients ---------------------------------------------------------------

    def train(self, mode: bool = True):
        """Sets training mode (dropout active, batch norm updating its statistics) here and in submodules.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.train.html.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Sets evaluation mode: `train(False)`.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.eval.html.
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Sets `requires_grad` of every parameter; returns the module.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.requires_grad_.html.
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter (to None by default, as PyTorch 2 does).

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.zero_grad.html.
        """
        for p in self.parameters():
            grad = p.grad
            if grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    # -- printing --------------------------------------------------------------------------

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The module's own settings in its repr; one or several lines."""
        return ""

    def __repr__(self) -> str:
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())


# the methods Module takes from its bases are Module's, as PyTorch names them
# (`<function Module.state_dict>`, the reference docs)
for _base in (ModuleHooks, ModuleStateDict, ModuleConversions, ModuleTraversal):
    for _name, _f in vars(_base).items():
        if callable(_f) and hasattr(_f, "__qualname__"):
            _f.__qualname__ = f"Module.{_name}"
            _f.__module__ = __name__
