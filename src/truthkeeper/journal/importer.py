"""Importing a JSON Lines export into a memory: every kind of event, in one write, all or
nothing; events the journal holds already are skipped (re-importing an export changes
nothing). The events are applied by the memory's :class:`~truthkeeper.events.Applier`
(``ap``), as live writes are."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidFact, TruthkeeperError, UnknownRule, brief
from ..events import _nonce_owner
from ..signing import signed_fields
from ..validation import (
    check_categories,
    check_confusion_body,
    check_declaration,
    check_label,
    check_probability,
    check_rule_text,
    check_scope,
    check_source,
    from_us,
    parse_time,
)
from ..values import Fact
from .base import Journal
from .codec import canonical, fact_fields, is_erased
from .ledger import Ledger, Write

__all__ = ["import_lines"]


def import_lines(ap: Any, ledger: Ledger, lines: list[tuple[int, str, dict[str, Any]]],
                 where: str) -> None:
    """Apply imported lines in one write, all or nothing, skipping events the journal
    already holds (re-importing an export changes nothing)."""
    with ledger.write() as w:
        later = _import(ap, w, lines, ledger.journal, where)
    for kind, body in later:
        if kind == "erase":
            ap._erased(*body)
        else:
            ap.after_logged(kind, [body])

@dataclass
class _Import:
    """One import's state: the write, the rules seen by their exporting id (None: erased
    with its scope), the events applied after the write commits, the run of facts."""

    ap: Any
    w: Write
    journal: Journal
    where: str
    rid_text: dict[str, tuple[str, str | None] | None] = field(default_factory=dict)
    later: list[tuple[str, Any]] = field(default_factory=list)
    run: list[tuple[int, Fact, str | None]] = field(default_factory=list)

    def flush(self) -> None:
        """Write the run of facts collected so far (facts are written in runs)."""
        if self.run:
            try:
                self.ap.facts(self.w, [f for _, f, _ in self.run],
                              [salt for _, _, salt in self.run])
            except TruthkeeperError as exc:
                msg = f"{self.where} lines {self.run[0][0]}..{self.run[-1][0]}: {exc}"
                raise InvalidFact(msg) from None
            self.run.clear()


def _import(ap: Any, w: Write, lines: list[tuple[int, str, dict[str, Any]]],
            journal: Journal, where: str) -> list[tuple[str, Any]]:
    held: dict[str, str] = {}
    seen = Counter(_identity(ev.kind, ev.body, held) for ev in journal.read()
                   if ev.kind != "config")
    im = _Import(ap, w, journal, where)
    now = from_us(ap.clock())
    named: dict[str, str] = {}
    for n, kind, body in lines:
        key = _identity(kind, body, named)
        if seen[key] > 0:
            seen[key] -= 1
            if kind == "rule":
                im.rid_text[str(body.get("id"))] = (str(body.get("text")), body.get("scope"))
            continue
        try:
            if kind == "fact" and not is_erased(body):
                f = ap.builder.coerce(fact_fields(body), n, now)
                f = ap.declarer.coerce(f, f.tier in ap.guard.guarded)
                if f.tier in ap.guard.guarded:
                    ap.guard.check_fact(signed_fields(f))
                im.run.append((n, f, body.get("salt")))
                continue
            im.flush()
            HANDLERS.get(kind, _logged)(im, kind, body, now)
        except (TruthkeeperError, KeyError, TypeError, ValueError) as exc:
            msg = f"{where} line {n}: {exc}"
            raise InvalidFact(msg) from None
    im.flush()
    return im.later


def _placeholder(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    """An erased fact's placeholder: its slot, source, tier and times, no payload."""
    f = im.ap._placeholder(body, now)
    [ra] = im.w.times(1)
    im.ap.store.add([f], [ra])
    im.w.on_undo(functools.partial(im.ap.store.undo_add, [f.id]))
    im.w.events.append(("fact", ra, dict(body)))


