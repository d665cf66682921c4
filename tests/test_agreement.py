"""Chapter S1 (invlib.papers.s): the family reuses the papers' models, every measure comes from its paper's
function, a model made exactly invariant scores at the invariant end of every measure (and one that is not does
not), the agreement and sources tables, and the claims' verdicts."""

import pandas as pd
import pytest
import torch
from torch import nn

from invlib import data, results, zoo
from invlib.papers.b import grounding, rrc
from invlib.papers.s import agreement as G
from invlib.papers.s import agreement_reports as R


def test_settings_reject_bad_levels_and_transforms():
    with pytest.raises(ValueError, match="starting with 0"):
        G.settings("smoke", levels=(3, 6))
    with pytest.raises(ValueError, match="Valid transformations: brightness, rotation, translation, zoom"):
        G.settings("smoke", transforms=("shear",))
    with pytest.raises(ValueError, match="seeds must be at least 1"):
        G.settings("smoke", seeds=0)


def test_the_family_is_the_papers_models_and_trains_only_rotation_and_brightness():
    S = G.settings("cpu")
    fam = G.family(S)
    B = rrc.settings("cpu")
    b1 = {s for specs in rrc.family(B).values() for s in specs}
    b7 = set(grounding.variation_family(grounding.settings("cpu"))[(0.0, rrc.NONE)])
    own = [m for m in fam if m.recipe == "B1" and m.variant not in ("rotation", "brightness", "untrained")]
    assert len(own) == 8 and all(m.spec in b1 for m in own), "none, standard, translation, scale are B1's models"
    assert {m.spec for m in fam if m.recipe == "B7"} == b7
    b3 = {"zoo:small_resnet18_s4/none", "zoo:small_vit_p14_cls/untrained", "zoo:small_vit_p14_cls/none"}
    assert {m.spec for m in fam if m.recipe == "B3"} == b3
    new = [m.spec for m in fam if m.variant in ("rotation", "brightness")]
    assert len(new) == 4 and {s.augment for s in new} == {"random_op"}
    assert all(s.replace(augment="fixed_size_center_crop", augment_params={"size": 56}) in b1 for s in new), \
        "the same recipe as B1's model without augmentation, only the augmentation differs"
    assert len({m.name for m in fam}) == len(fam)


class _Net(nn.Module):
    """A tiny classifier; ``standardise=True`` makes it exactly invariant to x -> a x + b (a > 0), so to brightness
    factors and shifts while no pixel clips: each image is standardised (in float64, rounded) before the conv."""

    def __init__(self, standardise: bool):
        super().__init__()
        torch.manual_seed(int(standardise))  # other weights: the measures are cached by the weights
        self.standardise = standardise
        self.conv = nn.Conv2d(3, 16, 5, stride=2)
        self.fc = nn.Linear(16 * 4, 10)

    def forward(self, x):
        if self.standardise:
            d = x.double()
            d = (d - d.mean((1, 2, 3), keepdim=True)) / d.std((1, 2, 3), keepdim=True)
            x = (d * 1e5).round().float() / 1e5
        h = nn.functional.adaptive_avg_pool2d(torch.relu(self.conv(x)), 2).flatten(1)
        return self.fc(h)


def _dim_scenes(n: int, seed: int) -> data.Dataset:
    """Scenes squeezed into [0.3, 0.45] of the intensity range: no brightness factor of 0.5-2 and no shift of
    +-45/255 clips a pixel."""
    ds = data.load("scenes", "test", n=n, seed=seed, size=32)
    x = (0.3 + 0.15 * ds.images.float() / 255) * 255
    return data.Dataset(ds.name, ds.split, x.round().to(torch.uint8), ds.labels, ds.classes, ds.synsets, ds.boxes)


