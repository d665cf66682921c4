"""Paper D, chapter D2 (invlib.papers.d.cropping and cropping_reports)."""

import math

import pandas as pd
import pytest
import torch

from invlib import results
from invlib.learned import instaaug as I
from invlib.papers.d import cropping as D
from invlib.papers.d import cropping_reports as R
from invlib.papers.d.criteria import ENTROPY_IN_BAND_SHARE, INPUT_DEPENDENT_KL, SIZE_FOLLOWS_OBJECT_RHO


def _acc(rows):
    return pd.DataFrame(rows, columns=["method", "variant", "seed", "acc", "acc_tta", "seconds_per_epoch"])


def test_settings_and_models_of_every_method():
    S = D.settings("smoke")
    for m in D.METHODS:
        net, aug = D.model(S, m, 10)
        assert (aug is not None) == (m == "random_crop")
        if m in ("instaaug", "no_input", "class_specific"):
            assert net.augment.params.num_crops == 246
    assert D.model(S, "no_input", 10)[0].augment.params.input_free
    with pytest.raises(ValueError, match="pretrain_epochs"):
        D.settings("smoke", pretrain_epochs=5)
    with pytest.raises(ValueError, match="band"):
        D.settings("smoke", band=[3.5, 3.0])


def test_table1_takes_the_best_random_crop_range():
    acc = _acc([("none", "none", 0, 0.5, 0.5, 1), ("random_crop", "random_crop 0.1-1", 0, 0.5, 0.62, 1),
                ("random_crop", "random_crop 0.35-1", 0, 0.5, 0.58, 1), ("instaaug", "instaaug", 0, 0.55, 0.6, 2)])
    t = R.table1(D.settings("smoke"), acc).set_index("method")
    assert t.loc["Random crop (tuned) (area 0.1-1)", "this run (%)"] == 62.0
    assert t.loc["InstaAug", "paper (%)"] == 66.02


def _family(gains, seconds=(1.0, 1.5)):
    """Per seed none at 50 %, the random crop at 55 %, InstaAug at 55 % + gain: an accuracy table."""
    rows = []
    for seed, g in enumerate(gains):
        rows += [("none", "none", seed, 0.5, 0.5, seconds[0]),
                 ("random_crop", "random_crop 0.1-1", seed, 0.5, 0.55, seconds[0]),
                 ("instaaug", "instaaug", seed, 0.5, 0.55 + g / 100, seconds[1])]
    return _acc(rows)


def _claims(acc, crops=None, family=()):
    run = results.Run("demo", "smoke")
    _, facts = R.report(run, D.settings("smoke"), acc, pd.DataFrame() if crops is None else crops, list(family))
    return run, facts


def test_ranking_is_decided_over_paired_seeds():
    cases = {"reproduced": [1.0, 1.2, 1.4], "not reproduced": [-1.0, -1.2, -1.4],
             "inconclusive at this budget": [2.0, -1.5, 0.5]}
    for expected, gains in cases.items():
        run, _ = _claims(_family(gains))
        part = run.claims["table1/instaaug_random_none"]["evidence"]["parts"]["InstaAug > random crop"]
        assert part["verdict"] == expected and part["unit"] == "seed" and part["n"] == 3, expected
    run, _ = _claims(_family([1.0, 1.2, 1.4]))
    assert run.claims["table1/instaaug_random_none"]["verdict"] == "reproduced"
    run, _ = _claims(_family([-1.0, -1.2, -1.4]))  # random crop > none holds, InstaAug > random crop reversed
    assert run.claims["table1/instaaug_random_none"]["verdict"] == "partly"


def test_one_seed_is_inconclusive_however_large_the_gain():
    run, facts = _claims(_family([20.0]))
    claim = run.claims["table1/instaaug_random_none"]
    assert claim["verdict"] == "inconclusive at this budget"
    part = claim["evidence"]["parts"]["random crop > none"]
    assert (part["n"], part["n_min"]) == (1, 3) and part["estimate"] == pytest.approx(5.0)
    assert facts["order_text"].startswith("1 seed cannot decide")


