"""invlib.papers.c.equivariance: paper C's settings and family, the measurement of one network (networks invariant and
equivariant by construction), distances between networks, the fine-tuning loss, the summaries and the claims'
verdicts from known numbers."""

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from invlib import models, results, zoo
from invlib import transform_types as tt
from invlib.papers.c import equivariance as E
from invlib.papers.c import equivariance_reports as R
from invlib.papers.c.protocol import PROTOCOL

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Measurements and distances are cached on disk by content: each test computes its own."""
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))


@pytest.fixture(scope="module")
def tiny():
    """Settings of a tiny measurement and its images (real Fashion-MNIST, coloured): ``(S, fit_ds, eval_ds)``."""
    S = E.settings("smoke", n_fit=128, n_eval=64, map_epochs=10)
    return (S, *E.images(S))


def seeded(seed):
    return torch.Generator().manual_seed(seed)


class Linear2(nn.Module):
    """``fc(sigmoid(proj(x)))`` (dense positive features) with an input symmetrisation: ``mode="sym"`` averages the
    image with its mirror image first (exactly invariant to a horizontal flip), ``mode="swap"`` concatenates the
    features of the image and of its mirror image (a horizontal flip swaps the two halves: equivariant, not
    invariant; a linear map, a permutation, undoes it)."""

    def __init__(self, mode: str, k: int = 16, scale: float = 1 / 28):
        super().__init__()
        g = seeded(0)
        self.mode = mode
        self.proj = nn.Linear(3 * 28 * 28, k)
        with torch.no_grad():
            self.proj.weight.copy_(torch.randn(k, 3 * 28 * 28, generator=g) * scale)
            self.proj.bias.zero_()
        self.fc = nn.Linear(2 * k if mode == "swap" else k, 10)

    def forward(self, x):
        if self.mode == "sym":
            return self.fc(torch.sigmoid(self.proj(((x + x.flip(-1)) / 2).flatten(1))))
        f = lambda z: torch.sigmoid(self.proj(z.flatten(1)))
        return self.fc(torch.cat([f(x), f(x.flip(-1))], 1))


def fit_head(net, ds):
    """A ridge-regression classifier on the network's (standardised) features: accuracy well above chance, so
    that the accuracies of a measurement compare predictions rather than a constant class."""
    net.eval()
    with torch.no_grad():
        r = models.features(net, ds.float(), ["pre_logits"])["pre_logits"]
        mu, sd = r.mean(0), r.std(0) + 1e-6
        z = (r - mu) / sd
        y = F.one_hot(ds.labels, 10).float()
        w = torch.linalg.solve(z.T @ z + torch.eye(z.shape[1]), z.T @ (y - y.mean(0)))
        net.fc.weight.copy_((w / sd[:, None]).T)
        net.fc.bias.copy_(y.mean(0) - (mu / sd) @ w)
    return net


# ------------------------------------------------------------------------------ settings and the family
def test_settings_profiles_and_bad_inputs():
    S = E.settings("cpu")
    assert (S.dataset, S.arch, S.layer, S.grid, S.magnitudes, S.baselines) == (
        "fashion_mnist_color", "small_resnet18", "pre_logits", "small", 1, 4)
    assert E.settings("smoke").arch == E.settings("gpu").arch == "small_resnet18"  # the stride-2 stem: rejected
    P = E.settings("paper")
    assert (P.arch, P.layer, P.grid, P.magnitudes, P.baselines, P.size) == ("tv/alexnet", "classifier.5", "paper",
                                                                            4, 3, 227)
    assert P.ft_lambda1 == 50 / 4096 and P.ft_lambda2 == 25 / 4096 and P.ft_lambda3 == 0.3
    assert E.settings("cpu", n_fit=10).n_fit == 10 and E.settings("cpu", n_fit=None).n_fit == S.n_fit
    for field in ("types", "wide_types", "cross_types", "ft_types"):
        with pytest.raises(ValueError, match=r"Unknown transformation type 'rotate'. Did you mean 'rotation'\? "
                                             r"Valid transformation types: blur, color_jitter, crop, elastic"):
            E.settings("smoke", **{field: ("noise", "rotate")})
    with pytest.raises(ValueError, match="Valid grids: paper, small"):
        E.settings("smoke", grid="medium")
    with pytest.raises(ValueError, match="magnitudes must be 1..4"):
        E.settings("smoke", magnitudes=5)
    with pytest.raises(ValueError, match="baselines, n_fit"):
        E.settings("smoke", n_fit=0)
    with pytest.raises(ValueError, match="Valid profiles"):
        E.settings("laptop")


def test_the_chapters_recipe_parameters_reach_every_spec_and_train_through_the_recipe(monkeypatch):
    S = E.settings("smoke", n_train=500, epochs=2, arch="small_resnet50", optimizer="adamw", device="cpu")
    assert isinstance(S, zoo.Recipe)
    for m in E.family_members(S):
        s = E.spec(S, m)
        assert (s.n_train, s.epochs, s.arch, s.optimizer, s.device, s.n_test) == (500, 2, "small_resnet50", "adamw",
                                                                                  "cpu", E.ZOO_TEST)
    seen = []
    monkeypatch.setattr(zoo.Recipe, "train_family", lambda self, specs: seen.append(specs) or
                        {k: [f"model of {s.name}" for s in v] for k, v in specs.items()})
    members = E.family_members(S)[:2]
    assert E.train(S, members) == {m: f"model of {E.spec(S, m).name}" for m in members}
    assert seen == [{"family": [E.spec(S, m) for m in members]}]
    with pytest.raises(ValueError, match="Unknown Settings field 'epoch'. Did you mean 'epochs'"):
        E.settings("smoke", epoch=2)


def test_bad_map_loss_lists_the_valid_ones():
    with pytest.raises(ValueError, match="Valid map_loss values: ce, l2"):
        E.settings("smoke", map_loss="l1")


def test_family_of_the_cpu_profile():
    members = E.family_members(E.settings("cpu"))
    assert len(members) == 21  # 4 baselines, 9 types, a second (narrow) magnitude for eight of them
    assert members[:4] == [E.Member(None, None, k) for k in range(4)]
    assert [m.name for m in members[:4]] == ["Baseline", "Baseline 2", "Baseline 3", "Baseline 4"]
    by_kind = {}
    for m in members[4:]:
        by_kind.setdefault(m.kind, []).append(m.magnitude)
    assert list(by_kind) == list(tt.TYPES)  # every type, in the order of TYPES
    assert by_kind["rotation"] == [5.0, 20.0] and by_kind["shear"] == [5.0, 20.0]  # weakest first
    assert by_kind["crop"] == [240 / 227, 320 / 227]
    assert by_kind["elastic"] == [(5.0, 3.0), (10.0, 2.0)] and by_kind["mirror"] == ["hv"]
    assert by_kind["perspective"] == [0.025, 0.1] and by_kind["noise"] == [5.0, 20.0]
    assert by_kind["color_jitter"] == [5.0, 20.0] and by_kind["blur"] == [1.5, 3.0]
    assert len({m.name for m in members}) == 21
    assert E.strongest(members, "rotation") == E.Member("rotation", 20.0)
    with pytest.raises(ValueError, match="The family has no zoom network"):
        E.strongest(members, "zoom")
    # the paper's family: three baselines and four magnitudes of every type (three mirrors, two blurs)
    paper = E.family_members(E.settings("paper"))
    assert len(paper) == 3 + 4 * 7 + 3 + 2
    assert [m.magnitude for m in paper if m.kind == "elastic"] == [(5.0, 3.0), (5.0, 2.0), (10.0, 3.0), (10.0, 2.0)]


def test_members_names_groups_and_resize():
    assert E.Member("rotation", 20.0).name == "Rotation ±20" and E.Member("rotation", 20.0).group == "rotation"
    assert E.Member(None, None, 2).name == "Baseline 3" and E.Member(None, None).group == "baseline"
    assert E.Member("elastic", (10.0, 2.0)).name == "Elastic a<=10 s=2"
    assert E.Member("crop", 256 / 227).resize == pytest.approx(256 / 227)
    assert E.Member("rotation", 20.0).resize == 1.0 and E.Member(None, None).resize == 1.0


def test_spec_of_each_member_builds_its_training_augmentation():
    S = E.settings("cpu")
    s = E.spec(S, E.Member("elastic", (10.0, 2.0)))
    assert s.name == "small_resnet18/tm_elastic" and dict(s.augment_params) == {"magnitude": 10.0, "sigma": 2.0}
    assert zoo.augmentation(s.augment, **dict(s.augment_params)) == tt.TypeAugment("elastic", 10.0, 2.0)
    base = E.spec(S, E.Member(None, None, 1))
    assert base.augment == "none" and base.seed == 1 and base.augment_params == ()
    assert (base.arch, base.dataset, base.n_train, base.epochs, base.img_size) == (
        S.arch, S.dataset, S.n_train, S.epochs, S.size)
    for m in E.family_members(S)[S.baselines:]:
        sp = E.spec(S, m)
        aug = zoo.augmentation(sp.augment, **dict(sp.augment_params))
        assert sp.augment == f"tm_{m.kind}" and aug.kind == m.kind
        assert aug.magnitude == (m.magnitude[0] if m.kind == "elastic" else m.magnitude)
    # every network has its own zoo entry
    assert len({zoo.path(E.spec(S, m)) for m in E.family_members(S)}) == len(E.family_members(S)) == 21


def _parameters(chapter: str) -> dict:
    """The parameters cell of a chapter of paper C (its plain values, ``profile`` left out)."""
    text = next((Path(__file__).parents[1] / "notebooks").glob(f"{chapter}_*.py")).read_text()
    cell = text.split('# %% tags=["parameters"]\n', 1)[1].split("\n# %%", 1)[0]
    values = {}
    exec(cell, {}, values)
    values.pop("profile")
    return values


@pytest.mark.parametrize("chapter", ["c1", "c2", "c3"])
@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_c_zoo_specs_are_the_family_each_chapter_trains(chapter, profile, monkeypatch):
    """What the book's training phase trains for C1-C3 is exactly what their run passes to the zoo: the family of
    the settings their parameters cells make (defaults, and with parameters changed), nothing else."""
    params = _parameters(chapter)
    trained = []
    monkeypatch.setattr(zoo.Recipe, "train_family", lambda self, specs: trained.extend(specs["family"]) or
                        {k: [None] * len(v) for k, v in specs.items()})
    for changes in ({}, dict(types=["noise", "crop"], n_train=100, seed=None)):
        S = E.settings(profile, **dict(params, **changes))
        trained.clear()
        E.train(S)
        specs = E.c_zoo_specs(profile, **dict(params, **changes))
        assert specs == trained == [E.spec(S, m) for m in E.family_members(S)]
        assert all(s.arch == S.arch and s.n_train == S.n_train and s.epochs == S.epochs for s in specs)
    assert len(E.c_zoo_specs(profile)) == len(E.family_members(E.settings(profile)))


# ------------------------------------------------------------------------------ measuring one network
@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_reference_features_are_kept_on_disk_for_the_next_chapter(tiny, tmp_path, monkeypatch):
    """C1 writes each network's reference features; C2 and C3 (other processes: the memory cache is empty) load
    them. Keyed by the network (its weights and its modules: the stride-2 stem from the same seed differs), the
    images, the layer and the resize; features above REFERENCE_DISK_MAX stay in memory only."""
    from invlib import utils

    S, fit_ds, eval_ds = tiny
    folder = tmp_path / "cache" / "equivariance"
    net = models.create("small_resnet18", seed=0).eval()
    first = E.reference_features(net, eval_ds, "pre_logits")
    assert len(list(folder.glob("reference-*.pt"))) == 1
    with monkeypatch.context() as mp:
        mp.setattr(utils, "_MEMORY", {})  # a new process
        mp.setattr(E, "layer_features", lambda *a, **k: pytest.fail("recomputed instead of loaded"))
        again = E.reference_features(net, eval_ds, "pre_logits")
    assert torch.equal(first, again) and not again.is_inference()
    for other in [(models.create("small_resnet18_s2", seed=0).eval(), eval_ds, "pre_logits", 1.0),
                  (net, fit_ds, "pre_logits", 1.0), (net, eval_ds, "layer4", 1.0), (net, eval_ds, "pre_logits", 1.2)]:
        E.reference_features(*other)
    assert len(list(folder.glob("reference-*.pt"))) == 5
    monkeypatch.setattr(E, "REFERENCE_DISK_MAX", 0)
    big = E.reference_features(net, eval_ds, "layer3")  # too large to write: computed and kept in memory
    assert len(list(folder.glob("reference-*.pt"))) == 5 and big.shape[:2] == (len(eval_ds), 64)


def test_a_network_invariant_by_construction_scores_its_clean_accuracy(tiny):
    S, fit_ds, eval_ds = tiny
    net = fit_head(Linear2("sym"), fit_ds)
    t = E.measure_network(net, "mirror", ["h", "v"], S, fit_ds, eval_ds, magnitude="h", name="sym")
    assert t.clean.iloc[0] > 30  # well above chance (10 %): the accuracies below compare real predictions
    h, v = t.iloc[0], t.iloc[1]
    assert h.inv_acc == h.clean and h.inv_l2 == pytest.approx(0.0, abs=1e-6)
    assert h.eq_l2 < 0.05  # the map stays near the identity
    assert v.inv_l2 > 0.1 and v.inv_acc != v.clean  # not invariant to the vertical flip
    assert t.in_range.tolist() == [True, False]
    assert t.network.tolist() == ["sym", "sym"] and t.kind.tolist() == ["mirror", "mirror"]
    assert t.label.tolist() == ["h", "v"]


class SymResNet(nn.Module):
    """The small ResNet on the average of the image and its mirror image: exactly invariant to a horizontal flip
    from the first layer on (``inner.layer4`` is a conv stage: maps per position)."""

    def __init__(self):
        super().__init__()
        self.inner = models.create("small_resnet18", seed=0)
        self.fc = self.inner.fc

    def forward(self, x):
        return self.inner((x + x.flip(-1)) / 2)


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_invariance_of_an_inner_conv_layer(tiny):
    _, fit_ds, eval_ds = tiny
    net = fit_head(SymResNet(), fit_ds)
    S = E.settings("smoke", n_fit=128, n_eval=64, map_epochs=3, layer="inner.layer4")
    t = E.measure_network(net, "mirror", ["h", "v"], S, fit_ds, eval_ds)
    assert t.clean.iloc[0] > 30
    h, v = t.iloc[0], t.iloc[1]
    assert h.inv_acc == h.clean and h.inv_l2 == 0 and h.eq_l2 < 0.05
    assert v.inv_l2 > 0.1 and v.inv_acc < v.clean
    # the classifier's input of the same network: the same clean accuracy (the rest of the network is the same)
    pre = E.measure_network(net, "mirror", ["h"], E.settings("smoke", n_fit=128, n_eval=64, map_epochs=3), fit_ds,
                            eval_ds)
    assert pre.clean.iloc[0] == h.clean and pre.inv_acc.iloc[0] == h.clean


def test_a_network_equivariant_by_construction_is_mapped_back(tiny):
    S, fit_ds, eval_ds = tiny
    net = fit_head(Linear2("swap", k=4, scale=1 / 9), fit_ds)
    t = E.measure_network(net, "mirror", ["h"], E.settings("smoke", n_fit=128, n_eval=64, map_epochs=20), fit_ds,
                          eval_ds)
    row = t.iloc[0]
    # a flip swaps the halves of the features: far from them (not invariant), but the map M_g recovers them
    assert row.inv_l2 > 0.25 and row.eq_l2 < 0.08 and row.eq_l2 < row.inv_l2 / 4
    # and with them the accuracy that the flip cost
    assert row.inv_acc < row.clean - 10 and row.eq_acc > row.inv_acc + 10 and abs(row.eq_acc - row.clean) < 8


@pytest.mark.slow  # over a second: make test runs it, make test-fast stays under 2 minutes
def test_measure_network_of_a_resnet_rows_cache_and_reference(tiny, tmp_path):
    S, fit_ds, eval_ds = tiny
    net = models.create("small_resnet18", seed=0).eval()
    t = E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds, magnitude=20.0, name="r")
    assert list(t.columns) == ["network", "kind", "value", "label", "clean", "inv_acc", "eq_acc", "inv_l2", "eq_l2",
                               "in_range", "resize"]
    assert t.label.tolist() == ["-30", "5"] and t.in_range.tolist() == [False, True]
    assert (t.inv_l2 > 0).all() and t.inv_l2.iloc[0] > t.inv_l2.iloc[1]  # 30 degrees move the features more
    assert len(list((tmp_path / "cache" / "equivariance").glob("measure-*.pt"))) == 1
    again = E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds)  # a baseline's range: none
    pd.testing.assert_frame_equal(again.drop(columns=["network", "in_range"]), t.drop(columns=["network", "in_range"]))
    assert again.in_range.tolist() == [False, False]  # the training range is applied after the cache
    assert len(list((tmp_path / "cache" / "equivariance").glob("measure-*.pt"))) == 1
    other = models.create("small_resnet18", seed=1).eval()
    E.measure_network(other, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds)
    assert len(list((tmp_path / "cache" / "equivariance").glob("measure-*.pt"))) == 2  # keyed by the weights


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_measure_network_per_image_values_behind_each_row(tiny):
    """per_image: the same table, and per value the evaluation images' correctness and distances, whose means are
    the row's numbers (the unit of an interval over images)."""
    S, fit_ds, eval_ds = tiny
    net = models.create("small_resnet18", seed=0).eval()
    t, per = E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds, per_image=True)
    pd.testing.assert_frame_equal(t, E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds))
    for row in t.itertuples():
        images = per[row.value]
        assert images["inv_correct"].shape == images["eq_l2"].shape == (len(eval_ds),)
        assert float(images["inv_correct"].float().mean() * 100) == pytest.approx(row.inv_acc)
        assert float(images["eq_correct"].float().mean() * 100) == pytest.approx(row.eq_acc)
        assert float(images["inv_l2"].mean()) == pytest.approx(row.inv_l2)
        assert float(images["eq_l2"].mean()) == pytest.approx(row.eq_l2)


