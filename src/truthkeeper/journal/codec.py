"""The one codec: facts, events, payloads, signatures' bodies and JSON Lines.

Every place that turns a fact or an event into text, or text back into one, calls this
module: the journal rows and their hash chain, the payload the symbolic store keeps, the
JSONL export and import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import JournalCorrupt
from ..keys import random_hex
from ..values import Fact, fact_dict, from_us, normalise_key, parse_time, to_us, unscoped

__all__ = [
    "EVENT_KINDS",
    "action_bytes",
    "GENESIS",
    "Event",
    "canonical",
    "canonical_bytes",
    "check_row",
    "content_hash",
    "erased_body",
    "is_erased",
    "event_hash",
    "fact_body",
    "fact_text",
    "fact_fields",
    "jsonl_line",
    "parse_body",
    "row_fact",
    "payload",
    "unpayload",
    "erased_audit_body",
]

GENESIS = "0" * 64
EVENT_KINDS = ("config", "fact", "retract", "rule", "rule_removed", "outcome", "prior", "key",
               "checkpoint", "audit", "erase", "end", "declare")
"""Every kind of journal event; all of them are exported and imported."""
_FACT_FIELDS = ("subject", "attribute", "value", "source", "tier", "valid_from", "valid_to",
                "supersedes", "text", "meta", "id", "signature", "scope", "present")


NewEvent = tuple[str, int, "dict[str, Any] | str"] | tuple[str, int, str | None, Fact]
"""An event to append: kind, transaction time, body (a dict or its canonical text) and,
for a fact event whose text :func:`fact_text` writes, the :class:`~truthkeeper.values.Fact`
(the slot index reads :func:`index_fields` of it instead of parsing the text). A fact
event's text may be None: written from the Fact, with a fresh salt, as it is appended (a
large batch does not hold every text at once)."""


def event_text(event: NewEvent) -> str:
    """The canonical text of a new event's body (:data:`NewEvent`)."""
    body = event[2]
    if isinstance(body, str):
        return body
    if body is None:
        return fact_text(event[3])  # type: ignore[misc]
    return canonical(body)


