"""torchjax.fx against torch.fx, continued: inlining, wrap, Interpreter and Transformer,
replace_pattern, ShapeProp, copies, pickles and folders of GraphModules, the wrapped torch
functions, and `import torch.fx` under `python -m torchjax`."""

import copy
import operator
import pickle

import numpy as np
import pytest
import torch
import torch.fx

import torchjax

from ._fx_common import (
    fx_fixture,  # noqa: F401  (the fx fixture)
    inline,
    make_model,
    np_of,
    trace_both,
)


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
    import os
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text(
        "import torch\nimport torch.fx\nfrom torch.fx import symbolic_trace\n"
        "from torch.fx.node import map_arg\nfrom torch.fx.passes.shape_prop import ShapeProp\n"
        "print(torch.fx.symbolic_trace.__module__, torch.fx.proxy.GraphAppendingTracer)\n"
        "print(symbolic_trace(lambda x: torch.relu(x) + 1).code)\n")
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(torchjax.__file__))  # this torchjax, not another
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-m", "torchjax", str(script)], capture_output=True,
                         text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    out = res.stdout
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
    assert warned(torch)[0][0] == "test_fx_passes.py"
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
