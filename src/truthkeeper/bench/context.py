"""``truthkeeper bench context``: retrieved context against the model's own answer (seed 002,
"Don't Pick a Winner: knowledge conflicts need a prior, not a rule").

A stream of questions. The retrieved context is right with rate ``rho`` (fixed, or drifting
over the stream); the model answers from its weights with a stated confidence ``c`` drawn
uniformly from [0.3, 1] and is right with probability ``c`` (a calibrated model). A wrong
context and a wrong model never agree. Strategies, when the two disagree:

- ``always_context``, ``always_model``, ``context_unless_confident`` (the model when
  ``c >= 0.8``): fixed rules;
- ``truthkeeper``: ``Memory.resolve_context`` (told the answers are open-ended,
  ``alternatives=OPEN_ANSWERS``) with the context source's running reliability as its
  prior, learned from the outcome recorded after each question (``record_source_outcome``
  for the context's source and for ``model:parametric``);
  ``truthkeeper_discounted`` is the same with ``Memory(discount=0.97)`` (old evidence fades);
- ``best``: the best attainable, which knows ``rho`` and ``c``: the context when
  ``rho (1 - c) >= (1 - rho) c``.

Accuracy counts a question right when the chosen answer is the truth (agreement included);
regret is ``best - strategy``. Calibration: the probability ``resolve_context`` gives its
answer against whether it was right (ECE over 10 equal-width and 15 equal-mass bins, Brier),
over every question and over those where the two answers differ; ``best``'s probability is
the exact posterior, for reference. The seed's claim: a fixed rule's accuracy is linear in
``rho`` and below the convex best everywhere but where it is exactly optimal; a prior that
tracks ``rho`` stays near the best.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ..memory import Memory
from ..results import Utility

__all__ = ["CALIBRATED", "OPEN_ANSWERS", "STRATEGIES", "calibration", "run", "stream"]

STRATEGIES = ("always_context", "always_model", "context_unless_confident", "truthkeeper",
              "truthkeeper_discounted", "best")
CALIBRATED = ("truthkeeper", "truthkeeper_discounted", "best")
OPEN_ANSWERS = 10**9
"""``alternatives`` for the stream's questions: open-ended, two wrong answers never agree."""
"""The strategies whose probabilities are scored (``best``: the exact posterior)."""
_NEVER_ABSTAIN = Utility(correct=1.0, wrong=0.0, abstain=-1.0)
CONTEXT_SOURCE = "retriever:kb"


def _questions(rhos: list[float], rng: random.Random) -> list[tuple[float, float, bool, bool]]:
    """(rho, c, context right, model right) for each question."""
    out = []
    for rho in rhos:
        c = rng.uniform(0.3, 1.0)
        out.append((rho, c, rng.random() < rho, rng.random() < c))
    return out


def stream(rhos: list[float], *, seed: int = 0,
           ) -> tuple[dict[str, list[int]], dict[str, list[tuple[float, bool]]]]:
    """Per strategy, 1/0 per question (right or not), over a stream with these rhos; and for
    ``truthkeeper``, ``truthkeeper_discounted`` and ``best``, the probability given to the
    answer and whether the two answers differed, per question."""
    rng = random.Random(seed)
    qs = _questions(rhos, rng)
    hits: dict[str, list[int]] = {s: [] for s in STRATEGIES}
    probs: dict[str, list[tuple[float, bool]]] = {s: [] for s in CALIBRATED}
    mems = {"truthkeeper": Memory(), "truthkeeper_discounted": Memory(discount=0.97)}
    rules: dict[str, Callable[[float, float], bool]] = {  # True: answer with the context
        "always_context": lambda rho, c: True,
        "always_model": lambda rho, c: False,
        "context_unless_confident": lambda rho, c: c < 0.8,
        "best": lambda rho, c: rho * (1 - c) >= (1 - rho) * c,
    }
    try:
        for i, (rho, c, ctx_ok, model_ok) in enumerate(qs):
            ctx = "truth" if ctx_ok else "context-error"
            model = "truth" if model_ok else "model-error"
            for name, rule in rules.items():
                answer = ctx if ctx == model or rule(rho, c) else model
                hits[name].append(int(answer == "truth"))
            # P(context right | they differ), P(model right | ...): or both are wrong
            z = rho * (1 - c) + (1 - rho) * c + (1 - rho) * (1 - c)
            post = max(rho * (1 - c), (1 - rho) * c) / z
            probs["best"].append((1.0 if ctx == model else post, ctx != model))
            for name, mem in mems.items():
                d = mem.resolve_context(question=f"q{i}", context_value=ctx,
                                        context_source=CONTEXT_SOURCE, parametric_value=model,
                                        parametric_confidence=c, utility=_NEVER_ABSTAIN,
                                        alternatives=OPEN_ANSWERS)
                hits[name].append(int(d.value == "truth"))
                probs[name].append((d.p, ctx != model))
                mem.record_source_outcome(CONTEXT_SOURCE, correct=ctx_ok, tier="unverified")
                mem.record_source_outcome("model:parametric", correct=model_ok,
                                          confidence=c)
    finally:
        for mem in mems.values():
            mem.close()
    return hits, probs


