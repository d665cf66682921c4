"""Paper D, chapter D1 (invlib.papers.d.rotations and rotations_reports)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from invlib import results
from invlib.papers.d import rotations as D
from invlib.papers.d import rotations_reports as R


def _frame(upper, lower, phi):
    phi = pd.Series(phi)
    return pd.DataFrame(dict(phi=phi, upper=upper, lower=lower, upper_true=D.BOUNDARY - phi,
                             lower_true=D.BOUNDARY + phi))


def test_class_angle_is_the_angle_within_the_class():
    S = D.settings("smoke", n_train=8, n_test=200)
    test = D.sprite_data(S)[1]
    phi = D.class_angle(test)
    assert (phi.abs() <= math.radians(S.max_angle) + 1e-5).all()
    up = test.factors["upside_down"] == 1
    assert up.any() and (~up).any()


def test_slopes_of_the_boundary_and_of_a_constant_range():
    phi = np.linspace(-0.7, 0.7, 21)
    exact = D.slopes(_frame(D.BOUNDARY - phi, D.BOUNDARY + phi, phi))
    assert exact["upper_slope"] == pytest.approx(-1) and exact["lower_slope"] == pytest.approx(1)
    assert exact["near_boundary"] == 1 and exact["mean_gap"] == pytest.approx(0, abs=1e-9)
    flat = D.slopes(_frame(np.full(21, 0.8), np.full(21, 0.8), phi))
    assert flat["upper_slope"] == pytest.approx(0, abs=1e-9) and flat["near_boundary"] < 0.5


def test_bounds_of_augerino_are_one_range_for_all():
    S = D.settings("smoke", n_train=8, n_test=16)
    net, _, loss = D.make(S, "augerino")
    df = D.bounds(net.eval(), D.sprite_data(S)[1])
    assert loss is None and df.upper.nunique() == 1 and (df.upper == df.lower).all()


def test_report_verdicts_follow_the_numbers():
    phi = np.linspace(-0.7, 0.7, 21)
    per = {"instaaug": _frame(D.BOUNDARY - 0.9 * phi, D.BOUNDARY + 0.9 * phi, phi),
           "augerino": _frame(np.full(21, 0.8), np.full(21, 0.8), phi)}
    run = results.Run("demo", "smoke")
    R.report(run, D.settings("smoke"), per, {"instaaug": 1.0, "augerino": 1.0})
    assert {c: v["verdict"] for c, v in run.claims.items()} == {
        "fig5/bounds_follow_angle": "reproduced", "fig5/reaches_boundary": "reproduced",
        "fig5/augerino_covers_part": "reproduced"}
    per["instaaug"] = _frame(np.full(21, 1.0), np.full(21, 1.0), phi)  # one range: no slope
    run = results.Run("demo", "smoke")
    R.report(run, D.settings("smoke"), per, {"instaaug": 1.0, "augerino": 1.0})
    assert run.claims["fig5/bounds_follow_angle"]["verdict"] == "not reproduced"


def test_claims_over_seeds_need_a_majority():
    phi = np.linspace(-0.7, 0.7, 21)
    per = {"instaaug": _frame(D.BOUNDARY - 0.9 * phi, D.BOUNDARY + 0.9 * phi, phi)}
    good = dict(upper_slope=-0.9, lower_slope=0.9, near_boundary=0.8, mean_gap=0.1, width=3.0, test_acc=1.0)
    bad = dict(upper_slope=0.0, lower_slope=0.0, near_boundary=0.0, mean_gap=1.2, width=2.0, test_acc=1.0)
    for rows, expected in (([good, good, bad], "reproduced"), ([good, bad, bad], "partly"),
                           ([bad, bad, bad], "not reproduced")):
        seeds = pd.DataFrame([dict(seed=i, **r) for i, r in enumerate(rows)])
        run = results.Run("demo", "smoke")
        _, facts = R.report(run, D.settings("smoke"), per, {"instaaug": 1.0}, seeds)
        assert run.claims["fig5/bounds_follow_angle"]["verdict"] == expected
        assert run.claims["fig5/reaches_boundary"]["verdict"] == expected
        assert facts["seeds"] == 3 and facts["seeds_following"] == sum(r is good for r in rows)
        assert "seed 2:" in run.claims["fig5/bounds_follow_angle"]["ours"]


def test_settings_check_the_angle():
    with pytest.raises(ValueError, match="max_angle"):
        D.settings("smoke", max_angle=120.0)
    with pytest.raises(ValueError, match="seeds"):
        D.settings("cpu", seeds=0)
    with pytest.raises(ValueError, match="Valid methods"):
        D.make(D.settings("smoke"), "augnet")


@pytest.mark.slow
def test_instaaug_learns_ranges_that_widen_with_the_entropy_bonus():
    S = D.settings("smoke", n_train=256, n_test=64, epochs=2, progress=False)
    train, test = D.sprite_data(S)
    torch.manual_seed(0)
    out = D.train(S, train, test)
    start = D.bounds(D.make(S, "instaaug")[0].eval(), test)
    learned = D.bounds(out["instaaug"][0], test)
    assert (learned.upper + learned.lower).mean() > (start.upper + start.lower).mean()


def test_the_module_starts_from_the_seed_whatever_ran_before():
    # the invariance module's initial weights once depended on the caller's random state (a cached data set or
    # not gave another start, and another result): they depend on the seed alone
    a = D.make(D.settings("smoke"), "instaaug")[0]
    torch.rand(7)
    b = D.make(D.settings("smoke"), "instaaug")[0]
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    c = D.make(D.settings("smoke", seed=1), "instaaug")[0]
    assert not torch.equal(a.augment.params.head.weight, c.augment.params.head.weight)


def test_seed_slopes_takes_the_first_seed_from_train():
    S = D.settings("smoke", n_train=64, n_test=16, epochs=1, seeds=2, progress=False)
    train, test = D.sprite_data(S)
    trained = D.train(S, train, test)
    given, cached = D.seed_slopes(S, train, test, trained), D.seed_slopes(S, train, test)
    pd.testing.assert_frame_equal(given, cached)  # the same numbers as the model loaded from the cache
    assert given.test_acc[0] == trained["instaaug"][1][-1]["test_acc"]
