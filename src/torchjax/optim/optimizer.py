"""Optimizer base: param_groups, state, hooks, state_dict, and one jitted update per group.

Concrete optimizers describe their update as a pure function of arrays (`_update`); the base
gathers the parameters that have a gradient, their gradients and state arrays, calls ONE jitted
function for the whole group with the hyper-parameters as traced scalars (so `g["lr"] = ...`
takes effect without recompiling), and writes the results back in place.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from .. import _deferred_fold, _dtypes, _host_tier, _one_off, _programs
from .._autograd.grad_mode import enable_grad, no_grad
from .._hooks import RemovableHandle
from .._meta import MetaArray as _MetaArray
from .._tensor import Tensor
from .._x64 import enter as _enter
from .._x64 import leave as _leave
from .._x64 import scope
from . import _first_step
from ._update_program import _fresh_flags, _run_pure, _runner  # noqa: F401 (_deferred_fold's)

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Marks a hyper-parameter every param group must set."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """A pre hook run before every optimizer's step: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """A post hook run after every optimizer's step: hook(optimizer, args, kwargs)."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for tensors, 'module.Qualname' otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


def _scalar_dtype():
    """The dtype PyTorch gives `step` and other scalar state: float64 only under that default."""
    return jnp.float64 if _dtypes.get_default_dtype() is _dtypes.float64 else jnp.float32


def _num(v) -> float:
    """A hyper-parameter as a Python float (a 1-element tensor lr is allowed, as in PyTorch)."""
    return float(v)