@pytest.mark.slow  # over 0.75 s: make test runs it, make test-fast stays under 2 minutes
def test_measure_network_distances_only_without_the_networks_accuracy(tiny):
    """accuracy=False (a model whose classes are not the images'): the same distances, no accuracy, no per-image
    correctness, cached apart from the full measure."""
    S, fit_ds, eval_ds = tiny
    net = models.create("small_resnet18", seed=0).eval()
    full, _ = E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds, per_image=True)
    t, per = E.measure_network(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds, per_image=True, accuracy=False)
    assert t[["clean", "inv_acc", "eq_acc"]].isna().all().all() and not full[["inv_acc"]].isna().any().any()
    np.testing.assert_allclose(t[["inv_l2", "eq_l2"]].values, full[["inv_l2", "eq_l2"]].values, rtol=1e-6)
    assert set(per[5.0]) == {"inv_l2", "eq_l2"}


@pytest.mark.slow
def test_measure_layers_equal_one_layer_at_a_time_from_one_forward_pass(tiny, tmp_path, monkeypatch):
    """Several layers at once: each layer's result (and cache file) is measure_network's at that layer, and the
    images go through the network once per image set and transform, not once per layer."""
    S, fit_ds, eval_ds = tiny
    net = models.create("small_resnet18", seed=0).eval()
    passes = []
    features = E.models.features
    monkeypatch.setattr(E.models, "features", lambda m, x, layers, **k: passes.append(list(layers))
                        or features(m, x, layers, **k))
    both = E.measure_layers(net, "rotation", [-30.0, 5.0], S, fit_ds, eval_ds, ["layer2", "pre_logits"],
                            per_image=True)
    assert all(p == ["layer2", "pre_logits"] for p in passes)
    # one pass checks the layers; then the reference and two values, each on 2 fit batches and 1 eval batch of 64
    assert len(passes) == 1 + 3 * (2 + 1)
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "other"))
    for layer in ("layer2", "pre_logits"):
        one, per = E.measure_network(net, "rotation", [-30.0, 5.0], E.settings("smoke", n_fit=128, n_eval=64,
                                     map_epochs=10, layer=layer), fit_ds, eval_ds, per_image=True)
        pd.testing.assert_frame_equal(one, both[layer][0])
        assert torch.equal(per[5.0]["eq_l2"], both[layer][1][5.0]["eq_l2"])
    names = lambda d: sorted(p.name for p in (d / "equivariance").glob("measure_images-*.pt"))  # noqa: E731
    assert names(tmp_path / "cache") == names(tmp_path / "other") and len(names(tmp_path / "cache")) == 2


