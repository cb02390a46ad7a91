"""torchjax.fx against torch.fx: the same module or function traced by both gives the same
graph (node ops, targets, names), the same printed graph and generated code, and the
GraphModules compute the same values and gradients.

Where the printouts differ by design it is stated at the test: PyTorch's C++ functionals
(F.gelu, F.linear) print as torch._C._nn.X, torchjax's as torch.nn.functional.X.
"""

import operator

import numpy as np
import pytest
import torch
import torch.fx

import torchjax

from ._fx_common import (
    code_of,
    fx_fixture,  # noqa: F401  (the fx fixture)
    graph_of,
    make_model,
    node_table,
    np_of,
    trace_both,
)


def test_traced_graph_code_and_values_match_pytorch(fx):
    pt, tj = trace_both(fx, make_model)
    assert node_table(tj) == node_table(pt)
    assert graph_of(tj, torchjax) == graph_of(pt, torch)
    assert code_of(tj, torchjax) == code_of(pt, torch)
    assert sorted(tj.state_dict()) == sorted(pt.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    xp = torch.tensor(x, requires_grad=True)
    xj = torchjax.tensor(x, requires_grad=True)
    out_p, out_j = pt(xp), tj(xj)
    for k in ("a", "b", "c"):
        np.testing.assert_allclose(np_of(out_j[k]), np_of(out_p[k]), rtol=1e-5, atol=1e-6)
    sum(v.sum() for v in out_p.values()).backward()
    sum(v.sum() for v in out_j.values()).backward()
    np.testing.assert_allclose(np_of(xj.grad), np_of(xp.grad), rtol=1e-5, atol=1e-6)
    for (name, p), (_, q) in zip(pt.named_parameters(), tj.named_parameters()):
        np.testing.assert_allclose(np_of(q.grad), np_of(p.grad), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_printed_graphmodule_and_functional_kwargs_match(fx):
    def make(lib):
        class N(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.c = lib.nn.Conv2d(3, 4, 3)
                self.bn = lib.nn.BatchNorm2d(4)
                self.acts = lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Dropout(0.1)])

            def forward(self, x):
                y = self.bn(self.c(x))
                for m in self.acts:
                    y = m(y)
                y = lib.flatten(y, 1).max(dim=1)[0] + lib.max(y) + y.float().mean()
                y = lib.nn.functional.softmax(y.view(-1, 1), dim=-1)
                return lib.nn.functional.leaky_relu(y) + lib.nn.functional.dropout(y, 0.2)
        return N
    pt, tj = trace_both(fx, make)
    assert code_of(tj, torchjax) == code_of(pt, torch)
    assert str(tj).replace("torch._C._nn.", "") == str(pt).replace("torch._C._nn.", "")
    assert type(tj).__name__ == type(pt).__name__ == "N"


def test_standard_modules_traced_through_record_the_same_calls(fx):
    # a tracer with no leaf modules records what each layer's forward calls; the forward
    # signature differs (torchjax's layers carry no `input : torch.Tensor` annotations), so
    # the body is compared
    def run(lib, tfx):
        class AllTraced(tfx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False

        nn = lib.nn
        layers = [nn.Linear(3, 3), nn.Conv2d(3, 3, 3), nn.AvgPool2d(2),
                  nn.BatchNorm2d(3), nn.LayerNorm(3), nn.Dropout(0.1), nn.Embedding(4, 3),
                  nn.Flatten(), nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Softmax(dim=1),
                  nn.GELU(), nn.ReLU(inplace=True), nn.LeakyReLU(0.2), nn.Identity(),
                  nn.CrossEntropyLoss(), nn.MSELoss()]
        out = []
        for m in layers:
            try:
                out.append(tfx.GraphModule(m, AllTraced().trace(m)).code.split("\n", 4)[4])
            except Exception as e:  # BatchNorm2d checks its input's dim: both refuse
                out.append(f"{type(e).__name__}: {e}")
        return out
    pt = [c.replace("torch._C._nn.", "torch.nn.functional.") for c in run(torch, torch.fx)]
    assert run(torchjax, fx) == pt
    assert pt[3].startswith("TraceError: symbolically traced variables")


def test_function_with_concrete_args_and_varargs(fx):
    def f(x, flag=True, scale=2.0):
        if flag:
            return x * scale
        return x - scale

    for concrete in ({"flag": False}, {"flag": True, "scale": 3.0},
                     {"flag": torch.fx.PH}):
        if concrete["flag"] is torch.fx.PH:
            with pytest.raises(torch.fx.proxy.TraceError) as e_pt:
                torch.fx.symbolic_trace(f, concrete_args=concrete)
            with pytest.raises(fx.proxy.TraceError) as e_tj:
                fx.symbolic_trace(f, concrete_args={"flag": fx.PH})
            assert str(e_tj.value) == str(e_pt.value)
            continue
        pt = torch.fx.symbolic_trace(f, concrete_args=concrete)
        tj = fx.symbolic_trace(f, concrete_args=concrete)
        assert tj.code == pt.code
        assert str(tj.graph) == str(pt.graph)
        x = np.arange(3, dtype=np.float32)
        # the specialised value is asserted, as in PyTorch
        vals = list(concrete.values())
        np.testing.assert_allclose(np_of(tj(torchjax.tensor(x), *vals)),
                                   np_of(pt(torch.tensor(x), *vals)))
        # the specialised value is asserted, as in PyTorch (the default no longer applies)
        for args in ((not vals[0], *vals[1:]), () if vals[0] is False else None):
            if args is None:
                continue
            with pytest.raises(AssertionError, match="flag has been specialized"):
                pt(torch.tensor(x), *args)
            with pytest.raises(AssertionError, match="flag has been specialized"):
                tj(torchjax.tensor(x), *args)


def test_varargs_and_keyword_only_inputs(fx):
    def k(x, *args, scale=2, **kw):
        return x * scale + args[0] + kw["b"]
    pt, tj = torch.fx.symbolic_trace(k), fx.symbolic_trace(k)
    assert (str(tj.graph), tj.code) == (str(pt.graph), pt.code)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(
        np_of(tj(torchjax.tensor(x), 3, torchjax.tensor(x), b=torchjax.tensor(x))),
        np_of(pt(torch.tensor(x), 3, torch.tensor(x), b=torch.tensor(x))))


def test_control_flow_iteration_and_len_errors_match(fx):
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    def loop(x):
        for row in x:
            x = x + row
        return x

    def length(x):
        return len(x)

    for fn, kind in ((branch, "TraceError"), (loop, "TraceError"), (length, "RuntimeError")):
        with pytest.raises(Exception) as e_pt:
            torch.fx.symbolic_trace(fn)
        with pytest.raises(Exception) as e_tj:
            fx.symbolic_trace(fn)
        assert type(e_pt.value).__name__ == type(e_tj.value).__name__ == kind
        assert str(e_tj.value) == str(e_pt.value)
    assert "symbolically traced variables cannot be used as inputs to control flow" in \
        str(pytest.raises(fx.proxy.TraceError, fx.symbolic_trace, branch).value)


def test_custom_tracer_leaf_modules_and_node_tags(fx):
    def run(lib, tfx):
        class Lower(tfx.Tracer):
            def is_leaf_module(self, m, qualname):
                if isinstance(m, lib.nn.ReLU):
                    return False
                return super().is_leaf_module(m, qualname)

            def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
                n = super().create_node(kind, target, args, kwargs, name, type_expr)
                n.tag = "foo"
                return n

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = lib.nn.ReLU()
                self.lin = lib.nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(self.relu(x))

        tracer = Lower()
        g = tracer.trace(M())
        return [(n.op, n.name, str(n.args), str(n.kwargs), n.tag) for n in g.nodes], \
            tfx.GraphModule(tracer.root, g).code
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_module_path_tracer_call_module_and_create_proxy(fx):
    # pytorch/examples fx/module_tracer.py: call_module and create_proxy overridden
    def run(lib, tfx):
        class PathTracer(tfx.Tracer):
            current = ""

            def __init__(self):
                super().__init__()
                self.origin = {}

            def call_module(self, m, forward, args, kwargs):
                old = self.current
                try:
                    self.current = self.path_of_module(m)
                    return super().call_module(m, forward, args, kwargs)
                finally:
                    self.current = old

            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
                proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
                self.origin[proxy.node] = self.current
                return proxy

        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Linear(3, 3)
                self.relu = lib.nn.ReLU()

            def forward(self, x):
                return self.relu(self.conv(x) + x)

        model = lib.nn.Sequential(Block(), Block())
        tracer = PathTracer()
        g = tracer.trace(model)
        return [(n.name, tracer.origin.get(n)) for n in g.nodes]
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_graph_editing_replace_op_and_dead_code(fx):
    # pytorch/examples fx/replace_op.py
    def run(lib, tfx):
        class M(lib.nn.Module):
            def forward(self, x, y):
                unused = x * 3  # noqa: F841
                return x + y, lib.add(x, y), x.add(y)

        traced = tfx.symbolic_trace(M())
        for n in traced.graph.nodes:
            if any(n.target == p for p in (operator.add, lib.add, "add")):
                with traced.graph.inserting_after(n):
                    new = traced.graph.call_function(lib.bitwise_and, n.args, n.kwargs)
                    n.replace_all_uses_with(new)
                traced.graph.erase_node(n)
        changed = traced.graph.eliminate_dead_code()
        traced.graph.lint()
        traced.recompile()
        a = np.array([3, 5, 6], dtype=np.int64)
        b = np.array([1, 4, 7], dtype=np.int64)
        out = traced(lib.tensor(a), lib.tensor(b))
        return changed, traced.code, [o.numpy().tolist() for o in out], len(traced.graph.nodes)
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_graph_built_by_hand_with_proxies_and_inverted(fx):
    # pytorch/examples fx/proxy_based_graph_creation.py and invert.py
    def run(lib, tfx):
        graph = tfx.Graph()
        tracer = tfx.proxy.GraphAppendingTracer(graph)
        y = tfx.Proxy(graph.placeholder("x"), tracer)
        z = tfx.Proxy(graph.placeholder("y"), tracer)
        b = lib.tanh(lib.cat([y, z]))
        c = lib.neg(b)
        lib.add(b, c)
        graph.output(c.node)
        mod = tfx.GraphModule(lib.nn.Module(), graph)
        text = str(graph)
        changed = graph.eliminate_dead_code()
        mod.recompile()
        out = mod(lib.ones(2), lib.zeros(1))

        inverse = {lib.exp: lib.log, lib.tan: lib.arctan}
        fx_model = tfx.symbolic_trace(lambda x: lib.exp(lib.tan(x)))
        new = tfx.Graph()
        env = {}
        for node in reversed(fx_model.graph.nodes):
            if node.op == "call_function":
                nn_ = new.call_function(inverse[node.target], (env[node.name],))
                env[node.args[0].name] = nn_
            elif node.op == "output":
                env[node.args[0].name] = new.placeholder(node.name)
            else:
                new.output(env[node.name])
        new.lint()
        inv = tfx.GraphModule(fx_model, new)
        return text, changed, mod.code, out.numpy().round(6).tolist(), inv.code, \
            inv(lib.tensor([1.5, 2.0])).numpy().round(5).tolist()
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_named_tuple_output_and_attention_block(fx):
    import collections
    import math
    pair = collections.namedtuple("pair", "a b")

    def make(lib):
        F = lib.nn.functional

        class Attn(lib.nn.Module):
            def __init__(self, C=8, H=2, T=4):
                super().__init__()
                self.c_attn = lib.nn.Linear(C, 3 * C)
                self.n_head = H
                self.register_buffer("bias", lib.tril(lib.ones(T, T)).view(1, 1, T, T))

            def forward(self, x):
                B, T, C = x.size()
                q, k, v = self.c_attn(x).split(C, dim=2)
                q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                           for t in (q, k, v))
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = F.softmax(att.masked_fill(self.bias == 0, float("-inf")), dim=-1)
                y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
                return pair(y, att)
        return Attn
    pt, tj = trace_both(fx, make)
    assert code_of(tj, torchjax) == code_of(pt, torch)
    x = np.random.default_rng(2).standard_normal((2, 4, 8)).astype(np.float32)
    out_p, out_j = pt(torch.tensor(x)), tj(torchjax.tensor(x))
    assert type(out_j) is type(out_p) is pair
    np.testing.assert_allclose(np_of(out_j.a), np_of(out_p.a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_of(out_j.b), np_of(out_p.b), rtol=1e-5, atol=1e-6)


def test_dead_code_elimination_and_annotations_match(fx):
    def run(lib, tfx):
        def f(x: lib.Tensor, y) -> lib.Tensor:
            x.add_(1)  # an unused method call: erased, as PyTorch erases it
            z = y * 2  # noqa: F841
            lib._assert(x.sum() > 0, "pos")  # kept: side effect
            return lib.relu(x)
        gm = tfx.symbolic_trace(f)
        before = str(gm.graph)
        changed = gm.graph.eliminate_dead_code()
        gm.recompile()
        return before, changed, str(gm.graph), gm.code, str(gm)
    assert run(torchjax, fx) == run(torch, torch.fx)
