"""invlib.papers.d.fixed and fixed_reports (chapter D5): settings, the classifiers shared with paper B, the module
trained beside a frozen classifier, test-time augmentation, what the crops do, and the report's claims."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from invlib import data, results, zoo
from invlib.learned import instaaug as I
from invlib.papers.d import fixed as F
from invlib.papers.d import fixed_reports as R
from invlib.papers.d.protocol import PROTOCOL


# ----------------------------------------------------------------------------- settings
def test_settings_paper_values_profiles_and_overrides():
    paper, cpu, smoke = (F.settings(p) for p in ("paper", "cpu", "smoke"))
    assert (paper.h_min, paper.h_max, paper.module_lr, paper.lam0) == (2.5, 3.0, 1e-3, 0.2)  # the authors' config
    assert paper.samples == (1, 4, 10) and paper.frozen == "ResNet-50" and paper.check_every is None
    assert paper.random_crop_scale == (0.1, 1.0) and paper.dataset == "imagenet" and paper.size == 224
    assert cpu.dataset == "scenes" and cpu.frozen == "ResNet" and cpu.zoo_data["n_train"] == 8000
    assert (cpu.h_min, cpu.h_max) == (paper.h_min, paper.h_max)  # the band is the paper's on every profile
    assert smoke.n_test < cpu.n_test and smoke.tta_seeds == 2
    assert F.settings("cpu", n_test=None, samples=[2, 5]).samples == (2, 5)  # None keeps, lists become tuples
    assert F.settings("cpu", methods=["InstaAug"]).methods == ("InstaAug",)
    assert "input-free" in cpu.methods and "input-free" not in paper.methods  # the control is ours
    assert cpu.data_control and cpu.control_variation == 0.0 and not paper.data_control


def test_settings_errors_name_the_fix():
    with pytest.raises(ValueError, match="TTA method.*AutoAugment"):
        F.settings("cpu", methods=["mixup"])
    with pytest.raises(ValueError, match="h_min <= h_max"):
        F.settings("cpu", h_min=3.0, h_max=2.0)
    with pytest.raises(ValueError, match="Did you mean 'epochs'"):
        F.settings("cpu", epoch=3)
    with pytest.raises(ValueError, match="samples"):
        F.settings("cpu", samples=[0, 4])
    with pytest.raises(ValueError, match="data_control=False"):
        F.settings("paper", data_control=True)  # ImageNet has no variation knob


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_zoo_specs_are_paper_bs_checkpoints(profile):
    """The classifiers are paper B's zoo models: the same specs, so the same files (nothing is retrained)."""
    from invlib.papers.b import grounding as B  # the test may compare; the paper module must not import it

    S, SB = F.settings(profile), B.settings(profile)
    ours = F.zoo_specs(S)
    theirs = {"ResNet": SB.models["ResNet"]["standard"], "ViT": SB.models["ViT"]["standard"]}
    for label, entry in theirs.items():
        assert ours[label] == zoo.spec(entry[4:], zoo.chapter_profile(SB))  # every field, so every cache key too
        assert zoo.path(ours[label]) == zoo.path(entry[4:], zoo.chapter_profile(SB))
    assert zoo.image_side(S, S.size) == zoo.image_side(SB, SB.image_size) == 56


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_d5_zoo_specs_are_chapter_b3s_standard_models(profile):
    """The book's training phase trains what D5 loads: B3's two models with RRC and a flip of D5's seed (B3 may
    train more seeds of them), nothing else, and at cpu with B3's pinned recipe (8,000 scenes, 4 epochs; the ViT 8),
    whatever the cpu profile's own sizes."""
    from invlib.papers.b import grounding as B

    ours = F.d5_zoo_specs(profile)
    assert ours == list(F.zoo_specs(F.settings(profile)).values())  # what classifiers() loads
    b3 = [s for s in B.b3_zoo_specs(profile) if s.augment == "standard" and s.seed == F.settings(profile).seed]
    assert sorted(ours, key=lambda s: s.arch) == sorted(b3, key=lambda s: s.arch) and len(ours) == 2
    if profile == "cpu":
        assert F.CPU_ZOO_DATA == B.CPU_ZOO_DATA
        assert [(s.n_train, s.epochs, s.batch_size) for s in ours] == [(8000, 4, 128), (8000, 8, 64)]
    assert F.d5_zoo_specs(profile, models={"ResNet": "zoo:small_resnet18_s4/none"}) == [
        zoo.spec("small_resnet18_s4/none", zoo.chapter_profile(F.settings(profile)))]


