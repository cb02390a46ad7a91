"""torch.fx.subgraph_rewriter.replace_pattern: replace each match of a pattern function."""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph
from .node import Node, map_arg

__all__ = ["replace_pattern", "Match"]


@dataclass
class Match:
    anchor: Node
    nodes_map: dict = field(default_factory=dict)


def _pattern_graph(fn) -> Graph:
    from ._symbolic_trace import symbolic_trace
    from .graph_module import GraphModule
    return fn.graph if isinstance(fn, GraphModule) else symbolic_trace(fn).graph


def _match(pn: Node, gn: Node, m: dict) -> bool:
    """Whether graph node gn matches pattern node pn (extending the mapping m)."""
    if pn in m:
        return m[pn] is gn
    if pn.op == "placeholder":
        m[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target or len(pn.args) != len(gn.args) or \
            pn.kwargs.keys() != gn.kwargs.keys():
        return False
    m[pn] = gn
    pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
    saved = dict(m)
    for pa, ga in pairs:
        if not _match_arg(pa, ga, m):
            m.clear()
            m.update(saved)
            del m[pn]
            return False
    return True


def _match_arg(pa, ga, m: dict) -> bool:
    if isinstance(pa, Node):
        return isinstance(ga, Node) and _match(pa, ga, m)
    if isinstance(pa, (list, tuple)):
        return isinstance(ga, (list, tuple)) and len(pa) == len(ga) and \
            all(_match_arg(a, b, m) for a, b in zip(pa, ga))
    return pa == ga


def replace_pattern(gm, pattern, replacement) -> list:
    """Replaces every non-overlapping match of `pattern`'s graph in gm.graph by
    `replacement`'s (both callables or GraphModules with the same inputs); returns Matches."""
    pg = _pattern_graph(pattern)
    rg = _pattern_graph(replacement)
    p_out = next(n for n in pg.nodes if n.op == "output")
    if not isinstance(p_out.args[0], Node):
        raise NotImplementedError("replace_pattern: torchjax.fx matches patterns with one "
                                  "output value only")
    anchor_p = p_out.args[0]
    p_inputs = [n for n in pg.nodes if n.op == "placeholder"]
    r_inputs = [n for n in rg.nodes if n.op == "placeholder"]
    matches = []
    used: set = set()
    for gn in list(gm.graph.nodes):
        m: dict = {}
        if gn in used or not _match(anchor_p, gn, m):
            continue
        inner = [g for p, g in m.items() if p.op != "placeholder"]
        if any(g in used for g in inner):
            continue
        # nodes inside the match may be used only inside it (or be the anchor)
        if any(u not in inner for g in inner if g is not gn for u in g.users):
            continue
        if any(p not in m for p in p_inputs):
            continue
        used.update(inner)
        matches.append(Match(anchor=gn, nodes_map=dict(m)))
    for match in matches:
        anchor = match.anchor
        val_map = {r: match.nodes_map[p] for r, p in zip(r_inputs, p_inputs)}
        lookup = val_map.__getitem__
        # before the anchor's first user, where every input of the match is defined (as
        # PyTorch places it)
        order = {n: i for i, n in enumerate(gm.graph.nodes)}
        first_user = min(anchor.users, key=order.get, default=anchor)
        with gm.graph.inserting_before(first_user):
            for rn in rg.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    out = map_arg(rn.args[0], lookup)
                    break
                if rn.op in ("get_attr", "call_module"):
                    raise NotImplementedError("replace_pattern: a replacement with parameters "
                                              "or submodules is not supported by torchjax.fx")
                val_map[rn] = gm.graph.node_copy(rn, lookup)
        anchor.replace_all_uses_with(out)
        for p in reversed(list(pg.nodes)):
            g = match.nodes_map.get(p)
            if g is not None and p.op != "placeholder" and not g.users:
                gm.graph.erase_node(g)
    gm.recompile()
    return matches
