"""invlib.papers.a.tables: chapters A1 and A2's settings, images and backbones, the runs behind Tables 1 and 2 and
the layer maps; the chapters themselves at smoke."""

import pytest
import torch
from test_probes import _object

from invlib import models, results, zoo
from invlib.models import PretrainedUnavailableError
from invlib.papers.a import probes, probes_reports, tables
from invlib.papers.a.protocol import PROTOCOL


def test_featurizers_sharing_views_get_the_features_they_would_get_alone():
    images, boxes = _object(24)
    images = (images.float() * torch.rand(24, 3, 1, 1)).to(torch.uint8)
    feats = {"pixels": probes.Passthrough(), "dct": probes.DCT(), "big": probes.Passthrough()}
    sizes = {"pixels": 16, "dct": 16, "big": 24}
    table, trained = tables.run_table(feats, (images[:16], boxes[:16]), (images[16:], boxes[16:]), sizes=sizes,
                                      tasks=["hue", "zoom_in"])
    assert table.featurizer.tolist() == ["pixels", "pixels", "dct", "dct", "big", "big"]  # featurizer order
    alone = probes.extract(probes.DCT(), images[:16], boxes[:16], "hue", 16, cache=False)
    assert torch.equal(trained["dct", "all", "hue"].w, probes.train_probe(alone).w)
    assert len(trained["big", "all", "zoom_in"].w) == 3 * 24 * 24


@pytest.mark.slow
def test_importance_sums_to_one_per_task_and_halves():
    images, boxes = _object(64)
    images = (images.float() * torch.rand(64, 3, 1, 1)).to(torch.uint8)  # some colour variety
    f = probes.Backbone(models.create("small_resnet18"))
    table, fitted = tables.run_table({"r18": f}, (images[:48], boxes[:48]), (images[48:], boxes[48:]),
                                     tasks=["brightness", "zoom_in"], sizes={"r18": 28}, layers=probes.halves)
    assert set(table.layers) == {"first half", "second half", "all"} and len(table) == 6
    for task in ("brightness", "zoom_in"):
        imp = probes.importance(fitted["r18", "all", task])
        assert len(imp) == 20 and torch.allclose(torch.tensor(imp.sum().values), torch.ones(2, dtype=torch.float64))
        assert (imp.values >= 0).all()
    h = probes.halves(f.groups)
    assert h["first half"] + h["second half"] == h["all"] and len(h["first half"]) == 10
    assert probes.depth([1, 0, 0]) == 0 and probes.depth([0, 0, 1]) == 1
    first = fitted["r18", "first half", "zoom_in"]
    assert [n for n, _ in first.groups] == h["first half"] and len(first.w) == sum(d for _, d in first.groups)


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_load_images_are_disjoint_and_padded():
    (tr, trb), (va, vab) = tables.load_images("fashion_mnist_color", 50, 20, seed=1, canvas=1.5)
    assert tr.shape == (50, 3, 42, 42) and va.shape == (20, 3, 42, 42)
    flat_tr, flat_va = {bytes(x.numpy()) for x in tr}, {bytes(x.numpy()) for x in va}
    assert not flat_tr & flat_va
    assert (probes.zoom_out_slack(trb, (42, 42)) >= 1 / 3 - 1e-6).all()


