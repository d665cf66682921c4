"""invlib.authors: the stored runs of the authors' code, the equivalence of two success rates and the recorded
verdict."""

import json
import math

import pandas as pd
import pytest

from invlib import authors, results
from invlib.protocol import Claim

SAME_RATE = Claim("x", "demo", "Same as theirs.", "their code", "their repository", authors.same_rate_part())


def _same(cid: str = "x") -> Claim:
    return Claim(cid, "demo", "Same.", "their code", "their repository", authors.same_values_part())


def test_same_rate_p_is_fishers_exact_test():
    assert authors.same_rate_p(3, 6, 3, 6) == pytest.approx(1.0)
    assert authors.same_rate_p(0, 6, 6, 6) == pytest.approx(2 / math.comb(12, 6))  # the two most extreme tables
    assert authors.same_rate_p(1, 6, 5, 6) == pytest.approx(0.0801, abs=1e-4)  # not rejected at 0.05
    assert authors.same_rate_p(2, 6, 4, 6) == authors.same_rate_p(4, 6, 2, 6)
    with pytest.raises(ValueError, match="successes"):
        authors.same_rate_p(7, 6, 1, 6)


def test_runs_filter_by_experiment_and_fields_and_keep_their_columns_when_empty(tmp_path):
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"runs": [
        dict(experiment="a", seed=s, width=w, ok=s < 2, commit="c0ffee1234", date="2026-11-2" + str(s))
        for s in range(3) for w in (8, 32)]}))
    got = authors.runs(path, "a", width=8)
    assert got["seed"].tolist() == [0, 1, 2] and set(got["width"]) == {8} and "experiment" not in got
    assert authors.runs(path, "b", columns=["ok"]).columns.tolist() == ["seed", "commit", "date", "ok"]
    assert authors.runs(tmp_path / "missing.json", "a").empty


@pytest.mark.parametrize("ours, theirs, verdict", [
    ((60, 60), (59, 60), "reproduced"),  # many seeds: the difference's interval fits inside +-0.25
    ((6, 6), (6, 6), "inconclusive at this budget"),  # six seeds a side cannot show the rates within 0.25
    ((1, 6), (5, 6), "inconclusive at this budget"),  # Fisher's p = 0.08 once counted this as "the same"
    ((0, 6), (6, 6), "not reproduced"), ((30, 60), (58, 60), "not reproduced"),
    ((5, 6), (0, 0), "not measurable at this profile")])
def test_the_verdict_is_an_equivalence_test_of_the_two_rates(ours, theirs, verdict):
    run = results.Run("demo", "smoke")
    p = authors.record_same_rate(run, SAME_RATE, ours, theirs, "c0ffee1234", "2026-11-23")
    claim = run.claims["x"]
    assert claim["verdict"] == verdict
    assert math.isnan(p) == (theirs[1] == 0) and run.metrics["x/fisher_p"] == (None if math.isnan(p) else p)
    if theirs[1]:
        assert "c0ffee1" in claim["paper"] and f"{theirs[0]} of {theirs[1]}" in claim["paper"]
        ev = claim["evidence"]
        assert ev["direction"] == "equivalent" and ev["margin"] == authors.SAME_RATE_MARGIN and ev["level"] == 0.9
        assert claim["declaration"]["parts"][""]["smallest"] == authors.SAME_RATE_MARGIN
        assert ev["lo"] <= ours[0] / ours[1] - theirs[0] / theirs[1] <= ev["hi"]


def test_same_values_is_decided_by_the_keys_beyond_their_tolerance():
    run = results.Run("demo", "smoke")
    rec = {"commit": "c0ffee1234", "date": "2026-11-23"}
    frame = pd.DataFrame(dict(key=["a", "b"], ours=[1.0, 2.0], theirs=[1.0, 2.09], difference=[0.0, 0.09],
                              tolerance=[0.1, 0.1], same=[True, True]))
    assert authors.record_same_values(run, _same("x"), frame, rec) == "reproduced"
    assert run.claims["x"]["evidence"]["estimate"] == 0 and run.claims["x"]["interval"] == "+0 (deterministic); < 0.5"
    frame.loc[1, ["difference", "same"]] = [0.11, False]
    assert authors.record_same_values(run, _same("x"), frame, rec) == "not reproduced"
    frame.loc[1, ["ours", "difference", "same"]] = [float("nan"), float("nan"), False]  # a missing number differs
    assert authors.record_same_values(run, _same("x"), frame, rec) == "not reproduced"
    assert authors.record_same_values(run, _same("x"), frame, None) == "not measurable at this profile"


def test_side_by_side_puts_their_seeds_beside_ours():
    a = pd.DataFrame(dict(seed=[0, 1], v=[1.0, 2.0]))
    b = pd.DataFrame(dict(seed=[1, 2], v=[3.0, 4.0]))
    t = authors.side_by_side(a, b, {"v": "value"})
    assert t.columns.tolist() == ["authors: value", "ours: value"] and t.index.tolist() == [0, 1, 2]
    assert t.loc[1].tolist() == [2.0, 3.0]


