"""invlib.verdicts: the one decision function, its intervals near each boundary, and how often two reruns of the
same claim disagree (a simulation with numpy draws)."""

import math

import numpy as np
import pytest
from scipy import stats

from invlib import results, verdicts
from invlib.verdicts import INCONCLUSIVE, NOT_MEASURABLE, NOT_REPRODUCED, PARTLY, REPRODUCED

SEED = dict(reason="a stated boundary", unit="seed")


def test_a_gain_is_decided_by_which_side_of_the_boundary_the_interval_lies():
    sd = np.array([-1.0, 0.0, 1.0])  # three seeds with sd 1: the 95 % t half-width is 4.303 / sqrt(3) = 2.484
    h = 4.302653 / math.sqrt(3)
    assert verdicts.decide(h + 0.01 + sd, **SEED).verdict == REPRODUCED  # the lower end just above 0
    assert verdicts.decide(h - 0.01 + sd, **SEED).verdict == INCONCLUSIVE  # ... just below
    assert verdicts.decide(-h - 0.01 + sd, **SEED).verdict == NOT_REPRODUCED  # the upper end just below 0
    assert verdicts.decide(-h + 0.01 + sd, **SEED).verdict == INCONCLUSIVE
    # the boundary is the smallest effect that matters, not 0
    assert verdicts.decide(1 + h + 0.01 + sd, boundary=1.0, **SEED).verdict == REPRODUCED
    assert verdicts.decide(1 + h - 0.01 + sd, boundary=1.0, **SEED).verdict == INCONCLUSIVE
    # "less" mirrors "greater"
    assert verdicts.decide(-h - 0.01 + sd, direction="less", **SEED).verdict == REPRODUCED
    assert verdicts.decide(h + 0.01 + sd, direction="less", **SEED).verdict == NOT_REPRODUCED


def test_fewer_replicates_than_n_min_are_inconclusive_however_large_the_effect():
    ev = verdicts.decide([10.0, 11.0], **SEED)
    assert ev.verdict == INCONCLUSIVE and ev.n == 2 and ev.lo > 0, "the interval clears 0, but 2 < n_min = 3"
    assert "needs >= 3 seeds" in ev.text()
    assert verdicts.decide([10.0], **SEED).verdict == INCONCLUSIVE
    assert verdicts.decide([10.0, 11.0], n_min=2, **SEED).verdict == REPRODUCED


def test_an_inconclusive_claim_says_how_many_replicates_would_decide_it():
    ev = verdicts.decide([0.5, 1.5, 1.0, 2.0, 0.0], **SEED)  # mean 1, sd 0.79, half-width 0.98: just short
    assert ev.verdict == REPRODUCED or ev.n_needed is None
    ev = verdicts.decide([0.5, -0.5, 1.5], **SEED)  # mean 0.5, half-width 2.48
    assert ev.verdict == INCONCLUSIVE
    sd = np.std([0.5, -0.5, 1.5], ddof=1)
    fits = [n for n in range(4, 200) if stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) < 0.5]
    assert ev.n_needed == fits[0], "the t quantile taken at the needed n, not at today's"
    assert ev.n_needed < math.ceil(3 * (ev.hi - ev.lo) ** 2 / 4 / 0.5**2), "today's quantile overstates it"
    one = verdicts.decide([1.0], **SEED)
    assert one.n_needed is None and one.n_needed_why.startswith("one replicate")
    assert f"{ev.n_needed} seeds would decide" in ev.text()
    assert verdicts.decide([0.0, 1.0, -1.0], **SEED).n_needed is None, "an estimate on the boundary: no number"


