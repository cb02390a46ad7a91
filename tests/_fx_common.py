"""What tests/test_fx*.py share: the torchjax.fx fixture and the same model or function
traced by torch.fx and by torchjax.fx."""

import pytest
import torch
import torch.fx

import torchjax


@pytest.fixture(scope="module", name="fx")
def fx_fixture():
    """The `fx` fixture: the torchjax.fx module (import fx_fixture to use it)."""
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


def inline(tfx, node, fn):
    """Replaces node by fn called on Proxies of its arguments (fn's ops join the graph)."""
    tracer = tfx.proxy.GraphAppendingTracer(node.graph)
    with node.graph.inserting_before(node):
        args = tfx.node.map_arg(node.args, lambda a: tfx.Proxy(a, tracer))
        out = fn(*args)
        node.replace_all_uses_with(out.node)
        node.graph.erase_node(node)
