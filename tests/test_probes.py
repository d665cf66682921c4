"""invlib.papers.a.probes: paper A's ranking tasks, featurizers, cached features, the probe, importance, the ILSVRC
filter."""

import pytest
import torch
from test_data import CAT, DOG, _jpeg, _xml

from invlib import data, models, results, zoo
from invlib.models import PretrainedUnavailableError
from invlib.papers.a import probes, probes_reports


def _object(n=1, size=48, box=(8, 8, 40, 40), inner=(22, 22, 26, 26)):
    """Black images with a grey box and a bright square inside it (a detail whose size we can measure)."""
    img = torch.zeros(n, 3, size, size, dtype=torch.uint8)
    img[:, :, box[1]:box[3], box[0]:box[2]] = 80
    img[:, :, inner[1]:inner[3], inner[0]:inner[2]] = 250
    return img, torch.tensor([box], dtype=torch.float32).expand(n, 4)


def _warm_fashion(n, seed):
    """Real Fashion-MNIST tinted with reds and oranges: saturation changes the pixels in one direction,
    so a linear probe on raw pixels can rank it (as on natural photos, which are mostly warm)."""
    gray = data.load("fashion_mnist", "train", n=n, seed=seed)
    g = torch.Generator().manual_seed(seed)
    rgb = data.colorize(gray.images, torch.rand(n, generator=g) * 0.6, 0.4 + 0.4 * torch.rand(n, generator=g))
    return rgb, gray.boxes


@pytest.mark.parametrize("task", ["brightness", "saturation"])
def test_passthrough_probe_learns_brightness_and_saturation(task):
    images, boxes = _warm_fashion(600, seed=3)
    tr = probes.extract(probes.Passthrough(), images[:400], boxes[:400], task, 28, seed=0, cache=False)
    va = probes.extract(probes.Passthrough(), images[400:], boxes[400:], task, 28, seed=1, cache=False)
    probe = probes.train_probe(tr)
    assert probes.accuracy(probe, va) >= 0.95


def test_labels_flip_when_the_pair_is_swapped():
    images, boxes = _object(16)
    for task in probes.TASKS:
        views = probes.sample(task, boxes, (48, 48), seed=2)
        assert torch.equal(views.swap().labels, -views.labels)
        assert set(views.labels.tolist()) == {-1.0, 1.0}  # both orders occur
    f = probes.extract(probes.DCT(), images, boxes, "zoom_in", 24, cache=False)
    probe = probes.train_probe(f)
    flipped = probes.Features(-f.diff, -f.labels, f.values.flip(1), f.std, f.groups)
    assert torch.allclose(probe.scores(flipped), -probe.scores(f))
    assert probes.accuracy(probe, flipped) == probes.accuracy(probe, f)


def test_zoom_in_enlarges_the_object_and_zoom_out_shrinks_it():
    image, box = _object(1)
    # zoom-in views lie inside the box: measure the bright detail; zoom-out views show the whole grey box
    for task, sign, level in (("zoom_in", 1, 0.9), ("zoom_out", -1, 0.2)):
        views, values = probes.ladder(image[0], box[0], task, 32, k=8, seed=1)
        area = (views.mean(1) > level).sum((1, 2)).float()
        assert (values.diff() > 0).all()
        assert (sign * area.diff() >= 0).all() and sign * (area[-1] - area[0]) > 100, (task, area.tolist())
    zi = probes.sample("zoom_in", box.expand(100, 4), (48, 48), seed=0)
    side = zi.crops[..., 2] - zi.crops[..., 0]
    assert torch.allclose(side, 32 * (1 - zi.values))  # the central (1 - trim) of the 32 px box


