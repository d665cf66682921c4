"""invlib.results: one JSON per notebook run, named by the book runner, the "paper vs this run" table, the
claims, and the small claim criteria the report modules share."""

import dataclasses
import json
import math
import time

import numpy as np
import pytest
import torch

from invlib import results, verdicts
from invlib.protocol import Claim, Part


def test_run_writes_metrics_paper_values_environment_and_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("smoke", name="a1_demo", params={"seed": 1})
    run.log("zoom_in/val_acc", torch.tensor(0.8125), paper=0.901, note="ResNet-18")
    run.log("per_layer", np.array([0.25, 0.75]))
    run.log("nan_is_null", math.nan)
    time.sleep(0.05)
    path = run.save()
    assert path == tmp_path / "smoke" / "a1_demo.json"
    rec = json.loads(path.read_text())
    assert rec["metrics"] == {"zoom_in/val_acc": 0.8125, "per_layer": [0.25, 0.75], "nan_is_null": None}
    assert rec["paper"] == {"zoom_in/val_acc": 0.901} and rec["notes"]["zoom_in/val_acc"] == "ResNet-18"
    assert rec["params"] == {"seed": 1} and rec["profile"] == "smoke"
    assert rec["env"]["torch"] == torch.__version__ and rec["env"]["device"] == "cpu"
    assert rec["seconds"] >= 0.05 and rec["finished"].endswith("+00:00")  # seconds since the Run was made
    assert results.load("a1_demo", "smoke") == rec


def test_table_puts_the_paper_beside_this_run():
    run = results.Run("cpu", name="demo")
    run.log("hue", 0.7, paper=0.716)
    run.log("epochs", 4)
    table = run.table()
    assert list(table.index) == ["hue"] and table.loc["hue", "paper"] == 0.716 and table.loc["hue", "this run"] == 0.7
    full = run.table(only_paper=False)
    assert list(full.index) == ["hue", "epochs"] and full.loc["epochs", "paper"] == "—"
    assert type(full.loc["epochs", "this run"]) is int, "ints are not shown as 4.000000"
    run.log("ratio", 0.123456789)
    assert run.table(only_paper=False).loc["ratio", "this run"] == 0.1235 and run.metrics["ratio"] == 0.123456789


def test_bad_metrics_and_missing_results_say_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("smoke", name="demo")
    with pytest.raises(TypeError, match="cannot store object"):
        run.log("x", object())
    with pytest.raises(ValueError, match="non-empty string"):
        run.log("", 1)
    with pytest.raises(FileNotFoundError, match="python -m invlib book --profile cpu --only nothing"):
        results.load("nothing", "cpu")


def _declared(cid: str, chapter: str, smallest: float = 0.1, unit: str = "seed", **kw) -> Claim:
    part = Part("gain, points", unit=unit, smallest=smallest, reason="a tenth of a point", **kw)
    return Claim(cid, chapter, "RRC helps.", "+4.4 points", "Table 1a", part)


