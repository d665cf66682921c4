"""Chapter S1 (invlib.papers.s): the family reuses the papers' models, every measure comes from its paper's
function, a model made exactly invariant scores at the invariant end of every measure (and one that is not does
not), the agreement and sources tables, and the claims' verdicts."""

import copy
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from invlib import data, models, results, zoo
from invlib.papers.b import grounding, rrc, similarity
from invlib.papers.d import cropping
from invlib.papers.s import agreement as G
from invlib.papers.s import agreement_reports as R
from invlib.papers.s.protocol import PROTOCOL
from invlib.protocol import decide
from invlib.verdicts import rank_correlation


def test_settings_reject_bad_levels_and_transforms():
    with pytest.raises(ValueError, match="starting with 0"):
        G.settings("smoke", levels=(3, 6))
    with pytest.raises(ValueError, match="Valid transformations: brightness, rotation, translation, zoom"):
        G.settings("smoke", transforms=("shear",))
    with pytest.raises(ValueError, match="seeds must be at least 1"):
        G.settings("smoke", seeds=0)


def test_the_family_is_the_papers_models_and_trains_only_rotation_and_brightness():
    S = G.settings("cpu")
    fam = G.models(S)
    B = rrc.settings("cpu", seeds=S.seeds)
    b1 = {s for specs in rrc.table_1a_specs(B).values() for s in specs}
    b7 = grounding.variation_specs(grounding.settings("cpu", variation={"seeds": S.seeds}))
    own = [m for m in fam if m.recipe == "B1" and m.variant not in ("rotation", "brightness", "untrained")]
    assert len(own) == 7 * S.seeds and {m.spec for m in own} == b1, "every crop method of B1's Table 1a"
    assert [m.spec for m in fam if m.recipe == "B7"] == b7[(0.0, rrc.NONE)] + b7[(0.0, rrc.RRC)]
    b3 = {f"zoo:small_{a}/{v}" for a in ("resnet18_s4", "vit_p14_cls") for v in ("none", "standard")}
    assert {m.spec for m in fam if m.recipe == "B3"} == b3, "B3's untrained ViT is read by no claim"
    assert sorted((m.arch, m.variant, m.seed) for m in fam if m.recipe == "B3") == [
        (a, v, k) for a in ("ResNet", "ViT") for v in ("none", "standard") for k in range(S.seeds)], \
        "the architecture factor: every seed of both"
    b2 = {s for a, specs in rrc.beta_specs(B).items() if a != 1 for s in specs}
    assert {m.spec for m in fam if m.recipe == "B2"} == b2 and len(b2) == 2 * S.seeds, "B2's other Beta shapes"
    runs = {(g, r) for g in rrc.AUGERINO_GROUPS for r in rrc.group_regs(B, g)}
    assert sorted((m.spec, m.seed) for m in fam if m.recipe == "B6") == sorted(
        (run, k) for run in runs for k in range(min(S.seeds, B.augerino_seeds))), "every Augerino run B6 makes"
    new = [m.spec for m in fam if m.variant in ("rotation", "brightness")]
    assert len(new) == 2 * S.seeds and {s.augment for s in new} == {"random_op"}
    assert all(s.replace(augment="fixed_size_center_crop", augment_params={"size": B.size}) in b1 for s in new), \
        "the same recipe as B1's model without augmentation, only the augmentation differs"
    assert len({m.name for m in fam}) == len(fam)


def test_the_models_table_fits_a_page_one_row_per_model_over_its_seeds():
    fam = G.models(G.settings("cpu"))
    t = G.models_table(fam)
    assert list(t.columns) == ["seeds", "recipe", "training"]
    assert sum(len(s.split(", ")) for s in t.seeds) == len(fam) and len(t) < len(fam)
    assert t.loc["none", "seeds"] == "0, 1, 2" and t.loc["ViT none", "recipe"] == "B3"
    assert max(len(" ".join(map(str, (i, *row)))) for i, row in t.iterrows()) <= 100


