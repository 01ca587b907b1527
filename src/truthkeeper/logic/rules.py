"""Rules, beliefs, justifications (``why``) and hypothetical changes (``what_if``).

Rules are data from an untrusted author: ``tms.pl`` parses them (never consults them) and
allows only ``holds/3``, other rule heads and a few pure builtins. Beliefs are tabled
incrementally over ``holds/4``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from ..errors import InvalidFact, UnknownFact, brief
from ..results import HeadChange, WhatIf
from ..values import (
    Belief,
    Fact,
    Justification,
    Resolution,
    check_nesting,
    claimed,
    from_us,
    unscoped,
)
from . import bridge
from .store import Store, _row

__all__ = ["Reasoner", "undefined_message"]

WHY_LIMIT = 20
"""How many dominating and dominated facts ``why`` spells out (all ids are in details)."""


def undefined_message(text: str, undefined: Sequence[str]) -> str:
    """The RuleWarning's text for a rule whose body calls predicates no rule defines."""
    names = ", ".join(undefined)
    near = [u for u in undefined if u.endswith("/3") and u != "holds/3"
            and difflib.get_close_matches(u.split("/")[0], ["holds"], cutoff=0.6)]
    hint = f" (did you mean holds/3 for {', '.join(near)}?)" if near else ""
    return (f"the rule {text!r} calls {names}, which no rule defines: "
            f"{'it has' if len(undefined) == 1 else 'they have'} no answers until a rule "
            f"does{hint}")


