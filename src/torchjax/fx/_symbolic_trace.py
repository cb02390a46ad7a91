"""torch.fx.Tracer, symbolic_trace and wrap.

Tracing calls the root's forward with Proxies for its inputs. While it runs, nn.Module's
__call__ and __getattr__ are patched (on the class, restored after): a call of a leaf module
becomes one call_module node, a parameter or buffer read becomes a get_attr node; functions
registered with `wrap` are patched in the globals that named them.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import types
import warnings

from . import _tracing_functions
from .graph import Graph
from .proxy import ParameterProxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "is_fx_tracing"]

_is_fx_tracing = [False]
# (id of a globals dict, name) -> that dict, for each wrap() call
_wrapped_fns: dict = {}
# math functions a trace recorded (the code says wrap("math_sqrt") for them too)
_autowrapped: set = set()


def is_fx_tracing() -> bool:
    return _is_fx_tracing[0]


def is_wrapped(fn) -> bool:
    """Whether calls of fn are recorded through wrap() (its name in the code is wrap()'s)."""
    if fn in _autowrapped:
        return True
    return any(g.get(name, getattr(builtins, name, None)) is fn
               for (_, name), g in _wrapped_fns.items())


class PHBase:
    """A concrete_args value meaning 'make this input a placeholder'."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def wrap(fn_or_name):
    """Records calls of a module-level function as one call_function node (not traced
    through). Call it at module scope: `torch.fx.wrap(my_fn)` or `torch.fx.wrap('len')`."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise AssertionError("Unsupported type for global function! Must be either a "
                             "callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    # by name: the function may be defined after this call
    _wrapped_fns[(id(frame.f_globals), name)] = frame.f_globals
    return fn_or_name


class _Patcher:
    """Sets attributes and dict entries for the duration of a trace, then restores them."""

    def __init__(self):
        self._undo: list = []

    def setitem(self, d: dict, name: str, value) -> None:
        had = name in d
        old = d.get(name)
        d[name] = value
        self._undo.append(lambda: d.__setitem__(name, old) if had else d.pop(name, None))

    def setattr(self, obj, name: str, value) -> None:
        had = name in vars(obj)
        old = vars(obj).get(name)
        setattr(obj, name, value)
        self._undo.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()


def _recording_function(orig):
    @functools.wraps(orig)
    def wrapped(*args, **kwargs):
        p = _tracing_functions.find_proxy(args, kwargs)
        if p is None:
            return orig(*args, **kwargs)
        return p.tracer.create_proxy("call_function", orig, args, kwargs)
    return wrapped


class Tracer(TracerBase):
    """Symbolic tracer: `Tracer().trace(root)` returns the Graph of root's forward.

    Subclass it to change which modules are leaves (is_leaf_module), what a module call
    records (call_module), or every node (create_node / create_proxy).
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant: bool = False):
        super().__init__()
        self._autowrap_modules = list(autowrap_modules)
        self._autowrap_ids = {id(v) for m in autowrap_modules for k, v in vars(m).items()
                              if not k.startswith("_") and callable(v)}
        self._autowrap_ids |= {id(f) for f in autowrap_functions}
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root = None
        self.tensor_attrs: dict = {}
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}
        _tracing_functions.install()

    # -- what values become ------------------------------------------------------------
    def create_arg(self, a):
        import torchjax
        from torchjax import nn
        if isinstance(a, nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, torchjax.Tensor):
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", n, (), {})
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, nn.Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            # a named tuple is rebuilt by a call of its class, so the code can construct it
            return self.create_node("call_function", type(a),
                                    tuple(self.create_arg(e) for e in a), {})
        return super().create_arg(a)

    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """torch.nn's own modules (not Sequential) are leaves: one call_module node each."""
        from torchjax import nn
        mod = type(m).__module__ or ""
        return (mod.startswith("torchjax.nn") or mod.startswith("torch.nn")) and \
            not isinstance(m, nn.Sequential)

    def path_of_module(self, mod) -> str:
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A leaf module's call as a call_module node; other modules are traced through."""
        qualname = self.path_of_module(m)
        if not self.is_leaf_module(m, qualname):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualname, args, kwargs)

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        """A parameter (or buffer) read in forward: a get_attr Proxy, made once per name."""
        import torchjax
        from torchjax import nn

        def proxy_for(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node, n=n):
                                return ParameterProxy(self, node, n, attr_val)
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, nn.Parameter):
            p = proxy_for(self.root.named_parameters())
            if p is not None:
                return p
        if self.proxy_buffer_attributes and isinstance(attr_val, torchjax.Tensor):
            p = proxy_for(self.root.named_buffers())
            if p is not None:
                return p
        return attr_val

    # -- the inputs --------------------------------------------------------------------
    def _placeholder(self, name: str, concrete_args, sig):
        param = sig.parameters.get(name.lstrip("*"))
        if concrete_args is not None and name in concrete_args:
            return self._concrete_placeholder(name, concrete_args[name], param)
        type_expr = None
        if param is not None and param.annotation is not inspect.Parameter.empty:
            type_expr = param.annotation
        default = ()
        if param is not None and param.default is not inspect.Parameter.empty and \
                not name.startswith("*"):
            default = (param.default,)
        return self.create_proxy("placeholder", name, default, {}, type_expr=type_expr)

    def _concrete_placeholder(self, name: str, value, param):
        """A concrete_args entry: PH stays an input; a value is used as is, its placeholder
        kept (named name_1, as PyTorch names it) with an assertion that it gets that value."""
        import torchjax
        default = () if param is None or param.default is inspect.Parameter.empty else \
            (param.default,)
        out = self.create_proxy("placeholder", f"{name}_1", default, {})
        if isinstance(value, PHBase):
            return out
        if isinstance(value, (bool, int, float, str, complex, torchjax.dtype)):
            torchjax._assert(out == value, f"{name} has been specialized to have value "
                                           f"{value} but got another value")
        elif value is None:
            self.create_proxy("call_function", _assert_is_none,
                              (out, f"{name} has been specialized to have value None but got "
                                    f"another value"), {})
        else:
            warnings.warn(f"Was not able to add assertion to guarantee correct input {name} "
                          f"to specialized function. It is up to the user to make sure that "
                          f"your inputs match the inputs you specialized the function with.",
                          stacklevel=4)
        return value

    def create_args_for_root(self, root_fn, is_module: bool, concrete_args=None):
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total = co.co_argcount + co.co_kwonlyargcount
        names = list(co.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = names[skip:total]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._placeholder(n, concrete_args, sig) for n in arg_names)
        nxt = total
        if co.co_flags & inspect.CO_VARARGS:
            args.append(self._placeholder("*" + names[nxt], concrete_args, sig))
            nxt += 1
        if co.co_flags & inspect.CO_VARKEYWORDS:
            args.append(self._placeholder("**" + names[nxt], concrete_args, sig))
        if co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or co.co_kwonlyargcount:
            root_fn = _flattened(root_fn, len(args))
        return root_fn, args

    # -- tracing -----------------------------------------------------------------------
    def trace(self, root, concrete_args=None) -> Graph:
        """The Graph of `root` (a Module's forward, or a function) called on Proxies."""
        from torchjax import nn
        old_flag = _is_fx_tracing[0]
        _is_fx_tracing[0] = True
        try:
            if isinstance(root, nn.Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = nn.Module()
                fn = root
            tracer_cls = getattr(self, "__class__", None)
            self.graph = Graph(tracer_cls=tracer_cls)
            self.tensor_attrs = _plain_tensor_attrs(self.root)
            fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
            fn, args = self.create_args_for_root(fn, isinstance(root, nn.Module),
                                                 concrete_args)
            cache: dict = {}
            patcher = _Patcher()
            self._patch(patcher, fn_globals, cache)
            try:
                result = fn(*args)
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=getattr(fn, "__annotations__", {}).get("return"))
            finally:
                patcher.restore()
            self.submodule_paths = None
        finally:
            _is_fx_tracing[0] = old_flag
        return self.graph

    def _patch(self, patcher: _Patcher, fn_globals: dict, cache: dict) -> None:
        from torchjax import nn
        tracer = self
        orig_getattr = nn.Module.__getattr__
        orig_call = nn.Module.__call__

        def module_getattr(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        def module_call(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)
            return tracer.call_module(mod, forward, args, kwargs)

        patcher.setattr(nn.Module, "__getattr__", module_getattr)
        patcher.setattr(nn.Module, "__call__", module_call)
        for (_, name), g in list(_wrapped_fns.items()):
            orig = g.get(name, getattr(builtins, name, None))
            if orig is not None:
                patcher.setitem(g, name, _recording_function(orig))
        # globals that hold an unwrapped torch function or a math function, and math's own
        # (`math.sqrt(x.size(0))` is recorded, as PyTorch's autowrap_modules do)
        for d in [fn_globals] + [vars(m) for m in self._autowrap_modules]:
            for name, value in list(d.items()):
                if name.startswith("__") or not callable(value):
                    continue
                w = _tracing_functions.wrapper_for(value) if d is fn_globals else None
                if w is not None:
                    patcher.setitem(d, name, w)
                elif id(value) in self._autowrap_ids and (id(d), name) not in _wrapped_fns:
                    patcher.setitem(d, name, _recording_function(value))
                    _autowrapped.add(value)


def _plain_tensor_attrs(root) -> dict:
    """id(tensor) -> qualified name, for tensors kept as plain attributes of root's modules
    (neither parameter nor buffer): a use of one becomes a get_attr of that name."""
    import torchjax
    found: dict = {}
    for prefix, mod in root.named_modules():
        for k, v in vars(mod).items():
            if isinstance(v, torchjax.Tensor) and id(v) not in found:
                found[id(v)] = f"{prefix}.{k}" if prefix else k
    return found


def _assert_is_none(value, msg):
    assert value is None, msg


def _flattened(root_fn, nargs: int):
    """root_fn with its keyword-only, *args and **kwargs parameters made plain positional
    ones, so each takes its placeholder's Proxy as is (`args[0]` in the body records a
    getitem of the *args placeholder, as in PyTorch)."""
    fn = inspect.unwrap(root_fn)
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_flags=flags, co_argcount=nargs, co_posonlyargcount=0,
                      co_kwonlyargcount=0)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def symbolic_trace(root, concrete_args=None):
    """Traces a Module or function into a GraphModule (`Tracer().trace` + GraphModule)."""
    from torchjax import nn

    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

