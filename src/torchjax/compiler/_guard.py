"""A compiled function's fast path: one generated Python function per state signature.

Every call of a compiled function must learn which state tensors the program reads and
whether anything the trace decided on has changed. `_discover.walk` answers that by walking
the modules, optimizers and closure from scratch and building a signature (~20 µs for a
four-layer MLP, a fifth of the seed MLP's whole step). Most calls find exactly what the last
one found, so after a walk, `build` writes the same reads out as straight-line Python: it
checks every value the walk's signature holds (the closure's top-level objects by identity,
each module's identity, children, `training` flag and hook counts, each tensor's
`requires_grad` and gradient presence, the optimizer's groups, options and state keys) and
returns the state tensors in the walk's order, or None as soon as one check fails, when the
caller walks again. So the guard accepts a call only when the walk would have produced the
same signature and the same tensors, at a few µs (the same idea as TorchDynamo's guards).

Tensors are read afresh on every call, never remembered: a replaced parameter, a new batch
of gradients or a reloaded optimizer state is simply the tensor at that place now, as it is
for the walk. One tensor at two places (tied weights) is checked by identity against its
first place, and the list the guard returns is checked to hold each tensor once, which is
what the walk's `-1` entries guarantee.
"""

from __future__ import annotations

import types

from .._tensor import Tensor
from ..nn.modules._watched import CHANGES
from ._discover import (
    _FUNCTIONS,
    GLOBAL_HOOKS,
    SCALARS,
    _all_modules,
    _global_names,
    global_hooks,
    module_attrs,
)

_MISSING = object()  # what a deleted attribute reads as
_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


