"""invlib.metrics: cosine distance, relative invariance (identity, invariant-by-construction and
non-invariant models), the pairing permutation, the summary quantiles."""

import math

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


def test_relative_invariance_shape_checks():
    with pytest.raises(ValueError, match="same shape"):
        metrics.relative_invariance(torch.randn(4, 3), torch.randn(4, 2))
    with pytest.raises(ValueError, match="N >= 2"):
        metrics.relative_invariance(torch.randn(5, 3), torch.randn(4, 3))
    with pytest.raises(ValueError, match="N >= 2"):
        metrics.relative_invariance(torch.randn(1, 3), torch.randn(1, 3))


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