def test_crops_stay_in_the_image_and_zoom_out_needs_slack():
    h, w = 40, 60
    boxes = torch.tensor([[10.0, 5.0, 30.0, 35.0], [1.0, 1.0, 59.0, 39.0]])  # slack 0.25 and ~0.03
    views = probes.sample("zoom_out", boxes, (h, w), seed=0)
    assert views.keep.tolist() == [True, False]
    c, b = views.crops[0], boxes[0]
    assert (c[:, :2] <= b[:2]).all() and (c[:, 2:] >= b[2:]).all()  # contains the box
    assert (c[:, 0] >= 0).all() and (c[:, 1] >= 0).all() and (c[:, 2] <= w + 1e-4).all() and (c[:, 3] <= h + 1e-4).all()
    assert ((views.values[0] >= 0.1) & (views.values[0] <= 0.25)).all()
    ar = probes.sample("aspect_ratio", boxes[:1].expand(50, 4), (h, w), seed=0)
    crop_h, crop_w = ar.crops[..., 3] - ar.crops[..., 1], ar.crops[..., 2] - ar.crops[..., 0]
    assert torch.allclose(ar.values, crop_h / crop_w) and (crop_w >= 0.2 * w - 1e-4).all()
    hue = probes.sample("hue", boxes, (h, w), seed=0)
    assert torch.equal(hue.values, hue.magnitudes.abs()) and (hue.magnitudes.abs() <= 0.2).all()


def test_sampling_is_reproducible_by_seed():
    boxes = _object(32)[1]
    a, b, c = (probes.sample("aspect_ratio", boxes, (48, 48), seed=s) for s in (5, 5, 6))
    assert torch.equal(a.crops, b.crops) and not torch.equal(a.crops, c.crops)
    with pytest.raises(ValueError, match="Valid tasks: aspect_ratio, brightness"):
        probes.sample("scale", boxes, (48, 48))


def test_dct_basis_zigzag_and_pooling():
    d = probes.dct_matrix(8)
    assert torch.allclose(d @ d.T, torch.eye(8), atol=1e-5)
    assert probes.zigzag(8)[:6].tolist() == [0, 1, 8, 16, 9, 2]
    x = torch.rand(2, 3, 16, 16)
    mag, signed = probes.block_dct(x), probes.block_dct(x, magnitude=False)
    assert mag.shape == (2, 3, 64) and (mag >= signed.abs() - 1e-6).all()
    stripes = torch.zeros(1, 1, 8, 8)
    stripes[..., ::2] = 1  # the highest horizontal frequency
    coef = probes.block_dct(stripes)[0, 0]
    assert coef[1:].argmax() + 1 == probes.zigzag(8).tolist().index(7)  # (row 0, column 7) after the DC


def test_backbone_groups_include_shortcuts_and_key_the_weights():
    model = models.create("small_resnet18")
    f = probes.Backbone(model)
    out = f(torch.rand(3, 3, 28, 28))
    names = [n for n, _ in f.groups]
    assert "layer2.0.shortcut.0" in names and names[0] == "stem.0"
    assert out.shape == (3, sum(d for _, d in f.groups))
    assert probes.Backbone(models.create("small_resnet18")).key != f.key  # other random weights
    timm_r18 = probes.Backbone(models.create("resnet18", num_classes=0))  # any timm name works
    assert timm_r18(torch.rand(2, 3, 32, 32)).shape == (2, 64 + 4 * 64 + 4 * 128 + 128 + 4 * 256 + 256 + 4 * 512 + 512)
    assert "layer2.0.downsample.0" in timm_r18.layers and len(timm_r18.groups) == 20
    vit = probes.conv_layers(models.create("small_vit"))
    assert vit[0] == "blocks.0" and len(vit) == 4
    with pytest.raises(ValueError, match="no layer"):
        probes.Backbone(model, layers=["layer9"])(torch.rand(1, 3, 28, 28))


def test_features_are_cached(monkeypatch):
    images, boxes = _object(12)
    f = probes.Backbone(models.create("small_resnet18"))
    first = probes.extract(f, images, boxes, "contrast", 28, seed=0)
    monkeypatch.setattr(probes, "render", lambda *a, **k: pytest.fail("recomputed instead of read from cache"))
    again = probes.extract(probes.Backbone(f.model), images, boxes, "contrast", 28, seed=0)
    assert torch.equal(first.diff, again.diff) and again.groups == first.groups


