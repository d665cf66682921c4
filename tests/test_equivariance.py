"""invlib.papers.c.equivariance: paper C's settings and family, the measurement of one network (networks invariant and
equivariant by construction), distances between networks, the fine-tuning loss, the summaries and the claims'
verdicts from known numbers."""

import copy
import json

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
        "fashion_mnist_color", "small_resnet18", "pre_logits", "small", 1, 2)
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
    for m in E.family(S):
        s = E.spec(S, m)
        assert (s.n_train, s.epochs, s.arch, s.optimizer, s.device, s.n_test) == (500, 2, "small_resnet50", "adamw",
                                                                                  "cpu", E.ZOO_TEST)
    seen = []
    monkeypatch.setattr(zoo.Recipe, "train_family", lambda self, specs: seen.append(specs) or
                        {k: [f"model of {s.name}" for s in v] for k, v in specs.items()})
    members = E.family(S)[:2]
    assert E.train(S, members) == {m: f"model of {E.spec(S, m).name}" for m in members}
    assert seen == [{"family": [E.spec(S, m) for m in members]}]
    with pytest.raises(ValueError, match="Unknown Settings field 'epoch'. Did you mean 'epochs'"):
        E.settings("smoke", epoch=2)


def test_bad_map_loss_lists_the_valid_ones():
    with pytest.raises(ValueError, match="Valid map_loss values: ce, l2"):
        E.settings("smoke", map_loss="l1")


def test_family_of_the_cpu_profile():
    members = E.family(E.settings("cpu"))
    assert len(members) == 14  # 2 baselines, 9 types, a second (narrow) magnitude for rotation, shear and crop
    assert members[:2] == [E.Member(None, None, 0), E.Member(None, None, 1)]
    assert [m.name for m in members[:2]] == ["Baseline", "Baseline 2"]
    by_kind = {}
    for m in members[2:]:
        by_kind.setdefault(m.kind, []).append(m.magnitude)
    assert list(by_kind) == list(tt.TYPES)  # every type, in the order of TYPES
    assert by_kind["rotation"] == [5.0, 20.0] and by_kind["shear"] == [5.0, 20.0]  # weakest first
    assert by_kind["crop"] == [240 / 227, 320 / 227]
    assert by_kind["elastic"] == [(10.0, 2.0)] and by_kind["mirror"] == ["hv"] and by_kind["noise"] == [20.0]
    assert by_kind["perspective"] == [0.1] and by_kind["color_jitter"] == [20.0] and by_kind["blur"] == [3.0]
    assert len({m.name for m in members}) == 14
    assert E.strongest(members, "rotation") == E.Member("rotation", 20.0)
    with pytest.raises(ValueError, match="The family has no zoom network"):
        E.strongest(members, "zoom")
    # the paper's family: three baselines and four magnitudes of every type (three mirrors, two blurs)
    paper = E.family(E.settings("paper"))
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
    for m in E.family(S)[2:]:
        sp = E.spec(S, m)
        aug = zoo.augmentation(sp.augment, **dict(sp.augment_params))
        assert sp.augment == f"tm_{m.kind}" and aug.kind == m.kind
        assert aug.magnitude == (m.magnitude[0] if m.kind == "elastic" else m.magnitude)
    # every network has its own zoo entry
    assert len({zoo.path(E.spec(S, m)) for m in E.family(S)}) == 14


# ------------------------------------------------------------------------------ measuring one network
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
    cached = E.distances(nets, S, fit_ds, eval_ds)
    assert np.array_equal(cached.one_way, w)


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


def test_gain_beyond_noise_weighs_the_mean_and_each_type_against_their_standard_errors():
    se = pd.Series([0.5, 1.5, 0.5], index=["noise", "blur", "crop"])
    g = R.gain_beyond_noise(pd.Series({"noise": 2.0, "blur": 1.0, "crop": -0.1}), se)
    assert g["se"] == pytest.approx(np.sqrt((0.25 + 2.25 + 0.25) / 3 / 3))
    assert (g["beyond"], g["most_up"], g["share_up"], g["third_up_beyond"]) == (False, True, 2 / 3, True)
    assert g["up"].tolist() == [True, False, False]  # blur's +1.0 is within its own 1.5
    g = R.gain_beyond_noise(pd.Series({"noise": 2.0, "blur": 3.5, "crop": 1.0}), se)
    assert g["beyond"] and g["most_up"]
    none = R.gain_beyond_noise(pd.Series(dtype=float), pd.Series(dtype=float))
    assert not (none["beyond"] or none["most_up"] or none["third_up_beyond"]) and len(none["up"]) == 0


