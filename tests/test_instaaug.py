"""InstaAug's invariance module (invlib.learned.instaaug): crops, sampler, entropy, band, objective, TTA."""

import math

import pytest
import torch
from torch import nn

from invlib import models, train
from invlib.learned import instaaug as I


def _trunk(k=4, c=3):
    return models.create("conv4", num_classes=k, in_chans=c, widths=(8, 8, 8, 8))


def test_lrp_crops_cover_the_image_and_probabilities_sum_to_one():
    lrp = I.LRPCrops(64)
    assert lrp.num_crops == 16 * 16 + 8 * 8 + 1  # the authors' 321 at 64 px
    logp = lrp(torch.rand(3, 3, 64, 64))
    assert torch.allclose(logp.exp().sum(1), torch.ones(3), atol=1e-5)
    pix = (torch.arange(64) + 0.5) / 64
    for layer in range(len(lrp.cells)):
        b = lrp.boxes[lrp.layer == layer]
        inside_x = ((pix[:, None] - b[:, 0]).abs() <= b[:, 2] / 2)  # (64, M): pixel column inside crop m
        inside_y = ((pix[:, None] - b[:, 1]).abs() <= b[:, 2] / 2)
        covered = (inside_y.float() @ inside_x.float().T) > 0  # (row, col) covered by some crop of the layer
        assert covered.all(), f"layer {layer} leaves pixels uncovered"
    assert lrp.boxes[-1].tolist() == [0.5, 0.5, 1.0]


def test_initial_layer_masses_follow_the_layer_biases():
    lrp = I.LRPCrops(64)
    with torch.no_grad():
        for b in lrp.position_bias:
            b.zero_()
        for h in [*lrp.heads, lrp.global_head]:
            h.weight.zero_()
        p = lrp(torch.rand(2, 3, 64, 64)).exp()
    mass = torch.stack([p[:, lrp.layer == i].sum(1) for i in range(3)], 1)
    expected = torch.tensor([1.0, math.e, math.e ** 3])
    assert torch.allclose(mass, (expected / expected.sum()).expand(2, 3), atol=1e-5)


def test_crop_box_selects_its_region():
    x = torch.zeros(1, 1, 8, 8)
    x[..., 0:4, 4:8] = 1.0  # top-right quadrant bright
    out = I.crop(x, torch.tensor([[0.75, 0.25, 0.5]]))  # centre x 0.75, y 0.25
    assert out.mean() > 0.85  # bilinear edges blend with the neighbours
    assert I.crop(x, torch.tensor([[0.25, 0.75, 0.5]])).mean() < 0.15
    with pytest.raises(ValueError, match="boxes must be"):
        I.crop(x, torch.zeros(2, 3))


def test_crop_is_affine_grid_bit_for_bit_and_keeps_its_pathwise_gradient():
    g = torch.Generator().manual_seed(0)
    for size in (16, 31, 56):
        x, boxes = torch.rand(20, 3, size, size, generator=g), torch.rand(20, 3, generator=g) + 0.1
        side, zero = boxes[:, 2], torch.zeros(20)
        theta = torch.stack([torch.stack([side, zero, 2 * boxes[:, 0] - 1], -1),
                             torch.stack([zero, side, 2 * boxes[:, 1] - 1], -1)], -2)
        grid = torch.nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
        ref = torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        assert torch.equal(I.crop(x, boxes), ref), size
    theta = torch.zeros(2, 3, requires_grad=True)  # side, x, y of the uniform parameterisation
    I.apply_uniform(torch.rand(2, 3, 8, 8), I.CROP_OPS, theta + 0.1).sum().backward()
    assert theta.grad is not None and theta.grad.abs().sum() > 0


def test_entropy_equals_a_monte_carlo_estimate():
    g = torch.Generator().manual_seed(0)
    logp = torch.log_softmax(torch.randn(3, 50, generator=g) * 2, 1)
    idx = I.sample_categorical(logp, 40_000, g)
    mc = -logp.gather(1, idx.T).mean(1)
    assert torch.allclose(I.entropy(logp), mc, atol=0.03)
    assert I.entropy(torch.tensor([[0.0, -math.inf]])).item() == 0.0


