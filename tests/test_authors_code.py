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
from invlib.papers.b.protocol import PROTOCOL


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


def test_report_names_the_count_and_the_largest_difference(tmp_path, aa):
    same = write(tmp_path, dict(experiment="aa_ops", theirs=aa))
    run = results.Run("smoke", name="demo")
    verdict = lambda e: run.claims[f"authors/{e}_same"]["verdict"]  # noqa: E731
    frame = ac.report(run, "aa_ops", path=same)
    assert verdict("aa_ops") == "reproduced" and list(frame.columns) == ["experiment", *ac.COLUMNS] and len(frame) == 8
    assert run.claims["authors/aa_ops_same"]["ours"].startswith("0 of 63 keys differ")
    assert "a4facc0" in run.claims["authors/aa_ops_same"]["paper"]

    off = dict(aa, **{"color/2": aa["color/2"] + 0.01})
    path = write(tmp_path, dict(experiment="aa_ops", theirs=off))
    frame = ac.report(run, "aa_ops", "crops", top=None, path=path)  # one claim per experiment, every row
    assert verdict("aa_ops") == "not reproduced" and len(frame) == 63 and set(frame.experiment) == {"aa_ops"}
    claim = run.claims["authors/aa_ops_same"]
    assert claim["ours"].startswith("1 of 63 keys differ; largest |ours - theirs| 0.01 at color/2")
    assert run.metrics["authors/aa_ops_same/keys_differing"] == 1
    assert verdict("crops") == "not measurable at this profile"  # no record of that experiment
    assert ac.report(run, "aa_ops", top=3, path=path).key.iloc[0] == "color/2"  # the largest difference first
    # the criterion is the declaration's: each key within its experiment's tolerance (one grey level here)
    assert claim["criterion"] == PROTOCOL["authors/aa_ops_same"].criterion()
    assert "exceeds 0.00392 (their operations return uint8" in claim["criterion"] and "< 0.5" in claim["criterion"]


def test_each_experiment_is_declared_in_the_chapter_that_reports_it():
    """The protocol declares authors/<experiment>_same in the chapter whose notebook calls report(run, experiment),
    with the tolerance of ``TOLERANCE`` in its criterion."""
    import pathlib

    notebooks = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
    reported = {e: nb.stem for nb in notebooks.glob("b*.py") for line in nb.read_text().splitlines()
                if line.startswith("AC.report(") for e in re.findall(r'"([a-z_]+)"', line)}
    assert set(reported) == set(ac.EXPERIMENTS)
    for experiment, chapter in reported.items():
        claim = PROTOCOL[f"authors/{experiment}_same"]
        assert claim.chapter == chapter and ac.TOLERANCE[experiment]["reason"] in claim.criterion()


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
@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_d_our_module_matches_the_authors_measurements_except_their_two_defects():
    from invlib.papers.d import authors_code as D

    assert set(D.DEFECTS) == {"cells", "draws"} < set(D.PARTS)
    for part in D.PARTS:
        frame = D.compare(part)
        assert len(frame), part
        if part in D.DEFECTS:  # ours follows the paper, theirs does not: these rows show the difference
            assert not frame["same"].all(), part
        else:
            assert frame["same"].all(), (part, frame[~frame["same"]])
    run = results.Run("smoke", name="demo")
    D.report(run)
    verdicts = {p: run.claims[f"authors/{p}_same"]["verdict"] for p in D.PARTS}
    assert verdicts == {p: "not reproduced" if p in D.DEFECTS else "reproduced" for p in D.PARTS}
    for part in D.DEFECTS:  # the claim says whose defect the difference is
        assert "their defect, not ours" in run.claims[f"authors/{part}_same"]["claim"]
    from invlib.authors import same_values_part
    from invlib.papers.d.protocol import PROTOCOL

    for part in D.PARTS:  # each declared with the one "same as the authors' code" part, its criterion written from it
        declared = PROTOCOL.get(f"authors/{part}_same", "d2_instance_crops")
        assert declared.parts == {"": same_values_part()}
        assert run.claims[f"authors/{part}_same"]["criterion"] == declared.criterion()
    s = D.summary(D.report(results.Run("smoke", name="demo"))).set_index("part")
    assert s.loc["cells", "expected"].startswith("differs: their cell") and s.loc["crops", "expected"] == "same"


def _d_write(tmp_path, rec, name="a.json"):
    path = tmp_path / name
    path.write_text(json.dumps(rec))
    return path