def test_the_cpu_profile_has_the_seeds_the_training_claims_need():
    assert G.settings("cpu").seeds >= R.N_MIN
    assert grounding.settings("cpu").seeds >= R.N_MIN, "B3 trains the ResNet and ViT seeds S1's architecture reads"


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_each_seed_records_what_its_models_cost_and_the_claims_on_it(monkeypatch):
    S = G.settings("cpu")
    fam = G.models(S)
    nets = {}
    for m in fam:
        nets[m] = nn.Linear(1, 1)
        nets[m].zoo_info = {"seconds": 1.0 + m.seed}
    seconds = G.seed_seconds(nets)
    per_seed = sum(G.seed_claims_read(m) and m.seed == 0 for m in fam)  # the models claims 1 and 5 compare
    assert seconds == [per_seed * (1.0 + k) for k in range(S.seeds)] and per_seed == 9
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), R.demo_table(), seconds)
    rec = run.replicate_costs["seeds"]
    assert rec["seconds"] == seconds and rec["claims"] == list(R.SEED_CLAIMS)
    for cid in R.SEED_CLAIMS:  # every part of these claims rests on one value per seed
        assert {p["n"] for p in run.claims[cid]["evidence"]["parts"].values()} == {rec["n"]}
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), R.demo_table())
    assert not run.replicate_costs  # no seconds given: nothing to record


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_the_data_factor_compares_b1s_recipe_at_two_variations(profile):
    """Claim 5's data factor: B7's models at variation 0 against B1's at variation 1, the same recipe otherwise."""
    S = G.settings(profile)
    B = rrc.settings(profile)
    b7 = [m for m in G.models(S) if m.recipe == "B7"]
    assert sorted({m.variant for m in b7}) == ["none", "standard"]
    for m in b7:
        assert m.spec.data_options == (("variation", 0.0),)
        assert m.spec.replace(data_options=()) == rrc.spec(B, G.B1_METHODS[m.variant], m.seed)


@pytest.mark.parametrize("profile, variants, models", [("smoke", 27, 27), ("cpu", 28, 68)])
def test_the_variants_are_models_other_chapters_train(profile, variants, models):
    """Every zoo model S1 loads but its rotation, brightness and untrained ones is one that B1, B2, B3 or B7 lists
    (their training phase trains it), B6 makes the Augerino runs and D2 its crop family: the many variants cost S1
    no training."""
    from invlib import papers

    S = G.settings(profile)
    fam = G.models(S)
    others = {s for ch in ("b1_rrc_decomposition", "b2_scale_distribution", "b3_invariance_vs_magnitude",
                           "b7_variation_in_the_data") for s in papers.zoo_specs(ch, profile)}
    own = [m for m in fam if m.variant in ("rotation", "brightness", "untrained")]
    specs = G.s1_zoo_specs(profile)
    assert len(specs) == len(fam) - sum(m.recipe in ("B6", "D2") for m in fam)
    D = cropping.settings(profile)
    crops = [m for m in fam if m.recipe == "D2"]
    assert sorted({m.spec for m in crops}) == sorted(cropping.labels(D)) and {m.seed for m in crops} == set(
        range(min(S.crop_seeds, D.seeds))), "D2's family: every model D2 trains, at its first crop_seeds seeds"
    assert all(G.sweep_only(m) for m in crops)
    assert set(specs) - others == {m.spec for m in own}
    trained = [m for m in fam if m.variant != "untrained"]
    assert len({(m.variant, m.recipe, m.arch, m.variation) for m in trained}) == variants
    assert len(trained) == models