def _measures(standardise: bool) -> pd.Series:
    S = G.settings("smoke", transforms=("brightness",), levels=(0, 3, 6, 9), n_probe=64, n_pairs=96, n_fit=64,
                   n_eval=64, map_epochs=2, progress=False)
    sets = dict(probe=_dim_scenes(64, 0), pairs=(_dim_scenes(96, 1), _dim_scenes(96, 2)),
                maps=(_dim_scenes(64, 3), _dim_scenes(64, 4)))
    t = G.measure(S, {G.Model("untrained", 0): _Net(standardise).eval()}, sets)
    clean = float(t.loc[t["transform"] == "none", "value"].iloc[0])
    return G.wide(t, "brightness").iloc[0], clean


def test_an_exactly_invariant_model_scores_at_the_invariant_end_of_every_measure():
    m, clean = _measures(standardise=True)
    assert set(m.index) == {"accuracy", "a_probe", "b_invariance", "b_alignment", "c_inv_acc", "c_inv_l2",
                            "c_eq_acc"}
    assert m["accuracy"] == pytest.approx(clean), "accuracy under brightness = clean accuracy"
    assert m["a_probe"] <= 0.5, "A's probe cannot rank what the embedding does not carry (chance or below)"
    assert m["b_invariance"] == pytest.approx(1.0, abs=1e-6), "B: the embedding does not move at all"
    assert m["c_inv_acc"] == pytest.approx(clean), "C: the rest of the network sees the same features"
    assert m["c_inv_l2"] == pytest.approx(0.0, abs=1e-6)


def test_a_model_that_is_not_invariant_is_not_at_that_end():
    m, clean = _measures(standardise=False)
    assert m["a_probe"] > 0.8, "the raw model's embedding encodes the brightness"
    assert m["b_invariance"] < 0.99 and m["c_inv_l2"] > 0.01


def test_agreement_is_oriented_and_sources_name_the_largest_factor():
    S = G.settings("smoke")
    t = R.demo_table()
    agree = G.agreement(S, t, "zoom", R.trained(t))
    pair = agree[(agree["a"] == "accuracy") & (agree["b"] == "a_probe")].iloc[0]
    assert pair["rho"] == pytest.approx(1.0) and pair["n"] == 9, "A's accuracy falls as invariance rises: agree"
    assert "untrained B1 ResNet 0" not in R.trained(t)
    src = G.sources(t, transforms=["zoom"])
    assert src.loc["zoom", "largest"] == "augmentation" and src.loc["zoom", "augmentation"] > 0


def test_the_claims_fail_when_augmentation_lowers_invariance():
    t = R.demo_table()
    aug = t["variant"] == "scale"
    t.loc[aug & (t["measure"] == "b_invariance"), "value"] = 0.0  # the scale models now the least invariant
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), t)
    assert run.claims["s1/augmentation_raises_invariance"]["verdict"] == "partly"  # 4 of 5 measures still rise
    assert run.claims["s1/augmentation_moves_invariance_most"]["verdict"] == "reproduced"  # moved, downwards
    t.loc[aug & (t["measure"].isin(["accuracy", "c_inv_acc"])), "value"] = 0.0
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), t)
    assert run.claims["s1/augmentation_raises_invariance"]["verdict"] == "not reproduced"


def test_random_op_models_are_zoo_specs_of_their_own():
    B = rrc.settings("smoke")
    rot = G._b1_spec(B, "rotation", 0, 45.0, (0.5, 2.0))
    assert zoo.path(rot) != zoo.path(G._b1_spec(B, "brightness", 0, 45.0, (0.5, 2.0)))
    assert zoo.path(rot) != zoo.path(rrc.spec(B, rrc.NONE, 0))


def test_every_fact_is_text_for_the_prose():
    """The chapter quotes every fact with {glue:md}, which takes text only (a number fails the site build)."""
    _, _, facts = R.report(results.Run("smoke", name="demo"), G.settings("smoke", transforms=("zoom",)),
                           R.demo_table())
    assert facts and all(isinstance(v, str) for v in facts.values()), \
        {k: type(v).__name__ for k, v in facts.items() if not isinstance(v, str)}
