"""invlib.transform_types: paper C's nine transformation types, as random training augmentations
(:class:`TypeAugment`, the zoo's ``tm_<type>``) and as fixed measurement transforms (``measure``, ``reference``,
the grids), with their training ranges, crop windows, labels and errors."""

import pytest
import torch
import torch.nn.functional as F

from invlib import transform_types as tt
from invlib import transforms as T
from invlib import zoo

KINDS = sorted(tt.TYPES)
# a non-trivial magnitude of each type (the top of the paper's ranges)
STRONG = {"color_jitter": 20.0, "crop": 320 / 227, "elastic": 10.0, "blur": 3.0, "noise": 20.0, "mirror": "hv",
          "perspective": 0.1, "rotation": 20.0, "shear": 20.0}
IDENTITY = {"elastic": (0.0, 3.0), "mirror": "", "crop": tt.CENTRE}


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def images(b=8, c=3, h=28, w=28, seed=0):
    """Smooth-ish images with room on both sides of [0, 1] (no clamping by small colour changes)."""
    x = torch.rand(b, c, h // 4, w // 4, generator=seeded(seed))
    return 0.2 + 0.6 * F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)


def test_nine_types_and_their_grids():
    assert len(tt.TYPES) == 9 and set(tt.GRIDS) == set(tt.SMALL_GRIDS) == set(tt.PAPER_MAGNITUDES) == set(tt.TYPES)
    assert tt.grid("rotation") == (-45.0, -30.0, -25.0, -20.0, -15.0, -10.0, -5.0, -2.5,
                                   2.5, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 45.0)
    assert tt.grid("crop") == tuple(k for k in range(25) if k != 12)
    assert len(tt.grid("elastic")) == 12 and all(len(v) == 2 for v in tt.grid("elastic"))
    for kind in tt.TYPES:
        small, paper = tt.grid(kind, "small"), tt.grid(kind, "paper")
        assert not any(tt.is_identity(kind, v) for v in paper + small)  # the identity is not a measurement
        if kind not in ("elastic", "crop", "mirror"):
            # the small grid reaches as far as the paper's, about twice the largest training magnitude
            top = max(abs(v) for v in paper)
            assert max(abs(v) for v in small) == top
            assert top >= 1.5 * tt.PAPER_MAGNITUDES[kind][-1]
    with pytest.raises(ValueError, match="Valid grids: paper, small"):
        tt.grid("rotation", "tiny")


# ------------------------------------------------------------------------------ errors
def test_unknown_type_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"Unknown transformation type 'rotate'. Did you mean 'rotation'\? Valid "
                                         r"transformation types: blur, color_jitter, crop, elastic, mirror, noise, "
                                         r"perspective, rotation, shear\."):
        tt.check_kind("rotate")
    for call in (lambda: tt.grid("zoom"), lambda: tt.measure("zoom", images(), 1.0),
                 lambda: tt.reference("zoom", images()), lambda: tt.TypeAugment("zoom", 1.0)):
        with pytest.raises(ValueError, match="Valid transformation types: blur, color_jitter"):
            call()
    assert tt.check_kind("shear") == "shear"


def test_values_off_the_grid_say_the_grid():
    small = tt.grid("rotation", "small")
    with pytest.raises(ValueError, match=r"^7.0 is not on the rotation grid: -30.0, -15.0, -5.0, 5.0, 15.0, 30.0, "
                                         r"45.0\.$"):
        tt.check_value("rotation", 7.0, small)
    assert tt.check_value("rotation", 15, small) == 15.0  # an int on the grid is its float
    assert tt.check_value("elastic", [10.0, 2.0], tt.grid("elastic")) == (10.0, 2.0)  # lists from JSON
    assert tt.check_value("crop", 24, tt.grid("crop")) == 24
    with pytest.raises(ValueError, match="is not on the crop grid"):
        tt.check_value("crop", 12, tt.grid("crop"))
    with pytest.raises(ValueError, match="is not on the mirror grid: h, v, hv"):
        tt.check_value("mirror", "x", tt.MIRRORS)
    with pytest.raises(ValueError, match="A mirror value is one of h, v, hv, got 'x'"):
        tt.measure("mirror", images(), "x")
    with pytest.raises(ValueError, match="A crop position is 0..24"):
        tt.crop_offsets(25)


def test_check_value_without_a_grid_normalises_the_form_only():
    assert tt.check_value("rotation", 7) == 7.0 and isinstance(tt.check_value("rotation", 7), float)
    assert tt.check_value("elastic", [10, 2]) == (10.0, 2.0)
    assert tt.check_value("crop", 3.0) == 3 and isinstance(tt.check_value("crop", 3.0), int)
    assert tt.check_value("mirror", "hv") == "hv"


