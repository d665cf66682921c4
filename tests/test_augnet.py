"""invlib.learned (Invariant, unit_clamp, max_rotation, UNITS) and invlib.learned.augnet: identities at magnitude 0,
gradients at the initial values, the selective regulariser, evaluation sampling, units of the learned state,
optimizer groups, training with invlib.train.fit."""

import math

import pytest
import torch
from torch import nn

from invlib import models
from invlib import train as _train
from invlib.learned import UNITS, Invariant, augerino, augnet, max_rotation, unit_clamp
from invlib.learned.augnet import GROUPS, OPS, AugLayer, AugModule


def images(b=8, seed=0):
    return torch.rand(b, 1, 28, 28, generator=torch.Generator().manual_seed(seed))


def signals(b=8, seed=0):
    return torch.randn(b, 1, 1000, generator=torch.Generator().manual_seed(seed))


LAYERS = {  # group -> (inputs, AugLayer kwargs)
    "geometric": (images, {}),
    "appearance": (images, {}),
    "signal": (signals, {"fs": 100}),
}


# ----------------------------------------------------------------------------- magnitude 0 is the identity
@pytest.mark.parametrize("group", list(LAYERS))
@pytest.mark.parametrize("training", [True, False])
def test_magnitude_zero_is_identity(group, training):
    make, kw = LAYERS[group]
    x = make()
    layer = AugLayer(group, init_magnitude=0.0, **kw).train(training)
    torch.manual_seed(0)
    for _ in range(3):  # several draws of values, signs and (in eval) picked operations
        y = layer(x)
        assert y.shape == x.shape
        assert torch.allclose(y, x, atol=1e-5), (group, training, float((y - x).abs().max()))


def test_magnitude_zero_is_identity_through_stacked_module():
    x = images()
    mod = AugModule([AugLayer("appearance", 0.0), AugLayer("geometric", 0.0)], reg=0.5).eval()
    assert torch.allclose(mod(x), x, atol=1e-5)


def test_nonzero_magnitude_changes_input():
    x = images()
    layer = AugLayer("geometric", init_magnitude=1.0).train()
    torch.manual_seed(0)
    assert (layer(x) - x).abs().amax((1, 2, 3)).min() > 1e-2


# ----------------------------------------------------------------------------- unit_clamp
def test_unit_clamp_value_and_gradient():
    x = torch.tensor([-1.0, -1e-3, 0.0, 0.25, 0.5, 1.0, 1.0 + 1e-3, 3.0], requires_grad=True)
    y = unit_clamp(x)
    assert torch.equal(y, x.detach().clamp(0, 1))
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 8  # straight through: a magnitude pushed out of [0, 1] can come back


def test_unit_clamp_passes_gradient_at_zero_where_clamp_may_not():
    m = torch.zeros(3, requires_grad=True)
    (unit_clamp(m) * torch.tensor([1.0, 2.0, -3.0])).sum().backward()
    assert m.grad.tolist() == [1.0, 2.0, -3.0]


# ----------------------------------------------------------------------------- gradients at init
@pytest.mark.parametrize("group", ["geometric", "signal"])
@pytest.mark.parametrize("init", [0.0, 0.125])
def test_gradients_reach_every_magnitude_and_weight(group, init):
    make, kw = LAYERS[group]
    x = make()
    layer = AugLayer(group, init_magnitude=init, **kw)
    module = AugModule([layer], reg=0.5, regulariser="selective").train()
    torch.manual_seed(1)
    y = module(x)
    proj = torch.randn(y.shape, generator=torch.Generator().manual_seed(2))
    loss = (y * proj).sum() + module.penalty()
    loss.backward()
    q = len(GROUPS[group])
    assert layer.magnitude.grad.shape == (q,) and layer.logits.grad.shape == (q,)
    assert torch.isfinite(layer.magnitude.grad).all(), layer.magnitude.grad
    assert torch.isfinite(layer.logits.grad).all(), layer.logits.grad
    assert (layer.magnitude.grad != 0).all(), (group, init, layer.magnitude.grad)
    if init > 0:  # the operations' outputs differ, so every weight gets a gradient
        assert (layer.logits.grad != 0).all(), (group, init, layer.logits.grad)


def test_penalty_gradient_alone_is_finite_at_zero_magnitude():
    layer = AugLayer("geometric", init_magnitude=0.0)
    AugModule([layer], reg=0.5).penalty().backward()
    assert torch.isfinite(layer.magnitude.grad).all() and torch.isfinite(layer.logits.grad).all()


