"""Paper D, chapter D2 (invlib.papers.d.cropping and cropping_reports)."""

import math

import pandas as pd
import pytest
import torch

from invlib import results
from invlib.learned import instaaug as I
from invlib.papers.d import cropping as D
from invlib.papers.d import cropping_reports as R


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


def test_ranking_claims_need_seeds():
    S = D.settings("smoke")
    one = _acc([("none", "none", 0, 0.5, 0.5, 1), ("random_crop", "random_crop 0.1-1", 0, 0.5, 0.55, 1),
                ("instaaug", "instaaug", 0, 0.5, 0.6, 1.5)])
    run = results.Run("demo", "smoke")
    R.report(run, S, one, pd.DataFrame(), [])
    assert run.claims["table1/instaaug_random_none"]["verdict"] == "partly"
    assert run.claims["appD3/cost"]["verdict"] == "reproduced"
    three = _acc([(m, v, s, 0.5, base + 0.01 * s, 1) for s in range(3)
                  for m, v, base in (("none", "none", 0.5), ("random_crop", "random_crop 0.1-1", 0.55),
                                     ("instaaug", "instaaug", 0.6))])
    run = results.Run("demo", "smoke")
    R.report(run, S, three, pd.DataFrame(), [])
    assert run.claims["table1/instaaug_random_none"]["verdict"] == "reproduced"


def test_crop_claims_read_the_crop_table():
    crops = pd.DataFrame({"side": [0.6, 0.7, 0.97], "centre_in_box": [0.8, 0.5, 1.0], "covers_object": [1, 1, 1],
                          "entropy": [3.2, 3.1, 1.0], "kl_to_mean": [0.4, 0.0, math.nan],
                          "side_rho": [0.5, math.nan, math.nan]}, index=["instaaug", "no_input", "no_lrp"])
    acc = _acc([("none", "none", 0, 0.5, 0.5, 1), ("random_crop", "random_crop 0.1-1", 0, 0.6, 0.6, 1),
                ("no_lrp", "no_lrp", 0, 0.51, 0.51, 1)])
    run = results.Run("demo", "smoke")
    R.report(run, D.settings("smoke"), acc, crops, [])
    v = {c: r["verdict"] for c, r in run.claims.items()}
    assert v["fig6/input_dependent"] == v["fig6/concentrates_on_object"] == v["fig6/size_follows_object"] \
        == v["table1/uniform_stays_near_identity"] == "reproduced"


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
    crops = D.crop_table(fam, test)
    assert crops.loc["instaaug", "entropy"] > 0
    assert isinstance(fam[-1].model, I.InstaAug)


def test_the_module_starts_from_the_seed_whatever_ran_before():
    S = D.settings("smoke")
    for method in ("instaaug", "no_lrp", "class_specific"):
        a = D.model(S, method, 10, 0)[0]
        torch.rand(7)
        b = D.model(S, method, 10, 0)[0]
        assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters())), method
