"""Which objects a compiled function can reach, and the state tensors they hold.

A PyTorch step names its model, optimizer and scheduler as closure variables or globals, or
reaches them through `self`. `roots(fn, args)` collects those objects (the "sources"); on
every call `walk(sources)` lists the tensors they hold (parameters, buffers, gradients,
optimizer state, loose tensors) in a fixed order, together with a signature of everything
the trace decided on that a later call could change: which tensors (by identity) with which
shapes, dtypes, requires_grad and gradient presence, `module.training`, the hooks, and the
optimizer's parameter groups and state keys. A call whose signature differs is a new trace.

Tensors the step reads that no source holds (a tensor in a container the walk does not
enter) are still found during the trace (every op reports its arguments) and become inputs
of the program; they are just not guarded by identity.
"""

from __future__ import annotations

import dis
import functools
import sys
import types

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer

_MAX_DEPTH = 3


class Sources:
    """The modules, optimizers and loose tensors a function reaches, plus the containers
    (lists, dicts) it reaches, which the trace checks for leaked tensors."""

    __slots__ = ("modules", "optimizers", "tensors", "paths", "containers", "watched",
                 "scalars", "pins", "_seen")

    def __init__(self):
        # where the reached functions read Python scalars (a closure cell with key None, or
        # a globals dict, container or object __dict__ and a key): the trace bakes their
        # values in, so they are part of the key
        self.scalars: list = []
        # (globals dict, name, object) of the other objects the reached functions (beyond
        # the compiled one itself, see top_level) load as globals: a function or object
        # bound there later is another program (an activation chosen by a global)
        self.pins: list = []
        self.modules: list = []
        self.optimizers: list = []
        self.tensors: list = []
        # where each loose tensor was found: (a mutable container, its key), or None for a
        # fixed place (a closure cell or global, guarded by the caller); read afresh each call
        self.paths: list = []
        self.containers: list = []
        # the mutable containers whose items were looked into (lists, dicts, the __dict__ of
        # a plain object): a replaced item means other sources
        self.watched: list = []
        self._seen: set = set()

    def add(self, v, depth: int = 0, holder=None, key=None) -> None:
        if type(v) in SCALARS:
            if holder is not None:
                self.scalars.append((holder, key))
            return
        if id(v) in self._seen or depth > _MAX_DEPTH:
            return
        if isinstance(v, Tensor):
            self._seen.add(id(v))
            self.tensors.append(v)
            self.paths.append(None if holder is None or isinstance(holder, tuple)
                              else (holder, key))
        elif isinstance(v, Module):
            # the walk expands submodules on every call (a submodule may be replaced)
            self._seen.add(id(v))
            self.modules.append(v)
            # the globals the user's module classes read in forward and the methods it
            # names (a constant or an activation in the model's own file); not every method:
            # a global another method reads (a step counter a logging method prints) is
            # not part of the trace and must not key it
            for cls in {type(m) for m in v.modules()}:
                for f in _methods_reached(cls):
                    self.add_callable(f, depth + 1)
        elif isinstance(v, Optimizer):
            self._seen.add(id(v))
            self.optimizers.append(v)
        elif isinstance(v, LRScheduler):
            self._seen.add(id(v))
            self.add(v.optimizer, depth + 1)
        elif isinstance(v, (list, tuple)):
            self._seen.add(id(v))
            if isinstance(v, list):
                self.containers.append(v)
                self.watched.append(v)
            for i, x in enumerate(v):
                self.add(x, depth + 1, v, i)
        elif isinstance(v, (set, frozenset)):
            self._seen.add(id(v))
            for x in v:
                self.add(x, depth + 1)
        elif isinstance(v, dict):
            self._seen.add(id(v))
            self.containers.append(v)
            self.watched.append(v)
            for k, x in v.items():
                self.add(x, depth + 1, v, k)
        elif isinstance(v, functools.partial):
            self._seen.add(id(v))
            self.add_callable(v.func, depth + 1)
            for x in (*v.args, *v.keywords.values()):
                self.add(x, depth + 1)
        elif isinstance(v, (types.FunctionType, types.MethodType)):
            self.add_callable(v, depth + 1)
        elif _is_plain_object(v) and depth <= 1:
            # an object holding the model and optimizer (a Trainer's `self`)
            self._seen.add(id(v))
            d = vars(v)
            self.watched.append(d)
            for k, x in d.items():
                self.add(x, depth + 1, d, k)

    def add_callable(self, fn, depth: int = 0) -> None:
        if isinstance(fn, types.MethodType):
            self.add(fn.__self__, depth)
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType):
            if isinstance(fn, Module) or (callable(fn) and _is_plain_object(fn)):
                self.add(fn, depth)  # a module, or an object with __call__
            return
        if id(fn) in self._seen or _library(fn):
            return
        self._seen.add(id(fn))
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later in the enclosing scope)
                continue
            if type(value) in SCALARS:
                self.scalars.append((cell, None))
            else:
                self.add(value, depth)
        g = fn.__globals__
        for name in _global_names(fn.__code__):
            if name in g:
                v = g[name]
                if type(v) in SCALARS:
                    self.scalars.append((g, name))
                elif not isinstance(v, (types.ModuleType, type)):
                    if depth > 0:
                        self.pins.append((g, name, v))
                    self.add(v, depth)


