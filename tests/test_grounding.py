"""invlib.papers.b.grounding: paper B part 1's settings, the claims computed from sweep and search numbers, Fig. 3C's
rates, and the caches that let chapter B4 reuse chapter B3's sweep."""

import numpy as np
import pandas as pd
import pytest
import torch

from invlib import results
from invlib.papers.b import grounding as G
from invlib.papers.b import grounding_reports as GR
from invlib.papers.b import similarity


def test_settings_profiles_and_overrides():
    S = G.settings("cpu")
    assert S.dataset == "scenes" and S.models["ViT"]["none"] == "zoo:small_vit_p14/none"
    assert (G.zoo_profile(S).dataset, G.zoo_profile(S).img_size, G.image_side(S)) == ("scenes", 56, 56)
    # -p dataset=fashion_mnist_color: the 28 px models trained on Fashion-MNIST, as before scenes
    F = G.settings("cpu", dataset="fashion_mnist_color")
    assert F.models["ResNet"]["none"] == "zoo:small_resnet18/none" and G.zoo_profile(F).dataset == F.dataset
    assert G.image_side(F) == 28
    # a misspelt zoo_data field names the valid profile fields
    with pytest.raises(ValueError, match="Did you mean 'img_size'"):
        G.zoo_profile(G.settings("cpu", zoo_data={"dataset": "scenes", "img_sise": 56}))
    assert G.settings("paper").dataset == "imagenet" and "none" not in G.settings("paper").models["ResNet"]
    assert G.settings("smoke", n_probe=32).n_probe == 32
    with pytest.raises(ValueError, match="Valid Settings fields"):
        G.settings("cpu", n_probes=3)
    with pytest.raises(TypeError, match="n_probe"):
        G.settings("cpu", n_probe="many")
    with pytest.raises(ValueError, match="Valid transform grids"):
        G.invariance_table(G.settings("smoke"), torch.rand(4, 3, 8, 8), grids=["spin"],
                           models={"ResNet": {"untrained": "random:small_resnet18"}})


def _table(delta_translate, delta_rotate, aug_translate=0.02, align=(0.3, 0.0), vit_untrained=0.5):
    """A sweep table with known level means: untrained at 0.4 (ViT: vit_untrained), trained = untrained +
    delta, standard = trained + aug_translate on translate."""
    rows = []
    for arch in ("ResNet", "ViT"):
        base0 = 0.4 if arch == "ResNet" else vit_untrained
        for g in ["translate", "rotate", "shear", "zoom_in", *G.APPEARANCE_B3]:
            deltas = {"translate": delta_translate, "rotate": delta_rotate, "shear": delta_rotate, "zoom_in": 0.0}
            d = deltas.get(g, 0.1)
            for variant, value in (("untrained", base0), ("none", base0 + d),
                                   ("standard", base0 + d + (aug_translate if g == "translate" else 0))):
                for level in range(10):
                    a = (align[0] if arch == "ResNet" else align[1]) if variant == "untrained" else 0.0
                    rows.append(dict(arch=arch, variant=variant, transform=g, level=level,
                                     median=1.0 if level == 0 else value, alignment=0.0 if level == 0 else a))
    return pd.DataFrame(rows)


def test_sweep_claims_follow_the_numbers():
    run = results.Run("t", "smoke")
    GR.record_sweep_claims(run, _table(0.2, -0.1))
    v = {k: c["verdict"] for k, c in run.claims.items()}
    assert v["fig2/train_raises_translation_appearance"] == "reproduced"
    assert v["fig2/train_lowers_rotation_shear"] == "reproduced"
    assert v["fig2/zoom_in_unchanged"] == "reproduced"
    assert v["fig2/augmentation_slight_translation"] == "reproduced"  # 0 < 0.02 < 0.2
    assert v["fig2/untrained_vit_translation"] == "reproduced"  # 0.5 > 0.4
    assert v["figA10/untrained_resnet_equivariant"] == "reproduced"  # 0.3 > 0.05, invariance 0.4 < 0.5

    run = results.Run("t", "smoke")
    GR.record_sweep_claims(run, _table(-0.2, 0.1, aug_translate=-0.01, align=(0.01, 0.2), vit_untrained=0.3))
    v = {k: c["verdict"] for k, c in run.claims.items()}
    assert v["fig2/train_raises_translation_appearance"] == "partly"  # appearance rose, translation fell
    assert v["fig2/train_lowers_rotation_shear"] == "not reproduced"
    assert v["fig2/augmentation_slight_translation"] == "not reproduced"
    assert v["fig2/untrained_vit_translation"] == "not reproduced"
    assert v["figA10/untrained_resnet_equivariant"] == "not reproduced"


