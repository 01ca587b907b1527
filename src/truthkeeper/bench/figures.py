"""Figures of the seed benchmarks (matplotlib, written as PNG): ``--plot DIR`` and the
notebooks call these with the JSON the benchmarks return. Each figure marks the seed's own
number next to ours where the seed gives one.

Needs matplotlib (the ``notebooks`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_context", "plot_provenance", "plot_reliability_diagram", "plot_scale",
           "plot_shadowing_text", "save"]


def _plt() -> Any:
    import matplotlib.pyplot as plt  # headless: matplotlib falls back to Agg by itself

    return plt


def save(fig: Any, directory: str | Path | None, name: str) -> Path | None:
    """Write ``fig`` as ``DIR/name.png`` (when a directory is given)."""
    if directory is None:
        return None
    path = Path(directory) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def plot_shadowing_text(res: dict[str, Any], k: int = 10, buffer: int = 0) -> Any:
    """Seed 000: current chunks retrieved against kM/(N+M), and the readers' accuracy."""
    plt = _plt()
    ratios = list(res["ratios"])
    rows = [res["ratios"][r][f"buffer_{buffer}"][str(k)] for r in ratios]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    ax = axes[0]
    ax.plot(ratios, [r["theory_current"] for r in rows], "k--", label="theory kM/(N+M)")
    for s in ("standard", "timestamp_rerank", "multi_factor"):
        ax.plot(ratios, [r[s]["current_retrieved"] for r in rows], "o-", label=s)
    ax.set(title=f"current chunks in the top {k} (BM25)", xlabel="N:M", ylabel="mean count")
    ax.legend(fontsize=8)
    for ax, reader in zip(axes[1:], ("majority", "newest"), strict=True):
        for s in ("standard", "timestamp_rerank", "multi_factor", "phi_t", "truthkeeper"):
            ax.plot(ratios, [r[s][f"{reader}_accuracy"] for r in rows], "o-", label=s)
        ax.set(title=f"{reader} reader accuracy (k={k}, buffer={buffer})", xlabel="N:M",
               ylim=(-0.05, 1.05))
        ax.legend(fontsize=8)
    axes[1].axhline(0.105, color="grey", ls=":", lw=1)
    axes[1].annotate("seed: multi-factor with usage 10.5%", (0, 0.12), fontsize=8,
                     color="grey")
    fig.suptitle("Semantic shadowing (seed 000): recall decays as kM/(N+M); the majority "
                 "reader falls into the trap")
    return fig