def test_measure_network_bad_inputs(tiny):
    S, fit_ds, eval_ds = tiny
    net = models.create("small_resnet18", seed=0).eval()
    with pytest.raises(ValueError, match=r"7.0 is not on the rotation grid: -45.0, -30.0, -25.0"):
        E.measure_network(net, "rotation", [7.0], S, fit_ds, eval_ds)
    with pytest.raises(ValueError, match=r"Model has no layer 'nope'. Probe-able layers: layer1, .*pre_logits"):
        E.measure_network(net, "rotation", [5.0], E.settings("smoke", layer="nope"), fit_ds, eval_ds)
    with pytest.raises(ValueError, match="Valid transformation types: blur"):
        E.measure_network(net, "rotate", [5.0], S, fit_ds, eval_ds)
    with pytest.raises(ValueError, match="is not on the mirror grid: "):
        E.measure_network(net, "mirror", ["x"], S, fit_ds, eval_ds)


# ------------------------------------------------------------------------------ distances between networks
@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_distances_between_real_networks(tiny):
    S = E.settings("smoke", n_fit=256, n_eval=128, map_epochs=20)
    fit_ds, eval_ds = E.images(S)
    a = models.create("small_resnet18", seed=0).eval()
    nets = {E.Member(None, None, 0): a, E.Member(None, None, 1): copy.deepcopy(a),
            E.Member("rotation", 20.0): models.create("small_resnet18", seed=1).eval()}
    d = E.distances(nets, S, fit_ds, eval_ds)
    w = d.one_way
    assert w.shape == (3, 3) and (np.diag(w) == 0).all()
    assert d.names == ["Baseline", "Baseline 2", "Rotation ±20"] and d.groups == ["baseline", "baseline", "rotation"]
    # the same weights: one fit, the same numbers each way; another seed: farther
    assert w[0, 1] == w[1, 0] and w[0, 2] == w[1, 2]
    assert w[0, 1] < 0.5 * w[0, 2] and w[0, 1] < 0.5 * w[2, 0]
    # the same through metrics.representation_distances on layer_features directly
    feats = [E.layer_features(n, torch.cat([fit_ds.images, eval_ds.images]), "pre_logits") for n in nets.values()]
    assert feats[0].shape == (384, 128) and torch.equal(feats[0], feats[1]) and not torch.equal(feats[0], feats[2])
    assert not torch.equal(feats[0], E.layer_features(a, eval_ds.images, "pre_logits"))
    assert d.per_image.shape == (3, 3, 128) and np.allclose(d.per_image.mean(-1), w)
    cached = E.distances(nets, S, fit_ds, eval_ds)
    assert np.array_equal(cached.one_way, w) and np.array_equal(cached.per_image, d.per_image)


def test_per_image_errors_are_those_the_representation_distances_average():
    """The same fits as :func:`invlib.metrics.representation_distances`, kept per image: their mean is its matrix,
    also for networks of two feature widths (one fit per width)."""
    from invlib import metrics

    g = seeded(0)
    feats = [torch.rand(90, 4, generator=g), torch.rand(90, 4, generator=g), torch.rand(90, 6, generator=g)]
    e = metrics.representation_distances(feats, 60, per_image=True, epochs=3)
    assert e.shape == (3, 3, 30) and (e[[0, 1, 2], [0, 1, 2]] == 0).all() and (e[0, 1] > 0).all()
    assert torch.equal(e.mean(-1), metrics.representation_distances(feats, 60, epochs=3))
    with pytest.raises(ValueError, match="0 < fit < N"):
        metrics.representation_distances(feats, 90, per_image=True)


@pytest.mark.parametrize("layer", ["layer3", "pre_logits"])
def test_layer_features_and_predict_are_the_batch_by_batch_loops(layer):
    net = models.create("small_resnet18", seed=0).eval()
    x = torch.randint(0, 256, (E._BATCH + 5, 3, 28, 28), dtype=torch.uint8)
    tf = lambda b, k: tt.measure("noise", b, 0.1, 1.0, 0, k)  # new noise in every batch
    feats = E.layer_features(net, x, layer, tf)
    ref_f, ref_p = [], []
    with torch.inference_mode():  # the loops they ran before models.batched
        for k, i in enumerate(range(0, len(x), E._BATCH)):
            b = tf(x[i:i + E._BATCH].float() / 255, k)
            ref_f.append(models.features(net, b.contiguous(memory_format=torch.channels_last), [layer])[layer])
            ref_p.append(models.logits_from(net, layer, ref_f[-1], b).argmax(1))
        ref_f = torch.cat(ref_f)
        assert torch.equal(feats, ref_f) and feats.stride() == ref_f.stride()
        assert torch.equal(E._predict(net, layer, feats, x, tf), torch.cat(ref_p))


def test_plot_training_draws_one_row_per_type_after_the_original(tiny):
    import matplotlib

    matplotlib.use("Agg")
    S, _, eval_ds = tiny
    fig = R.plot_training_draws(S, E.family_members(S), eval_ds, n=3)
    assert len(fig.axes) == 4 * len(S.types) and fig.axes[0].get_title() == "original"
    assert [fig.axes[4 * i].get_ylabel() for i in range(len(S.types))] == [
        E.strongest(E.family_members(S), k).name for k in S.types]
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(),
                               eval_ds.rows(slice(0, 1)).float()[0].permute(1, 2, 0).numpy(), atol=1e-6)

def test_distances_totals_groups_and_knn_from_a_hand_made_matrix():
    one_way = np.array([[0.0, 0.1, 0.5, 0.6],
                        [0.3, 0.0, 0.7, 0.4],
                        [0.5, 0.9, 0.0, 0.2],
                        [0.8, 0.6, 0.4, 0.0]])
    d = E.Distances(one_way, ["b1", "b2", "r", "s"], ["baseline", "baseline", "rotation", "shear"])
    np.testing.assert_allclose(d.total, [[0, 0.4, 1.0, 1.4], [0.4, 0, 1.6, 1.0], [1.0, 1.6, 0, 0.6],
                                         [1.4, 1.0, 0.6, 0]])
    np.testing.assert_allclose(d.asymmetry, [[0, 0.2, 0, 0.2], [0.2, 0, 0.2, 0.2], [0, 0.2, 0, 0.2],
                                             [0.2, 0.2, 0.2, 0]], atol=1e-12)
    assert d.frame("one_way").loc["b2", "s"] == 0.4 and d.frame().loc["b2", "s"] == 1.0
    g = E.group_distances(d)
    assert list(g.index) == ["baseline", "rotation", "shear"]
    assert g.loc["baseline", "baseline"] == pytest.approx(0.4)  # between the two baselines
    assert g.loc["baseline", "rotation"] == pytest.approx((1.0 + 1.6) / 2)
    assert g.loc["rotation", "baseline"] == pytest.approx(1.3)
    assert g.loc["baseline", "shear"] == pytest.approx(1.2) and g.loc["rotation", "shear"] == pytest.approx(0.6)
    assert np.isnan(g.loc["rotation", "rotation"]) and np.isnan(g.loc["shear", "shear"])  # one network each
    k = E.knn_rates(d)
    assert list(k.index) == [1, 2, 3] and k.index.name == "k"
    assert k.rate.tolist() == [1.0, 1.0, 1.0] and k.pairs.iloc[0] == 2  # each baseline is the other's nearest
    assert k.chance.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])