@pytest.mark.parametrize("method", ["gumbel", "multinomial"])
def test_sampler_frequencies_match_the_probabilities(method):
    p = torch.tensor([[0.4, 0.3, 0.15, 0.1, 0.05]])
    n = 100_000
    idx = I.sample_categorical(p.log(), n, torch.Generator().manual_seed(1), method)
    freq = torch.bincount(idx.flatten(), minlength=5) / n
    # 5 sigma of a binomial share
    assert ((freq - p[0]).abs() <= 5 * (p[0] * (1 - p[0]) / n).sqrt()).all(), (method, freq)


def test_the_authors_exponential_sampler_fails_the_same_test():
    p = torch.tensor([[0.4, 0.3, 0.15, 0.1, 0.05]])
    n = 100_000
    idx = I.sample_categorical(p.log(), n, torch.Generator().manual_seed(1), "exponential")
    freq = torch.bincount(idx.flatten(), minlength=5) / n
    assert not ((freq - p[0]).abs() <= 5 * (p[0] * (1 - p[0]) / n).sqrt()).all()
    assert freq[0] > p[0, 0] + 0.05  # it over-samples the most likely item


def test_entropy_band_follows_the_rule_on_scripted_entropies():
    band = I.EntropyBand(3.0, 3.5, lam0=0.2, factor=1.2, tol=0.005, max_steps=50)
    script = [2.0, 2.0, 2.003, 2.1, 2.1, 3.2, 2.9, 2.9, 4.0, 4.0, 3.998, 3.9, 3.9]
    # below: first check notes it; then raise unless it rose by > 0.005; inside resets; above mirrors
    factors = [1, 1.2, 1.2, 1, 1.2, 1, 1, 1.2, 1, 1 / 1.2, 1 / 1.2, 1, 1 / 1.2]
    lam, expected = 0.2, []
    for f in factors:
        lam *= f
        expected.append(lam)
    assert [band.step(h) for h in script] == pytest.approx(expected)
    assert [h for _, h, _ in band.history] == script


def test_entropy_band_caps_the_net_steps():
    band = I.EntropyBand(3.0, 3.5, lam0=1.0, max_steps=3)
    for _ in range(10):
        band.step(0.0)
    assert band.lam == pytest.approx(1.2 ** 3)
    fixed = I.EntropyBand(-math.inf, math.inf, lam0=0.05)
    assert [fixed.step(h) for h in (0.0, 9.0, 0.0)] == [0.05] * 3
    with pytest.raises(ValueError):
        I.EntropyBand(3.5, 3.0)


def test_entropy_band_averages_what_it_observed():
    band = I.EntropyBand(3.0, 3.5)
    band.observe(2.0, 10)
    band.observe(4.0, 30)
    band.step()
    assert band.history[-1][1] == pytest.approx(3.5)


def test_zero_width_uniform_range_is_the_identity():
    ops = ("side", "x", "y", "rotate", "hue", "saturation", "value")
    x = torch.rand(3, 3, 16, 16)
    assert torch.allclose(I.apply_uniform(x, ops, torch.zeros(3, len(ops))), x, atol=1e-5)
    ranges = I.UniformRanges(ops)
    with torch.no_grad():
        ranges.head.bias.fill_(-1e4)
    low, high = ranges(x)
    assert (high - low).abs().max() < 1e-6
    aug = I.InstaAugment(ranges)
    assert torch.allclose(aug(x), x, atol=1e-5)


def test_uniform_bounds_start_at_the_authors_value_and_are_asymmetric():
    r = I.UniformRanges(("rotate",), input_free=True)
    low, high = r(torch.rand(2, 3, 16, 16))
    assert high[0, 0].item() == pytest.approx(torch.sigmoid(torch.tensor(-2.0)).item() * math.pi, abs=1e-5)
    with torch.no_grad():
        r.head.bias[0] = 3.0  # the upper bound alone
    low, high = r(torch.rand(2, 3, 16, 16))
    assert high[0, 0] > -low[0, 0] + 1
    with pytest.raises(ValueError, match="Valid uniform ops"):
        I.UniformRanges(("rotation",))