def test_bad_training_magnitudes():
    with pytest.raises(ValueError, match="A mirror magnitude is one of h, v, hv, got 'x'"):
        tt.TypeAugment("mirror", "x")
    with pytest.raises(ValueError, match="The rotation magnitude must be a number >= 0, got -5.0"):
        tt.TypeAugment("rotation", -5.0)
    with pytest.raises(ValueError, match="The crop magnitude must be a number >= 1, got 0.5"):
        tt.TypeAugment("crop", 0.5)
    with pytest.raises(ValueError, match="must be a number"):
        tt.TypeAugment("noise", float("nan"))
    with pytest.raises(ValueError, match="must be a number"):
        tt.TypeAugment("blur", "3")


# ------------------------------------------------------------------------------ measurement
@pytest.mark.parametrize("kind", KINDS)
def test_measure_at_the_identity_returns_the_reference_exactly(kind):
    x = images(b=3)
    value = IDENTITY.get(kind, 0.0)
    assert tt.is_identity(kind, value)
    out = tt.measure(kind, x, value)
    assert torch.equal(out, tt.reference(kind, x))
    if kind == "crop":  # the centre window of the resized image, not the image itself
        assert not torch.equal(out, x) and torch.equal(tt.measure(kind, x, tt.CENTRE, resize=1.0), x)
    else:
        assert out is x or torch.equal(out, x)


@pytest.mark.parametrize("kind", KINDS)
def test_measure_is_deterministic_and_moves_the_images(kind):
    x = images(b=4)
    value = tt.grid(kind, "small")[-1]
    a, b = tt.measure(kind, x, value), tt.measure(kind, x, value)
    assert torch.equal(a, b) and a.shape == x.shape and a.min() >= 0 and a.max() <= 1
    assert (a - x).abs().max() > 0.02
    if kind in ("elastic", "perspective"):  # one field / one set of corners for every image, from the seed
        same = tt.measure(kind, x[:1].expand(4, -1, -1, -1), value)
        assert all(torch.equal(same[0], same[i]) for i in range(4))
        assert not torch.equal(a, tt.measure(kind, x, value, seed=1))


def test_measure_uses_the_registry_ops_in_paper_units():
    x = images(b=3)
    assert torch.equal(tt.measure("color_jitter", x, -15.0), T.apply("brightness_shift", x, -15 / 255))
    assert torch.equal(tt.measure("color_jitter", x, 45.0), (x + 45 / 255).clamp(0, 1))
    assert torch.equal(tt.measure("rotation", x, 15.0), T.apply("rotate", x, 15.0))
    assert torch.equal(tt.measure("shear", x, -10.0), T.apply("shear_x", x, -10.0))
    assert torch.equal(tt.measure("blur", x, 2.0), T.apply("gaussian_blur", x, 2.0))
    assert torch.equal(tt.measure("mirror", x, "h"), x.flip(-1))
    assert torch.equal(tt.measure("mirror", x, "v"), x.flip(-2))
    assert torch.equal(tt.measure("mirror", x, "hv"), x.flip(-1, -2))
    assert torch.equal(tt.measure("elastic", x, (10.0, 2.0)),
                       T.apply("elastic", x, 10.0, seeded(0), sigma=2.0, shared=True))
    assert torch.equal(tt.measure("perspective", x, 0.1), T.apply("perspective", x, 0.1, seeded(0), shared=True))


def test_noise_measurement_is_new_in_each_batch_and_reproducible():
    x = torch.full((64, 1, 16, 16), 0.5)
    a = tt.measure("noise", x, 10.0, batch=0)
    assert torch.equal(a, tt.measure("noise", x, 10.0, batch=0))
    assert not torch.equal(a, tt.measure("noise", x, 10.0, batch=1))
    assert not torch.equal(a, tt.measure("noise", x, 10.0, seed=1))
    assert (a - x).std().item() == pytest.approx(10 / 255, rel=0.05)  # grey levels of 0..255
    assert not torch.equal(a[0], a[1])  # each image its own noise


def test_crop_offsets_corners():
    assert tt.crop_offsets(0) == (-1.0, -1.0)
    assert tt.crop_offsets(4) == (1.0, -1.0)  # upper right: row 0, column 4
    assert tt.crop_offsets(20) == (-1.0, 1.0)  # lower left
    assert tt.crop_offsets(24) == (1.0, 1.0)
    assert tt.crop_offsets(tt.CENTRE) == (0.0, 0.0)
    assert tt.crop_offsets(7) == (0.0, -0.5)
    with pytest.raises(ValueError, match="0..24"):
        tt.crop_offsets(-1)


