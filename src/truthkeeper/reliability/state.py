"""The reliability state of one memory: posteriors per source, priors, confirmed truths.

Events (outcomes, priors) are applied here; the facade journals them first. Probabilities
of a residual conflict, fits and learning from agreement read this state.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import InvalidFact, brief
from ..results import SourceReliability
from ..validation import check_discount
from ..values import value_key
from .book import ReliabilityBook
from .categorical import Confusion, fit_confusions
from .similarity import Similarity, kernel

__all__ = ["Reliability"]


MIN_OWN_CLAIMS = 100
"""An attribute with fewer claims to learn from takes the memory-wide correlation and number
of false values (learned from all the claims), rather than learn its own from a few
slots."""


def _own_groups(group: Any, item_idx: Any, n_attrs: int) -> Any:
    """Per item, the group of its attribute for :func:`.open_values.fit_open_claims`: when at least
    two attributes have :data:`MIN_OWN_CLAIMS` claims, each of them is a group of its own,
    and the items of the others have none (-1: they take what all the claims say); else
    every item -1."""
    import numpy as np

    big = np.bincount(group[item_idx], minlength=n_attrs) >= MIN_OWN_CLAIMS
    if big.sum() < 2:
        return np.full(len(group), -1)
    label = np.where(big, np.cumsum(big) - 1, -1)
    return label[group]


MAX_SAMPLES = 100_000
"""The most draws ``fit_reliability`` takes (more would hold the process for hours)."""


class Reliability:
    """Per-source posteriors (conjugate between fits) and the truths confirmed by outcomes.

    Outcomes recorded in a scope's view (their body names the ``scope``) stay in it: the
    shared book learns from the shared outcomes only, and a scope's book
    (:meth:`book_for`) is the shared one with the scope's own outcomes added.

    Parameters
    ----------
    tiers
        Tier names, most authoritative first: the store's order (``Store.tiers``).
    discount
        Geometric decay of old evidence per new outcome (1.0: none).
    """

    def __init__(self, tiers: tuple[str, ...], discount: float = 1.0) -> None:
        self.tiers = tiers
        self.book = ReliabilityBook(tiers, discount=check_discount(discount))
        self.version = 0
        self.confirmed: dict[tuple[str, str], str] = {}  # slot -> id of a fact confirmed right
        self.scoped: dict[str, list[Mapping[str, Any]]] = {}  # a scope's own outcomes
        self._books: dict[str, tuple[int, ReliabilityBook]] = {}

    def apply_outcome(self, body: Mapping[str, Any], slot: tuple[str, str] | None) -> None:
        """An outcome event: ``slot`` is the fact's slot when it names one."""
        if body.get("scope") is not None:
            self.scoped.setdefault(body["scope"], []).append(body)
        else:
            _record(self.book, body)
        if slot is not None and body["correct"]:
            self.confirmed[slot] = body["id"]
        self.version += 1

    def book_for(self, scope: str | None) -> ReliabilityBook:
        """The book a view of ``scope`` reads: the shared one, plus the scope's outcomes."""
        own = self.scoped.get(scope) if scope is not None else None
        if not own:
            return self.book
        hit = self._books.get(scope)  # type: ignore[arg-type]
        if hit is None or hit[0] != self.version:
            book = copy.deepcopy(self.book)
            for body in own:
                _record(book, body)
            hit = self._books[scope] = (self.version, book)  # type: ignore[index]
        return hit[1]

    def forget_facts(self, ids: Sequence[str]) -> None:
        """Erased facts: a slot confirmed by one of them is no longer held as confirmed
        (its names go with it)."""
        gone = set(ids)
        self.confirmed = {s: i for s, i in self.confirmed.items() if i not in gone}

    def forget_scope(self, scope: str) -> None:
        """An erased scope's outcomes go with it."""
        self.scoped.pop(scope, None)
        self._books.pop(scope, None)
        self.version += 1

    def apply_prior(self, body: Mapping[str, Any]) -> None:
        """A prior event: refitted tier hyperparameters, per-source prior means, what was
        learned from agreement, or the categorical attributes declared."""
        if "tier_prior" in body:
            self.book.set_tier_prior({t: (v[0], v[1]) for t, v in body["tier_prior"].items()})
        for src, mu in body.get("source_prior", {}).items():
            self.book.source_prior[src] = min(max(float(mu), 1e-3), 1 - 1e-3)
        if "correlation" in body:
            self.book.correlation = min(max(float(body["correlation"]), 0.0), 1.0)
        if "false_values" in body:  # learned from agreement: per attribute, or none
            self.book.false_values = max(float(body["false_values"]), 1.0)
            self.book.open_values = {
                a: (min(max(float(r), 0.0), 1.0), max(float(n), 1.0))
                for a, (r, n) in body.get("open_values", {}).items()}
        for attr, cats in body.get("categories", {}).items():  # the latest declaration wins
            if not cats:  # removed: the attribute takes open values again
                for table in (self.book.category_values, self.book.categories,
                              self.book.confusion):
                    table.pop(attr, None)
                continue
            self.book.category_values[attr] = tuple(cats)
            self.book.categories[attr] = tuple(value_key(c) for c in cats)
        for attr, c in body.get("confusion", {}).items():
            self.book.confusion[attr] = Confusion.from_body(c)
        if "dependence" in body:  # the latest estimate replaces the previous one
            self.book.dependence = {(min(s, t), max(s, t)): min(max(float(p), 0.0), 1.0)
                                    for s, t, p in body["dependence"]}
        self.version += 1

    def summaries(self, fact_sources: Iterable[tuple[str, str]],
                  scope: str | None = None) -> list[SourceReliability]:
        """Mean, 90% interval, outcomes and tier of every source (of ``fact_sources``, or
        with an outcome in ``scope``'s book), sorted by name."""
        book = self.book_for(scope)
        names = dict(fact_sources)
        names.update({s: st.tier for s, st in book.sources.items()})
        out = []
        for src in sorted(names):
            tier = names[src]
            lo, hi = book.interval(src, tier)
            st = book.sources.get(src)
            out.append(SourceReliability(src, st.tier if st else tier, book.mean(src, tier),
                                         lo, hi, st.n if st else 0))
        return out

    def fit(self, method: str, rng_seed: int, num_samples: int) -> dict[str, Any]:
        """Refit the tier hyperparameters; returns the prior event body to journal."""
        if method not in ("nuts", "svi"):
            msg = f"method must be 'nuts' or 'svi', got {brief(method)}"
            raise InvalidFact(msg)
        for name, value, high in (("num_samples", num_samples, MAX_SAMPLES),
                                  ("rng_seed", rng_seed, 2**32 - 1)):
            low = 1 if name == "num_samples" else 0
            if type(value) is not int or not low <= value <= high:
                msg = f"{name} must be an integer from {low} to {high:,}, got {brief(value)}"
                raise InvalidFact(msg)
        import jax
        import numpy as np

        from .inference import fit_tiers_svi, run_nuts
        from .models import hierarchical_reliability

        data = self.book.fit_data()
        if not data["names"]:
            msg = "no outcomes recorded yet: nothing to fit"
            raise InvalidFact(msg)
        key = jax.random.key(rng_seed)
        args = {"tier": data["tier"], "trials": data["trials"], "successes": data["successes"],
                "n_tiers": len(self.tiers)}
        if method == "nuts":
            post = run_nuts(hierarchical_reliability, rng_key=key, num_warmup=num_samples,
                            num_samples=num_samples, **args)
        else:
            post = fit_tiers_svi(data["tier"], data["trials"], data["successes"],
                                 n_tiers=len(self.tiers), rng_seed=rng_seed,
                                 num_samples=num_samples)
        mu = np.asarray(post["tier_mean"]).mean(axis=0)
        k = np.asarray(post["tier_concentration"]).mean(axis=0)
        if not (np.isfinite(mu).all() and np.isfinite(k).all()):  # never journalled
            msg = f"the {method} fit did not converge (a prior is not finite); try more samples"
            raise InvalidFact(msg)
        return {"tier_prior": {t: [float(mu[i]), float(k[i])] for i, t in enumerate(self.tiers)},
                "method": method}

    def check_values(self, facts: Iterable[Any]) -> None:
        """:meth:`check_value` of each fact."""
        for f in facts:
            self.check_value(f.attribute, f.value)

    def check_value(self, attribute: str, value: Any) -> None:
        """Refuse a value outside its categorical attribute's categories."""
        cats = self.book.categories.get(attribute)
        if cats is not None and value_key(value) not in cats:
            shown = ", ".join(map(str, self.book.category_values[attribute]))
            msg = f"{brief(value)} is not one of the categories of {attribute!r}: {shown}"
            raise InvalidFact(msg)

    def learn(self, items: Sequence[tuple[list[str], list[int], int, int, list[Any], str]],
              similarity: Similarity | None, dependence: bool, correlation: bool,
              ) -> tuple[dict[str, float], dict[str, Any]]:
        """:meth:`from_agreement`'s estimates and the prior event body that journals them."""
        est, pairs, rho, n_false, by_attr, confusion = self.from_agreement(
            items, similarity, dependence, correlation)
        return est, ({"source_prior": est, "correlation": rho, "false_values": n_false}
                     | ({"open_values": by_attr} if by_attr else {})
                     | ({"dependence": pairs} if dependence else {})
                     | ({"confusion": confusion} if confusion else {}))

    def from_agreement(self, items: Sequence[tuple[list[str], list[int], int, int, list[Any],
                                                  str]],
                       similarity: Similarity | None = None, dependence: bool = False,
                       correlation: bool = True,
                       ) -> tuple[dict[str, float], list[list[Any]], float, float,
                                  dict[str, list[float]], dict[str, Any]]:
        """Each source's accuracy from how it agrees with the others (one-coin Dawid-Skene
        over open values, near-equal values supporting each other under ``similarity``),
        with ``dependence`` the pairs of sources that copy each other
        ``[source, source, P(dependent)]`` (the fit and the domain of false values are then
        redone with copies counting less), and with ``correlation`` (unless
        ``dependence``) the intra-item correlation of claims (else 0), both with the size
        of the domain of false values (:func:`.open_values.fit_open_claims`; 1: the other claimed
        values); ``items`` as
        ``Store.claims`` gives them; a slot with a single claim, unconfirmed, says nothing
        about its source and is left out (it read as a free success: a source whose facts
        nobody else states came out as reliable as agreement allows). Last, the confusion
        rows of the categorical attributes (:func:`.categorical.fit_confusions`)."""
        import numpy as np

        from .dependence import independence_weights, source_dependence
        from .open_values import fit_open_claims, vb_one_coin_open

        sources: dict[str, int] = {}
        ii: list[int] = []
        ww: list[int] = []
        cc: list[int] = []
        nc: list[int] = []
        gold: dict[int, int] = {}
        kernels: dict[int, Any] = {}
        attrs: dict[str, int] = {}
        group: list[int] = []
        for srcs, idx, n, g, values, attr in items:
            if len(srcs) < 2 and g < 0:  # one unconfirmed claim: no agreement to learn from
                continue
            item = len(nc)
            k = kernel(similarity, values)
            if k is not None:
                kernels[item] = k
            for src, c in zip(srcs, idx, strict=True):
                ii.append(item)
                ww.append(sources.setdefault(src, len(sources)))
                cc.append(c)
            nc.append(n)
            group.append(attrs.setdefault(attr, len(attrs)))
            if g >= 0:
                gold[item] = g
        if not sources:
            return {}, [], 0.0, 1.0, {}, {}
        args = (np.array(ii), np.array(ww), np.array(cc), np.array(nc))
        groups = _own_groups(np.array(group), args[0], len(attrs))
        # with dependence, copies already count less: rho would count that correlation again
        cor = correlation and not dependence
        acc, rho, n_false = fit_open_claims(*args, len(sources), gold=gold, kernels=kernels,
                                            correlation=cor, groups=groups)
        pairs: list[list[Any]] = []
        if dependence:  # ACCU's iteration: equal accuracies first, then the fitted ones
            dep: dict[tuple[int, int], float] = {}
            per_item = n_false[groups]  # an item without a group: -1, all the claims' N
            for equal in (True, False):
                dep = source_dependence(*args, np.full(len(acc), acc.mean()) if equal else acc,
                                        false_values=per_item)
                weights = independence_weights(args[1], args[0], args[2], dep)
                if equal:  # the accuracies of the fit that discounts the copies found
                    acc, _ = vb_one_coin_open(*args, len(sources), gold=gold, kernels=kernels,
                                              weights=weights, false_values=per_item)
            # the accuracies and the domain again, copies counting less: copied errors are
            # not common ones
            acc, _, n_false = fit_open_claims(*args, len(sources), gold=gold, kernels=kernels,
                                              correlation=False, weights=weights,
                                              groups=groups)
            names = {j: src for src, j in sources.items()}
            pairs = [[names[a], names[b], p] for (a, b), p in sorted(dep.items())
                     if p >= 0.05]
        confusion = fit_confusions(items, self.book.categories)
        # the memory-wide values are those of all the claims (the last entry)
        label = np.full(len(attrs), -1)
        label[np.array(group)] = groups  # every item of an attribute has its group
        by_attr = {a: [float(rho[label[j]]), float(n_false[label[j]])]
                   for a, j in attrs.items() if label[j] >= 0}
        return ({src: float(acc[j]) for src, j in sources.items()}, pairs, float(rho[-1]),
                float(n_false[-1]), by_attr, confusion)


def _record(book: ReliabilityBook, body: Mapping[str, Any]) -> None:
    book.record(body["source"], body["tier"], bool(body["correct"]))
    if body.get("confidence") is not None:
        book.record_stated(body["source"], body["confidence"], bool(body["correct"]))