def test_equivalence_needs_the_90_percent_interval_inside_the_margin():
    sd = np.array([-1.0, 0.0, 1.0])
    h90 = 2.919986 / math.sqrt(3)  # the 90 % t half-width at 2 df
    eq = dict(direction="equivalent", margin=2.0, **SEED)
    assert verdicts.decide(2.0 - h90 - 0.01 + sd, **eq).verdict == REPRODUCED
    assert verdicts.decide(2.0 - h90 + 0.01 + sd, **eq).verdict == INCONCLUSIVE
    assert verdicts.decide(2.0 + h90 + 0.01 + sd, **eq).verdict == NOT_REPRODUCED  # wholly outside the margin
    assert verdicts.decide(-2.0 - h90 - 0.01 + sd, **eq).verdict == NOT_REPRODUCED
    assert verdicts.decide(2.0 + h90 - 0.01 + sd, **eq).verdict == INCONCLUSIVE
    assert verdicts.decide([0.0, 0.0, 0.0], **eq).verdict == REPRODUCED, "no spread: the point is the interval"
    ev = verdicts.decide(sd, **eq)
    assert ev.level == 0.9 and ev.margin == 2.0 and "within 0 ± 2" in ev.text()


def test_bad_declarations_are_refused_with_what_to_pass():
    with pytest.raises(ValueError, match="reason"):
        verdicts.decide([1.0, 2.0, 3.0], reason=" ", unit="seed")
    with pytest.raises(ValueError, match="Valid units"):
        verdicts.decide([1.0, 2.0, 3.0], reason="r", unit="seeds")
    with pytest.raises(ValueError, match="Valid directions"):
        verdicts.decide([1.0, 2.0, 3.0], direction="up", **SEED)
    with pytest.raises(ValueError, match="margin > 0"):
        verdicts.decide([1.0, 2.0, 3.0], direction="equivalent", **SEED)
    with pytest.raises(ValueError, match="boundary="):
        verdicts.decide([1.0, 2.0, 3.0], margin=0.1, **SEED)
    with pytest.raises(ValueError, match="0.9 interval or a wider one"):
        verdicts.decide(verdicts.t_interval([1.0, 2.0, 3.0], level=0.8), direction="equivalent", margin=1, **SEED)
    wide = verdicts.t_interval([1.0, 2.0, 3.0], level=1 - 0.05 / 10)  # Bonferroni over 10 tests: accepted
    assert verdicts.decide(wide, **SEED).level == pytest.approx(0.995)


def test_parts_are_partly_only_when_decisive_and_split():
    up, down = verdicts.decide([1.0, 1.1, 0.9], **SEED), verdicts.decide([-1.0, -1.1, -0.9], **SEED)
    unsure, absent = verdicts.decide([1.0, -1.0, 0.5], **SEED), verdicts.not_measurable("no boxes")
    assert verdicts.decide_parts({"a": up, "b": up}).verdict == REPRODUCED
    assert verdicts.decide_parts({"a": down, "b": down}).verdict == NOT_REPRODUCED
    assert verdicts.decide_parts({"a": up, "b": down}).verdict == PARTLY
    assert verdicts.decide_parts({"a": up, "b": unsure}).verdict == INCONCLUSIVE
    assert verdicts.decide_parts({"a": up, "b": absent}).verdict == REPRODUCED, "a part this profile cannot test"
    assert verdicts.decide_parts({"a": absent}).verdict == NOT_MEASURABLE
    many = verdicts.decide_parts({str(i): ev for i, ev in enumerate([up, up, down, unsure])})
    assert many.text() == "4 parts: 2 reproduced, 1 not reproduced, 1 inconclusive at this budget"
    both = verdicts.decide_parts({"rotate": up, "shear": unsure}).to_dict()
    assert set(both["parts"]) == {"rotate", "shear"} and both["parts"]["shear"]["verdict"] == INCONCLUSIVE


