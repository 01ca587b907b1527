"""The memory-file commands of the CLI: inspect, query, verify, export, import, serve.

Each opens an existing journal (a SQLite file or a ``postgresql://`` URL) with the policy,
tiers and protected tiers it was created with (``Memory.open``), so no flag has to repeat
them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .errors import TruthkeeperError
from .memory import Memory
from .values import Fact, Resolution, claimed, jsonable

__all__ = ["add_parsers", "run"]

COMMANDS = ("inspect", "query", "verify", "export", "import", "serve")


def add_parsers(sub: Any) -> None:
    """Register the memory-file commands on the CLI's subparsers."""
    p = sub.add_parser("inspect", help="summarise a memory file: facts, slots, conflicts, "
                       "sources, rules, chain")
    _common(p)
    q = sub.add_parser("query", help="what a memory holds about a subject (or one slot)")
    _common(q)
    q.add_argument("subject")
    q.add_argument("attribute", nargs="?", help="one slot (default: every slot of subject)")
    q.add_argument("--history", action="store_true", help="every fact of the slot")
    q.add_argument("--valid-at", help="as of this valid time (ISO 8601 or YYYY-MM-DD)")
    q.add_argument("--known-at", help="as the memory knew it at this time")
    v = sub.add_parser("verify", help="check the hash chain and every signature "
                       "(exit 1 when broken)")
    _common(v, scope=False)
    e = sub.add_parser("export", help="write every event as JSON Lines")
    _common(e, scope=False)
    e.add_argument("out", help="the JSON Lines file to write")
    i = sub.add_parser("import", help="import a JSON Lines export (all or nothing, "
                       "idempotent); creates FILE if missing")
    _common(i, scope=False)
    i.add_argument("src", help="the JSON Lines file to read")
    s = sub.add_parser("serve", help="serve a memory to agents over MCP (stdio, or "
                       "streamable HTTP with --http)")
    s.add_argument("--db", help="the memory file or postgresql:// URL (default: in memory)")
    s.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here")
    s.add_argument("--scope", help="bind every tool to this scope (e.g. user:ana)")
    s.add_argument("--allow-declare", action="store_true",
                   help="offer the declare tool (declarations are the owner's otherwise)")


def _common(p: argparse.ArgumentParser, scope: bool = True) -> None:
    p.add_argument("file", help="a memory file (SQLite) or a postgresql:// URL")
    if scope:
        p.add_argument("--scope", help="read this scope (e.g. user:ana)")
        p.add_argument("--forensic", action="store_true",
                       help="on a broken chain, show what the events before the first bad "
                       "one say (marked FORENSIC) instead of refusing")
    p.add_argument("--json", action="store_true", help="print JSON")


class BrokenChain(TruthkeeperError):
    """A read command met a journal whose chain is broken (exit 1)."""


def _open_read(args: argparse.Namespace) -> Memory:
    """Open for ``inspect``/``query``: a broken chain is refused (naming the first bad
    event) unless ``--forensic``, which reads the events before it and says so."""
    mem = Memory.open(args.file, lazy=False)  # the whole chain, so a break shows here
    if mem.corruption is not None and not args.forensic:
        mem.close()
        msg = (f"the journal's chain is broken: {mem.corruption}. Its answers cannot be "
               "trusted; `truthkeeper verify` shows where, `--forensic` reads the events "
               "before it")
        raise BrokenChain(msg)
    if mem.corruption is not None:
        print(f"FORENSIC: the chain is broken ({mem.corruption}); what follows is what "
              "the events before it say", file=sys.stderr)
    return mem


def run(args: argparse.Namespace) -> int:
    """Run one memory-file command; errors print as ``truthkeeper CMD: message``, exit 2."""
    try:
        if args.command == "serve":
            from .integrations.mcp import serve

            serve(db=args.db, http=args.http, scope=args.scope,
                  allow_declare=args.allow_declare)
            return 0
        return _COMMANDS[args.command](args)
    except TruthkeeperError as exc:
        target = getattr(args, "file", None) or getattr(args, "db", None) or ""
        print(f"truthkeeper {args.command}: {_redacted(target, str(exc))}", file=sys.stderr)
        return 1 if isinstance(exc, BrokenChain) else 2


def _redacted(target: str, text: str | None = None) -> str:
    """``text`` (default: the target) without a PostgreSQL password in any DSN form."""
    from .journal.postgres import redact

    return redact(target, text)


def _out(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(jsonable(data), indent=2, ensure_ascii=False) if args.json else text)


def _view(mem: Memory, args: argparse.Namespace) -> Memory:
    return mem.scope(args.scope) if getattr(args, "scope", None) else mem