def test_training_change_and_level_mean_skip_level_zero():
    t = _table(0.2, -0.1)
    assert G.level_mean(t, "ResNet", "untrained", "translate") == pytest.approx(0.4)
    assert G.training_change(t, "ResNet")["rotate"] == pytest.approx(-0.1)
    assert np.isnan(G.level_mean(t, "ResNet", "untrained", "nothing"))


def _search(values: dict, classes=("a", "b", "c")) -> similarity.Search:
    """A Search whose every pair of class c under entry e changes by values[e][c] (two pairs per class)."""
    entries = list(values)
    labels = torch.tensor([c for c in range(len(classes)) for _ in range(2)])
    changes = torch.tensor([[values[e][int(c)] for c in labels] for e in entries], dtype=torch.float32)
    return similarity.Search(entries, changes, labels, list(classes))


def test_search_claims_per_class_beats_global():
    single = _search({"posterize/5": [3.0, -2.0, -1.0], "rotate/3": [-1.0, 4.0, -3.0], "color/4": [-2.0, -1.0, 2.0],
                      "rescale/0": [0.0, 0.0, 0.0], "shearX/2": [-5.0, -5.0, -5.0]})
    damp = _search({e: [v / 2 for v in vals] for e, vals in {"posterize/5": [3.0, -2.0, -1.0],
                    "rotate/3": [-1.0, 4.0, -3.0], "color/4": [-2.0, -1.0, 2.0], "rescale/0": [0.0, 0.0, 0.0],
                    "shearX/2": [-5.0, -5.0, -5.0]}.items()})
    searches = {"none": {"single": single}, "standard": {"single": damp}}
    run = results.Run("t", "smoke")
    out = GR.record_search_claims(run, searches, change=None)
    v = {k: c["verdict"] for k, c in run.claims.items()}
    assert v["fig3a/no_single_transform"] in ("reproduced", "partly")  # no entry helps every class
    assert v["fig3b/top_per_class"] == "reproduced"  # each class has its own helpful entry
    assert out["top_per_class"] == {"a": "posterize/5", "b": "rotate/3", "c": "color/4"}
    assert v["fig3a/augmentation_dampens"] == "reproduced"
    assert "rescale/0" not in [e for e, *_ in single.global_ranking()]  # the identity is not "a transformation"
    # geometric entries (rotate, shearX) lower class a and c; class b is helped by rotate
    assert out["identity_best_geometric"] == pytest.approx(2 / 3)

    bad = _search({"posterize/5": [1.0, 1.0, 1.0], "rotate/3": [-1.0, -1.0, -1.0]})
    run = results.Run("t", "smoke")
    GR.record_search_claims(run, {"none": {"single": bad}}, change=None)
    assert run.claims["fig3a/no_single_transform"]["verdict"] == "not reproduced"


def test_figure_a2_one_row_per_grid_levels_as_columns():
    import matplotlib

    matplotlib.use("Agg")
    x = torch.rand(1, 3, 16, 16)
    fig = GR.figure_a2(x, ["rotate", "hflip"])
    assert len(fig.axes) == 20 and [ax.get_title() for ax in fig.axes[:10]] == [str(lv) for lv in range(10)]
    assert [fig.axes[0].get_ylabel(), fig.axes[10].get_ylabel()] == ["rotate", "hflip"]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), x[0].permute(1, 2, 0).numpy(), atol=1e-6)
    far = similarity.transform_level("hflip", x, 9, torch.Generator().manual_seed(9))[0]
    np.testing.assert_allclose(fig.axes[19].images[0].get_array(), far.permute(1, 2, 0).numpy(), atol=1e-6)