def test_uniform_rotation_uses_the_transforms_sign():
    from invlib import transforms as T
    x = torch.rand(2, 3, 16, 16)
    theta = torch.tensor([[0.3], [-0.5]])
    assert torch.allclose(I.apply_uniform(x, ("rotate",), theta), T.apply("rotate", x, torch.rad2deg(theta[:, 0])))


def test_uniform_draw_is_reparameterised():
    aug = I.InstaAugment(I.UniformRanges(("rotate", "value")))
    d = aug.draw(torch.rand(4, 3, 16, 16))
    d.views.sum().backward()
    assert d.log_prob is None and aug.params.head.bias.grad.abs().sum() > 0


def test_tta_with_the_identity_equals_a_plain_forward():
    net = I.instaaug(_trunk(), I.LRPCrops(32), copies=5).eval()
    with torch.no_grad():
        net.augment.params.global_head.bias.fill_(1e4)  # all mass on the whole image
        x = torch.rand(4, 3, 32, 32)
        plain = net.trunk(x)
        assert torch.allclose(net(x), plain, atol=1e-4)
        assert torch.allclose(I.predict(net, x, 1, select="top"), plain, atol=1e-4)  # the most likely: whole
    with pytest.raises(ValueError, match="at most"):
        I.predict(net, x, 1000, select="top")


def test_top_selection_takes_the_most_likely_crops():
    net = I.instaaug(nn.Sequential(nn.Flatten(), nn.LazyLinear(2)), I.LRPCrops(32)).eval()
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        logp = net.augment.distribution(x)
        top = logp.topk(3, 1).indices.T
        views = I.crop(x.repeat(3, 1, 1, 1), net.augment.params.boxes[top.flatten()])
        expected = net.trunk(views).view(3, 2, -1).mean(0)
        assert torch.allclose(I.predict(net, x, 3, "top"), expected, atol=1e-6)


def test_input_free_module_gives_one_distribution_for_all_inputs():
    lrp = I.LRPCrops(32, input_free=True)
    logp = lrp(torch.rand(3, 3, 32, 32))
    assert torch.allclose(logp[0], logp[1]) and torch.allclose(logp[0], logp[2])
    dep = I.LRPCrops(32)
    logp = dep(torch.rand(3, 3, 32, 32) * torch.tensor([0.0, 1.0, 5.0]).view(3, 1, 1, 1))
    assert not torch.allclose(logp[0], logp[2])


def _zeros_batch_forward(net):
    """A ModuleNet's forward on the whole batch of zeros (what ``input_free`` computed before its one-image pass)."""
    def forward(x):
        out, maps = net.stem(x * 0), []
        for block in net.blocks:
            out = block(out)
            maps.append(out)
        return maps
    return forward


@pytest.mark.slow
@pytest.mark.parametrize("size", [56, 32])
def test_input_free_module_trains_as_on_the_whole_batch_of_zeros(size):
    torch.manual_seed(0)
    one = I.LRPCrops(size, input_free=True)
    with torch.no_grad():  # BatchNorm's shifts away from 0, so that zeros make maps that vary over the image
        for m in one.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.bias.normal_()
    ref = I.LRPCrops(size, input_free=True)  # the whole batch of zeros, in float64: the truth both round
    ref.load_state_dict(one.state_dict())
    ref.net.forward = _zeros_batch_forward(ref.net)
    ref.double()
    x = torch.rand(16, 3, size, size).contiguous(memory_format=torch.channels_last)
    weights = torch.randn(16, one.num_crops)
    outs = [one.train()(x), ref.train()(x.double())]
    assert torch.allclose(outs[0].double(), outs[1], atol=1e-5)
    (outs[0] * weights).sum().backward()
    (outs[1] * weights.double()).sum().backward()
    for (name, a), b in zip(one.named_parameters(), ref.parameters()):  # float32's rounding of the same gradients
        assert torch.allclose(a.grad.double(), b.grad, rtol=0, atol=1e-3 * float(b.grad.abs().max())), name
    stats = [(m.running_var, n.running_var) for m, n in zip(one.modules(), ref.modules())
             if isinstance(m, nn.BatchNorm2d)]
    assert sum(bool((b < 0.99).any()) for _, b in stats) >= 4  # most layers' variances moved: the check reads them
    for a, b in stats:  # Bessel's correction counts the batch's values, not one image's (off by up to 2 % without)
        assert torch.allclose(a.double(), b, rtol=1e-5, atol=1e-7)
    x = torch.rand(4, 3, size, size)
    assert torch.allclose(one.eval()(x).double(), ref.eval()(x.double()), atol=1e-5)