def test_claims_carry_computed_verdicts_into_json_and_the_scoreboard(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("smoke", name="a7_demo")
    gains = [1.4, 1.9, 1.6]  # one paired gain per seed
    t1 = _declared("t1", "a7_demo")
    assert run.claim(t1, ours=float(np.mean(gains)), effects=gains) == "reproduced"
    t2 = Claim("t2", "a7_demo", "Needs ImageNet.", "0.5", "Sec. 4", Part("share", "image", smallest=0.1, reason="r"))
    run.claim(t2, ours=None, effects=results.not_measurable("scenes have no synsets"))
    run.claim(t1, ours=0.1, effects=[0.5, -0.3, 0.1])
    frame = run.claims_table().frame
    assert frame["verdict"].tolist() == ["inconclusive at this budget", "not measurable at this profile"]
    assert frame.columns.tolist() == ["claim", "paper", "this run", "interval", "criterion", "verdict"]
    run.save()
    stored = results.load("a7_demo", "smoke")["claims"][0]
    assert stored["evidence"]["n"] == 3 and stored["evidence"]["unit"] == "seed" and stored["evidence"]["n_min"] == 3
    assert stored["evidence"]["lo"] < 0.1 < stored["evidence"]["hi"] and stored["evidence"]["reason"] == \
        "a tenth of a point"
    assert stored["evidence"]["null"] == 0.0 and stored["evidence"]["boundary"] == 0.1
    assert stored["interval"].startswith("+0.1 [") and "; > 0.1;" in stored["interval"]
    assert stored["criterion"] == t1.criterion() and "smallest effect that matters 0.1" in stored["criterion"]
    assert stored["declaration"] == t1.to_dict() and stored["paper"] == "+4.4 points"
    other = results.Run("cpu", name="00_data")
    z = Claim("z", "00_data", "A claim.", "1", "Fig. 1", Part("count", "deterministic", direction="less", null=1,
                                                                smallest=0.5, reason="r", n_min=1))
    other.claim(z, ours=0, effects=results.exact(0))
    other.save()
    rows = results.scoreboard("smoke")
    assert [(r["paper"], r["chapter"], r["id"], r["verdict"]) for r in rows] == [
        ("A", "a7_demo", "t1", "inconclusive at this budget"), ("A", "a7_demo", "t2", "not measurable at this profile")]
    assert rows[0]["profile"] == "smoke" and len(rows[0]["date"]) == 10 and rows[0]["evidence"]["n"] == 3
    assert [r["paper"] for r in results.scoreboard()] == ["—", "A", "A"]
    with pytest.raises(TypeError, match="takes the claim's declaration"):
        run.claim("t3", ours=1, effects=[1.0, 2.0])
    with pytest.raises(TypeError, match="pass effects, not evidence"):
        run.claim(t1, ours=1, effects=verdicts.decide([1.0, 2.0, 3.0], reason="r", unit="seed"))
    with pytest.raises(ValueError, match="Unknown profile"):
        results.scoreboard("laptop")


@dataclasses.dataclass(frozen=True)
class Settings:
    profile: str = "smoke"
    seeds: int = 2
    methods: tuple = ("rrc", "translate")


def test_a_run_takes_its_name_from_the_runner_and_its_profile_and_params_from_the_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    monkeypatch.setenv(results.CHAPTER_ENV, "b9_demo")
    run = results.Run(Settings())
    assert run.notebook == "b9_demo" and run.profile.name == "smoke" and run.device == "cpu"
    assert run.params == {"profile": "smoke", "seeds": 2, "methods": ("rrc", "translate")}
    assert run.save() == tmp_path / "smoke" / "b9_demo.json"
    assert results.load("b9_demo", "smoke")["params"]["methods"] == ["rrc", "translate"]
    assert results.Run(Settings(), name="other").notebook == "other", "name= wins over the runner's name"
    prof = results.get_profile("cpu").replace(epochs=1)
    run = results.Run(prof, params={"seed": 3})
    assert run.profile.epochs == 1 and run.params == {"seed": 3} and run.notebook == "b9_demo"
    legacy = results.Run("c9_demo", "gpu", params={"seed": 1})  # the older form: name, then profile
    assert legacy.notebook == "c9_demo" and legacy.profile.name == "gpu" and legacy.params == {"seed": 1}


def test_a_run_without_a_name_or_with_wrong_arguments_says_what_to_pass(monkeypatch):
    monkeypatch.delenv(results.CHAPTER_ENV, raising=False)
    with pytest.raises(ValueError, match=r"outside it, pass name=, e\.g\. results\.Run\(S, name="):
        results.Run(Settings())
    with pytest.raises(ValueError, match="'demo' is not a profile"):
        results.Run("demo")
    with pytest.raises(TypeError, match="the parameters of a run made from settings are the settings"):
        results.Run(Settings(), name="x", params={"seed": 1})
    with pytest.raises(TypeError, match=r"e\.g\. Run\('cpu', name='smoke'\)"):
        results.Run("smoke", "cpu")  # ambiguous: a profile name where the older form has the run's name
    with pytest.raises(TypeError, match="give the settings or the profile first"):
        results.Run("demo", "cpu", name="demo")
    with pytest.raises(TypeError, match="a chapter's settings"):
        results.Run({"profile": "smoke"}, name="x")
    with pytest.raises(ValueError, match="file stem"):
        results.Run("smoke", name="a/b")


def test_mean_se():
    mean, se = results.mean_se([1.0, 2.0, 3.0, 6.0])
    assert mean == 3.0 and se == pytest.approx(np.std([1, 2, 3, 6], ddof=1) / 2)
    assert results.mean_se(torch.tensor([2.0, 4.0])) == (3.0, 1.0)
    one, none = results.mean_se([0.5]), results.mean_se([])
    assert one[0] == 0.5 and math.isnan(one[1]) and math.isnan(none[0]) and math.isnan(none[1])
    assert all(math.isnan(v) for v in results.mean_se([1.0, math.nan, 2.0]))
    assert not hasattr(results, "beyond_se"), "a mean beyond k SE on 2 seeds (1 df) decided verdicts; decide does"


def test_text_says_na_where_a_number_was_not_measured():
    import numpy as np

    assert results.text(57.25, ".1f") == "57.2" and results.text(3) == "3"
    for missing in (None, float("nan"), np.float32("nan")):
        assert results.text(missing, ".2f") == "n/a"


def test_compare_finds_moved_verdicts_and_numbers_but_not_when_or_how_long(tmp_path, capsys):
    from invlib.__main__ import main
    from invlib.utils import atomic_save

    def write(folder, gains, seconds):
        run = results.Run("smoke", name="b9_demo")
        run.log("gain", float(np.mean(gains)))
        run.claim(_declared("g", "b9_demo"), float(np.mean(gains)), gains)
        record = {**run.to_dict(), "seconds": seconds, "book_seconds": seconds + 1}
        atomic_save(json.dumps(record), tmp_path / folder / "b9_demo.json")

    write("a", [1.0, 1.2, 0.9], 10.0)
    write("b", [1.0, 1.2, 0.9], 99.0)
    [row] = results.compare(tmp_path / "a", tmp_path / "b")
    assert row["same_json"] and not row["moved"] and row["estimate_a"] == row["estimate_b"]
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    write("b", [1.0, -1.2, 0.9], 10.0)  # another number, another verdict
    [row] = results.compare(tmp_path / "a", tmp_path / "b")
    assert row["moved"] and not row["same_json"] and row["verdict_b"] == results.INCONCLUSIVE
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "MOVED" in out and "0 of 1 chapters wrote the same JSON" in out and "differs: b9_demo" in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "missing")]) == 2


