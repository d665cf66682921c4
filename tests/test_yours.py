"""invlib.papers.s.yours and yours_reports (chapter Y1): settings, the measures of any model on a generated folder of
non-square images of mixed sizes, S1's numbers for the same model and images, each model form, the messages of bad
inputs, the chapter through the book's runner and ``python -m invlib measure``."""

import json
import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from invlib import book, models, results, streaming
from invlib.__main__ import main
from invlib.papers.s import agreement, yours
from invlib.papers.s import yours_reports as R


def write_folder(root, classes: int = 3, per_class: int = 6, seed: int = 0):
    """``root/c<k>/``: images of mixed, non-square sizes (24-90 px a side), a shape per class (a rectangle or an
    ellipse of a colour of its own) at a drawn place on a dark background, PNG and JPEG."""
    return Path(streaming.demo_folder(root, classes * per_class, classes, seed, sizes=(24, 89), shapes=True))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_folder(tmp_path_factory.mktemp("images"))


def small(**changes):
    """Settings small enough for a test: 12 images, one transformation, two layers."""
    base = dict(n_images=12, transforms=("rotation",), references=(), map_epochs=1, resamples=200, progress=False)
    return yours.settings("smoke", **{**base, **changes})


# ------------------------------------------------------------------------------ settings and inputs
def test_settings_take_lists_or_text_and_reject_what_they_cannot_measure():
    S = yours.settings("smoke", layers="layer2, pre_logits", transforms=["zoom"], references="book:B1/rrc")
    assert S.layers == ("layer2", "pre_logits") and S.transforms == ("zoom",) and S.references == ("book:B1/rrc",)
    assert yours.settings("cpu").references == yours.REFERENCES and yours.settings("cpu").n_images == 256
    with pytest.raises(ValueError, match="Valid transformations: brightness, rotation, translation, zoom"):
        yours.settings("smoke", transforms=("shear",))
    with pytest.raises(ValueError, match="references are the book's models"):
        yours.settings("smoke", references=("resnet18",))
    with pytest.raises(ValueError, match="n_images at least 8"):
        yours.settings("smoke", n_images=4)
    with pytest.raises(ValueError, match="levels are B's grid levels"):
        yours.settings("smoke", levels=(3, 5))


def test_a_layer_the_model_lacks_lists_its_stages(folder):
    with pytest.raises(ValueError, match="no layer 'layer9'.*Its stages: layer1, layer2, layer3, layer4, pre_logits"):
        yours.check(small(model="random:small_resnet18", side=28, data=str(folder), layers=["layer9"]))


def test_check_reads_the_folder_at_the_models_side_and_says_why_accuracies_are_left_out(folder):
    found = yours.check(small(model="random:small_resnet18", side=28, data=str(folder)))
    assert found["side"] == 28 and found["images"] == 12 and found["classes"] == 3
    assert found["layers"] == ["layer4", "pre_logits"]  # smoke: the deepest stage and the embedding
    assert found["outputs"] == 1000 and "1000 outputs and the images 3 classes" in found["accuracy"]
    ds = yours.images(small(data=str(folder), n_images=8), 20)
    assert tuple(ds.images.shape) == (8, 3, 20, 20) and ds.boxes[0].tolist() == [0.0, 0.0, 20.0, 20.0]


