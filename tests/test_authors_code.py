"""invlib.papers.b.authors_code: the fixed inputs, our numbers on them, and the comparison with the stored numbers
of the authors' code (a temporary JSON here: the tests need neither their code nor the network)."""

import datetime
import json
import math
import re

import numpy as np
import pytest
import torch

from invlib import results
from invlib.data import DataMissingError
from invlib.papers.b import authors_code as ac
from invlib.papers.b import similarity as S


@pytest.fixture(scope="module")
def aa():
    try:
        return ac.ours("aa_ops")
    except DataMissingError as e:
        pytest.skip(f"scenes need Fashion-MNIST: {e}")


def write(tmp_path, *records):
    path = tmp_path / "authors_grounding.json"
    path.write_text(json.dumps({"runs": [dict(dict(commit="a4facc0201", date="2026-11-25"), **r) for r in records]}))
    return path


# ------------------------------------------------------------------------------ inputs
def test_their_loader_order_draws_our_pairs():
    shuffle = torch.randperm(160, generator=torch.Generator().manual_seed(1))
    labels = torch.tensor([0] * 64 + [1] * 32 + [2] * 64)[shuffle]
    first, second = S.pairs(labels, 3, None, seed=7)
    got_a, got_b = [], []
    for order in ac.loader_order(labels, 3, seed=7):  # their loader: batches of 32 in order, halves paired
        for start in range(0, len(order), 32):
            got_a.append(order[start:start + 16])
            got_b.append(order[start + 16:start + 32])
    assert torch.equal(torch.cat(got_a), first) and torch.equal(torch.cat(got_b), second)
    with pytest.raises(ValueError, match="multiple of 32"):
        ac.loader_order(torch.tensor([0] * 40), 1)


def test_the_invariance_pairing_is_what_torchs_seeded_global_generator_draws():
    with torch.random.fork_rng(devices=[]):
        for level in (0, 9):
            torch.manual_seed(ac.PERM_SEED + level)  # as the script seeds it before their compute_relative_invariance
            assert torch.equal(torch.randperm(16), ac.invariance_perm(level))


def test_box_stats_and_moments():
    s = ac.box_stats(np.array([[16.0, 16.0, 48.0, 48.0], [0.0, 0.0, 64.0, 32.0]]))
    assert s["area"].tolist() == [0.25, 0.5] and s["cx"].tolist() == [0.0, 0.0] and s["cy"].tolist() == [0.0, -0.25]
    assert s["log_aspect"][1] == pytest.approx(math.log(2))
    v = np.random.default_rng(0).normal(size=40_000)
    m = ac.moments(v)
    assert m["mean_se"] == pytest.approx(1 / 200, rel=0.02)
    assert m["std_se"] == pytest.approx(1 / math.sqrt(2 * 40_000), rel=0.05)  # normal: std / sqrt(2n)
    assert ac.moments(np.ones(5))["std_se"] == 0.0


def test_crop_boxes_follow_b1s_setting():
    boxes = ac.crop_boxes("fixed_size_center_crop", 3)
    assert boxes.tolist() == [[4.0, 4.0, 60.0, 60.0]] * 3
    values, se = ac.crop_summary(ac.crop_boxes("translate", 4000), prefix="t/")
    assert values["t/area/mean"] == pytest.approx((56 / 64) ** 2) and se["t/area/mean"] < 1e-12
    assert values["t/cx/std"] == pytest.approx(0.3 / math.sqrt(3), rel=0.05)  # uniform shift of +-30 %


# ------------------------------------------------------------------------------ compare and record
def test_compare_flags_the_keys_beyond_tolerance_and_missing_ones(tmp_path, aa):
    theirs = {k: v + 0.5 / 255 for k, v in aa.items()}  # within one grey level
    theirs["invert/3"] += 2 / 255  # beyond it
    del theirs["rotate/3"]  # theirs lacks a key: not the same
    theirs["spin/1"] = 0.1  # ours lacks a key: not the same
    frame = ac.compare("aa_ops", write(tmp_path, dict(experiment="aa_ops", theirs=theirs)))
    assert list(frame.columns) == ac.COLUMNS and len(frame) == 64
    bad = frame.loc[~frame.same, "key"].tolist()
    assert sorted(bad) == ["invert/3", "rotate/3", "spin/1"]
    row = frame.set_index("key").loc["invert/3"]
    assert row.difference == pytest.approx(2.5 / 255) and row.tolerance == pytest.approx(1 / 255)
    assert math.isnan(frame.set_index("key").loc["rotate/3", "theirs"])


def test_record_names_the_count_and_the_largest_difference(tmp_path, aa):
    same = write(tmp_path, dict(experiment="aa_ops", theirs=aa))
    run = results.Run("smoke", name="demo")
    assert ac.record(run, "aa_ops", same) == "reproduced"
    assert run.claims["authors/aa_ops_same"]["ours"].startswith("0 of 63 keys differ")
    assert "a4facc0" in run.claims["authors/aa_ops_same"]["paper"]

    off = dict(aa, **{"color/2": aa["color/2"] + 0.01})
    path = write(tmp_path, dict(experiment="aa_ops", theirs=off))
    assert ac.record(run, "aa_ops", path) == "not reproduced"
    claim = run.claims["authors/aa_ops_same"]
    assert claim["ours"].startswith("1 of 63 keys differ; largest |ours - theirs| 0.01 at color/2")
    assert run.metrics["authors/aa_ops_same/keys_differing"] == 1

    assert ac.record(run, "crops", path) == "not measurable at this profile"  # no record of that experiment