# ------------------------------------------------------------------------------ fine-tuning
@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
@pytest.mark.parametrize("train_mode", [False, True])
def test_finetune_loss_without_the_lambdas_is_the_cross_entropy(train_mode):
    torch.manual_seed(0)
    net = E.Finetuned(models.create("small_resnet18", seed=0), 2, 128).train(train_mode)
    x, y = torch.rand(6, 3, 28, 28, generator=seeded(1)), torch.tensor([0, 1, 2, 3, 4, 5])
    value, logits = E.finetune_loss("rotation", (-10.0, 15.0), lambda1=0, lambda2=0, lambda3=0)(net, x, y)
    expected = net(x)
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(value, F.cross_entropy(expected, y), atol=1e-5, rtol=1e-5)
    value.backward()
    assert net.maps.weight.grad is None  # the maps take no part
    assert net.net.fc.weight.grad.abs().sum() > 0


def test_finetune_loss_with_lambda3_adds_the_transformed_terms_and_trains_the_maps():
    net = E.Finetuned(models.create("small_resnet18", seed=0), 2, 128).eval()
    x, y = torch.rand(6, 3, 28, 28, generator=seeded(1)), torch.tensor([0, 1, 2, 3, 4, 5])
    values = (-10.0, 15.0)
    ce = F.cross_entropy(net(x), y)
    value, _ = E.finetune_loss("rotation", values, lambda3=0.3)(net, x, y)
    assert value > ce + 1e-3
    value.backward()
    assert net.maps.weight.grad is not None and net.maps.weight.grad.abs().sum() > 0
    assert net.maps.bias.grad.abs().sum() > 0
    # with maps that add 0.1 to every feature (W = 0, b = 0.1; the features are >= 0), Eq. 7 from the network's
    # own features and classifier: CE(x) + l3 mean_j [CE(fc(r_j + 0.1)) + l1 |r_j + 0.1 - r|^2 + l2 |r_j - r|^2]
    with torch.no_grad():
        net.maps.weight.zero_()
        net.maps.bias.fill_(0.1)
    l1, l2, l3 = 0.01, 0.03, 0.5
    value, _ = E.finetune_loss("rotation", values, lambda1=l1, lambda2=l2, lambda3=l3)(net, x, y)
    with torch.no_grad():
        r = models.features(net.net, x, ["pre_logits"])["pre_logits"]
        terms = []
        for v in values:
            rg = models.features(net.net, tt.measure("rotation", x, v), ["pre_logits"])["pre_logits"]
            mapped = rg + 0.1
            terms.append(F.cross_entropy(net.net.fc(mapped), y) + l1 * (mapped - r).pow(2).sum(-1).mean()
                         + l2 * (rg - r).pow(2).sum(-1).mean())
        expected = ce + l3 * torch.stack(terms).mean()
    torch.testing.assert_close(value.detach(), expected, atol=1e-4, rtol=1e-4)


def test_finetune_loss_on_crop_compares_with_the_centre_window():
    net = E.Finetuned(models.create("small_resnet18", seed=0), 2, 128).eval()
    x, y = torch.rand(4, 3, 28, 28, generator=seeded(2)), torch.tensor([0, 1, 2, 3])
    value, logits = E.finetune_loss("crop", (0, 24), resize=320 / 227, lambda3=0)(net, x, y)
    torch.testing.assert_close(logits, net(tt.reference("crop", x, 320 / 227)), atol=1e-5, rtol=1e-5)
    assert not torch.allclose(logits, net(x), atol=1e-3)


@pytest.mark.slow  # a few seconds: make test runs it, make test-fast keeps under 2 minutes
def test_finetune_trains_a_copy_and_caches_it(tiny, tmp_path):
    S = E.settings("smoke", ft_steps=2, ft_batch=16)
    net = models.create("small_resnet18", seed=0).eval()
    before = copy.deepcopy(net.state_dict())
    with pytest.MonkeyPatch.context() as mp:  # C3's fine-tunes are no zoo models (c_zoo_specs leaves them out)
        mp.setattr(zoo, "train_many", lambda *a, **k: pytest.fail("a fine-tune trained a zoo model"))
        mp.setattr(zoo, "get", lambda *a, **k: pytest.fail("a fine-tune loaded a zoo model"))
        tuned = E.finetune(net, E.Member("rotation", 20.0), S)
    assert not tuned.training and tuned is not net
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in before.items())  # the input is left alone
    changed = [k for k, v in tuned.state_dict().items() if v.is_floating_point() and not torch.equal(v, before[k])]
    assert "fc.weight" in changed and any(k.startswith("stem") or k.startswith("layer1") for k in changed)
    assert len(list((tmp_path / "cache" / "equivariance").glob("finetune-*.pt"))) == 1
    again = E.finetune(net, E.Member("rotation", 20.0), S)
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in tuned.state_dict().items())
    assert tuned.finetune_seconds > 0 and again.finetune_seconds == tuned.finetune_seconds  # measured once, cached
    inner = E.finetune(net, E.Member("rotation", 20.0), E.settings("smoke", ft_steps=2, ft_batch=16, layer="layer4"))
    assert any(not torch.equal(v, tuned.state_dict()[k]) for k, v in inner.state_dict().items()
               if v.is_floating_point())  # another layer, another fine-tuning (and another cache entry)
    with pytest.raises(ValueError, match="Model has no layer 'fc7'"):
        E.finetune(net, E.Member("rotation", 20.0), E.settings("smoke", ft_steps=2, ft_batch=16, layer="fc7"))


# ------------------------------------------------------------------------------ summaries and claims
ROT = (-30.0, -15.0, 5.0, 30.0)
BASE, NARROW, WIDE = E.Member(None, None), E.Member("rotation", 5.0), E.Member("rotation", 20.0)


def curves_table(wide_inv=(70, 85, 88, 70), base2=None):
    """A hand-made :func:`invlib.papers.c.equivariance.curves` table of the rotation grid ROT: the baseline (and a
    second one with invariance ``base2``), the +-5 and the +-20 networks (inv / eq accuracy per value)."""
    rows = []
    nets = [(BASE, (40, 60, 80, 40), (60, 70, 85, 60), 90.0), (NARROW, (50, 70, 88, 50), (52, 71, 88, 52), 89.5),
            (WIDE, wide_inv, (71, 86, 88.5, 71), 89.0)]
    if base2 is not None:
        nets.insert(1, (E.Member(None, None, 1), base2, tuple(v + 10 for v in base2), 88.0))
    for m, inv, eq, clean in nets:
        for v, i, e in zip(ROT, inv, eq):
            rows.append(dict(network=m.name, kind="rotation", value=v, label=tt.value_label("rotation", v),
                             clean=clean, inv_acc=float(i), eq_acc=float(e), inv_l2=0.1, eq_l2=0.05,
                             in_range=tt.in_training_range("rotation", v, m.magnitude), member=m, group=m.group))
    return pd.DataFrame(rows)


def test_type_and_range_summaries_from_a_hand_made_table():
    s = R.type_summary(curves_table())
    assert list(s.index) == ["rotation"]
    r = s.loc["rotation"]
    assert r.network == "Rotation ±20" and r.baselines == 1  # the widest range against the baseline
    assert r.aug_inv == 78.25 and r.base_inv == 55.0
    assert r.aug_inv_beyond == 70.0 and r.base_inv_beyond == 40.0  # at -30 and 30, beyond +-20
    assert r.base_gap == 13.75  # 68.75 - 55
    assert r.aug_gap_inside == 0.75 and r.base_gap_inside == 7.5  # at -15 and 5
    assert r.aug_clean == 89.0 and r.base_clean == 90.0
    g = R.range_summary(curves_table())
    assert g.loc["rotation", "narrow"] == "Rotation ±5" and g.loc["rotation", "wide"] == "Rotation ±20"
    assert g.loc["rotation", "values"] == 3  # -30, -15, 30 are beyond +-5
    assert g.loc["rotation", "narrow_inv"] == pytest.approx(56.67) and g.loc["rotation", "wide_inv"] == 75.0
    one = curves_table()
    assert R.range_summary(one[one.member != NARROW]).empty  # one magnitude: no comparison


