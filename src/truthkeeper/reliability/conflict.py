"""P(value is the truth) for the candidate values of a residual conflict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..values import Resolution, ValueSupport, value_key
from .book import ReliabilityBook, false_domain
from .categorical import category_probabilities
from .similarity import Similarity, kernel, log_likelihood

__all__ = ["category_options", "claim_probabilities", "claims_of", "score_candidates"]


def claim_probabilities(book: ReliabilityBook,
                        claims: Sequence[tuple[Any, Sequence[tuple[str, str]]]], *,
                        rng_seed: int = 0, draws: int = 400,
                        similarity: Similarity | None = None, attribute: str | None = None,
                        ) -> list[tuple[float, tuple[float, float]]]:
    """P(value is the truth) for each claimed value, with a 90% interval.

    A single-truth one-coin model: each supporting source says the truth with probability
    theta_s, else one of n false values, n = max(m - 1, 1, N) for m
    claimed values (:func:`.book.false_domain`); the truth is one of the m claimed values or
    of the n + 1 - m nobody claimed, which compete too (with one claimed value and n = 1:
    an implicit "something else"). theta is drawn from each source's posterior (its tier
    prior when it has no outcomes) and the result averaged over ``draws``. The n sources'
    claims count as n / (1 + (n - 1) rho) independent ones, rho the correlation of claims
    learned from agreement (0 until learned). rho and N are the attribute's
    (``book.correlation_of``, ``book.false_values_of``).

    Parameters
    ----------
    book
        The reliability posteriors.
    claims
        ``(value, [(source, tier), ...])`` per candidate value.
    rng_seed
        Seed of the posterior draws (the same seed gives the same answer).
    similarity
        Near-equal values support each other (:mod:`.similarity`); None: the plain model.
    attribute
        The slot's attribute: when it is categorical (``book.categories``) and every
        claimed value is one of its categories, each source's confusion row decides
        (:mod:`.categorical`), tempered by the correlation learned for that attribute.
    """
    import numpy as np

    keys = [value_key(v) for v, _ in claims]
    cat = category_result(book, claims, attribute, rng_seed, draws)
    if cat is not None:
        post, cats = cat
        return _summary(post[:, [cats.index(key) for key in keys]])
    rng, srcs, theta, pairs = _draws(book, claims, rng_seed, draws)
    k = kernel(similarity, keys)
    # correlated claims: n of them count as n / (1 + (n - 1) rho) independent ones
    omega_scale = 1.0 / (1.0 + (len(srcs) - 1) * book.correlation_of(attribute))
    if k is not None:
        by_src = pairs[np.lexsort((pairs[:, 0], pairs[:, 1]))]  # per source, its values
        ll = log_likelihood(theta[:, by_src[:, 1]], k, by_src[:, 0])  # (draws, claims, m)
        w = _independence(book, srcs, pairs)[by_src[:, 1]] * omega_scale
        score = (ll * w[None, :, None]).sum(axis=1)
    else:
        omega = _independence(book, srcs, pairs) * omega_scale  # every source claims
        n_false = float(false_domain(len(claims), book.false_values_of(attribute)))
        log_t, log_f = np.log(theta), np.log((1.0 - theta) / n_false)
        # score[d, v] = sum_s support[v,s] log theta + (1 - support[v,s]) log off: every
        # source's log off, and each claim's log theta - log off added to its value's
        # column (a sum over the claims: a product with a dense values x sources support
        # matrix was 0.3 s, and 32 MB, for a tie of 2,000 values)
        vs, ss = pairs[:, 0], pairs[:, 1]
        gain = (log_t[:, ss] - log_f[:, ss]) * omega[ss]
        score = np.repeat((log_f @ omega)[:, None], len(claims), axis=1)
        np.add.at(score.T, vs, gain.T)  # score.T is a view: each claim to its value
        if n_false + 1 > len(claims):  # the truth may be one of the values nobody claimed
            unclaimed = np.log(n_false + 1 - len(claims)) + log_f @ omega
            score = np.concatenate([score, unclaimed[:, None]], axis=1)
    score -= score.max(axis=1, keepdims=True)
    p = np.exp(score)
    p /= p.sum(axis=1, keepdims=True)
    return _summary(p[:, :len(claims)])


def category_options(book: ReliabilityBook,
                     claims: Sequence[tuple[Any, Sequence[tuple[str, str]]]], attribute: str,
                     *, rng_seed: int = 0, draws: int = 400,
                     ) -> list[tuple[Any, float, tuple[float, float]]] | None:
    """Every category of a categorical slot, claimed or not, with P(it is the value that
    would be confirmed) and its 90% interval, as :func:`claim_probabilities` computes them
    (the claimed ones under their claimed value); None when the slot is not categorical or
    holds a value outside its categories."""
    cat = category_result(book, claims, attribute, rng_seed, draws)
    if cat is None:
        return None
    post, cats = cat
    shown = dict(zip(cats, book.category_values[attribute], strict=True))
    shown.update({value_key(v): v for v, _ in claims})
    return [(shown[c], p, iv) for c, (p, iv) in zip(cats, _summary(post), strict=True)]


def _draws(book: ReliabilityBook, claims: Sequence[tuple[Any, Sequence[tuple[str, str]]]],
           rng_seed: int, draws: int) -> tuple[Any, list[tuple[str, str]], Any, Any]:
    """The generator, the claiming sources, their reliability draws (draws, sources) and
    the claims, (value, source) index pairs sorted by value then source."""
    import numpy as np

    rng = np.random.default_rng(rng_seed)
    srcs = sorted({s for _, ss in claims for s in ss})
    ab = np.array([book.params(s, t) for s, t in srcs]).reshape(-1, 2)
    theta = np.clip(rng.beta(ab[:, 0], ab[:, 1], size=(draws, len(srcs))), 1e-9, 1 - 1e-9)
    idx = {s: i for i, s in enumerate(srcs)}
    pairs = np.array(sorted({(v, idx[s]) for v, (_, ss) in enumerate(claims) for s in ss}),
                     dtype=int).reshape(-1, 2)
    return rng, srcs, theta, pairs


def category_result(book: ReliabilityBook,
                    claims: Sequence[tuple[Any, Sequence[tuple[str, str]]]],
                    attribute: str | None, rng_seed: int,
                    draws: int) -> tuple[Any, tuple[Any, ...]] | None:
    """:func:`_category_posterior` from the slot's draws, or the book's last result when
    it was computed from the same claims, seed, reliabilities, confusion and dependence
    (the confusion and the dependence are replaced, never changed, when learned)."""
    cats = book.categories.get(attribute or "")
    if attribute is None or cats is None or any(value_key(v) not in cats for v, _ in claims):
        return None
    srcs = sorted({s for _, ss in claims for s in ss})
    key = (attribute, cats, rng_seed, draws,
           tuple((value_key(v), tuple(ss)) for v, ss in claims),
           tuple(book.params(s, t) for s, t in srcs))
    conf, dependence = book.confusion.get(attribute), book.dependence
    last = book.last_categorical
    if last is not None and last[0] == key and last[1] is conf and last[2] is dependence:
        result: tuple[Any, tuple[Any, ...]] | None = last[3]
        return result
    rng, srcs, theta, pairs = _draws(book, claims, rng_seed, draws)
    result = _category_posterior(book, claims, cats, conf, rng, srcs, theta, pairs)
    book.last_categorical = (key, conf, dependence, result)
    return result


def _category_posterior(book: ReliabilityBook,
                        claims: Sequence[tuple[Any, Sequence[tuple[str, str]]]],
                        cats: tuple[Any, ...], conf: Any, rng: Any, srcs: list[tuple[str, str]],
                        theta: Any, pairs: Any) -> tuple[Any, tuple[Any, ...]]:
    """(draws, K) over a categorical slot's categories ``cats`` (every claimed value one of
    them), and their keys; ``conf`` the attribute's learned confusion, if any. With bagged
    rows learned, the most probable category is the full fit's and the probabilities are
    the bagged rows' (:func:`.bagging.anchored_draws`)."""
    conf = conf if conf is not None and conf.categories == cats else None
    rho = conf.correlation if conf is not None else 0.0
    omega = _independence(book, srcs, pairs) / (1.0 + (len(srcs) - 1) * rho)
    args = (conf, len(cats), [cats.index(value_key(v)) for v, _ in claims], theta,
            [conf is not None and s in conf.alpha for s, _ in srcs], [s for s, _ in srcs],
            pairs, omega, rng)
    post = category_probabilities(*args)
    if conf is not None and conf.bagged:
        from .bagging import anchored_draws

        post = anchored_draws(category_probabilities(*args, bagged=True),
                              int(post.mean(axis=0).argmax()))
    return post, cats