def _loaded_specs(monkeypatch, S) -> list:
    """The zoo specs that :func:`G.train` asks the zoo for (nothing is trained or read: zoo.get records them)."""
    asked = []

    def get(entry, profile=None, progress=None, retrain=False, root=None):
        asked.append(zoo._as_spec(entry, profile, root))
        return nn.Linear(1, 1)

    monkeypatch.setattr(zoo, "get", get)
    monkeypatch.setattr(rrc, "augerino_model", lambda *a, **k: (SimpleNamespace(trunk=nn.Linear(1, 1)), {}))
    monkeypatch.setattr(cropping, "train", lambda D, _train: [SimpleNamespace(variant=label, seed=k, model=nn.Linear(
        1, 1)) for label in cropping.labels(D) for k in range(D.seeds)])
    G.train(S)
    return asked


@pytest.mark.parametrize("profile, params", [("smoke", {}), ("cpu", {}), ("cpu", dict(seeds=2, variation=False)),
                                             ("cpu", dict(architectures=False, augerino=False))])
def test_zoo_specs_are_the_specs_the_run_loads(monkeypatch, profile, params):
    specs = G.s1_zoo_specs(profile, **params)
    S = G.settings(profile, **params)
    asked = _loaded_specs(monkeypatch, S)
    assert set(specs) == set(asked) and len(set(specs)) == len(specs)
    fam = G.models(S)
    assert len(specs) == len([m for m in fam if m.recipe not in ("B6", "D2")]), \
        "every model but B6's Augerino and D2's crop family is a zoo model"
    b3 = grounding.settings(profile)
    assert {s for s in specs if s.arch == "small_vit_p14_cls"} == (
        {zoo.spec(f"small_vit_p14_cls/{v}", zoo.chapter_profile(b3), seed=k) for k in range(S.seeds)
         for v in ("none", "standard")} if S.architectures else set())
    # B3's models of every seed S1 reads are the ones chapter B3 lists (its training phase trains them once)
    b3_specs = set(grounding.b3_zoo_specs(profile, seeds=max(S.seeds, b3.seeds)))
    assert {zoo.spec(m.spec[4:], zoo.chapter_profile(b3), seed=m.seed) for m in fam if m.recipe == "B3"} <= b3_specs


def test_d2s_models_are_measured_as_their_classifiers_at_d2s_side(monkeypatch):
    """S1 reads D2's trained family (chapter D2's cache) and measures each model's classifier, the trunk of a model
    with learned crops, at the side D2 trained on, in the precision it trained in."""
    from invlib.learned import instaaug

    S = G.settings("smoke", augerino=False, variation=False, architectures=False)
    D = G._d2(S)
    trunk = models.create("small_resnet18_s4", num_classes=10, img_size=56, seed=0)
    insta = models.mark_precision(instaaug.instaaug(trunk, instaaug.UniformRanges(("rotate",))), "bf16")
    plain = models.create("small_resnet18_s4", num_classes=10, img_size=56, seed=1)
    monkeypatch.setattr(zoo, "train_many", lambda specs, progress=True: [nn.Linear(1, 1) for _ in specs])
    seen = []
    monkeypatch.setattr(cropping, "train", lambda D_, _train: seen.append(D_) or [
        SimpleNamespace(variant=label, seed=0, model=insta if label == "instaaug" else plain)
        for label in cropping.labels(D_)])
    nets = G.train(S)
    assert seen == [D] and D.seeds == 1
    crops = {m.spec: net for m, net in nets.items() if m.recipe == "D2"}
    assert crops["instaaug"] is trunk and models.precision(trunk) == "bf16" and trunk.input_side == D.size == 56
    assert crops["none"] is plain and models.precision(plain) == "float32"
    table = G.models_table(list(nets))
    assert table.loc["crops instaaug", "training"] == "instaaug, D2's recipe"


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
    t = G.measure(S, {G.Model("none", 0): _Net(standardise).eval()}, sets)
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


