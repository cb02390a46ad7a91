"""torchjax.fx against torch.fx: the same module or function traced by both gives the same
graph (node ops, targets, names), the same printed graph and generated code, and the
GraphModules compute the same values and gradients.

Where the printouts differ by design it is stated at the test: PyTorch's C++ functionals
(F.gelu, F.linear) print as torch._C._nn.X, torchjax's as torch.nn.functional.X.
"""

import copy
import operator
import pickle

import numpy as np
import pytest
import torch
import torch.fx

import torchjax


@pytest.fixture(scope="module")
def fx():
    # importing torchjax.fx wraps torch's public functions (docs/fx.md); put them back after
    # this module so the rest of a test session sees torchjax as it was
    import torchjax.fx as tfx
    from torchjax.fx import _tracing_functions
    _tracing_functions.install()
    yield tfx
    _tracing_functions.uninstall()


def np_of(t):
    return t.detach().numpy()


def same_weights(pt_module, tj_module):
    tj_module.load_state_dict({k: torchjax.tensor(np_of(v)) for k, v in
                               pt_module.state_dict().items()})


def code_of(gm, lib):
    """gm.code, with PyTorch's builtin functionals printed as torchjax prints them."""
    return gm.code.replace("torch._C._nn.", "torch.nn.functional.") if lib is torch \
        else gm.code


def graph_of(gm, lib):
    text = str(gm.graph)
    return text.replace("torch._C._nn.", "torch.nn.functional.") if lib is torch else text


def make_model(lib):
    nn = lib.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.w = nn.Parameter(lib.ones(3))
            self.register_buffer("b", lib.full((3,), 0.5))
            self.seq = nn.Sequential(nn.ReLU(), nn.Linear(3, 3))

        def forward(self, x, y=2):
            z = self.lin(x) + self.w * self.b
            z = lib.relu(z).sum(dim=1, keepdim=True)
            z = lib.nn.functional.gelu(z) + x.shape[0] + z.size(1)
            a, b = z.chunk(2)
            return {"a": self.seq(z.expand(4, 3)) * y,
                    "b": lib.cat([a, b], 0)[0:1, ...],
                    "c": lib.tanh(-z.t().T) / 2 ** a.size(0)}
    return M


def trace_both(fx, make, *args, **kwargs):
    lib_pt, lib_tj = torch, torchjax
    pt_model, tj_model = make(lib_pt)(), make(lib_tj)()
    if isinstance(pt_model, torch.nn.Module):
        same_weights(pt_model, tj_model)
    pt = torch.fx.symbolic_trace(pt_model, *args, **kwargs)
    tj = fx.symbolic_trace(tj_model, *args, **kwargs)
    return pt, tj


def node_table(gm):
    from torchjax.fx._names import qualified_name as tj_name
    rows = []
    for n in gm.graph.nodes:
        t = n.target
        if not isinstance(t, str):
            t = torch.fx.node._get_qualified_name(t) if isinstance(gm, torch.fx.GraphModule) \
                else tj_name(t)
            # PyTorch names a builtin without its module and operator's as _operator's
            t = t.replace("torch._C._nn.", "torch.nn.functional.").replace("_operator.",
                                                                           "operator.")
            t = t if "." in t else "builtins." + t
        rows.append((n.op, t, n.name, str(n.args), str(n.kwargs),
                     sorted(u.name for u in n.users)))
    return rows


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


def inline(tfx, node, fn):
    """Replaces node by fn called on Proxies of its arguments (fn's ops join the graph)."""
    tracer = tfx.proxy.GraphAppendingTracer(node.graph)
    with node.graph.inserting_before(node):
        args = tfx.node.map_arg(node.args, lambda a: tfx.Proxy(a, tracer))
        out = fn(*args)
        node.replace_all_uses_with(out.node)
        node.graph.erase_node(node)


def test_inline_a_module_call_and_wrap_output(fx):
    # pytorch/examples fx/inline_function.py and wrap_output_dynamically.py
    def run(lib, tfx):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = lib.nn.ReLU()

            def forward(self, x):
                return self.relu(x) + 1.0

        m = tfx.symbolic_trace(M())
        for node in m.graph.nodes:
            if (node.op, node.target) == ("call_module", "relu"):
                inline(tfx, node, m.relu)
        m.recompile()
        out_node = next(n for n in reversed(m.graph.nodes) if n.op == "output")
        wrapped = tfx.symbolic_trace(lib.nn.LeakyReLU(0.2))
        with m.graph.inserting_after(out_node.all_input_nodes[0]):
            act = wrapped(tfx.Proxy(out_node.all_input_nodes[0]))
            out_node.args = (act.node,)
        m.recompile()
        x = lib.tensor([-2.0, -0.5, 0.0, 3.0])
        return m.code, m(x).numpy().tolist()
    (code_j, val_j), (code_p, val_p) = run(torchjax, fx), run(torch, torch.fx)
    assert code_j == code_p
    np.testing.assert_allclose(val_j, val_p, rtol=1e-6)