def _summary(p: Any) -> list[tuple[float, tuple[float, float]]]:
    """Mean and 90% interval per column of (draws, values) probabilities."""
    import numpy as np

    mean = p.mean(axis=0)
    low, high = np.quantile(p, (0.05, 0.95), axis=0)  # one sort for every value
    return [(float(mean[v]), (float(low[v]), float(high[v]))) for v in range(p.shape[1])]


def _independence(book: ReliabilityBook, srcs: Sequence[tuple[str, str]],
                  pairs: Any) -> Any:
    """Per source, the weight of its evidence: 1 / (1 + c sum of P(dependent) over the other
    sources of the value it claims), so copies count about as one source (``pairs``: the
    claims, (value, source) sorted by value)."""
    import numpy as np

    omega = np.ones(len(srcs))
    if not book.dependence:
        return omega
    from .dependence import COPY_RATE  # not before: only a dependence needs it

    starts = np.flatnonzero(np.diff(pairs[:, 0], prepend=-1))
    for cols in np.split(pairs[:, 1], starts[1:]):  # the sources of each value
        group = [srcs[int(j)][0] for j in cols]
        for j in cols:
            s = srcs[int(j)][0]
            load = sum(book.dependence.get((min(s, t), max(s, t)), 0.0)
                       for t in group if t != s)
            omega[j] = min(omega[j], 1.0 / (1.0 + COPY_RATE * load))
    return omega