@pytest.mark.parametrize("position, rows, cols", [(0, slice(0, 4), slice(0, 4)), (24, slice(4, 8), slice(4, 8)),
                                                  (4, slice(0, 4), slice(4, 8))])
def test_crop_window_is_the_corner_of_the_resized_image(position, rows, cols):
    """At resize 2 a corner window is one quadrant of the image, upsampled x2 (bilinear, half-pixel centres)."""
    x = torch.rand(2, 3, 8, 8, generator=seeded(1))
    out = tt.measure("crop", x, position, resize=2.0)
    expected = F.interpolate(x[..., rows, cols], scale_factor=2, mode="bilinear", align_corners=False)
    torch.testing.assert_close(out[..., 1:7, 1:7], expected[..., 1:7, 1:7], atol=1e-5, rtol=0)
    centre = tt.reference("crop", x, resize=2.0)
    expected = F.interpolate(x[..., 2:6, 2:6], scale_factor=2, mode="bilinear", align_corners=False)
    torch.testing.assert_close(centre[..., 1:7, 1:7], expected[..., 1:7, 1:7], atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------ training ranges
@pytest.mark.parametrize("kind, value, magnitude, expected", [
    ("rotation", 15.0, 20.0, True), ("rotation", -20.0, 20.0, True), ("rotation", 30.0, 20.0, False),
    ("rotation", 5.0, None, False),  # a baseline saw no transform
    ("shear", -15.0, 15.0, True), ("noise", 30.0, 20.0, False), ("blur", 1.0, 1.5, True),
    ("perspective", 0.06, 0.05, False),
    ("color_jitter", -35.0, 20.0, True), ("color_jitter", 45.0, 20.0, False),  # within two sigmas of the cast
    ("mirror", "h", "h", True), ("mirror", "v", "h", False), ("mirror", "hv", "h", False),
    ("mirror", "hv", "hv", True), ("mirror", "v", "hv", True),
    ("elastic", (10.0, 2.0), (10.0, 3.0), True), ("elastic", (15.0, 2.0), (10.0, 3.0), False),
    ("elastic", (5.0, 3.5), 5.0, True),
    ("crop", 0, 240 / 227, False), ("crop", 0, 320 / 227, True), ("crop", 12, 240 / 227, True),
    # window 7 is half the largest offset up, measured at 320/227: 23 px of 227; x256 allowed 14.5 px, x288 30.5
    ("crop", 7, 256 / 227, False), ("crop", 7, 288 / 227, True), ("crop", 2, 288 / 227, False),
])
def test_in_training_range(kind, value, magnitude, expected):
    assert tt.in_training_range(kind, value, magnitude) is expected


def test_crop_in_training_range_depends_on_the_measured_resize():
    # measured at resize 256/227 a corner window is as far off-centre as the x256 network's largest offset
    assert tt.in_training_range("crop", 0, 256 / 227, resize=256 / 227)
    assert not tt.in_training_range("crop", 0, 240 / 227, resize=256 / 227)


# ------------------------------------------------------------------------------ training augmentation
@pytest.mark.parametrize("kind", KINDS)
def test_type_augment_shape_range_determinism_and_change(kind):
    x = images(b=16)
    aug = tt.TypeAugment(kind, STRONG[kind])
    y = aug(x, seeded(0))
    assert y.shape == x.shape and y.dtype == x.dtype
    assert y.min() >= 0 and y.max() <= 1
    assert torch.equal(y, aug(x, seeded(0)))
    assert not torch.equal(y, aug(x, seeded(1)))
    assert (y - x).abs().amax((1, 2, 3)).mean() > 0.02  # most images visibly change
    # one transform per image: identical images come out different
    same = aug(x[:1].expand(16, -1, -1, -1), seeded(0))
    assert any(not torch.equal(same[0], same[i]) for i in range(1, 16))
    # 1-channel images too
    assert aug(x[:, :1], seeded(0)).shape == (16, 1, 28, 28)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "mirror"])
def test_type_augment_at_magnitude_zero_keeps_the_images(kind):
    x = images(b=4)
    y = tt.TypeAugment(kind, 1.0 if kind == "crop" else 0.0)(x, seeded(0))
    torch.testing.assert_close(y, x, atol=1e-5, rtol=0)


@pytest.mark.parametrize("axes, flips", [("h", {(), ("h",)}), ("v", {(), ("v",)}),
                                         ("hv", {(), ("h",), ("v",), ("h", "v")})])