class Reasoner:
    """The rules of one memory and what they derive from its store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ------------------------------------------------------------------ rules

    def add(self, rid: str, text: str, *, scope: str | None = None,
            evaluate: bool = True) -> list[str]:
        """Parse and add a rule in ``scope`` (None: shared, for every scope), and evaluate
        it there once unless replaying (UnsafeRule or RuleEvaluationError when refused;
        nothing changes). Evaluated, returns the predicates (``"N/A"``) its body calls
        that no rule applying there defines (tms:undefined_calls/3)."""
        inputs = {"M": self.store.h, "Sc": scope or "", "Id": rid, "T": text}
        if not evaluate:
            bridge.ask("tk_load_rule(M, Sc, Id, T)", inputs)
            return []
        return list(bridge.ask("tk_add_rule(M, Sc, Id, T, U)", inputs)["U"])

    def remove(self, rid: str) -> None:
        """Remove a rule by id (UnknownFact when there is none)."""
        bridge.ask("tk_drop_rule(M, Id)", {"M": self.store.h, "Id": rid})

    def rules(self, scope: str | None = None) -> list[tuple[str, str, str | None]]:
        """(rule id, text, the scope it was added in or None) of the rules that apply in
        ``scope``'s view (the shared ones and its own), in the order they were added."""
        raw = bridge.ask("tk_rules(M, Sc, Rs)", {"M": self.store.h, "Sc": scope or ""})["Rs"]
        return [(r, t, sc or None) for r, t, sc in raw]

    def scopes(self) -> set[str]:
        """The scopes that hold a rule of their own."""
        raw = bridge.ask("tk_rules(M, Sc, Rs)", {"M": self.store.h, "Sc": None})["Rs"]
        return {sc for _, _, sc in raw if sc}

    def beliefs(self, scope: str | None = None) -> list[Belief]:
        """Every belief the rules derive in ``scope``'s view (None: the shared layer)."""
        self._need_facts(scope)
        raw = bridge.ask("tk_beliefs(M, Sc, Bs)", {"M": self.store.h, "Sc": scope or ""})
        return [_belief(b) for b in raw["Bs"]]

    def _need_facts(self, scope: str | None) -> None:
        """A lazily opened memory reads every slot before rules are evaluated (there are
        none to evaluate when no rule applies in ``scope``)."""
        if self.store.lazy is not None and not self.store.lazy.done and self.rules(scope):
            self.store.need_all()

    # ------------------------------------------------------------------ why

    def why(self, item: str | Fact | Belief, scope: str | None = None, *,
            fact: bool = True) -> Justification:
        """The justification of a fact or of a belief (as ``scope``'s view derives it).
        Not ``fact``: the id names a fact the view does not see, which is explained as an
        id nothing holds is."""
        if isinstance(item, Fact):
            item = item.id
        if fact and isinstance(item, str) and item:
            try:
                return self.why_fact(item)
            except UnknownFact:
                pass
        text = str(item) if isinstance(item, Belief) else item
        if not isinstance(text, str) or not text.strip():
            msg = f"why() takes a fact id, a Fact or a Belief, got {brief(item)}"
            raise InvalidFact(msg)
        check_nesting(text, "the belief text")
        self._need_facts(scope)
        proof = bridge.ask("tk_explain(M, Sc, T, P)",
                           {"M": self.store.h, "Sc": scope or "", "T": text})["P"]
        if proof == "none":
            msg = f"{text!r} is neither a fact id of this memory nor a current belief"
            raise UnknownFact(msg)
        return self._proof(proof)

    def why_fact(self, fid: str) -> Justification:
        """Who asserted a fact, when, what it dominates and what dominates it."""
        f = self.store.get(fid)
        status, r_at, reason = self.store.status(fid)
        over, under = self.store.links(fid)
        rules = dict(over) | dict(under)  # Prolog's rule for each pair (phi:dominance_rule/4)
        dominators, dominated = [d for d, _ in over], [d for d, _ in under]
        said = claimed(f.value, f.present)
        label = (f"fact {fid}: {f.subject}.{f.attribute} = {said} ({status}); "
                 f"said by {f.source} [{f.tier}], valid from {f.valid_from.isoformat()}, "
                 f"recorded {f.recorded_at.isoformat()}")
        children = []
        if f.valid_to is not None:
            children.append(Justification(
                "ended" if status == "ended" else "ends",
                f"{'ended' if status == 'ended' else 'valid until'} "
                f"{f.valid_to.isoformat()}", {"valid_to": f.valid_to}))
        if status == "retracted" and r_at is not None:
            children.append(Justification(
                "retraction", f"retracted at {from_us(r_at).isoformat()}: {reason}",
                {"reason": reason}))
        shown_over, shown_under = dominators[:WHY_LIMIT], dominated[:WHY_LIMIT]
        others = {g.id: g for g in self.store.facts(shown_over + shown_under)}
        for kind, ids in (("dominated_by", shown_over), ("dominates", shown_under)):
            for d in ids:
                g = others[d]
                rule = ("explicit supersedes" if rules[d] == "supersedes"
                        else f"policy {rules[d]}")
                children.append(Justification(
                    kind, f"{kind.replace('_', ' ')} {d}: {claimed(g.value, g.present)} from "
                    f"{g.source} [{g.tier}], valid from {g.valid_from.isoformat()} ({rule})",
                    {"fact": g}))
        hidden = len(dominators) - len(shown_over) + len(dominated) - len(shown_under)
        if hidden:
            children.append(Justification(
                "more", f"... and {hidden} more (details['dominated_by'], details['dominates'] "
                "list every id)", {}))
        return Justification("fact", label, {
            "fact": f, "status": status, "dominated_by": tuple(dominators),
            "dominates": tuple(dominated)}, tuple(children))

    def why_resolution(self, subject: str, attribute: str, status: str, value: Any,
                       ids: Sequence[str]) -> Justification:
        """The justification of a slot's resolution: its head facts (the first
        :data:`WHY_LIMIT` spelled out: each is a read of its slot, and a poll's thousand
        heads were a thousand such reads; every id is in details)."""
        text = repr(value)  # a set's first members (a team of 2,000 made a 46 KB label)
        if isinstance(value, tuple) and len(value) > WHY_LIMIT:
            text = (f"({', '.join(map(repr, value[:WHY_LIMIT]))}, ... and "
                    f"{len(value) - WHY_LIMIT} more members)")
        label = f"{subject}.{attribute}: {status}" + (f" = {text}" if status == "resolved"
                                                      else "")
        children = [self.why_fact(i) for i in ids[:WHY_LIMIT]]
        if len(ids) > WHY_LIMIT:
            children.append(Justification(
                "more", f"... and {len(ids) - WHY_LIMIT} more heads (details['heads'] lists "
                "every id)", {}))
        return Justification("resolution", label, {"status": status, "heads": tuple(ids)},
                             tuple(children))

    def with_why(self, guard: Callable[[], AbstractContextManager[None]],
                 r: Resolution, slot: tuple[str, str] | None = None) -> Resolution:
        """``r`` (just made, not yet shared) given its ``why()`` (run under ``guard``, the
        memory's lock); ``slot``:
        the store's key of the slot, so that an unknown slot whose facts ended says so."""
        ids = tuple(f.id for f in r.heads)
        # the closure holds r's fields, not r: r holding a closure that holds r would be a
        # reference cycle per answer, left to the garbage collector
        said = (r.subject, r.attribute, r.status, r.value)

        def why() -> Justification:
            with guard():
                if not ids and slot is not None:  # unknown: did its facts end?
                    ended = tuple(f.id for f in self.store.history(*slot)
                                  if f.status == "ended")
                    if ended:
                        j = self.why_resolution(*said, ended)
                        return replace(j, label=f"{j.label} (every current fact ended)")
                return self.why_resolution(*said, ids)

        object.__setattr__(r, "_why", why)  # r is the caller's own, not published yet
        return r

    def _proof(self, node: Any) -> Justification:
        kind = node[0]
        if kind == "belief":
            _, text, rid, rtext, children = node
            return Justification("belief", f"{text}  [rule {rid}: {rtext}]",
                                 {"belief": text, "rule": rtext},
                                 tuple(self._proof(c) for c in children))
        if kind == "holds":
            _, s, a, v, heads = node
            facts = tuple(self.store.facts(heads))
            return Justification("holds", f"holds({s}, {a}, {v})", {"facts": facts},
                                 tuple(self.why_fact(h) for h in heads))
        return Justification(kind, node[1], {})  # a test or a negation, as Prolog text

    # ------------------------------------------------------------------ what if

    def what_if(self, add: Sequence[Fact], retract: Sequence[str], after_ra: int,
                now: int, scope: str | None = None) -> WhatIf:
        """Which heads and beliefs would change in ``scope``'s view at the clock ``now``;
        nothing is written."""
        rows = [_row(f, after_ra + 1 + i, self.store.meta_keys, f.attribute in self.store.many)
                for i, f in enumerate(add)]
        res = bridge.ask("tk_what_if(M, Sc, N, As, Rs, C)",
                         {"M": self.store.h, "Sc": scope or "", "N": now, "As": rows,
                          "Rs": list(retract)})["C"]
        slots, gained, lost = res
        return WhatIf(
            heads=tuple(HeadChange(unscoped(s)[1], a, tuple(b), tuple(c))
                        for s, a, b, c in slots),
            beliefs_gained=tuple(_belief(b) for b in gained),
            beliefs_lost=tuple(_belief(b) for b in lost),
        )


def _belief(raw: Any) -> Belief:
    name, args, text = raw
    return Belief(predicate=name, args=tuple(args), text=text)


def support_ids(j: Justification) -> set[str]:
    """The ids of the head facts a belief's justification rests on."""
    out: set[str] = set()
    if j.kind == "holds":
        out.update(f.id for f in j.details["facts"])
    for c in j.children:
        if c.kind != "fact":
            out |= support_ids(c)
    return out