def claims_of(r: Resolution) -> list[tuple[Any, list[tuple[str, str]]]]:
    """``(value, [(source, tier), ...])`` per candidate of a resolution."""
    heads = {f.id: f for f in r.heads}
    return [(c.value, sorted({(heads[i].source, heads[i].tier) for i in c.fact_ids}))
            for c in r.candidates]


def score_candidates(book: ReliabilityBook, r: Resolution,
                     similarity: Similarity | None = None) -> tuple[ValueSupport, ...]:
    """The candidates of a resolution with ``p``, its interval and the most probable one
    marked ``best``."""
    probs = claim_probabilities(book, claims_of(r), similarity=similarity,
                                attribute=r.attribute)
    best = max(range(len(probs)), key=lambda i: probs[i][0])
    return tuple(ValueSupport(c.value, c.fact_ids, c.sources, p, iv, i == best)
                 for i, (c, (p, iv)) in enumerate(zip(r.candidates, probs, strict=True)))


def score_set(book: ReliabilityBook, r: Resolution,
              ) -> tuple[tuple[ValueSupport, ...], tuple[Any, ...], float]:
    """A set's candidates with ``p``: for each member, the probability that its side (in,
    or left) is the truth, its presence and absence claims weighed against each other as
    two claims of one slot (a member claimed by one side only competes with "something
    else", as a resolved value does). Returns the scored candidates, the most probable set
    (the members more probably in than out, in the candidates' order) and its probability
    (the product over members: each member is its own presence claim, never a
    disagreement with another member)."""
    heads = {f.id: f for f in r.heads}
    by_member: dict[Any, list[ValueSupport]] = {}
    for c in r.candidates:
        by_member.setdefault(repr(c.value), []).append(c)
    scored: dict[int, tuple[float, tuple[float, float]]] = {}
    members, joint = [], 1.0
    weighed: dict[Any, list[tuple[float, tuple[float, float]]]] = {}  # members claimed alike
    chosen: set[str] = set()  # the members' keys (a list's ``in`` was quadratic: 10,000
    for name, group in by_member.items():  # members took 1.9 s)
        claims = [("in" if c.present else "out",
                   sorted({(heads[i].source, heads[i].tier) for i in c.fact_ids}))
                  for c in group]
        key = tuple((side, tuple(who)) for side, who in claims)
        if (probs := weighed.get(key)) is None:
            probs = weighed[key] = claim_probabilities(book, claims, attribute=r.attribute)
        for c, pv in zip(group, probs, strict=True):
            scored[id(c)] = pv
        p_in = sum(p for c, (p, _) in zip(group, probs, strict=True) if c.present)
        p_out = sum(p for c, (p, _) in zip(group, probs, strict=True) if not c.present)
        if p_in > p_out:
            members.append(group[0].value)
            chosen.add(name)
        joint *= max(p_in, p_out)
    cands = tuple(ValueSupport(c.value, c.fact_ids, c.sources, scored[id(c)][0],
                               scored[id(c)][1], c.present == (repr(c.value) in chosen),
                               c.present)
                  for c in r.candidates)
    return cands, tuple(members), joint