def _check_lr(lr) -> None:
    """The learning-rate checks every PyTorch optimizer starts with."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas_eps_wd(betas, eps, weight_decay) -> None:
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_differentiable(differentiable) -> None:
    # Differentiating through step() would need the update recorded on the autograd tape;
    # the jitted update runs outside it, so refuse rather than silently drop those gradients.
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported by torchjax.optim")


def _check_fused(fused, foreach, differentiable) -> None:
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def cast(scalar, like):
    """A scalar computed in float64 (as PyTorch's Python-float math) in the dtype of `like`.

    JAX would otherwise promote a float32 array to float64 when it meets a float64 0-d array.
    """
    return jnp.asarray(scalar).astype(like.dtype)


def _pre_hooks(self, func, args, kwargs):
    """Run the global and the optimizer's step pre-hooks; the (args, kwargs) they leave."""
    for pre_hook in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
        result = pre_hook(self, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(f"{func} must return None or a tuple of "
                                   f"(new_args, new_kwargs), but got {result}.")
    return args, kwargs


def _array(v):
    return v._data if isinstance(v, Tensor) else jnp.asarray(v)


_FOLD = _deferred_fold._LOCAL
_deferred_fold.OPTIM = sys.modules[__name__]

# While torchjax.compile traces a step, HYPER_HOOK(optimizer, group, hypers) returns the
# group's hyper-parameters as values the compiled program takes as inputs: a scheduler that
# changes `lr` between calls then changes the program's input, never the program.
HYPER_HOOK = None


class Optimizer:
    """Base class of all optimizers: holds param_groups (dicts of params and hyper-parameters)
    and per-parameter state.

    Subclasses built on the shared jitted step define `_init_state(p, group)` (the lazily
    created state tensors), `_options(group)` (hashable choices compiled into the update, e.g.
    amsgrad), `_hypers(group)` (the numeric hyper-parameters, passed traced) and a pure
    `_update(options, hypers, params, grads, states, fresh)` over lists of arrays.
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        _first_step.register(self)

    # -- pickling and repr ---------------------------------------------------------------------

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- step hooks ----------------------------------------------------------------------------

    @staticmethod
    def profile_hook_step(func):
        """Wrap a step function so the global and per-optimizer step hooks run around it."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            # the step (its closure and hooks too) runs in torchjax's x64 scope: the update
            # and the state it creates keep the parameters' dtypes, float64 included (entered
            # inline, and the hook walks skipped when there are none: a small model's step
            # is ~100 µs)
            token = _enter()
            try:
                if _global_pre_hooks or self._optimizer_step_pre_hooks:
                    args, kwargs = _pre_hooks(self, func, args, kwargs)
                out = func(*args, **kwargs)
                if _global_post_hooks or self._optimizer_step_post_hooks:
                    for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                           _global_post_hooks.values()):
                        post_hook(self, args, kwargs)
                return out
            finally:
                _leave(token)

        return wrapper

    def _patch_step_function(self) -> None:
        # As PyTorch: the class's step is wrapped once, when its first instance is made.
        cls = self.__class__
        if not getattr(cls.step, "hooked", None):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step()."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """hook(optimizer, args, kwargs) -> None, after step()."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, store: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(store)
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Registers `hook(optimizer)`, run before `state_dict` builds its result; `prepend` runs
        it before the hooks already registered. Returns a handle whose `remove()` unregisters
        it.
        """
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Registers `hook(optimizer, state_dict)`, run on the result of `state_dict` (it may
        return a replacement); `prepend` runs it first. Returns a removable handle.
        """
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Registers `hook(optimizer, state_dict)`, run before `load_state_dict` (it may return a
        replacement state dict); `prepend` runs it first. Returns a removable handle.
        """
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Registers `hook(optimizer)`, run after `load_state_dict` has finished; `prepend` runs it
        first. Returns a removable handle.
        """
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state_dict ----------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """{"state": {index: per-parameter state}, "param_groups": [{..., "params": [index]}]}.

        As in PyTorch, the per-parameter dicts and tensors are the live ones, not copies.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _cast_state_value(param, value, group, key):
        # `step` keeps its dtype (float32 even for float64 params) unless the group is
        # capturable or fused; other floating state follows the parameter's dtype.
        if key == "step":
            if group.get("capturable", False) or group.get("fused", False):
                return value.to(dtype=_dtypes.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict) -> None:
        """Load state saved by state_dict(); state tensors are cast to their parameter's dtype."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        group_of = {pid: g for g in state_dict["param_groups"] for pid in g["params"]}

        def _cast(param, value, group, key=None):
            if isinstance(value, Tensor):
                return self._cast_state_value(param, value, group, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, group, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, str):
                return type(value)(_cast(param, v, group) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast(id_map[k], v, group_of.get(k, {}))
            else:
                state[k] = v

        def update_group(group: dict, new_group: dict) -> dict:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and groups ------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's .grad to None (default) or to zeros."""
        if _first_step.ANY[0] and _first_step.waiting():
            _first_step.zero_grad(self)
        for group in self.param_groups:
            for p in group["params"]:
                # (Tensor.grad's getter and setter, their leaf case inline: a small model's
                # step is ~90 us, and these were 8 property calls of it)
                g = p._grad if p._grad_fn is None else p.grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    with scope():  # zeros of the gradient's dtype, float64 included
                        g._write(jnp.zeros_like(g._data))

    def step(self, closure=None):
        """Perform a single optimization step (defined by each optimizer)."""
        raise NotImplementedError

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- the shared jitted step ----------------------------------------------------------------

    def _stateful(self, group: dict) -> bool:
        """Whether the update keeps per-parameter state (SGD without momentum does not)."""
        return True

    def _options(self, group: dict) -> tuple:
        return ()

    def _default_step(self, closure):
        """Run the closure with grad enabled, then one jitted update per param group."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._group_step(group)
        if _FOLD.last is not None:  # (the last backward's arrays: held no longer)
            _FOLD.last = None
        return loss

    def _group_step(self, group: dict) -> None:
        # (one pass over the parameters: a small model's step is ~100 µs, of which this
        # method's Python was ~10)
        ps, grads = [], []
        for p in group["params"]:
            g = p._grad if p._grad_fn is None else p.grad  # (as zero_grad)
            if g is not None:
                ps.append(p)
                grads.append(g._data)
        if not ps:
            return
        if _FOLD.pending:  # the update computed by the backward's program (_deferred_fold)
            got = _deferred_fold.take(self, group, ps, grads)
            if got is not None:
                states = [self.state[p] for p in ps] if self._stateful(group) else ()
                self._write_update(ps, states, got[0], got[1])
                return
        states, fresh = [], []
        if self._stateful(group):
            for p in ps:
                st = self.state[p]
                fresh.append(not st)
                if not st:
                    st.update(self._init_state(p, group))
                states.append(st)
        else:
            fresh = [False] * len(ps)
        hypers = self._hypers(group)
        if HYPER_HOOK is not None:
            hypers = HYPER_HOOK(self, group, hypers)
        run, args = self._update_call(group, hypers, ps, grads, states, fresh)
        new_params, new_states = run(*args)
        if _FOLD.last is not None and HYPER_HOOK is None:
            _deferred_fold.learn(self, group, ps, grads, states, fresh)
        self._write_update(ps, states, new_params, new_states)

    @staticmethod
    def _write_update(ps, states, new_params, new_states):
        for p, a in zip(ps, new_params):
            if p._base is None and not p._views and not p._inference \
                    and p._data.__class__ is not _MetaArray:
                # Tensor._write's common case: a parameter that is no view, has no views and
                # is no meta array (then neither is its update)
                vc = p._vc
                if vc is None:
                    vc = p._vc = [0]
                vc[0] += 1
                p._data = a
            else:
                p._write(a)
        for st, ns in zip(states, new_states):
            for k, a in ns.items():
                if isinstance(st[k], Tensor):
                    st[k]._data = a
                else:
                    st[k] = Tensor._wrap(a)

    def _update_call(self, group, hypers, ps, grads, states, fresh):
        """The group's jitted update and its arguments (the step's, or compile_first_update's
        stand-ins, which must give the same program)."""
        arrays = [{k: _array(v) for k, v in st.items()} for st in states] or [{}] * len(ps)
        run = _runner(type(self)._update, self._options(group),
                      bool(group.get("maximize", False)))
        params = [p._data for p in ps]
        flags = _fresh_flags(fresh, params[0], HYPER_HOOK is not None)
        return run, (hypers, params, grads, arrays, flags)

    def _compile_first_update(self) -> None:
        """Start compiling, on another thread, each group's update program as the coming step
        will call it (optim/_first_step.py says when and why): every parameter that requires
        grad is taken to get one, its own array standing in for the gradient (same type and
        placement), and state not made yet is made here and dropped (PyTorch's state stays
        empty until the first step). A wrong guess costs a compile nobody uses, never a
        result: the program is only found by its exact argument types."""
        if HYPER_HOOK is not None or not hasattr(type(self), "_update"):
            return
        for group in self.param_groups:
            ps = [p for p in group["params"] if p.requires_grad or p.grad is not None]
            if not ps or sum(p._data.nbytes for p in ps) > _first_step.MAX_BYTES:
                continue
            if self._stateful(group):
                made = [self.state.get(p) for p in ps]  # (.get: the guess adds no entry)
                states = [st or self._init_state(p, group) for st, p in zip(made, ps)]
                fresh = [not st for st in made]
            else:
                states, fresh = [], [False] * len(ps)
            run, args = self._update_call(group, self._hypers(group), ps,
                                          [p._data for p in ps], states, fresh)
            if _host_tier.takes(args):
                continue  # its first steps are the host tier's: nothing to wait for
            # (traced there too, in torchjax's x64 scope as the step is)
            _programs.compile_soon(run, args, f"{type(self).__name__}'s update", scope)


def zeros_state(p) -> Tensor:
    """A state buffer of zeros shaped and typed like the parameter."""
    return full_state(p, 0)


def full_state(p, value) -> Tensor:
    """A state buffer filled with `value`; complex parameters get value + value*1j, as PyTorch."""
    x = p._data
    if jnp.iscomplexobj(x):
        value = complex(value, value)
    # made on the host: one program per parameter shape is compile time for a buffer made
    # once (torchjax/_one_off.py); inside a compiled step x is traced and jnp is used
    if not isinstance(x, Tracer) and x.size <= _one_off._HOST_MAX and _one_off.top_level():
        return Tensor._wrap(_one_off.to_device(np.full(x.shape, value, x.dtype), x))
    return Tensor._wrap(jnp.full_like(x, value))


def scalar_state(value) -> Tensor:
    """A 0-d scalar state tensor such as `step` (float32, as PyTorch's non-capturable step)."""
    if _one_off.top_level():  # jnp.asarray would compile a conversion program for it
        return Tensor._wrap(_one_off.to_device(np.asarray(value, _scalar_dtype())))
    return Tensor._wrap(jnp.asarray(value, _scalar_dtype()))