# ----------------------------------------------------------------------------- the selective regulariser
def two_op_layer(mu1=0.2, mu2=0.6):
    layer = AugLayer(["rotate", "translate_x"], init_magnitude={"rotate": mu1, "translate_x": mu2}, temperature=1.0)
    layer.magnitude.requires_grad_(False)
    return layer


def test_selective_penalty_value():
    layer = two_op_layer()
    mod = AugModule([layer], reg=0.7, regulariser="selective")
    expected = -0.7 * math.hypot(0.5 * 0.2, 0.5 * 0.6)
    assert float(mod.penalty().detach()) == pytest.approx(expected, rel=1e-6)


def test_selective_penalty_gradient_favours_larger_magnitude():
    layer = two_op_layer(0.2, 0.6)
    mod = AugModule([layer], reg=1.0, regulariser="selective")
    mod.penalty().backward()
    g = layer.logits.grad
    assert g[1] < 0 < g[0], g  # descent raises the logit of the op with the larger magnitude
    # closed form: P = -reg ||w mu||, dP/dw_i = -reg w_i mu_i^2 / ||w mu||, then the softmax Jacobian
    w, mu = torch.tensor([0.5, 0.5]), torch.tensor([0.2, 0.6])
    dp_dw = -w * mu**2 / torch.linalg.vector_norm(w * mu)
    jac = torch.diag(w) - torch.outer(w, w)  # temperature 1
    assert torch.allclose(g, jac @ dp_dw, atol=1e-6)


def test_squared_selective_norm_gradient_matches_paper_formula():
    """R2 = ||w * mu||^2: dR2/dw_i = 2 mu_i^2 w_i, so at equal weights the larger magnitude gets the larger pull."""
    for mu1, mu2 in [(0.2, 0.6), (0.1, 0.9), (0.4, 0.4), (0.0, 0.3)]:
        layer = AugLayer(["rotate", "shear_x"], init_magnitude={"rotate": mu1, "shear_x": mu2}, temperature=1.0)
        w = layer.weights().detach().requires_grad_(True)
        r2 = torch.linalg.vector_norm(w * layer.magnitudes()).square()
        r2.backward()
        assert torch.allclose(w.grad, 2 * torch.tensor([mu1, mu2]) ** 2 * w.detach(), atol=1e-6)
        assert (w.grad[0] <= w.grad[1]) == (mu1 <= mu2)
        # and through the module's penalty: the logit of the larger magnitude gets the more negative gradient
        layer.zero_grad()
        AugModule([layer], reg=1.0).penalty().backward()
        g = layer.logits.grad
        if mu1 < mu2:
            assert g[1] < g[0]
        else:
            assert torch.allclose(g[0], g[1], atol=1e-7)


def test_sgd_on_selective_penalty_selects_larger_magnitude():
    layer = two_op_layer(0.2, 0.6)
    mod = AugModule([layer], reg=1.0, regulariser="selective")
    opt = torch.optim.SGD([layer.logits], lr=1.0)
    for _ in range(300):
        opt.zero_grad()
        mod.penalty().backward()
        opt.step()
    w = layer.weights().detach()
    assert w[1] > 0.9, w
    assert torch.equal(layer.magnitude, torch.tensor([0.2, 0.6]))  # frozen


# ----------------------------------------------------------------------------- other regularisers, errors
def test_augerino_regulariser_ignores_weights():
    layer = AugLayer("geometric", init_magnitude={"rotate": 0.3, "shear_x": 0.4, "translate_x": 0.0,
                                                  "translate_y": 0.1, "shear_y": 0.2})
    mod = AugModule([layer], reg=0.5, regulariser="augerino")
    p = mod.penalty()
    assert float(p.detach()) == pytest.approx(-0.5 * math.sqrt(0.09 + 0.16 + 0.01 + 0.04), rel=1e-6)
    p.backward()
    assert layer.logits.grad is None or torch.all(layer.logits.grad == 0)
    with torch.no_grad():
        layer.logits.copy_(torch.tensor([1.0, -2.0, 0.5, 0.0, 3.0]))
    assert float(mod.penalty().detach()) == pytest.approx(float(p.detach()), rel=1e-6)  # same with other weights