def _own_pass(model, x: torch.Tensor, grid: str | None, level: int, seed: int = 0) -> torch.Tensor:
    """The predictions of the pass the chapter ran for accuracy under a transformation before it read the sweep's
    (B's grid at ``level`` on each batch of 128, a generator per batch, channels-last)."""
    gen = lambda k: torch.Generator().manual_seed(seed * 1000 + k)
    tf = None if grid is None else (lambda b, k: similarity.transform_level(grid, b, level, gen(k)))
    return models.batched(lambda b: model(b).argmax(1), x, device="cpu", transform=tf, transform_device="cpu")


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
@pytest.mark.parametrize("arch", ["small_resnet18_s4", "small_vit_p14_cls"])
def test_accuracy_under_t_from_the_sweeps_passes_equals_a_pass_of_its_own(arch):
    """The sweep's forward passes give every image the prediction a separate pass gives it (the grids draw
    nothing), and B's measures are those of the sweep on the embedding alone."""
    net = models.create(arch, num_classes=10, img_size=56, seed=0).eval()
    ds = G.scenes(G.settings("smoke"), "test", 96)
    x, grids, levels = ds.images.float() / 255, [G.TRANSFORMS[t]["b"] for t in G.TRANSFORMS], [1, 5, 9]
    with torch.no_grad():  # a head on the standardised embedding: predictions spread over the classes, with
        z = similarity.embedding(net)(x)  # near-ties among them (an untrained head picks one or two classes)
        head = net.get_classifier()
        w = torch.randn(10, z.shape[1], generator=torch.Generator().manual_seed(0))
        head.weight.copy_(w / z.std(0).clamp_min(1e-3))
        head.bias.copy_(-head.weight @ z.mean(0))
    sweep, preds = G.sweep_predictions(net, x, grids, levels, seed=0)
    assert list(preds) == [(None, 0)] + [(g, lv) for g in grids for lv in levels]
    assert len(preds[None, 0].unique()) >= 6, "predictions spread over the classes: the comparison can fail"
    as_before = copy.deepcopy(net).to(memory_format=torch.channels_last)  # A's probe had made it so (probes.Backbone)
    for (grid, level), p in preds.items():
        assert torch.equal(p, _own_pass(net, x, grid, level)), (grid, level)
        assert torch.equal(p, _own_pass(as_before, x, grid, level)), (grid, level)
    alone = pd.DataFrame(similarity.sweep({"m": similarity.embedding(net)}, x, grids, levels=levels, seed=0))
    pd.testing.assert_frame_equal(sweep, alone)
    with pytest.raises(ValueError, match="levels must be > 0"):
        G.sweep_predictions(net, x, grids, [0, 1])


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_untrained_models_and_d2s_are_measured_by_the_sweep_only():
    S = G.settings("smoke", transforms=("brightness",), n_probe=16, n_pairs=16, n_fit=16, n_eval=16, map_epochs=1,
                   progress=False)
    net = models.create("small_resnet18_s4", num_classes=10, img_size=56, seed=0).eval()
    crops = G.Model(G.crop_variant("instaaug"), 0, recipe="D2")
    t = G.measure(S, {G.Model("none", 0): copy.deepcopy(net), G.Model("untrained", 0): copy.deepcopy(net),
                      crops: net})  # A's probe makes its model channels-last: a copy each
    w = G.wide(t, "brightness")
    for only in ("untrained 0", crops.name):
        assert w.loc["none 0"].notna().all() and set(w.columns[w.loc[only].notna()]) == {
            "accuracy", "b_invariance", "b_alignment"}
        assert (w.loc["none 0", ["accuracy", "b_invariance"]] == w.loc[only, ["accuracy", "b_invariance"]]).all()


def test_agreement_is_oriented_and_sources_name_the_largest_factor():
    t = R.demo_table()
    agree = G.agreement(t, "zoom", R.trained(t))
    pair = agree[(agree["a"] == "accuracy") & (agree["b"] == "a_probe")].iloc[0]
    assert pair["rho"] == pytest.approx(1.0) and pair["n"] == 28, "A's accuracy falls as invariance rises: agree"
    assert "untrained B1 ResNet 0" not in R.trained(t)
    assert list(agree.columns) == ["transform", "a", "b", "rho", "n"]
    src = G.sources(t, transforms=["zoom"])
    assert src.loc["zoom", "largest"] == "augmentation" and src.loc["zoom", "augmentation"] > 0