def test_summaries_average_every_baseline_and_keep_each():
    t = curves_table(base2=(50, 70, 90, 50))
    r = R.type_summary(t).loc["rotation"]
    assert r.baselines == 2 and r.base_inv == (55.0 + 65.0) / 2 and r.base_inv_beyond == 45.0
    assert r.base_clean == 89.0 and r.base_gap == 11.88  # (13.75 + 10) / 2, rounded for reading
    each = R.baseline_means(t)
    assert list(each.columns) == ["Baseline", "Baseline 2"] and each.loc["rotation"].tolist() == [55.0, 65.0]
    assert R.baseline_means(t, where="inside").loc["rotation"].tolist() == [70.0, 80.0]
    assert R.baseline_gaps(t).loc["rotation"].tolist() == [13.75, 10.0]
    with pytest.raises(ValueError, match="Valid where"):
        R.baseline_means(t, where="outside")
    bad = t.copy()
    bad.loc[(bad.member == BASE) & (bad.value == 5.0), "label"] = "7"
    with pytest.raises(ValueError, match="Baseline was measured on another rotation grid"):
        R.type_summary(bad)


# A family of types for the claims: every baseline is flat (invariance BASE_INV[b] at every value, equivariance
# that plus the type's gap); the widest network of a type is d_beyond / d_inside points above the baselines' mean
# beyond / inside its range (the middle two values), and its map adds gap_inside there.
GRID = (-30.0, -15.0, 5.0, 30.0)
INSIDE, NARROW_INSIDE = (False, True, True, False), (False, False, True, False)


def family_table(types: dict, base_inv=(40.0, 44.0, 42.0), base_gaps=None):
    """``types``: kind -> dict(beyond=, inside=, gap=, wider=None or points of the wide network over the narrow)."""
    rows = []
    mean_base = float(np.mean(base_inv))

    def add(m, inv, eq, in_range, kind):
        for v, i, e, r in zip(GRID, inv, eq, in_range):
            rows.append(dict(network=m.name, kind=kind, value=v, label=f"{v:g}", clean=80.0, inv_acc=float(i),
                             eq_acc=float(e), inv_l2=0.1, eq_l2=0.05, in_range=r, member=m, group=m.group))

    for kind, p in types.items():
        for b, level in enumerate(base_inv):
            gap = (base_gaps or {}).get(kind, (10.0,) * len(base_inv))[b]
            add(E.Member(None, None, b), [level] * 4, [level + gap] * 4, [False] * 4, kind)
        inv = [mean_base + (p["inside"] if r else p["beyond"]) for r in INSIDE]
        if p.get("wider") is not None:
            add(E.Member(kind, 5.0), [i - p["wider"] for i in inv], [i - p["wider"] for i in inv], NARROW_INSIDE,
                kind)
        add(E.Member(kind, 20.0), inv, [i + (p["gap"] if r else 0.0) for i, r in zip(inv, INSIDE)], INSIDE, kind)
    return pd.DataFrame(rows)


ACC = pd.DataFrame(dict(accuracy=[80.0], paper_ilsvrc=[50.11]), index=pd.Index(["Baseline"], name="network"))
C1 = ("sec6.1/augmentation_raises_invariance", "sec6.1/baseline_equivariance_gap",
      "sec6.1/augmentation_collapses_structure", "fig2/wider_range_more_robust")


def c1_verdicts(types, **kw):
    run = results.Run("c9_test", "smoke")
    R.report_c1(run, family_table(types, **kw), ACC)
    return run, [run.claims[c]["verdict"] for c in C1]


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_c1_claims_are_decided_over_the_types_and_the_baseline_seeds():
    good = {k: dict(beyond=20 + j, inside=30 - j, gap=0.5 + j / 4, wider=5 + j)
            for j, k in enumerate(("rotation", "shear", "blur"))}
    run, v = c1_verdicts(good, base_gaps={k: (25.0, 24.0, 26.0) for k in good})
    assert v == ["reproduced"] * 4
    ev = run.claims["sec6.1/augmentation_raises_invariance"]["evidence"]
    assert set(ev["parts"]) == {"over the grid", "beyond the range"} and ev["parts"]["over the grid"]["n"] == 3
    assert ev["parts"]["over the grid"]["unit"] == "model" and ev["parts"]["beyond the range"]["estimate"] == 21.0
    gap = run.claims["sec6.1/baseline_equivariance_gap"]["evidence"]["parts"]  # of the 40, 36, 38 points lost
    most = gap["most types"]
    assert (most["unit"], most["n"], most["boundary"]) == ("seed", 3, 0.5)
    assert most["estimate"] == pytest.approx(np.mean([25 / 40, 24 / 36, 26 / 38]))
    assert gap["colour the exception"]["verdict"] == "not measurable at this profile"  # no colour-jitter type here
    assert "against each baseline: Baseline +27.0, Baseline 2 +23.0, Baseline 3 +25.0" in run.claims[C1[0]]["ours"]
    json.loads(run.save().read_text())  # the run's record is plain JSON
    # two baseline seeds: the baseline's own claim needs three; the others rest on the types
    _, v = c1_verdicts(good, base_inv=(40.0, 44.0))
    assert v == ["reproduced", "inconclusive at this budget", "reproduced", "reproduced"]
    # every effect the other way
    bad = {k: dict(beyond=-20 - j, inside=-30 + j, gap=5.0 + j, wider=-5 - j)
           for j, k in enumerate(("rotation", "shear", "blur"))}
    _, v = c1_verdicts(bad, base_gaps={k: (1.0, 1.2, 0.8) for k in bad})
    assert v == ["not reproduced"] * 4
    # colour jitter in the family: the map recovers a quarter of its cost (the exception holds) or nine tenths
    with_colour = good | {"color_jitter": dict(beyond=20, inside=30, gap=0.5)}
    for colour_gaps, verdict in (((10.0, 9.0, 9.5), "reproduced"), ((36.0, 32.4, 34.2), "partly")):
        run, v = c1_verdicts(with_colour, base_gaps={**{k: (25.0, 24.0, 26.0) for k in good},
                                                     "color_jitter": colour_gaps})
        assert v[1] == verdict, colour_gaps
        assert run.claims["sec6.1/baseline_equivariance_gap"]["evidence"]["parts"]["colour the exception"]["n"] == 3
    # a mean gain within the spread of the types: undecided, not "partly"
    mixed = {"rotation": dict(beyond=8, inside=8, gap=0, wider=4), "shear": dict(beyond=-6, inside=-6, gap=0, wider=-3),
             "blur": dict(beyond=3, inside=3, gap=0, wider=1)}
    _, v = c1_verdicts(mixed)
    assert v[0] == v[3] == "inconclusive at this budget"


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_c1_claims_near_their_boundaries_and_with_few_types():
    base = lambda **p: {k: dict(dict(beyond=20, inside=20, gap=0.5, wider=None), **p) for k in ("rotation", "shear",
                                                                                                  "blur")}
    # the map adds 1.9 points inside the range (little: below 2) or 2.1 (not little), each type alike
    assert c1_verdicts(base(gap=1.9))[1][2] == "reproduced"
    assert c1_verdicts(base(gap=2.1))[1][2] == "partly"  # below the baselines' +10, but not below 2 points
    # the map recovers 55, 57 and 56 % of the 40, 36 and 38 points the baselines lose: above half; 40, 60 and 50 %:
    # the interval straddles half
    near = lambda shares: {k: tuple(s * lost for s, lost in zip(shares, (40, 36, 38))) for k in ("rotation", "shear",
                                                                                                  "blur")}
    assert c1_verdicts(base(), base_gaps=near((0.55, 0.57, 0.56)))[1][1] == "reproduced"
    assert c1_verdicts(base(), base_gaps=near((0.4, 0.6, 0.5)))[1][1] == "inconclusive at this budget"
    # colour jitter is the paper's exception: left out of the baseline's median, and tested on its own
    gaps = near((0.5,) * 3) | {"shear": near((0.7,) * 3)["shear"], "blur": near((0.9,) * 3)["blur"],
                               "color_jitter": (0.0, 0.0, 0.0)}
    types = dict(base(), color_jitter=dict(beyond=20, inside=20, gap=0.5, wider=None))
    run, v = c1_verdicts(types, base_gaps=gaps)
    parts = run.claims[C1[1]]["evidence"]["parts"]
    assert v[1] == "reproduced" and parts["most types"]["estimate"] == pytest.approx(0.7)  # 0.6 with colour
    assert parts["colour the exception"]["verdict"] == "reproduced"  # the map recovers nothing of colour's cost
    # no type with two ranges: Fig. 2 cannot be tested; two types: too few to decide
    assert c1_verdicts(base())[1][3] == "not measurable at this profile"
    two = {k: dict(beyond=20, inside=30, gap=0.5, wider=5) for k in ("rotation", "shear")}
    run, v = c1_verdicts(two)
    assert v[0] == v[3] == "inconclusive at this budget" and "needs >= 3 models" in run.claims[C1[3]]["interval"]


