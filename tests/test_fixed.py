"""invlib.papers.d.fixed and fixed_reports (chapter D5): settings, the classifiers shared with paper B, the module
trained beside a frozen classifier, test-time augmentation, what the crops do, and the report's claims."""

import math

import pandas as pd
import pytest
import torch
from torch import nn

from invlib import data, results, zoo
from invlib.learned import instaaug as I
from invlib.papers.d import fixed as F
from invlib.papers.d import fixed_reports as R


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


def test_settings_errors_name_the_fix():
    with pytest.raises(ValueError, match="TTA method.*AutoAugment"):
        F.settings("cpu", methods=["mixup"])
    with pytest.raises(ValueError, match="h_min <= h_max"):
        F.settings("cpu", h_min=3.0, h_max=2.0)
    with pytest.raises(ValueError, match="Did you mean 'epochs'"):
        F.settings("cpu", epoch=3)
    with pytest.raises(ValueError, match="samples"):
        F.settings("cpu", samples=[0, 4])


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_zoo_specs_are_paper_bs_checkpoints(profile):
    """The classifiers are paper B's zoo models: the same specs, so the same files (nothing is retrained)."""
    from invlib.papers.b import grounding as B  # the test may compare; the paper module must not import it

    S, SB = F.settings(profile), B.settings(profile)
    ours = F.zoo_specs(S)
    theirs = {"ResNet": SB.models["ResNet"]["standard"], "ViT": SB.models["ViT"]["standard"]}
    for label, entry in theirs.items():
        assert zoo.path(ours[label]) == zoo.path(entry[4:], B.zoo_profile(SB))
    assert F.image_side(S) == B.image_side(SB) == 56


def test_scene_data_is_the_classifiers_own_training_images():
    S = F.settings("smoke", n_train=16, n_test=8)
    train, test = F.scene_data(S)
    zoo_train, zoo_test = zoo.splits(F.zoo_specs(S)["ResNet"].replace(n_train=32, n_test=8))
    assert torch.equal(train.images, zoo_train.images[:16]) and torch.equal(test.images, zoo_test.images)
    assert test.boxes.shape == (8, 4) and train.images.shape[1:] == (3, 56, 56)


# ----------------------------------------------------------------------------- the module
def test_lrp_is_seeded_and_leaves_the_random_state():
    S = F.settings("cpu")
    state = torch.random.get_rng_state()
    a, b = F.lrp(S), F.lrp(S)
    assert torch.equal(state, torch.random.get_rng_state())
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    c = F.lrp(F.settings("cpu", seed=1))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))
    assert a.num_crops == 14 * 14 + 7 * 7 + 1


def test_module_config_checks_once_per_epoch_by_default():
    cfg, loss = F.module_config(F.settings("paper", warmup_epochs=2.0), 1000)  # 10 steps per epoch
    assert (loss.check_every, loss.warmup_steps, cfg.optimizer, cfg.schedule) == (10, 20, "sgd", "none")
    cfg, loss = F.module_config(F.settings("cpu"), 3000)
    assert loss.check_every == 10 and cfg.optimizer == "adam" and cfg.aug_lr == 3e-3 and cfg.weight_decay == 0


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


def _global_module(S):
    """An LRP module with all its mass on the whole image (the global crop)."""
    m = I.InstaAugment(F.lrp(S)).eval()
    with torch.no_grad():
        m.params.global_head.bias.fill_(40.0)  # other crops ~e^-40: not 0, so logs stay finite
    return m


def test_tta_with_whole_image_crops_is_the_classifier_alone():
    S = F.settings("smoke", size=32, n_test=16, samples=(1, 3), tta_seeds=2, methods=["InstaAug", "random crop"],
                   random_crop_scale=(1.0, 1.0), chunk=5)  # random "crops" of the whole image, several chunks
    test = _quadrant_data(16)
    res = F.tta(S, _global_module(S), {"centre": _Centre()}, test)
    alone = res[res["method"] == "none"]["acc"].item()
    assert len(res) == 1 + 2 * 2 * 2 and (res["acc"] == alone).all()
    assert set(res["n"]) == {1, 3} and set(res["seed"]) == {0, 1}


