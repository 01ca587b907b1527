"""Layered scopes: what a scope's view reads. A view sees, for each slot, the union of its
scope's facts and the shared (unscoped) layer's; the policy decides among them as among
any facts (``tk_resolve_union``). The unscoped memory sees the shared layer only. Writes,
and what a write may touch (retract, end, erase), stay in the view's own scope.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .errors import ScopeError, UnknownFact
from .logic.store import Store
from .values import Fact, Resolution, check_scope, normalise_key, scoped, unscoped

__all__ = ["check_visible", "erase_selection", "scope_names", "view_conflicts", "view_fact",
           "view_history", "view_slots"]


def check_visible(f: Fact, scope: str | None, fact_id: str, *, own: bool = False) -> Fact:
    """``f`` if a view of ``scope`` may read it (its scope's or the shared layer's) or,
    with ``own``, write about it (its scope's only). Another scope's fact is exactly what
    an unknown id is: the same error, the same message."""
    if f.scope != scope and (own or f.scope is not None):
        if f.scope is None:  # visible to the view, but in the shared layer
            msg = (f"fact {fact_id!r} is in the shared layer: a scope's view writes only to "
                   "its own scope")
            raise ScopeError(msg)
        raise UnknownFact(f"{fact_id!r} names no fact of this memory")
    return f


def view_fact(store: Store, scope: str | None, fact_id: str, heads: Any) -> Fact:
    """The fact a view reads (:func:`check_visible`) with its status there: in a scope's
    view a head or a superseded fact is so in the union of its layers (``heads(s, a)``:
    the union's resolution), as :func:`view_history` says."""
    f = check_visible(store.get(fact_id, with_status=True), scope, fact_id)
    if scope is None or f.status not in ("head", "superseded"):
        return f
    top = {h.id for h in heads(f.subject, f.attribute).heads}
    return replace(f, status="head" if f.id in top else "superseded")


def view_slots(store: Store, scope: str | None, subject: str | None,
               prefix: str | None = None) -> list[tuple[str, str]]:
    """The slots a view sees (of ``subject``, normalised, or of the subjects starting with
    ``prefix``, folded, or all), sorted."""
    keys = None if subject is None else {scoped(scope, subject), subject}
    if keys is not None:
        found = [x for k in sorted(keys) for x in store.slots(k)]
    elif prefix:
        found = [x for p in sorted({scoped(scope, prefix), prefix})
                 for x in store.slots_starting(p)]
    else:
        found = store.slots(None)
    out = set()
    for s, a in found:
        sc, sub = unscoped(s)
        if sc in (None, scope) and subject in (None, sub) and sub.startswith(prefix or ""):
            out.add((sub, a))
    return sorted(out)


def view_history(store: Store, scope: str | None, subject: str, attribute: str,
                 heads: Resolution | None) -> list[Fact]:
    """Every fact of the slot a view sees, oldest first; in a scope's view a fact's status
    is its status in the union (``heads``: the union's resolution at the clock)."""
    own = store.history(scoped(scope, subject), attribute)
    if scope is None or heads is None:
        return own
    both = own + store.history(subject, attribute)
    both.sort(key=lambda f: (f.valid_from, f.recorded_at))
    top = {h.id for h in heads.heads}
    return [replace(f, status="head" if f.id in top else "superseded")
            if f.status in ("head", "superseded") else f for f in both]


def view_conflicts(store: Store, scope: str | None,
                   resolve: object) -> list[tuple[str, str]]:
    """The slots of a view whose heads disagree: among the shared layer's conflicts and
    the scope's own slots, those whose union is in conflict (``resolve(s, a)``)."""
    shared = [unscoped(s)[1:] + (a,) for s, a in store.conflicts() if unscoped(s)[0] is None]
    if scope is None:
        return sorted((s, a) for s, a in shared)
    mine = [(sub, a) for s, a in store.slots(None) for sc, sub in [unscoped(s)] if sc == scope]
    cands = sorted(set(shared) | set(mine))
    return [(s, a) for s, a in cands
            if resolve(s, a).status == "conflict"]  # type: ignore[operator]


def erase_selection(view: Any, fact_ids: object, subject: str | None, attribute: str | None,
                    scope: str | None) -> tuple[list[str], str | None, list[str]]:
    """What an ``erase`` call erases: ``fact_ids`` (the view's own), every fact of
    ``scope``, or of ``subject`` (and ``attribute``) in the view; never the shared layer's,
    when a scope is erased or a view erases. Returns the ids, the erased scope and the
    erased subjects' store keys (the audit entries about them go too)."""
    from .session import id_list

    ids = [view._own(i).id for i in id_list(fact_ids, "fact_ids")]
    erased = None if scope is None else check_scope(scope)
    sub = None if subject is None else normalise_key(subject, "subject")
    if erased is not None:
        if view._scope not in (None, erased):
            raise ScopeError("a scope's view cannot erase another scope")  # noqa: EM101
        store = view._store  # the scope's slots only (a lazily opened memory reads no other)
        ids = ids + [f.id for s, a in store.scope_slots(erased) for f in store.history(s, a)
                     if f.status != "erased" and f.scope == erased]
    if sub is not None:
        ids = ids + _own_facts(view, view._scope, sub, None if attribute is None
                               else normalise_key(attribute, "attribute"))
    return list(dict.fromkeys(ids)), erased, [] if sub is None else [scoped(view._scope, sub)]


def scope_names(view: Any) -> list[str]:
    """Every scope that holds a fact, a rule, an outcome or a kept audit entry, sorted:
    what ``erase(scope=...)`` and a scope's view can reach."""
    store, p = view._store, view._p
    if store.lazy is not None:  # opened lazily: its journalled audit entries are read now
        store.lazy.need_audit()
    return sorted(store.scopes() | p.reasoner.scopes() | set(p.rel.scoped) | p.audit.scopes())


def _own_facts(view: Any, scope: str | None, subject: str | None,
               attribute: str | None) -> list[str]:
    out: list[str] = []
    for s, a in view.slots(subject):
        if attribute is None or a == attribute:
            out += [f.id for f in view.history(s, a) if f.status != "erased" and f.scope == scope]
    return out
