"""Verdicts decided by intervals: the one decision function every claim of the book goes through.

A claim declares, in code and before the run, its **effect** (a number per replicate: a seed where the claim is
about what training does, paired where the design pairs; evaluation items only for a claim about one given
model), the paper's **direction** (``"greater"``, ``"less"`` or ``"equivalent"``), a **boundary** the effect must
clear (the smallest effect that matters, with its reason) or, for "unchanged", "slightly" and "the same as the
authors' code", an equivalence **margin**, its **unit** of replication and ``n_min`` (3 where the claim is about
training; 1 for deterministic checks). :func:`decide` turns that into :class:`Evidence` with one of the verdicts:

- **reproduced**: the 95 % interval clears the boundary on the paper's side (equivalence: the 90 % interval lies
  inside ``boundary +- margin``, a two one-sided test);
- **not reproduced**: the 95 % interval lies wholly on the other side (equivalence: the 90 % interval lies wholly
  outside the margin);
- **inconclusive at this budget**: anything else, or fewer replicates than ``n_min``; the evidence says how many
  replicates would decide it at the observed spread (:attr:`Evidence.n_needed`);
- **partly**: only from :func:`decide_parts`, for a claim of several parts that are all decisive and split;
- **not measurable at this profile**: :func:`not_measurable`, only where the profile structurally cannot test
  the claim (no boxes, no synsets, no such model).

A rerun can turn a decisive verdict into the opposite one only if the interval moves by more than its own width:
with the true effect exactly at the boundary each decisive verdict has probability 2.5 % (5 % for equivalence),
so two reruns disagree decisively in well under 1 % of cases (``tests/test_verdicts.py`` simulates it).

Intervals come from ``scipy.stats``: a t-interval over replicates (:func:`t_interval`), a Wilson interval for a
share (:func:`share_interval`), Newcombe's interval for the difference of two rates built from two Wilson
intervals (:func:`rate_difference_interval`), a Fisher-z interval for a Spearman correlation or a bootstrap over
clusters of models (:func:`rho_interval`), a bootstrap over evaluation items (:func:`bootstrap_interval`), a
Mantel permutation test for two class-by-class matrices (:func:`mantel`) and an exact "interval" for
deterministic checks (:func:`exact`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly", "not reproduced"
INCONCLUSIVE, NOT_MEASURABLE = "inconclusive at this budget", "not measurable at this profile"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, INCONCLUSIVE, NOT_MEASURABLE)
PREMISE_NOT_MET = "premise not met"  # how an inconclusive claim's n_needed_why begins when a gate of it failed
DIRECTIONS = ("greater", "less", "equivalent")
LEVEL = {"greater": 0.95, "less": 0.95, "equivalent": 0.90}  # the interval each kind of claim is decided with
UNITS = ("seed", "model", "image", "scene", "class", "class pair", "draw", "run", "deterministic")



def premise_not_met(claim: Mapping) -> bool:
    """Whether a claim as a chapter's JSON records it is inconclusive because a premise it declared as a gate
    failed (:attr:`Evidence.premise_not_met` of the recorded dict): more replicates of the claim cannot settle it;
    the data or the budget would have to change.

    Example
    -------
    >>> premise_not_met(dict(verdict="inconclusive at this budget", evidence=dict(n_needed_why="premise not met (x)")))
    True
    """
    return claim.get("verdict") == INCONCLUSIVE and str(
        (claim.get("evidence") or {}).get("n_needed_why", "")).startswith(PREMISE_NOT_MET)

@dataclasses.dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval: ``lo <= estimate <= hi`` at ``level``, from ``n`` replicates.

    ``spread`` is what one more replicate would shrink (the standard deviation of the replicates for a
    t-interval); NaN where the method has none.

    Example
    -------
    >>> Interval(0.4, 0.1, 0.7, 3, 0.95, "t").half_width
    0.3
    """

    estimate: float
    lo: float
    hi: float
    n: int
    level: float
    method: str

    @property
    def half_width(self) -> float:
        return round((self.hi - self.lo) / 2, 12)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What a claim's verdict rests on; stored with the claim in the chapter's JSON (:meth:`to_dict`).

    Attributes
    ----------
    verdict:     one of :data:`VERDICTS`
    estimate, lo, hi, level, method, n:  the interval (NaN where there is none)
    unit:        what a replicate is (:data:`UNITS`)
    direction, boundary, margin:  the declared test; ``margin`` is the equivalence margin (0 otherwise)
    reason:      why that boundary or margin, in words
    n_min:       the replicates the claim needs before it can be decisive
    n_needed:    replicates that would decide an inconclusive claim at the observed spread and estimate, the
                 interval's quantile taken at that n (None: it cannot be said; ``n_needed_why`` says why)
    parts:       the parts of a claim of several parts (:func:`decide_parts`), by name
    null:        the value of no effect (the boundary is ``null`` moved by the smallest effect that matters)
    n_needed_why: why ``n_needed`` is None for an inconclusive claim ("" otherwise)
    decided_by:  for a claim of several parts decided before every part is: the parts that decided it, in words
    """

    verdict: str
    estimate: float
    lo: float
    hi: float
    n: int
    unit: str
    direction: str
    boundary: float
    margin: float
    reason: str
    n_min: int
    level: float
    method: str
    n_needed: int | None = None
    parts: tuple[tuple[str, Evidence], ...] = ()
    null: float = math.nan
    n_needed_why: str = ""
    decided_by: str = ""

    @property
    def premise_not_met(self) -> bool:
        """Inconclusive because a premise it declared as a gate failed (:func:`invlib.protocol.decide`)."""
        return self.verdict == INCONCLUSIVE and self.n_needed_why.startswith(PREMISE_NOT_MET)

    @property
    def decisive(self) -> bool:
        return self.verdict in (REPRODUCED, NOT_REPRODUCED)

    def text(self) -> str:
        """The interval in a few words for a table cell, e.g. ``"+2.10 [+0.40, +3.80], 3 seeds; > 0"``.

        Example
        -------
        >>> decide([1.0, 2.0, 3.0], direction="greater", reason="a gain", unit="seed").text()
        '+2 [-0.484, +4.48], 3 seeds; > 0; 4 seeds would decide'
        """
        if self.verdict == NOT_MEASURABLE:
            return "—"
        if self.parts and len(self.parts) <= 3:
            return "; ".join(f"{name}: {ev.verdict}" for name, ev in self.parts)
        if self.parts:  # many parts: how many got each verdict (each part's interval is in the JSON)
            counts = {v: sum(ev.verdict == v for _, ev in self.parts) for v in VERDICTS}
            return f"{len(self.parts)} parts: " + ", ".join(f"{k} {v}" for v, k in counts.items() if k)
        unit = self.unit if self.n == 1 or self.unit in ("deterministic",) else _plural(self.unit)
        if self.unit == "deterministic":
            core = f"{_num(self.estimate)} (deterministic)"
        elif math.isnan(self.lo):
            core = f"{_num(self.estimate)}, {self.n} {unit}"
        else:
            core = f"{_num(self.estimate)} [{_num(self.lo)}, {_num(self.hi)}], {self.n} {unit}"
        test = {"greater": f"> {_num(self.boundary, sign=False)}", "less": f"< {_num(self.boundary, sign=False)}",
                "equivalent": f"within {_num(self.boundary, sign=False)} ± {_num(self.margin, sign=False)}"}
        out = f"{core}; {test[self.direction]}"
        if self.verdict == INCONCLUSIVE:
            if self.n < self.n_min:
                out += f"; needs >= {self.n_min} {_plural(self.unit)}"
                if self.n_needed and self.n_needed > self.n_min:
                    out += f", {self.n_needed} would decide"
            elif self.n_needed:
                out += f"; {self.n_needed} {_plural(self.unit)} would decide"
            elif self.n_needed_why:
                out += f"; {self.n_needed_why}"
        return out

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "parts"}
        d = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}
        if self.parts:
            d["parts"] = {name: ev.to_dict() for name, ev in self.parts}
        return d


# --- intervals ------------------------------------------------------------------------------------------------

def t_interval(values, level: float = 0.95) -> Interval:
    """The mean of ``values`` (one per replicate) with its Student-t interval (n - 1 degrees of freedom).

    Fewer than 2 values, or a NaN among them, give NaN bounds.

    Example
    -------
    >>> iv = t_interval([1.0, 2.0, 3.0])
    >>> round(iv.estimate, 3), round(iv.lo, 3), round(iv.hi, 3), iv.n
    (2.0, -0.484, 4.484, 3)
    """
    from scipy import stats

    x = _floats(values)
    n = x.size
    mean = float(x.mean()) if n else math.nan
    if n < 2 or not np.isfinite(x).all():
        return Interval(mean, math.nan, math.nan, n, level, "t")
    sd = float(x.std(ddof=1))
    if sd == 0:
        return Interval(mean, mean, mean, n, level, "t")
    lo, hi = stats.t.interval(level, n - 1, loc=mean, scale=sd / math.sqrt(n))
    return Interval(mean, float(lo), float(hi), n, level, "t")


def t_intervals(x, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`t_interval` of every row of ``x`` ``(R, n)`` at once: ``(mean, lo, hi)``, each ``(R,)``, the same
    numbers row by row (each row is summed along contiguous memory, as :func:`t_interval` sums it alone).

    Example
    -------
    >>> x = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
    >>> [v.round(3).tolist() for v in t_intervals(x, 0.95)]
    [[2.0, 2.0], [-0.484, 2.0], [4.484, 2.0]]
    """
    from scipy import stats

    x = np.ascontiguousarray(x, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"t_intervals takes (rows, values), a 2-D array; got shape {x.shape} (t_interval takes one "
                         "sample)")
    n = x.shape[1]
    mean = x.mean(1)
    if n < 2:
        return mean, np.full_like(mean, np.nan), np.full_like(mean, np.nan)
    sd = x.std(1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi = stats.t.interval(level, n - 1, loc=mean, scale=sd / math.sqrt(n))
    finite = np.isfinite(x).all(1)
    lo, hi = (np.where(finite, np.where(sd == 0, mean, v), np.nan) for v in (lo, hi))
    return mean, lo, hi


def exact(value) -> Interval:
    """A deterministic number: the interval is the value itself (a fixed-input check, an analytic quantity).

    Example
    -------
    >>> exact(0.25)
    Interval(estimate=0.25, lo=0.25, hi=0.25, n=1, level=1.0, method='exact')
    """
    v = float(value)
    return Interval(v, v, v, 1, 1.0, "exact")


def share_interval(k: int, n: int, level: float = 0.95) -> Interval:
    """A share ``k / n`` with its Wilson score interval (``scipy.stats.binomtest``).

    Example
    -------
    >>> iv = share_interval(9, 10)
    >>> round(iv.estimate, 2), round(iv.lo, 3), round(iv.hi, 3)
    (0.9, 0.596, 0.982)
    """
    from scipy import stats

    k, n = int(k), int(n)
    if n <= 0:
        return Interval(math.nan, math.nan, math.nan, 0, level, "wilson")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return Interval(k / n, float(ci.low), float(ci.high), n, level, "wilson")


def share_decidable(n: int, direction: str, boundary: float, margin: float = 0.0, level: float = 0.95,
                    n_min: int = 1) -> bool:
    """Whether a share over ``n`` replicates (:func:`share_interval`) can be decided at all against its test: all
    of them, or none, would decide it. Below that n a claim on a share means nothing, whatever the replicates show.

    Example
    -------
    >>> [share_decidable(n, "greater", 0.5) for n in (3, 4)]  # "on most seeds": 3 of 3 do not decide it, 4 of 4 do
    [False, True]
    """
    return any(_verdict(share_interval(k, n, level), direction, boundary, margin, n_min) != INCONCLUSIVE
               for k in (0, n))


def rate_difference_interval(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> Interval:
    """``k1/n1 - k2/n2`` with Newcombe's hybrid score interval, built from the two Wilson intervals.

    Example
    -------
    >>> iv = rate_difference_interval(5, 6, 1, 6)
    >>> round(iv.estimate, 3), round(iv.lo, 3), round(iv.hi, 3)
    (0.667, 0.105, 0.86)
    """
    a, b = share_interval(k1, n1, level), share_interval(k2, n2, level)
    d = a.estimate - b.estimate
    lo = d - math.hypot(a.estimate - a.lo, b.hi - b.estimate)
    hi = d + math.hypot(a.hi - a.estimate, b.estimate - b.lo)
    return Interval(d, lo, hi, min(int(n1), int(n2)), level, "newcombe")


def rho_interval(x, y, level: float = 0.95, groups=None, seed: int = 0, resamples: int = 2000) -> Interval:
    """Spearman's rho between ``x`` and ``y`` (one value per model) with an interval.

    Without ``groups``: Fisher's z with the Bonett-Wright standard error ``sqrt((1 + rho^2 / 2) / (n - 3))``.
    With ``groups`` (e.g. the variant each model is a seed of), a percentile bootstrap that resamples whole
    groups, so models that share everything but the seed are not counted as independent evidence.

    Example
    -------
    >>> iv = rho_interval([1, 2, 3, 4, 5, 6, 7, 8], [2, 1, 4, 3, 6, 5, 8, 7])
    >>> round(iv.estimate, 3), round(iv.lo, 2), round(iv.hi, 2), iv.method
    (0.905, 0.43, 0.99, 'fisher-z')
    """
    from scipy import stats

    x, y = _floats(x), _floats(y)
    if x.shape != y.shape:
        raise ValueError(f"rho_interval needs one x and one y per model, got {x.size} and {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = x.size
    if n < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Interval(math.nan, math.nan, math.nan, n, level, "fisher-z")
    rho = float(stats.spearmanr(x, y).statistic)
    if groups is None:
        z, se = math.atanh(min(max(rho, -0.999999), 0.999999)), math.sqrt((1 + rho**2 / 2) / (n - 3))
        q = stats.norm.ppf(0.5 + level / 2)
        return Interval(rho, math.tanh(z - q * se), math.tanh(z + q * se), n, level, "fisher-z")
    labels = np.asarray(groups)[ok]
    keys, group = np.unique(labels, return_inverse=True)

    def statistic(pick, axis=-1):  # a batch of resamples of whole groups: each model counted as often as its group
        pick = np.asarray(pick, dtype=int)
        counts = _counts(pick.reshape(-1, keys.size), keys.size)[:, group]
        return rank_correlation(x, y, counts, constant=0.0).reshape(pick.shape[:-1])

    boot = stats.bootstrap((np.arange(keys.size),), statistic, vectorized=True, confidence_level=level,
                           n_resamples=resamples, method="percentile", rng=np.random.default_rng(seed))
    return Interval(rho, float(boot.confidence_interval.low), float(boot.confidence_interval.high), len(keys),
                    level, "cluster bootstrap")


def bootstrap_interval(items, statistic: Callable = np.mean, level: float = 0.95, seed: int = 0,
                       resamples: int = 2000, paired: bool = False) -> Interval:
    """A percentile bootstrap over evaluation items (``scipy.stats.bootstrap``), for a claim about one given model.

    Args:
        items: ``(N,)`` values, one per item; or with ``paired=True`` a tuple of ``(N,)`` arrays resampled
            together (``statistic`` then takes them all).
        statistic: the estimate from the items (default the mean). One that takes ``axis`` (as ``np.mean`` does)
            gets every resample at once, ``(resamples, N)`` arrays with ``axis=-1``, and must return what it
            returns row by row (the draws are the same either way); any other is called once per resample.

    Example
    -------
    >>> iv = bootstrap_interval(np.r_[np.zeros(20), np.ones(80)])
    >>> round(iv.estimate, 2), iv.lo > 0.7, iv.hi < 0.9
    (0.8, True, True)
    """
    from scipy import stats

    data = tuple(_floats(a) for a in items) if paired else (_floats(items),)
    if data[0].size < 2:
        est = float(statistic(*data)) if data[0].size else math.nan
        return Interval(est, math.nan, math.nan, data[0].size, level, "bootstrap")
    est = float(statistic(*data))
    boot = stats.bootstrap(data, statistic, paired=paired, vectorized=_takes_axis(statistic), confidence_level=level,
                           n_resamples=resamples, method="percentile", rng=np.random.default_rng(seed))
    ci = boot.confidence_interval
    lo, hi = float(ci.low), float(ci.high)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # every resample the same
        lo = hi = est
    return Interval(est, lo, hi, data[0].size, level, "bootstrap")


def mantel(a, b, permutations: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Spearman's rho between the off-diagonal entries of two symmetric ``(K, K)`` matrices and its one-sided
    Mantel p-value (rows and columns of ``b`` permuted together, ``scipy.stats.permutation_test``): the test for
    class-by-class matrices, whose ``K (K - 1) / 2`` pairs are not exchangeable.

    Example
    -------
    >>> rng = np.random.default_rng(0); p = rng.random((8, 2)); d = np.abs(p[:, None] - p[None]).sum(-1)
    >>> rho, pval = mantel(d, d + 0.01 * rng.random((8, 8)))
    >>> rho > 0.9, pval < 0.01
    (True, True)
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"mantel needs two square matrices of one shape, got {a.shape} and {b.shape}")
    iu = np.triu_indices(a.shape[0], 1)
    ok = np.isfinite(a[iu]) & np.isfinite(b[iu])
    rows, cols = iu[0][ok], iu[1][ok]

    def statistic(order, axis=-1):  # a batch of orders of the classes: b's entries of every one, at once
        order = np.asarray(order, dtype=int)
        flat = order.reshape(-1, a.shape[0])
        return rank_correlation(a[rows, cols], b[flat[:, rows], flat[:, cols]]).reshape(order.shape[:-1])

    res = stats.permutation_test((np.arange(a.shape[0]),), statistic, permutation_type="pairings",
                                 alternative="greater", n_resamples=permutations, vectorized=True,
                                 rng=np.random.default_rng(seed))
    return float(res.statistic), float(res.pvalue)


def rank_correlation(x, y, counts=None, constant: float = math.nan) -> np.ndarray:
    """Spearman's rho of many samples at once, each the same number as ``scipy.stats.spearmanr`` gives it.

    Args:
        x, y: ``(B, m)`` values (a ``(m,)`` side is shared by every sample).
        counts: ``(B, m)`` how often each entry is in its sample (a resample with replacement; 0 leaves it out);
            None: once each.
        constant: rho of a sample with a constant side (spearmanr: NaN). A sample with a NaN in it gets NaN.

    Ranks (ties averaged) are half-integers and their mean is ``(n + 1) / 2``, so every sum below is exact
    whatever its order (up to some 200,000 entries a sample, where the sums of squares stay below 2^53); the last
    steps are those of ``np.corrcoef``, so the result is bit for bit spearmanr's.

    Example
    -------
    >>> rank_correlation([1.0, 2, 3, 4], [[1.0, 3, 2, 4], [4, 3, 2, 1]]).round(4).tolist()
    [0.8, -1.0]
    >>> rank_correlation([1.0, 2, 3, 4], [1.0, 3, 2, 4], counts=[[2, 1, 1, 1]]).round(4).tolist()  # x 1 1 2 3 4
    [0.8947]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    shape = np.broadcast_shapes(x.shape, y.shape, () if counts is None else np.shape(counts))
    shape = (1,) * (2 - len(shape)) + shape
    w = np.ones(shape) if counts is None else np.broadcast_to(np.asarray(counts, dtype=float), shape)
    x, y = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
    step = max(1, 2**21 // max(1, shape[-1]))  # rows at a time: a few MB per array whatever the sample size
    return np.concatenate([_rank_correlation(x[i:i + step], y[i:i + step], w[i:i + step], constant)
                           for i in range(0, shape[0], step)])


def _rank_correlation(x: np.ndarray, y: np.ndarray, w: np.ndarray, constant: float) -> np.ndarray:
    rx, ry = _weighted_ranks(x, w), _weighted_ranks(y, w)
    n = w.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):  # an empty or one-row sample: its rho is set below
        dx, dy = rx - ((w * rx).sum(-1) / n)[:, None], ry - ((w * ry).sum(-1) / n)[:, None]
        f = 1.0 / (n - 1)
        r = (w * dx * dy).sum(-1) * f / np.sqrt((w * dy * dy).sum(-1) * f) / np.sqrt((w * dx * dx).sum(-1) * f)
    used = w > 0
    r = np.where(_spread(x, used) & _spread(y, used), np.clip(r, -1.0, 1.0), constant)
    return np.where((used & (np.isnan(x) | np.isnan(y))).any(-1), math.nan, r)


def _weighted_ranks(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis of ``(B, m)`` values, each counted ``w`` times: rows below plus the mean
    place in its block of ties, ``below + (ties + 1) / 2`` (``scipy.stats.rankdata``'s "average" on the rows).

    Example
    -------
    >>> _weighted_ranks(np.array([[3.0, 1, 3, 2]]), np.array([[1.0, 1, 1, 2]])).tolist()
    [[4.5, 1.0, 4.5, 2.5]]
    """
    order = np.argsort(v, axis=-1, kind="stable")
    s, ws = np.take_along_axis(v, order, -1), np.take_along_axis(w, order, -1)
    m = v.shape[-1]
    pos = np.broadcast_to(np.arange(m), v.shape)
    new = np.ones(v.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    last = np.ones(v.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.minimum.accumulate(np.where(last, pos, m - 1)[:, ::-1], axis=-1)[:, ::-1]
    cs = np.cumsum(ws, axis=-1)
    below = np.take_along_axis(cs - ws, start, -1)
    ties = np.take_along_axis(cs, end, -1) - below
    ranks = np.empty(v.shape)
    np.put_along_axis(ranks, order, below + (ties + 1) / 2, -1)
    return ranks


def _spread(v: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Whether the used entries of each row of ``v`` take more than one value (NaN aside)."""
    return np.where(used, v, np.inf).min(-1) < np.where(used, v, -np.inf).max(-1)


def _counts(pick: np.ndarray, k: int) -> np.ndarray:
    """``(B, k)`` how often each of ``0..k-1`` is in each row of ``pick`` ``(B, n)``."""
    rows = np.arange(pick.shape[0])[:, None] * k
    return np.bincount((pick + rows).ravel(), minlength=pick.shape[0] * k).reshape(pick.shape[0], k)


def _takes_axis(statistic: Callable) -> bool:
    import inspect

    try:
        return "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):
        return False


# --- the decision ---------------------------------------------------------------------------------------------

def decide(effect, *, direction: str = "greater", boundary: float = 0.0, margin: float | None = None,
           reason: str, unit: str, n_min: int = 3, null: float | None = None, level: float | None = None) -> Evidence:
    """The verdict of one claim from its effect, against the test it declared before the run.

    Args:
        effect: one number per replicate (a list or array; a t-interval is taken at the level the direction
            needs), or an :class:`Interval` already made at ``LEVEL[direction]`` or wider, e.g. Bonferroni-adjusted
            for one of k simultaneous tests (:func:`rho_interval`, :func:`share_interval`,
            :func:`bootstrap_interval`, :func:`exact`, ...).
        direction: ``"greater"`` (the paper says the effect exceeds ``boundary``), ``"less"``, or
            ``"equivalent"`` (the paper says it lies within ``boundary +- margin``).
        boundary: what the effect must clear: the smallest effect that matters (often 0 for a sign).
        margin: the equivalence margin (``direction="equivalent"`` only; > 0).
        reason: why this boundary or margin, in words.
        unit: what one replicate is (:data:`UNITS`): ``"seed"`` for what training does, ``"image"`` or
            ``"class"`` for one given model, ``"deterministic"`` for fixed inputs.
        n_min: replicates needed before the claim can be decisive (3 for training claims, 1 for deterministic).
        null: the value of no effect, stored beside the boundary (default: the boundary itself).
        level: the interval's confidence level; default :data:`LEVEL` of the direction, higher for one of k
            simultaneous tests (Bonferroni). A declared claim gets both from its protocol
            (:func:`invlib.protocol.decide`).

    Returns:
        :class:`Evidence` (its ``verdict`` is the claim's).

    Example
    -------
    >>> decide([2.1, 2.9, 2.5], reason="RRC's gain over none", unit="seed").verdict
    'reproduced'
    >>> decide([-2.1, -2.9, -2.5], reason="RRC's gain over none", unit="seed").verdict
    'not reproduced'
    >>> ev = decide([0.5, -0.2], reason="RRC's gain over none", unit="seed")
    >>> ev.verdict, ev.n_min
    ('inconclusive at this budget', 3)
    >>> decide([0.01, 0.02, 0.0], direction="equivalent", margin=0.05, reason="unchanged", unit="seed").verdict
    'reproduced'
    >>> decide(exact(0.3), boundary=0.5, reason="a threshold", unit="deterministic", n_min=1).verdict
    'not reproduced'
    """
    from .utils import check_choice

    check_choice(direction, DIRECTIONS, "direction")
    check_choice(unit, UNITS, "unit")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("decide needs the reason for its boundary or margin (reason='...'), stated before the run")
    if direction == "equivalent":
        if margin is None or not margin > 0:
            raise ValueError(f"an equivalence claim needs margin > 0, got {margin!r}")
    elif margin is not None:
        raise ValueError("margin is the equivalence margin: pass it only with direction='equivalent' (a "
                         "directional claim states its smallest effect that matters as boundary=)")
    if int(n_min) < 1:
        raise ValueError(f"n_min must be >= 1, got {n_min}")
    level = LEVEL[direction] if level is None else float(level)
    if not LEVEL[direction] - 1e-9 <= level < 1:
        raise ValueError(f"a {direction!r} claim is decided at level {LEVEL[direction]:.0%} or higher (below 1), "
                         f"got {level!r}")
    if callable(effect) and not isinstance(effect, Interval):  # an interval maker: built at the level needed
        effect = effect(level)
    if isinstance(effect, Interval):
        iv = effect
        if iv.method != "exact" and iv.level < level - 1e-9:  # a wider one (multiplicity-adjusted) is conservative
            raise ValueError(f"a {direction!r} claim is decided with a {level:.4g} interval or a wider one; this one "
                             f"is at {iv.level:.4g} (make it at the level its declaration needs)")
    else:
        iv = t_interval(effect, level)
    margin = float(margin or 0.0)
    verdict = _verdict(iv, direction, float(boundary), margin, int(n_min))
    needed, why = n_needed(iv, direction, float(boundary), margin, int(n_min)) if verdict == INCONCLUSIVE else \
        (None, "")
    return Evidence(verdict, iv.estimate, iv.lo, iv.hi, iv.n, unit, direction, float(boundary), margin,
                    reason.strip(), int(n_min), iv.level, iv.method, needed,
                    null=float(boundary if null is None else null), n_needed_why=why)


def decide_parts(parts: Mapping[str, Evidence], reason: str = "every part must hold",
                 against: Sequence[str] = ()) -> Evidence:
    """One verdict for a claim of several parts, each decided by :func:`decide`.

    Reproduced if every part is; not reproduced if every part is not; partly if every part is decisive and they
    split; not measurable if every part is. A conjunction whose parts are each tested at their own level is an
    intersection-union test: it needs no multiplicity correction to say "reproduced".

    While some part is inconclusive, the claim waits, unless a part is in ``against``: decisively against the claim
    at the level ``1 - 0.05 / k`` for its ``k`` parts (:func:`strict_level`; the caller decides each part again
    there, :func:`invlib.protocol.decide` does). A claim that every part must hold is false once one part is shown
    not to hold, so it is then not reproduced, or partly where another part is reproduced. The strict level keeps
    a claim whose parts all hold from being called not reproduced by chance more often than a one-part claim is
    (at most ``k * 0.025 / k``).

    Example
    -------
    >>> up = decide([1.0, 1.2, 1.1], reason="gain", unit="seed")
    >>> down = decide([-1.0, -1.2, -1.1], reason="gain", unit="seed")
    >>> unsure = decide([1.0, -1.0, 0.5], reason="gain", unit="seed")
    >>> decide_parts({"rotate": up, "shear": up}).verdict, decide_parts({"rotate": up, "shear": down}).verdict
    ('reproduced', 'partly')
    >>> decide_parts({"rotate": unsure, "shear": down}).verdict
    'inconclusive at this budget'
    >>> ev = decide_parts({"rotate": unsure, "shear": down}, against=["shear"])
    >>> ev.verdict
    'not reproduced'
    >>> ev.decided_by
    "'shear' is against the claim at the 97.5 % level (2 parts), so 'rotate', not yet decided, cannot change it"
    """
    if not parts:
        raise ValueError("decide_parts needs at least one part")
    unknown = set(against) - set(parts)
    if unknown:
        raise ValueError(f"against names parts the claim does not have: {sorted(unknown)}; its parts: {list(parts)}")
    verdicts = [ev.verdict for ev in parts.values()]
    measured = [v for v in verdicts if v != NOT_MEASURABLE]
    decided_by = ""
    if not measured:
        verdict = NOT_MEASURABLE
    elif INCONCLUSIVE in measured and against:
        verdict = PARTLY if REPRODUCED in measured else NOT_REPRODUCED
        k = len(measured)
        open_ = [n for n, ev in parts.items() if ev.verdict == INCONCLUSIVE]
        decided_by = (f"{_names(list(against))} {'is' if len(against) == 1 else 'are'} against the claim at the "
                      f"{strict_level(k) * 100:.4g} % level ({k} parts), so {_names(open_)}, not yet decided, "
                      f"cannot change it")
    elif INCONCLUSIVE in measured:
        verdict = INCONCLUSIVE
    elif all(v == REPRODUCED for v in measured):
        verdict = REPRODUCED
    elif all(v == NOT_REPRODUCED for v in measured):
        verdict = NOT_REPRODUCED
    else:
        verdict = PARTLY
    first = next(iter(parts.values()))
    needed = [ev.n_needed for ev in parts.values() if ev.verdict == INCONCLUSIVE and ev.n_needed]
    counted = [ev.n for ev in parts.values() if ev.verdict != NOT_MEASURABLE] or [0]
    return Evidence(verdict, math.nan, math.nan, math.nan, min(counted), first.unit,
                    first.direction, math.nan, 0.0, reason, max(ev.n_min for ev in parts.values()), first.level,
                    "parts", max(needed) if needed and verdict == INCONCLUSIVE else None, tuple(parts.items()),
                    decided_by=decided_by)


def strict_level(k: int, direction: str = "greater") -> float:
    """The level at which one of a claim's ``k`` parts must be against the claim to decide it before the others
    are: ``1 - (1 - LEVEL[direction]) / k`` (Bonferroni over the parts).

    Example
    -------
    >>> strict_level(1), strict_level(4), strict_level(2, "equivalent")
    (0.95, 0.9875, 0.95)
    """
    return 1 - (1 - LEVEL[direction]) / max(int(k), 1)


def _names(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) > 4:
        return ", ".join(quoted[:3]) + f" and {len(quoted) - 3} more"
    return " and ".join([", ".join(quoted[:-1]), quoted[-1]]) if len(quoted) > 1 else (quoted[0] if quoted else "")


def decide_any(parts: Mapping[str, Evidence], reason: str) -> Evidence:
    """One verdict for "on at least one of k": reproduced when some part is, not reproduced when every part is,
    else inconclusive. Decide each part with an interval widened for the k tests (Bonferroni, level
    ``1 - 0.05 / k``), or a true "any" passes by chance. The evidence is that of the part nearest the paper's side,
    with every part attached; a part this profile cannot test makes the claim not measurable.

    Example
    -------
    >>> up, down = (decide(x, reason="a gain", unit="seed") for x in ([1.0, 1.1, 1.2], [-1.0, -1.1, -1.2]))
    >>> unsure = decide([1.0, -1.0, 0.5], reason="a gain", unit="seed")
    >>> [decide_any(p, "some").verdict for p in ({"a": up, "b": down}, {"b": down}, {"b": down, "c": unsure})]
    ['reproduced', 'not reproduced', 'inconclusive at this budget']
    """
    if not parts:
        raise ValueError("decide_any needs at least one part")
    missing = [ev for ev in parts.values() if ev.verdict == NOT_MEASURABLE]
    if missing:
        return dataclasses.replace(missing[0], parts=tuple(parts.items()))
    rank = {REPRODUCED: 0, PARTLY: 1, INCONCLUSIVE: 1, NOT_REPRODUCED: 2}

    def nearest(ev: Evidence):
        lo = ev.lo if math.isfinite(ev.lo) else -math.inf
        return rank[ev.verdict], -lo if ev.direction != "less" else (ev.hi if math.isfinite(ev.hi) else math.inf)

    best = min(parts.values(), key=nearest)
    return dataclasses.replace(best, reason=reason, parts=tuple(parts.items()))


def not_measurable(reason: str, unit: str = "deterministic") -> Evidence:
    """The evidence of a claim this profile structurally cannot test (no boxes, no synsets, no such model).

    Example
    -------
    >>> not_measurable("scenes have no WordNet synsets").verdict
    'not measurable at this profile'
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("not_measurable needs the structural reason the profile cannot test the claim")
    return Evidence(NOT_MEASURABLE, math.nan, math.nan, math.nan, 0, unit, "greater", math.nan, 0.0,
                    reason.strip(), 1, math.nan, "none")


def paired(a, b) -> np.ndarray:
    """Per-replicate differences ``a - b`` of two paired sequences (the same seeds, the same order): the effect of
    a paired design, whose interval is much narrower than that of two independent means.

    Example
    -------
    >>> paired([70.1, 71.0, 69.5], [68.0, 69.2, 67.1]).round(2).tolist()
    [2.1, 1.8, 2.4]
    """
    a, b = _floats(a), _floats(b)
    if a.shape != b.shape:
        raise ValueError(f"paired effects need the same replicates on both sides, got {a.size} and {b.size}")
    return a - b


def variance_split(per_item) -> dict:
    """Where the spread of a paired effect over seeds comes from: its evaluation (the test items each seed's
    model is scored on) and its training (what differs between seeds). ``per_item`` is ``(seeds, items)``: the
    effect of each test item under each seed (e.g. arm A's correctness minus arm B's, in points), so that a seed's
    effect is its row's mean.

    - ``evaluation``: the variance of a seed's effect that comes from its finite test set, the mean over seeds of
      each row's item variance over its item count (what a larger test set divides);
    - ``between``: the observed variance of the seeds' effects (ddof 1), what a t interval over seeds uses;
    - ``training``: ``between - evaluation``, at least 0 (what more seeds average and a larger test set leaves);
    - ``evaluation_share``: ``evaluation / between`` capped at 1 (1: every bit of the spread is evaluation noise);
    - ``items_for_half``: the items per seed at which evaluation would be half of the training variance (None
      when the training variance reads 0: every larger test set helps).

    Returns those with ``seeds`` and ``items``; a single seed has no ``between`` (None, and no share).

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> seeds = rng.normal(0, 1.0, (40, 1))                     # training: sd 1 between seeds
    >>> split = variance_split(seeds + rng.normal(0, 20.0, (40, 400)))  # evaluation: 20 ** 2 / 400 = 1
    >>> split["seeds"], split["items"], round(split["evaluation"], 1), 0.3 < split["evaluation_share"] < 0.7
    (40, 400, 1.0, True)
    """
    x = np.asarray(per_item, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"per_item: (seeds, items) with 2 items at least, got shape {x.shape}")
    seeds, items = x.shape
    evaluation = float(np.mean(x.var(axis=1, ddof=1) / items))
    out = dict(seeds=seeds, items=items, evaluation=evaluation, between=None, training=None, evaluation_share=None,
               items_for_half=None)
    if seeds >= 2:
        between = float(x.mean(axis=1).var(ddof=1))
        training = max(between - evaluation, 0.0)
        out.update(between=between, training=training,
                   evaluation_share=min(evaluation / between, 1.0) if between > 0 else 1.0,
                   items_for_half=math.ceil(2 * evaluation * items / training) if training > 0 else None)
    return out


def phrase(evidence: Evidence, **texts: str) -> str:
    """The sentence the prose says for a verdict: ``texts`` keyed by ``reproduced``, ``not_reproduced``,
    ``inconclusive``, ``partly``, ``not_measurable``; a missing key gets a neutral sentence from the evidence.

    Example
    -------
    >>> ev = decide([1.0, 1.2, 1.1], reason="gain", unit="seed")
    >>> phrase(ev, reproduced="RRC helps.", not_reproduced="RRC does not help.")
    'RRC helps.'
    >>> phrase(decide([1.0], reason="gain", unit="seed"), reproduced="RRC helps.")
    'This run cannot decide it at its budget (+1, 1 seed; > 0; needs >= 3 seeds).'
    """
    key = evidence.verdict.split(" at ")[0].replace(" ", "_")
    if key in texts:
        return texts[key]
    if evidence.verdict == INCONCLUSIVE:
        return f"This run cannot decide it at its budget ({evidence.text()})."
    if evidence.verdict == NOT_MEASURABLE:
        return f"This profile cannot measure it ({evidence.reason})."
    return f"Verdict: {evidence.verdict} ({evidence.text()})."


def _verdict(iv: Interval, direction: str, b: float, margin: float, n_min: int) -> str:
    if iv.n < n_min or math.isnan(iv.lo) or math.isnan(iv.hi):  # an infinite exact value is still a value
        return INCONCLUSIVE
    if direction == "greater":
        return REPRODUCED if iv.lo > b else NOT_REPRODUCED if iv.hi < b else INCONCLUSIVE
    if direction == "less":
        return REPRODUCED if iv.hi < b else NOT_REPRODUCED if iv.lo > b else INCONCLUSIVE
    if b - margin < iv.lo and iv.hi < b + margin:
        return REPRODUCED
    return NOT_REPRODUCED if iv.lo > b + margin or iv.hi < b - margin else INCONCLUSIVE


N_NEEDED_MAX = 10**7  # beyond this many replicates the plan says "not within reach" instead of a number
T_METHODS = ("t", "bonferroni t")  # t-intervals over replicates: a Bonferroni one is a t-interval at a higher level
PLANNED_METHODS = T_METHODS + ("wilson", "newcombe", "bootstrap", "cluster bootstrap", "fisher-z", "exact")
PILOT_GRID = 64  # quadrature points on each of a t pilot's two unknowns (its spread, then its mean given the spread)
WILSON_EXACT = 200_000  # beyond this many new replicates a Wilson share's chances take the normal approximation


def n_needed(iv: Interval, direction: str, boundary: float, margin: float = 0.0, n_min: int = 1,
             power: float | None = None) -> tuple[int | None, str]:
    """The replicates at which ``iv``'s interval, at its observed estimate and spread, would clear the nearest edge
    it must clear: ``(n, "")``, or ``(None, why)`` where that cannot be said.

    The half-width at ``n`` replicates is, per method: a t-interval (a Bonferroni one too, at its level) ``t(level,
    n - 1) * sd / sqrt(n)``, with the quantile taken at that ``n`` (solved for the smallest such ``n``); a Fisher-z
    interval ``z * sqrt((1 + rho^2 / 2) / (n - 3))`` on the z scale (closed form); a Wilson, Newcombe or bootstrap
    interval, whose quantile does not depend on ``n``, ``h * sqrt(n_now / n)``. At least ``max(n_min, n_now + 1)``.

    ``power``: instead, the smallest n at which the claim, its replicates extended to n, is decided (reproduced or
    not reproduced) with at least this chance, averaged over what the replicates so far leave uncertain about the
    effect and its spread (:func:`chances`); not the chance at the observed effect taken as the true one, which a
    pilot of 3 seeds misstates badly. The sample-size plan (:mod:`invlib.plan`) asks for 0.8.

    Example
    -------
    >>> n_needed(t_interval([1.0, 2.0, 3.0]), "greater", 0.0)   # mean 2, sd 1: t(0.975, n-1) / sqrt(n) < 2
    (4, '')
    >>> n_needed(t_interval([1.0, 2.0, 3.0]), "greater", 0.0, power=0.8)   # decided in 80 % of extended runs
    (6, '')
    >>> n_needed(exact(0.3), "greater", 0.5)
    (None, 'a deterministic check: more replicates change nothing')
    """
    from scipy import stats

    est = iv.estimate
    if iv.method == "exact":
        return None, "a deterministic check: more replicates change nothing"
    if iv.n < 2 or not (math.isfinite(iv.lo) and math.isfinite(iv.hi)):
        return None, "one replicate: no spread to plan from"
    if not math.isfinite(est):
        return None, "no estimate"
    floor = max(int(n_min), iv.n + 1)
    if power is not None:
        if not 0 < power < 1:
            raise ValueError(f"power is a probability between 0 and 1, got {power!r}")
        why = planning_why(iv)
        if why:
            return None, why
        return _smallest(lambda n: sum(chances(iv, direction, boundary, margin, n, n_min)) >= power, floor)
    if direction == "equivalent":
        gap = margin - abs(est - boundary)  # an estimate inside the margin: the interval must shrink inside it
        gap = gap if gap > 0 else abs(est - boundary) - margin
    else:
        gap = abs(est - boundary)
    if not gap > 0:
        return None, "the estimate sits on the boundary: no number of replicates decides it there"
    h = (iv.hi - iv.lo) / 2
    if h <= 0:
        return floor, ""
    q = stats.norm.ppf(0.5 + iv.level / 2)
    if iv.method in T_METHODS:
        sd = h * math.sqrt(iv.n) / stats.t.ppf(0.5 + iv.level / 2, iv.n - 1)
        return _smallest(lambda n: stats.t.ppf(0.5 + iv.level / 2, n - 1) * sd / math.sqrt(n) < gap, floor)
    if iv.method == "fisher-z":
        rho = min(max(est, -0.999999), 0.999999)
        if direction == "equivalent":
            return None, "an equivalence test of a correlation has no closed form here"
        gap_z = abs(math.atanh(rho) - math.atanh(min(max(boundary, -0.999999), 0.999999)))
        return _cap(max(floor, math.floor(3 + (1 + rho**2 / 2) * (q / gap_z) ** 2) + 1))
    if iv.method in ("wilson", "newcombe", "bootstrap", "cluster bootstrap"):
        return _cap(max(floor, math.floor(iv.n * (h / gap) ** 2) + 1))
    return None, f"a {iv.method} interval has no formula for its width at another n"


def planning_why(iv: Interval) -> str:
    """Why :func:`chances` cannot plan from ``iv`` ("" where it can): no spread yet, or a method whose width at
    another n has no formula here.

    Example
    -------
    >>> planning_why(t_interval([1.0, 2.0])), planning_why(t_interval([1.0]))
    ('', 'one replicate: no spread to plan from')
    """
    if iv.method == "exact":
        return ""
    if iv.method not in PLANNED_METHODS:
        return f"a {iv.method} interval has no formula for its width at another n"
    if iv.n < 2 or not (math.isfinite(iv.lo) and math.isfinite(iv.hi)):
        return "one replicate: no spread to plan from"
    if not math.isfinite(iv.estimate):
        return "no estimate"
    return ""


def chances(iv: Interval, direction: str, boundary: float, margin: float = 0.0, n: int | None = None,
            n_min: int = 1, level: float | None = None) -> tuple[float, float]:
    """The chances that a claim whose interval is ``iv`` now is reproduced, and not reproduced, once its replicates
    are extended to ``n`` (the ones run kept, ``n - iv.n`` more drawn), its interval taken at ``level`` (default
    ``iv.level``; a stricter one for a part that decides a claim against it, :func:`strict_level`). Below the
    replicates run (``n < iv.n``): the chances of ``n`` fresh replicates, none of today's kept (what a plan that
    spends less than the pilot may count on; the pilot's own first ``n`` would choose ``n`` by its outcome).

    Not the plug-in chance at the observed effect and spread, but averaged over what the replicates so far leave
    uncertain (the posterior predictive of the final interval under flat priors on the mean and the log spread):

    - a t-interval (a Bonferroni one too): the spread ``sigma^2 = SS / chi2(n_now - 1)``, the mean given it
      normal about the estimate; given both, the final interval's mean is normal and its sum of squares gains a
      chi-square of ``n - n_now - 1`` degrees, so each (spread, mean) point of a :data:`PILOT_GRID` x
      :data:`PILOT_GRID` grid of quantiles has an exact chi-square probability;
    - a Wilson share: the share beta-distributed (Jeffreys), the new successes beta-binomial, each final count's
      Wilson interval exact;
    - a bootstrap, Newcombe or correlation interval (Fisher-z and cluster bootstrap on the z scale): the final
      estimate normal about today's with variance ``se_now^2 - se_n^2``, its ends as far from it as today's shrunk
      by ``sqrt(n_now / n)`` (``sqrt((n_now - 3) / (n - 3))`` for Fisher-z); an asymmetric interval keeps its
      asymmetry;
    - a deterministic check: its verdict, whatever ``n``.

    At ``n = iv.n`` the verdict of today's interval (chance 0 or 1); below ``n_min`` both chances are 0.
    Raises ValueError where :func:`planning_why` says no.

    Example
    -------
    >>> pilot = t_interval([0.4, 1.6, 1.0])   # mean 1, sd 0.6: the boundary 0.5 is inside its interval
    >>> [round(sum(chances(pilot, "greater", 0.5, n=n)), 2) for n in (3, 10, 40)]
    [0.0, 0.55, 0.79]
    >>> [round(p, 3) for p in chances(share_interval(7, 10), "greater", 0.5, n=30)]   # 7 of 10: inconclusive now
    [0.548, 0.001]
    >>> decided = t_interval([1.0, 1.1, 0.9, 1.05, 0.95, 1.0])  # far above 0.5 at 6: fresh 3 still, mostly
    >>> [round(chances(decided, "greater", 0.5, n=n)[0], 2) for n in (3, 6)]
    [0.97, 1.0]
    """
    why = planning_why(iv)
    if why:
        raise ValueError(why)
    n = iv.n if n is None else int(n)
    if n < n_min or n < 1:
        return 0.0, 0.0
    level = iv.level if level is None else float(level)
    if iv.method == "exact":
        verdict = _verdict(iv, direction, float(boundary), float(margin), int(n_min))
        return float(verdict == REPRODUCED), float(verdict == NOT_REPRODUCED)
    b, m = float(boundary), float(margin)
    if direction == "equivalent":  # inside the margin; wholly above it or wholly below it
        events = ((b - m, b + m),), ((b + m, math.inf), (-math.inf, b - m))
    elif direction == "greater":  # the lower end above b; the upper end below b
        events = ((b, math.inf),), ((-math.inf, b),)
    else:
        events = ((-math.inf, b),), ((b, math.inf),)
    inside = _inside_t if iv.method in T_METHODS else _inside_wilson if iv.method == "wilson" else _inside_normal
    return tuple(float(min(1.0, max(0.0, sum(inside(iv, n, level, a, c) for a, c in event)))) for event in events)


def _inside_t(iv: Interval, n: int, level: float, a: float, c: float) -> float:
    """The chance that the t-interval of the ``n`` extended replicates lies within ``(a, c)`` (an end may be
    infinite): the pilot's spread and mean integrated on a grid of quantiles, the new sum of squares exactly."""
    from scipy import special

    n0, est = iv.n, iv.estimate
    if n < 2:
        return 0.0
    h = (iv.hi - iv.lo) / 2
    ss0 = (h * math.sqrt(n0) / special.stdtrit(n0 - 1, 0.5 + iv.level / 2)) ** 2 * (n0 - 1)
    # an asymmetric interval (a Bonferroni one over many entries: the largest estimate and the largest ends) keeps
    # each end's share of the width
    below, above = (max(1e-9, (est - iv.lo) / h), max(1e-9, (iv.hi - est) / h)) if h > 0 else (1.0, 1.0)
    crit = special.stdtrit(n - 1, 0.5 + level / 2)
    m = n - n0
    if m == 0 or ss0 <= 0:  # today's interval at this level (or a pilot without spread: every rerun the same)
        half = crit * math.sqrt(ss0 / (n0 * (n0 - 1)))
        return float(est - below * half > a and est + above * half < c)
    chi2, z = _pilot_grid(n0 - 1)
    sigma2 = ss0 / chi2  # (J, 1): the spread's posterior quantiles; z (1, I): the new mean's distance from today's
    if m < 0:  # n fresh replicates: their mean about the true one, itself about today's; all their spread unknown
        mean, known, m = est + np.sqrt(sigma2 * (1 / n + 1 / n0)) * z, 0.0, n
    else:
        mean = est + np.sqrt(sigma2 * m / (n * n0)) * z
        known = ss0 + sigma2 * z**2  # the sum of squares before the new replicates' own spread (chi2(m - 1) x sigma^2)
    scale = n * (n - 1) / crit**2
    room = np.full(mean.shape, np.inf)
    ok = np.ones(mean.shape, dtype=bool)
    for edge, gap, share in ((a, mean - a, below), (c, c - mean, above)):
        if math.isfinite(edge):
            ok &= gap > 0
            room = np.minimum(room, ((gap / share) ** 2 * scale - known) / sigma2)
    if m == 1:
        p = (room > 0).astype(float)
    else:
        p = special.chdtr(m - 1, np.clip(room, 0, None))
    return float(np.mean(np.where(ok, p, 0.0)))


def _inside_wilson(iv: Interval, n: int, level: float, a: float, c: float) -> float:
    """The chance that the Wilson interval of ``n`` extended replicates lies within ``(a, c)``: the share
    Jeffreys-beta, the new successes beta-binomial, every final count's interval exact."""
    from scipy import special, stats

    fresh = n < iv.n  # n new replicates, none of today's kept
    m = n if fresh else n - iv.n
    if m > WILSON_EXACT:
        return _inside_normal(iv, n, level, a, c)
    unit = 100.0 if max(abs(iv.estimate), abs(iv.hi)) > 1 + 1e-9 else 1.0  # a share given in percent
    a, c = a / unit, c / unit
    k0 = min(iv.n, max(0, int(round(iv.estimate / unit * iv.n))))
    k = np.arange(m + 1)
    weight = stats.betabinom.pmf(k, m, k0 + 0.5, iv.n - k0 + 0.5) if m else np.ones(1)
    z = special.ndtri(0.5 + level / 2)
    share = (k if fresh else k0 + k) / n
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(np.clip(share * (1 - share), 0, None) / n + z**2 / (4 * n**2))
    return float(np.sum(weight * ((centre - half > a) & (centre + half < c))))


def _inside_normal(iv: Interval, n: int, level: float, a: float, c: float) -> float:
    """The chance that the interval of ``n`` extended replicates lies within ``(a, c)``, the final estimate normal
    about today's (correlations on the z scale), its ends as far from it as today's, shrunk to ``n``."""
    from scipy import special

    z_scale = iv.method in ("fisher-z", "cluster bootstrap")
    f = (lambda x: x if not math.isfinite(x) else math.atanh(min(max(x, -0.999999), 0.999999))) if z_scale else \
        (lambda x: x)
    est, lo, hi, a, c = (f(x) for x in (iv.estimate, iv.lo, iv.hi, a, c))
    if iv.method == "fisher-z" and n <= 3:
        return 0.0
    shrink = math.sqrt((iv.n - 3) / (n - 3)) if iv.method == "fisher-z" else math.sqrt(iv.n / n)
    q0 = special.ndtri(0.5 + iv.level / 2)
    wider = special.ndtri(0.5 + level / 2) / q0
    below, above = (est - lo) * wider * shrink, (hi - est) * wider * shrink
    # the final estimate's spread about today's: the new replicates' share of it, or (n fresh ones, shrink > 1)
    # their own error about the true value plus today's
    sd = (hi - lo) / (2 * q0) * math.sqrt(1 + shrink**2 if n < iv.n else max(0.0, 1 - shrink**2))
    if sd <= 0:
        return float(est - below > a and est + above < c)
    return float(max(0.0, special.ndtr((c - above - est) / sd) - special.ndtr((a + below - est) / sd)))


@functools.lru_cache(maxsize=256)
def _pilot_grid(df: int) -> tuple[np.ndarray, np.ndarray]:
    """:data:`PILOT_GRID` mid-quantiles of chi-square(``df``), ``(J, 1)``, and of the standard normal, ``(1, I)``."""
    from scipy import special

    u = (np.arange(PILOT_GRID) + 0.5) / PILOT_GRID
    return special.chdtri(df, 1 - u)[:, None], special.ndtri(u)[None, :]


def _smallest(fits: Callable[[int], bool], floor: int) -> tuple[int | None, str]:
    """The smallest ``n >= floor`` with ``fits(n)`` (which turns true for good as n grows): doubling, then halving."""
    if fits(floor):
        return floor, ""
    lo, hi = floor, floor * 2
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > N_NEEDED_MAX:
            return _cap(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi, ""


def _cap(n: int) -> tuple[int | None, str]:
    return (n, "") if n <= N_NEEDED_MAX else (None, f"more than {N_NEEDED_MAX:,} replicates: not within reach")


def _floats(values) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    if isinstance(values, (int, float, np.floating, np.integer)):
        values = [values]
    return np.asarray(values if not isinstance(values, Sequence) or len(values) else [], dtype=float).ravel()


def _num(x: float, sign: bool = True) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x:+.3g}" if sign else f"{x:.3g}"


def _plural(unit: str) -> str:
    return {"class": "classes", "deterministic": "checks", "draw": "draws"}.get(unit, unit + "s")
