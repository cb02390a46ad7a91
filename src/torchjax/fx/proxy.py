"""torch.fx.proxy: Proxy (a traced value), Attribute, TracerBase, GraphAppendingTracer.

A Proxy records what is done to it as nodes of its tracer's graph: operators through the
magic methods below, Tensor methods through attribute access then a call (call_method),
torch functions through the wrappers torchjax.fx puts on torch's public functions (torchjax
has no __torch_function__ dispatch: see _tracing_functions).
"""

from __future__ import annotations

import bisect
import dis
import inspect
import math
import operator

from .graph import Graph
from .node import Node

__all__ = ["Proxy", "Attribute", "TracerBase", "GraphAppendingTracer", "TraceError",
           "ParameterProxy"]


class TraceError(ValueError):
    """Raised when a traced function uses a Proxy where a concrete value is needed."""


def _leaf_types():
    import torchjax
    return (str, int, float, bool, complex, type(None), type(...), torchjax.dtype,
            torchjax.device, torchjax.memory_format, torchjax.layout, range)


class TracerBase:
    """Turns calls on Proxies into nodes of `self.graph`."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind: str, target, args, kwargs, name=None, type_expr=None) -> Node:
        """Adds one node to the graph; override to tag or redirect every node made."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Records one operation (arguments through create_arg) and returns its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """A value as a node argument: Proxies become their nodes, containers are mapped."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, _leaf_types()) or a is None:
            return a
        if callable(a) or isinstance(a, type):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in "
            "a loop or as a *args or **kwargs function argument. See the torch.fx docs on "
            "pytorch.org for a more detailed explanation of what types of control flow can "
            "be traced, and check out the Proxy docstring for help troubleshooting Proxy "
            "iteration errors")

    def keys(self, obj: Proxy):
        return Attribute(obj, "keys")()

    def path_of_module(self, mod) -> str:
        raise NotImplementedError("this tracer has no root module")


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (Proxy(node) without a tracer)."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}


def _unpack_count(frame) -> int | None:
    """n if the instruction running in `frame` (the one that called iter()) unpacks n values:
    `a, b = proxy` can be traced, a loop over a Proxy cannot."""
    insts = list(dis.get_instructions(frame.f_code))
    i = bisect.bisect_left(insts, frame.f_lasti, key=lambda ins: ins.offset)
    if i < len(insts) and insts[i].opname == "UNPACK_SEQUENCE":
        return insts[i].argval
    return None


class Proxy:
    """A value under symbolic tracing: every use of it records a node in `tracer.graph`.

    `Proxy(node)` without a tracer appends to node.graph (a GraphAppendingTracer).
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        from . import _tracing_functions
        _tracing_functions.install()  # (a graph built by hand: once per process)
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        import copy
        new = Proxy.__new__(Proxy)
        memo[id(self)] = new
        new.__dict__ = {"node": self.node, "tracer": self.tracer}
        for k, v in self.__dict__.items():
            if k not in ("node", "tracer"):
                new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        n = _unpack_count(frame) if frame is not None else None
        if n is not None:
            return (self[i] for i in range(n))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    def keys(self):
        return self.tracer.keys(self)

    def __hash__(self) -> int:
        return id(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __round__(self, ndigits=None):
        args = (self,) if ndigits is None else (self, ndigits)
        return self.tracer.create_proxy("call_function", round, args, {})

    def __trunc__(self):
        return self.tracer.create_proxy("call_function", math.trunc, (self,), {})

    def __floor__(self):
        return self.tracer.create_proxy("call_function", math.floor, (self,), {})

    def __ceil__(self):
        return self.tracer.create_proxy("call_function", math.ceil, (self,), {})


class ParameterProxy(Proxy):
    """A parameter's Proxy that answers shape questions from the real parameter."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


class Attribute(Proxy):
    """`proxy.name`: a getattr node, made only if the attribute is used as a value (a call
    of it is recorded as one call_method node instead)."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


# the binary operators a Proxy records (the reflected form too), and the unary ones
_BINARY = ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift",
           "and_", "or_", "xor", "matmul")
_COMPARE = ("eq", "ne", "lt", "gt", "le", "ge", "getitem")
_UNARY = ("neg", "pos", "invert")


def _define(name: str) -> None:
    target = getattr(operator, name)
    dunder = f"__{name.rstrip('_')}__"

    def impl(self, *rest):
        return self.tracer.create_proxy("call_function", target, (self,) + rest, {})

    impl.__name__ = dunder
    setattr(Proxy, dunder, impl)


def _define_reflected(name: str) -> None:
    target = getattr(operator, name)
    dunder = f"__r{name.rstrip('_')}__"

    def impl(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})

    impl.__name__ = dunder
    setattr(Proxy, dunder, impl)


for _name in _BINARY + _COMPARE + _UNARY:
    _define(_name)
for _name in _BINARY:
    _define_reflected(_name)
del _name
