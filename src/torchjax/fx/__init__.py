"""torchjax.fx: torch.fx's symbolic tracing, graphs and graph rewriting on torchjax.

    import torchjax as torch
    gm = torch.fx.symbolic_trace(model)   # a GraphModule: gm.graph, gm.code, gm(x)

See docs/fx.md for what is there and what is not. The first Tracer or Proxy wraps torch's
public functions so that they record calls on Proxies (torchjax has no __torch_function__;
_tracing_functions); importing torch.fx alone, as many libraries do, changes nothing.
"""

from __future__ import annotations

# torch.fx's submodules are attributes of the package (torch.fx.proxy.GraphAppendingTracer)
from . import (  # noqa: F401
    _symbolic_trace,
    _tracing_functions,
    graph,
    graph_module,
    interpreter,
    node,
    passes,
    proxy,
    subgraph_rewriter,
)
from ._side_effects import has_side_effect
from ._symbolic_trace import PH, Tracer, is_fx_tracing, symbolic_trace, wrap  # noqa: F401
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg"]