def test_plot_training_draws_one_row_per_type_after_the_original(tiny):
    import matplotlib

    matplotlib.use("Agg")
    S, _, eval_ds = tiny
    fig = R.plot_training_draws(S, E.family(S), eval_ds, n=3)
    assert len(fig.axes) == 4 * len(S.types) and fig.axes[0].get_title() == "original"
    assert [fig.axes[4 * i].get_ylabel() for i in range(len(S.types))] == [
        E.strongest(E.family(S), k).name for k in S.types]
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
    tuned = E.finetune(net, E.Member("rotation", 20.0), S)
    assert not tuned.training and tuned is not net
    assert all(torch.equal(v, net.state_dict()[k]) for k, v in before.items())  # the input is left alone
    changed = [k for k, v in tuned.state_dict().items() if v.is_floating_point() and not torch.equal(v, before[k])]
    assert "fc.weight" in changed and any(k.startswith("stem") or k.startswith("layer1") for k in changed)
    assert len(list((tmp_path / "cache" / "equivariance").glob("finetune-*.pt"))) == 1
    again = E.finetune(net, E.Member("rotation", 20.0), S)
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in tuned.state_dict().items())
    inner = E.finetune(net, E.Member("rotation", 20.0), E.settings("smoke", ft_steps=2, ft_batch=16, layer="layer4"))
    assert any(not torch.equal(v, tuned.state_dict()[k]) for k, v in inner.state_dict().items()
               if v.is_floating_point())  # another layer, another fine-tuning (and another cache entry)
    with pytest.raises(ValueError, match="Model has no layer 'fc7'"):
        E.finetune(net, E.Member("rotation", 20.0), E.settings("smoke", ft_steps=2, ft_batch=16, layer="fc7"))


# ------------------------------------------------------------------------------ summaries and claims
ROT = (-30.0, -15.0, 5.0, 30.0)
BASE, NARROW, WIDE = E.Member(None, None), E.Member("rotation", 5.0), E.Member("rotation", 20.0)


def curves_table(wide_inv=(70, 85, 88, 70)):
    """A hand-made :func:`invlib.papers.c.equivariance.curves` table of the rotation grid ROT: the baseline, the +-5
    and the
    +-20 networks (inv / eq accuracy per value)."""
    rows = []
    for m, inv, eq, clean in ((BASE, (40, 60, 80, 40), (60, 70, 85, 60), 90.0),
                              (NARROW, (50, 70, 88, 50), (52, 71, 88, 52), 89.5),
                              (WIDE, wide_inv, (71, 86, 88.5, 71), 89.0)):
        for v, i, e in zip(ROT, inv, eq):
            rows.append(dict(network=m.name, kind="rotation", value=v, label=tt.value_label("rotation", v),
                             clean=clean, inv_acc=float(i), eq_acc=float(e), inv_l2=0.1, eq_l2=0.05,
                             in_range=tt.in_training_range("rotation", v, m.magnitude), member=m, group=m.group))
    return pd.DataFrame(rows)


def test_type_and_range_summaries_from_a_hand_made_table():
    s = R.type_summary(curves_table())
    assert list(s.index) == ["rotation"]
    r = s.loc["rotation"]
    assert r.network == "Rotation ±20"  # the widest range against the baseline
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


def verdicts(run):
    return {cid: c["verdict"] for cid, c in run.claims.items()}


