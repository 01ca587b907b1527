"""networkx views of a memory: supersession, conflicts and support."""

from __future__ import annotations

from typing import Any

from .logic.rules import Reasoner, support_ids
from .logic.store import Store
from .values import unscoped

__all__ = ["memory_graph"]


def memory_graph(store: Store, reasoner: Reasoner, scope: str | None = None,
                 view: Any = None) -> Any:
    """A ``networkx.DiGraph``: facts and beliefs as nodes; ``supersedes`` edges (winner to
    loser, under the policy or an explicit link), ``conflicts`` edges between heads of a slot
    that hold different values, ``supports`` edges from head facts to the beliefs they
    support. The facts of ``scope``; in a scope's ``view``, the shared layer's too, with the
    supersessions and conflicts of their union (a node's ``layer`` is its scope, or None)."""
    import networkx as nx

    g = nx.DiGraph()
    for f, status in store.all_facts():
        if f.scope != scope and (view is None or f.scope is not None):
            continue
        g.add_node(f.id, kind="fact", subject=f.subject, attribute=f.attribute, value=f.value,
                   source=f.source, tier=f.tier, retracted=status == "retracted",
                   layer=f.scope)
        if status != "retracted":
            for d, _rule in store.links(f.id)[1]:
                g.add_edge(f.id, d, kind="supersedes")
    if view is not None:  # across the two layers: the union's supersessions and conflicts
        for s, a in view.slots():
            ids = [f.id for f in view.history(s, a)]
            g.add_edges_from(store.dominance_pairs(ids), kind="supersedes")
        for s, a in view.conflicts():
            _conflict_edges(g, [c.fact_ids for c in view.current(s, a).candidates])
    else:
        for s, a in store.conflicts():
            if unscoped(s)[0] == scope:
                _conflict_edges(g, [c.fact_ids for c in store.resolve(s, a).candidates])
    for b in reasoner.beliefs(scope):
        g.add_node(b.text, kind="belief", predicate=b.predicate)
        for fid in support_ids(reasoner.why(b, scope)):
            g.add_edge(fid, b.text, kind="supports")
    return g


def _conflict_edges(g: Any, groups: list[tuple[str, ...]]) -> None:
    for gi, x_group in enumerate(groups):
        for gj, y_group in enumerate(groups):
            if gi != gj:
                g.add_edges_from(((x, y) for x in x_group for y in y_group), kind="conflicts")