def test_a_missing_folder_and_a_folder_of_one_class(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder of images here"):
        yours.images(small(data=str(tmp_path / "nowhere")), 16)
    one = write_folder(tmp_path / "one", classes=1, per_class=10)
    found = yours.check(small(model="random:small_resnet18", side=16, data=str(one)))
    assert found["classes"] == 1 and found["accuracy"] == "the images have one class: there is nothing to classify"


# ------------------------------------------------------------------------------ the measures
@pytest.mark.slow
def test_every_measure_of_a_model_whose_classes_are_the_folders(folder):
    """A 3-class model on the 3-class folder: every measure at both layers, each value inside its interval over
    images, the accuracies as shares of images (Wilson); a second call reads everything from the cache."""
    S = small(data=str(folder), transforms=("zoom", "rotation"), levels=(0, 9))
    net = models.create("small_resnet18", num_classes=3, seed=0).eval()
    ds = yours.images(S, 28)
    rows, seconds = yours.measure_model(S, net, ds, ["layer3", "pre_logits"])
    t = pd.DataFrame(rows)
    assert set(t["layer"]) == {"layer3", "pre_logits", yours.OUTPUT}
    got = {(r.layer, r.transform, r.measure) for r in t.itertuples()}
    for layer in ("layer3", "pre_logits"):
        assert {(layer, "zoom", m) for m in ("a_probe", "b_invariance", "b_alignment")} <= got
        assert {(layer, "rotation", m) for m in ("b_invariance", "c_inv_acc", "c_eq_acc", "c_inv_l2", "c_eq_l2")} <= got
        assert (layer, "zoom", "c_inv_acc") not in got and (layer, "rotation", "a_probe") not in got  # C: no zoom
    assert ((t["low"] <= t["value"] + 1e-9) & (t["value"] <= t["high"] + 1e-9)).all() and (t["unit"] == "image").all()
    acc = t[(t["measure"] == "accuracy") & (t["transform"] == "none")].iloc[0]
    iv = results.share_interval(round(acc["value"] / 100 * 12), 12)
    assert acc["interval"] == "wilson" and acc["n"] == 12 and acc["low"] == pytest.approx(100 * iv.lo)
    assert set(t.loc[t["measure"].str.startswith("c_"), "n"]) == {6} and seconds["C"] > 0
    again, seconds = yours.measure_model(S, net, ds, ["layer3", "pre_logits"])
    assert again == rows and seconds == {"A": 0.0, "B": 0.0, "C": 0.0}


def test_b_intervals_resample_images():
    """B's intervals over images: the alignment's resample statistic at every image once is the sweep's alignment,
    and the median's bootstrap brackets the sweep's median."""
    from invlib.papers.b import similarity

    x = torch.rand(20, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    w = torch.randn(3 * 16 * 16, 8, generator=torch.Generator().manual_seed(1))
    embed = lambda b: b.flatten(1) @ w  # noqa: E731
    rows, per = similarity.sweep({"lin": embed}, x, ["rotate", "brightness_up"], levels=[3], per_image=True)
    stat = yours._alignment_statistic([p["pairs"] for p in per[:1]])
    assert stat(np.arange(20)) == pytest.approx(rows[0]["alignment"], abs=1e-6)
    drawn = np.random.default_rng(0).integers(0, 20, (5, 20))
    assert np.allclose(stat(drawn), [stat(d) for d in drawn])  # all resamples at once, as one at a time


@pytest.mark.slow
def test_the_numbers_of_a_zoo_model_are_s1s_for_the_same_model_and_images():
    """At pre_logits (and the accuracy), every value is what chapter S1's agreement.measure_model gives for the same
    model on the same images (A's probe and C's maps on the same halves)."""
    S = yours.settings("smoke", model="book:B1/none", layers=["pre_logits"], references=(), n_images=24,
                       progress=False, resamples=200)
    t = yours.measure(S)
    model, side = yours.load_model(S.model, "smoke")
    ds = yours.images(S, side)
    halves = (ds.rows(slice(0, 12)), ds.rows(slice(12, 24)))
    S1 = agreement.settings("smoke", seeds=1, augerino=False, variation=False, transforms=S.transforms,
                            levels=S.levels, map_epochs=S.map_epochs, seed=S.seed, progress=False)
    s1 = pd.DataFrame(agreement.measure_model(S1, model, ds, halves, halves)).set_index(["transform", "measure"])
    mine = t[t["value"].notna()].set_index(["transform", "measure"])["value"]
    both = s1["value"].to_frame("s1").join(mine.rename("yours"), how="left")
    assert len(both) == len(s1) > 20 and both["yours"].notna().all()
    assert np.allclose(both["s1"], both["yours"], atol=1e-4)


@pytest.mark.slow
def test_each_model_form_through_measure(folder, tmp_path):
    """A timm model saved to a file (name@weights), a factory in a Python file (file.py:function, its INPUT_SIDE) and
    a zoo entry: each measured on the folder, its label in the table."""
    import timm

    weights = tmp_path / "r18.pt"
    torch.save(timm.create_model("resnet18", num_classes=3).state_dict(), weights)
    factory = tmp_path / "nets.py"
    factory.write_text(textwrap.dedent("""
        import timm
        INPUT_SIDE = 32

        def build():
            return timm.create_model("resnet18", num_classes=3)
    """))
    forms = ((f"resnet18@{weights}", 64, "resnet18@r18.pt"), (f"{factory}:build", None, "nets.py:build"),
             ("zoo:small_resnet18/untrained", None, "zoo:small_resnet18/untrained"))
    for spec, side, name in forms:
        t = yours.measure(small(model=spec, side=side, data=str(folder)))
        mine = t[t["role"] == "yours"]
        assert set(mine["model"]) == {name} and {"b_invariance", "c_inv_l2"} <= set(mine["measure"]), spec
        assert t.attrs["found"]["side"] == (side or {"nets.py:build": 32}.get(name, 28)), spec
    assert set(mine.loc[mine["value"].isna(), "measure"]) == set(yours.NEEDS_CLASSES)  # 10 outputs, 3 classes


@pytest.mark.slow
def test_a_one_class_folder_leaves_the_accuracies_out_with_the_reason(tmp_path):
    one = write_folder(tmp_path / "one", classes=1, per_class=12)
    t = yours.measure(small(model="random:small_resnet18", side=16, data=str(one)))
    left = R.skipped(t)
    assert len(left) == 3 and set(left["why"]) == {"the images have one class: there is nothing to classify"}
    assert {"b_invariance", "b_alignment", "c_inv_l2", "c_eq_l2"} <= set(t.loc[t["value"].notna(), "measure"])


# ------------------------------------------------------------------------------ reports
def test_reports_draw_tables_and_numbers_from_a_table(tmp_path):
    t = R.demo_table()
    assert R.measures_of(t) == ["accuracy", "b_invariance"]
    assert R.fingerprint(t, "b_invariance").columns.tolist() == ["layer4", "pre_logits"]
    assert R.wide(t, "b_invariance").columns.tolist() == ["layer4", "pre_logits", "B1/none"]
    facts = R.numbers(t, yours.settings("smoke", transforms=("zoom", "rotation")))
    assert facts["y1_least_invariant"] == "rotation (0.30, 95 % interval 0.20 to 0.40)"
    assert facts["y1_references"].startswith("`B1/none` (chapter B1's small ResNet")
    assert facts["y1_skipped"] == "nothing (every measure was taken)"
    assert all(isinstance(v, str) and v for v in facts.values())
    run = results.Run("smoke", name="y1_demo")
    written = R.write_csv(t, run)
    assert [p.name for p in written] == ["y1_demo.csv", "y1_demo_accuracy.csv", "y1_demo_b_invariance.csv"]
    assert len(pd.read_csv(written[0])) == len(t)


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_the_figures_point_up_for_more_invariance():
    """Every panel of both figures: up = more invariant (or equivariant); the axes of the measures where lower is more
    invariant (A's probe, C's distances) are reversed and say so."""
    t = R.demo_table()
    extra = t[t["measure"] == "b_invariance"].assign(measure="c_inv_l2", value=lambda d: 1 - d["value"])
    t = pd.concat([t, extra], ignore_index=True)
    t.attrs = R.demo_table().attrs
    for fig in (R.plot_fingerprint(t), R.plot_references(t)):
        axes = {ax.get_title().split("\n")[0]: ax for ax in fig.axes if ax.get_title()}
        l2 = axes["C: invariance L2"]
        assert l2.yaxis_inverted() and "reversed" in l2.get_ylabel() and "↑ more invariant" in l2.get_ylabel()
        assert not axes["B: relative invariance"].yaxis_inverted()


@pytest.mark.slow
def test_a_pooled_layer_against_the_same_layer_with_its_positions(folder):
    """R.pooling: the layer averaged over positions gives the table's B invariance (the same sweep); the flattened
    layer and the mean colour are measured beside it; the prose's numbers name the most invariant transformation."""
    S = small(model="random:small_resnet18", side=28, data=str(folder), transforms=("rotation", "zoom"),
              layers=["layer1", "pre_logits"], levels=(0, 5))
    net, _ = yours.load_model(S.model, "smoke")
    ds = yours.images(S, 28)
    rows, _ = yours._sweep_rows(S, net, ds, ["layer1"], accuracy=False)  # B's measures alone, as measure_model's
    table = pd.DataFrame(rows["layer1"]).assign(model="m", role="yours")
    table.attrs["found"] = yours.check(S)
    pooled = R.pooling(S, table)
    assert pooled.attrs["layer"] == "layer1" and list(pooled.index) == ["rotation", "zoom"]
    mine = table[table["measure"] == "b_invariance"].set_index("transform")["value"]
    assert np.allclose(pooled[R.POOLED], mine[pooled.index], atol=1e-5)
    facts = R.pooling_numbers(pooled)
    assert facts["y1_pool_transform"] == pooled[R.POOLED].idxmax() and facts["y1_pool_layer"] == "`layer1`"
    table.attrs["found"] = dict(table.attrs["found"], layers=["pre_logits"])
    assert R.pooling(S, table) is None and R.pooling_numbers(None)["y1_pool_change"].startswith("not measured")


EMPTY_SLOTS = ("of  at", " ; ", "are .", "to  and", " is .", "beside :", "{glue")
REPRS = ("dtype:", "Name:", "object at 0x", "None", "<IPython", "<Figure size")


def assert_reads_whole(page: str) -> None:
    """A page of the measure command reads whole: no glue slot left empty, no repr, in what a reader sees (the code
    folded under each cell is left out: it may say None)."""
    import re

    shown = re.sub(r"<details><summary>code</summary>.*?</details>", "", page, flags=re.S)
    shown = re.sub(r"data:image/png;base64,[^\"]+", "", shown)
    text = re.sub(r"<[^>]+>", "", shown)
    for bad in EMPTY_SLOTS + REPRS:
        assert bad not in text and bad not in " ".join(text.split()), (bad, text[max(0, text.find(bad) - 200):][:400])
    assert "<figcaption>" in shown and shown.count("<figure") == shown.count("<figcaption>")


def test_the_page_fills_glue_that_myst_nb_keeps_under_a_prefix(tmp_path):
    """myst-nb keeps a glued value that is not displayed under ``application/papermill.record/``: the page fills it;
    the runner's book section and the findings box of a chapter without claims give way to the page's own ending."""
    import nbformat

    from invlib.pages import DRESSED

    pre = "application/papermill.record/"
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Y\n\n<!-- findings -->\n<div>no claim</div>\n<!-- /findings -->\n\nThe "
                                      "model {glue:md}`m` at {glue:text}`side:.0f` px. See {download}`JSON <x.json>`."),
        nbformat.v4.new_code_cell('model = "a@b.pt"\nprofile = "smoke"', metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("glue()"), nbformat.v4.new_markdown_cell("## Reproduce this chapter\n\nmake book")])
    nb.cells[-1].metadata[DRESSED] = True
    nb.cells[2].outputs = [nbformat.v4.new_output("display_data", {pre + "text/markdown": "`mine`", pre + "text/plain":
                                                  "<IPython.core.display.Markdown object>"},
                                                  metadata={"scrapbook": {"name": "m", "mime_prefix": pre}}),
                           nbformat.v4.new_output("display_data", {pre + "text/plain": "28.0"},
                                                  metadata={"scrapbook": {"name": "side", "mime_prefix": pre}})]
    nbformat.write(nb, tmp_path / "y.ipynb")
    (tmp_path / "y.json").write_text("{}")
    text = R.write_page(tmp_path / "y.ipynb", tmp_path / "y.html").read_text()
    assert "The model <code>mine</code> at 28 px. See JSON." in text
    assert "no claim" not in text and "make book" not in text and '<a href="y.json">y.json</a>' in text
    assert "python -m invlib measure a@b.pt --data scenes --profile smoke" in text