def test_class_crops_read_the_label_and_are_uniform_without_it():
    cc = I.ClassCrops(3, I.LRPCrops(32))
    with torch.no_grad():
        cc.table[1, 0] = 50.0
    aug = I.InstaAugment(cc)
    x = torch.rand(2, 3, 32, 32)
    assert aug.distribution(x, torch.tensor([1, 0])).exp()[0, 0] > 0.99
    assert torch.allclose(aug.distribution(x).exp(), torch.full((2, cc.num_crops), 1 / cc.num_crops))


class _Brightness(nn.Module):
    """logits (0, 8 * mean brightness): a fixed trunk whose loss depends on the crop."""

    def forward(self, x):
        m = x.mean((1, 2, 3))
        return torch.stack([torch.zeros_like(m), 8 * m], 1)


def test_reinforce_gradient_matches_a_finite_difference_estimate():
    torch.manual_seed(0)
    img = torch.zeros(1, 1, 16, 16)
    img[..., :8, :8] = 1.0
    like = I.LRPCrops(16, in_chans=1, channels=(4, 4, 4), crop_layers=(1,), sides=(0.5,), layer_bias=(0.0, 1.0))
    cc = I.ClassCrops(1, like)
    with torch.no_grad():
        cc.table.copy_(torch.randn_like(cc.table))
    net = I.InstaAug(I.InstaAugment(cc), _Brightness(), frozen=True)
    y = torch.zeros(1, dtype=torch.long)

    def exact(table):  # E_p[CE] over every crop, in closed form
        views = I.crop(img.expand(cc.num_crops, -1, -1, -1), cc.boxes)
        ce = nn.functional.cross_entropy(net.trunk(views), y.expand(cc.num_crops), reduction="none")
        return (torch.softmax(table[0], 0) * ce).sum()

    eps, fd = 1e-3, torch.zeros(cc.num_crops)
    with torch.no_grad():
        for m in range(cc.num_crops):
            t = cc.table.clone()
            t[0, m] += eps
            up = exact(t)
            t[0, m] -= 2 * eps
            fd[m] = (up - exact(t)) / (2 * eps)
    n = 20_000
    loss = I.objective(I.EntropyBand(-math.inf, math.inf, lam0=0.0), check_every=0, baseline="mean")
    value, _ = loss(net.train(), img.expand(n, -1, -1, -1), y.expand(n))
    grad = torch.autograd.grad(value, cc.table)[0][0]
    assert torch.allclose(grad, fd, atol=0.02), (grad, fd)
    assert fd.abs().max() > 0.1  # the test has a gradient to find


def test_entropy_term_pushes_the_distribution_wider():
    cc = I.ClassCrops(1, I.LRPCrops(16, in_chans=1, channels=(4, 4, 4), crop_layers=(1,), sides=(0.5,),
                                    layer_bias=(0.0, 1.0)))
    net = I.InstaAug(I.InstaAugment(cc), _Brightness(), frozen=True)
    x, y = torch.rand(8, 1, 16, 16), torch.zeros(8, dtype=torch.long)
    h0 = I.entropy(cc(y[:1])).item()
    opt = torch.optim.SGD(cc.parameters(), lr=1.0)
    loss = I.objective(I.EntropyBand(-math.inf, math.inf, lam0=10.0), check_every=0)
    for _ in range(20):
        value, _ = loss(net.train(), x, y)
        opt.zero_grad()
        value.backward()
        opt.step()
    assert I.entropy(cc(y[:1])).item() > h0 + 0.05