def test_no_regulariser_is_zero():
    layer = AugLayer("geometric", init_magnitude=0.7)
    for mod in (AugModule([layer], reg=0.5, regulariser="none"), AugModule([layer], reg=0.0)):
        p = mod.penalty()
        assert p.shape == () and float(p.detach()) == 0.0


def test_penalty_sums_over_layers():
    a, b = AugLayer("geometric", 0.2), AugLayer("appearance", 0.6)
    mod = AugModule([a, b], reg=2.0)
    expected = -2.0 * (float(torch.linalg.vector_norm(a.weights().detach() * 0.2))
                       + float(torch.linalg.vector_norm(b.weights().detach() * 0.6)))
    assert float(mod.penalty().detach()) == pytest.approx(expected, rel=1e-6)


def test_invalid_regulariser():
    with pytest.raises(ValueError, match="augerino, none, selective"):
        AugModule([AugLayer("geometric")], regulariser="l2")


def test_invalid_op():
    with pytest.raises(ValueError, match="rotat.*Operations:.*frequency_shift.*translate_x"):
        AugLayer(["rotat"])
    with pytest.raises(ValueError, match="geometric, appearance, signal"):
        AugLayer("geomtric")


def test_mixing_image_and_signal_ops_raises():
    with pytest.raises(ValueError, match="cannot mix image and signal"):
        AugLayer(["rotate", "frequency_shift"], fs=100)


def test_signal_layer_needs_fs():
    with pytest.raises(ValueError, match="fs="):
        AugLayer("signal")
    with pytest.raises(ValueError, match="fs="):
        augnet.augnet(nn.Identity(), ops=["ft_surrogate"])


def test_bad_magnitude_and_scales():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        AugLayer("geometric", init_magnitude=1.5)
    with pytest.raises(ValueError, match="brightness"):
        AugLayer("geometric", scales={"brightness": 2.0})


def test_state_max_value_is_magnitude_times_scale_in_the_ops_unit():
    layer = AugLayer("geometric", init_magnitude={"rotate": 0.5, "shear_x": 0.5, "translate_x": 0.2,
                                                  "translate_y": 0.0, "shear_y": 1.0}, scales={"rotate": math.pi / 6})
    with torch.no_grad():
        layer.logits[GROUPS["geometric"].index("rotate")] += 1.0
    st = AugModule([layer]).state()["layer0"]
    assert st["rotate"]["max_value"] == pytest.approx(math.pi / 12)  # radians, from a scale given in radians
    assert st["shear_x"]["max_value"] == pytest.approx(0.15)
    assert st["translate_x"]["max_value"] == pytest.approx(0.2 * 0.45) and st["translate_y"]["max_value"] == 0.0
    assert st["rotate"]["weight"] > 0.99 and st["shear_x"]["weight"] < 0.01  # T = 0.01: near-hard
    assert augnet.selected({"layer0": st})["layer0"] == ("rotate", st["rotate"]["weight"], st["rotate"]["max_value"])


def test_rotate_scale_in_radians_draws_the_same_degrees():
    """Rotate's scale is pi radians; the op takes degrees, and the draws are those of 180 degrees, to the bit."""
    layer = AugLayer(["rotate"], init_magnitude=0.25)
    assert OPS["rotate"].scale == math.pi and OPS["rotate"].unit == UNITS["rotate"] == "radians"
    assert layer._scale.tolist() == [180.0]
    torch.manual_seed(0)
    v = layer.values(1000).detach()
    torch.manual_seed(0)
    u = torch.rand(1000, 1) * 2 - 1
    assert torch.equal(v, u * torch.tensor([0.25]) * torch.tensor([180.0]))
    x = torch.zeros(1, 1, 9, 9)
    x[0, 0, 4, 8] = 1.0  # a dot on the right edge's middle row; a quarter turn moves it to the top or bottom edge
    quarter = AugLayer(["rotate"], init_magnitude=1.0, scales={"rotate": math.pi / 2})
    assert quarter._scale.tolist() == [90.0]
    turned = OPS["rotate"].fn(x, torch.tensor([90.0]), None)
    assert turned[0, 0, 4, 8] < 0.01 and max(turned[0, 0, 0, 4], turned[0, 0, 8, 4]) > 0.99


def test_units_cover_every_op_and_agree_with_ops():
    assert {n: op.unit for n, op in OPS.items()} == {n: UNITS[n] for n in OPS}
    assert set(augerino.GENERATORS) <= set(UNITS)