def test_fig3c_rates():
    s = _search({f"posterize/{lv}": [5.0, 5.0, 5.0] for lv in (5, 6, 7, 8)}
                | {f"rotate/{lv}": [-1.0, -1.0, -1.0] for lv in (3, 4, 8, 9)}
                | {"shearX/2": [-2.0, -2.0, -2.0], "solarize/2": [-3.0, -3.0, -3.0]})
    out = G.top5_by_invariance_change(s, {"posterize": 0.3, "rotate": -0.2, "shear": 0.0, "solarize": 0.1})
    assert set(out["entries_grew"]) == {"posterize/5", "posterize/6", "posterize/7", "posterize/8", "solarize/2"}
    # top 5 of every class: the 4 posterize entries and rotate (-1): 4 of 5 grew entries per class
    assert out["grew"] == pytest.approx(4 / 5) and out["other"] == pytest.approx(1 / 5)


def test_every_pool_operation_maps_to_sweep_grids():
    for entry in similarity.POOL:
        assert set(G._pool_grids(similarity.entry_name(entry))) <= set(similarity.GRIDS)


def test_rotation_classes_and_wordnet_claims():
    s = _search({"rotate/3": [5.0, -1.0, 2.0], "color/4": [1.0, 3.0, 1.0]})
    rot = G.rotation_classes({"none": {"single": s}})
    assert rot["by_mean"] == ["a", "c"] and rot["top10"][0][:2] == ("a", "rotate/3")
    run = results.Run("t", "smoke")
    reports = {"wup": dict(rho=0.4, p=0.01, metric="wup", pairs=pd.DataFrame(dict(a=[1, 2, 3])))}
    GR.record_wordnet_claims(run, reports, rot)
    assert run.claims["fig4/wordnet_similar_classes"]["verdict"] == "reproduced"
    assert run.claims["e2/rotation_top_weighted_boost"]["verdict"] == "not reproduced"  # 2 of 6 combinations


def test_sweep_cache_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path))
    S = G.settings("smoke")
    x = torch.rand(8, 3, 28, 28)
    one = {"ResNet": {"untrained": "random:small_resnet18"}}
    t1 = G.invariance_table(S, x, grids=["rotate"], models=one)
    assert len(list((tmp_path / "grounding").glob(f"sweep-*-v{G.CACHE_VERSION}.pt"))) == 1, "versioned files"
    t2 = G.invariance_table(S, x, grids=["rotate"], models=one)
    pd.testing.assert_frame_equal(t1, t2)
    G.invariance_table(S, x[:6], grids=["rotate"], models=one)  # other images: another entry
    assert len(list((tmp_path / "grounding").glob("sweep-*.pt"))) == 2


def _digits_folder(root, classes=3, per_class=12, side=32, seed=0):
    """A folder like the issue's: greyscale ``side`` px images, one folder per class, no train/ or test/ inside."""
    from PIL import Image

    gen = np.random.default_rng(seed)
    for c in range(classes):
        (root / str(c)).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(gen.integers(0, 256, (side, side), dtype=np.uint8), "L").save(root / str(c) / f"{i}.png")
    return root


@pytest.mark.parametrize("split", [False, True], ids=["one-split folder", "train-test folder"])
def test_b3_to_b5_run_on_a_folder_of_their_own_at_the_side_the_zoo_models_are_built_for(tmp_path, split):
    # the issue: a folder was decoded at 64 px and fed to the zoo's 28 px ViT (patch 7): "Input height (64) should
    # be divisible by patch size (7)"; and a folder without train/ and test/ had no test split to probe
    root = tmp_path / "digits"
    for k, sub in enumerate(("train", "test") if split else ("",)):
        _digits_folder(root / sub, seed=k)
    vit = {"ViT": {"untrained": "zoo:small_vit_p14/untrained"}}
    S = G.settings("smoke", dataset="folder", root=str(root), n_probe=8, n_search=20, grids=("rotate",), models=vit)
    x = G.probe_images(S)
    xs, labels, classes, synsets, boxes = G.search_images(S)
    table = G.invariance_table(S, x)
    assert len(table) == 10 and float(table[table.level == 0]["median"].iloc[0]) == pytest.approx(1.0, abs=1e-4)
    assert x.shape == (8, 3, 56, 56) and xs.shape == (20, 3, 56, 56) and classes == ["0", "1", "2"]
    assert G.image_side(S) == 56 == G.image_side(G.settings("smoke")) and G.image_side(G.settings("paper")) == 224
    assert not (xs[:, None] == x[None]).flatten(2).all(-1).any(), "the probes are held out from the search images"
    # no WordNet synsets, no foreground boxes: B5's WordNet claim is not measurable, not an error
    assert synsets is None and boxes is None and G.wordnet_report({}, synsets) == {} and GR.plot_wordnet({}) is None
    run = results.Run("t", "smoke")
    GR.record_wordnet_claims(run, {}, G.rotation_classes({"none": {"single": _search({"rotate/3": [1.0, 2.0, 3.0]})}}))
    assert run.claims["fig4/wordnet_similar_classes"]["verdict"] == "not measurable at this profile"


