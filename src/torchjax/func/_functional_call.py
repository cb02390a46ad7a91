"""functional_call and stack_module_state: run a Module with parameters and buffers given as
tensors (for instance arrays a transform passes in) instead of its own."""

from __future__ import annotations

from collections.abc import Sequence

from .._tensor import Tensor
from .._x64 import scope_functions

_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call module(*args, **kwargs) with its parameters/buffers replaced by the given tensors,
    named as in state_dict; the module's own tensors are put back afterwards, even on error."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    values = _untie(module, given) if tie_weights else given
    if strict:
        _check_keys(module, values)
    originals = _swap_all(module, values)
    try:
        return module(*args, **kwargs)
    finally:
        # put the module's tensors back; the tensors the call left in the module (a module may
        # reassign self.x = self.x + 1) are reported back through the caller's dict
        now = _swap_all(module, originals)
        given.update({k: now[k] for k in given if k in now})


def _named_tensors(module) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, given: dict) -> dict:
    """Extend `given` to every name of a tied tensor (shared parameter) among its keys."""
    groups: dict = {}
    for name, t in _named_tensors(module).items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: names for names in groups.values() if len(names) > 1 for n in names}
    given_tied = [n for n in given if n in tied]
    for name in given_tied:
        names = tied[name]
        vals = {id(given[n]) for n in names if n in given}
        if len(vals) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(given)
    for name in given_tied:
        for other in tied[name]:
            out[other] = given[name]
    return out


def _check_keys(module, values: dict) -> None:
    valid = set(_named_tensors(module))
    keys = set(values)
    missing, unexpected = sorted(valid - keys), sorted(keys - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                           + "\n\t".join(msgs))


def _owner(module, name: str):
    prefix, _, attr = name.rpartition(".")
    mod = module
    if prefix:
        for part in prefix.split("."):
            try:
                sub = getattr(mod, part)
            except AttributeError as e:
                raise AttributeError(f"{mod._get_name()} has no attribute `{part}`") from e
            mod = sub
    return mod, attr


def _swap(module, name: str, value):
    """Put value at module.<name> (a parameter or buffer slot, or a plain attribute), return
    what was there (_MISSING when nothing was)."""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    mod, attr = _owner(module, name)
    for store in (mod._parameters, mod._buffers):
        if attr in store:
            old = store[attr]
            if value is _MISSING:
                del store[attr]
            else:
                store[attr] = value  # bypasses Module.__setattr__: a plain Tensor may sit here
            return old
    old = getattr(mod, attr, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{attr}`: {old} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(mod, attr, value)
    elif hasattr(mod, attr):
        delattr(mod, attr)
    return old


def _swap_all(module, values: dict) -> dict:
    done: dict = {}
    try:
        for name, value in values.items():
            done[name] = _swap(module, name, value)
    except Exception:
        for name, old in done.items():
            _swap(module, name, old)
        raise
    return done


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new dim 0, for
    vmap over an ensemble; stacked parameters are new leaves that require grad."""
    import torchjax
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    cls = type(models[0])
    if not all(type(m) is cls for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        all_rg = all(t.requires_grad for t in tensors)
        if not all_rg and any(t.requires_grad for t in tensors):
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        with torchjax.no_grad():
            out = torchjax.stack(list(tensors))
        return out.detach().requires_grad_() if all_rg else out

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


scope_functions(globals())  # torchjax's x64 scope (the module forward runs in it)