def calibration(hits: list[int], probs: list[tuple[float, bool]]) -> dict[str, Any]:
    """ECE (10 equal-width, 15 equal-mass bins) and Brier of the probabilities, over every
    question and over those where the context and the model differ."""
    from ..reliability.calibration import brier, ece

    out: dict[str, Any] = {}
    for part, keep in (("all", lambda d: True), ("differ", lambda d: d)):
        rows = [(p, bool(h)) for h, (p, d) in zip(hits, probs, strict=True) if keep(d)]
        p, ok = [r[0] for r in rows], [r[1] for r in rows]
        out[part] = {"questions": len(rows), "accuracy": sum(ok) / max(len(ok), 1),
                     "mean_p": sum(p) / max(len(p), 1), "ece": ece(p, ok),
                     "ece_mass15": ece(p, ok, bins=15, equal_mass=True), "brier": brier(p, ok)}
    return out


def run(*, n: int = 300, steps: int = 11, seed: int = 0) -> dict[str, Any]:
    """Accuracy and regret per strategy for fixed rho in [0, 1] (``steps`` values, ``n``
    questions each), and over a stream of ``2 n`` questions whose rho drifts from 0.9 to 0.1."""
    fixed: dict[str, dict[str, float]] = {}
    pooled: dict[str, tuple[list[int], list[tuple[float, bool]]]] = {
        s: ([], []) for s in CALIBRATED}
    for k in range(steps):
        rho = k / (steps - 1)
        hits, probs = stream([rho] * n, seed=seed + k)
        fixed[f"{rho:.2f}"] = {s: sum(h) / n for s, h in hits.items()}
        for s in CALIBRATED:
            pooled[s][0].extend(hits[s])
            pooled[s][1].extend(probs[s])
    drift_rhos = [0.9 - 0.8 * i / (2 * n - 1) for i in range(2 * n)]
    drift, drift_probs = stream(drift_rhos, seed=seed + 1000)
    window = max(n // 5, 1)
    curves = {s: [sum(h[max(0, i - window + 1):i + 1]) / len(h[max(0, i - window + 1):i + 1])
                  for i in range(len(h))] for s, h in drift.items()}
    return {
        "questions_per_rho": n,
        "fixed_rho": fixed,
        "regret": {r: {s: round(v["best"] - v[s], 4) for s in STRATEGIES}
                   for r, v in fixed.items()},
        "mean_regret": {s: round(sum(v["best"] - v[s] for v in fixed.values()) / len(fixed),
                                 4) for s in STRATEGIES},
        "drift": {"rho_from": 0.9, "rho_to": 0.1, "questions": 2 * n,
                  "accuracy": {s: sum(h) / len(h) for s, h in drift.items()},
                  "window": window, "rho": drift_rhos, "running_accuracy": curves},
        "calibration": {"fixed_rho": {s: calibration(*pooled[s]) for s in CALIBRATED},
                        "drift": {s: calibration(drift[s], drift_probs[s])
                                  for s in CALIBRATED}},
        "strategies": {
            "always_context": "fixed rule: follow the retrieved context",
            "always_model": "fixed rule: trust the model's own answer",
            "context_unless_confident": "fixed rule: the model when its confidence >= 0.8",
            "truthkeeper": "resolve_context with the context source's learned reliability",
            "truthkeeper_discounted": "the same, Memory(discount=0.97)",
            "best": "knows rho and c (the best attainable)"},
    }
