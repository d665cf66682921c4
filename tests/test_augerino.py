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
