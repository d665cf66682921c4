"""invlib.metrics: cosine distance, relative invariance (identity, invariant-by-construction and
non-invariant models), the pairing permutation, the summary quantiles."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from invlib import metrics


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------- cosine distance
def test_cosine_distance():
    a = torch.tensor([[1.0, 0.0], [1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    b = torch.tensor([[0.0, 2.0], [1.0, 1.0], [-1.0, 0.0], [1.0, 1.0]])
    d = metrics.cosine_distance(a, b)
    assert torch.allclose(d, torch.tensor([1.0, 0.0, 2.0, 1 - 1 / math.sqrt(2)]), atol=1e-6)
    # (N, ...) inputs are flattened per row; integer and half inputs are compared in float
    x = torch.randn(5, 2, 3, generator=gen())
    assert torch.allclose(metrics.cosine_distance(x, x.half()), torch.zeros(5), atol=1e-3)
    assert metrics.cosine_distance(x, 3 * x).abs().max() < 1e-6  # scale-free


# ----------------------------------------------------------------------------- relative invariance
def test_identity_transform_scores_one():
    z = torch.randn(100, 8, generator=gen())
    s = metrics.relative_invariance(z, z, generator=gen(1))
    assert s.shape == (100,)
    assert torch.allclose(s, torch.ones(100), atol=1e-5)


def test_explicit_perm():
    z = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    z_t = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    s = metrics.relative_invariance(z, z_t, perm=torch.tensor([1, 0]))
    # sample 0: d(z0, zt0) = 1 - 1/sqrt2, b = d(z0, zt1) = 1; sample 1: d = 0, b = d(z1, zt0) = 1 - 1/sqrt2
    assert torch.allclose(s, torch.tensor([1 / math.sqrt(2), 1.0]), atol=1e-6)
    z3 = torch.eye(3)
    assert torch.allclose(metrics.relative_invariance(z3, z3, perm=torch.tensor([1, 2, 0])), torch.ones(3))
    # a transform as far as another image scores 0; farther scores below 0
    as_far = metrics.relative_invariance(z3, z3[[1, 2, 0]], perm=torch.tensor([1, 2, 0]))  # d = b = 1
    assert torch.allclose(as_far, torch.zeros(3))
    far = metrics.relative_invariance(z3, -z3, perm=torch.tensor([1, 2, 0]))  # d = 2 vs b = 1
    assert torch.allclose(far, -torch.ones(3))


def test_default_perm_is_a_derangement():
    """A fixed point pairs an image with itself: b = 0 and the identity would score 0, not 1."""
    for n in (2, 3, 5, 17):
        z = torch.randn(n, 4, generator=gen(n))
        for seed in range(40):
            s = metrics.relative_invariance(z, z, generator=gen(seed))
            assert torch.allclose(s, torch.ones(n), atol=1e-5), (n, seed, s)


def test_default_perm_is_random_and_seeded():
    z = torch.randn(10, 4, generator=gen())
    z_t = torch.randn(10, 4, generator=gen(1))
    a = metrics.relative_invariance(z, z_t, generator=gen(3))
    assert torch.equal(a, metrics.relative_invariance(z, z_t, generator=gen(3)))
    assert not torch.equal(a, metrics.relative_invariance(z, z_t, generator=gen(4)))


@pytest.mark.parametrize("score", [metrics.relative_invariance, metrics.equivariance_alignment])
def test_pair_scores_check_their_shapes(score):
    with pytest.raises(ValueError, match="same shape"):
        score(torch.randn(4, 3), torch.randn(4, 2))
    with pytest.raises(ValueError, match="N >= 2"):
        score(torch.randn(5, 3), torch.randn(4, 3))
    with pytest.raises(ValueError, match="N >= 2"):
        score(torch.randn(1, 3), torch.randn(1, 3))


# ----------------------------------------------------------------------------- invariance of models
def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16), nn.Tanh(), nn.Linear(16, 5)).eval()


def test_model_identity_transform():
    x = torch.rand(40, 3, 8, 8, generator=gen())
    s = metrics.invariance(mlp(), x, lambda b, g: b)
    assert s.shape == (40,) and torch.allclose(s, torch.ones(40), atol=1e-5)


def pool(b):
    return (b - 0.5).mean((2, 3))  # centred, so the per-image channel means point in varied directions


def test_pooling_model_invariant_to_pixel_permutation_and_flip():
    x = torch.rand(50, 3, 8, 8, generator=gen())
    shuffle = lambda b, g: b.flatten(2)[..., torch.randperm(64, generator=g)].view_as(b)
    flip = lambda b, g: b.flip(-1)
    for t in (shuffle, flip):
        s = metrics.invariance(pool, x, t, batch_size=16)
        assert s.shape == (50,) and s.min() > 0.999, t
    # not so for a model that sees where pixels are
    assert metrics.summary(metrics.invariance(mlp(), x, shuffle))["median"] < 0.9


def test_spectrum_model_invariant_to_circular_shift():
    t = torch.arange(256) / 64
    freq = torch.randint(1, 12, (60, 1), generator=gen())
    x = torch.sin(2 * math.pi * freq * t + torch.rand(60, 1, generator=gen(1)) * 6.3).unsqueeze(1)
    x = x + 0.3 * torch.randn(x.shape, generator=gen(2))

    def spectrum(b):
        return torch.fft.rfft(b, dim=-1).abs().flatten(1)

    def roll(b, g):
        shifts = torch.randint(1, 256, (len(b),), generator=g).tolist()
        return torch.stack([torch.roll(s, k, dims=-1) for s, k in zip(b, shifts)])

    s = metrics.invariance(spectrum, x, roll)
    assert s.min() > 0.999
    # the raw signal is not invariant to the shift
    assert metrics.summary(metrics.invariance(lambda b: b.flatten(1), x, roll))["median"] < 0.5


def test_noninvariant_model_under_strong_transform():
    x = torch.rand(200, 1, 8, 8, generator=gen(5))  # not seed 0: invariance()'s draws would repeat x
    identity = lambda b: b.flatten(1) - 0.5
    noise = lambda b, g: torch.rand(b.shape, generator=g)
    s = metrics.invariance(identity, x, noise)
    summ = metrics.summary(s)
    assert summ["median"] < 0.3 and summ["q75"] < 0.5


def test_invariance_seed_and_batching():
    x = torch.rand(30, 1, 8, 8, generator=gen())
    model = lambda b: b.flatten(1) - 0.5
    jitter = lambda b, g: b + 0.2 * torch.randn(b.shape, generator=g)
    a = metrics.invariance(model, x, jitter, seed=1)
    assert torch.equal(a, metrics.invariance(model, x, jitter, seed=1))
    assert not torch.equal(a, metrics.invariance(model, x, jitter, seed=2))
    big = metrics.invariance(model, x, lambda b, g: b, batch_size=7)  # batches of 7: still all pairs
    assert torch.allclose(big, torch.ones(30), atol=1e-5)
    assert 0 < float(a.median()) < 1  # mild noise: partly invariant


# ----------------------------------------------------------------------------- the model's device
class OnMeta(nn.Module):
    """A model whose parameters live on the 'meta' device. Like a CUDA model given CPU batches, it refuses
    inputs from another device; it answers with CPU representations, fixed per batch (invariance() calls it on
    a batch, then on its transform)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(3, device="meta"))
        self.seen = []

    def forward(self, x, scale=1.0):
        if x.device != self.w.device:
            raise RuntimeError(f"expected an input on {self.w.device}, got one on {x.device}")
        self.seen.append(x.device.type)
        return scale * torch.randn(len(x), 3, generator=gen((len(self.seen) - 1) // 2))


def test_invariance_runs_the_model_on_its_own_device():
    x = torch.rand(10, 1, 4, 4, generator=gen())
    devices = []

    def identity(b, g):  # the transform gets the batch where x is, with the CPU generator
        devices.append(b.device.type)
        return b

    model = OnMeta()
    s = metrics.invariance(model, x, identity, batch_size=4)
    assert torch.allclose(s, torch.ones(10), atol=1e-5)
    assert set(model.seen) == {"meta"} and len(model.seen) == 6 and set(devices) == {"cpu"}


def test_invariance_finds_the_device_through_partial_and_bound_methods_or_takes_it():
    import functools

    x, same = torch.rand(6, 2, generator=gen()), lambda b, g: b
    model = OnMeta()
    for rep in (functools.partial(model, scale=2.0), model.forward):
        assert torch.allclose(metrics.invariance(rep, x, same), torch.ones(6), atol=1e-5)
    with pytest.raises(RuntimeError, match="expected an input on meta"):  # a lambda hides the module...
        metrics.invariance(lambda b: model(b), x, same)
    s = metrics.invariance(lambda b: model(b), x, same, device="meta")  # ...so its device is given
    assert torch.allclose(s, torch.ones(6), atol=1e-5)


# ----------------------------------------------------------------------------- summary
def test_summary():
    assert metrics.summary(torch.arange(101.0)) == {"median": 50.0, "q25": 25.0, "q75": 75.0, "mean": 50.0}
    s = metrics.summary(torch.tensor([4, 1, 3, 2]))  # integers; linear interpolation between order statistics
    assert s == pytest.approx({"median": 2.5, "q25": 1.75, "q75": 3.25, "mean": 2.5})
    assert all(isinstance(v, float) for v in s.values())


# ----------------------------------------------------------------------------- equivariance alignment
def test_alignment_of_random_responses_is_about_zero():
    """D made of independent random rows: shuffling its columns changes nothing, the score is ~0."""
    z = torch.randn(400, 16, generator=gen())
    for seed in range(3):
        d = torch.randn(400, 16, generator=gen(10 + seed))
        assert abs(metrics.equivariance_alignment(z, z + d, gen(seed))) < 0.05


def test_alignment_of_responses_along_one_direction():
    """Every response along the same direction v, with log-normally varying lengths: clearly aligned."""
    z = torch.randn(400, 16, generator=gen())
    v = torch.randn(16, generator=gen(1))
    s = torch.randn(400, 1, generator=gen(2))
    score = metrics.equivariance_alignment(z, z - s.exp() * v, gen(3))
    assert score > 0.3
    # the baseline is random: another generator gives about the same score; the same one the same score
    assert score == metrics.equivariance_alignment(z, z - s.exp() * v, gen(3))
    assert abs(score - metrics.equivariance_alignment(z, z - s.exp() * v, gen(4))) < 0.05


def test_alignment_of_identity_is_exactly_zero():
    z = torch.randn(50, 8, generator=gen())
    assert metrics.equivariance_alignment(z, z, gen(1)) == 0.0
    assert metrics.equivariance_alignment(z, z.clone()) == 0.0  # no generator: still 0


def test_alignment_of_a_linear_equivariant_model():
    """f(x) = W vec(x) and x -> x + a_i p (a fixed pattern, a per-image log-normal amount): every response is
    -a_i W p, along one direction."""
    w = torch.randn(16, 64, generator=gen())
    f = lambda b: b.flatten(1) @ w.T
    x = torch.rand(400, 1, 8, 8, generator=gen(1))
    p = torch.rand(1, 8, 8, generator=gen(2))
    a = torch.randn(400, 1, 1, 1, generator=gen(3)).exp()
    assert metrics.equivariance_alignment(f(x), f(x + a * p), gen(4)) > 0.3
    # an unstructured change of the images is not aligned
    noise = torch.randn(x.shape, generator=gen(5))
    assert abs(metrics.equivariance_alignment(f(x), f(x + noise), gen(4))) < 0.05


# ----------------------------------------------------------------------------- ranks and rank correlation
def test_rank_ties_share_the_average_rank_and_batches():
    assert metrics.rank(torch.tensor([10.0, 30.0, 20.0, 20.0])).tolist() == [0.0, 3.0, 1.5, 1.5]
    assert metrics.rank([4, 4, 4]).tolist() == [1.0, 1.0, 1.0]  # lists and integers; all tied
    x = torch.tensor([[3.0, 1, 2, 2], [5, 5, 5, 0], [0, 1, 2, 3]])
    r = metrics.rank(x)
    assert r.dtype == torch.float64 and r.shape == (3, 4)
    assert r.tolist() == [[3.0, 0.0, 1.5, 1.5], [2.0, 2.0, 2.0, 0.0], [0.0, 1.0, 2.0, 3.0]]
    # batched over two leading dimensions, each row ranked on its own; the ranks of a row always sum to N(N-1)/2
    y = torch.randint(0, 5, (2, 3, 7), generator=gen()).float()
    ry = metrics.rank(y)
    assert torch.equal(ry[1, 2], metrics.rank(y[1, 2]))
    assert torch.allclose(ry.sum(-1), torch.full((2, 3), 21.0, dtype=torch.float64))


def test_spearman():
    a = torch.randn(20, generator=gen())
    assert float(metrics.spearman(a, a)) == pytest.approx(1.0)
    assert float(metrics.spearman(a, -a)) == pytest.approx(-1.0)
    # invariant to strictly increasing transforms of either side
    b = torch.randn(20, generator=gen(1))
    rho = float(metrics.spearman(a, b))
    assert float(metrics.spearman(a.exp(), b ** 3 + 5)) == pytest.approx(rho)
    assert float(metrics.spearman(a, -b)) == pytest.approx(-rho)
    # by hand, with ties: ranks (0, 1, 2, 3, 4) and (0, 1.5, 1.5, 4, 3): 8.5 / sqrt(10 * 9.5)
    hand = float(metrics.spearman(torch.tensor([1.0, 2, 3, 4, 5]), torch.tensor([1.0, 2, 2, 4, 3])))
    assert hand == pytest.approx(8.5 / math.sqrt(95))
    # batched, and NaN where one side is constant
    batch = metrics.spearman(torch.stack([a, a]), torch.stack([a, -a]))
    assert batch.shape == (2,) and batch.tolist() == pytest.approx([1.0, -1.0])
    assert math.isnan(float(metrics.spearman(a, torch.ones(20))))


def test_rank_correlation_test():
    a = torch.randn(40, generator=gen())
    rho, p = metrics.rank_correlation_test(a, a ** 3 + 0.1 * torch.randn(40, generator=gen(1)), permutations=2000)
    assert rho > 0.9 and p < 0.01
    assert p >= 1 / 2001  # a permutation p-value is never 0
    rho, p = metrics.rank_correlation_test(a.tolist(), (-a).numpy(), permutations=2000)  # lists and arrays
    assert rho == pytest.approx(-1.0) and p < 0.01
    # independent samples (this seed): not significant; the same seed gives the same p-value
    b = torch.randn(40, generator=gen(7))
    rho, p = metrics.rank_correlation_test(a, b, permutations=2000, seed=3)
    assert abs(rho) < 0.3 and p > 0.05
    assert (rho, p) == metrics.rank_correlation_test(a, b, permutations=2000, seed=3)
    assert rho == pytest.approx(float(metrics.spearman(a, b)))


def test_rank_correlation_test_shape_checks():
    with pytest.raises(ValueError, match="same length >= 3"):
        metrics.rank_correlation_test(torch.randn(5), torch.randn(4))
    with pytest.raises(ValueError, match="same length >= 3"):
        metrics.rank_correlation_test(torch.randn(2), torch.randn(2))
    with pytest.raises(ValueError, match="same length >= 3"):
        metrics.rank_correlation_test(torch.randn(2, 5), torch.randn(2, 5))


# ----------------------------------------------------------------------------- iou, sem
def test_iou():
    assert metrics.iou(["rotate", "color"], ["color", "invert", "solarize"]) == 0.25
    assert metrics.iou("abc", "cab") == 1.0  # taken as sets
    assert metrics.iou([1, 1, 2], [3]) == 0.0
    assert metrics.iou([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(2 / 6)
    assert metrics.iou([], []) == 1.0


def test_sem():
    assert metrics.sem([1.0, 2.0, 3.0, 4.0]) == pytest.approx(math.sqrt(5 / 3) / 2)  # std (n - 1) = sqrt(5/3)
    assert metrics.sem(torch.tensor([[2.0, 2.0], [2.0, 2.0]])) == 0.0  # flattened
    # a read-only array (what pandas hands out) is copied, not wrapped: no "not writable" warning in B5/B6
    frozen = np.array([1.0, 2.0, 3.0, 4.0])
    frozen.flags.writeable = False
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert metrics.sem(frozen) == pytest.approx(math.sqrt(5 / 3) / 2)
    assert metrics.sem([1, 3]) == pytest.approx(1.0)  # std sqrt(2), n = 2
    assert math.isnan(metrics.sem([5.0])) and math.isnan(metrics.sem([]))


def test_rank_tests_refuse_nan_and_constant_samples():
    with pytest.raises(ValueError, match="NaN"):
        metrics.rank(torch.tensor([1.0, float("nan"), 2.0]))
    with pytest.raises(ValueError, match="NaN"):
        metrics.rank_correlation_test([1, 2, float("nan"), 4, 5], [1, 2, 3, 4, 5])
    rho, p = metrics.rank_correlation_test([1, 2, 3, 4, 5], [2, 2, 2, 2, 2])  # no ranking: not "significant"
    assert math.isnan(rho) and math.isnan(p)


def test_per_class_comparisons_count_every_pair_of_runs():
    acc = metrics.per_class_accuracy(torch.tensor([0, 0, 1, 1, 2]), torch.tensor([0, 1, 1, 1, 0]), 3)
    assert acc[0] == 0.5 and acc[1] == pytest.approx(2 / 3) and np.isnan(acc[2])
    with pytest.raises(ValueError, match="same length"):
        metrics.per_class_accuracy([0, 1], [0], 2)
    # class 0: a (RRC) below b in 3 of 4 comparisons, by 10, 20 and 10 points; class 1: never below
    c = metrics.class_comparison([[50.0, 90.0], [70.0, 95.0]], [[60.0, 80.0], [80.0, 80.0]])
    assert c["comparisons"] == 4
    assert c["hurt"].tolist() == [0.75, 0.0] and c["helped"].tolist() == [0.25, 1.0]
    assert c["loss"][0] == pytest.approx((10 + 30 + 10) / 3) and np.isnan(c["loss"][1])
    with pytest.raises(ValueError, match="same classes"):
        metrics.class_comparison([[1.0, 2.0]], [[1.0, 2.0, 3.0]])


def test_helped_samples_and_their_mean_iou():
    y = np.array([0, 1, 2, 3])
    assert metrics.helped([1, 1, 0, 0], [0, 1, 2, 0], y).tolist() == [0, 2]
    assert metrics.helped(y, y, y).tolist() == []
    assert metrics.mean_iou([[1, 2], [1, 2], [3]]) == pytest.approx((1 + 0 + 0) / 3)
    assert metrics.mean_iou([[1]], [[1], [2]]) == 0.5
    with pytest.raises(ValueError, match="at least one pair"):
        metrics.mean_iou([[1, 2]])


# ----------------------------------------------------------------------------- learned maps (paper C)
def relu_features(n, d, seed):
    """Non-negative features, each dimension scaled to RMS 1 (as paper C's fc7 after rms_scale)."""
    r = torch.relu(torch.randn(n, d, generator=gen(seed)))
    return r / metrics.rms_scale(r)


def test_rms_scale_and_normalized_l2():
    r = torch.tensor([[3.0, 0.0, 1.0], [4.0, 0.0, -1.0]])
    assert torch.allclose(metrics.rms_scale(r), torch.tensor([math.sqrt(12.5), 1.0, 1.0]))
    scaled = relu_features(500, 7, 0)
    assert torch.allclose(scaled.pow(2).mean(0), torch.ones(7), atol=1e-5)
    a = torch.tensor([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    b = torch.tensor([[3.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    assert torch.allclose(metrics.normalized_l2(a, b), torch.tensor([0.8, 0.0, 1.0]))  # 0 where both are 0
    assert torch.allclose(metrics.normalized_l2(a, 2 * a), torch.tensor([1.0, 0.0, 1.0]))  # relative to ||r||
    # batched over leading dimensions: (G, N, D) against (N, D)
    assert torch.allclose(metrics.normalized_l2(a, torch.stack([a, b])), torch.stack([torch.zeros(3),
                                                                                     metrics.normalized_l2(a, b)]))


def test_linear_maps_start_near_the_identity_and_keep_shapes():
    r = relu_features(10, 6, 1)
    maps = metrics.LinearMaps(3, 6, init_std=0.0)
    assert torch.equal(maps(r), r.expand(3, -1, -1))  # ReLU(r + 0 r + 0) = r for r >= 0
    assert metrics.LinearMaps(3, 6)(torch.stack([r, r, r])).shape == (3, 10, 6)
    e = metrics.LinearMaps(2, 6, 4, residual=False)
    assert e(r).shape == (2, 10, 4) and e.weight.shape == (2, 4, 6)
    with torch.no_grad():
        e.weight.zero_()
        e.bias.fill_(-1.0)
    assert torch.equal(e(r), torch.zeros(2, 10, 4))  # the ReLU
    with pytest.raises(ValueError, match="A residual map keeps the width"):
        metrics.LinearMaps(1, 6, 4)


@pytest.mark.usefixtures("one_thread")
def test_fit_maps_recovers_a_known_linear_map_and_not_an_unrelated_target():
    n, d, fit = 1000, 16, 800
    r = relu_features(n, d, 0)
    a = torch.eye(d) + 0.2 * torch.randn(d, d, generator=gen(1))
    b = 0.1 * torch.randn(d, generator=gen(2))
    target = torch.relu(r @ a.T + b)
    unrelated = relu_features(n, d, 3)  # independent of the target
    maps = metrics.fit_maps(torch.stack([r[:fit], unrelated[:fit]]), target[:fit], residual=True, epochs=3,
                            batch_size=32)
    assert not maps.weight.requires_grad
    with torch.no_grad():
        err = metrics.normalized_l2(target[fit:], maps(torch.stack([r[fit:], unrelated[fit:]]))).mean(-1)
    identity_err = metrics.normalized_l2(target[fit:], r[fit:]).mean()
    assert identity_err > 0.3  # the target is far from the input: the map has work to do
    assert err[0] < 0.05  # held-out rows: the map is recovered
    assert err[1] > 0.3 and err[1] > 5 * err[0]
    # the residual parametrisation: the learned W is A - I and b is b (where the units are active)
    torch.testing.assert_close(maps.weight[0] + torch.eye(d), a, atol=0.1, rtol=0)


@pytest.mark.usefixtures("one_thread")
def test_fit_maps_targets_per_group_seed_and_errors():
    r = relu_features(200, 5, 0)
    t = torch.stack([r, 2 * r])  # one target per map: the identity and a doubling
    maps = metrics.fit_maps(torch.stack([r, r]), t, epochs=10, batch_size=32)
    with torch.no_grad():
        err = metrics.normalized_l2(t, maps(r)).mean(-1)
    assert (err < 0.05).all()
    again = metrics.fit_maps(torch.stack([r, r]), t, epochs=10, batch_size=32)
    other = metrics.fit_maps(torch.stack([r, r]), t, epochs=2, batch_size=32, seed=1)
    assert torch.equal(maps.weight, again.weight) and not torch.equal(maps.weight, other.weight)
    with pytest.raises(ValueError, match=r"inputs must be \(G, N, D_in\)"):
        metrics.fit_maps(r, r)
    with pytest.raises(ValueError, match="targets must be"):
        metrics.fit_maps(torch.stack([r]), r[:100])
    with pytest.raises(ValueError, match="Unknown loss 'l1'. Valid losses: l2, ce"):
        metrics.fit_maps(torch.stack([r]), r, loss="l1")
    with pytest.raises(ValueError, match="needs the frozen classifier head and the labels"):
        metrics.fit_maps(torch.stack([r]), r, loss="ce")


@pytest.mark.usefixtures("one_thread")
def test_fit_maps_with_the_classifier_loss_restores_the_predictions():
    """loss='ce' (Sec. 3.3's alternative): the map is fitted so the frozen head classifies mapped features right."""
    n, d, k = 600, 8, 4
    r = relu_features(n, d, 0)
    head = nn.Linear(d, k)
    with torch.no_grad():
        head.weight.copy_(torch.randn(k, d, generator=gen(1)))
        head.bias.zero_()
    perm = torch.randperm(d, generator=gen(2))
    moved = r[:, perm]  # the transform shuffles the feature dimensions
    labels = head(r).argmax(1).detach()
    before = (head(moved).argmax(1) == labels).float().mean()
    maps = metrics.fit_maps(torch.stack([moved[:400]]), r[:400], epochs=5, batch_size=32, loss="ce", head=head,
                            labels=labels[:400])
    with torch.no_grad():
        after = (head(maps(moved[400:])[0]).argmax(1) == labels[400:]).float().mean()
    assert after > before + 0.2 and after > 0.8


@pytest.mark.usefixtures("one_thread")
def test_representation_distances_of_synthetic_features():
    a = relu_features(300, 6, 0)
    wide = relu_features(300, 10, 1)  # another width: fitted apart, still compared
    d = metrics.representation_distances([a, a.clone(), relu_features(300, 6, 2), wide], fit=200, epochs=20,
                                         batch_size=32)
    assert d.shape == (4, 4) and torch.equal(d.diagonal(), torch.zeros(4))
    assert d[0, 1] < 0.05 and d[1, 0] < 0.05  # the same representation: predicted from itself
    assert d[0, 2] > 0.3 and d[0, 3] > 0.3 and d[3, 0] > 0.3  # independent ones: not
    assert d[0, 2] > 10 * d[0, 1]
    with pytest.raises(ValueError, match="0 < fit < N"):
        metrics.representation_distances([a, a], fit=300)
    with pytest.raises(ValueError, match="share N rows"):
        metrics.representation_distances([a, a[:200]], fit=100)


def test_knn_same_group_rate_on_a_hand_made_matrix():
    # every item's nearest neighbour is of the other group; its group partner comes second
    d = np.array([[0, 5, 1, 6], [5, 0, 6, 1], [1, 6, 0, 5], [6, 1, 5, 0]], dtype=float)
    r = metrics.knn_same_group_rate(d, ["a", "a", "b", "b"])
    assert r["k"] == [1, 2, 3] and r["rate"] == [0.0, 1.0, 1.0] and r["pairs"] == 4
    assert r["chance"] == pytest.approx([1 / 3, 2 / 3, 1.0])
    # one group close, the other not: half of the ordered pairs within 1
    d2 = np.array([[0, 1, 5, 6], [1, 0, 6, 5], [5, 6, 0, 9], [6, 5, 9, 0]], dtype=float)
    r = metrics.knn_same_group_rate(d2, ["a", "a", "b", "b"], ks=[1, 2])
    assert r["k"] == [1, 2] and r["rate"] == [0.5, 0.5]
    # the diagonal never counts (even a negative one), singletons have no pairs
    d3 = d2 - 10 * np.eye(4)
    r = metrics.knn_same_group_rate(d3, ["a", "a", "b", "c"], ks=[1])
    assert r["pairs"] == 2 and r["rate"] == [1.0]
    r = metrics.knn_same_group_rate(d2, ["a", "b", "c", "d"], ks=[1])
    assert r["pairs"] == 0 and math.isnan(r["rate"][0])
    with pytest.raises(ValueError, match=r"distance must be \(M, M\) and groups M long"):
        metrics.knn_same_group_rate(d, ["a", "b"])
