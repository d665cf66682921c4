"""invlib.learned.augerino: the Lie-algebra generators, the warp, the learned widths and their regulariser."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from invlib.learned import augerino as A


def images(b=4, c=1, h=12, w=12, seed=0):
    return torch.rand(b, c, h, w, generator=torch.Generator().manual_seed(seed))


def expm(name, t):
    g = A.generators(torch.float64)[A.GENERATORS.index(name)]
    return torch.linalg.matrix_exp(t * g)


# ----------------------------------------------------------------------------- identity
def test_zero_coefficients_are_identity():
    for shape in [(4, 1, 12, 12), (2, 3, 9, 16)]:
        x = torch.rand(shape, generator=torch.Generator().manual_seed(1))
        assert torch.allclose(A.transform(x, torch.zeros(shape[0], 6)), x, atol=1e-6)


def test_zero_width_module_is_identity():
    aug = A.AffineAugment(reg=0.1, init_width=-30.0)
    assert float(aug.widths().detach().max()) < 1e-12
    x = images(8)
    torch.manual_seed(0)
    assert torch.allclose(aug(x), x, atol=1e-6)


def test_nonzero_width_changes_images():
    aug = A.AffineAugment(init_width=0.0)
    x = images(8)
    torch.manual_seed(0)
    assert (aug(x) - x).abs().amax((1, 2, 3)).min() > 1e-2


# ----------------------------------------------------------------------------- generators
@pytest.mark.parametrize("t", [-0.7, 0.3, 1.2])
def test_generator_exponentials(t):
    c, s, ch, sh, e = math.cos(t), math.sin(t), math.cosh(t), math.sinh(t), math.exp(t)
    expected = {
        "translate_x": [[1, 0, t], [0, 1, 0], [0, 0, 1]],
        "translate_y": [[1, 0, 0], [0, 1, t], [0, 0, 1]],
        "rotate": [[c, -s, 0], [s, c, 0], [0, 0, 1]],
        "scale": [[e, 0, 0], [0, e, 0], [0, 0, 1]],
        "stretch": [[e, 0, 0], [0, 1 / e, 0], [0, 0, 1]],
        "shear": [[ch, sh, 0], [sh, ch, 0], [0, 0, 1]],
    }
    for name, m in expected.items():
        assert torch.allclose(expm(name, t), torch.tensor(m, dtype=torch.float64), atol=1e-10), name


def test_generators_shape_dtype_and_independence():
    g = A.generators(torch.float64)
    assert g.shape == (6, 3, 3) and g.dtype == torch.float64
    assert torch.all(g[:, 2] == 0)  # affine: the homogeneous row stays (0, 0, 1) after exp
    assert torch.linalg.matrix_rank(g.reshape(6, 9)) == 6


def test_quarter_turn_rotates_square_image():
    x = torch.rand(3, 2, 9, 9, generator=torch.Generator().manual_seed(0))
    eps = torch.zeros(3, 6)
    eps[:, A.GENERATORS.index("rotate")] = math.pi / 2
    y = A.transform(x, eps)
    errs = {k: float((y - torch.rot90(x, k, dims=(-2, -1))).abs().max()) for k in (1, -1, 2)}
    assert min(errs[1], errs[-1]) < 1e-5, errs  # pixel centres map to pixel centres: exact
    assert max(errs[1], errs[-1]) > 0.1 and errs[2] > 0.1  # one direction, not a half turn
    # twice the quarter turn is the half turn, in either direction
    assert torch.allclose(A.transform(y, eps), torch.rot90(x, 2, dims=(-2, -1)), atol=1e-5)


def test_translation_moves_by_half_the_coefficient_of_the_size():
    x = torch.zeros(1, 1, 8, 8)
    x[0, 0, 3, 2] = 1.0
    eps = torch.zeros(1, 6)
    eps[0, 0] = 0.5  # a quarter of the width = 2 pixels; inverse warping: content moves the other way
    y = A.transform(x, eps)
    assert torch.allclose(y, torch.roll(x, -2, dims=-1), atol=1e-6)


def test_per_sample_coefficients():
    x = images(2, h=9, w=9)
    eps = torch.zeros(2, 6)
    eps[1, 2] = math.pi / 2
    y = A.transform(x, eps)
    assert torch.allclose(y[0], x[0], atol=1e-6) and not torch.allclose(y[1], x[1], atol=1e-2)


# ----------------------------------------------------------------------------- penalty and gradients
def test_penalty_value_and_gradient_direction():
    aug = A.AffineAugment(reg=0.3, init_width=0.0)
    aug.width.data = torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0, -3.0])
    theta = F.softplus(aug.width.detach())
    p = aug.penalty()
    assert float(p.detach()) == pytest.approx(-0.3 * float(torch.linalg.vector_norm(theta)), rel=1e-6)
    p.backward()
    assert (aug.width.grad < 0).all()  # descent widens every distribution
    expected = -0.3 * theta / torch.linalg.vector_norm(theta) * torch.sigmoid(aug.width.detach())
    assert torch.allclose(aug.width.grad, expected, atol=1e-6)
    before = aug.width.detach().clone()
    torch.optim.SGD(aug.parameters(), lr=0.1).step()
    assert (aug.width > before).all()


def test_gradients_reach_every_width():
    aug = A.AffineAugment(reg=0.0)
    x = images(16, c=2, h=16, w=16)
    torch.manual_seed(0)
    y = aug(x)
    proj = torch.randn(y.shape, generator=torch.Generator().manual_seed(3))
    (y * proj).sum().backward()
    g = aug.width.grad
    assert g.shape == (6,) and torch.isfinite(g).all() and (g != 0).all(), g


def test_unlearned_generators_stay_at_zero():
    aug = A.AffineAugment(generators=["rotate"])
    assert aug.width.shape == (1,) and aug.index == [2]
    x = torch.rand(2, 1, 9, 9)
    with torch.no_grad():
        aug.width.fill_(30.0)  # theta = 30: rotations of up to +-15 rad
    torch.manual_seed(0)
    y = aug(x)
    torch.manual_seed(0)  # the same draw through transform() with only the rotation coefficient
    u = torch.rand(2, 1) - 0.5
    eps = torch.zeros(2, 6)
    eps[:, 2] = u[:, 0] * 30.0
    assert torch.allclose(y, A.transform(x, eps), atol=1e-5)


def test_coefficients_within_half_width_and_state_reports_the_largest_shift():
    """Each coefficient lies in [-theta/2, theta/2]: a pure translation moves a dot by at most theta/4 of the size,
    the max_value that state() reports (in fractions of the size, as AugNet's translate_x)."""
    aug = A.AffineAugment(generators=["translate_x"])
    with torch.no_grad():
        aug.width.fill_(math.log(math.expm1(0.5)))  # theta = 0.5: shifts up to 1/8 of 32 px = 4 px
    assert float(aug.widths().detach()) == pytest.approx(0.5)
    largest = aug.state()["layer0"]["translate_x"]["max_value"] * 32
    x = torch.zeros(200, 1, 1, 32)
    x[..., 16] = 1.0
    torch.manual_seed(0)
    pos = (aug(x)[:, 0, 0] * torch.arange(32.0)).sum(-1)  # centre of mass after bilinear warping
    shift = pos - 16
    assert largest == pytest.approx(4.0)
    assert shift.abs().max() <= largest + 1e-4
    assert shift.min() < -0.9 * largest and shift.max() > 0.9 * largest


def test_state_reports_the_largest_rotation_in_radians():
    """max_value of rotate is theta / 2 radians: a dot at the edge of a disc turns by at most that angle."""
    aug = A.AffineAugment(generators=["rotate"])
    with torch.no_grad():
        aug.width.fill_(math.log(math.expm1(1.0)))  # theta = 1
    st = aug.state()
    assert list(st) == ["layer0"] and set(st["layer0"]["rotate"]) == {"weight", "magnitude", "max_value"}
    assert st["layer0"]["rotate"]["weight"] == 1.0  # every generator applies to every image
    assert st["layer0"]["rotate"]["magnitude"] == pytest.approx(1.0)
    top = st["layer0"]["rotate"]["max_value"]
    assert top == pytest.approx(0.5)
    x = torch.zeros(400, 1, 33, 33)
    x[..., 16, 28] = 1.0  # 12 px right of the centre
    torch.manual_seed(1)
    y = aug(x)[:, 0]
    rows, cols = torch.arange(33.0).view(-1, 1) - 16, torch.arange(33.0).view(1, -1) - 16
    mass = y.sum((1, 2))
    angle = torch.atan2(-(y * rows).sum((1, 2)) / mass, (y * cols).sum((1, 2)) / mass).abs()
    assert angle.max() <= top + 0.02 and angle.max() > 0.9 * top


def test_state_at_the_initial_width():
    st = A.AffineAugment(init_width=0.0).state()["layer0"]
    assert list(st) == list(A.GENERATORS)
    assert st["rotate"]["magnitude"] == pytest.approx(math.log(2))
    assert st["rotate"]["max_value"] == pytest.approx(math.log(2) / 2)
    assert st["translate_y"]["max_value"] == pytest.approx(math.log(2) / 4)


def test_augerino_eval_averages_copies():
    trunk = nn.Sequential(nn.Flatten(), nn.Linear(64, 3))
    net = A.augerino(trunk, reg=0.05, copies=5).eval()
    x = torch.rand(4, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(11)
    out = net(x)
    assert out.shape == (4, 3)
    torch.manual_seed(11)  # the same draws: 5 stacked copies through the module, log-softmax, mean
    with torch.no_grad():
        logits = trunk(net.augment(x.repeat(5, 1, 1, 1)))
    assert torch.allclose(out, logits.log_softmax(-1).view(5, 4, 3).mean(0), atol=1e-6)
    assert not torch.allclose(out, logits[:4].log_softmax(-1), atol=1e-3)  # copies differ
    assert net.train()(x).shape == (4, 3)
    assert float(net.penalty().detach()) == pytest.approx(-0.05 * math.log(2) * math.sqrt(6), rel=1e-6)
    assert [p for p in net.augmentation_parameters()] == [net.augment.width]


def test_invalid_generator():
    with pytest.raises(ValueError, match="'rotation'.*Did you mean 'rotate'.*scale, shear, stretch, translate_x"):
        A.AffineAugment(generators=["rotation"])
    with pytest.raises(ValueError, match="Augerino generator"):
        A.augerino(nn.Identity(), generators=["rotate", "flip"])


# ------------------------------------------------------------ paper B's options (Bouchacourt et al., App. G)
def test_defaults_reproduce_the_joint_path_exactly():
    x = images(4)
    for aug in [A.AffineAugment(), A.AffineAugment(caps=None, order="joint", zoom_in_only=False)]:
        torch.manual_seed(0)
        y = aug(x)
        torch.manual_seed(0)  # Benton et al.'s path, written out: one draw, one matrix_exp, one warp
        eps = torch.zeros(4, 6)
        eps[:, aug.index] = (torch.rand(4, 6) - 0.5) * F.softplus(aug.width)
        assert torch.equal(y, A.transform(x, eps))
        assert torch.equal(aug.penalty(), -0.05 * torch.linalg.vector_norm(F.softplus(aug.width)))
        assert list(aug.state_dict()) == ["width"]  # checkpoints of chapters E1-E4 still load
        # the values the module gave before the new options (commit c001c11)
        assert y[:, 0, 6, 6].tolist() == pytest.approx([0.67208523, 0.78229809, 0.46396306, 0.18766540], abs=1e-5)
        assert y.sum().item() == pytest.approx(219.92172241, abs=1e-3)


def test_caps_switch_the_penalty_off_per_coordinate():
    names = ["translate_x", "scale", "rotate"]
    aug = A.AffineAugment(reg=0.3, generators=names, init_width={"translate_x": 0.5, "scale": 2.0, "rotate": 1.0},
                          caps={"scale": 1.5, "rotate": 5.0})
    p = aug.penalty()
    assert float(p.detach()) == pytest.approx(-0.3 * math.hypot(0.5, 1.0), rel=1e-6)
    p.backward()
    g = aug.width.grad
    assert g[1] == 0 and g[0] < 0 and g[2] < 0, g  # scale is above its cap: no push outward
    assert aug.at_cap() == {"translate_x": False, "scale": True, "rotate": False}
    with torch.no_grad():  # back below the cap: regularised again; at the cap exactly: still regularised
        aug.width[1] = math.log(math.expm1(1.4))
    aug.width.grad = None
    aug.penalty().backward()
    assert (aug.width.grad < 0).all() and not any(aug.at_cap().values())
    aug.cap[1] = aug.widths()[1].item()
    aug.width.grad = None
    aug.penalty().backward()
    assert (aug.width.grad < 0).all() and not any(aug.at_cap().values())
    # with every coordinate below its cap the penalty is Benton et al.'s, exactly
    below = dict(reg=0.3, generators=names, init_width={"translate_x": 0.5, "scale": 1.4, "rotate": 1.0})
    assert torch.equal(A.AffineAugment(**below).penalty(), A.AffineAugment(**below, caps={"scale": 1e9}).penalty())


def test_regulariser_alone_stops_a_capped_width_just_above_its_cap():
    aug = A.AffineAugment(reg=1.0, generators=["rotate", "scale"], caps={"scale": 1.0})
    opt = torch.optim.SGD(aug.parameters(), lr=0.5)
    for _ in range(20):
        opt.zero_grad()
        aug.penalty().backward()
        opt.step()
    rotate, scale = aug.widths().tolist()
    assert 1.0 < scale < 1.5 and rotate > 4.0 and aug.at_cap() == {"rotate": False, "scale": True}
    assert A.AffineAugment().at_cap() == {g: False for g in A.GENERATORS}


def test_sequential_is_two_successive_warps_not_the_joint_warp():
    kw = dict(generators=["translate_x", "scale"], init_width={"translate_x": 1.0, "scale": 1.0})
    seq, joint = A.AffineAugment(order="sequential", **kw), A.AffineAugment(**kw)
    back = A.AffineAugment(order="sequential", generators=["scale", "translate_x"],
                           init_width={"translate_x": 1.0, "scale": 1.0})
    x = images(8, c=2, h=16, w=16)
    torch.manual_seed(3)
    y = seq(x)
    torch.manual_seed(3)
    u = (torch.rand(8, 2) - 0.5) * seq.widths()
    tx, sc = torch.zeros(8, 6), torch.zeros(8, 6)
    tx[:, 0], sc[:, 3] = u[:, 0], u[:, 1]
    assert torch.equal(y, A.transform(A.transform(x, tx), sc))  # translate, then scale
    for other in (joint, back):
        torch.manual_seed(3)
        assert (other(x) - y).abs().amax((1, 2, 3)).min() > 1e-2


def test_sequential_translates_before_it_scales():
    """A dot at the centre ends at -t exp(-s) of the half-width: the shift is zoomed with the image (joint:
    -t (e^s - 1) / (s e^s); scale then translate: -t)."""
    aug = A.AffineAugment(order="sequential", generators=["translate_x", "scale"],
                          init_width={"translate_x": 1.0, "scale": 1.0})
    x = torch.zeros(300, 1, 1, 65)
    x[..., 32] = 1.0
    torch.manual_seed(0)
    y = aug(x)[:, 0, 0].detach()
    torch.manual_seed(0)
    t, s = ((torch.rand(300, 2) - 0.5) * aug.widths().detach()).unbind(1)
    pos = (y * torch.arange(65.0)).sum(-1) / y.sum(-1) - 32  # pixels from the centre
    half = 65 / 2
    assert (pos - (-t * torch.exp(-s) * half)).abs().max() < 0.5  # bilinear: within half a pixel
    assert (pos - (-t * torch.expm1(s) / (s * torch.exp(s)) * half)).abs().max() > 2.0
    assert (pos - (-t * half)).abs().max() > 2.0


def square_mass(aug, n=300, seed=0):
    x = torch.zeros(n, 1, 40, 40)
    x[..., 17:23, 17:23] = 1.0  # a centred bright 6 x 6 square
    torch.manual_seed(seed)
    return aug(x).detach().sum((1, 2, 3)) / 36


def test_zoom_in_only_never_zooms_out():
    init = {"scale": 2.52}  # zoom in up to e^1.26 = 3.53x
    aug = A.AffineAugment(generators=["scale"], init_width=init, zoom_in_only=True)
    ratio = square_mass(aug)
    assert ratio.min() >= 1 - 1e-4  # negative coefficient: a smaller region of the input, the square grows
    top = aug.state()["layer0"]["scale"]["max_value"]
    assert top == pytest.approx(1.26, rel=1e-5)  # the largest |coefficient|, theta / 2
    assert 0.9 * math.exp(top) < ratio.max().sqrt() <= 1.02 * math.exp(top)
    both = square_mass(A.AffineAugment(generators=["scale"], init_width=init))
    assert both.min() < 0.5 and both.max() > 4  # the symmetric default zooms both ways
    eps = A.AffineAugment(generators=["rotate", "scale"], init_width=init, zoom_in_only=True).coefficients(2000)
    assert eps[:, 1].max() <= 0 and eps[:, 1].min() >= -1.26 - 1e-6 and eps[:, 0].min() < 0 < eps[:, 0].max()


def test_init_width_dict_sets_theta():
    want = {"translate_x": 1.2, "translate_y": 1.2, "scale": 2.52, "shear": 1e-3, "stretch": 50.0}
    aug = A.AffineAugment(init_width=want)
    theta = dict(zip(aug.names, aug.widths().tolist(), strict=True))
    for g, t in want.items():
        assert theta[g] == pytest.approx(t, rel=1e-6), g
    assert theta["rotate"] == pytest.approx(math.log(2))  # left out: width 0, as the float default
    assert aug.width.dtype == torch.float32 and torch.isfinite(aug.width).all()
    st = aug.state()["layer0"]
    assert st["translate_x"]["max_value"] == pytest.approx(0.3) and st["scale"]["magnitude"] == pytest.approx(2.52)


def test_augerino_passes_the_options_and_the_trunk_evaluates_without_augmentation():
    trunk = nn.Sequential(nn.Flatten(), nn.Linear(64, 3))
    net = A.augerino(trunk, 0.1, 2, ["translate_x", "scale"], {"scale": 2.0}, caps={"scale": 1.0},
                     order="sequential", zoom_in_only=True).eval()
    aug = net.augment
    assert (aug.reg, aug.order, aug.zoom_in_only, aug.caps, net.copies) == (0.1, "sequential", True, {"scale": 1.0}, 2)
    assert aug.widths()[1].item() == pytest.approx(2.0) and aug.at_cap() == {"translate_x": False, "scale": True}
    x = torch.rand(5, 1, 8, 8)
    with torch.no_grad():
        assert torch.equal(net.trunk(x), trunk(x)) and not torch.allclose(net(x, reduce="logits"), trunk(x))


def test_invalid_options():
    with pytest.raises(ValueError, match=r"caps: Unknown learned generator 'rotat'.*Valid learned generators: rotate"):
        A.AffineAugment(generators=["rotate"], caps={"rotat": 1.0})
    with pytest.raises(ValueError, match=r"caps: .*'scale'.*Valid learned generators: rotate, translate_x\."):
        A.AffineAugment(generators=["translate_x", "rotate"], caps={"scale": 1.0})  # a generator not learned
    with pytest.raises(ValueError, match=r"init_width: Unknown learned generator 'flip'.*Valid learned generators"):
        A.augerino(nn.Identity(), init_width={"flip": 1.0})
    for cap in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="caps: every cap must be > 0"):
            A.AffineAugment(caps={"scale": cap})
    for t in (0.0, -0.5, float("inf")):
        with pytest.raises(ValueError, match="init_width: the widths theta must be positive and finite"):
            A.AffineAugment(init_width={"scale": t})
    with pytest.raises(ValueError, match=r"order 'sequentail'.*Valid Augerino orders: joint, sequential\."):
        A.augerino(nn.Identity(), order="sequentail")
    with pytest.raises(ValueError, match="zoom_in_only needs the 'scale' generator"):
        A.AffineAugment(generators=["rotate"], zoom_in_only=True)


# ----------------------------------------------------------------------------- under bf16 autocast
def test_the_warp_and_its_gradient_are_float32_under_bf16_autocast():
    """A model trained with TrainConfig.cpu_bf16 runs its classifier in bf16; the learned warp stays in float32
    (invlib.learned.in_float32): the same images and width gradients as without autocast, to float32's rounding."""
    x = images(6, 3, 16, 16, seed=2)
    grads, outs = [], []
    for bf16 in (False, True):
        aug = A.AffineAugment(reg=0.1, generators=["rotate", "scale"], init_width={"rotate": 0.7, "scale": 0.4})
        torch.manual_seed(0)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = aug(x)
        out.square().mean().backward()
        outs.append(out)
        grads.append(aug.width.grad.clone())
    assert outs[1].dtype == torch.float32
    assert torch.allclose(outs[0], outs[1], atol=1e-6) and torch.allclose(grads[0], grads[1], rtol=1e-5, atol=1e-8)
    assert float(grads[1].abs().min()) > 0, "both widths get a gradient"
