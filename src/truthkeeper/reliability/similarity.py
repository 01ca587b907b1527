"""Value similarity for open values: near-equal claims support each other.

The one-coin model (conflict probabilities, ``learn_from_agreement``) says a source names the
truth with probability theta, else one of the other m - 1 claimed values: a claim u under the
truth v contributes log theta when u = v and log((1 - theta) / (m - 1)) otherwise. With a
similarity k(u, v) in [0, 1] (k(v, v) = 1) a claim is *fractional evidence*: it counts as a
right answer with weight k(u, v) and as a wrong one with weight 1 - k(u, v),

    log P(u | v) = k(u, v) log theta + (1 - k(u, v)) log((1 - theta) / (m - 1)),

so 292,648 and 292,650, or "donald knuth" and "donald e knuth", support each other
(TruthFinder's implication, in the likelihood), and the expected count of a source's right
answers gains k(u, v) per claim. Without a similarity k is the identity: the plain model.

Similarities compare value keys: strings normalised (NFC, case-folded, whitespace collapsed),
numbers as numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidFact, brief

if TYPE_CHECKING:  # numpy is imported where it is used: opening a memory does not need it
    import numpy as np

__all__ = ["Similarity", "kernel"]

_WORD = re.compile(r"\w+")


class Similarity:
    """A value similarity, the reliability model's soft evidence
    (``Memory(similarity=...)``): it never changes which values the symbolic layer
    treats as equal.

    Parameters
    ----------
    fn
        ``fn(a, b) -> float`` in [0, 1] (1: one value); equal values are 1 without a call.
    name
        How it is shown (keyword).

    Examples
    --------
    >>> Similarity.numbers(0.01)(292648, 292650), Similarity.numbers(0.01)(1, 2)
    (1.0, 0.0)
    >>> round(Similarity.tokens()("donald e knuth", "donald knuth"), 3)
    0.667
    """

    def __init__(self, fn: Callable[[Any, Any], float], *, name: str = "custom") -> None:
        if not callable(fn):
            raise InvalidFact(f"a similarity must be callable, got {brief(fn)}")
        self.fn, self.name = fn, name

    def __repr__(self) -> str:
        return f"Similarity({self.name})"

    def __call__(self, a: Any, b: Any) -> float:
        if a == b and type(a) is type(b):
            return 1.0
        try:
            s = float(self.fn(a, b))
        except Exception as exc:  # noqa: BLE001 - a user callable: report, never crash
            raise InvalidFact(f"the similarity {self.name} failed on {a!r}, {b!r}: "
                              f"{exc}") from None
        if not (math.isfinite(s) and 0.0 <= s <= 1.0):
            raise InvalidFact(f"the similarity {self.name} returned {s!r} for {a!r}, "
                              f"{b!r}; it must be in [0, 1]")
        return s

    @classmethod
    def numbers(cls, rel_tol: float = 0.001) -> Similarity:
        """Numbers within a relative tolerance of each other are one value.

        Parameters
        ----------
        rel_tol
            The tolerance, relative to the larger of the two, in [0, 1).

        Returns
        -------
        Similarity
            1.0 for numbers that near, else 0.0 (and for anything that is not a number).

        Raises
        ------
        InvalidFact
            ``rel_tol`` outside [0, 1).

        Examples
        --------
        >>> Similarity.numbers(0.01)(292648, 292650), Similarity.numbers(0.01)(1, 2)
        (1.0, 0.0)
        """
        if not (isinstance(rel_tol, (int, float)) and 0 <= rel_tol < 1):
            raise InvalidFact(f"rel_tol must be in [0, 1), got {brief(rel_tol)}")

        def near(a: Any, b: Any) -> float:
            if isinstance(a, bool) or isinstance(b, bool) or not (
                    isinstance(a, (int, float)) and isinstance(b, (int, float))):
                return 0.0
            return 1.0 if abs(a - b) <= rel_tol * max(abs(a), abs(b)) else 0.0

        return cls(near, name=f"numbers(rel_tol={rel_tol})")

    @classmethod
    def tokens(cls) -> Similarity:
        """Strings by the Jaccard similarity of their word sets (order and punctuation
        ignored).

        Returns
        -------
        Similarity
            The share of words the two strings have in common.

        Examples
        --------
        >>> round(Similarity.tokens()("donald e knuth", "knuth, donald"), 3)
        0.667
        """
        def jaccard(a: Any, b: Any) -> float:
            if not (isinstance(a, str) and isinstance(b, str)):
                return 0.0
            x, y = set(_WORD.findall(a)), set(_WORD.findall(b))
            return len(x & y) / len(x | y) if x | y else 0.0

        return cls(jaccard, name="tokens")

    @classmethod
    def strings(cls) -> Similarity:
        """Strings equal once everything but letters and digits is dropped.

        Returns
        -------
        Similarity
            1.0 for such strings, else 0.0.

        Examples
        --------
        >>> Similarity.strings()("AA-123", "AA 123"), Similarity.strings()("AA-123", "AA-124")
        (1.0, 0.0)
        """
        def same(a: Any, b: Any) -> float:
            if not (isinstance(a, str) and isinstance(b, str)):
                return 0.0
            return float("".join(_WORD.findall(a)) == "".join(_WORD.findall(b)))

        return cls(same, name="strings")


def kernel(sim: Similarity | None, values: Sequence[Any]) -> np.ndarray | None:
    """The matrix k[u, v] over an item's values (None without a similarity, or when no two
    values are similar: the plain model)."""
    if sim is None or len(values) < 2:
        return None
    import numpy as np
    n = len(values)
    k = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            k[i, j] = k[j, i] = sim(values[i], values[j])
    return None if np.allclose(k, np.eye(n)) else k


def log_likelihood(theta: np.ndarray, k: np.ndarray, said: np.ndarray) -> np.ndarray:
    """log P(each source's claim | truth v) for every candidate truth v (fractional
    evidence, see the module docstring).

    ``theta``: (..., S) accuracies; ``k``: (m, m) kernel; ``said``: (S,) index of each source's
    claimed value. Returns (..., S, m)."""
    import numpy as np

    m = k.shape[0]
    w = k[said, :]                                           # (S, m)
    t = np.clip(theta, 1e-12, 1 - 1e-12)[..., None]
    return np.asarray(w * np.log(t) + (1 - w) * np.log((1 - t) / max(m - 1, 1)))