def test_intervals_of_shares_rates_correlations_items_and_matrices():
    share = verdicts.share_interval(10, 10)
    assert share.estimate == 1 and 0.69 < share.lo < 0.73 and share.hi == 1  # Wilson, never [1, 1]
    diff = verdicts.rate_difference_interval(6, 6, 6, 6, level=0.9)
    assert diff.estimate == 0 and diff.lo < -0.25 < 0.25 < diff.hi, "six seeds a side cannot show equal rates"
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    rho = verdicts.rho_interval(x, x + rng.normal(scale=0.5, size=40))
    assert 0.4 < rho.lo < rho.estimate < rho.hi < 0.9 and rho.method == "fisher-z"
    pairs = np.repeat(np.arange(20), 2)  # 20 variants, two seeds each: the pairs are resampled whole
    clustered = verdicts.rho_interval(x, x + rng.normal(scale=0.5, size=40), groups=pairs)
    assert clustered.method == "cluster bootstrap" and clustered.n == 20 and clustered.lo < clustered.hi
    assert math.isnan(verdicts.rho_interval([1, 2, 3], [1, 2, 3]).lo), "three models cannot bound a correlation"
    hits = rng.random(200) < 0.7
    items = verdicts.bootstrap_interval(hits)
    assert items.estimate == hits.mean() and items.lo < items.estimate < items.hi and items.hi - items.lo < 0.15
    p = rng.random((10, 2))
    d = np.abs(p[:, None] - p[None]).sum(-1)
    assert verdicts.mantel(d, d)[1] < 0.01
    noise = rng.random((10, 10))
    assert verdicts.mantel(d, noise + noise.T)[1] > 0.01
    with pytest.raises(ValueError, match="square matrices"):
        verdicts.mantel(d, d[:5])