# Python values a trace bakes in as constants (a global `SCALE = 2.0` the step multiplies by)
SCALARS = frozenset((int, float, bool, complex, str))


class _Same:
    """A key's entry equal to another only for the same object (any object, hashable or
    not); holding it keeps the object's id its own."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return other.__class__ is _Same and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return repr(self.obj)


_MISSING = object()
_LIBRARIES = frozenset({"torchjax", "jax", "jaxlib", "numpy", "optax", "flax", "equinox",
                        "scipy", "torch"}) | frozenset(sys.stdlib_module_names)


def _library(fn) -> bool:
    """fn is a library's function (torchjax's own, JAX's, the standard library's): its
    globals are the library's and never rebound by a user, so they are not followed."""
    return (getattr(fn, "__module__", None) or "").partition(".")[0] in _LIBRARIES


def _methods_reached(cls) -> list:
    """cls.forward and, transitively, the methods of cls it names (`self.helper(x)`), when
    they are the user's (not a library's)."""
    out, todo, seen = [], ["forward"], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = getattr(cls, name, None)
        if isinstance(f, types.FunctionType) and not _library(f):
            out.append(f)
            todo.extend(_names(f.__code__))
    return out


@functools.lru_cache(maxsize=1024)
def _names(code) -> tuple:
    """The attribute and global names a code object and its nested code objects use."""
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.extend(_names(c))
    return tuple(names)


def pins_hold(src: Sources) -> bool:
    """The pinned globals still name the objects they named when src was found."""
    return all(g.get(name, _MISSING) is v for g, name, v in src.pins)


def scalar_values(src: Sources) -> tuple:
    """The values of the Python scalars the reached functions read, with their types (1 and
    1.0 trace differently); a name that no longer holds a scalar reads as its type. Then the
    objects of the pinned globals (by identity)."""
    out = [_Same(g.get(name, _MISSING)) for g, name, _ in src.pins]
    for holder, name in src.scalars:
        try:
            v = holder.cell_contents if name is None else holder[name]
        except (ValueError, LookupError):  # emptied cell, deleted global or item
            v = None
        t = type(v)
        out.append((t, v) if t in SCALARS else t)
    return tuple(out)


def _is_plain_object(v) -> bool:
    return (hasattr(v, "__dict__") and not isinstance(v, (type, types.ModuleType,
                                                          types.FunctionType)))


_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"))


@functools.lru_cache(maxsize=1024)
def _global_names(code) -> tuple:
    """The global names a code object and its nested functions/comprehensions read (the
    names of global loads, not co_names, which also holds every attribute name: a global
    `lr` that the step never reads but whose name it uses as `group.lr` is not one)."""
    names = [i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.extend(_global_names(c))
    return tuple(dict.fromkeys(names))


def roots(fn, args, kwargs) -> Sources:
    src = Sources()
    src.add_callable(fn)
    for a in (*args, *kwargs.values()):
        if isinstance(a, (Module, Optimizer, LRScheduler)):
            src.add(a)
    return src


def top_level(fn) -> tuple:
    """The objects fn names directly (closure cells, globals, its `self`): when they are the
    same objects as at the last call, the sources found from them can be reused (the walk
    still expands submodules, groups and state afresh)."""
    out = []
    if isinstance(fn, types.MethodType):
        out.append(fn.__self__)
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        out.append(fn)
        return tuple(out)
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:
            out.append(None)
    g = fn.__globals__
    for name in _global_names(fn.__code__):
        out.append(g.get(name))
    return tuple(out)


# a state tensor's entry in the signature: _FLAGS[requires_grad][grad is None]
_FLAGS = ((0, 1), (2, 3))
FLAG_NAMES = {0: (False, False), 1: (False, True), 2: (True, False), 3: (True, True)}


def _all_modules(root, seen, out):
    """root and its submodules, depth first, each once (Module.modules() without names)."""
    stack = [root]
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        out.append(m)
        children = [c for c in m._modules.values() if c is not None]
        children.reverse()
        stack.extend(children)


GLOBAL_HOOKS = ("_global_forward_pre_hooks", "_global_forward_hooks",
                "_global_backward_pre_hooks", "_global_backward_hooks")


def global_hooks() -> tuple:
    """The handle ids of the hooks registered on every module (nn.modules.module's
    register_module_*_hook), tagged for the recompile log."""
    from ..nn.modules import module
    return ("global hooks", *(tuple(getattr(module, h)) for h in GLOBAL_HOOKS))


_FUNCTIONS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
              functools.partial)
