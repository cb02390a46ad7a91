"""torch.fx.Interpreter (runs a GraphModule node by node) and Transformer (rebuilds it)."""

from __future__ import annotations

import contextlib

from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs `module`'s graph one node at a time; override a per-op method (call_function,
    call_module, ...) or run_node to change what a node does."""

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for n in node.all_input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Runs the graph on args; returns what its output node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    @contextlib.contextmanager
    def _set_current_node(self, node):
        yield

    def run_node(self, n: Node):
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per op -------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        if target.startswith("**"):
            return {}
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as e:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from e

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # -- helpers -----------------------------------------------------------------------
    def fetch_attr(self, target: str):
        obj = self.module
        parts = target.split(".")
        for i, atom in enumerate(parts):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(parts[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node):
        """n's args and kwargs with each node replaced by its value from self.env."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n: Node):
        def load(node):
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run "
                                   f"Graph.lint() to diagnose such issues")
            return self.env[node]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    """Appends to the Transformer's new graph; every module called is a leaf."""

    def __init__(self, graph: Graph, root):
        super().__init__()
        self.graph = graph
        self.root = root
        self.tensor_attrs = {}

    def is_leaf_module(self, m, qualname) -> bool:
        return True


class Transformer(Interpreter):
    """Builds a new GraphModule by running each node's method on Proxies of a new graph:
    override call_function & co. to emit something else (e.g. gelu for relu)."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else None
        node = self.new_graph.placeholder(target) if not args else \
            self.new_graph.placeholder(target, default_value=default)
        return Proxy(node, self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The rewritten module."""
        self.env = {}
        self.args_iter = iter(())
        result = None
        for node in self.graph.nodes:
            if node.op == "output":
                result = self.fetch_args_kwargs_from_env(node)[0][0]
                break
            with self._set_current_node(node):
                args, kwargs = self.fetch_args_kwargs_from_env(node)
                self.env[node] = getattr(self, node.op)(node.target, args, kwargs)
        out = map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a)
        self.new_graph.output(out)
        return GraphModule(self.module, self.new_graph)