def _slow_rho(x, y, groups, seed, resamples):
    """The cluster bootstrap one resample at a time (spearmanr per resample): the reference of the batched one."""
    from scipy import stats

    keys = np.unique(groups)
    members = [np.flatnonzero(groups == k) for k in keys]

    def statistic(pick):
        rows = np.concatenate([members[int(i)] for i in pick])
        if np.ptp(x[rows]) == 0 or np.ptp(y[rows]) == 0:
            return 0.0
        return stats.spearmanr(x[rows], y[rows]).statistic

    ci = stats.bootstrap((np.arange(keys.size),), statistic, vectorized=False, n_resamples=resamples,
                         method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return ci.low, ci.high


def _slow_mantel(a, b, permutations, seed):
    from scipy import stats

    iu = np.triu_indices(a.shape[0], 1)
    ok = np.isfinite(a[iu]) & np.isfinite(b[iu])

    def statistic(order):
        return stats.spearmanr(a[iu][ok], b[np.ix_(order, order)][iu][ok]).statistic

    res = stats.permutation_test((np.arange(a.shape[0]),), statistic, permutation_type="pairings",
                                 alternative="greater", n_resamples=permutations, vectorized=False,
                                 rng=np.random.default_rng(seed))
    return res.statistic, res.pvalue


@pytest.mark.parametrize("trial", range(6))
def test_batched_resamples_give_bit_for_bit_the_numbers_of_one_resample_at_a_time(trial):
    """Every resample at once (ranks counted with weights) against spearmanr per resample: the same draws, the same
    numbers to the last bit, with ties, groups of unequal size, NaN, and matrices small enough for the exact test."""
    import warnings

    rng = np.random.default_rng(trial)
    n = 9 + 7 * trial
    x, y = rng.normal(size=n), rng.normal(size=n)
    x = np.round(x, 0) if trial % 2 else x + y  # ties in x
    groups = rng.integers(0, n // 3, n) if trial % 3 else np.arange(n) // 3  # unequal or equal groups
    iv = verdicts.rho_interval(x, y, groups=groups, seed=trial, resamples=300)
    assert (iv.lo, iv.hi) == _slow_rho(x, y, groups, trial, 300)
    k = 4 + 2 * trial  # 4 and 6 classes: every permutation (exact test)
    p = rng.random((k, 2))
    a = np.abs(p[:, None] - p[None]).sum(-1)
    b = np.round(a + rng.random((k, k)), 1)
    b = b + b.T
    if trial == 5:
        b[0, 1] = b[1, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert verdicts.mantel(a, b, permutations=300, seed=trial) == _slow_mantel(a, b, 300, trial)
    hits = (rng.random(n) < 0.6).astype(float)
    slow = lambda v: float(np.mean(v))  # noqa: E731  (no axis: called once per resample)
    assert verdicts.bootstrap_interval(hits, seed=trial) == verdicts.bootstrap_interval(hits, slow, seed=trial)
    from scipy import stats

    assert verdicts.rank_correlation(x, y, counts=np.ones((1, n)))[0] == stats.spearmanr(x, y).statistic
    assert math.isnan(verdicts.rank_correlation([1.0, 1, 1], [1.0, 2, 3])[0])
    assert verdicts.rank_correlation([1.0, 1, 1], [1.0, 2, 3], constant=0.0)[0] == 0.0


def test_the_evidence_goes_into_the_json_without_nan():
    ev = verdicts.decide([1.0], **SEED).to_dict()
    assert ev["lo"] is None and ev["hi"] is None and ev["verdict"] == INCONCLUSIVE and ev["n_min"] == 3
    from invlib.protocol import Claim, Part

    declared = Claim("x", "demo", "c", "1", "Table 1", Part("gain", "seed", smallest=1.0, reason="a point"))
    assert results.Run("smoke", name="demo").claim(declared, 1, verdicts.not_measurable("n/a")) == NOT_MEASURABLE


def _rerun(true: float, n: int, runs: int, rng, **declared) -> np.ndarray:
    """Verdicts of ``runs`` simulated runs of a claim whose per-seed effect is N(true, 1)."""
    draws = rng.normal(true, 1.0, size=(runs, n))
    return np.array([verdicts.decide(d, **declared).verdict for d in draws])


def _half_width(n: int, level: float, rng) -> float:
    """The expected half-width of the t-interval of n unit-variance draws at ``level`` (by simulation)."""
    return float(np.mean([verdicts.t_interval(d, level).half_width for d in rng.normal(size=(4000, n))]))


@pytest.mark.slow  # 2,000 simulated pairs: make test runs it, make test-fast stays under 2 minutes
@pytest.mark.parametrize("direction", ["greater", "less"])
def test_two_reruns_at_the_boundary_rarely_disagree_and_a_clear_effect_is_found(direction):
    rng = np.random.default_rng(1)
    n, pairs, b = 3, 2000, 0.5
    declared = dict(direction=direction, boundary=b, **SEED)
    first, second = _rerun(b, n, pairs, rng, **declared), _rerun(b, n, pairs, rng, **declared)
    opposite = ((first == REPRODUCED) & (second == NOT_REPRODUCED)) | ((first == NOT_REPRODUCED)
                                                                      & (second == REPRODUCED))
    assert opposite.mean() <= 0.05, opposite.mean()
    h = _half_width(n, 0.95, rng)
    side = 1 if direction == "greater" else -1
    assert (_rerun(b + side * 2 * h, n, pairs, rng, **declared) == REPRODUCED).mean() >= 0.9
    assert (_rerun(b - side * 2 * h, n, pairs, rng, **declared) == NOT_REPRODUCED).mean() >= 0.9


@pytest.mark.slow  # 2,000 simulated pairs
def test_two_reruns_of_an_equivalence_claim_at_its_margin_rarely_disagree():
    rng = np.random.default_rng(2)
    n, pairs = 3, 2000
    h = _half_width(n, 0.9, rng)
    declared = dict(direction="equivalent", margin=4 * h, **SEED)
    first, second = _rerun(4 * h, n, pairs, rng, **declared), _rerun(4 * h, n, pairs, rng, **declared)
    opposite = ((first == REPRODUCED) & (second == NOT_REPRODUCED)) | ((first == NOT_REPRODUCED)
                                                                      & (second == REPRODUCED))
    assert opposite.mean() <= 0.05, opposite.mean()
    assert (_rerun(2 * h, n, pairs, rng, **declared) == REPRODUCED).mean() >= 0.9  # inside by twice h
    assert (_rerun(6 * h, n, pairs, rng, **declared) == NOT_REPRODUCED).mean() >= 0.9  # outside by twice h


def test_t_intervals_are_t_interval_of_each_row():
    """Every row's t-interval at once: bit for bit t_interval's, a constant row, a NaN and column-major input
    (a B4 search's changes) included."""
    rng = np.random.default_rng(0)
    x = np.asfortranarray(rng.normal(size=(6, 48)) * 10)
    x[1], x[2, 3] = 2.5, np.nan
    mean, lo, hi = verdicts.t_intervals(x, 1 - 0.05 / 50)
    for r in range(6):
        iv = verdicts.t_interval(x[r], 1 - 0.05 / 50)
        assert np.array_equal([iv.estimate, iv.lo, iv.hi], [mean[r], lo[r], hi[r]], equal_nan=True)
    with pytest.raises(ValueError, match="2-D array; got shape \\(48,\\)"):
        verdicts.t_intervals(x[0])


def test_n_needed_plans_a_bonferroni_t_and_with_power_averages_over_the_pilot():
    t = verdicts.t_interval([0.1, 0.4, 0.25, 0.3], 0.999)
    bonf = verdicts.Interval(t.estimate, t.lo, t.hi, t.n, t.level, "bonferroni t")
    assert verdicts.n_needed(bonf, "greater", 0.0) == verdicts.n_needed(t, "greater", 0.0)  # was "no formula"
    assert verdicts.n_needed(bonf, "greater", 0.0)[0] > t.n
    # with power: the smallest n whose chance of a decision, over what the pilot leaves uncertain, reaches it
    pilot = verdicts.t_interval([0.4, 1.6, 1.0])
    n, why = verdicts.n_needed(pilot, "greater", 0.5, n_min=3, power=0.8)
    assert why == "" and sum(verdicts.chances(pilot, "greater", 0.5, n=n)) >= 0.8
    assert sum(verdicts.chances(pilot, "greater", 0.5, n=n - 1)) < 0.8
    # an estimate on the boundary: the plug-in has no number, the pilot's uncertainty gives one
    on = verdicts.t_interval([-1.0, 0.0, 1.0])
    assert verdicts.n_needed(on, "greater", 0.0)[0] is None and verdicts.n_needed(on, "greater", 0.0, power=0.5)[0]
    # an equivalence: both edges of the margin must be cleared, so it needs more than either edge alone (the old
    # power took the nearer edge only)
    eq = verdicts.t_interval([0.4, -0.4, 0.3, -0.2], 0.90)
    assert min(verdicts.chances(eq, "less", 0.5, n=6)[0], verdicts.chances(eq, "greater", -0.5, n=6)[0]) >= 0.8
    assert sum(verdicts.chances(eq, "equivalent", 0.0, 0.5, n=6)) < 0.8
    assert verdicts.n_needed(eq, "equivalent", 0.0, 0.5, power=0.8)[0] > 6
    assert verdicts.n_needed(verdicts.exact(0.3), "greater", 0.5, power=0.8)[0] is None


@pytest.mark.parametrize("train_sd, item_sd, items", [(1.0, 20.0, 400), (0.0, 10.0, 100), (3.0, 5.0, 1000)])
def test_variance_split_recovers_the_evaluation_and_training_parts_it_was_given(train_sd, item_sd, items):
    rng = np.random.default_rng(1)
    seeds = 300
    x = rng.normal(0.0, train_sd, (seeds, 1)) + rng.normal(0.0, item_sd, (seeds, items))
    split = verdicts.variance_split(x)
    evaluation = item_sd ** 2 / items
    assert split["seeds"] == seeds and split["items"] == items
    assert split["evaluation"] == pytest.approx(evaluation, rel=0.05)
    assert split["between"] == pytest.approx(train_sd ** 2 + evaluation, rel=0.25)
    assert split["training"] == pytest.approx(train_sd ** 2, abs=0.3 * (train_sd ** 2 + evaluation))
    share = evaluation / (train_sd ** 2 + evaluation)
    assert split["evaluation_share"] == pytest.approx(share, abs=0.15)


def test_variance_split_of_one_seed_has_no_between_part_and_bad_shapes_are_refused():
    one = verdicts.variance_split([[1.0, 0.0, 1.0]])
    assert one["between"] is None and one["evaluation_share"] is None and one["evaluation"] > 0
    with pytest.raises(ValueError, match="seeds, items"):
        verdicts.variance_split([1.0, 2.0])
    # a larger test set: items_for_half is where evaluation would be half the training part
    rng = np.random.default_rng(2)
    split = verdicts.variance_split(rng.normal(0, 2.0, (200, 1)) + rng.normal(0, 40.0, (200, 100)))
    assert split["items_for_half"] == pytest.approx(2 * 40.0 ** 2 / 4.0, rel=0.3)