def test_ranked_pairs_seeds_and_skips_the_band_variants():
    acc = pd.concat([_family([1.0, 1.2, 1.4]), _acc([("instaaug", "band 2-2.5", 0, 0.1, 0.1, 1)])])
    assert list(R.by_seed(acc, "instaaug").index) == [0, 1, 2]
    assert R.gains(R.by_seed(acc, "instaaug"), R.by_seed(acc, "none")).round(6).tolist() == [6.0, 6.2, 6.4]
    # a seed only one side has is left out of the pairs
    assert R.ranked(acc[~((acc.method == "none") & (acc.seed == 2))], "instaaug", "none").n == 2


def test_cost_is_a_ratio_per_run_against_its_boundary():
    b = R.COST_RATIO[0]
    for ratios, expected in (([b - 0.6, b - 0.5, b - 0.55], "reproduced"),
                             ([b + 0.6, b + 0.5, b + 0.55], "not reproduced"),
                             ([b - 0.6, b + 0.5, b], "inconclusive at this budget")):
        acc = pd.concat([_family([1.0], seconds=(1.0, r)).assign(seed=s) for s, r in enumerate(ratios)])
        run, _ = _claims(acc)
        ev = run.claims["appD3/cost"]["evidence"]
        assert ev["verdict"] == expected and ev["unit"] == "run" and ev["direction"] == "less", ratios
    run, _ = _claims(_family([1.0], seconds=(1.0, 1.2)))
    assert run.claims["appD3/cost"]["verdict"] == "inconclusive at this budget"


def _crops(kl, rho, box, free_box, side_lrp=(0.97, 0.96, 0.98)):
    rows = []
    for s, (k, r, bx, fb, sl) in enumerate(zip(kl, rho, box, free_box, side_lrp)):
        rows += [dict(variant="instaaug", seed=s, side=0.6, centre_in_box=bx, covers_object=1.0, entropy=3.2,
                      kl_to_mean=k, side_rho=r),
                 dict(variant="no_input", seed=s, side=0.7, centre_in_box=fb, covers_object=1.0, entropy=3.1,
                      kl_to_mean=0.0, side_rho=math.nan),
                 dict(variant="no_lrp", seed=s, side=sl, centre_in_box=1.0, covers_object=1.0, entropy=1.0,
                      kl_to_mean=math.nan, side_rho=math.nan)]
    return pd.DataFrame(rows)


def test_crop_claims_use_papers_shared_boundaries_over_seeds():
    kl, _ = INPUT_DEPENDENT_KL
    rho, _ = SIZE_FOLLOWS_OBJECT_RHO
    above = _crops([kl + 0.01, kl + 0.015, kl + 0.02], [rho + 0.1, rho + 0.12, rho + 0.14], [0.6, 0.61, 0.62],
                   [0.5, 0.5, 0.505])
    below = _crops([kl - 0.01, kl - 0.015, kl - 0.02], [rho - 0.1, rho - 0.12, rho - 0.14], [0.51, 0.515, 0.52],
                   [0.5, 0.5, 0.5])
    ids = ("fig6/input_dependent", "fig6/size_follows_object", "fig6/concentrates_on_object")
    for crops, expected in ((above, "reproduced"), (below, "not reproduced")):
        run, facts = _claims(_family([1.0, 1.2, 1.4]), crops)
        assert {run.claims[c]["verdict"] for c in ids} == {expected}
        assert all(run.claims[c]["evidence"]["n"] == 3 and run.claims[c]["evidence"]["unit"] == "seed" for c in ids)
    assert run.claims["fig6/input_dependent"]["evidence"]["boundary"] == kl
    one = above[above.seed == 0]
    run, facts = _claims(_family([1.0]), one)
    assert {run.claims[c]["verdict"] for c in ids} == {"inconclusive at this budget"}
    assert facts["kl"] == pytest.approx(kl + 0.01) and "cannot decide" in facts["input_text"]


def test_uniform_parameterisations_near_identity_has_parts():
    crops = _crops([0.2] * 3, [0.5] * 3, [0.6] * 3, [0.5] * 3)
    near_none = pd.concat([_family([1.0, 1.2, 1.4]),
                           _acc([("no_lrp", "no_lrp", s, 0.5, 0.5 + 0.001 * s, 1) for s in range(3)])])
    run, _ = _claims(near_none, crops)
    claim = run.claims["table1/uniform_stays_near_identity"]
    assert claim["verdict"] == "reproduced" and len(claim["evidence"]["parts"]) == 2
    near_rc = pd.concat([_family([1.0, 1.2, 1.4]),
                         _acc([("no_lrp", "no_lrp", s, 0.5, 0.55 - 0.001 * s, 1) for s in range(3)])])
    run, _ = _claims(near_rc, crops)
    assert run.claims["table1/uniform_stays_near_identity"]["verdict"] == "partly"  # near whole image, accuracy not


