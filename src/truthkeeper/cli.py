"""The ``truthkeeper`` command line: memory files (inspect, query, verify, export, import),
an MCP server (serve), demo, selftest, policy checks, benchmarks and evaluations."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import TruthkeeperError


def _count(text: str) -> int:
    """A command-line count: an integer of at least 1 (argparse says what is wrong)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        msg = f"expected a whole number of at least 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return n


def _counts(text: str) -> tuple[int, ...]:
    """Comma-separated counts, each at least 1."""
    return tuple(_count(x) for x in text.split(","))


def main(argv: Sequence[str] | None = None) -> int:
    from . import __version__
    from .cli_memory import add_parsers

    parser = argparse.ArgumentParser(prog="truthkeeper", description=__doc__)
    parser.add_argument("--version", action="version", version=f"truthkeeper {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_parsers(sub)
    sub.add_parser("demo", help="run the demo (policies, chain, filter, why)")
    sub.add_parser("selftest", help="run the plunit suites shipped with the package")
    cp = sub.add_parser("check-policy", help="check a policy file against every invariant")
    cp.add_argument("file", help="Prolog text: clauses dominates(F, G) :- Body")
    cp.add_argument("--name", help="the policy's name (default: the file's base name)")
    cp.add_argument("--meta-keys", default="", help="comma-separated meta keys it reads")
    cp.add_argument("--examples", type=_count, default=100, help="Hypothesis examples each")
    cp.add_argument("--json", action="store_true", help="print the report as JSON")
    bench = sub.add_parser("bench", help="benchmarks (JSON on stdout)")
    bsub = bench.add_subparsers(dest="bench", required=True)
    perf = bsub.add_parser("perf", help="current, filter and add_many speed in memory")
    perf.add_argument("--n", type=_count, default=100_000,
                      help="facts for add_many (default 100000)")
    perf.add_argument("--repeat", type=_count, default=5, help="repetitions (default 5)")
    jb = bsub.add_parser("journal", help="durable add_many rate and reopen time")
    jb.add_argument("--n", type=_count, default=100_000, help="facts (default 100000)")
    jb.add_argument("--repeat", type=_count, default=3, help="repetitions (default 3)")
    jb.add_argument("--synchronous", choices=("FULL", "NORMAL"), default="FULL")
    jb.add_argument("--db", help="a postgresql:// admin URL: benchmark PostgreSQL")
    ev = sub.add_parser("eval", help="evaluations on real data (JSON on stdout)")
    esub = ev.add_subparsers(dest="eval", required=True)
    ec = esub.add_parser("crowd", help="source reliability from agreement on crowd data sets")
    ec.add_argument("--data", default=None,
                    help="folder of data sets (default: $TRUTHKEEPER_DATA/crowd)")
    ec.add_argument("--json", action="store_true", help="print JSON (the only format)")
    ec.add_argument("--no-crowdkit", action="store_true", help="skip crowd-kit peers")
    ec.add_argument("--slow-peers", action="store_true",
                    help="also crowd-kit's GLAD, MACE and OneCoinDawidSkene (minutes)")
    ec.add_argument("--halves", action="store_true",
                    help="also each set cut in two at random, by items and by workers: data "
                         "of the same kind, nothing chosen on it (minutes)")
    eh = esub.add_parser("truth", help="truth discovery over open values: truthkeeper "
                         "against majority vote, TruthFinder and ACCU")
    eh.add_argument("--data", default=None,
                    help="folder of data sets (default: $TRUTHKEEPER_DATA/truth_discovery)")
    eh.add_argument("--json", action="store_true", help="print JSON (the only format)")
    ed = esub.add_parser("decide", help="decide()'s answers and probabilities through the "
                         "public API on the crowd sets, categorical and one-coin (minutes)")
    ed.add_argument("--data", default=None,
                    help="folder of data sets (default: $TRUTHKEEPER_DATA/crowd)")
    ed.add_argument("--seeds", type=_count, default=5, help="draws of the revealed items")
    ed.add_argument("--json", action="store_true", help="print JSON (the only format)")
    et = esub.add_parser("temporal", help="heads, as_of and history on PAT and SituatedQA")
    et.add_argument("--data", default=None,
                    help="folder with pat/ and situatedqa/ (default: $TRUTHKEEPER_DATA/temporal)")
    et.add_argument("--json", action="store_true", help="print JSON (the only format)")
    sl = bsub.add_parser("slot", help="write and read costs as one slot grows")
    sl.add_argument("--sizes", default="1000,10000,100000", type=_counts)
    sl.add_argument("--repeat", type=_count, default=5)
    sb = bsub.add_parser("shadowing", help="semantic shadowing vs Phi_T (seed 000), simulated")
    sb.add_argument("--entities", type=_count, default=200, help="entities per ratio (default 200)")
    sb.add_argument("--k", type=_count, default=10, help="retrieved items per query (default 10)")
    pb = bsub.add_parser("provenance", help="seed 003: depth, density and tier inversion")
    pb.add_argument("--n", type=_count, default=300, help="conflicts per experiment (default 300)")
    pb.add_argument("--plot", metavar="DIR", help="also write the figure as PNG into DIR")
    cb = bsub.add_parser("context", help="seed 002: context vs parametric answers, fixed "
                         "rules against a learned prior")
    cb.add_argument("--n", type=_count, default=300, help="questions per rho (default 300)")
    cb.add_argument("--plot", metavar="DIR", help="also write the figure as PNG into DIR")
    sc = bsub.add_parser("scale", help="durable ingest, reopen to the first answer and RSS "
                         "at 10k, 100k and 1M facts (minutes)")
    sc.add_argument("--sizes", default="10000,100000,1000000", type=_counts)
    sc.add_argument("--modes", default="lazy,full", help="reopen modes (default lazy,full)")
    sc.add_argument("--db", help="a PostgreSQL admin URL: measure PostgreSQL journals (a "
                    "database per size, dropped after) instead of SQLite files")
    sc.add_argument("--plot", metavar="DIR", help="also write the figure as PNG into DIR")
    sc.add_argument("--from", dest="from_json", metavar="FILE",
                    help="plot a saved run (its JSON) instead of running")
    wb = bsub.add_parser("writers", help="many processes writing single facts to one "
                         "journal: writes per second together, none lost")
    wb.add_argument("--processes", type=int, default=8)
    wb.add_argument("--seconds", type=float, default=10.0)
    wb.add_argument("--db", help="a PostgreSQL admin URL (a database is created and dropped "
                    "after); default a temporary SQLite file")
    fb = bsub.add_parser("fit", help="fit_reliability (SVI) on many sources: first call "
                         "and refits")
    fb.add_argument("--sources", type=_count, default=1000, help="sources (default 1000)")
    fb.add_argument("--repeat", type=_count, default=5, help="refits (default 5)")
    fb.add_argument("--nuts", action="store_true", help="also time one NUTS fit")
    ab = bsub.add_parser("agreement", help="learn_from_agreement on open values: two "
                         "synthetic workloads")
    ab.add_argument("--slots", type=_count, default=20_000,
                    help="slots of the multi-claim workload (default 20000; the agent-like "
                         "one has three times as many)")
    ab.add_argument("--repeat", type=_count, default=3, help="runs per workload (default 3)")
    ab.add_argument("--dependence", action="store_true",
                    help="also time learn_from_agreement(dependence=True)")
    pe = bsub.add_parser("peers", help="one seeded workload through truthkeeper, memvara and "
                         "veritas-tms side by side (needs the bench extra; minutes)")
    pe.add_argument("--subjects", type=_count, default=10_000, help="subjects (default 10000)")
    pe.add_argument("--veritas-subjects", type=_count, default=150,
                    help="subjects for veritas-tms, whose ingest is quadratic (default 150)")
    pe.add_argument("--rounds", type=_count, default=5, help="interleaved rounds (default 5)")
    tb = bsub.add_parser("shadowing-text", help="seed 000 with a BM25 retriever over text "
                         "chunks: strategies and readers")
    tb.add_argument("--entities", type=_count, default=200, help="projects (default 200)")
    tb.add_argument("--plot", metavar="DIR", help="also write the figures as PNG into DIR")
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except TruthkeeperError as exc:  # e.g. a benchmark's database cannot be reached
        print(f"truthkeeper {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # ``truthkeeper inspect m.db | head``: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 141  # as a shell reports a process ended by SIGPIPE


def _dispatch(args: argparse.Namespace) -> int:
    from .cli_memory import COMMANDS
    from .cli_memory import run as run_memory_command

    if args.command in COMMANDS:
        return run_memory_command(args)

    if args.command == "demo":
        from .demo import main as demo

        demo()
        return 0
    if args.command == "selftest":
        from .logic.bridge import run_plunit

        passed, failed = run_plunit()
        print(json.dumps({"passed": passed, "failed": failed}))
        return 1 if failed else 0
    if args.command == "check-policy":
        return _check_policy(args)
    if args.command == "bench" and args.bench == "perf":
        from .bench.perf import run

        print(json.dumps(run(n=args.n, repeat=args.repeat), indent=2))
        return 0
    if args.command == "bench" and args.bench == "journal":
        from .bench.journal import run as run_journal

        print(json.dumps(run_journal(n=args.n, repeat=args.repeat,
                                     synchronous=args.synchronous, db=args.db), indent=2))
        return 0
    if args.command == "bench" and args.bench == "slot":
        from .bench.slot import run as run_slot

        sizes = args.sizes
        print(json.dumps(run_slot(sizes=sizes, repeat=args.repeat), indent=2))
        return 0
    if args.command == "bench" and args.bench == "scale":
        return _scale_bench(args)
    if args.command == "bench" and args.bench == "writers":
        from .bench.writers import run as run_writers

        print(json.dumps(run_writers(processes=args.processes, seconds=args.seconds,
                                     db=args.db), indent=2))
        return 0
    if args.command == "bench" and args.bench == "fit":
        from .bench.fit import run as run_fit

        print(json.dumps(run_fit(sources=args.sources, repeat=args.repeat, nuts=args.nuts),
                         indent=2))
        return 0
    if args.command == "bench" and args.bench == "agreement":
        from .bench.agreement import run as run_agreement

        print(json.dumps(run_agreement(slots=args.slots, repeat=args.repeat,
                                       dependence=args.dependence), indent=2))
        return 0
    if args.command == "bench" and args.bench == "peers":
        from .bench.peers import run as run_peers

        try:
            result = run_peers(subjects=args.subjects, veritas_subjects=args.veritas_subjects,
                               rounds=args.rounds,
                               progress=lambda m: print(m, file=sys.stderr, flush=True))
        except TruthkeeperError as exc:
            print(f"truthkeeper bench peers: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(result, indent=2))
        return 0
    if args.command == "bench" and args.bench == "shadowing":
        from .bench.shadowing import run as run_shadowing

        print(json.dumps(run_shadowing(entities=args.entities, k=args.k), indent=2))
        return 0
    if args.command == "bench" and args.bench in ("provenance", "context", "shadowing-text"):
        return _seed_bench(args)
    if args.command == "eval":
        from .bench.samples import DataMissing, data_root

        folder = {"truth": "truth_discovery", "decide": "crowd"}.get(args.eval, args.eval)
        try:
            root = data_root(args.data, folder)
        except DataMissing as exc:
            print(f"truthkeeper eval {args.eval}: {exc}", file=sys.stderr)
            return 2
        if args.eval == "crowd":
            from .reliability.evaluate import evaluate_crowd

            result = evaluate_crowd(root, crowdkit=not args.no_crowdkit,
                                    slow_peers=args.slow_peers, halves_too=args.halves)
        elif args.eval == "decide":
            from .bench.calibration import evaluate_decide

            result = evaluate_decide(root, seeds=max(1, args.seeds))
        elif args.eval == "truth":
            from .bench.truth import evaluate_truth

            result = evaluate_truth(root)
        else:
            from .bench.temporal import evaluate_temporal

            result = evaluate_temporal(root)
        print(json.dumps(result, indent=2))
        return 0
    return 2  # pragma: no cover - argparse enforces the choices


if __name__ == "__main__":
    sys.exit(main())


def _seed_bench(args: argparse.Namespace) -> int:
    """The seed benchmarks: JSON on stdout, figures with ``--plot DIR``."""
    from .bench import figures

    if args.bench == "provenance":
        from .bench.provenance import run as run_provenance

        res = run_provenance(n=args.n)
        figs = {"seed003_provenance": figures.plot_provenance(res)} if args.plot else {}
    elif args.bench == "context":
        from .bench.context import run as run_context

        res = run_context(n=args.n)
        figs = {"seed002_context": figures.plot_context(res)} if args.plot else {}
    else:
        from .bench.shadowing_text import run as run_text

        res = run_text(entities=args.entities)
        figs = {f"seed000_shadowing_k{k}_buffer{b}": figures.plot_shadowing_text(res, k, b)
                for k in res["ks"] for b in res["buffers"]} if args.plot else {}
    for name, fig in figs.items():
        figures.save(fig, args.plot, name)
    print(json.dumps(res, indent=2))
    return 0


def _scale_bench(args: argparse.Namespace) -> int:
    """``bench scale``: run (or read a saved run with ``--from``), print it, and plot it
    with ``--plot DIR``."""
    if args.from_json:
        try:
            res = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
            ok = isinstance(res, dict) and res.get("benchmark") == "scale"
        except (OSError, ValueError):
            ok = False
        if not ok:
            print(f"truthkeeper bench scale: {args.from_json} is not a saved scale run",
                  file=sys.stderr)
            return 2
    else:
        from .bench.scale import run as run_scale

        res = run_scale(sizes=args.sizes,
                        modes=tuple(args.modes.split(",")), db=args.db)
    if args.plot:
        from .bench import figures

        figures.save(figures.plot_scale(res), args.plot, "bench_scale")
    print(json.dumps(res, indent=2))
    return 0


def _check_policy(args: argparse.Namespace) -> int:
    from .logic.policy import Policy
    from .testing import _describe, check_policy

    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
        keys = [k for k in args.meta_keys.split(",") if k]
        policy = Policy.from_prolog(args.name or path.stem, text, meta_keys=keys)
    except (OSError, UnicodeDecodeError, TruthkeeperError) as exc:
        print(f"truthkeeper check-policy: {exc}", file=sys.stderr)
        return 2
    report = check_policy(policy, max_examples=args.examples)
    if args.json:
        print(json.dumps({"policy": report.policy, "ok": report.ok, "invariants": [
            {"name": r.name, "ok": r.ok, "expected": r.expected, "description": r.description,
             "counterexample": None if r.ok else _describe(r.counterexample)}
            for r in report.results]}, indent=2))
    else:
        print(report)
    return 0 if report.ok else 1
