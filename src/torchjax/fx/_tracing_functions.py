"""Recording torch functions called on Proxies: the stand-in for __torch_function__.

PyTorch records `torch.relu(proxy)` because a Proxy defines `__torch_function__`; torchjax
dispatches no such protocol. So at the first Tracer or Proxy of a process, each public
function of torch, torch.nn.functional, torch.special, torch.linalg and torch.fft is replaced
(in that module) by a thin wrapper: given a Proxy anywhere in its arguments it records a
call_function node whose target is the wrapper itself (so `node.target is torch.relu` holds,
and the generated code's `torch.relu(...)` calls the same object); otherwise it calls the
original.

The cost is one Python call and an argument scan per such call, in processes that trace only
(importing torch.fx alone, as timm or transformers do, wraps nothing). Code that took a
reference before the wrapping (`from torch import relu`) keeps the original: Tracer.trace
swaps such globals of the traced function for the wrappers.
"""

from __future__ import annotations

import functools
import sys
import types

from . import _functional_calls
from ._names import NAMESPACES
from .proxy import Proxy

_SCANNED = (Proxy, list, tuple, dict)

# torch functions PyTorch's __torch_function__ ignores (factories, global state, ...): they
# are left as they are (PyTorch's torch.overrides.get_ignored_functions())
_IGNORED = frozenset("""
arange are_deterministic_algorithms_enabled as_strided as_tensor asarray broadcast_shapes
can_cast compile cond empty empty_permuted empty_strided enable_grad eye fill finfo fork
from_file from_numpy frombuffer full get_default_device get_default_dtype
get_deterministic_debug_mode get_device_module get_float32_matmul_precision
get_num_interop_threads get_num_threads get_rng_state hamming_window hann_window iinfo
bartlett_window blackman_window kaiser_window inference_mode initial_seed is_anomaly_enabled
is_autocast_enabled is_grad_enabled is_inference_mode_enabled is_storage is_tensor
is_warn_always_enabled linspace load logspace manual_seed no_grad normal ones promote_types
rand rand_like randint randint_like randn randn_like randperm range result_type save
scalar_tensor seed set_anomaly_enabled set_default_device set_default_dtype
set_default_tensor_type set_deterministic_debug_mode set_float32_matmul_precision
set_flush_denormal set_grad_enabled set_num_interop_threads set_num_threads set_printoptions
set_rng_state set_warn_always sparse_coo_tensor sparse_csr_tensor tensor tril_indices
triu_indices typename use_deterministic_algorithms vander vmap wait zeros
install_as_torch get_printoptions is_nonzero while_loop
""".split())
# functional forms PyTorch records as the torch function they call
_RECORD_AS_TORCH = {"sigmoid", "tanh"}

_original_of: dict = {}   # id(wrapper) -> original
_wrapper_of: dict = {}    # id(original) -> wrapper (the torch-level one where there are two)
_installed = [False]


def _find_in(a):
    stack = [a]
    while stack:
        a = stack.pop()
        if isinstance(a, Proxy):
            return a
        if isinstance(a, (list, tuple)):
            stack.extend(a)
        elif isinstance(a, dict):
            stack.extend(a.values())
    return None


def find_proxy(args, kwargs):
    """The first Proxy in args/kwargs (looking into lists, tuples and dicts), else None.

    Every call of a wrapped torch function runs this: tensors and numbers fail one
    isinstance test and cost nothing more."""
    for a in args:
        if isinstance(a, _SCANNED):
            p = _find_in(a)
            if p is not None:
                return p
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, _SCANNED):
                p = _find_in(a)
                if p is not None:
                    return p
    return None


def _assert(condition, message):
    """torch._assert: raises AssertionError(message) unless condition is true."""
    if type(condition) is not bool and hasattr(condition, "item"):
        condition = bool(condition)
    assert condition, message


# functionals that take the stacklevel of their warning as their third argument: the wrapper
# is one more frame between them and the caller
_STACKLEVEL_ARG = frozenset({"softmax", "softmin", "log_softmax"})