def test_c1_uses_every_baseline():
    """A second baseline as invariant as the augmented networks takes the gain away (the first one alone gave it)."""
    types = {k: dict(beyond=10 + j, inside=12 - j, gap=0.5, wider=None) for j, k in enumerate(("rotation", "shear",
                                                                                               "blur"))}
    assert c1_verdicts(types, base_inv=(40.0,))[1][0] == "reproduced"
    run, v = c1_verdicts(types, base_inv=(30.0, 50.0))  # mean 40 again: the same effects
    assert v[0] == "reproduced" and "Baseline +21.0, Baseline 2 +1.0" in run.claims[C1[0]]["ours"]
    t = family_table(types, base_inv=(40.0,))
    second = t[t.group == "baseline"].assign(member=[E.Member(None, None, 1)] * 12, inv_acc=70.0, eq_acc=80.0)
    run = results.Run("c9_test", "smoke")
    R.report_c1(run, pd.concat([t, second], ignore_index=True), ACC)
    assert run.claims[C1[0]]["verdict"] == "not reproduced"  # against the mean of 40 and 70


def c2_inputs(rigid_close=True, asymmetry=0.0, twin=0.1, images=50, seed=0):
    """Nine networks: two baselines, noise, colour jitter, rotation x2, shear x2, perspective. One-way distances:
    ``twin`` within a type, 0.3 within the paper's groups, 0.6 across (0.9 between rigid types when not
    ``rigid_close``); ``asymmetry`` added to one direction of (B1, S1); per-image errors with noise 0.02."""
    names = ["B1", "B2", "N", "C", "R1", "R2", "S1", "S2", "P"]
    groups = ["baseline", "baseline", "noise", "color_jitter", "rotation", "rotation", "shear", "shear", "perspective"]
    pixel = {0, 1, 2, 3}
    d = np.zeros((9, 9))
    for i in range(9):
        for j in range(9):
            if i != j:
                same_side = ({i, j} <= pixel) or not ({i, j} & pixel)
                d[i, j] = twin if groups[i] == groups[j] else (0.3 if same_side else 0.6)
                if not rigid_close and not ({i, j} & pixel) and groups[i] != groups[j]:
                    d[i, j] = 0.9
    d[0, 6] += asymmetry
    rng = np.random.default_rng(seed)
    per_image = d[:, :, None] + rng.normal(0, 0.02, (9, 9, images)) * (1 - np.eye(9))[:, :, None]
    dist = E.Distances(per_image.mean(-1), names, groups, per_image)
    cross = pd.DataFrame([
        dict(kind=k, domain=dom, group=g, inv_l2=l2 + j / 100, eq_l2=l2 / 2)
        for j, k in enumerate(("rotation", "mirror", "shear"))
        for dom, aug, base in (("train data", 0.2, 0.5), ("fashion_mnist", 0.25, 0.6))
        for g, l2 in ((k, aug), ("baseline", base), ("baseline", base + 0.02))])
    return dist, E.knn_rates(dist), cross


C2 = ("sec6.2/same_type_nearest", "sec6.2/transform_groups", "appB.3/asymmetric_distances",
      "appB.2/invariance_transfers")


def c2_verdicts(dist, knn, cross):
    run = results.Run("c9_test", "smoke")
    facts = R.report_c2(run, dist, knn, cross)
    return run, facts, [run.claims[c]["verdict"] for c in C2]


def test_c2_claims_verdicts_from_known_numbers():
    run, facts, v = c2_verdicts(*c2_inputs(asymmetry=0.2))
    assert v == ["reproduced"] * 4
    near = run.claims[C2[0]]["evidence"]
    assert (near["n"], near["unit"], near["boundary"]) == (6, "model", 0.5)  # 6 networks with a twin; k = 1 of 8
    assert "100% of 6 ordered same-type pairs within 1 of 8" in run.claims[C2[0]]["ours"]
    assert set(run.claims[C2[1]]["evidence"]["parts"]) == {"rigid", "pixelwise"}
    assert facts["c2_partners"] == 6 and facts["c2_nearest"].startswith("yes: in 100% of the 6 same-type pairs")
    json.loads(run.save().read_text())
    # rotation, shear and perspective far apart; no asymmetry beyond the images' noise; twins no nearer than others
    dist, knn, cross = c2_inputs(rigid_close=False, twin=0.7)
    cross.loc[cross.group != "baseline", "inv_l2"] = 0.9
    run, facts, v = c2_verdicts(dist, knn, cross)
    assert v == ["not reproduced", "partly", "not reproduced", "partly"]
    assert facts["c2_groups"].startswith("in part: rigid group") and facts["c2_asymmetry"].startswith("no: ")
    # one data set: the transfer claim cannot be tested
    run, _, v = c2_verdicts(*c2_inputs()[:2], cross[cross.domain == "train data"])
    assert v[3] == "not measurable at this profile" and len(run.claims) == 4


def test_c2_asymmetry_is_a_maximum_with_its_multiplicity_controlled():
    """One pair 0.075 apart on one side (6 % of the median distance 1.2): beyond 5 % with 400 images; with 20 its
    Bonferroni interval over the 36 pairs reaches below 5 %; 0.04 (3 %) with 400 images is below it."""
    verdict = lambda **kw: c2_verdicts(*c2_inputs(**kw))[2][2]
    assert verdict(asymmetry=0.075, images=400) == "reproduced"
    assert verdict(asymmetry=0.075, images=20) == "inconclusive at this budget"
    assert verdict(asymmetry=0.04, images=400) == "not reproduced"
    run, _, _ = c2_verdicts(*c2_inputs(asymmetry=0.075, images=400))
    assert "one of the pairs (Bonferroni)" in run.claims[C2[2]]["criterion"]
    assert "one of 36 pairs" in run.claims[C2[2]]["ours"]
    assert run.claims[C2[2]]["evidence"]["level"] == pytest.approx(1 - 0.05 / 36)
    # the largest of 36 pure-noise asymmetries would pass a fixed threshold at 1 % of the median; the test does not
    dist, knn, cross = c2_inputs(images=5)
    t = R.asymmetry_intervals(dist, 1 - 0.05 / 36)
    assert t.estimate.max() > 0.01 and (t.lo < 0.01).all()
    with pytest.raises(ValueError, match="per evaluation image"):
        R.asymmetry_intervals(E.Distances(dist.one_way, dist.names, dist.groups))


def test_c2_nearest_and_groups_near_their_boundaries():
    dist, knn, cross = c2_inputs()
    shares = R.partner_shares(dist, 1)
    assert shares.index.tolist() == ["B1", "B2", "R1", "R2", "S1", "S2"] and (shares == 1).all()
    assert shares.mean() == knn.rate.loc[1]  # groups of two: the pooled rate
    # only the baselines nearest each other (a third of the twins): the interval straddles 0.5
    d = dist.one_way.copy()
    d[4, 5] = d[5, 4] = d[6, 7] = d[7, 6] = 0.5
    half = E.Distances(d, dist.names, dist.groups, dist.per_image)
    assert R.partner_shares(half, 1).tolist() == [1, 1, 0, 0, 0, 0]
    run, _, v = c2_verdicts(half, E.knn_rates(half), cross)
    assert v[0] == "inconclusive at this budget"
    # 5 of 6 pairs (R1's nearest is P): a Wilson interval, not the zero-width one of five 1s and a 0
    d = dist.one_way.copy()
    d[4, 8] = d[8, 4] = 0.02
    one_off = E.Distances(d, dist.names, dist.groups, dist.per_image)
    assert R.partner_shares(one_off, 1).tolist() == [1, 1, 0, 1, 1, 1]
    run, _, v = c2_verdicts(one_off, E.knn_rates(one_off), cross)
    assert v[0] == "inconclusive at this budget" and run.claims[C2[0]]["evidence"]["method"] == "wilson"
    c = R.group_contrast(dist, R.GROUPS_C["rigid"])
    assert c.index.tolist() == ["R1", "R2", "S1", "S2", "P"] and (c < 0).all()
    assert R.group_contrast(dist, ("rotation", "zoom")) is None  # one of the types only
    small = E.Distances(dist.one_way[4:, 4:], dist.names[4:], dist.groups[4:], dist.per_image[4:, 4:])
    run, _, v = c2_verdicts(small, E.knn_rates(small), cross)  # the rigid types alone: nothing outside them
    assert v[1] == "not measurable at this profile"


def test_c2_transfer_is_an_equivalence_within_its_margin():
    dist, knn, cross = c2_inputs()
    far = cross.copy()
    far.loc[(far.domain == "fashion_mnist") & (far.group != "baseline"), "inv_l2"] += 0.2  # 0.45: far from 0.2
    run, _, v = c2_verdicts(dist, knn, far)
    parts = run.claims[C2[3]]["evidence"]["parts"]
    assert v[3] == "partly" and parts["close to its own data"]["verdict"] == "not reproduced"
    close = parts["close to its own data"]
    assert close["direction"] == "equivalent" and close["margin"] == 0.1
    near = cross.copy()  # 0.09 weaker, each type alike: inside the margin
    near.loc[(near.domain == "fashion_mnist") & (near.group != "baseline"), "inv_l2"] += 0.04
    assert c2_verdicts(dist, knn, near)[2][3] == "reproduced"


def c3_table(eq_deltas, clean_deltas, control_deltas=None):
    rows = []
    for kind in eq_deltas:
        row = dict(type=kind, network=kind, transform="untransformed", original=80.0,
                   finetuned=80.0 + clean_deltas[kind])
        rows.append(row if control_deltas is None else dict(row, control=80.0))
        for i, delta in enumerate(eq_deltas[kind]):
            row = dict(type=kind, network=kind, transform=f"t{i}", original=60.0, finetuned=60.0 + delta)
            rows.append(row if control_deltas is None else dict(row, control=60.0 + control_deltas[kind][i]))
    return pd.DataFrame(rows)