def test_settings_default_to_the_paper_and_profiles_change_what_they_must(tmp_path):
    paper = tables.settings("paper")
    assert (paper.dataset, paper.n_train, paper.n_val, paper.canvas) == ("imagenet", 65_000, 21_000, 1.0)
    cpu = tables.settings("cpu", n_train=10, dataset="folder", root=str(tmp_path))
    assert (cpu.profile, cpu.n_train, cpu.n_val, cpu.dataset, cpu.root) == ("cpu", 10, 1000, "folder", str(tmp_path))
    assert cpu.backbones["ResNet-50"].startswith("zoo:") and paper.backbones["ResNet-50"] == "tv/resnet50"
    with pytest.raises(ValueError, match="Valid Settings fields: backbones"):
        tables.settings("cpu", pairs=10)
    with pytest.raises(TypeError, match="'n_train' must be int"):
        tables.settings("cpu", n_train="many")


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_seeds_of_the_backbones_each_get_table1_and_the_claim_one_share_per_seed(monkeypatch):
    assert (tables.settings("paper").seeds, tables.settings("smoke").seeds, tables.settings("cpu").seeds) == (1, 1, 3)
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        tables.settings("cpu", seeds=0)
    hub = tables.settings("cpu", backbones={"R": "tv/resnet18"})
    with pytest.raises(ValueError, match="hub weights and weight files have one seed"):
        tables.seed_featurizers(hub, 1)
    with pytest.raises(ValueError, match="hub weights and weight files have one seed"):
        tables.a1_zoo_specs("cpu", backbones={"R": "tv/resnet18"})
    assert tables.a1_zoo_specs("cpu", backbones={"R": "tv/resnet18"}, seeds=1) == []
    # seed k of a random: backbone is seed k's initialisation; seed 0 is featurizers'
    S = tables.settings("smoke", backbones={"R": "random:small_resnet18"}, seeds=3)
    keys = [tables.seed_featurizers(S, k)[0]["R"].key for k in range(3)]
    assert len(set(keys)) == 3 and keys[0] == tables.featurizers(S.backbones, "smoke")[0]["R"].key

    # run_seeds: every other seed on the same images and tasks, with its backbones' training seconds
    def stand_in(S, k):  # two cheap featurizers with made-up training seconds
        feats = {"ResNet-18": probes.Passthrough(), "ResNet-50": probes.DCT()}
        for f in feats.values():
            f.model = torch.nn.Linear(1, 1)
            f.model.zoo_info = {"seconds": 10.0 + k}
        return feats, {"ResNet-18": 16, "ResNet-50": 16}

    monkeypatch.setattr(tables, "seed_featurizers", stand_in)
    images, boxes = _object(40)
    images = (images.float() * torch.rand(40, 3, 1, 1)).to(torch.uint8)
    S = tables.settings("smoke", seeds=3, progress=False)
    runs = tables.run_seeds(S, (images[:30], boxes[:30]), (images[30:], boxes[30:]), stand_in(S, 0)[0],
                            tasks=["brightness", "zoom_in"])
    assert list(runs.tables) == [1, 2] and runs.seconds == [20.0, 22.0, 24.0]
    assert runs.tables[2].featurizer.tolist() == ["ResNet-18", "ResNet-18", "ResNet-50", "ResNet-50"]
    # the claim: one share per seed (seed 0's table and the others'), the seeds' seconds recorded
    from test_probes import _table1

    run = results.Run("demo", "smoke")
    probes_reports.report_table1(run, _table1(), ["ResNet-18", "ResNet-50"],
                                 tables.SeedRuns({1: _table1(), 2: _table1()}, [20.0, 22.0, 24.0]))
    claim = run.claims["table1/resnet18_at_least_resnet50"]
    assert (claim["evidence"]["n"], claim["ours"], claim["verdict"]) == (3, round(6 / 7, 3), "reproduced")
    rec = run.replicate_costs["seeds"]
    assert (rec["n"], rec["seconds"], rec["claims"]) == (3, [20.0, 22.0, 24.0], ["table1/resnet18_at_least_resnet50"])


def test_backbones_from_specs(tmp_path):
    with pytest.raises(PretrainedUnavailableError, match="local file"):
        zoo.load("tv/resnet18", "smoke")
    model, size = zoo.load("random:small_resnet18", "smoke")
    assert size == 224 and not model.training
    torch.save(model.state_dict(), tmp_path / "w.pt")
    again, _ = zoo.load(f"small_resnet18@{tmp_path / 'w.pt'}", "smoke")
    assert torch.equal(again.fc.weight, model.fc.weight) and again.input_normalization