def test_scene_data_is_the_classifiers_own_training_images():
    S = F.settings("smoke", n_train=16, n_test=8)
    train, test = F.scene_data(S)
    zoo_train, zoo_test = zoo.splits(F.zoo_specs(S)["ResNet"].replace(n_train=32, n_test=8))
    assert torch.equal(train.images, zoo_train.images[:16]) and torch.equal(test.images, zoo_test.images)
    assert test.boxes.shape == (8, 4) and train.images.shape[1:] == (3, 56, 56)


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_still_scenes_are_the_same_scenes_with_centred_objects_of_one_size():
    """The data control pairs scene i with scene i: the same item and label, its object centred, of one scale."""
    S = F.settings("smoke", n_train=16, n_test=32)
    (train, test), (train0, test0) = F.scene_data(S), F.scene_data(S, variation=0.0)
    assert torch.equal(test.labels, test0.labels) and torch.equal(train.labels, train0.labels)
    centre = (test0.boxes[:, :2] + test0.boxes[:, 2:]).float() / 2
    assert (centre - 28).abs().max() <= 3 < ((test.boxes[:, :2] + test.boxes[:, 2:]).float() / 2 - 28).abs().max()


# ----------------------------------------------------------------------------- the module
def test_lrp_is_seeded_by_the_recipe_and_leaves_the_random_state():
    S = F.settings("cpu")
    state = torch.random.get_rng_state()
    a, b, free = F.lrp(S), F.lrp(S), F.lrp(S, input_free=True)
    assert torch.equal(state, torch.random.get_rng_state())
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    c = F.lrp(F.settings("cpu", seed=1))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))
    assert a.num_crops == 14 * 14 + 7 * 7 + 1
    # paper D's one seeding (MODULE_SEED + seed; it was the bare seed), and the control starts where InstaAug does
    ref = I.Recipe.module(lambda: I.LRPCrops(56, crop_layers=S.crop_layers, sides=S.sides,
                                             layer_bias=S.layer_bias), S.seed)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), ref.parameters()))
    assert free.input_free and all(torch.equal(p, q) for p, q in zip(a.parameters(), free.parameters()))


def test_module_config_is_the_recipe_checks_once_per_epoch_and_warms_the_rate_up():
    S = F.settings("paper", warmup_epochs=2.0)
    cfg, loss = F.module_config(S, 1000)  # 10 steps per epoch
    assert (loss.check_every, cfg.optimizer, cfg.schedule) == (10, "sgd", "none")
    # the warm-up is the module's learning rate (it was a gradient factor, which Adam normalises away)
    assert cfg.aug_warmup_epochs == 2.0 and cfg.aug_lr == S.module_lr and cfg.aug_weight_decay == 0
    assert F.recipe(S) == I.Recipe(band=(2.5, 3.0), lam0=0.2, module_lr=1e-3, warmup_epochs=2.0)
    cfg, loss = F.module_config(F.settings("cpu"), 3000)
    assert loss.check_every == 10 and cfg.optimizer == "adam" and cfg.aug_lr == 3e-3 and cfg.weight_decay == 0
    from invlib import train as T

    _, loss = F.module_config(F.settings("paper", batch_size=64), 3000)  # None: once per epoch
    assert loss.check_every == T.steps_per_epoch(3000, 64) == 46  # the one formula fit uses


def test_the_warm_up_holds_the_modules_first_adam_steps_back():
    """Under Adam a gradient factor changes nothing; a warm-up of the learning rate does: after the first step
    the warmed-up module has moved far less."""
    S = F.settings("smoke", size=32, n_train=64, batch_size=32, epochs=1, check_every=1, module_lr=0.05)
    x = _quadrant_data(64)
    start = torch.cat([p.flatten() for p in F.lrp(S).parameters()])
    moved = {}
    for w in (0.0, 1.0):
        net, _ = F.train(F.settings("smoke", **{**_fields(S), "warmup_epochs": w}), _Centre().eval(), x)
        moved[w] = float((torch.cat([p.flatten() for p in net.augment.params.parameters()]) - start).abs().sum())
    assert moved[1.0] < 0.7 * moved[0.0]


def _fields(S):
    return dict(size=S.size, n_train=S.n_train, batch_size=S.batch_size, epochs=S.epochs,
                check_every=S.check_every, module_lr=S.module_lr)


def test_band_trace_reads_every_epochs_checks():
    h = [dict(epoch=0, state=dict(checks=[(1, 1.0, 0.2)])), dict(epoch=1, state=dict(checks=[(2, 2.0, 0.24)])),
         dict(epoch=2)]
    t = F.band_trace(h)
    assert t["step"].tolist() == [1, 2] and t["lambda"].tolist() == [0.2, 0.24] and t["epoch"].tolist() == [0, 1]
    assert F.band_trace([]).empty