def _inspect(args: argparse.Namespace) -> int:
    with _open_read(args) as mem:
        view = _view(mem, args)
        slots = view.slots()
        v = mem.verify()
        data = {"file": _redacted(args.file), "policy": mem.policy, "tiers": list(mem.tiers),
                "protected_tiers": list(mem.protected_tiers), "scope": args.scope,
                "facts": len(view),  # erased and retracted ones too, as len counts
                "slots": len(slots), "subjects": len({s for s, _ in slots}),
                "conflicts": [list(c) for c in view.conflicts()],
                "sources": [r.to_dict() for r in view.reliability()],
                "rules": view.rules(), "chain": v.to_dict(), "learned": _learned(mem),
                "scopes": mem.scopes()}
    lines = [f"{data['file']}: {data['facts']} facts in {data['slots']} slots about "
             f"{data['subjects']} subjects" + (f" (scope {args.scope})" if args.scope else
                                               " in the shared layer" if data["scopes"] else ""),
             f"policy {data['policy']}; tiers {', '.join(mem.tiers)} "
             f"(protected: {', '.join(mem.protected_tiers) or 'none'})",
             f"chain: {'ok' if v.ok else 'BROKEN'}, {v.events} events"
             + ("" if v.ok else f"; first bad event {v.first_bad}: {v.reason}")]
    lines.append(f"conflicts: {len(data['conflicts'])}")
    lines += [f"  {s}.{a}" for s, a in data["conflicts"][:20]]
    lines.append(f"sources: {len(data['sources'])}")
    lines += [f"  {r['source']} [{r['tier']}] reliability {r['mean']:.2f} "
              f"({r['low']:.2f}-{r['high']:.2f}), {r['n']} outcomes"
              for r in data["sources"][:20]]
    lines.append(f"scopes in the file: {len(data['scopes'])}")
    lines += [f"  {name}" for name in data["scopes"][:20]]
    lines.append(f"rules: {len(data['rules'])}")
    lines += [f"  {r}" for r in data["rules"]]
    learned = data["learned"]
    if learned is None:
        lines.append("learned from agreement: nothing yet")
    else:
        lines.append(f"learned from agreement: {learned['sources']} sources; claims' "
                     f"correlation {learned['correlation']:.3g}, false values "
                     f"{learned['false_values']:g}; {learned['dependent_pairs']} dependent "
                     "pairs")
        lines += [f"  {a}: correlation {v['correlation']:.3g}, false values "
                  f"{v['false_values']:g}" for a, v in learned["by_attribute"].items()]
    _out(args, data, "\n".join(lines))
    return 0


def _learned(mem: Memory) -> dict[str, Any] | None:
    """What ``learn_from_agreement`` learned about open values, or None before it ran."""
    book = mem._rel.book
    if not book.source_prior:
        return None
    return {"sources": len(book.source_prior), "correlation": book.correlation,
            "false_values": book.false_values,
            "by_attribute": {a: {"correlation": r, "false_values": n}
                             for a, (r, n) in sorted(book.open_values.items())},
            "dependent_pairs": sum(p >= 0.5 for p in book.dependence.values())}


def _query(args: argparse.Namespace) -> int:
    with _open_read(args) as mem:
        view = _view(mem, args)
        attrs = [args.attribute] if args.attribute else [a for _, a in view.slots(args.subject)]
        if not attrs:
            _out(args, {}, f"nothing is known about {args.subject!r}")
            return 0
        if args.history:
            hist = {a: view.history(args.subject, a) for a in attrs}
            _out(args, hist, "\n".join(f"{args.subject}.{a}:\n" + "\n".join(
                "  " + _fact_line(f) for f in fs) for a, fs in hist.items()))
            return 0
        if args.valid_at or args.known_at:
            res = {a: view.as_of(args.subject, a, valid_at=args.valid_at,
                                 known_at=args.known_at) for a in attrs}
        else:
            res = {a: view.current(args.subject, a) for a in attrs}
    _out(args, res, "\n".join(_resolution_lines(r) for r in res.values()))
    return 0


def _resolution_lines(r: Resolution) -> str:
    head = f"{r.subject}.{r.attribute}"
    if r.status == "unknown":
        return f"{head}: unknown"
    if r.status == "resolved":
        return f"{head} = {r.value!r}  (resolved)\n  " + "\n  ".join(
            _fact_line(f) for f in r.heads)
    cands = "\n  ".join(f"{claimed(c.value, c.present)}: p="
                        f"{'?' if c.p is None else f'{c.p:.2f}'}, said by "
                        f"{', '.join(c.sources)}" for c in r.candidates)
    return f"{head}: CONFLICT between {len(r.candidates)} values\n  {cands}"


def _fact_line(f: Fact) -> str:
    status = f" [{f.status}]" if f.status else ""
    return (f"{f.id}{status} {claimed(f.value, f.present)} said by {f.source} ({f.tier}), "
            f"valid from {f.valid_from.date().isoformat()}")


def _verify(args: argparse.Namespace) -> int:
    with Memory.open(args.file, lazy=False) as mem:  # read only: replays up to a break
        v = mem.verify()
    _out(args, v, f"ok: {v.events} events, head {v.head_hash[:16]}..." if v.ok else
         f"BROKEN at event {v.first_bad}: {v.reason} ({v.events} events verified before)")
    return 0 if v.ok else 1


def _export(args: argparse.Namespace) -> int:
    with Memory.open(args.file) as mem:
        n = mem.export_jsonl(args.out)
    _out(args, {"lines": n, "out": args.out}, f"wrote {n} events to {args.out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    fresh = not args.file.startswith(("postgresql://", "postgres://")) and not os.path.exists(
        args.file)
    try:
        with Memory.open(args.file, readonly=False, create=True) as mem:
            before = mem._ledger.seq  # the journal's position, without walking the chain
            n = mem.import_jsonl(args.src)
            added = mem._ledger.seq - before
    except BaseException:
        if fresh:  # a refused import leaves no memory file behind it
            for path in (args.file, args.file + "-wal", args.file + "-shm"):
                if os.path.exists(path):
                    os.remove(path)
        raise
    _out(args, {"lines_read": n, "events_added": added},
         f"imported {args.src}: {n} lines read, {added} new events")
    return 0


_COMMANDS = {"inspect": _inspect, "query": _query, "verify": _verify, "export": _export,
             "import": _import}