def _grey_folder(root, n_per_class=6, classes=3, side=40):
    """root/<class>/<i>.png: greyscale PNGs of a bright bar on a dark ground, its size and place varying."""
    from PIL import Image

    g = torch.Generator().manual_seed(0)
    for c in range(classes):
        (root / f"c{c}").mkdir(parents=True)
        for i in range(n_per_class):
            img = torch.randint(0, 40, (side, side), generator=g, dtype=torch.uint8)
            k = int(torch.randint(8, 24, (1,), generator=g))
            img[k:k + 12, 4 + c:16 + c + k // 2] = 200 + c * 20
            Image.fromarray(img.numpy(), mode="L").save(root / f"c{c}" / f"{i}.png")
    return root


def test_greyscale_images_leave_colour_tasks_undefined_not_scored(tmp_path, capsys):
    S = tables.settings("smoke", dataset="folder",
                          root=str(_grey_folder(tmp_path / "grey")), n_train=200, n_val=100)
    train, val = tables.chapter_images(S)  # 18 images, not 300: all of them, split 2 : 1
    out = capsys.readouterr().out
    assert "18 images, fewer than the 300 asked for" in out and "hue undefined: greyscale" in out
    assert (len(train[0]), len(val[0])) == (12, 6) and train[0].shape[1] == 3
    assert set(probes.undefined_tasks(train[0])) == {"hue", "saturation"}
    table, trained = tables.run_table({"pixels": probes.Passthrough()}, train, val, sizes={"pixels": 16},
                                      tasks=["brightness", "hue", "saturation"])
    hue = table.set_index("task").loc["hue"]
    assert hue.val_acc != hue.val_acc and hue.undefined.startswith("greyscale")  # NaN, not 0.0
    assert ("pixels", "all", "hue") not in trained and ("pixels", "all", "brightness") in trained
    assert probes_reports.side_by_side(table).loc["pixels", "hue"] == "undefined"
    run = results.Run("demo", "smoke")
    probes_reports.log_table(run, table)
    assert run.metrics["table1/pixels/hue/val"] is None and "greyscale" in run.notes["table1/pixels/hue/val"]


def test_run_table_keeps_each_pair_and_fold_depths():
    images, boxes = _object(40)
    images = (images.float() * torch.rand(40, 3, 1, 1)).to(torch.uint8)
    f = probes.Backbone(models.create("small_resnet18"))
    table, _ = tables.run_table({"r18": f}, (images[:30], boxes[:30]), (images[30:], boxes[30:]),
                                tasks=["brightness"], sizes={"r18": 28}, layers=probes.halves, folds=3)
    for r in table.itertuples():
        assert r.val_correct.shape == (10,) and r.val_acc == r.val_correct.mean()
        assert len(r.fold_depth) == (3 if r.layers == "all" else 0)
        assert all(0 <= d <= 1 for d in r.fold_depth)


@pytest.mark.slow
def test_notebooks_write_table1_importance_ablation_and_claims(smoke_book):
    """The A chapters of the smoke book (run once per session by the book runner) log what the issue asks, and
    decide each claim on the replicates it declares."""
    a1 = results.load("a1_ranking_tasks", "smoke")
    for name in ("Passthrough", "DCT", "DCT (magnitude)", "ResNet-18", "ResNet-50"):
        for task in probes.TASKS:
            assert {f"table1/{name}/{task}/train", f"table1/{name}/{task}/val"} <= set(a1["metrics"])
    assert a1["metrics"]["table1/ResNet-18/brightness/val"] >= 90  # the paper's sanity check holds even in smoke
    claims = {c["id"]: c for c in a1["claims"]}
    assert len(claims) == 7
    for cid, c in claims.items():
        ev = c["evidence"]
        assert ev["verdict"] == c["verdict"] and c["interval"]
        if cid == "table1/resnet18_at_least_resnet50":  # two architectures trained once each: needs seeds
            assert (ev["unit"], ev["n"], ev["n_min"], c["verdict"]) == ("seed", 1, 3, "inconclusive at this budget")
        else:  # these backbones: every comparison on all the validation pairs
            assert {p["n"] for p in ev["parts"].values()} == {a1["metrics"]["val_images"]}
            assert {p["unit"] for p in ev["parts"].values()} == {"image"}
    a2 = results.load("a2_which_layers", "smoke")
    for task in probes.TASKS:
        for agg in ("mean", "max"):
            layers = a2["metrics"][f"importance/ResNet-18/{task}/{agg}"]
            assert len(layers) == 20 and abs(sum(layers.values()) - 1) < 1e-3
    assert {"table2/ResNet-50/second half/hue/val", "variants/untrained/zoom_in/val"} <= set(a2["metrics"])
    claims = {c["id"]: c["evidence"] for c in a2["claims"]}
    assert set(claims["fig5_6/colour_earlier"]["parts"]) == {"ResNet-18", "ResNet-50"}
    for part in claims["fig5_6/colour_earlier"]["parts"].values():
        assert (part["unit"], part["n"], part["method"]) == ("draw", probes_reports.DEPTH_FOLDS, "t")
    assert len(claims["fig5_6/contrast_later"]["parts"]) == 6
    assert set(claims["table2/first_half_beats_all"]["parts"]) == {"zoom_in", "aspect_ratio", "hue"}
    assert claims["table2/first_half_beats_all"]["parts"]["hue"]["level"] == pytest.approx(1 - 0.05 / 3)
    declared = PROTOCOL["table2/first_half_beats_second"].parts["hue"]
    assert claims["table2/first_half_beats_second"]["parts"]["hue"]["boundary"] == declared.boundary == 2.05


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_zoo_specs_list_exactly_the_zoo_models_the_chapters_load(monkeypatch, profile):
    from invlib import book

    loaded = []

    def get(entry, profile=None, progress=None, retrain=False, root=None):  # what zoo.load asks the zoo for
        loaded.append(zoo._as_spec(entry, profile, root))
        return models.create("small_resnet18", seed=0).eval()

    monkeypatch.setattr(zoo, "get", get)
    for chapter, function in (("a1_ranking_tasks", tables.a1_zoo_specs), ("a2_which_layers", tables.a2_zoo_specs)):
        params = {k: v for k, v in book.notebook_parameters(book.read_notebook(chapter)).items() if k != "profile"}
        S = tables.settings(profile, **params)
        loaded.clear()
        tables.featurizers(S.backbones, S.profile)
        if chapter == "a2_which_layers":
            tables.featurizers(S.variants, S.profile)
        else:  # A1's other seeds of its two backbones (run_seeds)
            for k in range(1, S.seeds):
                tables.seed_featurizers(S, k)
        seeds = {"smoke": 1, "cpu": 3}[profile]
        assert function(profile, **params) == loaded and len(loaded) == (2 * seeds if chapter == "a1_ranking_tasks"
                                                                          else 5)
    # the backbones are the profile's zoo entries, whatever the chapter's data; hub, file and random specs are none
    mixed = {"R": "random:small_resnet18", "Z": "zoo:small_resnet18/none", "H": "tv/resnet18"}
    specs = tables.a1_zoo_specs(profile, backbones=mixed, dataset="fashion_mnist", n_train=50, seeds=1)
    assert specs == [zoo.spec("small_resnet18/none", profile)]
    assert tables.a1_zoo_specs(profile)[1].arch == "small_resnet50_s2"


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_a_textured_background_takes_the_pixels_cue_for_zoom_out_and_contrast_away():
    """On black, raw pixels rank zoom-out and contrast nearly perfectly (lit pixels measure the object's share of the
    view; contrast lifts the black towards grey); on the texture they cannot (the paper's pixels: 46-62 %)."""
    acc = {}
    for background in ("as_is", "texture"):
        train, val = tables.load_images("fashion_mnist_color", 400, 300, canvas=1.5, background=background)
        table, _ = tables.run_table({"pixels": probes.Passthrough()}, train, val, tasks=["zoom_out", "contrast"],
                                    sizes={"pixels": 28})
        acc[background] = table.set_index("task").val_acc
    assert (acc["as_is"] > 0.95).all(), acc["as_is"]
    assert (acc["texture"] < 0.9).all(), acc["texture"]
    assert tables.texture("fashion_mnist_color") and not tables.texture("folder")
    with pytest.raises(ValueError, match="as_is"):
        tables.texture("fashion_mnist_color", "photo")