def test_frozen_trunk_stays_in_eval_and_does_not_learn():
    trunk = _trunk()
    net = I.instaaug(trunk, I.LRPCrops(32), frozen=True).train()
    assert not trunk.training and net.augment.training
    before = [p.clone() for p in trunk.parameters()]
    band = I.EntropyBand(1.0, 2.0)
    train.fit(net, (torch.rand(32, 3, 32, 32), torch.randint(0, 4, (32,))), train.TrainConfig(epochs=1, batch_size=16),
              progress=False, loss=I.objective(band, check_every=1))
    assert all(torch.equal(a, b) for a, b in zip(before, trunk.parameters()))
    assert len(band.history) == 2


def _module_moves(recipe, steps):
    """How far the module's head moved in ``steps`` Adam steps (one epoch of ``steps`` batches)."""
    net = I.instaaug(_trunk(), I.Recipe.module(lambda: I.UniformRanges(("rotate",)), 0))
    before = net.augment.params.head.bias.detach().clone()
    x, y = torch.rand(8 * steps, 3, 32, 32), torch.randint(0, 4, (8 * steps,))
    cfg = recipe.config(train.TrainConfig(epochs=1, batch_size=8, optimizer="adam", lr=1e-3, schedule="none"))
    train.fit(net, (x, y), cfg, progress=False, loss=recipe.objective(steps))
    return (net.augment.params.head.bias.detach() - before).abs().max().item()


def test_warmup_lowers_the_module_learning_rate_under_adam():
    # the old warm-up scaled the module's gradient, which Adam normalises away: the module moved as far with it
    cold, warm = (_module_moves(I.Recipe(band=(0.5, 1.0), lam0=0.1, module_lr=0.05, warmup_epochs=w), 2)
                  for w in (0.0, 4.0))
    assert warm < 0.5 * cold