# ------------------------------------------------------------------------------ the chapter and the command
@pytest.mark.slow
def test_the_chapter_at_smoke_through_the_runner(book_copy, folder, tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))  # not the smoke book's, which others read
    ch = book.execute("y1_your_model", "smoke", {"model": "zoo:small_resnet18/untrained", "data": str(folder)},
                      root=book_copy)
    assert ch.status == "ok"
    rec = results.load("y1_your_model", "smoke")
    assert rec["claims"] == [] and rec["metrics"]["found"]["classes"] == 3
    assert {m["measure"] for m in rec["metrics"]["measures"]} >= {"a_probe", "b_invariance", "c_inv_l2"}
    assert {m["model"] for m in rec["metrics"]["measures"]} == {"zoo:small_resnet18/untrained", "B1/none"}
    folder_out = results.results_dir("smoke")
    assert (folder_out / "y1_your_model.csv").exists() and (folder_out / "y1_your_model_b_invariance.csv").exists()


@pytest.mark.slow
def test_the_measure_command_writes_a_page_csv_and_json(book_copy, folder, tmp_path, capsys, monkeypatch):
    import timm

    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))

    weights = tmp_path / "r18.pt"
    torch.save(timm.create_model("resnet18", num_classes=3).state_dict(), weights)
    code = main(["measure", f"resnet18@{weights}", "--data", str(folder), "--profile", "smoke", "-p", "side=32",
                 "-p", "references=book:B1/none", "--book-dir", str(book_copy)])
    out = capsys.readouterr().out
    assert code == 0, out
    # the reference's zoo models trained first, by the book's training phase; then the chapter on every core
    assert out.index("(zoo training phase): ") < out.index("measured in")
    assert f"on {os.cpu_count()} CPU thread" in out
    where = {line.split(":", 1)[0]: line.split(":", 1)[1].strip().split(" ")[0] for line in out.splitlines()
             if line.startswith(("page:", "json:", "csv:"))}
    page = open(where["page"]).read()
    assert "data:image/png;base64," in page and "{glue" not in page and "resnet18@r18.pt" in page
    assert_reads_whole(page)
    assert json.loads(open(where["json"]).read())["params"]["side"] == 32
    assert "b_invariance" in open(where["csv"]).read()