def test_c1_claims_verdicts_from_known_numbers():
    acc = pd.DataFrame(dict(accuracy=[90.0, 89.5, 89.0], paper_ilsvrc=[50.11, 50.30, 52.44]),
                       index=pd.Index(["Baseline", "Rotation ±5", "Rotation ±20"], name="network"))
    run = results.Run("c9_test", "smoke")
    table = curves_table()
    R.record_c1_claims(run, R.type_summary(table), R.range_summary(table), acc)
    assert verdicts(run) == {"sec6.1/augmentation_raises_invariance": "reproduced",
                             "sec6.1/baseline_equivariance_gap": "reproduced",
                             "sec6.1/augmentation_collapses_structure": "reproduced",
                             "fig2/wider_range_more_robust": "reproduced"}
    assert run.metrics["table3_accuracy"]["Rotation ±20"] == 89.0
    json.loads(run.save().read_text())  # the run's record is plain JSON
    # the wide network now less invariant than the baseline and than the narrow one
    run = results.Run("c9_test", "smoke")
    table = curves_table(wide_inv=(30, 40, 50, 30))
    R.record_c1_claims(run, R.type_summary(table), R.range_summary(table), acc)
    assert verdicts(run) == {"sec6.1/augmentation_raises_invariance": "not reproduced",
                             "sec6.1/baseline_equivariance_gap": "reproduced",
                             "sec6.1/augmentation_collapses_structure": "not reproduced",
                             "fig2/wider_range_more_robust": "not reproduced"}
    assert "0 of 1 types overall" in run.claims["sec6.1/augmentation_raises_invariance"]["ours"]
    # more invariant on average, but no more than the baseline beyond its training range (40 vs 40 at +-30)
    run = results.Run("c9_test", "smoke")
    table = curves_table(wide_inv=(40, 85, 88, 40))
    R.record_c1_claims(run, R.type_summary(table), R.range_summary(table), acc)
    assert verdicts(run)["sec6.1/augmentation_raises_invariance"] == "partly"
    assert "1 of 1 types overall, 0 of 1 beyond the range" in run.claims["sec6.1/augmentation_raises_invariance"][
        "ours"]


def c2_inputs(rigid_close=True, asymmetric=True):
    """Six networks: two baselines, noise, rotation x2, shear; baselines and rotations nearest their twin."""
    names = ["B1", "B2", "N", "R1", "R2", "S"]
    groups = ["baseline", "baseline", "noise", "rotation", "rotation", "shear"]
    pixel, rigid = {0, 1, 2}, {3, 4, 5}
    d = np.zeros((6, 6))
    for i in range(6):
        for j in range(6):
            if i != j:
                same_side = ({i, j} <= pixel) or ({i, j} <= rigid)
                d[i, j] = 0.1 if groups[i] == groups[j] else (0.3 if same_side else 0.6)
                if not rigid_close and ({i, j} <= rigid) and groups[i] != groups[j]:
                    d[i, j] = 0.9
    if asymmetric:
        d[0, 5] += 0.2
    dist = E.Distances(d, names, groups)
    cross = pd.DataFrame([
        dict(kind=k, domain=dom, group=g, inv_l2=l2, eq_l2=l2 / 2)
        for k in ("rotation", "mirror")
        for dom, aug, base in (("train data", 0.2, 0.5), ("fashion_mnist", 0.3, 0.6))
        for g, l2 in ((k, aug), ("baseline", base))])
    return dist, E.knn_rates(dist), E.group_distances(dist), cross


def test_c2_claims_verdicts_from_known_numbers():
    run = results.Run("c9_test", "smoke")
    R.record_c2_claims(run, *c2_inputs())
    assert verdicts(run) == {"sec6.2/same_type_nearest": "reproduced", "sec6.2/transform_groups": "reproduced",
                             "appB.3/asymmetric_distances": "reproduced", "appB.2/invariance_transfers": "reproduced"}
    assert "100% of 4 ordered same-type pairs within 1 of 5" in run.claims["sec6.2/same_type_nearest"]["ours"]
    json.loads(run.save().read_text())
    # rotation and shear far apart, no asymmetry, and the augmented networks no better than the baselines
    dist, knn, groups, cross = c2_inputs(rigid_close=False, asymmetric=False)
    cross.loc[cross.group != "baseline", "inv_l2"] = 0.7
    run = results.Run("c9_test", "smoke")
    R.record_c2_claims(run, dist, knn, groups, cross)
    v = verdicts(run)
    assert v["sec6.2/transform_groups"] == "partly"  # the pixel-wise group still holds
    assert v["appB.3/asymmetric_distances"] == "not reproduced"
    assert v["appB.2/invariance_transfers"] == "not reproduced"
    assert v["sec6.2/same_type_nearest"] == "reproduced"
    run = results.Run("c9_test", "smoke")  # one domain only: the transfer claim is not made
    R.record_c2_claims(run, dist, knn, groups, cross[cross.domain == "train data"])
    assert "appB.2/invariance_transfers" not in run.claims and len(run.claims) == 3