def test_recipe_config_and_objective():
    r = I.Recipe(band=(1.0, 2.0), lam0=0.3, module_lr=0.02, warmup_epochs=2.0, check_every=None)
    cfg = r.config(train.TrainConfig(optimizer="sgd", lr=0.1, aug_weight_decay=1.0))
    assert (cfg.aug_lr, cfg.aug_warmup_epochs, cfg.aug_weight_decay, cfg.lr) == (0.02, 2.0, 0.0, 0.1)
    a, b = r.objective(10), r.objective(10)
    assert a.band is not b.band and a.check_every == 10 and a.band.lam == 0.3
    assert I.Recipe(check_every=3).objective(10).check_every == 3
    with pytest.raises(ValueError, match="baseline"):
        I.Recipe(baseline="median")
    with pytest.raises(ValueError):
        I.Recipe(band=(2.0, 1.0))
    m1, m2 = (I.Recipe.module(lambda: I.LRPCrops(32), 0) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_baseline_lowers_the_gradient_variance():
    torch.manual_seed(0)
    net = I.instaaug(_trunk(), I.LRPCrops(32)).eval()
    x, y = torch.rand(16, 3, 32, 32), torch.randint(0, 4, (16,))
    g = torch.Generator().manual_seed(0)
    with_b = I.gradient_variance(net, x, y, draws=32, baseline="mean", generator=g)
    without = I.gradient_variance(net, x, y, draws=32, baseline="none", generator=g)
    assert with_b["variance"] < without["variance"]
    with pytest.raises(ValueError, match="categorical"):
        I.gradient_variance(I.instaaug(_trunk(), I.UniformRanges(("rotate",))), x, y)


def test_nt_xent_is_low_for_matching_views():
    z = torch.randn(16, 8)
    assert I.nt_xent(z, z + 0.01 * torch.randn(16, 8)).mean() < I.nt_xent(z, torch.randn(16, 8)).mean()
    assert I.nt_xent(z, z).shape == (16,)


def test_contrastive_objective_is_nt_xent_when_the_module_has_one_crop():
    # every input's crop is the whole image and lambda is 0: the objective is the NT-Xent of two identical views
    net = I.instaaug(_trunk(k=16), I.LRPCrops(32)).eval()
    with torch.no_grad():
        for b in net.augment.params.position_bias:
            b.fill_(-1e4)
        net.augment.params.global_head.bias.fill_(1e4)
    hook = I.contrastive_objective(I.EntropyBand(-math.inf, math.inf, lam0=0.0))
    x = torch.rand(8, 3, 32, 32)
    value, logits = hook(net, x, torch.zeros(8, dtype=torch.long))
    z = net.trunk(x)
    expected = float(I.nt_xent(z, z).mean().detach())
    assert float(value.detach()) == pytest.approx(expected, abs=1e-4)
    assert hook.log == [pytest.approx(expected, abs=1e-4)] and logits.argmax(1).eq(0).all()  # views matched


def test_contrastive_objective_trains_the_module_and_steers_lambda():
    net = I.instaaug(_trunk(k=16), I.LRPCrops(32)).train()
    band = I.EntropyBand(9.0, 9.5, lam0=0.2)  # above log(#crops): every check is below the band
    hook = I.contrastive_objective(band, check_every=1)
    x = torch.rand(16, 3, 32, 32)
    value, _ = hook(net, x, torch.zeros(16, dtype=torch.long))
    value.backward()
    grads = [p.grad for p in net.augment.params.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)  # REINFORCE and the entropy reach the module
    hook(net, x, torch.zeros(16, dtype=torch.long))
    assert len(band.history) == 2 and band.lam == pytest.approx(0.2 * 1.2)  # the second check below raises it
    assert len(hook.log) == 2 and len(net.augment.checks) == 2


def test_objective_logs_each_steps_cross_entropy():
    net = I.instaaug(_trunk(), I.LRPCrops(32))
    hook = I.objective(None)
    x, y = torch.rand(8, 3, 32, 32), torch.randint(0, 4, (8,))
    value, logits = hook(net, x, y)
    assert hook.log == [pytest.approx(float(torch.nn.functional.cross_entropy(logits, y)), abs=1e-5)]
    assert float(value.detach()) == pytest.approx(hook.log[0], abs=1e-5)  # band None: the loss alone


def test_bad_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="gumbel"):
        I.sample_categorical(torch.zeros(1, 3), method="gumble")
    with pytest.raises(ValueError, match="sample"):
        I.instaaug(_trunk(), I.LRPCrops(32), select="best")
    with pytest.raises(ValueError, match="crop_layers"):
        I.LRPCrops(32, crop_layers=(5,), sides=(0.5,), layer_bias=(0.0, 1.0))


def test_crop_measures_find_the_mass_on_the_object():
    lrp = I.LRPCrops(32, input_free=True)
    aug = I.InstaAugment(lrp)
    target = ((lrp.boxes[:, 0] - 0.25).abs() < 0.1) & ((lrp.boxes[:, 1] - 0.25).abs() < 0.1) & (lrp.layer == 0)
    with torch.no_grad():
        lrp.position_bias[0].view(-1)[target[lrp.layer == 0]] = 30.0  # all mass on crops centred near (0.25, 0.25)
    x = torch.rand(2, 3, 32, 32)
    on = I.crop_measures(aug, x, torch.tensor([[0.0, 0.0, 16.0, 16.0]] * 2))
    off = I.crop_measures(aug, x, torch.tensor([[16.0, 16.0, 32.0, 32.0]] * 2))
    assert (on["centre_in_box"] > 0.99).all() and (off["centre_in_box"] < 0.01).all()
    assert torch.allclose(on["side"], torch.full((2,), lrp.boxes[target, 2][0].item()))
    assert torch.allclose(on["kl_to_mean"], torch.zeros(2), atol=1e-5)  # input-free: no dependence
    uni = I.crop_measures(I.InstaAugment(I.UniformRanges(("side",))), x, torch.tensor([[8.0, 8.0, 24.0, 24.0]] * 2))
    assert (uni["centre_in_box"] == 1).all() and ((uni["side"] - 1).abs() < 0.1).all()  # symmetric start
    assert uni["kl_to_mean"].isnan().all()


