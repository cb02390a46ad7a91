"""The public surface generated from the op table: torchjax.<op>, Tensor.<op>, Tensor.<op>_
and the operator dunders, each a source-generated wrapper with the row's exact signature
around _dispatch's eager call."""

from __future__ import annotations

import functools
import inspect
import numbers

from ._dispatch import (
    _SCALARS,
    FUNCTIONS,
    PREPARED,
    _Prepared,
    dispatch,
    dispatch_inplace,
    dispatch_out,
)
from ._ops._registry import OPS, OpDef
from ._tensor import Tensor


def _param_source(op: OpDef, self_name: str | None):
    """Parameter list source and the defaults it refers to."""
    parts = []
    defaults = {}
    seen_kwonly = False
    first = True
    for p in op.signature.parameters.values():
        name = p.name
        if first and self_name is not None:
            name = self_name
        first = False
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append("*" + name)
            seen_kwonly = True
            continue
        if p.default is p.empty:
            parts.append(name)
        else:
            dname = f"_d_{p.name}"
            defaults[dname] = p.default
            parts.append(f"{name}={dname}")
    return parts, seen_kwonly, defaults


# NumPy's names PyTorch also accepts as keywords, for every op with the parameter
# (`x.sum(1, keepdims=True)`, `torch.cat(xs, axis=0)`)
_NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


def _missing(op: OpDef, name: str) -> list:
    return [f"    if {name} is _UNSET:",
            f"        raise TypeError('{op.name}() missing 1 required positional arguments: "
            f"\"{name}\"')"]


def _numpy_aliases(op: OpDef, parts: list, kwonly: bool, defaults: dict):
    """Add `axis` / `keepdims` keyword parameters for the row's `dim` / `keepdim`, and the
    lines that take them over. A required `dim` (and any required parameter after it) gets
    the unset marker as its default, so that axis= alone can give it; the lines then say
    which required argument is missing, in PyTorch's words."""
    sig = op.signature.parameters
    names = list(sig)
    lines = []
    for name, alias in _NUMPY_NAMES.items():
        p = sig.get(name)
        if p is None or alias in sig or p.kind is not p.POSITIONAL_OR_KEYWORD:
            continue
        required = p.default is p.empty
        if not kwonly:
            parts.append("*")
            kwonly = True
        parts.append(f"{alias}=_UNSET")
        given = f"{name} is not _UNSET" if required else f"{name} is not _d_{name}"
        lines += [f"    if {alias} is not _UNSET:",
                  f"        if {given}:",
                  f"            raise TypeError(\"{op.name}() got multiple values for argument "
                  f"'{name}'\")",
                  f"        {name} = {alias}"]
        if required:
            for n in names[names.index(name):]:
                q = sig[n]
                if q.default is q.empty and q.kind is q.POSITIONAL_OR_KEYWORD:
                    parts[parts.index(n)] = f"{n}=_UNSET"
                    lines += _missing(op, n)
    if lines:
        defaults["_UNSET"] = _UNSET
    return kwonly, lines


def _numpy_keywords(fn):
    """A composite (max, std, squeeze, ...) that also takes `axis` / `keepdims` for its
    `dim` / `keepdim` (the generated rows take them in their signature)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    pairs = [(alias, name) for name, alias in _NUMPY_NAMES.items()
             if name in params and alias not in params]
    if not pairs:
        return fn

    @functools.wraps(fn)
    def with_numpy_names(*args, **kwargs):
        if kwargs:
            for alias, name in pairs:
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                        f"'{name}'")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return with_numpy_names


def _generate(op: OpDef, kind: str):
    """Source-generated wrapper with the row's exact signature (fast argument binding)."""
    prep = PREPARED[op.name]
    self_name = "self" if kind in ("method", "inplace") else None
    parts, kwonly, defaults = _param_source(op, self_name)
    # (nn.functional's functions are Python functions in PyTorch: no NumPy names there)
    kwonly, alias_lines = (kwonly, []) if kind == "function" and \
        op.namespace == "torch.nn.functional" else _numpy_aliases(op, parts, kwonly, defaults)
    params = list(op.signature.parameters)
    if self_name:
        params[0] = "self"
    rename = dict(zip(op.signature.parameters, params))
    dyn = ", ".join(rename[n] for n in op.dynamic)
    stat = ", ".join(rename[n] for n in op.statics)
    body = "_dispatch_inplace" if kind == "inplace" else "_dispatch"
    dyn_t = f"({dyn}{',' if dyn else ''})"
    stat_t = f"({stat}{',' if stat else ''})"
    lines = [f"def {op.name}({{params}}):"] + alias_lines
    # PyTorch's nn.functional has no out= arguments
    if kind == "function" and not op.view and op.out_names is None and not op.returns_list \
            and op.namespace != "torch.nn.functional":
        parts = parts + (["out=None"] if kwonly else ["*", "out=None"])
        lines += ["    if out is not None:",
                  f"        return _dispatch_out(_prep, {dyn_t}, {stat_t}, out)"]
    # every static argument left at its default: one tuple made once, so that a call that
    # repeats is the same object (a deferred op checks its static arguments against the last
    # step's by identity first: _deferred.record)
    named = [f"_d_{n}" for n in op.statics]
    if named and all(d in defaults for d in named):
        same = " and ".join(f"{rename[n]} is {d}" for n, d in zip(op.statics, named))
        lines += [f"    if {same}:",
                  f"        return {body}(_prep, {dyn_t}, _STATICS)"]
        defaults = dict(defaults, _STATICS=tuple(defaults[d] for d in named))
    lines.append(f"    return {body}(_prep, {dyn_t}, {stat_t})")
    src = "\n".join(lines).replace("{params}", ", ".join(parts)) + "\n"
    ns = dict(defaults, _prep=prep, _dispatch=dispatch, _dispatch_inplace=dispatch_inplace,
              _dispatch_out=dispatch_out)
    exec(compile(src, f"<torchjax op {op.name}>", "exec"), ns)
    f = ns[op.name]
    f.__doc__ = op.doc
    f.__qualname__ = op.name if kind == "function" else f"Tensor.{op.name}"
    return f


