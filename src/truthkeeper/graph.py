"""networkx views of a memory: supersession, conflicts and support."""

from __future__ import annotations

from typing import Any

from .logic.rules import Reasoner, support_ids
from .logic.store import Store
from .values import unscoped

__all__ = ["memory_graph"]


def memory_graph(store: Store, reasoner: Reasoner, scope: str | None = None,
                 view: Any = None) -> Any:
    """A ``networkx.DiGraph``: facts and beliefs as nodes; a ``supersedes`` edge to each
    superseded fact from the fact that makes it stale (the one ``filter`` and ``why`` name:
    a head of its slot when one dominates it) under ``rule`` (the policy, or supersedes),
    and one for each explicit link between live facts; a ``conflict`` node per slot whose
    heads disagree, ``("conflict", subject, attribute)``, with a ``conflicts`` edge from
    each of those heads; ``supports`` edges from head facts to the beliefs they support.
    So the graph grows with the memory, not with its pairs: the full relation of one fact
    is ``Memory.why``'s. The facts of ``scope``; in a scope's ``view``, the shared layer's
    too, with the supersessions and conflicts of their union (a node's ``layer`` is its
    scope, or None)."""
    import networkx as nx

    g = nx.DiGraph()
    live: list[str] = []
    links: list[tuple[str, str]] = []
    for f, status in store.all_facts():
        if f.scope != scope and (view is None or f.scope is not None):
            continue
        g.add_node(f.id, kind="fact", subject=f.subject, attribute=f.attribute, value=f.value,
                   source=f.source, tier=f.tier, retracted=status == "retracted",
                   layer=f.scope)
        if status != "retracted":
            live.append(f.id)
            if f.supersedes is not None:
                links.append((f.id, f.supersedes))
    for fid, (_, _, status, by, rule) in zip(live, store.verdicts(live, scope), strict=True):
        if status == "dominated":
            g.add_edge(by[0], fid, kind="supersedes", rule=rule)
    kept = set(live)
    g.add_edges_from(((w, d) for w, d in links if d in kept), kind="supersedes",
                     rule="supersedes")
    if view is not None:  # the union's conflicts
        conflicts = [(s, a, view.current(s, a)) for s, a in view.conflicts()]
    else:
        conflicts = [(unscoped(s)[1], a, store.resolve(s, a)) for s, a in store.conflicts()
                     if unscoped(s)[0] == scope]
    for s, a, r in conflicts:
        node = ("conflict", s, a)
        g.add_node(node, kind="conflict", subject=s, attribute=a,
                   values=tuple(c.value for c in r.candidates))
        g.add_edges_from(((fid, node) for c in r.candidates for fid in c.fact_ids),
                         kind="conflicts")
    for b in reasoner.beliefs(scope):
        g.add_node(b.text, kind="belief", predicate=b.predicate)
        for fid in support_ids(reasoner.why(b, scope)):
            g.add_edge(fid, b.text, kind="supports")
    return g