def test_the_newest_record_of_an_experiment_is_compared(tmp_path, aa):
    old = dict(experiment="aa_ops", date="2026-11-24", theirs={k: v + 1 for k, v in aa.items()})
    new = dict(experiment="aa_ops", date="2026-11-25", theirs=aa)
    assert ac.compare("aa_ops", write(tmp_path, new, old)).same.all()


def test_crops_tolerance_is_four_standard_errors(tmp_path):
    values, se = ac._ours("crops")
    key = "rrc/area/mean"

    def shifted(k):
        rec = dict(experiment="crops", theirs=dict(values, **{key: values[key] + k * se[key]}), theirs_se=se)
        return ac.compare("crops", write(tmp_path, rec)).set_index("key").loc[key]

    near, far = shifted(5.0), shifted(6.0)  # both sides' errors: tolerance 4 sqrt(2) se = 5.66 se
    assert near.same and not far.same
    assert near.tolerance == pytest.approx(4 * math.sqrt(2) * se[key])


def test_boosts_tolerances_are_per_quantity():
    assert ac.tolerance("boosts", "share/Trouser/invert/3") == 2 / 32
    assert ac.tolerance("boosts", "mean/Trouser/invert/3") == ac.tolerance("boosts", "weighted/Sandal/rotate/3") == 0.1
    assert set(ac.TOLERANCE) == set(ac.EXPERIMENTS) and all(t["reason"] for t in ac.TOLERANCE.values())


def test_the_stored_runs_cover_our_keys():
    """Where the book's record of their code exists, every cheap experiment has a number for each of our keys."""
    if ac.theirs("sweep_transforms") is None:
        pytest.skip("no stored run of the authors' code")
    for experiment in ("sweep_transforms", "relative_invariance", "aa_ops", "crops"):
        rec = ac.theirs(experiment)
        # the record says which code made it, when and on what: a full commit of their repository, a real date,
        # the time their code took (a record written by hand or by another script lacks these)
        assert rec["repository"] == ac.REPOSITORY and re.fullmatch(r"[0-9a-f]{40}", rec["commit"]), rec.get("commit")
        assert datetime.date.fromisoformat(rec["date"]) <= datetime.date.today() + datetime.timedelta(days=1)
        assert 0 < rec["seconds"] < 3600 and rec["threads"] >= 1 and rec["torch"]
        try:
            frame = ac.compare(experiment)
        except DataMissingError as e:
            pytest.skip(f"scenes need Fashion-MNIST: {e}")
        assert not frame[["ours", "theirs"]].isna().any().any(), experiment


# ----------------------------------------------------------------------------- paper D (invlib.papers.d.authors_code)
def test_d_our_module_matches_the_authors_measurements():
    from invlib.papers.d import authors_code as D

    for part in D.PARTS:
        frame = D.compare(part)
        assert len(frame) and frame["same"].all(), (part, frame[~frame["same"]])
    run = __import__("invlib.results", fromlist=["Run"]).Run("smoke", name="demo")
    D.record(run)
    assert {run.claims[f"authors/{p}_same"]["verdict"] for p in D.PARTS} == {"reproduced"}


def test_d_the_comparison_can_fail(tmp_path):
    import json

    from invlib.papers.d import authors_code as D

    rec = D.stored()
    rec["scheduler"]["sequences"]["a_below_then_rising"]["lam"][3] *= 1.2  # one check off
    rec["sampler"]["five"]["freq_theirs"] = rec["sampler"]["five"]["p"]  # "their" sampler unbiased: ours is not
    rec["crops"]["boxes"][0][0] += 0.05
    path = tmp_path / "a.json"
    path.write_text(json.dumps(rec))
    for part in ("scheduler", "sampler", "crops"):
        assert not D.compare(part, path)["same"].all(), part
    assert D.compare("scheduler", tmp_path / "missing.json").empty


def _d_bounds(upper, lower, phi=(-0.6, -0.2, 0.2, 0.6)):
    import pandas as pd

    from invlib.papers.d.rotations import BOUNDARY

    phi = pd.Series(phi)
    return pd.DataFrame(dict(phi=phi, upper=upper(phi), lower=lower(phi), upper_true=BOUNDARY - phi,
                             lower_true=BOUNDARY + phi))


def test_d_their_rotation_run_is_read_in_d1s_convention():
    from invlib.papers.d import authors_code as D
    from invlib.papers.d import rotations

    their, frames, acc = D.rotation_runs()
    assert their["steps"] == 320 and {lr for lr, _ in frames} == set(their["module_lrs"]) and their["commit"]
    assert (rotations.settings("cpu").module_lr, 0.1) in frames  # the chapter's lr with their config's weight
    for key, frame in frames.items():
        assert len(frame) == 500 and frame.phi.abs().max() <= math.pi / 4 + 1e-4
        assert ((frame.upper >= 0) & (frame.upper <= math.pi + 1e-4)).all() and 0 < acc[key] <= 1
    assert D.same_setting(rotations.settings("cpu"), their)  # the chapter's cpu profile is their run's setting
    assert not D.same_setting(rotations.settings("smoke"), their)
    assert not D.same_setting(rotations.settings("cpu", module_lr=0.05), their)  # no run of theirs at 0.05
    assert not D.same_setting(rotations.settings("cpu", epochs=3), their)
    assert D.rotation_runs("/nonexistent.json") is None