# ----------------------------------------------------------------------------- test-time augmentation
class _Centre(nn.Module):
    """A fixed classifier that reads the colour of the middle of its view: class k when channel k is brightest."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(10.0))

    def forward(self, x):
        h, w = x.shape[-2:]
        return self.scale * x[..., h // 2 - 2:h // 2 + 2, w // 2 - 2:w // 2 + 2].mean((2, 3))


def _quadrant_data(n, size=32, seed=0):
    """Images whose top-left quadrant holds the label (channel k bright) and whose other three quadrants hold
    other classes, dimmer: the whole image's middle mixes four colours (often misread), a crop centred on another
    quadrant shows a wrong class, one centred on the top-left quadrant the label. Boxes: the top-left quadrant."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 3, (n,), generator=g)
    x = torch.zeros(n, 3, size, size)
    h = size // 2
    for i in range(n):
        others = torch.tensor([k for k in range(3) if k != y[i]])
        for q, (r, c) in enumerate([(0, 0), (0, h), (h, 0), (h, h)]):
            k = y[i] if q == 0 else others[torch.randint(0, 2, (1,), generator=g)]
            x[i, k, r:r + h, c:c + h] = (0.6 + 0.4 * torch.rand(1, generator=g)) * (1.0 if q == 0 else 0.35)
    boxes = torch.tensor([[0.0, 0.0, h, h]]).expand(n, -1).clone()
    images = (x * 255).round().to(torch.uint8)
    return data.Dataset("quadrants", "train", images, y, ["r", "g", "b"], boxes=boxes)


def _global_module(S, input_free=False):
    """An LRP module with all its mass on the whole image (the global crop)."""
    m = I.InstaAugment(F.lrp(S, input_free)).eval()
    with torch.no_grad():
        m.params.global_head.bias.fill_(40.0)  # other crops ~e^-40: not 0, so logs stay finite
    return m


def test_tta_with_whole_image_crops_is_the_classifier_alone():
    S = F.settings("smoke", size=32, n_test=16, samples=(1, 3), tta_seeds=2, chunk=5,
                   methods=["InstaAug", "random crop", "input-free"],
                   random_crop_scale=(1.0, 1.0))  # random "crops" of the whole image, several chunks
    test = _quadrant_data(16)
    res = F.tta(S, _global_module(S), {"centre": _Centre()}, test, free=_global_module(S, input_free=True))
    alone = res[res["method"] == "none"]["acc"].item()
    assert len(res) == 1 + 3 * 2 * 2 and (res["acc"] == alone).all()
    first = res["hits"].iloc[0]
    assert first.shape == (16,) and all((h == first).all() for h in res["hits"])  # the same images right
    assert first.mean() == alone
    assert set(res["n"]) == {1, 3} and set(res["seed"]) == {0, 1}
    assert res["seconds"].nunique() == 1 and res["seconds"].iloc[0] > 0  # the cold measurement's, kept with it


def test_tta_draws_are_repeatable():
    S = F.settings("smoke", size=32, n_test=24, samples=(1, 2), tta_seeds=2, methods=["random crop", "AutoAugment"])
    test, nets = _quadrant_data(24), {"centre": _Centre()}
    a = F._tta(S, {}, nets, test)  # the measurement itself, twice (tta caches it)
    b = F._tta(S, {}, nets, test)
    pd.testing.assert_frame_equal(a, b)
    s = F.summary(a)
    assert (s.loc[s["method"] != "none", "repeats"] == 2).all() and s.loc[s["method"] == "none", "se"].isna().all()


def test_tta_is_cached_under_the_weights_of_the_module_and_the_classifiers(monkeypatch):
    S = F.settings("smoke", size=32, n_test=12, samples=(1, 2), tta_seeds=1, methods=["InstaAug", "random crop"])
    test, module = _quadrant_data(12), I.InstaAugment(F.lrp(S))
    nets = {"conv": nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()}
    first = F.tta(S, module, nets, test)
    made = []
    real = F._tta
    monkeypatch.setattr(F, "_tta", lambda *a: made.append(a) or real(*a))
    pd.testing.assert_frame_equal(F.tta(S, module, nets, test), first)  # read from the cache
    assert not made
    with torch.no_grad():
        nets["conv"][0].bias.add_(1.0)
    F.tta(S, module, nets, test)  # a classifier's new weights: measured again
    with torch.no_grad():
        module.params.global_head.bias.add_(1.0)
    F.tta(S, module, nets, test)  # the module's new weights: measured again
    assert len(made) == 2