def test_featurizers_sharing_views_get_the_features_they_would_get_alone():
    images, boxes = _object(24)
    images = (images.float() * torch.rand(24, 3, 1, 1)).to(torch.uint8)
    feats = {"pixels": probes.Passthrough(), "dct": probes.DCT(), "big": probes.Passthrough()}
    sizes = {"pixels": 16, "dct": 16, "big": 24}
    table, trained = probes.run_table(feats, (images[:16], boxes[:16]), (images[16:], boxes[16:]), sizes=sizes,
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
    table, fitted = probes.run_table({"r18": f}, (images[:48], boxes[:48]), (images[48:], boxes[48:]),
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


@pytest.mark.slow
def test_ilsvrc_filter_keeps_and_drops_the_right_images(tmp_path):
    root = tmp_path / "imagenet"
    cases = {  # name: (boxes, keep)
        "good": ([(20, 20, 80, 80)], True),  # area 0.36, slack 0.4 per axis
        "two_boxes": ([(20, 20, 80, 80), (0, 0, 10, 10)], False),
        "small": ([(40, 40, 60, 60)], False),  # area 0.04
        "no_room": ([(5, 20, 95, 80)], False),  # horizontal slack 0.1
        "no_xml": (None, False),
    }
    for i, (name, (boxes, _)) in enumerate(cases.items()):
        _jpeg(root / "train" / DOG / f"{name}.JPEG", 100, 100, (40 * i, 30, 30))
        if boxes:
            _xml(root / "train" / DOG / f"{name}.xml", 100, 100, boxes, DOG)
    _jpeg(root / "train" / CAT / "cat.JPEG", 50, 50, (0, 0, 250))
    _xml(root / "train" / CAT / "cat.xml", 50, 50, [(10, 10, 40, 40)], CAT)  # area 0.36, slack 0.4: kept
    ds = data.load("imagenet", root=root, size=32, box_filter=probes.ilsvrc_filter())
    assert len(ds) == 2 and ds.labels.tolist() == [0, 1]
    assert abs(ds.images[0, 0].float().mean() - 0) < 10  # the "good" dog (red 0), not a dropped one
    assert torch.allclose(ds.boxes[0], torch.tensor([20.0, 20, 80, 80]) * 0.32)
    loose = data.load("imagenet", root=root, size=32, box_filter=probes.ilsvrc_filter(0.01, 0.05, single=False))
    assert len(loose) == 5  # everything with an XML
    with pytest.raises(data.DataMissingError, match="passes box_filter"):
        data.load("imagenet", root=root, box_filter=lambda *a: False)


def test_load_images_are_disjoint_and_padded():
    (tr, trb), (va, vab) = probes.load_images("fashion_mnist_color", 50, 20, seed=1, canvas=1.5)
    assert tr.shape == (50, 3, 42, 42) and va.shape == (20, 3, 42, 42)
    flat_tr, flat_va = {bytes(x.numpy()) for x in tr}, {bytes(x.numpy()) for x in va}
    assert not flat_tr & flat_va
    assert (probes.zoom_out_slack(trb, (42, 42)) >= 1 / 3 - 1e-6).all()


def test_settings_default_to_the_paper_and_profiles_change_what_they_must(tmp_path):
    paper = probes.settings("paper")
    assert (paper.dataset, paper.n_train, paper.n_val, paper.canvas) == ("imagenet", 65_000, 21_000, 1.0)
    cpu = probes.settings("cpu", n_train=10, dataset="folder", root=str(tmp_path))
    assert (cpu.profile, cpu.n_train, cpu.n_val, cpu.dataset, cpu.root) == ("cpu", 10, 500, "folder", str(tmp_path))
    assert cpu.backbones["ResNet-50"].startswith("zoo:") and paper.backbones["ResNet-50"] == "tv/resnet50"
    with pytest.raises(ValueError, match="Valid Settings fields: backbones"):
        probes.settings("cpu", pairs=10)
    with pytest.raises(TypeError, match="'n_train' must be int"):
        probes.settings("cpu", n_train="many")


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
    S = probes.settings("smoke", dataset="folder",
                          root=str(_grey_folder(tmp_path / "grey")), n_train=200, n_val=100)
    train, val = probes.chapter_images(S)  # 18 images, not 300: all of them, split 2 : 1
    out = capsys.readouterr().out
    assert "18 images, fewer than the 300 asked for" in out and "hue undefined: greyscale" in out
    assert (len(train[0]), len(val[0])) == (12, 6) and train[0].shape[1] == 3
    assert set(probes.undefined_tasks(train[0])) == {"hue", "saturation"}
    table, trained = probes.run_table({"pixels": probes.Passthrough()}, train, val, sizes={"pixels": 16},
                                      tasks=["brightness", "hue", "saturation"])
    hue = table.set_index("task").loc["hue"]
    assert hue.val_acc != hue.val_acc and hue.undefined.startswith("greyscale")  # NaN, not 0.0
    assert ("pixels", "all", "hue") not in trained and ("pixels", "all", "brightness") in trained
    assert probes_reports.side_by_side(table).loc["pixels", "hue"] == "undefined"
    run = results.Run("demo", "smoke")
    probes_reports.log_table(run, table)
    assert run.metrics["table1/pixels/hue/val"] is None and "greyscale" in run.notes["table1/pixels/hue/val"]


def _table1(changes=None):
    """A Table-1 shaped table holding the paper's validation numbers; ``changes``: task -> accuracy of every
    featurizer, or (featurizer, task) -> accuracy."""
    import pandas as pd

    rows = [dict(featurizer=f, layers="all", task=t, val_acc=acc[1] / 100)
            for f, tasks in probes.PAPER_TABLE1.items() for t, acc in tasks.items()]
    rows += [dict(featurizer="DCT (magnitude)", layers="all", task=t, val_acc=0.5) for t in probes.GEOMETRIC]
    table = pd.DataFrame(rows)
    for key, value in (changes or {}).items():
        f, t = key if isinstance(key, tuple) else (None, key)
        table.loc[((table.featurizer == f) if f else True) & (table.task == t), "val_acc"] = value
    return table


def test_table1_claims_get_verdicts_from_the_numbers():
    run = results.Run("demo", "smoke")
    probes_reports.record_table1_claims(run, _table1(), ["ResNet-18", "ResNet-50"])
    assert {c["verdict"] for c in run.claims.values()} == {"reproduced"} and len(run.claims) == 7
    run = results.Run("demo", "smoke")
    # all at 40 % on zoom-in
    probes_reports.record_table1_claims(run, _table1({"zoom_in": 0.40}), ["ResNet-18", "ResNet-50"])
    verdicts = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert verdicts["table1/resnets_beat_dct"] == "partly"  # 4 of the 6 comparisons hold
    assert verdicts["table1/zoom_out_harder"] == "not reproduced"
    assert run.claims["table1/zoom_out_harder"]["ours"] == round(40 - 68.8, 1)
    assert run.metrics["claim/Zoom-out is harder than zoom-in for the ResNets"] is False
    assert run.paper["claim/Zoom-out is harder than zoom-in for the ResNets"] is True
    run = results.Run("demo", "smoke")
    probes_reports.record_table1_claims(run, _table1({("ResNet-18", "hue"): float("nan")}), ["ResNet-18"])
    verdicts = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert verdicts["table1/hue_hardest_colour"] == "not measurable at this profile"
    assert "needs two backbones" in run.claims["table1/resnet18_at_least_resnet50"]["criterion"]
    assert verdicts["table1/resnets_beat_pixels"] == "reproduced"


def test_layer_claims_follow_depth_and_half_layer_accuracy():
    import pandas as pd

    rows = [dict(featurizer="ResNet-18", layers=h, task=t, val_acc=acc[1] / 100)
            for h, tasks in probes.PAPER_TABLE2.items() for t, acc in tasks.items()]
    early = dict(zip(probes.ORDER, [0.1, 0.2, 0.2, 0.5, 0.6, 0.6, 0.7]))
    late = dict(zip(probes.ORDER, [0.8, 0.8, 0.8, 0.5, 0.6, 0.6, 0.7]))
    run = results.Run("demo", "smoke")
    probes_reports.record_layer_claims(run, pd.DataFrame({"ResNet-18": early, "ResNet-50": late}), pd.DataFrame(rows))
    verdicts = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert verdicts == {"fig5_6/colour_earlier": "partly", "fig5_6/contrast_later": "partly",
                        "table2/first_half_at_least_second": "reproduced", "table2/first_half_beats_all": "reproduced"}
    assert run.metrics["colour_tasks_earlier_than_geometric"] is False
    swapped = pd.DataFrame(rows).replace({"layers": {"first half": "second half", "second half": "first half"}})
    run = results.Run("demo", "smoke")
    probes_reports.record_layer_claims(run, pd.DataFrame({"ResNet-18": early}), swapped)
    assert run.claims["table2/first_half_at_least_second"]["verdict"] == "not reproduced"
    assert run.claims["table2/first_half_at_least_second"]["ours"] == "0 of 3 (ResNet-18)"
    assert run.claims["fig5_6/colour_earlier"]["verdict"] == "reproduced"


@pytest.mark.slow
def test_notebooks_write_table1_importance_ablation_and_claims(smoke_book):
    """The A chapters of the smoke book (run once per session by the book runner) log what the issue asks."""
    a1 = results.load("a1_ranking_tasks", "smoke")
    for name in ("Passthrough", "DCT", "DCT (magnitude)", "ResNet-18", "ResNet-50"):
        for task in probes.TASKS:
            assert {f"table1/{name}/{task}/train", f"table1/{name}/{task}/val"} <= set(a1["metrics"])
    assert a1["metrics"]["table1/ResNet-18/brightness/val"] >= 90  # the paper's sanity check holds even in smoke
    assert {c["id"] for c in a1["claims"]} >= {"table1/resnets_beat_dct", "table1/hue_hardest_colour"}
    a2 = results.load("a2_which_layers", "smoke")
    for task in probes.TASKS:
        for agg in ("mean", "max"):
            layers = a2["metrics"][f"importance/ResNet-18/{task}/{agg}"]
            assert len(layers) == 20 and abs(sum(layers.values()) - 1) < 1e-3
    assert {"table2/ResNet-50/second half/hue/val", "variants/untrained/zoom_in/val"} <= set(a2["metrics"])
    assert {c["id"] for c in a2["claims"]} == {"fig5_6/colour_earlier", "fig5_6/contrast_later",
                                               "table2/first_half_at_least_second", "table2/first_half_beats_all"}


def test_bad_inputs_say_what_is_wrong():
    images, boxes = _object(4)
    with pytest.raises(ValueError, match=r"boxes must be \(4, 4\).*whole image"):
        probes.extract(probes.DCT(), images, boxes[:2], "zoom_in", 16, cache=False)
    with pytest.raises(ValueError, match="boxes must be"):
        probes.extract(probes.DCT(), images, None, "zoom_in", 16, cache=False)
    with pytest.raises(ValueError, match="Valid tasks"):
        probes.extract(probes.DCT(), images, boxes, "blur", 16, cache=False)
    feats = probes.extract(probes.DCT(), images, boxes, "zoom_in", 16, cache=False)
    with pytest.raises(ValueError, match=r"Unknown layer\(s\) \['layer9'\]; the features hold: dct"):
        probes.train_probe(feats, layers=["layer9"])
    with pytest.raises(ValueError, match="geometric task"):
        probes.crops_for("hue", boxes, (48, 48), torch.zeros(4))


def test_extract_many_extracts_only_the_featurizers_not_cached(monkeypatch):
    images, boxes = _object(8)
    alone = probes.extract(probes.DCT(), images, boxes, "zoom_in", 16, seed=3)
    asked, extract = [], probes._extract
    monkeypatch.setattr(probes, "_extract", lambda feats, *a: asked.append(sorted(feats)) or extract(feats, *a))
    both = probes.extract_many({"dct": probes.DCT(), "pixels": probes.Passthrough()}, images, boxes, "zoom_in", 16,
                               seed=3)
    assert asked == [["pixels"]] and torch.equal(both["dct"].diff, alone.diff) and both["dct"].groups == alone.groups
    again = probes.extract_many({"p": probes.Passthrough()}, images, boxes, "zoom_in", 16, seed=3)["p"]
    assert asked == [["pixels"]], "read from the cache"
    assert torch.equal(again.diff, both["pixels"].diff) and again.groups == both["pixels"].groups
    assert again.seconds >= 0  # the time of reading the cache, reported (not bounded: timings vary by machine)