_MODULE_INTERNALS = frozenset(Module().__dict__)  # the attributes Module.__init__ sets


def _fixed(v) -> bool:
    """v is a value a trace can bake in and a guard can compare: a scalar, None, or a
    tuple of such (a kernel size)."""
    t = type(v)
    return t in SCALARS or v is None or t is tuple and all(_fixed(x) for x in v)


def module_attrs(m) -> tuple:
    """(name, type, value) of the module's own attributes a forward may read and a trace
    bakes in: numbers, flags, strings, None and tuples of them (Dropout's p, a scale, a
    kernel size), and, by identity, functions set on the instance (a replaced `forward`) and
    tensors kept as plain attributes."""
    out = []
    for k, v in m.__dict__.items():
        if k in _MODULE_INTERNALS:
            continue
        if _fixed(v) or isinstance(v, _FUNCTIONS):
            out.append((k, type(v), v))
        elif isinstance(v, Tensor):
            # a tensor attribute (not a parameter or buffer) is captured by the trace as
            # that object: another object there needs another trace. By id: the program
            # holds the object, so its id stays its own while the key matters
            out.append((k, Tensor, id(v)))
    return tuple(out)


def optimizer_hooks(opt) -> tuple:
    """The handle ids of opt's step hooks (of every optimizer's when opt is None), tagged
    for the recompile log: a hook runs inside the traced step."""
    if opt is None:
        from ..optim import optimizer
        return ("optimizer hooks", tuple(optimizer._global_pre_hooks),
                tuple(optimizer._global_post_hooks))
    return ("optimizer hooks", tuple(opt._optimizer_step_pre_hooks),
            tuple(opt._optimizer_step_post_hooks))


def walk(src: Sources):
    """(state tensors in a fixed order, the signature guarding them).

    The program reads state by position in this list, so the signature holds positions and
    flags, not identities: a new batch of gradients or a replaced buffer of the same shape
    needs no new trace. Shapes and dtypes are not in it either: the jitted program checks
    its arguments' avals itself on every call (see _program), which is cheaper than reading
    them here. Each tensor appears once; a gradient follows its parameter."""
    tensors: list = []
    sig: list = []
    seen: set = set()
    append, add = sig.append, seen.add

    def tensor(t):
        if id(t) in seen:
            append(-1)  # the same tensor again (tied weights): a different structure
            return
        add(id(t))
        tensors.append(t)
        g = t._grad
        append(_FLAGS[t._requires_grad][g is None])
        if g is not None and id(g) not in seen:
            add(id(g))
            tensors.append(g)

    modules: list = []
    for root in src.modules:
        _all_modules(root, seen, modules)
    if modules:
        # hooks registered on every module (register_module_forward_hook, ...) run inside
        # the traced forward as a module's own do
        append(global_hooks())
    for m in modules:
        # a hook's handle id, never reused, names it: a hook removed and another added in
        # its place is a change the count alone would not show
        append((type(m), m.training, tuple(m._forward_hooks), tuple(m._forward_pre_hooks),
                tuple(m._backward_hooks), tuple(m._backward_pre_hooks), module_attrs(m)))
        for name, p in m._parameters.items():
            append(name)
            if p is not None:
                tensor(p)
        for name, b in m._buffers.items():
            append(name)
            if b is not None:
                tensor(b)
    if src.optimizers:
        append(optimizer_hooks(None))
    for opt in src.optimizers:
        sig.append(type(opt))
        sig.append(optimizer_hooks(opt))
        for group in opt.param_groups:
            # numbers are program inputs; what the update compiles in is _options/_stateful
            sig.append((opt._options(group), opt._stateful(group),
                        bool(group.get("maximize", False))))
            for k, v in group.items():
                if k == "params":
                    sig.append(len(v))
                    for p in v:
                        tensor(p)
                elif isinstance(v, (str, type(None))) or type(v) is bool:
                    sig.append((k, v))
        for st in opt.state.values():
            for k, v in st.items():
                sig.append(k)
                if isinstance(v, Tensor):
                    tensor(v)
                else:
                    sig.append(v if isinstance(v, (int, float, bool, str)) else type(v))
    for t in src.tensors:
        tensor(t)
    return tensors, tuple(sig)