def test_wrap_records_a_function_call(fx):
    # pytorch/examples fx/primitive_library.py: torch.fx.wrap at module scope
    src = '''
import operator
def sigmoid_lowp(x):
    x = x.float()
    x = x.sigmoid()
    return x.half()
fx.wrap(sigmoid_lowp)
fx.wrap("add_lowp")  # by name, before it is defined
def add_lowp(a, b):
    a, b = a.float(), b.float()
    return (a + b).half()
class Foo(lib.nn.Module):
    def forward(self, x, y):
        return add_lowp(sigmoid_lowp(x), sigmoid_lowp(y))
'''

    def run(lib, tfx):
        g = {"fx": tfx, "lib": lib, "__name__": "prims"}
        exec(compile(src, "prims", "exec"), g)
        traced = tfx.symbolic_trace(g["Foo"]())
        first = traced.code
        for node in list(traced.graph.nodes):
            if node.op == "call_function" and node.target is g["sigmoid_lowp"]:
                inline(tfx, node, node.target)
        traced.recompile()
        x = lib.tensor([0.5, -1.0])
        return first, traced.code, traced(x, x).float().numpy().tolist()
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_interpreter_and_transformer_swap_relu_for_gelu(fx):
    def run(lib, tfx):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x):
                return lib.relu(self.lin(x)).neg() + lib.relu(x)

        lib.manual_seed(0)
        gm = tfx.symbolic_trace(M())
        with lib.no_grad():
            gm.lin.weight.copy_(lib.arange(9.0).reshape(3, 3) / 10 - 0.4)
            gm.lin.bias.fill_(0.1)

        class Swap(tfx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is lib.relu:
                    target = lib.nn.functional.gelu
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                if target == "neg":
                    return super().call_function(lib.abs, args, kwargs)
                return super().call_method(target, args, kwargs)

        class Count(tfx.Interpreter):
            seen = []

            def run_node(self, n):
                Count.seen.append(n.op)
                return super().run_node(n)

            def call_function(self, target, args, kwargs):
                if target is lib.relu:
                    return lib.sigmoid(*args)
                return super().call_function(target, args, kwargs)

        x = lib.tensor([[-1.0, 0.5, 2.0], [0.3, -0.2, 1.0]])
        new = Swap(gm).transform()
        env_args = Count(gm).fetch_args_kwargs_from_env(next(iter(gm.graph.nodes)))
        Count.seen = []
        counted = Count(gm).run(x)
        return new.code.replace("torch._C._nn.", "torch.nn.functional."), \
            new(x).detach().numpy(), counted.detach().numpy(), Count.seen, env_args
    (code_j, new_j, cnt_j, seen_j, env_j), (code_p, new_p, cnt_p, seen_p, env_p) = \
        run(torchjax, fx), run(torch, torch.fx)
    assert code_j == code_p
    assert seen_j == seen_p and env_j == env_p == ((), {})
    np.testing.assert_allclose(new_j, new_p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cnt_j, cnt_p, rtol=1e-5, atol=1e-6)


def test_replace_pattern(fx):
    # pytorch/examples fx/subgraph_rewriter_basic_use.py
    def run(lib, tfx):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([lib.neg(w1), w2]).sum()
                m2 = lib.cat([lib.neg(w1), w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        def pattern(a1, a2):
            return lib.cat([lib.neg(a1), a2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])

        traced = tfx.symbolic_trace(M())
        matches = tfx.replace_pattern(traced, pattern, replacement)
        x = lib.tensor([1.0, 2.0])
        return len(matches), traced.code, traced(x, x * 2, x * 3).numpy().tolist()
    assert run(torchjax, fx) == run(torch, torch.fx)


def test_shape_prop_and_print_tabular(fx, capsys):
    from torch.fx.passes.shape_prop import ShapeProp as PtShapeProp

    from torchjax.fx.passes.shape_prop import ShapeProp

    def metas(gm):
        return [(n.name, tuple(n.meta["tensor_meta"].shape), str(n.meta["tensor_meta"].dtype),
                 n.meta["tensor_meta"].requires_grad, tuple(n.meta["tensor_meta"].stride))
                for n in gm.graph.nodes if "tensor_meta" in n.meta]
    pt, tj = trace_both(fx, lambda lib: lambda: lib.nn.Sequential(
        lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 2)))
    x = np.ones((5, 4), np.float32)
    PtShapeProp(pt).propagate(torch.tensor(x))
    ShapeProp(tj).propagate(torchjax.tensor(x))
    assert metas(tj) == metas(pt) and len(metas(pt)) == 5  # output's too
    try:
        import tabulate  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            pt.graph.print_tabular()
        pt_out = capsys.readouterr().out
        with pytest.raises(ImportError):
            tj.graph.print_tabular()
        assert capsys.readouterr().out == pt_out
    else:
        pt.graph.print_tabular()
        pt_out = capsys.readouterr().out
        tj.graph.print_tabular()
        assert capsys.readouterr().out == pt_out


def test_graphmodule_copy_pickle_and_graph_api(fx):
    pt, tj = trace_both(fx, make_model)
    x = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    want = tj(torchjax.tensor(x))
    copies = [copy.deepcopy(tj), pickle.loads(pickle.dumps(tj)), copy.copy(tj)]
    assert [type(c).__name__ for c in copies] == [
        type(c).__name__ for c in (copy.deepcopy(pt), pickle.loads(pickle.dumps(pt)),
                                   copy.copy(pt))]
    for other in copies:
        assert other.code == tj.code
        assert sorted(other.state_dict()) == sorted(tj.state_dict())
        got = other(torchjax.tensor(x))
        for k in want:
            np.testing.assert_allclose(np_of(got[k]), np_of(want[k]), rtol=1e-6)
    # a deep copy owns its parameters
    assert copy.deepcopy(tj).lin.weight is not tj.lin.weight
    # Node API: prepend moves a node, all_input_nodes, users, lint of a misordered graph
    g_pt, g_tj = pt.graph, tj.graph
    for g in (g_pt, g_tj):
        nodes = list(g.nodes)
        mul = next(n for n in nodes if n.name == "mul")
        assert [n.name for n in mul.all_input_nodes] == ["w", "b"]
        first = next(n for n in nodes if n.op == "placeholder")
        first.prepend(mul)
        with pytest.raises(RuntimeError) as e:
            g.lint()
        assert "used before it has been defined" in str(e.value)
    assert [n.name for n in g_tj.nodes] == [n.name for n in g_pt.nodes]


def test_print_readable_and_to_folder(fx, tmp_path, capsys):
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)
                self.w = lib.nn.Parameter(lib.ones(2))

            def forward(self, x):
                return lib.relu(self.lin(x)) * self.w
        return M
    pt, tj = trace_both(fx, make)
    assert tj.print_readable() == pt.print_readable()
    assert capsys.readouterr().out.count("class M(torch.nn.Module):") == 2
    tj.to_folder(tmp_path / "saved_fx", "Saved")
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("saved_fx", tmp_path / "saved_fx" /
                                                  "module.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["torch"], real = torchjax, sys.modules["torch"]
    try:
        spec.loader.exec_module(mod)
        rebuilt = mod.Saved()
    finally:
        sys.modules["torch"] = real
    x = torchjax.tensor([[0.5, -1.0], [2.0, 0.1]])
    np.testing.assert_array_equal(np_of(rebuilt(x)), np_of(tj(x)))


def test_torch_fx_under_python_m_torchjax(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\nimport torch.fx\nfrom torch.fx import symbolic_trace\n"
        "from torch.fx.node import map_arg\nfrom torch.fx.passes.shape_prop import ShapeProp\n"
        "print(torch.fx.symbolic_trace.__module__, torch.fx.proxy.GraphAppendingTracer)\n"
        "print(symbolic_trace(lambda x: torch.relu(x) + 1).code)\n")
    out = subprocess.run([sys.executable, "-m", "torchjax", str(script)], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert out.splitlines()[0] == ("torchjax.fx._symbolic_trace "
                                   "<class 'torchjax.fx.proxy.GraphAppendingTracer'>")
    assert "relu = torch.relu(x);  x = None\n    add = relu + 1;  relu = None" in out


def test_wrapped_functions_keep_warning_lines_and_qualified_names(fx):
    import warnings

    def warned(lib):
        x = lib.ones(2, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.functional.softmax(x)
            lib.nn.functional.log_softmax(x, None, 3)
        return [(pathlib_name(i.filename), str(i.message)) for i in w]

    def pathlib_name(f):
        return f.rsplit("/", 1)[-1]
    assert warned(torchjax) == warned(torch)
    assert warned(torch)[0][0] == "test_fx.py"
    for fn in (operator.add, getattr, "relu", "relu_f"):
        pt_fn = {"relu": torch.relu, "relu_f": torch.nn.functional.relu}.get(fn, fn)
        tj_fn = {"relu": torchjax.relu, "relu_f": torchjax.nn.functional.relu}.get(fn, fn)
        assert fx.node._get_qualified_name(tj_fn) == torch.fx.node._get_qualified_name(pt_fn)


def test_math_functions_are_recorded(fx):
    import math

    def run(lib, tfx):
        def f(x):
            return x / math.sqrt(x.size(-1)) + math.floor(x.size(0) / 3) + math.pi
        gm = tfx.symbolic_trace(f)
        return str(gm.graph), gm.code, gm(lib.ones(4, 4)).numpy().tolist()
    assert run(torchjax, fx) == run(torch, torch.fx)
    assert math.sqrt(4.0) == 2.0  # math itself is left as it was


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