def test_max_rotation_reads_both_methods_in_radians():
    a = augnet.augnet(nn.Identity(), ops=["appearance", "geometric"], init_magnitude=0.25)
    assert max_rotation(a.state()) == pytest.approx(math.pi / 4)  # rotate is in the second layer
    b = augerino.augerino(nn.Identity(), init_width=math.log(math.expm1(1.0)))  # theta = 1
    assert max_rotation(b.state()) == pytest.approx(0.5)
    assert max_rotation(augnet.augnet(nn.Identity(), ops="appearance").state()) == 0.0


# ----------------------------------------------------------------------------- evaluation: one op per sample
def test_eval_uses_only_the_dominant_op():
    x = images(16)
    layer = AugLayer("geometric", init_magnitude=1.0, temperature=0.01).eval()
    q = layer.names.index("rotate")
    with torch.no_grad():
        layer.logits[q] = 10.0
    assert layer.weights()[q] > 0.999
    torch.manual_seed(3)
    out = layer(x)
    torch.manual_seed(3)  # forward draws the values first: the same draws, rotate alone
    v = layer.values(len(x))
    expected = OPS["rotate"].fn(x, v[:, q], None)
    assert torch.allclose(out, expected, atol=1e-6)
    assert ((out - x).abs().amax((1, 2, 3)) > 1e-2).float().mean() > 0.8


def test_eval_dominant_op_alone_moves_images():
    x = images(16)
    layer = AugLayer("geometric", init_magnitude={n: 0.0 for n in GROUPS["geometric"]} | {"translate_x": 1.0})
    q = layer.names.index("translate_x")
    with torch.no_grad():
        layer.logits[q] = 10.0
    layer.eval()
    torch.manual_seed(0)
    moved = (layer(x) - x).abs().amax((1, 2, 3)) > 1e-3
    assert moved.float().mean() > 0.8
    with torch.no_grad():  # same layer, another op dominant (magnitude 0): the identity
        layer.logits.zero_()
        layer.logits[layer.names.index("rotate")] = 10.0
    assert torch.allclose(layer(x), x, atol=1e-5)


def test_eval_each_sample_gets_exactly_one_op():
    x = images(64)
    layer = AugLayer(["rotate", "translate_x"], init_magnitude=1.0, temperature=1.0).eval()
    torch.manual_seed(5)
    out = layer(x)
    torch.manual_seed(5)
    v = layer.values(len(x))
    rot, tra = OPS["rotate"].fn(x, v[:, 0], None), OPS["translate_x"].fn(x, v[:, 1], None)
    is_rot = torch.isclose(out, rot, atol=1e-6).flatten(1).all(1)
    is_tra = torch.isclose(out, tra, atol=1e-6).flatten(1).all(1)
    assert (is_rot | is_tra).all()
    assert is_rot.sum() > 10 and is_tra.sum() > 10  # both drawn, about half each


def test_train_is_the_weighted_mixture():
    x = images(6)
    layer = AugLayer(["rotate", "translate_x"], init_magnitude=0.8, temperature=1.0)
    with torch.no_grad():
        layer.logits.copy_(torch.tensor([0.3, -0.4]))
    layer.train()
    torch.manual_seed(7)
    out = layer(x)
    torch.manual_seed(7)
    v = layer.values(len(x))
    w = torch.softmax(torch.tensor([0.3, -0.4]), 0)
    expected = w[0] * OPS["rotate"].fn(x, v[:, 0], None) + w[1] * OPS["translate_x"].fn(x, v[:, 1], None)
    assert torch.allclose(out, expected, atol=1e-6)


# ----------------------------------------------------------------------------- faster paths, the same floats
@pytest.mark.parametrize("draw", ["sample", "batch"])
def test_eval_warps_each_sample_once_by_its_own_op_to_the_bit(draw):
    x = torch.rand(37, 3, 16, 20)
    layer = AugLayer("geometric", init_magnitude=0.7, temperature=1.0, eval_draw=draw).eval()
    with torch.no_grad():
        layer.logits.copy_(torch.tensor([0.1, -0.2, 0.3, 0.0, -0.1]))
    torch.manual_seed(4)
    out = layer(x)
    torch.manual_seed(4)  # every op on the whole batch, each sample keeping its own: the old path
    v, w = layer.values(len(x)), layer.weights()
    pick = torch.multinomial(w.detach(), len(x) if draw == "sample" else 1, replacement=True).expand(len(x))
    expected = torch.zeros_like(x)
    for q, n in enumerate(layer.names):
        expected = torch.where((pick == q).view(-1, 1, 1, 1), OPS[n].fn(x, v[:, q], None), expected)
    assert torch.equal(out, expected)