def test_latest_takes_the_newest_matching_run(tmp_path):
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"runs": [dict(experiment="a", date="2026-11-25", v=1, w=0),
                                         dict(experiment="a", date="2026-11-24", v=2, w=0),
                                         dict(experiment="a", date="2026-11-25", v=3, w=1),
                                         dict(experiment="b", date="2026-11-26", v=4, w=0)]}))
    assert authors.latest(path, "a")["v"] == 3  # same date: the later in the file
    assert authors.latest(path, "a", w=0)["v"] == 1
    assert authors.latest(path, "c") is None and authors.latest(tmp_path / "none.json", "a") is None


def test_record_same_values_needs_every_row_within_tolerance():
    frame = pd.DataFrame(dict(key=["a", "b", "c"], ours=[1.0, 2.0, 3.0], theirs=[1.0, 2.05, float("nan")],
                              difference=[0.0, 0.05, float("nan")], tolerance=[0.1, 0.1, 0.1],
                              same=[True, True, False]))
    run = results.Run("demo", "smoke")
    rec = {"commit": "a4facc0201", "date": "2026-11-25"}
    assert authors.record_same_values(run, _same("x"), frame, rec) == "not reproduced"
    assert run.claims["x"]["ours"].startswith("1 of 3 keys differ; largest |ours - theirs| nan at c")
    assert authors.record_same_values(run, _same("y"), frame.iloc[:2], rec) == "reproduced"
    assert run.metrics["y/largest_difference"] == pytest.approx(0.05) and "a4facc0" in run.claims["y"]["paper"]
    assert authors.record_same_values(run, _same("z"), frame, None) == "not measurable at this profile"


def test_d3_the_stored_colour_cpu_record_of_their_code_is_consistent():
    """Paper D's ``colour_cpu`` (benchmarks/authors/instaaug_runs.py): their colour module at D3's cpu setting."""
    from pathlib import Path

    from invlib.papers.d import colour

    doc = json.loads((Path(colour.__file__).with_name("authors_instaaug.json")).read_text())
    assert doc["commit"].startswith("adee496") and {"rotation_cpu", "crop_cpu", "colour_cpu"} <= set(doc)
    rec, S = doc["colour_cpu"], colour.settings("cpu")
    s = rec["settings"]
    assert (s["n_train"], s["n_test"], s["epochs"], s["batch_size"], s["trunk"], s["size"]) == (
        S.n_train, S.n_test, S.epochs, S.batch_size, S.trunk, S.size)
    assert s["their_module_lr"] == 1e-5 and s["released_maxima"] == [0.0, 0.0, 0.0, 0.0, 0.8, 0.8]
    assert len(rec["patches"]) >= 3 and rec["date"] and rec["seconds"] > 0
    runs = rec["runs"]
    keys = {(r["variant"], r["module_lr"], r["seed"]) for r in runs}
    assert len(keys) == len(runs)  # no run twice
    for lr in (1e-5, 0.2):  # their rate and D3's former one, at three seeds each
        assert {seed for v, rate, seed in keys if v == "hue_enabled" and rate == lr} >= {0, 1, 2}
    for r in runs:
        maxima = r["maxima"]
        assert maxima == (s["released_maxima"] if r["variant"] == "released" else
                          [s["hue_max"]] * 2 + [s["sat_max"]] * 2 + s["released_maxima"][4:])
        assert 0 < r["test_accuracy"] <= 1 and 0 < r["test_accuracy_tta"] <= 1 and r["seconds"] > 0
        assert len(r["per_epoch"]) == S.epochs
        for j, op in enumerate(("hue", "sat", "value")):
            high, low, m = r["bounds"][f"{op}_high"], r["bounds"][f"{op}_low"], maxima[2 * j]
            assert -1e-6 <= high["mean"] <= m + 1e-6 and -m - 1e-6 <= low["mean"] <= 1e-6
            assert high["sd"] >= 0 and low["sd"] >= 0
            below = r["share_below"][op]
            assert all(0 <= v <= 1 for v in (*below.values(), *r["share_at_max"][op].values()))
            assert r["collapsed_one_sided"][op] == (m > 0 and (below["high"] > 0.5) != (below["low"] > 0.5))
            if m == 0:  # a bound whose maximum is 0 is 0 on every image
                assert high["mean"] == low["mean"] == 0 and below == {"high": 0.0, "low": 0.0}
            if below["high"] == 1:  # a bound at 0 on every test image has a mean near 0
                assert high["mean"] <= s["collapse_below"] * m
            if below["low"] == 1:
                assert low["mean"] >= -s["collapse_below"] * m
        assert r["hue_collapsed_one_sided"] == r["collapsed_one_sided"]["hue"]
        assert set(r["start_bounds"]) == set(r["bounds"]) and r["state"]["hue"] in (
            "no range (maximum 0)", "one-sided (one bound at 0)", "both at 0", "both at the maximum",
            "one at the maximum", "inside")
        assert (r["state"]["hue"] == "one-sided (one bound at 0)") == r["hue_collapsed_one_sided"]
