"""torch.fx.GraphModule: a Module whose forward is the Python code generated from a Graph."""

from __future__ import annotations

import copy

from torchjax import nn

from ._codegen import _base_globals, exec_forward
from .graph import Graph

__all__ = ["GraphModule"]


def _copy_attr(src, dst, target: str) -> None:
    """Copies src's attribute at dotted path `target` into dst, making empty Modules for the
    levels in between (so `seq.0` copies only that layer of `seq`)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(src, item)
        t = getattr(dst, item, None)
        if f is t:
            return
        if t is None:
            t = nn.Module()
            setattr(dst, item, t)
        src, dst = f, t
    value = getattr(src, field)
    _assign(dst, field, value, isinstance(src, nn.Module) and field in src._buffers)


def _assign(dst, field: str, value, is_buffer: bool) -> None:
    import torchjax
    if is_buffer or (isinstance(value, torchjax.Tensor) and not isinstance(value, nn.Parameter)
                     and not isinstance(value, nn.Module)):
        dst.register_buffer(field, value)
    else:
        setattr(dst, field, value)


def _assign_path(dst, target: str, value) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(dst, item, None)
        if t is None:
            t = nn.Module()
            setattr(dst, item, t)
        dst = t
    _assign(dst, field, value, False)


class GraphModule(nn.Module):
    """GraphModule(root, graph): holds what graph's get_attr/call_module nodes name (copied
    from `root`, a Module or a dict of names to values) and runs graph as its forward."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class: forward is set on the class by recompile()
        for t in cls.__mro__:
            c = t.__qualname__.split(".")[-1]
            if c != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_path(self, node.target, root[node.target])
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self.meta = getattr(root, "meta", {}) if isinstance(root, nn.Module) else {}

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of forward (what print(gm.code) shows)."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerates forward from self.graph (call it after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._globals = python_code.globals
        type(self).forward = exec_forward(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, **kwargs) -> str:
        """The module as a class (forward's code indented under it), printed and returned.

        torchjax records no stack traces on nodes, so the single note PyTorch writes over
        nodes without one heads the body."""
        lines = self._code.strip("\n").rstrip().split("\n")
        body = [f"    {lines[0]}", "        # No stacktrace found for following nodes"]
        body += [f"    {ln}" for ln in lines[1:]]
        text = f"class {self._get_name()}(torch.nn.Module):\n" + "\n".join(body) + "\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __copy__(self):
        # a copy (and a pickle's load) is a plain GraphModule, as PyTorch names it
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo):
        fake = nn.Module()
        body = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_globals")}
        fake.__dict__ = copy.deepcopy(body, memo)
        res = GraphModule(fake, copy.deepcopy(self.graph, {}))
        return res

    def __reduce__(self):
        state = self.__getstate__()
        state.pop("_graph", None)
        extra = {k: v for k, v in state.pop("_globals", {}).items()
                 if k not in _base_globals()}
        return (_rebuild, (state, self._code, extra, "GraphModule"))

    def to_folder(self, folder, module_name: str = "FxModule") -> None:
        """Writes folder/module.py (class `module_name`), its weights and submodules."""
        from ._to_folder import to_folder
        to_folder(self, folder, module_name)


def _rebuild(state: dict, src: str, extra_globals: dict, class_name: str):
    """Unpickles a GraphModule: its forward's source is traced again (every module a leaf)."""
    from ._symbolic_trace import Tracer

    class _KeepModules(Tracer):
        def is_leaf_module(self, m, qualname):
            return True

    forward = exec_forward(src, {**_base_globals(), **extra_globals})

    class _CodeOnly(nn.Module):
        pass

    _CodeOnly.forward = forward
    root = _CodeOnly.__new__(_CodeOnly)
    root.__setstate__(state)
    graph = _KeepModules().trace(root)
    return GraphModule(root, graph, class_name)