def test_input_free_tta_draws_from_its_own_module_and_needs_it():
    S = F.settings("smoke", size=32, n_test=24, samples=(1, 4), tta_seeds=1, methods=["InstaAug", "input-free"])
    test, nets = _quadrant_data(24), {"centre": _Centre()}
    with pytest.raises(ValueError, match="free=<the input-free module>"):
        F.tta(S, I.InstaAugment(F.lrp(S)), nets, test)
    # the input-free module reads 0 * x: whatever its weights, one distribution for every image
    free = I.InstaAugment(F.lrp(S, input_free=True)).eval()
    with torch.no_grad():
        p = free.distribution(test.float())
    assert torch.allclose(p, p[:1].expand_as(p))
    # its crops, not InstaAug's: a whole-image input-free module is the classifier alone, a module without the
    # whole image is not
    no_global = I.InstaAugment(F.lrp(S)).eval()
    with torch.no_grad():
        no_global.params.global_head.bias.fill_(-40.0)
    res = F._tta(S, {"InstaAug": no_global, "input-free": _global_module(S, True)}, nets, test)
    alone = res[res["method"] == "none"]["acc"].item()
    assert (res[res["method"] == "input-free"]["acc"] == alone).all()
    assert (res[res["method"] == "InstaAug"]["acc"] != alone).any()


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_control_trains_both_modules_on_still_scenes(monkeypatch):
    S = F.settings("smoke", n_train=32, n_test=6, batch_size=16, samples=(1, 2), tta_seeds=1)
    seen = []
    real = F.train
    monkeypatch.setattr(F, "train", lambda S_, c, tr, input_free=False, replicate=0: seen.append(
        ((input_free, replicate), tr)) or real(S_, c, tr, input_free, replicate))
    clf = nn.Sequential(nn.Conv2d(3, 10, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
    res = F.control(S, clf)
    assert [k for k, *_ in seen] == [(False, 0), (True, 0)] and seen[0][1] is seen[1][1]
    assert torch.equal(seen[0][1].images, F.scene_data(S, 0.0)[0].images)
    assert set(res["method"]) == {"none", "InstaAug", "input-free"} and set(res["model"]) == {"ResNet"}
    seen.clear()
    res = F.control(F.settings("smoke", **{**_fields(S), "n_test": 6, "samples": (1, 2), "tta_seeds": 1,
                                           "control_seeds": 2}), clf)
    assert [k for k, *_ in seen] == [(False, 0), (True, 0), (False, 1), (True, 1), (False, 1), (True, 1)]
    assert torch.equal(seen[2][1].images, F.scene_data(S)[0].images)  # seed 1 on the classifier's own scenes too
    assert res.groupby(["still", "replicate"]).ngroups == 3
    per = res.groupby(["still", "replicate"])["train_seconds"]
    assert (per.nunique() == 1).all() and (per.first() > 0).all()  # the two modules' training, once per scenes
    tta = res.groupby(["still", "replicate"])["seconds"]
    assert (tta.nunique() == 1).all() and (tta.first() > 0).all()  # and their test-time augmentation's
    costs = R.control_seconds([dict(seconds=1.0)], [dict(seconds=1.0)], res)  # a seed: both, on both scenes
    assert costs[1] == pytest.approx(float((per.first() + tta.first()).xs(1, level="replicate").sum()))


def test_autoaugment_is_seeded_per_generator_and_keeps_the_global_state():
    x = torch.randint(0, 256, (6, 3, 24, 24), dtype=torch.uint8)
    state = torch.random.get_rng_state()
    a = F.autoaugment(x, torch.Generator().manual_seed(0))
    assert torch.equal(state, torch.random.get_rng_state())
    assert torch.equal(a, F.autoaugment(x, torch.Generator().manual_seed(0)))
    outs = [F.autoaugment(x, torch.Generator().manual_seed(s)) for s in range(1, 4)]
    assert any(not torch.equal(o, a) for o in outs) and a.dtype == torch.uint8 and a.shape == x.shape


# ----------------------------------------------------------------------------- what the crops do
def test_crop_stats_of_a_whole_image_module():
    S = F.settings("smoke", size=32)
    test = _quadrant_data(8)
    t = F.crop_stats(S, _global_module(S), test, draws=16)
    assert list(t.index) == list(R.STATS_ROWS)
    whole = t.loc["InstaAug"]
    assert whole["side"] == pytest.approx(1.0) and whole["covers_object"] == pytest.approx(1.0)
    assert whole["kl_to_mean"] == pytest.approx(0.0, abs=1e-6) and whole["entropy"] == pytest.approx(0.0, abs=1e-3)
    assert t.loc["InstaAug, averaged over images", "side"] == pytest.approx(1.0)
    assert 0 < t.loc["random crop", "covers_object"] < 1 and math.isnan(t.loc["random crop", "entropy"])
    items = F.crop_per_image(S, _global_module(S), test, draws=16)
    assert len(items) == 8 and np.allclose(items["kl_to_mean"], 0, atol=1e-6)
    assert np.allclose(items["covers_object"], 1) and np.allclose(items["covers_averaged"], 1)
    assert items["covers_random"].mean() == pytest.approx(t.loc["random crop", "covers_object"])


def test_object_hits_against_a_hand_computed_case():
    boxes = torch.tensor([[0.25, 0.25, 0.5], [0.75, 0.75, 0.5], [0.5, 0.5, 1.0]])
    obj = torch.tensor([[0.0, 0.0, 16.0, 16.0]])  # top-left quadrant of a 32 px image: centre (8, 8)
    covers, inside = F._object_hits(boxes, obj, 32)
    assert covers.tolist() == [[1.0, 0.0, 1.0]] and inside.tolist() == [[1.0, 0.0, 1.0]]


@pytest.mark.slow
def test_module_beside_a_frozen_classifier_learns_the_labelled_region_and_beats_random_crops():
    """The label sits in the top-left quadrant; the frozen classifier reads the middle of its view. Trained beside
    it, the module puts its crop mass on that quadrant, the classifier's weights do not move, and TTA with the
    module beats the classifier alone and random-crop TTA."""
    S = F.settings("smoke", size=32, n_train=512, n_test=200, epochs=8, batch_size=64, module_lr=0.01,
                   h_min=0.5, h_max=1.5, check_every=4, samples=(1, 4), tta_seeds=2,
                   methods=["random crop", "InstaAug"])
    train, test = _quadrant_data(512, seed=0), _quadrant_data(200, seed=1)
    clf = _Centre().eval()
    net, hist = F.train(S, clf, train)
    assert clf.scale.item() == 10.0 and not clf.training and len(F.band_trace(hist)) == 8 * 8 // 4
    with torch.no_grad():
        p = net.augment.distribution(test.float()).exp()
    boxes = net.augment.params.boxes
    top_left = (boxes[:, 0] < 0.5) & (boxes[:, 1] < 0.5) & (boxes[:, 2] < 1)
    assert p[:, top_left].sum(1).mean() > 0.6  # at the start: (1 - global mass) / 4 of the small crops, about 0.04
    res = F.tta(S, net.augment, {"centre": clf}, test)
    s = F.summary(res).set_index(["method", "n"])
    assert s.loc[("InstaAug", 4), "mean"] > s.loc[("random crop", 4), "mean"] + 0.1
    assert s.loc[("InstaAug", 4), "mean"] > s.loc[("none", 1), "mean"] + 0.1
    stats = F.crop_stats(S, net.augment, test)
    assert stats.loc["InstaAug", "covers_object"] > stats.loc["random crop", "covers_object"]


# ----------------------------------------------------------------------------- the report
def _report(S=None, res=None, items=None, hist=(), control="demo"):
    S = S or F.settings("cpu", tta_seeds=3)
    run = results.Run("cpu", name="d5_test")
    stats = pd.DataFrame(dict(side=[0.8, 0.8, 0.95, 0.7], covers_object=[0.95, 0.85, 0.9, 0.8],
                              centre_in_box=[0.8, 0.6, 0.7, 0.6], entropy=[2.7, 3.0, 1.2, math.nan],
                              kl_to_mean=[0.3, 0.0, 0.0, 0.0]), index=list(R.STATS_ROWS))
    res = R.demo_tta() if res is None else res
    if isinstance(control, str):  # three training seeds of the control
        control = R.demo_control(3, n_test=len(res["hits"].iloc[0]))
    table, facts = R.report(run, S, res, stats, list(hist),
                            R.demo_items() if items is None else items, control)
    return {cid: c["verdict"] for cid, c in run.claims.items()}, run, table, facts


def test_report_verdicts_follow_the_numbers():
    hist = [dict(epoch=0, state=dict(checks=[(10, 1.2, 0.2), (20, 2.7, 0.2)]))]
    v, run, table, facts = _report(hist=hist)
    assert set(v.values()) == {"reproduced"}
    ev = run.claims["table2/instaaug_beats_alone"]["evidence"]
    assert ev["unit"] == "image" and ev["n"] == 200 and ev["method"] == "bootstrap"  # the test images, not repeats
    assert ev["estimate"] == pytest.approx(10, abs=2)  # points
    assert table.loc[("InstaAug", 10), "ResNet-50: paper"] == "81.18 ± 0.02"
    ia = 100 * R.accuracy(R.demo_tta(), "ResNet", "InstaAug", 10).mean()
    assert table.loc[("InstaAug", 10), "ResNet: ours"].startswith(f"{ia:.2f} ± ") and 55 < ia < 65
    assert run.paper["resnet/instaaug_n10"] == 81.18 and run.paper["vit/none_n1"] == 86.34  # the ViT is XCiT
    assert facts["d5_band"].startswith("from 1.20 to 2.70") and facts["d5_n"] == "10"
    assert facts["d5_gain"].startswith("+") and "interval" in facts["d5_gain"]
    assert facts["d5_gain_verdict"].startswith("This module's TTA raises")
    assert facts["d5_vs_free_verdict"].startswith("Over the training seeds: Per-input crops beat")
    assert "InstaAug" in facts["d5_still"]
    assert table.loc[("input-free", 10), "ResNet: ours"] != "—"  # the control's rows, beyond the paper's
    ev = run.claims["control/gain_shrinks_without_variation"]["evidence"]
    assert ev["unit"] == "seed" and ev["n"] == 3 and 4 < ev["estimate"] < 12  # (10 - 2) - (2 - 2) points, per seed
    assert run.claims["table2/instaaug_beats_input_free"]["evidence"]["unit"] == "seed"
    results.glue(facts)  # every fact is a number or text


def test_report_losses_are_not_reproduced_and_splits_are_partly():
    res = R.demo_tta({"InstaAug": -0.1, "random crop": 0.04})  # InstaAug hurts, random crops help
    v, _, _, facts = _report(res=res, items=R.demo_items(kl=0.0, covers=0.5))
    assert v["table2/instaaug_beats_alone"] == v["table2/instaaug_beats_random_crop"] == "not reproduced"
    assert v["table2/gain_grows_with_samples"] == v["table2/transfer_without_retraining"] == "not reproduced"
    assert v["table2/global_tta_lowers_accuracy"] == "partly"  # AutoAugment lowers it, the random crop does not
    assert v["fig6/crops_depend_on_the_input"] == v["fig6/crops_cover_the_object"] == "not reproduced"
    assert facts["d5_gain_verdict"].startswith("This module's TTA does not raise")


def _claim(cid):
    return PROTOCOL.get(cid, R.CHAPTER)


def test_every_claim_the_report_records_is_declared_with_a_smallest_effect():
    v, run, *_ = _report()
    declared = {c.id: c for c in PROTOCOL.of_chapter(R.CHAPTER)}
    assert set(run.claims) == set(declared)
    for cid, c in declared.items():
        assert run.claims[cid]["criterion"] == c.criterion() and run.claims[cid]["declaration"] == c.to_dict()
        assert all(p.smallest > 0 for p in c.parts.values()), cid
        assert {(p.unit, p.n_min) for p in c.parts.values()} <= {("image", 30), ("seed", 3)}, cid
    # Table 2's gains are under a point: half of each is the smallest that matters (the paper's +0.75 on ResNet-50)
    assert _claim("table2/instaaug_beats_alone").parts[""].smallest == 0.375
    lower = _claim("table2/global_tta_lowers_accuracy").parts
    assert {k: (p.direction, p.boundary) for k, p in lower.items()} == {
        "random crop, 4": ("less", -0.99), "random crop, 10": ("less", -0.415), "AutoAugment, 4": ("less", -1.0),
        "AutoAugment, 10": ("less", -0.615)}
    assert {k: p.smallest for k, p in _claim("table2/transfer_without_retraining").parts.items()} == {
        "ResNet-18": 0.615, "XCiT": 0.065}


@pytest.mark.slow
def test_a_gain_under_the_smallest_that_matters_is_not_reproduced():
    """demo_tta's InstaAug at 0.002 with 10 samples turns 0.4 % of the wrong images right (+0.2 points): a gain,
    but under half the paper's +0.75 points; decided, not left open, on 4,000 test images."""
    n = 4000
    res = R.demo_tta({"InstaAug": 0.002}, n_test=n, models=("ResNet",))
    S = F.settings("cpu", tta_seeds=3, models={"ResNet": "zoo:small_resnet18_s4/standard"})
    v, run, *_ = _report(S=S, res=res, control=None, items=R.demo_items(n_test=n))
    ev = run.claims["table2/instaaug_beats_alone"]["evidence"]
    assert 0 < ev["lo"] and ev["hi"] < 0.375 and v["table2/instaaug_beats_alone"] == "not reproduced"
    v, *_ = _report(S=S, res=R.demo_tta({"InstaAug": 0.03}, n_test=n, models=("ResNet",)), control=None,
                    items=R.demo_items(n_test=n))
    assert v["table2/instaaug_beats_alone"] == "reproduced"  # +3 points


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_control_fails_when_the_per_input_gain_is_as_large_without_variation():
    same = R.demo_control(3, still={"InstaAug": 0.1, "input-free": 0.02})  # the varied scenes' gains again
    v, run, *_ = _report(control=same)
    assert v["table2/instaaug_beats_input_free"] == "reproduced"
    assert v["control/gain_shrinks_without_variation"] == "not reproduced"  # no shrink: less than a point, decided
    grows = R.demo_control(3, still={"InstaAug": 0.3, "input-free": 0.0})  # a larger gain when still
    assert _report(control=grows)[0]["control/gain_shrinks_without_variation"] == "not reproduced"
    v, *_ = _report(control=None)
    assert v["control/gain_shrinks_without_variation"] == "not measurable at this profile"


def test_the_controls_are_claims_about_training_one_seed_decides_neither():
    """Whether per-input crops beat input-free ones compares two ways of training a module: one pair of modules,
    however many test images, is one seed (at seed 0 of the cpu run a clear gain, at seeds 1 and 2 none)."""
    v, run, _, facts = _report(control=R.demo_control(1))
    for claim in ("table2/instaaug_beats_input_free", "control/gain_shrinks_without_variation"):
        assert v[claim] == "inconclusive at this budget" and run.claims[claim]["evidence"]["n"] == 1
    assert "over the test images" in run.claims["table2/instaaug_beats_input_free"]["ours"]  # seed 0's, beside it
    assert run.claims["table2/instaaug_beats_input_free"]["evidence"]["boundary"] == 1.0
    assert facts["d5_vs_free"].startswith("+") and facts["d5_vs_free_verdict"].startswith("Whether that holds")
    res = R.demo_tta().query("method != 'input-free'")
    v, *_ = _report(S=F.settings("cpu", methods=F.METHODS[:3]), res=res)
    assert v["table2/instaaug_beats_input_free"] == v["control/gain_shrinks_without_variation"] == \
        "not measurable at this profile"


def test_a_few_images_gained_in_every_repeat_do_not_decide_table_2():
    """The old criterion (mean gain over the repeats of the TTA draws beyond 2 of their standard errors) read one
    image gained in all three repeats, on 250, as reproduced: those repeats share the test images, so their
    spread leaves the test set's sampling error out. Paired over the test images, it is undecided."""
    n = 250
    alone = (np.arange(n) % 2).astype(np.uint8)
    gained = alone.copy()
    gained[0] = 1  # image 0, wrong alone, right with InstaAug's TTA in every repeat
    rows = [dict(model="ResNet", method="none", n=1, seed=0, hits=alone)]
    rows += [dict(model="ResNet", method=m, n=k, seed=s, hits=gained if m == "InstaAug" else alone)
             for m in F.METHODS for k in (1, 4, 10) for s in range(3)]
    res = pd.DataFrame(rows)
    res.insert(4, "acc", [float(h.mean()) for h in res["hits"]])
    gain = 100 * (R.accuracy(res, "ResNet", "InstaAug", 10) - R.accuracy(res, "ResNet", "none", 1)[0])
    m, se = results.mean_se(gain)
    assert m == pytest.approx(0.4) and (se == 0 or m > 2 * se)  # the old rule: "reproduced"
    S = F.settings("cpu", tta_seeds=3, models={"ResNet": "zoo:small_resnet18_s4/standard"})
    v, run, *_ = _report(S=S, res=res, control=None, items=R.demo_items(n_test=n))
    for claim in ("table2/instaaug_beats_alone", "table2/instaaug_beats_random_crop"):
        assert v[claim] == "inconclusive at this budget"
        assert run.claims[claim]["evidence"]["unit"] == "image" and run.claims[claim]["evidence"]["n"] == n


def test_no_difference_and_too_few_images_are_inconclusive():
    v, run, _, facts = _report(res=R.demo_tta({"InstaAug": 0.0}))  # the same images right with and without
    assert v["table2/instaaug_beats_alone"] == "not reproduced"  # no gain: below the smallest that matters
    assert facts["d5_gain_verdict"].startswith("This module's TTA does not raise")
    v, run, _, facts = _report(res=R.demo_tta({"InstaAug": 0.01}))  # +0.5 points on 200 images: undecided
    assert v["table2/instaaug_beats_alone"] == "inconclusive at this budget"
    assert facts["d5_gain_verdict"].startswith("These test images cannot decide it")
    v, run, _, _ = _report(res=R.demo_tta(n_test=20), items=R.demo_items(n_test=20),
                           control=R.demo_control(1, n_test=20))
    assert set(v.values()) == {"inconclusive at this budget"}
    assert run.claims["table2/instaaug_beats_alone"]["evidence"]["n_min"] == R.N_MIN_IMAGES


def test_one_repeat_of_the_draws_can_decide_a_claim_about_this_module():
    v, *_ = _report(S=F.settings("cpu", tta_seeds=1), res=R.demo_tta(repeats=1))
    assert v["table2/instaaug_beats_alone"] == "reproduced"  # the test images are the replicates


@pytest.mark.parametrize("kl, verdict", [(0.055, "reproduced"), (0.045, "not reproduced")])
def test_input_dependence_at_the_shared_boundary(kl, verdict):
    v, run, *_ = _report(items=R.demo_items(kl=kl))
    assert run.claims["fig6/crops_depend_on_the_input"]["evidence"]["boundary"] == 0.05 == \
        PROTOCOL.get("fig8/input_dependent", "d4_contrastive_crops").parts[""].boundary  # D4's, the shared size
    assert v["fig6/crops_depend_on_the_input"] == verdict


def test_covering_the_object_needs_both_references():
    items = R.demo_items(covers=0.88)  # 3 points over the averaged crops (0.85), 8 over the random crop (0.8)
    v, run, *_ = _report(items=items)
    parts = run.claims["fig6/crops_cover_the_object"]["evidence"]["parts"]
    assert v["fig6/crops_cover_the_object"] == "partly"
    assert [p["verdict"] for p in parts.values()] == ["not reproduced", "reproduced"]


def test_report_without_other_classifiers_cannot_test_the_transfer_and_shows_missing_paper_values():
    S = F.settings("cpu", models={"ResNet": "zoo:small_resnet18_s4/standard"}, stands_for={})
    v, run, *_ = _report(S=S, res=R.demo_tta(models=("ResNet",)))
    assert v["table2/transfer_without_retraining"] == "not measurable at this profile"
    assert "resnet/instaaug_n10" not in run.paper  # no paper column "ResNet"
    v, run, *_ = _report()  # the ViT stands for XCiT; no classifier stands for ResNet-18 here
    parts = run.claims["table2/transfer_without_retraining"]["evidence"]["parts"]
    assert parts["ResNet-18"]["verdict"] == "not measurable at this profile" and parts["XCiT"]["n"] == 200
    assert v["table2/transfer_without_retraining"] == "reproduced"


def test_per_image_effects_pair_images_and_repeats_and_departures_list_the_changes():
    res = R.demo_tta(repeats=2, n_test=10)
    d = R.per_image(res, "ResNet", ("InstaAug", 10), ("random crop", 10))
    h = R.hits(res, "ResNet", "InstaAug", 10)
    assert h.shape == (2, 10) and d.shape == (10,)
    assert d.mean() == pytest.approx(100 * (R.accuracy(res, "ResNet", "InstaAug", 10)
                                            - R.accuracy(res, "ResNet", "random crop", 10)).mean())
    d = R.departures(F.settings("cpu"))
    assert d.loc["size"].tolist() == ["224", "56"] and d.loc["optimizer"].tolist() == ["sgd", "adam"]
    assert "h_min" not in d.index and "profile" not in d.index and R.departures(F.settings("paper")).empty


def test_figures_draw():
    import matplotlib

    matplotlib.use("Agg")
    S = F.settings("cpu")
    test = data.load("scenes", "test", n=3)
    assert len(R.plot_crops(test, torch.rand(5, 3, 3) * 0.5 + 0.25)) == 3
    trace = F.band_trace([dict(epoch=0, state=dict(checks=[(10, 1.2, 0.2), (20, 2.7, 0.24)]))])
    assert len(R.plot_trace(trace, S)) == 2
    assert [ax.get_title() for ax in R.plot_tta(R.demo_tta())] == ["ResNet", "ViT"]


def test_report_records_what_a_training_seed_of_the_controls_costs():
    """Seed 0's modules on the classifier's scenes are the run's (their histories); every other module is the data
    control's, whose rows carry what training the two modules of their scenes and seed took."""
    S = F.settings("cpu", tta_seeds=3)
    control = R.demo_control(3, n_test=200).assign(train_seconds=lambda c: 10.0 + c["replicate"])
    run = results.Run("cpu", name="d5_test")
    stats = pd.DataFrame(dict(side=[0.8] * 4, covers_object=[0.9] * 4, centre_in_box=[0.7] * 4,
                              entropy=[2.7, 3.0, 1.2, math.nan], kl_to_mean=[0.3, 0.0, 0.0, 0.0]),
                         index=list(R.STATS_ROWS))
    R.report(run, S, R.demo_tta(), stats, [dict(epoch=0, seconds=4.0)], R.demo_items(), control,
             [dict(epoch=0, seconds=5.0)])
    rep = run.replicate_costs["control_seeds"]
    assert rep["seconds"] == [19.0, 22.0, 24.0]  # seed 0: 4 + 5 (the run's) + 10 (still); seed k: both kinds
    assert rep["claims"] == list(R.CONTROL_CLAIMS) and "seeds" not in run.replicate_costs
    assert set(R.CONTROL_CLAIMS) == {c.id for c in PROTOCOL.of_chapter("d5_fixed_classifier_tta")
                                     if {p.unit for p in c.parts.values()} == {"seed"}}
    # where the control's spread over seeds comes from: each seed's per-image gain, split into test images and training
    split = run.variance_splits["control_seeds"]["InstaAug - input-free"]
    gains = run.claims["table2/instaaug_beats_input_free"]["evidence"]
    assert split["seeds"] == gains["n"] == 3 and split["items"] > 1 and split["evaluation"] >= 0
    assert set(run.variance_splits["control_seeds"]) == {"InstaAug - input-free", "varied - still"}