@pytest.mark.slow
def test_the_page_of_a_small_random_model_on_a_folder_reads_whole(book_copy, folder, tmp_path, capsys, monkeypatch):
    """``python -m invlib measure`` on a random-init small ResNet saved to a file (10 outputs: the folder's 3 classes
    are not its classes, so the accuracies are left out) and a generated folder: every glued slot of the page filled,
    no repr; the notebook's every glue name has a value."""
    import nbformat

    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    weights = tmp_path / "small.pt"
    torch.save(models.create("small_resnet18", num_classes=10, seed=0).state_dict(), weights)
    code = main(["measure", f"small_resnet18@{weights}", "--data", str(folder), "--profile", "smoke", "-p", "side=28",
                 "-p", "references=book:B1/none", "--book-dir", str(book_copy)])
    out = capsys.readouterr().out
    assert code == 0, out
    page = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("page:"))
    text = open(page).read()
    assert_reads_whole(text)
    assert "small_resnet18@small.pt" in text and "Accuracies are left out: the model has 10 outputs" in text
    nb = nbformat.read(str(book_copy / "book" / "_generated" / "y1_your_model.ipynb"), as_version=4)
    glued = R._glued(nb)
    names = {m.group(1) for c in nb.cells if c.cell_type == "markdown" for m in R._GLUE.finditer(c.source)}
    assert names and all(glued.get(n) for n in names), sorted(n for n in names if not glued.get(n))