# ------------------------------------------------------------------------------ the variation study (chapter B7)
def test_variation_family_trains_one_recipe_on_scenes_at_every_level():
    S = G.settings("smoke", variation={"seeds": 3})
    fam = G.variation_family(S)
    V = G.variation_settings(S)
    assert sorted(fam) == [(lv, m) for lv in V["levels"] for m in sorted(V["methods"])]
    for (level, method), specs in fam.items():
        assert [s.seed for s in specs] == [0, 1, 2]
        options = () if level == 1.0 else (("variation", level),)  # 1 is the scenes default
        assert {(s.dataset, s.arch, s.augment, s.data_options, s.img_size) for s in specs} == {
            ("scenes", "small_resnet18_s4", method, options, 64)}
    # at variation 1 the study's models are chapter B1's, so the two chapters train them once
    from invlib.papers.b import rrc as R

    R1 = R.settings("smoke", seeds=3)
    for method in V["methods"]:
        assert fam[(1.0, method)] == R.family(R1)[method]
    # a level, a method and a seed each make a different model
    from invlib import zoo

    assert len({zoo.path(s) for specs in fam.values() for s in specs}) == sum(map(len, fam.values()))


@pytest.mark.parametrize("change, message", [
    ({"level": (0, 1)}, "Unknown variation setting"), ({"levels": (1.0,)}, "two or more increasing"),
    ({"levels": (1.0, 0.0)}, "two or more increasing"), ({"methods": ("rrc",)}, "fixed_size_center_crop"),
])
def test_variation_settings_reject_what_the_study_cannot_run(change, message):
    with pytest.raises(ValueError, match=message):
        G.variation_settings(G.settings("smoke", variation=change))


def _study(translate, gains, train_gap=10.0, seeds=3, noise=0.002):
    """A synthetic study table: per level, no-augmentation translate invariance and RRC's gain (points)."""
    rng = np.random.default_rng(0)
    rows = []
    for level, (inv, gain) in enumerate(zip(translate, gains)):
        for k in range(seeds):
            base = 60 + rng.normal(0, 0.3)
            rows.append(dict(level=float(level), method="fixed_size_center_crop", seed=k, train_acc=base + train_gap,
                             test_acc=base, translate=inv + rng.normal(0, noise), zoom_in=0.2))
            rows.append(dict(level=float(level), method="rrc", seed=k, train_acc=base, test_acc=base + gain,
                             translate=inv, zoom_in=0.2))
    return pd.DataFrame(rows)


def test_variation_claims_follow_the_numbers():
    run = results.Run("smoke", name="t")
    GR.record_variation_claims(run, GR.variation_summary(_study([0.1, 0.2, 0.3], [-2.0, 1.0, 4.0])))
    v = {c: d["verdict"] for c, d in run.claims.items()}
    assert v["thesis/translate_grows_with_variation"] == "reproduced"
    assert v["thesis/zoom_in_grows_with_variation"] == "not reproduced"  # flat
    assert v["thesis/crop_gain_grows_with_variation"] == "reproduced"
    run = results.Run("smoke", name="t")
    GR.record_variation_claims(run, GR.variation_summary(_study([0.3, 0.25, 0.31], [4.0, 1.0, -2.0], train_gap=1)))
    v = {c: d["verdict"] for c, d in run.claims.items()}
    assert v["thesis/translate_grows_with_variation"] == "partly"  # up overall, not at every step
    assert v["thesis/crop_gain_grows_with_variation"] == "not measurable at this profile"  # no overfitting


def test_variation_summary_pairs_each_rrc_seed_with_its_own_baseline():
    s = GR.variation_summary(_study([0.1, 0.2], [3.0, 5.0], noise=0.0))
    rrc = s[s.method == "rrc"]
    assert np.allclose(rrc.crop_gain, [3.0, 5.0]) and np.allclose(rrc.crop_gain_se, 0.0)
    assert set(s.seeds) == {3} and np.isnan(s[s.method != "rrc"].crop_gain).all()