@dataclass(frozen=True, slots=True)
class Event:
    """One journal row, its body parsed."""

    seq: int
    kind: str
    recorded_at: int
    body: dict[str, Any]
    prev_hash: str
    hash: str


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical(body: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, Unicode kept."""
    return _CANONICAL.encode(body)


def content_hash(body_text: str) -> str:
    """The hash of an event's content that the chain covers: sha256 of the body text, or,
    for an erased fact, the hash its placeholder keeps (so the chain still verifies)."""
    if body_text.startswith(ERASED_PREFIX):
        try:
            h = json.loads(body_text)[ERASED]["content_hash"]
        except (ValueError, KeyError, TypeError):
            return ""
        return h if isinstance(h, str) else ""
    return hashlib.sha256(body_text.encode()).hexdigest()


def event_hash(prev: str, seq: int, kind: str, recorded_at: int, body_text: str) -> str:
    """The chain link: sha256 over the previous hash, the position, the kind, the
    transaction time and the content hash of the body."""
    h = hashlib.sha256()
    h.update(f"{prev}|{seq}|{kind}|{recorded_at}|{content_hash(body_text)}".encode())
    return h.hexdigest()


ERASED = "$erased"
"""The key that marks an erased fact's placeholder body."""
ERASED_PREFIX = '{"' + ERASED + '":'
"""How an erased placeholder's body text begins."""
_KEPT = ("id", "subject", "attribute", "scope", "source", "tier", "valid_from", "valid_to",
         "supersedes")


ERASED_ATTRIBUTE = "$erased"
"""The attribute of every erased placeholder's slot (its subject is the slot's digest)."""


def erased_slot(subject: str, attribute: str) -> tuple[str, str]:
    """The slot an erased fact's placeholder keeps instead of its own: ``$erased:`` and a
    SHA-256 digest of the subject and attribute (personal data too: a ``diagnosis`` slot
    under a user's name), and the attribute ``$erased``. ``history(subject, attribute)``
    finds the placeholders by the same digest; nothing else names the slot again."""
    digest = hashlib.sha256(f"{subject}\x1f{attribute}".encode()).hexdigest()[:40]
    return f"$erased:{digest}", ERASED_ATTRIBUTE


def erased_body(body_text: str, at: int) -> str:
    """The placeholder of an erased fact event: its id, scope, source, tier, times, the
    digest of its slot (:func:`erased_slot`) and the content hash of what was erased;
    subject, attribute, value, text, meta, signature and salt are gone."""
    body = json.loads(body_text)
    out = {k: body[k] for k in _KEPT if k in body}
    if isinstance(body.get("subject"), str) and isinstance(body.get("attribute"), str):
        out["subject"], out["attribute"] = erased_slot(
            normalise_key(body["subject"], "subject"),
            normalise_key(body["attribute"], "attribute"))
    out[ERASED] = {"content_hash": content_hash(body_text), "at": at}
    return canonical(out)


def erased_audit_body(body_text: str, at: int) -> str:
    """The placeholder of an erased audit entry: its kind (drop, rejected_write) and the
    content hash of what was erased; the query, items, values and messages are gone."""
    body = json.loads(body_text)
    return canonical({"kind": body.get("kind") if isinstance(body.get("kind"), str) else None,
                      ERASED: {"content_hash": content_hash(body_text), "at": at}})


ERASABLE = ("fact", "audit", "rule", "outcome")
"""The event kinds an erasure may turn into placeholders (facts, the audit entries naming
them, and an erased scope's rules and outcomes)."""


def erased_scoped_body(body_text: str, at: int) -> str:
    """The placeholder of an erased scope's rule or outcome: its id (a rule's, which a
    later ``rule_removed`` names; an outcome's fact) and the content hash of what was
    erased; the text, source, scope and everything else are gone."""
    body = json.loads(body_text)
    return canonical({"id": body.get("id") if isinstance(body.get("id"), str) else None,
                      ERASED: {"content_hash": content_hash(body_text), "at": at}})


def erased_outcome_body(body_text: str, at: int) -> str:
    """The placeholder of an outcome about an erased fact: who was right or wrong (source,
    tier, correct, confidence, scope: the reliability it taught replays the same) and the
    content hash; the payload a signature covered (slot and value) is gone."""
    body = json.loads(body_text)
    out = {k: body[k] for k in ("id", "source", "tier", "correct", "confidence", "scope")
           if k in body}
    out[ERASED] = {"content_hash": content_hash(body_text), "at": at}
    return canonical(out)


def is_erased(body: Mapping[str, Any]) -> bool:
    """Whether a fact event body is an erased placeholder."""
    return ERASED in body


def check_row(seq: int, kind: str, ra: int, body: str, prev: str, h: str,
              expected_seq: int, expected_prev: str) -> str | None:
    """Why a stored row breaks the chain, or None."""
    if seq != expected_seq:
        return f"expected event {expected_seq}, found {seq} (an event is missing)"
    if prev != expected_prev:
        return "its prev_hash does not match the previous event's hash"
    if event_hash(prev, seq, kind, ra, body) != h:
        return "its content does not match its hash (edited)"
    if body.startswith(ERASED_PREFIX) and kind not in ERASABLE:
        return "only a fact, an audit entry, a rule or an outcome can be an erased placeholder"
    if kind not in EVENT_KINDS:
        return f"unknown event kind {kind!r}"
    return None


def parse_body(body: str, seq: int) -> dict[str, Any]:
    """A stored body as a dict; JournalCorrupt when it is not a JSON object."""
    try:
        out = json.loads(body)
    except ValueError:
        msg = f"journal event {seq} is not valid JSON"
        raise JournalCorrupt(msg) from None
    if not isinstance(out, dict):
        msg = f"journal event {seq} is not a JSON object"
        raise JournalCorrupt(msg)
    return out


def row_event(row: tuple[int, str, int, str, str, str]) -> Event:
    """A stored row ``(seq, kind, recorded_at, body, prev_hash, hash)`` as an Event (its
    body parsed; JournalCorrupt when it is not a JSON object)."""
    seq, kind, ra, body, prev, h = row
    return Event(seq, kind, ra, parse_body(body, seq), prev, h)


def fact_body(f: Fact, salt: str | None = None) -> dict[str, Any]:
    """A fact as a journal event body: ``Fact.to_dict()`` without ``recorded_at`` (the
    event's own) and without an absent signature, with a random salt."""
    body = fact_dict(f, recorded=False)
    if body["signature"] is None:
        del body["signature"]
    # the salt: an erased value cannot be guessed from the hash its placeholder keeps
    body["salt"] = salt if isinstance(salt, str) else random_hex()
    return body


def index_fields(f: Fact) -> dict[str, Any]:
    """The fields of ``fact_text(f)``'s body that the slot index reads (the same values, as
    parsing the text would give them)."""
    return {"id": f.id, "scope": f.scope, "subject": f.subject, "attribute": f.attribute,
            "source": f.source, "tier": f.tier, "signature": f.signature}


def fact_text(f: Fact, salt: str | None = None) -> str:
    """``canonical(fact_body(f, salt))``: a fact's journal body as text. Most facts (a str
    or int value, no meta, signature or status, present) are written out directly, the
    keys in canonical order: a bulk load spent half its Python time building the dict
    and encoding it."""
    v = f.value
    if f.meta or f.signature is not None or f.status is not None or not f.present or (
            type(v) is not str and type(v) is not int):
        return canonical(fact_body(f, salt))
    s = _STRING
    return "".join((
        '{"attribute":', s(f.attribute), ',"id":', s(f.id), ',"meta":{},"salt":',
        s(salt if isinstance(salt, str) else random_hex()),
        "" if f.scope is None else ',"scope":' + s(f.scope),
        ',"source":', s(f.source), ',"subject":', s(f.subject), ',"supersedes":',
        "null" if f.supersedes is None else s(f.supersedes), ',"text":',
        "null" if f.text is None else s(f.text), ',"tier":', s(f.tier),
        ',"valid_from":"', f.valid_from.isoformat(), '","valid_to":',
        "null" if f.valid_to is None else '"' + f.valid_to.isoformat() + '"', ',"value":',
        s(v) if type(v) is str else int.__repr__(v), "}"))


def fact_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The keyword fields of a fact body that ``add_many`` accepts (unknown keys dropped,
    absent optional ones left out)."""
    return {k: body[k] for k in _FACT_FIELDS if k in body}


def payload(f: Fact) -> str:
    """What the symbolic store keeps of a fact beyond what its decisions need: the value
    as given, text, meta and signature (an erased fact: nothing but the mark)."""
    if f.status == "erased":
        return ERASED_PAYLOAD
    v = f.value
    if f.text is None and not f.meta and f.signature is None and f.present and (
            type(v) is str or type(v) is int):  # most facts: canonical's text, sooner
        return f"[{_STRING(v) if type(v) is str else v},null,{{}},null]"
    return canonical([f.value, f.text, f.meta, f.signature, *([] if f.present else ["absent"])])


_STRING = json.encoder.encode_basestring  # canonical's encoder of a str (ensure_ascii off)
_PLAIN_TAIL = ",null,{},null]"


ERASED_PAYLOAD = canonical([None, None, {}, None, "erased"])


def unpayload(text: str,
              ) -> tuple[Any, str | None, dict[str, Any], dict[str, str] | None, bool]:
    """The inverse of :func:`payload`: value, text, meta, signature and presence."""
    if text.endswith(_PLAIN_TAIL):  # a value alone: most facts (payload's common case)
        v = text[1:-len(_PLAIN_TAIL)]
        if v.isdigit() or (v[:1] == "-" and v[1:].isdigit()):
            return int(v), None, {}, None, True
        if len(v) > 1 and v[0] == v[-1] == '"' and "\\" not in v and '"' not in v[1:-1]:
            return v[1:-1], None, {}, None, True  # no escape: the JSON text is the str
    value, txt, meta, sig, *rest = json.loads(text)
    return value, txt, meta, sig, rest != ["absent"]


def row_fact(row: tuple[Any, ...], with_status: bool = False) -> Fact:
    """A Fact from the store's row ``(id, s, a, vf, vt, ra, tier, src, sup, payload,
    status)``; ``with_status`` fills ``Fact.status`` (an erased fact's is always
    ``"erased"``)."""
    fid, s, a, vf, vt, ra, tier, src, sup, text, st = row
    value, txt, meta, sig, present = unpayload(text)
    scope, subject = unscoped(s)
    status = (st if isinstance(st, str) else st[0]) if with_status else None
    return Fact(id=fid, subject=subject, attribute=a, value=value, valid_from=from_us(vf),
                recorded_at=from_us(ra), source=src, tier=tier, supersedes=sup,
                valid_to=None if vt is None else from_us(vt), text=txt, meta=meta,
                signature=sig, status="erased" if text == ERASED_PAYLOAD else status,
                scope=scope, present=present)


_SIGNED_DOMAIN = b"truthkeeper-fact-v1\n"


def canonical_bytes(fact: Mapping[str, Any], nonce: str) -> bytes:
    """The bytes a protected-tier signature covers: a hash of the content (value, text,
    meta), the slot, value, valid times, supersedes, source, tier and the nonce."""
    valid_to = fact.get("valid_to")
    content = {"value": fact["value"], "text": fact.get("text"),
               "meta": dict(fact.get("meta") or {})}
    body = {
        "content_hash": hashlib.sha256(canonical(content).encode()).hexdigest(),
        "subject": normalise_key(fact["subject"], "subject"),
        "attribute": normalise_key(fact["attribute"], "attribute"),
        "value": fact["value"],
        "valid_from": to_us(parse_time(fact["valid_from"], "valid_from")),
        "valid_to": None if valid_to is None else to_us(parse_time(valid_to, "valid_to")),
        "supersedes": fact.get("supersedes"),
        "source": fact["source"],
        "tier": normalise_key(fact.get("tier", "agent"), "tier"),
        "nonce": nonce,
    }
    if fact.get("scope") is not None:
        body["scope"] = normalise_key(fact["scope"], "scope")
    if fact.get("present") is False:
        body["present"] = False
    return _SIGNED_DOMAIN + canonical(body).encode()


_ACTION_DOMAIN = b"truthkeeper-action-v1\n"


def action_bytes(action: str, payload: Mapping[str, Any], nonce: str) -> bytes:
    """The bytes a signature over an action covers (a retraction, an outcome about a
    protected source, a key change, a checkpoint)."""
    return _ACTION_DOMAIN + canonical({"action": action, "payload": dict(payload),
                                       "nonce": nonce}).encode()


def jsonl_line(kind: str, recorded_at: int, body: dict[str, Any]) -> str:
    """One line of a JSON Lines export."""
    return json.dumps({"kind": kind, "recorded_at": recorded_at, "body": body},
                      sort_keys=True, ensure_ascii=False) + "\n"