def _d_unmirror(rec):
    """Their stored boxes put back in the paper's layout (cell (r, c) -> the crop centred on cell (r, c)), keeping
    their 63/64 pull: what their code would store without the mirror."""
    for e in rec["crops"]["layers"]:
        k, first = e["cells"], e["first_index"]
        if k < 2:
            continue
        boxes = rec["crops"]["boxes"][first:first + e["count"]]
        grid = [[boxes[r * k + c] for c in range(k)] for r in range(k)]  # theirs: cell (r, c) holds (K-1-c, K-1-r)
        rec["crops"]["boxes"][first:first + e["count"]] = [grid[k - 1 - c][k - 1 - r] for r in range(k)
                                                           for c in range(k)]
    return rec


def test_d_cells_are_compared_cell_to_cell_so_the_mirror_shows(tmp_path):
    """The old comparison (centres as a set) passes their mirrored boxes; cell to cell, every cell but the
    anti-diagonal's differs. Their boxes put back in the paper's layout pass cell to cell."""
    from invlib.papers.d import authors_code as D

    stored = D.compare("crops").set_index("key")
    assert stored.loc["layer 2: centres as a set, largest distance to the nearest", "same"]  # blind to the mirror
    cells = D.compare("cells")
    centre_rows = cells[cells.key.str.contains("centre of cell")]
    assert len(centre_rows) == 2 and not centre_rows["same"].any() and (centre_rows["ours"] > 0.8).all()

    fixed = _d_unmirror(D.stored())
    fixed["crops"]["mirror_test"]["selecting_blob_cell"]["blob_share_inside"] = 1.0  # as an unmirrored code would
    fixed["crops"]["mirror_test"]["selecting_mirrored_cell"]["blob_share_inside"] = 0.0
    path = _d_write(tmp_path, fixed)
    assert D.compare("cells", path)["same"].all()
    crops = D.compare("crops", path).set_index("key")  # the mirrored-cell row now sees the wrong permutation
    assert not crops.loc[crops.index.str.contains("their cell"), "same"].any()
    assert crops.loc[crops.index.str.contains("as a set"), "same"].all()
    run = results.Run("smoke", name="demo")
    D.report(run, ("cells",), path)
    assert run.claims["authors/cells_same"]["verdict"] == "reproduced"


def test_d_a_permutation_of_their_cells_passes_as_a_set_but_not_cell_to_cell(tmp_path):
    from invlib.papers.d import authors_code as D

    rec = D.stored()
    first, count = rec["crops"]["layers"][1]["first_index"], rec["crops"]["layers"][1]["count"]
    perm = torch.randperm(count, generator=torch.Generator().manual_seed(0)).tolist()
    boxes = rec["crops"]["boxes"]
    boxes[first:first + count] = [boxes[first + j] for j in perm]
    frame = D.compare("crops", _d_write(tmp_path, rec)).set_index("key")
    assert frame.loc["layer 3: centres as a set, largest distance to the nearest", "same"]
    assert not frame.loc["layer 3: centres, their cell (r, c) vs our cell (K-1-c, K-1-r), largest distance", "same"]