def test_tta_draws_are_repeatable():
    S = F.settings("smoke", size=32, n_test=24, samples=(1, 2), tta_seeds=2, methods=["random crop", "AutoAugment"])
    test, nets = _quadrant_data(24), {"centre": _Centre()}
    a = F.tta(S, I.InstaAugment(F.lrp(S)), nets, test)
    b = F.tta(S, I.InstaAugment(F.lrp(S)), nets, test)
    pd.testing.assert_frame_equal(a, b)
    s = F.summary(a)
    assert (s.loc[s["method"] != "none", "repeats"] == 2).all() and s.loc[s["method"] == "none", "se"].isna().all()


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
    net, hist = F.train_module(S, clf, train)
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
def _res(ia_gain=0.05, rc=-0.02, seeds=3, models=("ResNet", "ViT")):
    rows = []
    for m in models:
        rows.append(dict(model=m, method="none", n=1, seed=0, acc=0.5))
        for s in range(seeds):
            for n in (1, 4, 10):
                rows += [dict(model=m, method="InstaAug", n=n, seed=s, acc=0.5 + ia_gain * n / 10 + 0.002 * s),
                         dict(model=m, method="random crop", n=n, seed=s, acc=0.5 + rc + 0.001 * s),
                         dict(model=m, method="AutoAugment", n=n, seed=s, acc=0.45 - 0.001 * s)]
    return pd.DataFrame(rows)


def _stats(kl=0.3, covers=0.95):
    return pd.DataFrame(dict(side=[0.8, 0.8, 0.95, 0.7], covers_object=[covers, 0.85, 0.9, 0.8],
                             centre_in_box=[0.8, 0.6, 0.7, 0.6], entropy=[2.7, 3.0, 1.2, math.nan],
                             kl_to_mean=[kl, 0.0, 0.0, 0.0]), index=list(R.STATS_ROWS))


def test_report_verdicts_follow_the_numbers():
    S = F.settings("cpu")
    hist = [dict(epoch=0, state=dict(checks=[(10, 1.2, 0.2), (20, 2.7, 0.2)]))]
    run = results.Run("cpu", name="d5_test")
    table, facts = R.report(run, S, _res(), _stats(), hist)
    v = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert v["table2/instaaug_beats_alone"] == v["table2/instaaug_beats_random_crop"] == "reproduced"
    assert v["table2/gain_grows_with_samples"] == "reproduced" and v["table2/transfer_without_retraining"] == \
        "reproduced"
    assert v["table2/global_tta_lowers_accuracy"] == "reproduced"  # both below alone beyond their repeats' noise
    assert v["fig6/crops_depend_on_the_input"] == v["fig6/crops_cover_the_object"] == "reproduced"
    assert table.loc[("InstaAug", 10), "ResNet-50: paper"] == "81.18 ± 0.02"
    assert table.loc[("InstaAug", 10), "ResNet: ours"].startswith("55.")
    assert run.paper["resnet/instaaug_n10"] == 81.18 and run.paper["vit/none_n1"] == 86.34  # the ViT is XCiT
    assert facts["d5_band"].startswith("from 1.20 to 2.70") and facts["d5_n"] == "10"
    results.glue(facts)  # every fact is a number or text


def test_report_single_repeat_gives_at_most_partly_and_losses_are_not_reproduced():
    S = F.settings("cpu", tta_seeds=1)
    run = results.Run("cpu", name="d5_test")
    R.report(run, S, _res(seeds=1), _stats(kl=0.0, covers=0.5), [])
    v = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert v["table2/instaaug_beats_alone"] == v["table2/transfer_without_retraining"] == "partly"
    assert v["fig6/crops_depend_on_the_input"] == v["fig6/crops_cover_the_object"] == "not reproduced"
    run = results.Run("cpu", name="d5_test")
    R.report(run, F.settings("cpu"), _res(ia_gain=-0.05, rc=0.02), _stats(), [])
    v = {cid: c["verdict"] for cid, c in run.claims.items()}
    assert v["table2/instaaug_beats_alone"] == v["table2/instaaug_beats_random_crop"] == "not reproduced"
    assert v["table2/global_tta_lowers_accuracy"] == "partly"  # AutoAugment lowers it, the random crop does not


def test_report_without_other_classifiers_cannot_test_the_transfer():
    S = F.settings("cpu", models={"ResNet": "zoo:small_resnet18_s4/standard"})
    run = results.Run("cpu", name="d5_test")
    R.report(run, S, _res(models=("ResNet",)), _stats(), [])
    assert run.claims["table2/transfer_without_retraining"]["verdict"] == "not measurable at this profile"


def test_gain_pairs_repeats_and_departures_list_the_changes():
    res = _res(seeds=2)
    m, se, k = R.gain(res, "ResNet", ("InstaAug", 10), ("random crop", 10))
    assert k == 2 and m == pytest.approx(0.07 + 0.0005) and se == pytest.approx(0.0005)
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
    assert [ax.get_title() for ax in R.plot_tta(_res())] == ["ResNet", "ViT"]