C3 = ("sec6.3/finetuning_raises_equivariance", "sec6.3/clean_accuracy_kept")
THREE = ("rotation", "noise", "blur")


def c3_verdicts(eq, clean, control=None):
    run = results.Run("c9_test", "smoke")
    facts = R.report_c3(run, c3_table(eq, clean, control))
    return run, facts, {cid: c["verdict"] for cid, c in run.claims.items()}


def test_each_family_records_what_a_replicate_cost_and_the_claims_on_it():
    good = {k: dict(beyond=20 + j, inside=30 - j, gap=0.5 + j / 4, wider=5 + j if k != "blur" else None)
            for j, k in enumerate(("rotation", "shear", "blur"))}
    table = family_table(good, base_gaps={k: (10.0, 12.0, 11.0) for k in good})
    seconds = {m: 10.0 + i for i, m in enumerate(dict.fromkeys(table.member))}  # baselines first, then the types
    run = results.Run("c9_test", "smoke")
    R.report_c1(run, table, ACC, seconds)
    rec = run.replicate_costs
    assert list(rec) == ["baselines", "types", "wide_types"]
    assert rec["baselines"]["seconds"] == [10.0, 11.0, 12.0]
    assert rec["baselines"]["claims"] == ["sec6.1/baseline_equivariance_gap"]
    assert rec["types"]["seconds"] == [14.0, 16.0, 17.0] and rec["wide_types"]["seconds"] == [13.0, 15.0]
    assert rec["wide_types"]["claims"] == ["fig2/wider_range_more_robust"]
    # every family's n is the n of the claims it names
    assert run.claims["fig2/wider_range_more_robust"]["evidence"]["n"] == rec["wide_types"]["n"] == 2
    assert run.claims["sec6.1/baseline_equivariance_gap"]["evidence"]["n"] == rec["baselines"]["n"] == 3
    raises = run.claims["sec6.1/augmentation_raises_invariance"]["evidence"]["parts"]["over the grid"]
    assert raises["n"] == rec["types"]["n"] == 3
    assert not results.Run("c9_test", "smoke").replicate_costs  # without seconds, none recorded
    # C2: the types measured on the second data set; C3: each fine-tuned type, network and fine-tunings
    dist, knn, cross = c2_inputs()
    run = results.Run("c9_test", "smoke")
    R.report_c2(run, dist, knn, cross, {E.Member(k, 20.0): 20.0 + j for j, k in enumerate(("rotation", "mirror",
                                                                                            "shear", "noise"))})
    assert run.replicate_costs["cross_types"]["seconds"] == [20.0, 21.0, 22.0]
    assert run.replicate_costs["cross_types"]["claims"] == ["appB.2/invariance_transfers"]
    run = results.Run("c9_test", "smoke")
    t = c3_table(dict(zip(THREE, [(1.0, 2.0)] * 3)), dict(zip(THREE, [0.0] * 3)), dict(zip(THREE, [(0.0, 0.0)] * 3)))
    R.report_c3(run, t.assign(seconds=t["type"].map(dict(zip(THREE, (30.0, 31.0, 32.0))))))
    assert run.replicate_costs["ft_types"]["seconds"] == [30.0, 31.0, 32.0] and run.replicate_costs["ft_types"]["n"] \
        == run.claims["sec6.3/gain_from_the_loss"]["evidence"]["n"] == 3
    assert len(run.replicate_costs["ft_types"]["claims"]) == 3


def test_c3_claims_verdicts_from_known_numbers():
    ch = R.finetune_changes(c3_table({"rotation": (1.0, 2.0)}, {"rotation": -0.5}, {"rotation": (0.0, 0.5)}))
    assert ch.loc["rotation"].tolist() == [1.5, -0.5, 1.25]
    run, facts, v = c3_verdicts(dict(zip(THREE, [(1.0, 2.0), (0.5, 1.0), (1.5, 1.5)])),
                                dict(zip(THREE, [-0.3, 0.2, 0.1])))
    assert [v[c] for c in C3] == ["reproduced", "reproduced"] and "sec6.3/gain_from_the_loss" not in v
    ev = run.claims[C3[0]]["evidence"]
    assert (ev["n"], ev["unit"], ev["estimate"]) == (3, "model", 1.25)
    assert facts["c3_raised"].startswith("yes: +1.25 points of equivariance accuracy on average over 3 types")
    # lower for every type, clean accuracy down by 3 points
    run, facts, v = c3_verdicts(dict(zip(THREE, [(-1.0, -2.0), (-0.5, -1.0), (-1.5, -1.5)])),
                                dict(zip(THREE, [-3.0, -2.5, -3.5])))
    assert [v[c] for c in C3] == ["not reproduced", "not reproduced"]
    # two types: too few to decide, however large the gain
    run, facts, v = c3_verdicts({"rotation": (5.0, 5.0), "noise": (6.0, 6.0)}, {"rotation": 0.0, "noise": 0.0})
    assert [v[c] for c in C3] == ["inconclusive at this budget"] * 2
    assert facts["c3_raised"].startswith("undecided: ") and facts["c3_types"] == 2


def test_c3_clean_accuracy_kept_is_a_margin_of_one_point():
    eq = dict(zip(THREE, [(1.0, 1.0)] * 3))
    assert c3_verdicts(eq, dict(zip(THREE, [-0.6, -0.5, -0.55])))[2][C3[1]] == "reproduced"  # slight drops
    assert c3_verdicts(eq, dict(zip(THREE, [3.0, 2.5, 2.8])))[2][C3[1]] == "reproduced"  # a gain also holds
    assert c3_verdicts(eq, dict(zip(THREE, [-1.5, -1.4, -1.6])))[2][C3[1]] == "not reproduced"
    assert c3_verdicts(eq, dict(zip(THREE, [-0.5, -1.5, -1.0])))[2][C3[1]] == "inconclusive at this budget"


def test_c3_gain_from_the_loss_against_the_control():
    eq = dict(zip(THREE, [(2.0, 2.0), (1.0, 1.0), (1.5, 1.5)]))
    clean = dict(zip(THREE, [0.0] * 3))
    verdict = lambda control: c3_verdicts(eq, clean, control)[2]["sec6.3/gain_from_the_loss"]
    assert verdict(dict(zip(THREE, [(0.5, 0.5), (0.0, 0.0), (0.25, 0.25)]))) == "reproduced"  # +1.5, +1, +1.25
    assert verdict(dict(zip(THREE, [(3.5, 3.5), (2.5, 2.5), (3.0, 3.0)]))) == "not reproduced"
    # Eq. 7 ahead for one type, behind for another: no "partly" from a mean above 0
    assert verdict(dict(zip(THREE, [(0.0, 0.0), (2.0, 2.0), (1.5, 1.0)]))) == "inconclusive at this budget"
    _, facts, _ = c3_verdicts(eq, clean, dict(zip(THREE, [(3.5, 3.5), (2.5, 2.5), (3.0, 3.0)])))
    assert facts["c3_control"].startswith("no: Eq. 7's equivariance accuracy stands -1.50 points against")
    # Eq. 7 ahead of the control for every type, but by less than half the paper's +0.26 points: not the effect
    assert verdict(dict(zip(THREE, [(1.95, 1.95), (0.95, 0.95), (1.45, 1.45)]))) == "not reproduced"  # +0.05 each


def test_curves_and_cross_dataset_measure_every_baseline(monkeypatch):
    S = E.settings("smoke", types=("rotation", "noise"), cross_types=("rotation",))
    nets = {m: f"net of {m.name}" for m in [E.Member(None, None, 0), E.Member(None, None, 1), *E.family_members(S)[1:]]}
    calls = []

    def measure(net, kind, values, *args):
        calls.append((net, kind))
        return pd.DataFrame(dict(value=[0.0], label=["0"], inv_acc=[1.0]))

    monkeypatch.setattr(E, "measure_network", measure)
    monkeypatch.setattr(E, "images", lambda S, cross=False: ("fit", "eval"))
    t = E.curves(nets, S, "fit", "eval")
    assert sorted(calls) == sorted([("net of Baseline", "rotation"), ("net of Baseline", "noise"),
                                    ("net of Baseline 2", "rotation"), ("net of Baseline 2", "noise"),
                                    ("net of Rotation ±5", "rotation"), ("net of Rotation ±20", "rotation"),
                                    ("net of Gaussian Noise σ=20", "noise")])
    assert (t.group == "baseline").sum() == 4
    calls.clear()
    cross = E.cross_dataset(nets, S, "fit", "eval")
    assert calls == [("net of Rotation ±20", "rotation"), ("net of Baseline", "rotation"),
                     ("net of Baseline 2", "rotation")] * 2
    assert cross.domain.tolist() == ["train data"] * 3 + [S.cross_dataset] * 3


