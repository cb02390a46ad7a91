"""torch.fx.graph: Graph, the ordered list of Nodes a traced function is made of."""

from __future__ import annotations

import inspect

from ._names import Namespace, target_to_str
from .node import Node, map_arg

__all__ = ["Graph", "PythonCode"]


class _NodeList:
    """graph.nodes: iterates the graph's linked list (safe against erasing the current node)."""

    def __init__(self, graph, direction: str = "_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            nxt = getattr(cur, self._direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))

    def __repr__(self) -> str:
        return f"[{', '.join(n.name for n in self)}]"


class _InsertPoint:
    """graph.inserting_before/after: sets where new nodes go, put back on exit (it also takes
    effect without `with`, as PyTorch's does)."""

    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig, graph._insert = graph._insert, new_insert

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.graph._insert = self.orig


class Graph:
    """An FX graph: placeholders, operations and one output, in execution order."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = None

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- making nodes --------------------------------------------------------------------
    def create_node(self, op: str, target, args=None, kwargs=None, name=None,
                    type_expr=None) -> Node:
        """Makes a node at the insert point with a fresh unique name (from `name` or target)."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise AssertionError("create_node: args must be a tuple and kwargs a dict")
        candidate = name if name is not None else target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None,
                      name=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """A copy of a node (of this or another graph), its node args mapped by arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        name = node.name if node.op != "placeholder" else None
        new = self.create_node(node.op, node.target, args, kwargs, name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copies g's nodes (not its output) here; returns what g's output returns, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        if out is not None:
            rv, old_out = out
            g.output(rv, type_expr=getattr(old_out, "type", None))
        return g

    # -- editing -------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._graph_namespace.remove(to_erase.name)
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    def eliminate_dead_code(self, is_impure_node=None) -> bool:
        """Erases nodes without users (last to first) unless impure; True if any was erased."""
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Checks the graph is well formed: uses before definitions, targets that exist."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong "
                                       f"to this Graph, but was used as an argument! If you "
                                       f"are copying nodes from another graph, make sure to "
                                       f"use ``arg_transform`` on node_copy() to remap values"
                                       f"\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       f"it has been defined! Please check that Nodes in the "
                                       f"graph are topologically ordered\n{self}")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            seen.add(node)
        mod = self.owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                obj = mod
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        seen_qualname = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {seen_qualname}")
                    obj = getattr(obj, atom)

    # -- printing and code ---------------------------------------------------------------
    def __str__(self) -> str:
        names: list = []  # PyTorch's stays empty: it prints `graph():`
        lines = [node.format_node(names) for node in self.nodes]
        head = f"graph({', '.join(names)}):"
        return head + "".join(f"\n    {line}" for line in lines if line)

    def print_tabular(self) -> None:
        """Prints the nodes as a table (needs the `tabulate` package, as PyTorch's does)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found "
                  "on this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module: str = "self", *, verbose=None, include_stride=False,
                    include_device=False, colored=False):
        from ._codegen import python_code
        return python_code(self, root_module)

    def on_generate_code(self, make_transformer):
        raise NotImplementedError("Graph.on_generate_code is not supported by torchjax.fx")


from ._codegen import PythonCode  # noqa: E402