def test_random_crops_stay_inside_with_their_area_in_range():
    b = I.random_boxes(5000, (0.1, 1.0), torch.Generator().manual_seed(0))
    area = b[:, 2] ** 2
    assert area.min() >= 0.1 - 1e-6 and area.max() <= 1 + 1e-6
    assert abs(area.mean().item() - 0.55) < 0.02  # uniform in area
    assert ((b[:, :2] - b[:, 2:] / 2) >= -1e-6).all() and ((b[:, :2] + b[:, 2:] / 2) <= 1 + 1e-6).all()
    with pytest.raises(ValueError, match="scale"):
        I.RandomCrop((0.0, 1.0))
    assert repr(I.RandomCrop((0.25, 1))) == "RandomCrop(scale=(0.25, 1.0))"


def test_objectives_with_other_settings_have_other_cache_keys():
    from invlib.train import _callable_key
    keys = {_callable_key(o) for o in (I.objective(I.EntropyBand(3.0, 3.5)), I.objective(I.EntropyBand(2.0, 3.5)),
                                       I.objective(I.EntropyBand(3.0, 3.5), baseline="none"),
                                       I.objective(I.EntropyBand(3.0, 3.5), check_every=10),
                                       I.contrastive_objective(I.EntropyBand(3.0, 3.5)), I.objective(None))}
    assert len(keys) == 6
    assert _callable_key(I.objective(I.EntropyBand(3.0, 3.5))) == _callable_key(I.objective(I.EntropyBand(3.0, 3.5)))


def test_state_reports_the_epochs_entropy_and_lambda():
    net = I.instaaug(_trunk(), I.LRPCrops(32))
    band = I.EntropyBand(9.0, 9.5, lam0=0.1)  # always below: lambda rises from the second check on
    hist = train.fit(net, (torch.rand(64, 3, 32, 32), torch.randint(0, 4, (64,))),
                     train.TrainConfig(epochs=2, batch_size=16), progress=False, loss=I.objective(band, check_every=1))
    assert [len(h["state"]["checks"]) for h in hist] == [4, 4]
    assert hist[-1]["state"]["lambda"] == band.lam
    assert hist[1]["state"]["entropy"] > hist[0]["state"]["entropy"]  # the entropy bonus widens p
    assert 0 < hist[0]["state"]["entropy"] < math.log(net.augment.params.num_crops)


def test_zoom_in_only_ranges_never_crop_wider_than_the_image():
    x = torch.rand(4, 3, 32, 32)
    free = I.UniformRanges(I.CROP_OPS)
    low, high = free(x)
    assert (low[:, 0] < 0).all()  # the default range zooms out too
    inside = I.UniformRanges(I.CROP_OPS, zoom_in_only=True)
    inside.load_state_dict(free.state_dict())  # the one-sided flag is not part of the weights
    low, high = inside(x)
    assert (low[:, 0] == 0).all() and (high[:, 0] > 0).all() and torch.equal(low[:, 1:], free(x)[0][:, 1:])
    with pytest.raises(ValueError, match="side"):
        I.UniformRanges(("rotate",), zoom_in_only=True)


def test_colour_factor_bounds_stop_where_the_clamp_starts():
    # exp(theta) is clamped to [0, 2]: a log-factor bound past ln 2 would count entropy that changes no image
    assert I.UNIFORM_OPS["saturation"][0] == I.UNIFORM_OPS["value"][0] == pytest.approx(math.log(2))
    m = I.UniformRanges(("saturation", "value"))
    with torch.no_grad():
        m.head.bias.fill_(50.0)  # bounds at their maxima
    low, high = m(torch.rand(1, 3, 16, 16))
    assert torch.allclose(high.exp(), torch.tensor(2.0)) and torch.allclose(low.exp(), torch.tensor(0.5))