def test_train_mixture_is_the_sum_to_the_bit():
    x = torch.rand(8, 3, 16, 16)
    layer = AugLayer("geometric", init_magnitude=0.5).train()
    torch.manual_seed(2)
    out = layer(x)
    torch.manual_seed(2)
    v, w = layer.values(len(x)), layer.weights()
    assert torch.equal(out, sum(w[q] * OPS[n].fn(x, v[:, q], None) for q, n in enumerate(layer.names)))


def test_values_are_bounded_by_magnitude_times_scale():
    layer = AugLayer(["rotate", "sample_pairing"], init_magnitude={"rotate": 0.25, "sample_pairing": 0.5})
    torch.manual_seed(0)
    v = layer.values(4000).detach()
    assert v[:, 0].abs().max() <= 45.0 and v[:, 0].abs().max() > 44.0
    assert v[:, 0].min() < -40 and v[:, 0].max() > 40  # symmetric: uniform in [-45, 45]
    assert (v[:, 0].abs() < 22.5).float().mean() == pytest.approx(0.5, abs=0.04)
    assert torch.allclose(v[:, 1], torch.full((4000,), 0.5))  # sample pairing: every sample mixes mu * 1
    sig = AugLayer("signal", init_magnitude=0.5, fs=100).values(2000).detach()  # the authors' scales
    assert sig[:, 0].min() < -0.95 and sig[:, 0].max() > 0.95 and sig[:, 0].abs().max() <= 1.0  # shift in +-1 Hz
    assert torch.allclose(sig[:, 1:], torch.full((2000, 2), 0.05))  # FT surrogate 0.05 of 2 pi, noise std 0.05


# ----------------------------------------------------------------------------- Invariant
class ShiftAugment(nn.Module):
    """Deterministic stand-in: adds ``step * row index`` (so the copies differ), no parameters learned."""

    def __init__(self, step=0.0):
        super().__init__()
        self.step = step
        self.p = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return x + self.step * torch.arange(len(x), dtype=x.dtype).view(-1, *[1] * (x.ndim - 1))

    def penalty(self):
        return self.p.sum() * 0 + 1.5

    def state(self):
        return {"step": self.step}


def test_invariant_train_returns_trunk_logits():
    trunk = nn.Linear(5, 3)
    net = Invariant(ShiftAugment(), trunk, copies=4).train()
    x = torch.randn(7, 5)
    assert torch.equal(net(x), trunk(x))
    assert float(net.penalty().detach()) == 1.5 and net.state() == {"step": 0.0}
    assert [p for p in net.augmentation_parameters()] == [net.augment.p]


def test_invariant_eval_identity_augment_gives_log_softmax():
    trunk = nn.Linear(5, 3)
    net = Invariant(ShiftAugment(), trunk, copies=4).eval()
    x = torch.randn(7, 5)
    out = net(x)
    assert out.shape == (7, 3)
    assert torch.allclose(out, trunk(x).log_softmax(-1), atol=1e-6)
    assert torch.allclose(net(x, reduce="logits"), trunk(x), atol=1e-6)
    single = Invariant(ShiftAugment(), trunk, copies=1).eval()
    assert torch.allclose(single(x), trunk(x).log_softmax(-1), atol=1e-6)
    assert torch.equal(single(x, reduce="logits"), trunk(x))


def test_invariant_eval_averages_copies():
    trunk = nn.Linear(5, 3)
    b, c = 4, 3
    net = Invariant(ShiftAugment(step=0.3), trunk, copies=c).eval()
    x = torch.randn(b, 5)
    rows = torch.stack([x + 0.3 * (k * b + torch.arange(b)).view(-1, 1) for k in range(c)])  # (C, B, 5)
    assert torch.allclose(net(x), trunk(rows).log_softmax(-1).mean(0), atol=1e-5)
    assert torch.allclose(net(x, reduce="logits"), trunk(rows).mean(0), atol=1e-5)
    assert torch.allclose(net(x, copies=2), trunk(rows[:2]).log_softmax(-1).mean(0), atol=1e-5)