@pytest.mark.parametrize("layer,width", [("layer4", 128), ("layer3", 64)])
def test_finetune_loss_at_an_inner_layer(layer, width):
    """At a spatial layer the maps act on its channels at every position; lambda3 = 0 is still the clean
    cross-entropy, and with lambda3 > 0 the maps receive gradients."""
    net = E.Finetuned(models.create("small_resnet18", seed=0).eval(), 2, width)
    x, y = torch.rand(4, 3, 28, 28, generator=seeded(1)), torch.tensor([0, 1, 2, 3])
    plain, _ = E.finetune_loss("rotation", (-10.0, 15.0), lambda3=0.0, layer=layer)(net, x, y)
    assert torch.allclose(plain, F.cross_entropy(net(x), y), atol=1e-6)
    full, _ = E.finetune_loss("rotation", (-10.0, 15.0), layer=layer)(net, x, y)
    assert full > plain
    full.backward()
    assert net.maps.weight.grad.abs().sum() > 0


def test_images_of_a_folder_without_splits_hold_out_as_the_zoo_does(tmp_path):
    """A folder of class folders: the evaluation images are those the family's seed-0 networks never trained on,
    and the fit images come from their training part; the same folder also serves as App. B.2's second set."""
    from PIL import Image

    g = np.random.default_rng(0)
    for label in ("a", "b"):
        (tmp_path / "imgs" / label).mkdir(parents=True)
        for k in range(15):
            pixels = g.integers(0, 255, (28, 28, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / "imgs" / label / f"{k}.png")
    root = str(tmp_path / "imgs")
    S = E.settings("smoke", dataset="folder", root=root, size=28, n_train=20, n_fit=8, n_eval=4,
                   cross_dataset="folder", cross_root=root)
    fit_ds, eval_ds = E.images(S)
    train_ds, test_ds = zoo.splits(E.spec(S, E.Member(None, None)))
    assert (len(fit_ds), len(eval_ds)) == (8, 4)
    assert torch.equal(eval_ds.images, test_ds.images[:4]) and torch.equal(fit_ds.images, train_ds.images[:8])
    rows = lambda ds: {bytes(im.numpy().tobytes()) for im in ds.images}
    assert not rows(eval_ds) & rows(train_ds)  # nothing the networks trained on is scored
    cross_fit, cross_eval = E.images(S, cross=True)
    assert (len(cross_fit), len(cross_eval)) == (8, 4) and not rows(cross_fit) & rows(cross_eval)


def test_finetuned_maps_start_from_their_seed_not_the_global_random_state():
    net = models.create("small_resnet18", seed=0)
    torch.manual_seed(1)
    a = E.Finetuned(net, 2, 128, seed=3).maps.weight.detach().clone()
    torch.manual_seed(2)
    b = E.Finetuned(net, 2, 128, seed=3).maps.weight.detach()
    assert torch.equal(a, b) and not torch.equal(a, E.Finetuned(net, 2, 128, seed=4).maps.weight.detach())


def test_every_c_claim_is_declared_and_recorded_from_its_declaration():
    """The claims chapters C1-C3 record are exactly those paper C's protocol declares for them, each with its
    criterion and declaration from the protocol; every directional part over replicates has a smallest effect, and
    the two one-sided statements ("does not improve", "only slightly lowers") are non-inferiority parts whose
    margin is the largest change that does not matter."""
    good = {k: dict(beyond=20, inside=30, gap=0.5, wider=5) for k in ("rotation", "shear", "blur")}
    run, _ = c1_verdicts(good)
    dist, knn, cross = c2_inputs(asymmetry=0.2)
    R.report_c2(run, dist, knn, cross)
    R.report_c3(run, c3_table(dict(zip(THREE, [(1.0, 2.0)] * 3)), dict(zip(THREE, [0.0] * 3)),
                              dict(zip(THREE, [(0.0, 0.5)] * 3))))
    assert sorted(run.claims) == sorted(c.id for c in PROTOCOL)
    for c in PROTOCOL:
        assert run.claims[c.id]["criterion"] == c.criterion() and run.claims[c.id]["declaration"] == c.to_dict()
        assert run.claims[c.id]["claim"] == c.statement and c.chapter.startswith(("c1_", "c2_", "c3_"))
    assert all(p.smallest > 0 for c in PROTOCOL for p in c.parts.values() if p.unit != "deterministic")
    margins = {(c.id, n): (p.null, p.boundary) for c in PROTOCOL for n, p in c.parts.items()
               if p.direction in ("not below", "not above")}
    assert margins == {("sec6.1/augmentation_collapses_structure", "small"): (0.0, 2.0),
                       ("sec6.3/clean_accuracy_kept", ""): (0.0, -1.0)}
    assert "< 2 (no effect 0; the largest change that does not matter 2: the largest gain" in \
        run.claims[C1[2]]["criterion"]


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_c_claims_on_both_sides_of_their_smallest_effects():
    """Made-up effects just beyond and just short of each declared smallest effect (an order alone no longer
    reproduces a claim)."""
    types = lambda gain, inside_gap=0.5: {k: dict(beyond=gain + d, inside=gain - d, gap=inside_gap, wider=gain + d)
                                          for d, k in zip((-0.1, 0.0, 0.1), ("rotation", "shear", "blur"))}
    # more invariant, and wider ranges more robust, by 1.5 points (beyond one point) or by 0.5 (short of it)
    assert c1_verdicts(types(1.5))[1][0] == c1_verdicts(types(1.5))[1][3] == "reproduced"
    assert c1_verdicts(types(0.5))[1][0] == c1_verdicts(types(0.5))[1][3] == "not reproduced"
    # the map adds 9.5 points inside the range, 0.5 less than for the baselines (their gap 10); or 1 point, 9 less
    run, _ = c1_verdicts(types(20, inside_gap=9.5))
    parts = run.claims[C1[2]]["evidence"]["parts"]
    assert parts["below the baseline"]["verdict"] == "not reproduced"  # -0.5: less than a point below
    assert parts["small"]["verdict"] == "not reproduced"  # 9.5 points: not little
    run, _ = c1_verdicts(types(20, inside_gap=1.0))
    assert run.claims[C1[2]]["verdict"] == "reproduced"
    assert run.claims[C1[2]]["evidence"]["parts"]["below the baseline"]["boundary"] == -1.0
    # fine-tuning: +0.3 points per type clears half the paper's gain (0.13); +0.05 does not
    eq = lambda g: dict(zip(THREE, [(g - 0.01, g + 0.01), (g, g), (g + 0.01, g - 0.01)]))
    clean = dict(zip(THREE, [0.0, 0.1, -0.1]))
    assert c3_verdicts(eq(0.3), clean)[2][C3[0]] == "reproduced"
    run, facts, v = c3_verdicts(eq(0.05), clean)
    assert v[C3[0]] == "not reproduced" and facts["c3_raised"].startswith("no: +0.05 points")
    assert run.claims[C3[0]]["evidence"]["boundary"] == 0.13


def test_c2_claims_on_both_sides_of_their_smallest_effects():
    dist, knn, cross = c2_inputs()
    # the groups nearer each other than the rest by 0.6 (the inputs' Eq. 4 distances 0.6 and 1.2), or by 0.01
    pixel = np.isin(dist.groups, ["baseline", "noise", "color_jitter"])
    d = np.round(dist.one_way, 1)  # 0.1 between twins, 0.3 within a group, 0.6 across (the images' noise off)
    d[pixel[:, None] != pixel[None, :]] = 0.305  # Eq. 4: 0.61 across against 0.6 within, for every network
    near = E.Distances(d, dist.names, dist.groups, d[:, :, None] + np.zeros((1, 1, 50)))
    run, _, v = c2_verdicts(near, E.knn_rates(near), cross)
    typical = np.median(near.total[~np.eye(len(d), dtype=bool)])  # the family's median Eq. 4 distance: the unit
    assert v[1] == "not reproduced" and run.claims[C2[1]]["evidence"]["parts"]["rigid"]["boundary"] == -0.05
    assert run.claims[C2[1]]["evidence"]["parts"]["rigid"]["estimate"] == pytest.approx(-0.01 / typical)
    assert c2_verdicts(dist, knn, cross)[2][1] == "reproduced"
    # on the unseen data, the augmented networks 0.05 above the baselines (less than a tenth): not the effect
    close = cross.copy()
    unseen = close.domain == "fashion_mnist"
    close.loc[unseen & (close.group == "baseline"), "inv_l2"] = close.loc[unseen & (close.group != "baseline"),
                                                                          "inv_l2"].mean() + 0.05
    run, _, _ = c2_verdicts(dist, knn, close)
    assert run.claims[C2[3]]["evidence"]["parts"]["above the baseline"]["verdict"] == "not reproduced"
    assert run.claims[C2[3]]["evidence"]["parts"]["above the baseline"]["boundary"] == pytest.approx(0.1)
    # a family of four networks: chance k / (M - 1) = 1/3 is above the declared 0.25, so the share is not tested
    small = E.Distances(dist.one_way[4:8, 4:8], dist.names[4:8], dist.groups[4:8], dist.per_image[4:8, 4:8])
    run, _, v = c2_verdicts(small, E.knn_rates(small), cross)
    assert v[0] == "not measurable at this profile" and "chance" in run.claims[C2[0]]["evidence"]["reason"]
