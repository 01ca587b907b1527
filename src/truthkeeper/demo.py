"""``make demo``: the stories of seed 003 (provenance) and seed 000 (Phi_T) on a small memory."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .errors import TierNotAuthorized
from .logic.store import policies
from .memory import Memory
from .results import Utility
from .signing import Signer
from .values import Candidate, Resolution


def _h(title: str) -> None:
    print(f"\n=== {title} ===")


def invoice_story() -> None:
    _h("Seed 003: the Acme invoice under each policy")
    print("verified email (Nov 20): 4500; agent's newer guess (Nov 22): 5000;"
          " human decision (Nov 21): 4800")
    owner = Signer(Ed25519PrivateKey.generate())  # the human's channel holds the private key
    for policy in policies():
        with Memory(policy=policy, trusted_keys=[owner.public_key]) as mem:
            mem.add("Acme", "invoice_total", 4500, source="billing-email", tier="verified",
                    valid_from="2026-11-20T10:00:00Z")
            mem.add("acme", "Invoice_Total", 5000, source="agent:planner", tier="agent",
                    valid_from="2026-11-22T09:00:00Z")
            before = mem.current("acme", "invoice_total")
            mem.add_many([owner.sign({
                "subject": "ACME", "attribute": "Invoice_Total ", "value": 4800,
                "source": "user:ana", "tier": "human", "valid_from": "2026-11-21T16:00:00Z"})])
            after = mem.current("acme", "invoice_total")
            if policy == policies()[0]:
                try:
                    mem.add("acme", "invoice_total", 1, source="agent:planner", tier="human")
                except TierNotAuthorized as exc:
                    print(f"  (an agent claiming the human tier is refused: {exc})")
            print(f"  {policy:26s} email+guess -> {_answer(before)}; + human -> {_answer(after)}")


def _answer(r: Resolution) -> str:
    if r.status == "conflict":
        return f"conflict {[c.value for c in r.candidates]}"
    return f"{r.status} {r.value}"


def chain_story(mem: Memory) -> None:
    _h("A chain collapses to its head")
    a = mem.add("acme", "price", 100, source="catalog", tier="verified",
                valid_from="2026-01-01T00:00:00Z")
    b = mem.add("acme", "price", 120, source="catalog", tier="verified",
                valid_from="2026-03-01T00:00:00Z")
    c = mem.add("acme", "price", 135, source="catalog", tier="verified",
                valid_from="2026-06-01T00:00:00Z")
    r = mem.current("acme", "price")
    print(f"  A={a.value} -> B={b.value} -> C={c.value}: head {r.value} ({r.status})")
    print("  history:", ", ".join(f"{f.value} [{f.status}]" for f in mem.history("acme", "price")))
    march = mem.as_of("acme", "price", valid_at="2026-04-15T00:00:00Z")
    print(f"  as_of(valid_at=2026-04-15): {march.value}")


def context_story(mem: Memory) -> None:
    _h("Seed 000: a retrieved context with stale facts, before and after filter")
    mem.add("ana", "location", "berlin", source="profile", tier="verified",
            valid_from="2025-05-01T00:00:00Z")
    mem.add("ana", "location", "lisbon", source="chat", tier="verified",
            valid_from="2026-09-01T00:00:00Z")
    retrieved = [f.id for f in mem.history("acme", "price")] + [
        f.id for f in mem.history("ana", "location")] + [
        Candidate("ana", "employer", "initech", "2024-01-01T00:00:00Z", source="old-cv"),
        Candidate("ana", "employer", "globex", "2026-02-01T00:00:00Z", source="linkedin"),
    ]
    print(f"  retrieved {len(retrieved)} items:")
    for item in retrieved:
        print("   -", _show(mem, item))
    res = mem.filter(retrieved, query="where does ana work and live, what does acme charge?")
    print(f"  after filter: kept {len(res.kept)}")
    for item in res.kept:
        print("   +", _show(mem, item))
    print("  drop log (audit):")
    for e in mem.audit():
        if e.kind == "drop":
            print(f"   x {_show(mem, e.details['item'])}  <-  "
                  f"{_show(mem, e.details['dominated_by'])} ({e.details['rule']})")


def why_story(mem: Memory) -> None:
    _h("why, beliefs and what_if")
    mem.add_rule("needs_vpn(U) :- holds(U, location, L), L \\== berlin")
    print("  rule: needs_vpn(U) :- holds(U, location, L), L \\== berlin")
    print("  beliefs:", [str(b) for b in mem.beliefs()])
    print("  why needs_vpn(ana):")
    for line in mem.why("needs_vpn(ana)").lines(2):
        print(line)
    head = mem.current("ana", "location").heads[0]
    w = mem.what_if(retract=[head.id])
    print(f"  what_if(retract {head.value}): heads change {[h.heads_after for h in w.heads]},"
          f" beliefs lost {[str(b) for b in w.beliefs_lost]} (nothing written:"
          f" still {mem.current('ana', 'location').value})")


def reliability_story() -> None:
    _h("The Bayesian layer decides what the rules leave open")
    with Memory() as mem:
        mem.add("acme", "invoice_total", 4500, source="billing-email", tier="verified",
                valid_from="2026-11-20T10:00:00Z")
        mem.add("acme", "invoice_total", 5000, source="agent:planner", tier="agent",
                valid_from="2026-11-22T09:00:00Z")
        cautious = Utility(correct=1, wrong=-4, abstain=0)

        def show(when: str) -> None:
            r = mem.current("acme", "invoice_total")
            probs = ", ".join(f"{c.value}: p={c.p:.2f} [{c.interval[0]:.2f}, {c.interval[1]:.2f}]"
                              for c in r.candidates if c.p is not None and c.interval)
            d = mem.decide("acme", "invoice_total", utility=cautious)
            print(f"  {when}: {r.status} ({probs}) -> decide: {d.action} {d.value}")

        show("tier priors only")
        for _ in range(8):
            mem.record_source_outcome("agent:planner", correct=False)
            mem.record_source_outcome("billing-email", correct=True, tier="verified")
        show("after 8 outcomes each")
        print("  reliability:", ", ".join(f"{r.source} {r.mean:.2f} [{r.low:.2f}, {r.high:.2f}]"
                                          for r in mem.reliability()))


def _show(mem: Memory, item: object) -> str:
    if isinstance(item, str):
        f = mem.get(item)
        return f"{f.subject}.{f.attribute} = {f.value!r} (valid from {f.valid_from.date()})"
    assert isinstance(item, Candidate)
    return f"{item.subject}.{item.attribute} = {item.value!r} (valid from {item.valid_from})"


def main() -> None:
    invoice_story()
    with Memory() as mem:
        chain_story(mem)
        context_story(mem)
        why_story(mem)
    reliability_story()


if __name__ == "__main__":
    main()