def test_invariant_bad_arguments():
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="copies"):
            Invariant(ShiftAugment(), nn.Identity(), copies=bad)
    with pytest.raises(ValueError, match="reduce"):
        Invariant(ShiftAugment(), nn.Linear(2, 2)).eval()(torch.randn(3, 2), reduce="mean")
    with pytest.raises(ValueError, match="copies"):
        Invariant(ShiftAugment(), nn.Linear(2, 2)).eval()(torch.randn(3, 2), copies=0)


def test_augnet_builds_layers():
    """A list of groups makes one layer per group; one group with layers=k makes k layers of it; a list of op
    names is one layer of those ops."""
    net = augnet.augnet(nn.Identity(), ops=["appearance", "geometric", "geometric"])
    assert [lay.names for lay in net.augment.layers] == [GROUPS["appearance"], *[GROUPS["geometric"]] * 2]
    net = augnet.augnet(nn.Identity(), ops="signal", layers=2, fs=100)
    assert [lay.names for lay in net.augment.layers] == [GROUPS["signal"]] * 2
    net = augnet.augnet(nn.Identity(), ops=["rotate", "contrast"], layers=1)
    assert [lay.names for lay in net.augment.layers] == [["rotate", "contrast"]]


# ----------------------------------------------------------------------------- optimizer groups
def test_make_optimizer_gives_augmentation_its_own_group():
    trunk = models.create("conv4", num_classes=4, in_chans=1, widths=(4, 4, 4, 4))
    net = augnet.augnet(trunk, ops=["appearance", "geometric"])
    cfg = _train.TrainConfig(optimizer="adam", lr=1e-3, aug_lr=5e-3, aug_weight_decay=1.0)
    opt = _train.make_optimizer(net, cfg)
    aug = {id(p) for p in net.augmentation_parameters()}
    assert len(aug) == 4  # logits and magnitude of two layers
    groups = [{id(p) for p in g["params"]} for g in opt.param_groups]
    aug_groups = [i for i, g in enumerate(groups) if g & aug]
    assert len(aug_groups) == 1 and groups[aug_groups[0]] == aug
    g = opt.param_groups[aug_groups[0]]
    assert g["lr"] == 5e-3 and g["weight_decay"] == 1.0
    for i, other in enumerate(opt.param_groups):
        if i != aug_groups[0]:
            assert other["lr"] == 1e-3
    ids = [p for grp in groups for p in grp]
    assert len(ids) == len(set(ids))  # no parameter in two groups
    assert set(ids) == {id(p) for p in net.parameters()}
    # without aug_lr, the augmentation takes lr
    opt = _train.make_optimizer(net, _train.TrainConfig(optimizer="sgd", lr=0.1))
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.1, 0.1] and opt.param_groups[2]["weight_decay"] == 0.0


# ----------------------------------------------------------------------------- training with invlib.train.fit
def tiny_augnet(reg):
    trunk = models.create("conv4", num_classes=4, in_chans=1, widths=(4, 4, 4, 4), seed=0)
    return augnet.augnet(trunk, ops="geometric", reg=reg, regulariser="selective", init_magnitude=0.25, copies=2)


def tiny_data():
    g = torch.Generator().manual_seed(0)
    return torch.rand(64, 1, 28, 28, generator=g), torch.randint(0, 4, (64,), generator=g)


def test_fit_regulariser_moves_magnitudes_and_records_the_state():
    x, y = tiny_data()
    # SGD: the step follows the gradient's size, so a strong penalty outweighs the cross-entropy's pull on
    # the magnitudes (Adam's normalised steps let a tiny cross-entropy gradient move them as far)
    cfg = _train.TrainConfig(epochs=2, batch_size=32, optimizer="sgd", lr=1e-3, aug_lr=0.01, device="cpu")
    runs = {}
    for reg in (0.0, 5.0):
        net = tiny_augnet(reg)
        runs[reg] = _train.fit(net, (x, y), cfg, progress=False)
        assert runs[reg][-1]["state"] == net.state()  # the last record holds what the model ended with
        assert runs[reg][0]["state"] != runs[reg][1]["state"]  # recorded every epoch, not once
    name, _, _ = augnet.selected(runs[5.0][-1]["state"])["layer0"]
    mu_reg = runs[5.0][-1]["state"]["layer0"][name]["magnitude"]
    mu_free = runs[0.0][-1]["state"]["layer0"][name]["magnitude"]
    assert mu_reg > 0.35 and mu_reg > mu_free + 0.1, (name, mu_reg, mu_free)