class _Emitter:
    def __init__(self, prefix="v"):
        self.prefix = prefix
        self.lines: list = []
        self.ns: dict = {"Tensor": Tensor, "isinstance": isinstance, "len": len,
                         "tuple": tuple, "set": set, "map": map, "id": id}
        self.first: dict = {}  # id(tensor) -> local name of its first read
        self.n = 0
        self.depth = 1  # the indentation of emitted lines

    def bind(self, obj) -> str:
        name = f"o{len(self.ns)}"
        self.ns[name] = obj
        return name

    def local(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fail_if(self, cond: str) -> None:
        self.emit(f"if {cond}: return None")

    def tensor(self, expr: str, t, check_type: bool = False) -> bool:
        """Read a tensor at `expr`; False when the structure cannot be guarded."""
        v = self.read(expr, t)
        if v is None:
            return True
        if check_type:
            self.fail_if(f"not isinstance({v}, Tensor)")
        return self.check(v, t)

    def read(self, expr: str, t):
        """The local the tensor at `expr` is read into, or None when it was read before
        (then checked to be the same object: the walk lists it once and notes the repeat)."""
        first = self.first.get(id(t))
        if first is not None:
            self.fail_if(f"{expr} is not {first}")
            return None
        v = self.local()
        self.emit(f"{v} = {expr}")
        self.first[id(t)] = v
        return v

    def check(self, v: str, t) -> bool:
        """The flags of the tensor read into `v` (and its .grad, added to the list)."""
        self.fail_if(f"{v}._requires_grad is not {bool(t._requires_grad)}")
        g = t._grad
        if g is None:
            self.fail_if(f"{v}._grad is not None")
            self.emit(f"a({v})")
            return True
        if id(g) in self.first:
            return False  # a gradient that is also state: left to the walk
        gv = self.local()
        self.emit(f"{gv} = {v}._grad")
        self.fail_if(f"{gv} is None")
        self.emit(f"a({v}); a({gv})")
        self.first[id(g)] = gv
        return True


def build(fn, src, tensors):
    """The guard of the state `_discover.walk(src)` just returned as `tensors`, or None when
    this structure is one the guard does not cover (it is then walked on every call).

    `guard(inputs)` returns the call's tensor arguments followed by the state tensors (the
    program's known tensors), or None; also None when a tensor comes twice in that list (an
    argument that is also state, the same argument twice): the walk's path sorts those out."""
    e = _Emitter()
    # containers first: the scalar and tensor reads below index into them
    if not _top_level(e, fn) or not _watched(e, src) or not _scalars(e, src):
        return None
    for g, name, v in src.pins:  # (see _discover.Sources.pins)
        e.fail_if(f"{e.bind(g)}.get({name!r}) is not {e.bind(v)}")
    e.emit("out = list(inputs)")
    e.emit("a = out.append")
    if src.modules and not _all_module_checks(e, src.modules):
        return None
    if src.optimizers:
        from ..optim import optimizer
        _hooks(e, optimizer, ("_global_pre_hooks", "_global_post_hooks"))
    for opt in src.optimizers:
        _hooks(e, opt, ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks"))
        if not _optimizer(e, opt):
            return None
    for t, path in zip(src.tensors, src.paths):
        if path is None:
            ok = e.tensor(e.bind(t), t)
        else:
            ok = e.tensor(f"{e.bind(path[0])}[{path[1]!r}]", t, check_type=True)
        if not ok:
            return None
    e.fail_if("len(set(map(id, out))) != len(out)")
    e.emit("return out")
    if len(e.first) != len(tensors):  # the walk saw something this builder does not mirror
        return None
    guard = _define("guard", e.lines, e.ns)
    got = guard(())
    if got is None or len(got) != len(tensors) or any(
            a is not b for a, b in zip(got, tensors)):
        return None  # the generated reads disagree with the walk: never use them
    guard.emitted = (e.lines, e.ns)
    return guard


def _define(name, lines, ns):
    args = ", ".join(f"{k}={k}" for k in ns if not k.startswith("__"))  # (exec's builtins)
    code = f"def {name}(inputs, *, {args}):\n" + "\n".join(lines) + "\n"
    exec(compile(code, f"<torchjax.compile {name}>", "exec"), ns)  # noqa: S102
    return ns.pop(name)


def express(guard, arg_keys, grad_mode, autocast, array_type):
    """The guard with the rest of a program's key checked first: the call's arguments
    are exactly len(arg_keys) tensors holding concrete arrays with those (aval,
    requires_grad, has a .grad) keys, and the grad and autocast modes are the same. Returns
    the known tensors of a call with that key, or None."""
    lines, ns = guard.emitted
    ns = dict(ns)
    e = _Emitter(prefix="a")  # (apart from the guard's own v<n>)
    e.ns = ns
    e.fail_if(f"len(inputs) != {len(arg_keys)} or {e.bind(grad_mode[0])}.grad_enabled "
              f"is not {grad_mode[1]} or {e.bind(autocast[0])}.key != {e.bind(autocast[1])}")
    array = e.bind(array_type)
    for i, (aval, rg, has_grad) in enumerate(arg_keys):
        x, d = e.local(), e.local()
        e.emit(f"{x} = inputs[{i}]")
        e.fail_if(f"{x}.__class__ is not Tensor or {x}._requires_grad is not {bool(rg)} or "
                  f"{x}._grad is {'' if has_grad else 'not '}None")
        e.emit(f"{d} = {x}._data")
        e.fail_if(f"{d}.__class__ is not {array} or {d}.aval != {e.bind(aval)}")
    return _define("express", e.lines + lines, ns)


def _top_level(e: _Emitter, fn) -> bool:
    """Checks that fn names the same objects as now (what `_discover.top_level` compares)."""
    if isinstance(fn, types.MethodType):
        e.fail_if(f"{e.bind(fn)}.__self__ is not {e.bind(fn.__self__)}")
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        return True
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            return False  # an empty cell: reading it raises; left to the walk
        if type(value) not in SCALARS:  # scalars: compared by value below
            e.fail_if(f"{e.bind(cell)}.cell_contents is not {e.bind(value)}")
    g = fn.__globals__
    gname = e.bind(g)
    e.emit(f"g = {gname}.get")
    for name in _global_names(fn.__code__):
        v = g.get(name)
        if type(v) not in SCALARS:  # scalars: compared by value below
            e.fail_if(f"g({name!r}) is not {'None' if v is None else e.bind(v)}")
    return True


def _watched(e: _Emitter, src) -> bool:
    """The containers the sources were found in hold the same things: the same keys, the
    same objects (tensors and scalars are read afresh, checked where they are used)."""
    fresh = {(id(h), k) for h, k in src.scalars if h.__class__ is not types.CellType}
    fresh.update((id(p[0]), p[1]) for p in src.paths if p is not None)
    for c in src.watched:
        C = e.bind(c)
        if isinstance(c, dict):
            e.fail_if(f"tuple({C}) != {e.bind(tuple(c))}")
            items = c.items()
        else:
            e.fail_if(f"len({C}) != {len(c)}")
            items = enumerate(c)
        for k, v in items:
            if (id(c), k) not in fresh:
                e.fail_if(f"{C}[{e.bind(k)}] is not {e.bind(v)}")
    return True


def _scalars(e: _Emitter, src) -> bool:
    """The scalars the trace baked in still have their values (and types)."""
    for holder, name in src.scalars:
        try:
            v = holder.cell_contents if name is None else holder[name]
        except (ValueError, KeyError):
            return False
        if type(v) not in SCALARS:
            return False  # it changed since the walk: let the walk see it
        h = e.bind(holder)
        # (a container's keys are checked before this; a global may be gone: .get)
        expr = (f"{h}.cell_contents" if name is None else f"{h}.get({name!r})"
                if isinstance(holder, dict) else f"{h}[{name!r}]")
        x = e.local()
        e.emit(f"{x} = {expr}")
        e.fail_if(f"{x}.__class__ is not {e.bind(type(v))} or {x} != {e.bind(v)}")
    return True


def _all_module_checks(e: _Emitter, roots) -> bool:
    """The modules' structure (training flags, hooks, submodules, which parameters and
    buffers), checked only when some module changed since it was last checked (see
    nn.modules._watched: CHANGES counts every such change), and the flags of their tensors
    (requires_grad, .grad), checked on every call."""
    from ..nn.modules import module
    changes, at, kept = e.bind(CHANGES), e.bind([-1]), e.bind([])
    e.emit(f"if {changes}[0] != {at}[0]:")
    e.depth += 1
    hooks = [f"{e.bind(getattr(module, h))}" for h in GLOBAL_HOOKS]
    if any(getattr(module, h) for h in GLOBAL_HOOKS):
        e.fail_if(f"({', '.join(f'tuple({h})' for h in hooks)},) != "
                  f"{e.bind(global_hooks()[1:])}")
    else:
        e.fail_if(" or ".join(hooks))
    reads: list = []
    seen: set = set()
    for root in roots:
        if not _modules(e, root, seen, reads):
            return False
    names = "".join(f"{v}, " for v, _ in reads)
    e.emit(f"{kept}[:] = ({names})")
    e.emit(f"{at}[0] = {changes}[0]")
    e.depth -= 1
    if reads:
        e.emit("else:")
        e.emit(f"    {names}= {kept}")
    return all(e.check(v, t) for v, t in reads)


def _modules(e: _Emitter, root, seen: set, reads: list) -> bool:
    modules: list = []
    _all_modules(root, seen, modules)  # the walk's order
    for m in modules:
        M = e.bind(m)
        e.fail_if(f"{M}.__class__ is not {e.bind(type(m))}")
        tr = m.training
        e.fail_if(f"{M}.training is not {tr}" if type(tr) is bool
                  else f"{M}.training != {e.bind(tr)}")
        hooks = [f"{M}.{h}" for h in _HOOKS]
        if not any(getattr(m, h) for h in _HOOKS):
            e.fail_if(" or ".join(hooks))
        else:
            for expr, h in zip(hooks, _HOOKS):  # (the walk's handle ids)
                e.fail_if(f"tuple({expr}) != {e.bind(tuple(getattr(m, h)))}")
        d = e.local()
        e.emit(f"{d} = {M}.__dict__")  # its numbers, flags and instance functions
        e.fail_if(f"len({d}) != {len(m.__dict__)}")
        for k, t, v in module_attrs(m):
            x = e.local()
            e.emit(f"{x} = {d}.get({k!r}, {e.bind(_MISSING)})")
            if t is Tensor:  # (the walk keys it by id)
                e.fail_if(f"{x} is not {e.bind(m.__dict__[k])}")
            elif isinstance(v, _FUNCTIONS):
                e.fail_if(f"{x} is not {e.bind(v)}")
            else:
                e.fail_if(f"{x}.__class__ is not {e.bind(t)} or {x} != {e.bind(v)}")
        d = e.local()
        e.emit(f"{d} = {M}._modules")
        _keys(e, d, m._modules)
        for name, c in m._modules.items():
            e.fail_if(f"{d}[{name!r}] is not {'None' if c is None else e.bind(c)}")
        for attr in ("_parameters", "_buffers"):
            d = e.local()
            items = getattr(m, attr)
            e.emit(f"{d} = {M}.{attr}")
            _keys(e, d, items)
            for name, t in items.items():
                if t is None:
                    e.fail_if(f"{d}[{name!r}] is not None")
                    continue
                v = e.read(f"{d}[{name!r}]", t)
                if v is not None:
                    reads.append((v, t))
    return True


def _keys(e: _Emitter, d: str, items: dict) -> None:
    """The dict at `d` has the keys of `items`, in their order."""
    e.fail_if(f"tuple({d}) != {tuple(items)!r}" if items else d)


def _hooks(e: _Emitter, owner, names) -> None:
    """owner's hook dicts `names` hold the hooks they hold now (by handle id)."""
    O = e.bind(owner)
    exprs = [f"{O}.{n}" for n in names]
    now = tuple(tuple(getattr(owner, n)) for n in names)
    if any(now):
        e.fail_if(f"({''.join(f'tuple({x}), ' for x in exprs)}) != {e.bind(now)}")
    else:
        e.fail_if(" or ".join(exprs))


def _optimizer(e: _Emitter, opt) -> bool:
    O = e.bind(opt)
    pg = e.local()
    e.emit(f"{pg} = {O}.param_groups")
    e.fail_if(f"len({pg}) != {len(opt.param_groups)}")
    for i, group in enumerate(opt.param_groups):
        G = e.local()
        e.emit(f"{G} = {pg}[{i}]")
        e.fail_if(f"tuple({G}) != {tuple(group)!r}")
        e.fail_if(f"{O}._options({G}) != {e.bind(opt._options(group))}")
        e.fail_if(f"{O}._stateful({G}) != {e.bind(opt._stateful(group))}")
        e.fail_if(f"bool({G}.get('maximize', False)) is not "
                  f"{bool(group.get('maximize', False))}")
        for k, v in group.items():
            if k == "params":
                pl = e.local()
                e.emit(f"{pl} = {G}['params']")
                e.fail_if(f"len({pl}) != {len(v)}")
                for j, p in enumerate(v):
                    if not e.tensor(f"{pl}[{j}]", p):
                        return False
            elif v is None or type(v) is bool:
                e.fail_if(f"{G}[{k!r}] is not {v}")
            elif isinstance(v, str):
                e.fail_if(f"{G}[{k!r}].__class__ is not {e.bind(type(v))} or "
                          f"{G}[{k!r}] != {e.bind(v)}")
    if not opt.state:
        e.fail_if(f"{O}.state")
        return True
    S = e.local()
    e.emit(f"{S} = tuple({O}.state.values())")
    e.fail_if(f"len({S}) != {len(opt.state)}")
    for i, st in enumerate(opt.state.values()):
        D = e.local()
        e.emit(f"{D} = {S}[{i}]")
        e.fail_if(f"tuple({D}) != {tuple(st)!r}")
        for k, v in st.items():
            if isinstance(v, Tensor):
                if not e.tensor(f"{D}[{k!r}]", v, check_type=True):
                    return False
            elif isinstance(v, (int, float, bool, str)):
                e.fail_if(f"{D}[{k!r}].__class__ is not {e.bind(type(v))} or "
                          f"{D}[{k!r}] != {e.bind(v)}")
            else:
                e.fail_if(f"{D}[{k!r}].__class__ is not {e.bind(type(v))}")
    return True
