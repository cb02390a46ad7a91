"""make_dot: a picture of the autograd graph behind a tensor, in torchviz's style.

    from torchjax.utils.viz import make_dot
    make_dot(loss, params=model).render("graph", format="svg")

One box per grad_fn (MulBackward0, AccumulateGrad, ...), a blue box for each leaf named from
`params` with its shape, a green box for each output tensor, and with show_saved an orange
box per array the backward saved. Needs the graphviz package (pip install "torchjax[viz]");
rendering to an image also needs Graphviz's `dot` program.

The walk is iterative: a graph thousands of ops deep (an unrolled loop) draws without
reaching Python's recursion limit.
"""

from __future__ import annotations

from .._tensor import Tensor

__all__ = ["make_dot"]

_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                  height="0.2", fontname="monospace")
_LEAF, _SAVED, _OUTPUT, _BASE = "lightblue", "orange", "darkolivegreen1", "darkolivegreen3"


def _graphviz():
    try:
        import graphviz
    except ImportError as e:
        raise ImportError('make_dot needs the graphviz Python package: pip install '
                          '"torchjax[viz]" (rendering images also needs the Graphviz `dot` '
                          'program, e.g. apt-get install graphviz)') from e
    return graphviz


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(d)) for d in shape) + ")"


def _var_label(t, name: str = "") -> str:
    return f"{name}\n{_shape(t.shape)}" if name else _shape(t.shape)


def _dtype_name(arr) -> str:
    dt = getattr(arr, "dtype", None)
    if isinstance(arr, Tensor):
        return str(dt).replace("torch.", "")
    return getattr(dt, "name", str(dt))


def _param_names(params) -> dict:
    """id(tensor) -> name, from a dict or a Module (its named_parameters())."""
    if params is None:
        return {}
    named = getattr(params, "named_parameters", None)
    items = named() if callable(named) else params.items()
    names = {}
    for name, p in items:
        if not isinstance(p, Tensor):
            raise TypeError(f"params values must be Tensors, but {name!r} is "
                            f"{type(p).__name__}")
        names[id(p)] = name
    return names


def _saved_entries(fn) -> list:
    """(label, value) for what fn's backward keeps: arrays, numbers, tuples of them.

    Entries are named by position ("saved[1]"): unlike PyTorch's generated nodes, ours keep
    one tuple per op, not one attribute per argument. A freed graph (after backward) has none.
    """
    if isinstance(getattr(type(fn), "saved_tensors", None), property):
        # a custom Function's node (it is also the ctx): what forward saved for backward
        try:
            tensors = fn.saved_tensors
        except RuntimeError:  # freed by backward
            return []
        return [(f"saved_tensors[{i}]", t) for i, t in enumerate(tensors) if t is not None]
    saved = getattr(fn, "_saved", None)
    if saved is None:
        return []
    if hasattr(fn, "saved_values"):
        try:
            saved = fn.saved_values()  # through saved_tensors_hooks' unpack, when packed
        except Exception:
            return []
    entries = []
    for i, v in enumerate(saved):
        if isinstance(v, tuple):
            entries.extend((f"saved[{i}][{j}]", x) for j, x in enumerate(v) if x is not None)
        elif v is not None:
            entries.append((f"saved[{i}]", v))
    return entries


def _is_array(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (int, float))


def _attr_text(v) -> str:
    if _is_array(v):
        t = v if isinstance(v, Tensor) else Tensor._wrap(v)
        return " ".join(str(t.detach()).split())
    return str(v)


def _fn_label(fn, show_attrs: bool, max_attr_chars: int) -> str:
    name = type(fn).__name__
    if not show_attrs:
        return name
    attrs = [(k, _attr_text(v)) for k, v in _saved_entries(fn)]
    if not attrs:
        return name
    # a two-column table under the name, values cut to max_attr_chars (as torchviz does)
    max_attr_chars = max(max_attr_chars, 3)
    w1 = max(len(k) for k, _ in attrs)
    w2 = min(max(len(v) for _, v in attrs), max_attr_chars)
    sep = "-" * max(w1 + w2 + 2, len(name))
    rows = [f"{k:>{w1}}: {(v[:w2 - 3] + '...') if len(v) > w2 else v:<{w2}}"
            for k, v in attrs]
    return "\n".join([name, sep, *rows])


def make_dot(var, params=None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50):
    """The autograd graph of `var` (a Tensor or a tuple/list of Tensors) as a graphviz.Digraph.

    Args:
        var: the output(s) whose history is drawn.
        params: names for leaves: a dict name -> Tensor, or a Module (its named_parameters()).
        show_attrs: list what each node's backward saved (values cut to max_attr_chars).
        show_saved: draw each saved array as its own box with its shape and dtype.
        max_attr_chars: the longest value shown by show_attrs.
    """
    graphviz = _graphviz()
    names = _param_names(params)
    dot = graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    seen: set = set()
    keep = []  # objects whose id() names a drawn box stay alive, so ids stay unique

    def box(obj, label, color=None):
        keep.append(obj)
        if color is None:
            dot.node(str(id(obj)), label)
        else:
            dot.node(str(id(obj)), label, fillcolor=color)

    def draw_node(fn, pending):
        box(fn, _fn_label(fn, show_attrs, max_attr_chars))
        variable = getattr(fn, "variable", None)
        if isinstance(variable, Tensor):  # AccumulateGrad: the leaf it fills
            if id(variable) not in seen:
                seen.add(id(variable))
                box(variable, _var_label(variable, names.get(id(variable), "")), _LEAF)
            dot.edge(str(id(variable)), str(id(fn)))
        if show_saved:
            # one box per saved slot, even when two slots hold one array (x * x saves x
            # twice): the label says which slot of which node it is
            for label, v in _saved_entries(fn):
                if _is_array(v):
                    key = f"{id(fn)}_{label}"
                    dot.node(key, f"{label}\n{_shape(v.shape)} {_dtype_name(v)}",
                             fillcolor=_SAVED)
                    dot.edge(str(id(fn)), key, dir="none")
        for child, _ in fn.next_functions:
            if child is None:
                continue
            dot.edge(str(id(child)), str(id(fn)))
            if id(child) not in seen:
                seen.add(id(child))
                pending.append(child)

    def draw_tensor(t, color):
        """A tensor's box, its grad_fn's whole history, and (for a view) its base."""
        queue = [(t, color)]
        while queue:
            t, color = queue.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            box(t, _var_label(t, names.get(id(t), "")), color)
            fn = t.grad_fn
            if fn is not None:
                dot.edge(str(id(fn)), str(id(t)))
                if id(fn) not in seen:
                    seen.add(id(fn))
                    pending = [fn]
                    while pending:  # depth-first with an explicit stack: no recursion
                        draw_node(pending.pop(), pending)
            base = getattr(t, "_base", None)
            if isinstance(base, Tensor):
                queue.append((base, _BASE))
                dot.edge(str(id(base)), str(id(t)), style="dotted")

    outputs = tuple(var) if isinstance(var, (tuple, list)) else (var,)
    for t in outputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dot expects a Tensor or a tuple of Tensors, got "
                            f"{type(t).__name__}")
        draw_tensor(t, _OUTPUT)
    _resize(dot)
    return dot


def _resize(dot, size_per_element: float = 0.15, min_size: float = 12) -> None:
    # big graphs get a bigger canvas, so the boxes stay readable
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