def _erase(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    ids = [check_label(i, "ids[]") for i in body.get("ids") or ()]
    eb = {"ids": ids, "reason": check_label(body.get("reason"), "reason")}
    eb.update({k: body[k] for k in ("signature",) if k in body})
    im.later.append(("erase", (eb, im.ap._erase_in(im.w, im.journal, eb))))


def _retract(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    im.ap.retract(im.w, check_label(body.get("id"), "id"),
                  check_label(body.get("reason"), "reason"), body.get("signature"))


def _declare(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    im.ap.declare(im.w, check_declaration(body.get("attribute"),
                                          body.get("cardinality", "one"),
                                          body.get("value_type")))


def _end(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    eb = {"id": check_label(body.get("id"), "id"),
          "valid_to": parse_time(body.get("valid_to"), "valid_to").isoformat()}
    eb.update({k: body[k] for k in ("signature",) if k in body})
    im.ap.end(im.w, eb)


def _key(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    im.ap.key(im.w, dict(body))


def _skipped(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    """Checkpoints and audit entries are about the exporting journal's chain and log."""


def _rule(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    if is_erased(body):  # erased with its scope: nothing to add
        im.rid_text[str(body.get("id"))] = None
        return
    text = check_rule_text(body.get("text"))
    rule_scope = None if body.get("scope") is None else check_scope(body["scope"])
    im.ap.rule(im.w, text, rule_scope)
    im.rid_text[str(body.get("id"))] = (text, rule_scope)


def _rule_removed(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    rid = str(body.get("id"))
    if rid not in im.rid_text:
        raise UnknownRule(f"rule {body.get('id')!r} is not in the file")
    removed = im.rid_text[rid]
    if removed is not None:
        im.ap.rule_removed(im.w, *removed)


def _logged(im: _Import, kind: str, body: dict[str, Any], now: Any) -> None:
    """Outcomes and priors (an unknown kind is refused when applied)."""
    if kind == "outcome" and is_erased(body):  # erased with its scope
        return
    body = _checked_logged(im.ap, kind, body)
    if kind == "outcome":
        im.ap._check_outcome(body, None)
        im.ap._nonce(im.w, body, _nonce_owner(body))
    im.ap.logged(im.w, kind, [body])
    im.later.append((kind, body))


HANDLERS: dict[str, Callable[[_Import, str, dict[str, Any], Any], None]] = {
    "fact": _placeholder, "erase": _erase, "retract": _retract, "declare": _declare,
    "end": _end, "key": _key, "checkpoint": _skipped, "audit": _skipped, "rule": _rule,
    "rule_removed": _rule_removed, "outcome": _logged,
}
"""How each imported kind of event is checked and written (a fact that is not erased is
collected into a run instead; any other kind goes to ``_logged``)."""


def _checked_logged(ap: Any, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    if kind == "outcome":
        if not isinstance(body.get("correct"), bool):
            raise InvalidFact("an outcome needs correct: true or false")
        if body.get("id") is not None:
            ap.store.get(check_label(body["id"], "id"))
        out = {"id": body.get("id"), "source": check_source(body.get("source")),
               "tier": ap.builder.tier(body.get("tier")), "correct": body["correct"]}
        out.update({k: body[k] for k in ("signed", "signature", "confirmation")
                    if k in body})
        if body.get("scope") is not None:
            out["scope"] = check_scope(body["scope"])
        if body.get("confidence") is not None:
            out["confidence"] = check_probability(body["confidence"], "confidence")
        return out
    if not (isinstance(body.get("tier_prior", {}), dict)
            and isinstance(body.get("source_prior", {}), dict)):
        raise InvalidFact("a prior needs tier_prior and/or source_prior objects")
    dep = body.get("dependence", [])
    if not (isinstance(dep, list) and all(
            isinstance(x, list) and len(x) == 3 and isinstance(x[0], str)
            and isinstance(x[1], str) and isinstance(x[2], (int, float))
            and not isinstance(x[2], bool) and 0 <= x[2] <= 1 for x in dep)):
        raise InvalidFact("dependence must be a list of [source, source, p in [0, 1]]")
    rho = body.get("correlation", 0.0)
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0 <= rho <= 1:
        raise InvalidFact(f"correlation must be a number in [0, 1], got {brief(rho)}")
    n_false = body.get("false_values", 1.0)
    if (isinstance(n_false, bool) or not isinstance(n_false, (int, float))
            or not 1 <= n_false <= 1e9):
        raise InvalidFact(f"false_values must be a number in [1, 1e9], got {brief(n_false)}")
    per_attr = body.get("open_values", {})
    if not (isinstance(per_attr, dict) and all(
            isinstance(a, str) and isinstance(v, list) and len(v) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            and 0 <= v[0] <= 1 and 1 <= v[1] <= 1e9 for a, v in per_attr.items())):
        raise InvalidFact("open_values must map an attribute to [correlation in [0, 1], "
                          "false_values in [1, 1e9]]")
    if "confusion" in body:
        check_confusion_body(body["confusion"])
    if "categories" in body:
        body = {**body, "categories": {a: list(c) for a, c in check_categories(
            body["categories"]).items()}}
    return body


def _identity(kind: str, body: Mapping[str, Any], rules: dict[str, str]) -> tuple[str, str]:
    """What makes two journals' events one event: a rule is its text and scope, and its
    removal that of the rule it removes (a rule's id is its journal's sequence number,
    which audit entries and checkpoints, never exported, shift), an erasure what it erased
    and why; ``rules`` maps the rule ids read so far to theirs."""
    if kind == "rule":
        rules[str(body.get("id"))] = key = canonical([body.get("text"), body.get("scope")])
        return kind, key
    if kind == "rule_removed":
        return kind, rules.get(str(body.get("id")), canonical(body) + "?")
    if kind == "erase":  # what it blanked ("outcomes", "audit", "rules") are that journal's seqs
        return kind, canonical({k: body.get(k) for k in ("ids", "reason", "signature")})
    return kind, canonical(body)