def test_fit_adds_penalty_to_loss():
    """A model whose penalty is a constant: the logged loss is the cross-entropy plus that constant."""
    x, y = tiny_data()
    cfg = _train.TrainConfig(epochs=1, batch_size=64, optimizer="sgd", lr=1e-9, device="cpu")
    losses = {}
    for step in (None, 0.0):
        torch.manual_seed(0)
        trunk = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 4))
        net = trunk if step is None else Invariant(ShiftAugment(step), trunk)
        losses[step] = _train.fit(net, (x, y), cfg, progress=False)[0]["loss"]
    assert losses[0.0] == pytest.approx(losses[None] + 1.5, abs=1e-4)


# ----------------------------------------------------------------------------- the authors' defaults as options
def _decay_of(opt) -> dict[int, float]:
    return {id(p): g["weight_decay"] for g in opt.param_groups for p in g["params"]}


def test_weight_decay_on_every_parameter_or_on_the_augmentation_only():
    """The authors' Adam(model.parameters(), weight_decay=1): every parameter decays, biases and batch-norm
    included; the other choice decays the augmentation alone; the default spares biases and norms."""
    net = augnet.augnet(models.create("conv4", num_classes=4, in_chans=3, widths=(4, 4, 4, 4)), ops="geometric")
    aug = {id(p) for p in net.augmentation_parameters()}
    vectors = {id(p) for p in net.trunk.parameters() if p.ndim <= 1}
    assert vectors  # the trunk has biases and batch-norm weights to check
    every = _decay_of(_train.make_optimizer(net, _train.TrainConfig(
        optimizer="adam", weight_decay=1.0, weight_decay_on="all", aug_weight_decay=1.0)))
    assert set(every) == {id(p) for p in net.parameters()} and set(every.values()) == {1.0}
    aug_only = _decay_of(_train.make_optimizer(net, _train.TrainConfig(
        optimizer="adam", weight_decay=0.0, weight_decay_on="all", aug_weight_decay=1.0)))
    assert {k for k, v in aug_only.items() if v > 0} == aug
    default = _decay_of(_train.make_optimizer(net, _train.TrainConfig(optimizer="adam", weight_decay=1e-4)))
    assert all(default[k] == 0.0 for k in vectors) and any(v == 1e-4 for v in default.values())
    with pytest.raises(ValueError, match="all, weights"):
        _train.TrainConfig(weight_decay_on="biases")


def test_op_logits_start_where_configured_and_weight_decay_tells_the_starts_apart():
    ones, zeros = AugLayer("geometric", init_logit=1.0), AugLayer("geometric", init_logit=0.0)
    assert torch.equal(ones.logits.detach(), torch.ones(5)) and torch.equal(zeros.logits.detach(), torch.zeros(5))
    assert torch.allclose(ones.weights(), zeros.weights())  # the same uniform weights either way
    assert torch.equal(augnet.augnet(nn.Identity()).augment.layers[0].logits.detach(), torch.ones(5))  # default
    for layer in (ones, zeros):  # a weight-decay step alone: logits at 1 move towards 0, logits at 0 stay
        opt = torch.optim.SGD([layer.logits], lr=0.1, weight_decay=1.0)
        layer.logits.grad = torch.zeros(5)
        opt.step()
    assert torch.allclose(ones.logits.detach(), torch.full((5,), 0.9)) and torch.equal(zeros.logits.detach(),
                                                                                       torch.zeros(5))


def test_eval_draw_batch_gives_every_sample_of_a_batch_the_same_op():
    x = images(64)
    layer = AugLayer(["rotate", "translate_x"], init_magnitude=1.0, temperature=1.0, eval_draw="batch").eval()
    seen = set()
    for seed in range(8):
        torch.manual_seed(seed)
        out = layer(x)
        torch.manual_seed(seed)
        v = layer.values(len(x))
        rot, tra = OPS["rotate"].fn(x, v[:, 0], None), OPS["translate_x"].fn(x, v[:, 1], None)
        is_rot = torch.isclose(out, rot, atol=1e-6).flatten(1).all(1)
        is_tra = torch.isclose(out, tra, atol=1e-6).flatten(1).all(1)
        assert is_rot.all() or is_tra.all()
        seen.add("rotate" if is_rot.all() else "translate_x")
    assert seen == {"rotate", "translate_x"}  # the batch's op is drawn, not fixed
    with pytest.raises(ValueError, match="batch, sample"):
        AugLayer("geometric", eval_draw="image")