def test_compare_names_every_claim_whose_declaration_differs(tmp_path, capsys):
    from invlib.__main__ import main
    from invlib.utils import atomic_save

    for folder, smallest in (("a", 0.1), ("b", 0.1), ("c", 5.0)):
        run = results.Run("smoke", name="b9_demo")
        run.claim(_declared("g", "b9_demo", smallest=smallest), 1.03, [1.0, 1.2, 0.9])
        atomic_save(json.dumps(run.to_dict()), tmp_path / folder / "b9_demo.json")
    [row] = results.compare(tmp_path / "a", tmp_path / "b")
    assert not row["declaration_moved"] and not row["moved"]
    [row] = results.compare(tmp_path / "a", tmp_path / "c")
    assert row["declaration_moved"] and row["moved"] and row["estimate_a"] == row["estimate_b"]
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "c")]) == 1
    out = capsys.readouterr().out
    assert "DECLARATION CHANGED" in out and "1 claims declared differently" in out
    assert "declaration changed: b9_demo g" in out


def test_a_chapter_opens_with_its_settings_and_run_and_closes_by_saving(tmp_path, monkeypatch, capsys):
    """open_chapter reads the parameters cell (fixed arguments first), names the run from the runner; close saves,
    and prints where only outside the runner (the runner's page links the results itself)."""
    import dataclasses as dc

    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    monkeypatch.setenv(results.CHAPTER_ENV, "zz_demo")

    @dc.dataclass(frozen=True)
    class Settings:
        profile: str = "cpu"
        experiment: str = "a"
        seeds: int = 3

    S, run = results.open_chapter(lambda **kw: Settings(**kw), {"profile": "smoke", "seeds": 2, "_x": 1},
                                  experiment="b")
    assert (S.profile, S.experiment, S.seeds) == ("smoke", "b", 2) and run.notebook == "zz_demo"
    run.log("x", 1.5)
    assert run.close() is None and results.load("zz_demo", "smoke")["metrics"] == {"x": 1.5}
    assert capsys.readouterr().out == "", "inside the book runner the page shows nothing of close()"
    monkeypatch.delenv(results.CHAPTER_ENV)
    results.Run(S, name="zz_demo").close()
    path = tmp_path / "smoke" / "zz_demo.json"
    assert f"results: {path}" in capsys.readouterr().out


