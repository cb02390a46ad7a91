"""The Python source of a Graph: what GraphModule.code shows and what its forward runs.

It is written as PyTorch's FX writes it (same statement forms, a value set to None after its
last use, `torch.`-qualified functions), so that `print(gm.code)` reads the same; the
generated code's `torch` global is torchjax.
"""

from __future__ import annotations

import builtins
import keyword
import math
from dataclasses import dataclass

from ._names import Namespace, torch_name
from .node import Node

_INFIX = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
          "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
          "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
          "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}", "eq": "{} == {}",
          "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
          "ge": "{} >= {}"}
_PREFIX = {"neg": "-{}", "pos": "+{}", "invert": "~{}"}
WRAP_NAME = "torch.fx._symbolic_trace.wrap"


@dataclass
class PythonCode:
    src: str
    globals: dict


def _format_target(base: str, target: str) -> str:
    r = base
    for e in target.split("."):
        r = f"{r}.{e}" if e.isidentifier() else f'getattr({r}, "{e}")'
    return r


def _base_globals() -> dict:
    import torchjax
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": torchjax,
            "device": torchjax.device}


class _Emitter:
    def __init__(self, graph):
        self.graph = graph
        self.globals = _base_globals()
        self.ns = Namespace()
        for name in self.globals:
            self.ns.create_name(name, self.globals[name])
        for node in graph.nodes:
            self.ns.create_name(node.name, node)
        self.wrapped: dict = {}

    def add_global(self, obj) -> str:
        """The name the code calls `obj` by; a new global unless it is torch's or builtin."""
        if getattr(builtins, getattr(obj, "__name__", "") or "", None) is obj:
            return obj.__name__
        name = torch_name(obj)
        if name is not None:
            return name
        mod = getattr(obj, "__module__", None) or ""
        hint = f"{mod}.{getattr(obj, '__name__', 'fn')}" if mod else \
            getattr(obj, "__name__", "fn")
        name = self.ns.create_name(hint, obj)
        self.globals[name] = obj
        return name

    def type_repr(self, t) -> str:
        if t is None:
            return ""
        from .node import _type_repr
        return _type_repr(t)

    def repr_arg(self, a) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            inner = ", ".join(self.repr_arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.repr_arg(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.repr_arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return (f"slice({self.repr_arg(a.start)}, {self.repr_arg(a.stop)}, "
                    f"{self.repr_arg(a.step)})")
        if isinstance(a, float) and (math.isinf(a) or math.isnan(a)):
            return repr(a)
        if callable(a) and not isinstance(a, str):
            return self.add_global(a)
        return repr(a)

    def call_args(self, args, kwargs) -> str:
        parts = [self.repr_arg(a) for a in args]
        parts += [f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def statement(self, node: Node) -> str | None:
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "placeholder":
            # the signature names the input by its target; a node named otherwise (`input`
            # is a builtin: input_1) takes it in a first statement
            raw = target.replace("*", "")
            return None if raw == node.name else f"{node.name} = {raw}"
        if op == "get_attr":
            return f"{node.name} = {_format_target('self', target)}"
        if op == "call_module":
            return f"{node.name} = {_format_target('self', target)}" \
                   f"({self.call_args(args, kwargs)})"
        if op == "call_method":
            return f"{node.name} = {self.repr_arg(args[0])}.{target}" \
                   f"({self.call_args(args[1:], kwargs)})"
        if op == "output":
            return f"return {self.repr_arg(args[0])}"
        # call_function
        is_operator = getattr(target, "__module__", None) == "_operator"
        name = getattr(target, "__name__", "")
        if is_operator and not kwargs and name in _INFIX and len(args) == 2:
            return f"{node.name} = " + _INFIX[name].format(*(self.repr_arg(a) for a in args))
        if is_operator and not kwargs and name in _PREFIX and len(args) == 1:
            return f"{node.name} = " + _PREFIX[name].format(self.repr_arg(args[0]))
        if target is getattr and len(args) == 2 and not kwargs and isinstance(args[1], str) \
                and args[1].isidentifier() and not keyword.iskeyword(args[1]):
            return f"{node.name} = {self.repr_arg(args[0])}.{args[1]}"
        fn = self.add_global(target)
        from ._symbolic_trace import is_wrapped
        if is_wrapped(target):
            self.wrapped[fn] = None
        return f"{node.name} = {fn}({self.call_args(args, kwargs)})"

    def signature(self, root_module: str) -> str:
        params = [root_module]
        for node in self.graph.nodes:
            if node.op != "placeholder":
                continue
            t = self.type_repr(node.type)
            p = f"{node.target}" + (f" : {t}" if t else "")
            if node.args:
                p += f" = {self.repr_arg(node.args[0])}"
            params.append(p)
        return ", ".join(params)


def python_code(graph, root_module: str = "self") -> PythonCode:
    """PyTorch-style source of `graph`'s forward, and the globals it needs."""
    em = _Emitter(graph)
    nodes = list(graph.nodes)
    last_use: dict = {}
    to_free: dict = {n: [] for n in nodes}
    for node in reversed(nodes):
        for inp in node.all_input_nodes:
            if inp not in last_use:
                last_use[inp] = node
                to_free[node].append(inp)
    for n in to_free:
        # freed in the order the statement reads them
        order = {m: i for i, m in enumerate(n.all_input_nodes)}
        to_free[n].sort(key=order.get)
    body = []
    for node in nodes:
        stmt = em.statement(node)
        if stmt is None:
            continue
        if node.op in ("output", "placeholder"):
            body.append(stmt + "\n")
            continue
        dead = list(to_free[node])
        if not node.users:
            dead.append(node)
        if dead:
            stmt += ";  " + " = ".join([n.name for n in dead] + ["None"])
        body.append(stmt + "\n")
    if not any(n.op == "output" for n in nodes):
        body.append("pass\n")
    code = "".join(body)
    code = "\n".join("    " + line for line in code.split("\n"))
    wrap_stmts = "\n".join(f'{WRAP_NAME}("{name}")' for name in em.wrapped)
    out = next((n for n in nodes if n.op == "output"), None)
    ret = f" -> {em.type_repr(out.type)}" if out is not None and out.type is not None else ""
    src = f"\n{wrap_stmts}\n\ndef forward({em.signature(root_module)}){ret}:\n{code}"
    return PythonCode(src, em.globals)


def exec_forward(src: str, globals_: dict):
    """Compiles generated source (kept in linecache so tracebacks show its lines)."""
    import linecache
    key = f"<eval_with_key>.{len(_sources)}"
    _sources.append(key)
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    g = dict(globals_)
    exec(compile(src, key, "exec"), g)
    return g["forward"]


_sources: list = []