def test_type_augment_mirror_flips_each_image_on_the_given_axes(axes, flips):
    x = images(b=32)
    y = tt.TypeAugment("mirror", axes)(x, seeded(3))
    seen = set()
    for xi, yi in zip(x, y):
        match = [f for f in flips if torch.equal(yi, xi.flip([{"h": -1, "v": -2}[a] for a in f]) if f else xi)]
        assert len(match) == 1
        seen.add(match[0])
    assert seen == flips  # every flip (and none) happens in 32 draws of probability >= 1/4


def test_type_augment_colour_jitter_is_a_per_image_colour_cast():
    x = images(b=64)
    y = tt.TypeAugment("color_jitter", 10.0)(x, seeded(0))
    d = (y - x).double()
    assert (d - d[..., :1, :1]).abs().max() < 1e-6  # one value per image and channel
    assert d[..., 0, 0].std().item() == pytest.approx(10 / 255, rel=0.25)  # N(0, m) grey levels


def test_type_augment_draws_within_the_range():
    x = torch.full((200, 1, 16, 16), 0.5)
    noise = tt.TypeAugment("noise", 20.0)(x, seeded(0)) - x
    stds = noise.flatten(1).std(1)
    assert stds.max() <= 20 / 255 * 1.3 and stds.min() < 2 / 255 and stds.max() > 15 / 255  # sigma in [0, m]
    # rotation draws in [-m, m]: a bar from the centre to the right edge turns up (counter-clockwise) or down, its
    # centre of mass no farther than at +-m degrees
    bar = torch.zeros(1, 1, 29, 29)
    bar[..., 14, 15:27] = 1
    bars = bar.expand(200, -1, -1, -1)
    rows = torch.arange(29.0).view(1, 1, 29, 1)
    lift = lambda y: 14 - (y * rows).sum((1, 2, 3)) / y.sum((1, 2, 3))  # rows above the centre
    for m in (5.0, 20.0):
        top = lift(T.apply("rotate", bar, m)).item()
        assert top > 0 and lift(T.apply("rotate", bar, -m)).item() == pytest.approx(-top, abs=1e-4)
        drawn = lift(tt.TypeAugment("rotation", m)(bars, seeded(0)))
        assert drawn.abs().max() <= top * 1.01
        assert drawn.max() > top / 2 and drawn.min() < -top / 2  # both directions, far into the range


def test_zoo_augmentations_are_the_nine_types():
    assert {f"tm_{k}" for k in tt.TYPES} <= set(zoo.AUGMENTATIONS)
    aug = zoo.augmentation("tm_rotation")
    assert aug == tt.TypeAugment("rotation", 20.0)  # the top of the paper's range by default
    assert zoo.augmentation("tm_elastic", magnitude=5.0, sigma=2.0) == tt.TypeAugment("elastic", 5.0, 2.0)
    assert zoo.augmentation("tm_mirror") == tt.TypeAugment("mirror", "hv")
    with pytest.raises(ValueError, match=r"Unknown augmentation 'tm_rotate'. Did you mean 'tm_rotation'\?.*tm_blur"):
        zoo.augmentation("tm_rotate")
    with pytest.raises(ValueError, match=r"Unknown augmentation 'tm_rotate'.*Valid augmentations:.*tm_shear"):
        zoo.Spec(augment="tm_rotate")
    with pytest.raises(ValueError, match="The rotation magnitude must be a number >= 0, got -5.0"):
        zoo.augmentation("tm_rotation", magnitude=-5.0)
    with pytest.raises(TypeError, match=r"'tm_rotation' takes the parameters \(magnitude\); got \['sigma'\]"):
        zoo.Spec(augment="tm_rotation", augment_params={"sigma": 2.0})


def test_zoo_spec_with_a_bad_type_magnitude_raises():
    with pytest.raises(ValueError, match="rotation magnitude must be a number >= 0"):
        zoo.Spec(augment="tm_rotation", augment_params={"magnitude": -5.0})


# ------------------------------------------------------------------------------ labels
def test_labels():
    assert tt.value_label("elastic", (10.0, 2.5)) == "a10 s2.5"
    assert tt.value_label("crop", 0) == "r0c0" and tt.value_label("crop", 23) == "r4c3"
    assert tt.value_label("rotation", -2.5) == "-2.5" and tt.value_label("mirror", "hv") == "hv"
    assert tt.magnitude_label("shear", 15.0) == "Shear ±15"
    assert tt.magnitude_label("mirror", "hv") == "Mirror Horz./Vert."
    assert tt.magnitude_label("noise", 20.0) == "Gaussian Noise σ=20"
    assert tt.magnitude_label("elastic", 10.0, 2.0) == "Elastic a<=10 s=2"
    assert tt.magnitude_label("crop", 256 / 227) == "Crop x1.13"
    assert tt.magnitude_label(None, None) == "Baseline"