def test_a_run_records_the_settings_a_chapter_chose_after_it_opened():
    """Run.use replaces the stored parameters by the final settings (D1's band); other settings are refused."""
    import dataclasses as dc

    @dc.dataclass(frozen=True)
    class Settings:
        profile: str = "smoke"
        h_min: float | None = None

    run = results.Run(Settings(), name="zz_demo")
    run.use(Settings(h_min=1.0))
    assert run.params == {"profile": "smoke", "h_min": 1.0}
    with pytest.raises(ValueError, match="profile 'smoke'"):
        run.use(Settings(profile="cpu"))
    with pytest.raises(ValueError, match="settings"):
        run.use({"profile": "smoke"})


def test_variance_is_recorded_per_parameter_and_effect_and_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("smoke", name="variance_demo")
    rng = np.random.default_rng(0)
    split = run.variance("seeds", "A - B", rng.normal(0, 1.0, (3, 50)))
    run.variance("seeds", "A - C", rng.normal(0, 1.0, (3, 50)))
    assert set(run.variance_splits["seeds"]) == {"A - B", "A - C"} and split["items"] == 50
    saved = json.loads(run.save().read_text())
    assert saved["variance"]["seeds"]["A - B"]["seeds"] == 3
    assert saved["variance"]["seeds"]["A - B"]["evaluation"] == pytest.approx(split["evaluation"], abs=1e-6)
    with pytest.raises(ValueError, match="parameter"):
        run.variance("", "A - B", rng.normal(0, 1.0, (3, 50)))


def test_replicates_record_their_costs_claims_and_whose_family_they_are():
    run = results.Run("smoke", name="reader")
    run.replicates("rrc.seeds", [2.0, 3.0], ["b/x"], note="B1's models")
    run.replicates("rrc.seeds", [4.0], "b/y", same_as="b1_rrc_decomposition:seeds")
    rec = run.replicate_costs["rrc.seeds"]
    assert (rec["n"], rec["seconds"], rec["claims"], rec["same_as"]) == (3, [2.0, 3.0, 4.0], ["b/x", "b/y"],
                                                                        "b1_rrc_decomposition:seeds")
    for bad in ("seeds", "b1:", ":seeds", "a:b:c"):
        with pytest.raises(ValueError, match="same_as: '<chapter>:<parameter>'"):
            run.replicates("more", [1.0], ["b/z"], same_as=bad)
    with pytest.raises(ValueError, match="unit: what one replicate is"):
        run.replicates("more", [1.0], ["b/z"], unit="person")
    assert sorted(run.replicate_costs) == ["rrc.seeds"]  # nothing recorded by a call that failed
