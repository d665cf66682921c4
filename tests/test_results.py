"""invlib.results: one JSON per notebook run, and the "paper vs this run" table."""

import json
import math
import time

import numpy as np
import pytest
import torch

from invlib import results


def test_run_writes_metrics_paper_values_environment_and_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("a1_demo", "smoke", params={"seed": 1})
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
    run = results.Run("demo", "cpu")
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
    run = results.Run("demo", "smoke")
    with pytest.raises(TypeError, match="cannot store object"):
        run.log("x", object())
    with pytest.raises(ValueError, match="non-empty string"):
        run.log("", 1)
    with pytest.raises(FileNotFoundError, match="python -m invlib book --profile cpu --only nothing"):
        results.load("nothing", "cpu")


def test_claims_carry_computed_verdicts_into_json_and_the_scoreboard(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path))
    run = results.Run("a7_demo", "smoke")
    ours = 0.62
    got = run.claim("t1", "Accuracy is above 0.9.", paper=0.93, ours=ours, criterion="ours >= 0.9",
                    reproduced=ours >= 0.9, partly=ours >= 0.6)
    assert got == "partly"
    run.claim("t2", "Needs ImageNet.", paper=0.5, ours=None, criterion="ImageNet only", reproduced=False,
              measurable=False)
    run.claim("t1", "Accuracy is above 0.9.", paper=0.93, ours=0.95, criterion="ours >= 0.9", reproduced=True)
    assert run.claims_table()["verdict"].tolist() == ["reproduced", "not measurable at this profile"]
    run.save()
    other = results.Run("00_data", "cpu")
    other.claim("z", "A claim.", paper=1, ours=0, criterion="ours == 1", reproduced=False)
    other.save()
    rows = results.scoreboard("smoke")
    assert [(r["paper"], r["chapter"], r["id"], r["verdict"]) for r in rows] == [
        ("A", "a7_demo", "t1", "reproduced"), ("A", "a7_demo", "t2", "not measurable at this profile")]
    assert rows[0]["profile"] == "smoke" and len(rows[0]["date"]) == 10
    assert [r["paper"] for r in results.scoreboard()] == ["—", "A", "A"]
    with pytest.raises(TypeError, match="bool computed from this run"):
        run.claim("t3", "x", paper=1, ours=1, criterion="c", reproduced="yes")
    with pytest.raises(ValueError, match="Unknown profile"):
        results.scoreboard("laptop")