def _trained(variant, seed, share_in_band, final=3.2):
    """An InstaAug model with 100 band checks: the first 70 in the band [3, 3.5], then ``share_in_band`` of the
    last 30 in it and the rest below."""
    inside = round(30 * share_in_band)
    checks = [(s, 3.2 if s < 70 + inside else 1.0, 0.2) for s in range(100)]
    hist = [dict(state=dict(checks=checks, entropy=final, **{"lambda": 0.2}))]
    return D.Trained("instaaug", variant, seed, torch.nn.Identity(), hist, 0.0)


def test_entropy_band_and_collapse_are_decided_over_seeds():
    b, _ = ENTROPY_IN_BAND_SHARE
    for shares, expected in (([b + 0.3, b + 0.4, b + 0.35], "reproduced"),
                             ([b - 0.3, b - 0.2, b - 0.25], "not reproduced")):
        family = [_trained("instaaug", s, x) for s, x in enumerate(shares)]
        run, _ = _claims(_family([1.0, 1.2, 1.4]), family=family)
        assert run.claims["figE1/entropy_in_band"]["verdict"] == expected, shares
        assert run.claims["figE1/entropy_in_band"]["evidence"]["boundary"] == b
    fixed = [_trained("fixed lambda 0.02", 0, 0.0, final=0.1), _trained("fixed lambda 0.3", 0, 0.0, final=3.0)]
    run, facts = _claims(_family([1.0]), family=fixed)
    claim = run.claims["figE1/small_fixed_lambda_collapses"]
    assert claim["verdict"] == "inconclusive at this budget" and claim["evidence"]["estimate"] == pytest.approx(0.1)
    assert facts["fixed_lam"] == 0.02 and "three seeds" in facts["collapse_text"]
    empty = D.Trained("instaaug", "instaaug", 0, torch.nn.Identity(), [dict(state=dict(checks=[], entropy=1.0))], 0.0)
    run, _ = _claims(_family([1.0]), family=[empty])
    assert run.claims["figE1/entropy_in_band"]["verdict"] == "not measurable at this profile"


def test_bands_inside_two_to_four_only():
    assert R._inside("band 2-2.5") and R._inside("band 3.5-4") and not R._inside("band 4-4.5")
    acc = pd.concat([_family([1.0]), _acc([("instaaug", "band 2-2.5", 0, 0.6, 0.6, 1),
                                           ("instaaug", "band 4-4.5", 0, 0.4, 0.4, 1)])])
    run, _ = _claims(acc)
    claim = run.claims["tableE1/bands_beat_random_crop"]
    assert list(claim["evidence"]["parts"]) == ["band 2-2.5"] and claim["verdict"] == "inconclusive at this budget"


def test_authors_crop_order_is_decided_on_each_side_then_compared(tmp_path):
    import json

    from invlib.papers.d import authors_code as A

    S = D.settings("cpu")
    rec = A.stored()
    rec["crop_cpu"]["settings"] = {k: getattr(S, k) for k in A.CROP_SETTING}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(rec))
    crops = pd.DataFrame(dict(side=[0.6], centre_in_box=[0.6]), index=["instaaug"])
    table = A.crop_comparison(dict(acc_none=50.0, acc_random_crop=55.0, acc_instaaug=56.2), crops, path)
    assert table.loc["accuracy: instaaug (%)", "authors' code"] == A._percent(rec["crop_cpu"]["test_accuracy"]
                                                                              ["InstaAug"])
    assert table.loc["InstaAug crops: side", "ours"] == 0.6 and math.isnan(table.loc["InstaAug crops: kl_to_mean",
                                                                                      "ours"])
    assert A.crop_comparison({}, crops, tmp_path / "none.json").empty
    for acc in (_family([1.0, 1.2, 1.4]), _family([1.0])):  # three seeds of ours or one: theirs is one run
        run = results.Run("demo", "cpu")
        ev = A.record_crop(run, S, table, acc, path)
        assert ev.verdict == "inconclusive at this budget" and (ev.n, ev.n_min) == (1, 3)
        assert set(dict(ev.parts)) == {"instaaug > random_crop", "random_crop > none", "instaaug > none"}
        assert "1 run" in run.claims["authors/crop_order_same"]["ours"]
    facts = A.crop_facts(table, ev)
    assert "cannot be decided" in facts["crop_order_text"] and facts["their_acc_instaaug"] != "n/a"
    assert A.record_crop(results.Run("demo", "smoke"), D.settings("smoke"), table, acc, path).verdict == \
        "not measurable at this profile"