def plot_scale(res: dict[str, Any]) -> Any:
    """``bench scale``: time to the first answer and RSS against the journal's size, for
    each reopen mode, with issue 15's targets."""
    plt = _plt()
    sizes = sorted(res["sizes"], key=int)
    n = [int(s) for s in sizes]
    modes = [m for m in ("lazy", "full") if any(m in res["sizes"][s] for s in sizes)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for m in modes:
        got = [s for s in sizes if m in res["sizes"][s]]
        x = [int(s) for s in got]
        rows = [res["sizes"][s][m] for s in got]
        axes[0].plot(x, [r["first_answer_s"] for r in rows], "o-", label=f"{m} open")
        axes[1].plot(x, [r["rss_after_reads_mb"] for r in rows], "o-",
                     label=f"{m}: after open + 10k reads")
        if "rss_all_loaded_mb" in rows[0]:
            axes[1].plot(x, [r["rss_all_loaded_mb"] for r in rows], "s--",
                         label=f"{m}: every slot read")
        axes[2].plot(x, [r["reads_10k_s"] for r in rows], "o-", label=f"{m}: 10k random reads")
    axes[0].axhline(0.1, color="grey", ls=":", lw=1, label="target 0.1 s")
    axes[0].set(title="open to the first answer", xlabel="facts", ylabel="seconds",
                xscale="log", yscale="log")
    axes[1].set(title="RSS", xlabel="facts", ylabel="MB", xscale="log", yscale="log")
    axes[1].axhline(1536, color="grey", ls=":", lw=1, label="target 1.5 GB, all touched")
    axes[2].plot(n, [res["sizes"][s]["ingest_facts_per_s"] / 1000 for s in sizes], "k^-",
                 label="durable ingest (k facts/s)")
    axes[2].set(title="reads (s) and ingest (k facts/s)", xlabel="facts", xscale="log")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle("bench scale: a lazy open answers in milliseconds at any size")
    return fig


def plot_context(res: dict[str, Any]) -> Any:
    """Seed 002: accuracy against rho for the fixed rules, truthkeeper and the best, and
    the running accuracy under drift."""
    plt = _plt()
    rhos = [float(r) for r in res["fixed_rho"]]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    names = list(res["strategies"])
    for s in names:
        style = "k--" if s == "best" else "o-"
        axes[0].plot(rhos, [v[s] for v in res["fixed_rho"].values()], style, label=s, ms=3)
        axes[1].plot(rhos, [v[s] for v in res["regret"].values()], style, label=s, ms=3)
    axes[0].set(title="accuracy: fixed rules are linear in rho", xlabel="rho (share of "
                "right contexts)", ylabel="accuracy")
    axes[1].set(title="regret against the best attainable", xlabel="rho")
    axes[0].legend(fontsize=7)
    drift = res["drift"]
    x = range(len(drift["rho"]))
    for s in names:
        style = "k--" if s == "best" else "-"
        axes[2].plot(x, drift["running_accuracy"][s], style, label=s, lw=1)
    axes[2].plot(x, drift["rho"], color="grey", ls=":", label="rho")
    axes[2].set(title=f"drift: rho {drift['rho_from']} -> {drift['rho_to']} (window "
                f"{drift['window']})", xlabel="question", ylim=(0, 1.05))
    fig.suptitle("Context against parametric answers (seed 002): a prior, not a rule")
    return fig


def plot_provenance(res: dict[str, Any]) -> Any:
    """Seed 003: depth, density, tier inversion, and learning curves at 20% inversion."""
    plt = _plt()
    fig, axes = plt.subplots(1, 4, figsize=(19, 4))
    label = {"temporal": "flat (recency)", "authority_first": "provenance",
             "temporal_within_authority": "truthkeeper + decide", "random": "random (1/d)"}
    depths = list(res["depth"])
    for p in ("temporal", "authority_first", "temporal_within_authority", "random"):
        axes[0].plot([int(d) for d in depths], [res["depth"][d][p] for d in depths], "o-",
                     label=label[p])
    axes[0].set(title="depth: seed flat 0, random 1/d, provenance 1", xlabel="conflict depth",
                ylim=(-0.05, 1.05))
    axes[0].legend(fontsize=7)
    rhos = list(res["density"])
    for p in ("temporal", "authority_first", "temporal_within_authority"):
        axes[1].plot([float(r) for r in rhos], [res["density"][r][p] for r in rhos], "o-",
                     label=label[p])
    axes[1].plot([0, 1], [1, 0], "k:", lw=1, label="seed: flat = 1 - rho")
    axes[1].set(title="density", xlabel="rho (share of conflicted slots)", ylim=(-0.05, 1.05))
    axes[1].legend(fontsize=7)
    sweep = res.get("inversion_sweep") or {}
    if sweep:
        rates = list(sweep)
        for p in ("temporal", "authority_first", "temporal_within_authority"):
            axes[2].plot([float(r) for r in rates], [sweep[r][p]["accuracy"] for r in rates],
                         "o-", label=label[p])
        axes[2].plot([0.2], [0.817], "r*", ms=12, label="seed: provenance at 20%: 81.7%")
        axes[2].set(title="tier inversion, over 10 human sources", xlabel="inverted share",
                    ylim=(-0.05, 1.05))
        axes[2].legend(fontsize=7)
        curves = sweep.get("0.2", {})
        for p in ("temporal", "authority_first", "temporal_within_authority"):
            if p in curves:
                axes[3].plot(range(1, len(curves[p]["curve"]) + 1), curves[p]["curve"], "o-",
                             label=label[p])
        axes[3].set(title="learning curve at 20% inversion", xlabel="tenth of the stream",
                    ylim=(-0.05, 1.05))
        axes[3].legend(fontsize=7)
    fig.suptitle("Provenance (seed 003)")
    return fig


def plot_reliability_diagram(curves: dict[str, list[dict[str, float]]], title: str) -> Any:
    """Reliability diagrams: ``{label: reliability_diagram(...)}`` on one axis."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], "k:", lw=1, label="calibrated")
    for name, bins in curves.items():
        pts = [b for b in bins if b.get("count", 0) > 0]
        ax.plot([b["confidence"] for b in pts], [b["accuracy"] for b in pts], "o-",
                label=name)
    ax.set(title=title, xlabel="stated probability", ylabel="observed frequency",
           xlim=(0, 1), ylim=(0, 1))
    ax.legend(fontsize=8)
    return fig
