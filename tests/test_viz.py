"""torchjax.utils.viz.make_dot: the DOT source of autograd graphs (always), compared with the
graph PyTorch records for the same program, and rendering (when Graphviz's `dot` exists)."""

import re
import shutil
import sys

import pytest
import torch

import torchjax
from torchjax.utils.viz import make_dot

graphviz = pytest.importorskip("graphviz")

NODE = re.compile(r'^\t(\S+) \[label=("(?:[^"\\]|\\.)*"|[^ \]]+)(?: fillcolor=(\S+))?\]$',
                  re.M | re.S)
EDGE = re.compile(r"^\t(\S+) -> (\S+)(?: \[(.*)\])?$", re.M)


def parse(dot):
    """{id: (label, fillcolor)} and [(tail, head, attrs)] from a Digraph's source."""
    nodes = {}
    for key, label, color in NODE.findall(dot.source):
        nodes[key] = (label.strip('"'), color or None)
    return nodes, EDGE.findall(dot.source)


def labels(dot, color=None):
    nodes, _ = parse(dot)
    return sorted(lab for lab, c in nodes.values() if c == color)


def torch_fn_names(t):
    """grad_fn class names of a real torch graph, one per node (iterative walk)."""
    seen, names, stack = set(), [], [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append(type(fn).__name__)
        stack.extend(f for f, _ in fn.next_functions)
    return sorted(names)


def polynomial(lib):
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    return x, y


def seed_mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(
        lib.nn.Linear(4, 8),
        lib.nn.ReLU(),
        lib.nn.Linear(8, 1),
    )
    X = lib.randn(10, 4)
    y = lib.randn(10, 1)
    pred = model(X)
    loss = ((pred - y) ** 2).mean()
    return model, loss


def test_polynomial_graph_matches_torch():
    x, y = polynomial(torchjax)
    dot = make_dot(y, params={"x": x})
    _, ty = polynomial(torch)
    # grad_fn boxes: the same nodes PyTorch records for the same program
    assert labels(dot) == torch_fn_names(ty) == [
        "AccumulateGrad", "AddBackward0", "AddBackward0", "MulBackward0", "MulBackward0"]
    assert labels(dot, "lightblue") == ["x\n()"]
    assert labels(dot, "darkolivegreen1") == ["()"]  # the output
    nodes, edges = parse(dot)
    by_label = {}
    for key, (lab, _) in nodes.items():
        by_label.setdefault(lab, []).append(key)
    # x * x reaches x's AccumulateGrad twice, 3 * x once; the leaf feeds its AccumulateGrad
    acc = by_label["AccumulateGrad"][0]
    assert sorted(nodes[h][0] for t, h, _ in edges if t == acc) == ["MulBackward0"] * 3
    assert [(t, h) for t, h, _ in edges if h == acc] == [(by_label["x\n()"][0], acc)]
    assert len(edges) == 8
    assert isinstance(dot, graphviz.Digraph)


def test_mlp_params_from_module_and_dict():
    model, loss = seed_mlp(torchjax)
    leaves = ["0.bias\n(8)", "0.weight\n(8, 4)", "2.bias\n(1)", "2.weight\n(1, 8)"]
    from_module = make_dot(loss, params=model)
    assert labels(from_module, "lightblue") == leaves
    from_dict = make_dot(loss, params=dict(model.named_parameters()))
    assert labels(from_dict, "lightblue") == leaves
    fns = labels(from_module)
    assert fns.count("AccumulateGrad") == 4
    for name in ("AddmmBackward0", "ReluBackward0", "SubBackward0", "PowBackward0",
                 "MeanBackward0"):
        assert name in fns
    # the same op nodes as PyTorch's graph, except its TBackward0 (weight transposes)
    _, tloss = seed_mlp(torch)
    assert fns == [n for n in torch_fn_names(tloss) if n != "TBackward0"]
    # without names the leaves show their shapes only
    assert labels(make_dot(loss), "lightblue") == ["(1)", "(1, 8)", "(8)", "(8, 4)"]


def test_show_saved_and_show_attrs():
    x, y = polynomial(torchjax)
    plain = make_dot(y)
    assert labels(plain, "orange") == []
    saved = make_dot(y, show_saved=True)
    # x * x saves both operands, 3 * x saves x (and the number 3, which is no box)
    assert labels(saved, "orange") == ["saved[0]\n() float32"] * 2 + ["saved[1]\n() float32"]
    nodes, edges = parse(saved)
    assert sum(1 for _, h, a in edges if nodes[h][1] == "orange" and a == "dir=none") == 3

    attrs = make_dot(y, show_attrs=True)
    muls = [lab for lab in labels(attrs) if lab.startswith("MulBackward0")]
    assert "MulBackward0\n--------------------\nsaved[0]: tensor(2.)\nsaved[1]: 3         " \
        in muls
    short = make_dot(y, show_attrs=True, max_attr_chars=5)
    assert any("saved[0]: te..." in lab for lab in labels(short))


def test_saved_shapes_and_dtypes_in_mlp():
    model, loss = seed_mlp(torchjax)
    saved = labels(make_dot(loss, params=model, show_saved=True), "orange")
    assert "saved[0]\n(10, 4) float32" in saved  # the input the first Linear keeps
    assert all(lab.endswith("float32") for lab in saved)


def test_after_backward_saved_values_are_gone():
    x, y = polynomial(torchjax)
    y.backward()
    dot = make_dot(y, params={"x": x}, show_saved=True, show_attrs=True)
    assert labels(dot, "orange") == []
    # the multiplications' saved arrays are freed; numbers (the Add's 1) stay, as in PyTorch
    assert [lab.split("\n")[0] for lab in labels(dot)] == sorted(
        ["AccumulateGrad", "AddBackward0", "AddBackward0", "MulBackward0", "MulBackward0"])
    assert "MulBackward0" in labels(dot)


def test_custom_function_and_tuple_outputs_and_views():
    class Scale(torchjax.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    w = torchjax.ones(2, 3, requires_grad=True)
    h = Scale.apply(w)
    first, second = h.unbind(0)  # two outputs, both views of h
    dot = make_dot((first, second), params={"w": w}, show_saved=True)
    fns = labels(dot)
    assert fns.count("ScaleBackward") == 1
    assert labels(dot, "orange") == ["saved_tensors[0]\n(2, 3) float32"]
    assert labels(dot, "darkolivegreen1") == ["(3)", "(3)"]
    assert labels(dot, "darkolivegreen3") == ["(2, 3)"]  # the base both views come from
    _, edges = parse(dot)
    assert sum(1 for *_, a in edges if a == "style=dotted") == 2


def test_deep_graph_is_walked_without_recursion():
    x = torchjax.tensor(1.0, requires_grad=True)
    y = x
    depth = sys.getrecursionlimit() + 500
    for _ in range(depth):
        y = y * 1.0
    dot = make_dot(y, params={"x": x})
    assert labels(dot).count("MulBackward0") == depth
    size = float(dot.graph_attr["size"].split(",")[0])
    assert size > 12  # the canvas grows with the graph


def test_bad_arguments():
    x, y = polynomial(torchjax)
    with pytest.raises(TypeError, match="params values must be Tensors"):
        make_dot(y, params={"x": 2.0})
    with pytest.raises(TypeError, match="Tensor"):
        make_dot([y, 3])


def test_missing_graphviz_says_how_to_install(monkeypatch):
    _, y = polynomial(torchjax)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz now fails
    with pytest.raises(ImportError, match=re.escape('pip install "torchjax[viz]"')):
        make_dot(y)


def test_exposed_from_torchjax_utils():
    assert torchjax.utils.viz.make_dot is make_dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program not installed")
def test_renders_svg():
    model, loss = seed_mlp(torchjax)
    svg = make_dot(loss, params=model, show_saved=True).pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    for text in ("AddmmBackward0", "MeanBackward0", "0.weight", "(8, 4)"):
        assert text in svg