def test_in_band_share_reads_the_recorded_checks():
    hist = [dict(state=dict(checks=[(10 * e + k, 3.2 if e > 5 else 1.0, 0.2) for k in range(2)], entropy=1.0,
                            **{"lambda": 0.2})) for e in range(10)]
    t = D.Trained("instaaug", "instaaug", 0, torch.nn.Identity(), hist, 0.0)
    assert D.in_band_share(t, (3.0, 3.5)) == 1.0
    assert D.in_band_share(t, (3.0, 3.5), last=0.6) < 1.0
    assert D.final_entropy(t) == 1.0


@pytest.mark.slow
def test_smoke_family_trains_and_measures():
    S = D.settings("smoke", n_train=128, n_test=32, epochs=2, methods=("none", "random_crop", "instaaug"),
                   progress=False)
    train, test = D.scene_data(S)
    fam = D.train_family(S, train)
    acc = D.accuracy_table(S, fam, test)
    assert set(acc.method) == {"none", "random_crop", "instaaug"} and acc.acc_tta.between(0, 1).all()
    per_seed = D.crop_seeds(fam, test)
    crops = D.crop_table(per_seed)
    assert per_seed[["variant", "seed"]].values.tolist() == [["instaaug", 0]]
    assert crops.loc["instaaug", "entropy"] > 0 and -1 <= crops.loc["instaaug", "side_rho"] <= 1
    assert isinstance(fam[-1].model, I.InstaAug)


def test_accuracy_table_is_cached_under_the_models_weights_and_leaves_the_same_random_state(monkeypatch):
    S = D.settings("smoke", n_train=64, n_test=16, epochs=2, methods=("none", "random_crop"), progress=False)
    train, test = D.scene_data(S)
    fam = D.train_family(S, train)
    first = D.accuracy_table(S, fam, test)
    state = torch.get_rng_state()
    made = []
    real = D._measure_accuracy
    monkeypatch.setattr(D, "_measure_accuracy", lambda *a: made.append(a) or real(*a))
    torch.rand(3)
    pd.testing.assert_frame_equal(D.accuracy_table(S, fam, test), first)  # read from the cache
    assert not made and torch.equal(torch.get_rng_state(), state)
    with torch.no_grad():
        next(fam[0].model.parameters()).add_(1.0)
    D.accuracy_table(S, fam, test)  # new weights: measured again
    assert len(made) == 1


def test_reinforce_variance_is_cached_under_the_modules_weights(monkeypatch):
    S = D.settings("smoke", n_train=64, n_test=16, epochs=2, methods=("instaaug",), progress=False)
    train, test = D.scene_data(S)
    fam = D.train_family(S, train)
    first = D.reinforce_variance(fam, test, n=8, draws=3)
    made = []
    real = I.gradient_variance
    monkeypatch.setattr(I, "gradient_variance", lambda *a: made.append(a) or real(*a))
    pd.testing.assert_frame_equal(D.reinforce_variance(fam, test, n=8, draws=3), first)  # read from the cache
    assert not made
    with torch.no_grad():
        fam[0].model.augment.params.global_head.bias.add_(1.0)
    D.reinforce_variance(fam, test, n=8, draws=3)  # the module's new weights: measured again
    assert len(made) == 2  # one per baseline


def test_the_module_starts_from_the_seed_whatever_ran_before():
    S = D.settings("smoke")
    for method in ("instaaug", "no_lrp", "class_specific"):
        a = D.model(S, method, 10, 0)[0]
        torch.rand(7)
        b = D.model(S, method, 10, 0)[0]
        assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters())), method