@pytest.mark.parametrize("argv, message", [
    (["measure", "resnet18@/no/such/weights.pt"], None),
    (["measure", "nets:build"], "<file.py>:<function>"),  # an unknown form lists the forms
    (["measure", "random:small_resnet18", "-p", "layers=layer9"], "no layer 'layer9'"),
    (["measure", "random:small_resnet18", "-p", "shear=1"], "has no parameter shear"),
    (["measure", "WEIGHTS"], "unexpected"),  # a small ResNet's weights for timm's resnet18: the keys that do not fit
    (["measure", "GREY:build"], "expects"),  # a model for 1-channel images: says what it expects
    (["measure", "random:small_resnet18", "--data", "EMPTY"], "EMPTY"),  # a folder without images names it
])
def test_the_measure_command_says_what_is_wrong_in_one_line(argv, message, folder, tmp_path, capsys):
    weights = tmp_path / "small.pt"
    torch.save(models.create("small_resnet18").state_dict(), weights)
    (tmp_path / "grey.py").write_text("from invlib import models\n\ndef build():\n    return models.create("
                                      "'small_resnet18', in_chans=1)\n")
    (tmp_path / "EMPTY" / "cats").mkdir(parents=True)
    swap = {"WEIGHTS": f"resnet18@{weights}", "GREY:build": f"{tmp_path / 'grey.py'}:build",
            "EMPTY": str(tmp_path / "EMPTY")}
    argv = [swap.get(a, a) for a in argv]
    code = main([*argv, *([] if "--data" in argv else ["--data", str(folder)]), "--profile", "smoke"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert message is None or message in err, err