def _make_wrapper(orig, record_as=None, functional_name=None):
    deeper = functional_name in _STACKLEVEL_ARG

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        p = find_proxy(args, kwargs)
        if p is None:
            if deeper:
                if len(args) > 2:
                    args = (*args[:2], args[2] + 1, *args[3:])
                else:
                    kwargs["_stacklevel"] = kwargs.get("_stacklevel", 3) + 1
            return orig(*args, **kwargs)
        if functional_name is not None:
            args, kwargs = _functional_calls.normalize(functional_name, orig, args, kwargs)
        return p.tracer.create_proxy("call_function", record_as or wrapper, args, kwargs)

    wrapper._fx_original = orig
    return wrapper


def _wrappable(name: str, obj) -> bool:
    if name in _IGNORED or (name.startswith("_") and name != "_assert"):
        return False
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)) and \
        not hasattr(obj, "_fx_original")


def install() -> None:
    """Wraps the public functions of torch's namespaces (once per process)."""
    if _installed[0]:
        return
    _installed[0] = True
    import torchjax
    if "_assert" not in vars(torchjax):
        # torch._assert: what concrete_args' specialisations call (and generated code names)
        torchjax._assert = _assert
    for modname in reversed(NAMESPACES):  # torch first: functional's sigmoid records it
        __import__(modname)
        mod = sys.modules[modname]
        for name, obj in list(vars(mod).items()):
            if not _wrappable(name, obj):
                continue
            shared = _wrapper_of.get(id(obj)) if modname != "torchjax" else None
            if shared is not None:
                # the same function as torch's (F.conv2d is torch.conv2d): one wrapper, named
                # torch.conv2d, as PyTorch prints it (aliases within one namespace, such as
                # torch.atan and torch.arctan, keep a wrapper each: a node prints its name)
                setattr(mod, name, shared)
                continue
            record_as = None
            if modname == "torchjax.nn.functional" and name in _RECORD_AS_TORCH:
                record_as = vars(torchjax).get(name)
            functional = name if modname == "torchjax.nn.functional" else None
            w = _make_wrapper(obj, record_as, functional)
            w.__name__ = w.__qualname__ = name  # node names come from it (torch.max: max_1)
            setattr(mod, name, w)
            _original_of[id(w)] = obj
            _wrapper_of.setdefault(id(obj), w)
    _patch_module_classes()


# (class, attribute name, original staticmethod) that install() replaced
_class_patches: list = []


def _patch_module_classes() -> None:
    """torch.nn's layers that keep a functional as a class attribute (Conv2d._conv =
    staticmethod(F.conv2d)) took the original at import: they get the wrapper too."""
    import torchjax.nn as nn
    seen: set = set()
    stack = [nn.Module]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
        if not (cls.__module__ or "").startswith("torchjax.nn"):
            continue
        for name, value in list(vars(cls).items()):
            if isinstance(value, staticmethod):
                w = _wrapper_of.get(id(value.__func__))
                if w is not None:
                    setattr(cls, name, staticmethod(w))
                    _class_patches.append((cls, name, value))


def wrapper_for(obj):
    """The recording wrapper standing for `obj` (an original torch function), else None."""
    return _wrapper_of.get(id(obj))


def uninstall() -> None:
    """Puts the original functions back (for tests that must leave torchjax as they found
    it); the next Tracer or install() wraps them again."""
    if not _installed[0]:
        return
    for modname in NAMESPACES:
        mod = sys.modules.get(modname)
        for name, obj in list(vars(mod).items()):
            orig = _original_of.get(id(obj))
            if orig is not None and getattr(obj, "_fx_original", None) is orig:
                setattr(mod, name, orig)
    while _class_patches:
        cls, name, value = _class_patches.pop()
        setattr(cls, name, value)
    _original_of.clear()
    _wrapper_of.clear()
    _installed[0] = False