def _dunder(prep, reflected: bool, inplace: bool = False):
    op = prep.op
    nstat = len(op.statics)
    defaults = tuple(op.signature.parameters[n].default for n in op.statics)
    if nstat and any(d is op.signature.empty for d in defaults):
        raise ValueError(f"op {op.name} cannot be an operator: statics without defaults")
    n_dyn = len(op.dynamic)
    extra = tuple(op.signature.parameters[n].default for n in op.dynamic[2:])
    if n_dyn == 1:
        def unary(self):
            return dispatch(prep, (self,), defaults)
        return unary

    # bound once: every `x * 2` passes here (no tuple building per call)
    call = dispatch_inplace if inplace else dispatch
    accepted = (Tensor, *_SCALARS)
    if n_dyn == 2 and not reflected:
        def binary(self, other):
            if other.__class__ not in _SCALARS and not isinstance(other, accepted) \
                    and not isinstance(other, numbers.Number):
                return NotImplemented
            return call(prep, (self, other), defaults)
        return binary

    def binary(self, other):
        if not isinstance(other, accepted) and not isinstance(other, numbers.Number):
            return NotImplemented
        args = (other, self) if reflected else (self, other)
        return call(prep, args + extra if n_dyn > 2 else args, defaults)

    return binary


def install(namespace: dict, tensor_cls=Tensor):
    """Create torchjax.<op>, Tensor.<op>, Tensor.<op>_ and dunders for every row."""
    for name, op in OPS.items():
        if name in PREPARED:
            continue
        prep = PREPARED[name] = _Prepared(op)
        if op.view:
            op.pure_view = _pure_view(op)
        f = _generate(op, "function")
        FUNCTIONS[name] = f  # every row's function form, exported or not (nn.functional uses it)
        if op.function and op.namespace == "torch":
            for n in (name, *op.aliases):
                namespace[n] = f
        if op.method:
            m = _generate(op, "method")
            for n in (name, *op.aliases):
                setattr(tensor_cls, n, m)
        if op.inplace:
            ip = _generate(op, "inplace")
            ip.__name__ = name + "_"
            for n in (name, *op.aliases):
                setattr(tensor_cls, n + "_", ip)
        for d in op.dunders:
            setattr(tensor_cls, d, _dunder(prep, False))
            if op.inplace and d != "__matmul__":
                # x += y changes x in place (views of x see it), as in PyTorch
                setattr(tensor_cls, "__i" + d[2:], _dunder(prep, False, inplace=True))
        for d in op.rdunders:
            setattr(tensor_cls, d, _dunder(prep, True))


def namespace_functions(ns: str) -> dict:
    """The function forms of the rows published in namespace `ns` (e.g. "torch.linalg"),
    under their public names and aliases."""
    out = {}
    for name, op in OPS.items():
        if op.namespace == ns and name in FUNCTIONS:
            for n in (op.public_name, *op.aliases):
                out[n] = FUNCTIONS[name]
    return out


def install_functions(namespace: dict, tensor_cls=Tensor):
    from ._ops._registry import FUNCTIONS
    for (name, *_), (fn, method, function, aliases) in FUNCTIONS.items():
        fn = _numpy_keywords(fn)
        for n in (name, *aliases):
            if function:
                namespace[n] = fn
            if method:
                setattr(tensor_cls, n, fn)


def _pure_view(op):
    def pure_view(stat, arr):
        return op.fn(arr, **dict(zip(op.statics, stat)))
    return pure_view