def c3_table(eq_deltas, clean_deltas, control_deltas=None):
    rows = []
    for kind, labels in (("rotation", ["-10", "15"]), ("noise", ["8", "16"])):
        row = dict(type=kind, network=kind, transform="untransformed", original=80.0,
                   finetuned=80.0 + clean_deltas[kind])
        rows.append(row if control_deltas is None else dict(row, control=80.0))
        for i, (label, delta) in enumerate(zip(labels, eq_deltas[kind])):
            row = dict(type=kind, network=kind, transform=label, original=60.0, finetuned=60.0 + delta)
            rows.append(row if control_deltas is None else dict(row, control=60.0 + control_deltas[kind][i]))
    return pd.DataFrame(rows)


BIG, SMALL = 100_000, 100  # evaluation images: one standard error of a difference is ~0.15 or ~4.9 points here


def test_c3_claims_verdicts_from_known_numbers():
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (1.0, 2.0), "noise": (-1.0, -1.0)},
                                     {"rotation": -0.5, "noise": -0.5}), BIG)
    assert verdicts(run) == {"sec6.3/finetuning_raises_equivariance": "partly",  # 1 of 2 types up
                             "sec6.3/clean_accuracy_kept": "reproduced"}
    assert run.claims["sec6.3/finetuning_raises_equivariance"]["ours"].startswith(
        "mean +0.25 ± 0.11 points over 2 types; up for 1, beyond one standard error for 1: rotation +1.50 (±0.2)")
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (1.0, 2.0), "noise": (0.5, 0.1)},
                                     {"rotation": -5.0, "noise": -0.5}), BIG)
    assert verdicts(run) == {"sec6.3/finetuning_raises_equivariance": "reproduced",
                             "sec6.3/clean_accuracy_kept": "partly"}  # mean -2.75
    run = results.Run("c9_test", "smoke")  # the same gains on 100 images: up, but within the noise
    R.record_c3_claims(run, c3_table({"rotation": (1.0, 2.0), "noise": (0.5, 0.1)},
                                     {"rotation": -5.0, "noise": -0.5}), SMALL)
    assert verdicts(run)["sec6.3/finetuning_raises_equivariance"] == "partly"
    assert "up for 2, beyond one standard error for 0" in run.claims["sec6.3/finetuning_raises_equivariance"]["ours"]
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (-1.0, -2.0), "noise": (-0.5, 0.1)},
                                     {"rotation": -5.0, "noise": -3.0}), BIG)
    assert verdicts(run) == {"sec6.3/finetuning_raises_equivariance": "not reproduced",
                             "sec6.3/clean_accuracy_kept": "not reproduced"}
    # with a control: Eq. 7 beats continued training for rotation only (partly), then for both (reproduced)
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (2.0, 2.0), "noise": (1.0, 1.0)}, {"rotation": 0.0, "noise": 0.0},
                                     {"rotation": (0.0, 0.0), "noise": (1.0, 1.0)}), BIG)
    assert verdicts(run)["sec6.3/gain_from_the_loss"] == "partly"
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (2.0, 2.0), "noise": (1.0, 1.0)}, {"rotation": 0.0, "noise": 0.0},
                                     {"rotation": (0.0, 0.0), "noise": (0.0, 0.0)}), BIG)
    assert verdicts(run)["sec6.3/gain_from_the_loss"] == "reproduced"
    run = results.Run("c9_test", "smoke")
    R.record_c3_claims(run, c3_table({"rotation": (2.0, 2.0), "noise": (1.0, 1.0)}, {"rotation": 0.0, "noise": 0.0},
                                     {"rotation": (3.0, 3.0), "noise": (2.0, 2.0)}), BIG)
    assert verdicts(run)["sec6.3/gain_from_the_loss"] == "not reproduced"
    json.loads(run.save().read_text())


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