# ----------------------------------------------------------------------------- the claims' tests
def two_measures(acc, inv, variant=None, transform="zoom") -> pd.DataFrame:
    """A table of two measures of models ``i`` (accuracy ``acc[i]``, B's invariance ``inv[i]``), model ``i`` a seed
    of variant ``variant[i]`` (default: every model its own variant)."""
    variant = range(len(acc)) if variant is None else variant
    return pd.DataFrame([dict(model=f"m{i}", variant=f"v{v}", seed=i, arch="ResNet", variation=1.0, recipe="B1",
                              transform=transform, measure=m, value=float(x))
                         for i, (a, b, v) in enumerate(zip(acc, inv, variant))
                         for m, x in (("accuracy", a), ("b_invariance", b))])


def agreement_verdict(t: pd.DataFrame, transforms=("zoom",)):
    S = G.settings("smoke", transforms=tuple(transforms))
    ev = decide(PROTOCOL["s1/accuracy_tracks_invariance"],
                R.agreement_effects(t, S, "accuracy", "b_invariance", R.trained(t)))
    return ev.verdict, ev


@pytest.mark.parametrize("noise, n, expected", [
    (0.1, 30, "reproduced"),  # rho 0.985 [0.945, 0.994]
    (-0.1, 30, "not reproduced"),  # the measures rank the models in opposite orders
    (1.0, 30, "inconclusive at this budget"),  # rho 0.51 [0.22, 0.71]: 30 variants cannot place it
    (1.0, 400, "reproduced"),  # the same noise, 400 variants: 0.72 [0.66, 0.77]
    (2.0, 400, "inconclusive at this budget"),  # 0.50 [0.42, 0.57]: on the boundary
    (3.0, 400, "not reproduced"),  # 0.39 [0.30, 0.46]: positive, but weaker than "alike"
])
@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_rank_agreement_verdicts_on_both_sides_of_the_boundary(noise, n, expected):
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    y = x + abs(noise) * rng.normal(size=n)
    verdict, ev = agreement_verdict(two_measures(x, y if noise > 0 else -y))
    assert verdict == expected, ev.text()


def test_seed_mates_count_once():
    """Six variants of four seeds each, ranked alike by both measures: 24 models, but only 6 independent
    variants, too few for the interval; the same 24 as 24 variants would pass."""
    x = np.repeat(np.arange(6.0), 4) + np.tile(np.arange(4) * 0.01, 6)
    verdict, ev = agreement_verdict(two_measures(x, x, variant=np.repeat(np.arange(6), 4)))
    assert verdict == "inconclusive at this budget" and ev.n == 6
    assert agreement_verdict(two_measures(x, x))[0] == "reproduced"