def test_d_the_blob_is_captured_by_its_own_cell_in_ours_and_by_the_mirrored_cell_in_theirs():
    from invlib.papers.d import authors_code as D

    test = D.stored()["crops"]["mirror_test"]
    sigma, row, col, size = D._blob(test["blob"])
    assert (sigma, row, col, size) == (1.5, 10, 22, 64)
    assert test["blob_cell"] == [row * 16 // size, col * 16 // size] == [2, 5]
    lrp = D._our_lrp(D.stored())
    share = D.blob_shares(lrp, sigma, row, col)
    assert share[2 * 16 + 5] > 0.99 and share[10 * 16 + 13] < 0.01  # ours: the paper's cell
    assert test["selecting_blob_cell"]["blob_share_inside"] == 0.0  # theirs: the mirror
    assert test["selecting_mirrored_cell"]["blob_share_inside"] == 1.0
    frame = D.compare("cells")
    blob = frame[frame.key.str.startswith("blob")]
    assert len(blob) == 2 and not blob["same"].any()
    # a module with their (mirrored) boxes captures what theirs captures: the rows compare crops, not labels
    k = 16
    own = lrp.boxes[lrp.layer == 0].reshape(k, k, 3)
    with torch.no_grad():
        lrp.boxes[lrp.layer == 0] = own.flip(0, 1).transpose(0, 1).reshape(-1, 3)
    mirrored = D.blob_shares(lrp, sigma, row, col)
    assert abs(float(mirrored[2 * 16 + 5])) < D.BLOB_SHARE_TOLERANCE
    assert abs(float(mirrored[10 * 16 + 13]) - 1) < D.BLOB_SHARE_TOLERANCE
    with pytest.raises(ValueError, match="cannot read the blob"):
        D._blob("a blob somewhere")


def test_d_the_sampler_bias_is_shown_on_the_321_crops(tmp_path):
    from invlib.papers.d import authors_code as D

    draws = D.compare("draws").set_index("key")
    key = "321 crops: share drawn, our sampler vs theirs: global crop"
    assert not draws.loc[key, "same"] and abs(draws.loc[key, "ours"] - 0.852) < 0.005
    assert draws.loc[key, "theirs"] == D.stored()["sampler"]["crops_321"]["per_layer"]["freq_theirs"][-1]
    sampler = D.compare("sampler").set_index("key")
    assert sampler.loc["321 crops: our sampler vs p: global crop", "same"]
    assert sampler.loc["321 crops: their sampler as we read it vs theirs: global crop", "same"]

    rec = D.stored()  # had their sampler drawn p, the draws would agree and our reading of theirs would not
    rec["sampler"]["crops_321"]["per_layer"]["freq_theirs"] = rec["sampler"]["crops_321"]["per_layer"]["p"]
    rec["sampler"]["five"]["freq_theirs"] = rec["sampler"]["five"]["p"]
    path = _d_write(tmp_path, rec)
    assert D.compare("draws", path)["same"].all()
    s = D.compare("sampler", path).set_index("key")
    assert not s.loc["321 crops: their sampler as we read it vs theirs: global crop", "same"]
    run = results.Run("smoke", name="demo")
    D.report(run, ("draws",), path)
    assert run.claims["authors/draws_same"]["verdict"] == "reproduced"


def test_d_sampler_text_quotes_the_stored_321_crop_numbers(tmp_path):
    from invlib.papers.d import authors_code as D

    rec = D.stored()
    top = rec["sampler"]["crops_321"]["most_likely"]
    text = D.sampler_text("reproduced")
    assert f"{top['freq_theirs']:.3f}" in text and f"{top['p']:.3f}" in text and "321 crops" in text
    top["freq_theirs"], top["p"] = 0.777, 0.666  # the sentence reads the file, nothing is typed
    text = D.sampler_text("not reproduced", _d_write(tmp_path, rec))
    assert "0.777 of the time where its probability is 0.666" in text and "misses a measured frequency" in text
    del rec["sampler"]["crops_321"]
    assert D.sampler_text("reproduced", _d_write(tmp_path, rec, "b.json")).startswith("Ours samples p")


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


def test_d_mirror_text_and_defect_rows_read_the_stored_test(tmp_path):
    from invlib.papers.d import authors_code as D

    assert D.mirror_text().endswith("captures 0 % of it, the crop of the mirrored cell (10, 13) 100 %; ours capture "
                                    "100 % and 0 %.")
    rec = D.stored()
    rec["crops"]["mirror_test"]["selecting_blob_cell"]["blob_share_inside"] = 0.25  # nothing typed in the text
    assert "captures 25 % of it" in D.mirror_text(_d_write(tmp_path, rec))
    rows = D.defects(D.report(results.Run("smoke", name="demo")))
    assert set(rows["part"]) == set(D.DEFECTS) and not rows["same"].all()


def test_d3_our_hue_widths_are_compared_with_their_colour_runs_seed_by_seed():
    import pandas as pd

    from invlib.papers.d import authors_code as dac
    from invlib.papers.d.colour import INSTAAUG, settings

    S = settings("cpu")
    _, theirs = dac.colour_runs()
    at = theirs[np.isclose(theirs.module_lr, S.instaaug_module_lr)].set_index("seed").hue_width
    assert len(at) == 5 and (at.between(0, 1)).all()  # widths in turns, one run a seed

    def verdict(shift, S=S):
        ranges = pd.DataFrame(dict(model=INSTAAUG, seed=np.repeat(at.index, 2),
                                   hue_width=np.repeat(at.to_numpy() + shift, 2)))
        ranges = pd.concat([ranges, ranges.assign(model="global")])  # another model's ranges are not read
        run = results.Run("demo", "smoke")
        facts = dac.report_colour(run, S, ranges)
        return run.claims["authors/colour_hue_width_same"], facts

    same, facts = verdict(0.0)
    assert same["verdict"] == "reproduced" and facts["authors_hue_width"] == pytest.approx(at.mean())
    wider, facts = verdict(0.2)  # ours 0.2 turn wider on every seed: not the same
    assert wider["verdict"] == "not reproduced" and "collapsed to one side" in facts["authors_colour_text"]
    assert facts["ours_hue_width"] - facts["authors_hue_width"] == pytest.approx(0.2)
    other_rate, facts = verdict(0.0, S=settings("cpu", instaaug_module_lr=0.05))  # no run of theirs at this rate
    assert other_rate["verdict"] == "not measurable at this profile" and "not run" in facts["authors_colour_text"]
    assert verdict(0.0, S=settings("smoke"))[0]["verdict"] == "not measurable at this profile"