def test_one_interval_covers_every_transformation():
    """One decision a claim at 95 %: rho within each transformation, averaged; a transformation the run does not
    measure is no part of it, and one that ranks the models the other way pulls the average down."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    t = pd.concat([two_measures(x, x + 0.1 * rng.normal(size=40), transform=tr) for tr in ("zoom", "rotation")])
    verdict, ev = agreement_verdict(t, ("zoom", "rotation", "translation"))  # translation: not measured
    assert verdict == "reproduced" and not ev.parts and ev.level == pytest.approx(0.95) and ev.n == 40
    t.loc[(t["transform"] == "rotation") & (t["measure"] == "accuracy"), "value"] *= -1
    verdict, ev = agreement_verdict(t, ("zoom", "rotation"))
    assert verdict == "not reproduced" and abs(ev.estimate) < 0.1, ev.text()


def test_the_transformations_are_not_pooled_into_one_ranking():
    """Two measures that both read every model as more invariant to rotation than to zoom, but rank the models at
    random within each: pooling the raw values would find rho near 0.75; within the transformations there is none."""
    rng = np.random.default_rng(2)
    t = pd.concat([two_measures(rng.normal(size=40) + level, rng.normal(size=40) + level, transform=tr)
                   for tr, level in (("zoom", 0.0), ("rotation", 10.0))])
    pooled = rank_correlation(t.loc[t["measure"] == "accuracy", "value"].values,
                                t.loc[t["measure"] == "b_invariance", "value"].values)[0]
    verdict, ev = agreement_verdict(t, ("zoom", "rotation"))
    assert pooled > 0.7 and verdict == "not reproduced" and abs(ev.estimate) < 0.3, ev.text()


def test_a_transformation_where_a_measure_is_constant_ranks_nothing():
    rng = np.random.default_rng(3)
    x = rng.normal(size=30)
    t = pd.concat([two_measures(x, x + 0.1 * rng.normal(size=30), transform="zoom"),
                   two_measures(np.full(30, 50.0), rng.normal(size=30), transform="rotation")])
    assert G.ranked_transforms(t, "accuracy", "b_invariance", R.trained(t)) == ["zoom"]
    assert agreement_verdict(t, ("zoom", "rotation"))[0] == "reproduced", "rotation does not dilute zoom's rho"
    flat = two_measures(np.full(30, 50.0), x, transform="zoom")
    verdict, ev = agreement_verdict(flat)
    assert verdict == "inconclusive at this budget" and not np.isfinite(ev.estimate)


def raised(t: pd.DataFrame, gains, measure="b_invariance") -> pd.DataFrame:
    """``t`` with the scale models' ``measure`` set to the none models' plus ``gains`` (one per seed)."""
    t = t.copy()
    pick = lambda v, k: (t["variant"] == v) & (t["recipe"] == "B1") & (t["seed"] == k) & (t["measure"] == measure)
    for k, g in enumerate(gains):
        t.loc[pick("scale", k), "value"] = float(t.loc[pick("none", k), "value"].iloc[0]) + g
    return t


def raises(t: pd.DataFrame, S):
    return decide(PROTOCOL["s1/augmentation_raises_invariance"], R.raises_effects(t, S))


def test_augmentation_raises_is_decided_per_measure_over_seeds():
    S = G.settings("smoke", transforms=("zoom",))
    t = R.demo_table()
    ev = raises(t, S)
    assert ev.verdict == "reproduced" and len(ev.parts) == 5 and {p.n for _, p in ev.parts} == {3}
    near = raises(raised(t, [0.04, 0.07, 0.06]), S)  # B's invariance: a mean gain of 0.057 within its noise of 0.05
    assert near.verdict == "inconclusive at this budget"
    assert dict(near.parts)["B invariance"].verdict == "inconclusive at this budget"
    clear = raises(raised(t, [0.1, 0.11, 0.12]), S)  # steady over the seeds, and above 0.05
    assert clear.verdict == "reproduced"
    small = raises(raised(t, [0.02, 0.025, 0.03]), S)  # steady too, but below 0.05: an 'unchanged' invariance
    assert small.verdict == "partly" and dict(small.parts)["B invariance"].verdict == "not reproduced"
    two = raises(R.demo_table(seeds=2), S)
    assert two.verdict == "inconclusive at this budget" and "needs >= 3 seeds" in two.parts[0][1].text()


def test_each_measure_s_gain_is_averaged_over_its_transformations_seed_by_seed():
    S = G.settings("smoke", transforms=("zoom", "rotation"))
    t = R.demo_table(transforms=("zoom", "rotation"))
    pick = lambda v, k, tr: ((t["variant"] == v) & (t["recipe"] == "B1") & (t["seed"] == k)  # noqa: E731
                             & (t["measure"] == "b_invariance") & (t["transform"] == tr))
    for k, (zoom, rot) in enumerate([(0.3, -0.2), (0.25, -0.2), (0.35, -0.25)]):
        base = {tr: float(t.loc[pick("none", k, tr), "value"].iloc[0]) for tr in ("zoom", "rotation")}
        t.loc[pick("scale", k, "zoom"), "value"] = base["zoom"] + zoom
        t.loc[pick("rotation", k, "rotation"), "value"] = base["rotation"] + rot
    gains = R.raises_effects(t, S)["B invariance"]
    assert gains == pytest.approx([0.05, 0.025, 0.05])  # per seed: (zoom + rotation) / 2
    assert dict(raises(t, S).parts)["B invariance"].verdict == "inconclusive at this budget"


@pytest.mark.parametrize("measure, gains, expected", [
    ("accuracy", [0.5, 0.6, 0.7], "not reproduced"),  # points: under one
    ("accuracy", [2.0, 2.5, 3.0], "reproduced"),
    ("a_probe", [-0.005, -0.004, -0.006], "not reproduced"),  # a fraction, lower is more invariant: under 0.01
    ("a_probe", [-0.05, -0.04, -0.06], "reproduced"),
    ("c_inv_l2", [-0.02, -0.025, -0.03], "not reproduced"),  # lower is more invariant: under 0.05
    ("c_inv_l2", [-0.2, -0.25, -0.3], "reproduced"),
])
def test_each_measure_is_raised_by_its_own_smallest_effect(measure, gains, expected):
    S = G.settings("smoke", transforms=("zoom",))
    ev = raises(raised(R.demo_table(), gains, measure), S)
    assert dict(ev.parts)[R.SHORT[measure]].verdict == expected


def test_augmentation_moves_the_most_by_more_than_a_tie():
    claim = PROTOCOL["s1/augmentation_moves_invariance_most"]
    ahead = {f"vs {f}": [0.2, 0.25, 0.3] for f in ("data", "architecture", "training")}
    assert decide(claim, ahead).verdict == "reproduced"
    tie = {f"vs {f}": [0.02, 0.025, 0.03] for f in ("data", "architecture", "training")}
    assert decide(claim, tie).verdict == "not reproduced"  # ahead, by a tie


def test_augmentation_s_lead_is_averaged_over_the_transformations_in_absolute_sizes():
    S = G.settings("smoke", transforms=("zoom", "rotation"))
    t = R.demo_table(transforms=("zoom", "rotation"))
    ch = R.factor_changes(t, S)
    leads = R.most_effects(t, S)
    want = ((ch["augmentation"].abs() - ch["training"].abs()).mean(axis=1)).values
    assert leads["vs training"] == pytest.approx(want) and len(want) == 3
    down = t.copy()  # the untrained models far more invariant: training moves invariance down, by more
    down.loc[(down["variant"] == "untrained") & (down["measure"] == "b_invariance"), "value"] = 5.0
    assert (R.most_effects(down, S)["vs training"] < -1).all()


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_every_claim_is_declared_with_a_smallest_effect_and_recorded_by_the_report():
    for claim in PROTOCOL:
        assert claim.paper == "(no paper tests this)"
        for name, part in claim.parts.items():
            assert part.smallest > 0 and len(part.reason) > 40, (claim.id, name)
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), R.demo_table())
    assert list(run.claims) == [c.id for c in PROTOCOL.of_chapter("s1_measures_agree")]
    assert all(run.claims[c.id]["criterion"] == c.criterion() for c in PROTOCOL)


def test_an_agreement_claim_counts_the_variants_and_models_measured_by_both_measures():
    """D2's models, measured by the sweep only, add variants to the claim on the accuracy and B's invariance and
    none to the claims that read A's probe or C's maps."""
    t = R.demo_table()
    crops = t[t["model"].str.startswith("none B1 ResNet")].assign(
        model=lambda d: d["model"].str.replace("none B1", "crops instaaug D2"), variant=G.crop_variant("instaaug"),
        recipe="D2")
    t = pd.concat([t, crops[crops["measure"].isin(("accuracy", "b_invariance", "b_alignment"))]], ignore_index=True)
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), t)
    assert "over 11 variants (31 models)" in run.claims["s1/accuracy_tracks_invariance"]["ours"]
    assert "over 10 variants (28 models)" in run.claims["s1/b_and_c_rank_alike"]["ours"]


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_the_claims_fail_when_augmentation_lowers_invariance():
    t = R.demo_table()
    aug = t["variant"] == "scale"
    t.loc[aug & (t["measure"] == "b_invariance"), "value"] = -0.5  # the scale models now the least invariant
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), t)
    assert run.claims["s1/augmentation_raises_invariance"]["verdict"] == "partly"  # 4 of 5 measures still rise
    moved = run.claims["s1/augmentation_moves_invariance_most"]["evidence"]["parts"]
    assert moved["vs training"]["verdict"] == "reproduced"  # moved, downwards
    t.loc[aug & t["measure"].isin(["accuracy", "c_inv_acc"]), "value"] = 0.0
    t.loc[aug & t["measure"].isin(["a_probe", "c_inv_l2"]), "value"] = 5.0
    run = results.Run("smoke", name="demo")
    R.report(run, G.settings("smoke", transforms=("zoom",)), t)
    assert run.claims["s1/augmentation_raises_invariance"]["verdict"] == "not reproduced"


@pytest.mark.parametrize("verdict, says", [
    ("reproduced", "the cheap measure can stand for the expensive one"),
    ("not reproduced", "No: report both"),
    ("inconclusive at this budget", "Not decided: "),
])
def test_each_answer_follows_its_verdict(verdict, says):
    """The last section's answers follow the verdicts; an undecided one says why, never "no"."""
    t = R.demo_table()
    ev = dict(verdict=verdict, estimate=0.3, lo=-0.2, hi=0.8, n=10, n_min=8, unit="model", direction="greater",
              boundary=0.5, level=0.95)
    claims = {cid: dict(id=cid, verdict=verdict, evidence=ev) for cid in R.PAIRS}
    facts = R.answers(claims, t, G.sources(t, "b_invariance", ["zoom"]))
    assert says in facts["s1_answer_b_and_c_rank_alike"]
    assert facts["s1_rhos_b_and_c_rank_alike"].startswith("+0.3 averaged over zoom (95 % interval -0.2 to +0.8")
    if verdict == "inconclusive at this budget":
        answer = facts["s1_answer_accuracy_tracks_invariance"]
        assert "did not" not in answer and not answer.startswith("No:") and "-0.20 to +0.80" in answer, answer
        assert facts["s1_decided"] == "none of the three questions"


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_an_undecided_seed_claim_says_it_needs_seeds():
    run = results.Run("smoke", name="demo")
    _, _, facts = R.report(run, G.settings("smoke", transforms=("zoom",)), R.demo_table(seeds=1))
    assert "with 1 seed per variant there is no spread" in facts["s1_answer_augmentation_raises_invariance"]
    assert "[" not in " ".join(facts.values()), "no bracketed interval in the prose"


def test_random_op_models_are_zoo_specs_of_their_own():
    B = rrc.settings("smoke")
    rot = G._b1_spec(B, "rotation", 0, 45.0, (0.5, 2.0))
    assert zoo.path(rot) != zoo.path(G._b1_spec(B, "brightness", 0, 45.0, (0.5, 2.0)))
    assert zoo.path(rot) != zoo.path(rrc.spec(B, rrc.NONE, 0))


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_every_fact_is_text_for_the_prose():
    """The chapter quotes every fact with {glue:md}, which takes text only (a number fails the site build)."""
    _, _, facts = R.report(results.Run("smoke", name="demo"), G.settings("smoke", transforms=("zoom",)),
                           R.demo_table())
    assert facts and all(isinstance(v, str) for v in facts.values()), \
        {k: type(v).__name__ for k, v in facts.items() if not isinstance(v, str)}
