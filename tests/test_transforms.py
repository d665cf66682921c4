"""invlib.transforms: registry, identities, per-sample batching, semantics, torchvision, gradients."""

import math

import pytest
import torch
import torch.nn.functional as Fn
import torchvision.transforms.v2.functional as TF

from invlib import transforms as T

ALL = T.available()
GEOMETRIC = [
    "rotate",
    "translate_x",
    "translate_y",
    "shear_x",
    "shear_y",
    "zoom_in",
    "zoom_out",
    "hflip",
    "vflip",
]
APPEARANCE = [
    "brightness",
    "contrast",
    "saturation",
    "hue",
    "posterize",
    "solarize",
    "equalize",
    "autocontrast",
    "invert",
    "sharpness",
    "gaussian_blur",
    "gaussian_noise",
]
RANDOM = {"gaussian_noise", "color_cast", "elastic", "perspective"}  # the ops that take a generator


def images(b=4, c=3, h=16, w=16, seed=0):
    """uint8-valued float images (as decoded from files), so 8-bit ops can be compared exactly."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (b, c, h, w), generator=g).float() / 255


def mags(name, n, seed=0):
    return T.sample_magnitudes(name, n, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------------------------------- registry


def test_registry_lists_every_op_by_group():
    # later ops may join the registry: check the built-in ones are there, in the right group
    assert set(GEOMETRIC) <= set(T.available("geometric"))
    assert set(APPEARANCE) <= set(T.available("appearance"))
    assert ALL == sorted(T.available("geometric") + T.available("appearance"))
    for name in ALL:
        op = T.get(name)
        assert op.name == name and op.low <= op.identity <= op.high and op.unit and op.doc
        assert op.random == (name in RANDOM)


def test_levels_run_from_identity_to_far_end():
    assert torch.allclose(T.levels("rotate", 5), torch.tensor([0.0, 45, 90, 135, 180]))
    assert torch.allclose(T.levels("solarize", 3), torch.tensor([1.0, 0.5, 0.0]))
    assert torch.allclose(T.levels("zoom_out", 2), torch.tensor([1.0, 0.1]))
    for name in ALL:
        lv = T.levels(name)
        op = T.get(name)
        assert lv.shape == (10,) and lv[0] == op.identity and lv[-1] in (op.low, op.high)


def test_sample_magnitudes_in_range_and_reproducible():
    m = T.sample_magnitudes("rotate", 1000, generator=torch.Generator().manual_seed(3))
    assert m.shape == (1000,) and m.min() >= -180 and m.max() <= 180 and m.min() < -150 and m.max() > 150
    assert torch.equal(m, T.sample_magnitudes("rotate", 1000, generator=torch.Generator().manual_seed(3)))
    m = T.sample_magnitudes("zoom_in", 500, low=1.5, high=2.0)
    assert m.min() >= 1.5 and m.max() <= 2.0
    with pytest.raises(ValueError, match=r"1 <= low <= high <= 4"):
        T.sample_magnitudes("zoom_in", 5, low=0.5)
    with pytest.raises(ValueError, match="low <= high"):
        T.sample_magnitudes("rotate", 5, low=10, high=-10)


def test_register_adds_an_op_in_one_function():
    @T.register("_fade_test", "appearance", 0, 1, 0, "weight")
    def _fade_test(x, m):
        """Fade towards white."""
        return x + m.view(-1, 1, 1, 1) * (1 - x)

    try:
        assert "_fade_test" in T.available("appearance") and T.get("_fade_test").doc == "Fade towards white."
        assert torch.equal(T.apply("_fade_test", torch.zeros(2, 1, 4, 4), 1.0), torch.ones(2, 1, 4, 4))
        with pytest.raises(ValueError, match="already registered"):
            T.register("_fade_test", "appearance", 0, 1, 0, "weight")
    finally:
        T._REGISTRY.pop("_fade_test")


# ------------------------------------------------------------------------------------------- every op


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("name", ALL)
def test_identity_magnitude_returns_input(name, c):
    x = images(c=c)
    y = T.apply(name, x, T.get(name).identity)
    assert y.shape == x.shape and y.dtype == x.dtype
    if name == "posterize":  # 8 bits: exact on 8-bit-valued images
        assert torch.equal(y, x)
    else:
        torch.testing.assert_close(y, x, atol=1e-5, rtol=0)


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("name", ALL)
def test_random_magnitudes_keep_shape_dtype_range(name, c):
    for dtype in (torch.float32, torch.float64):
        x = images(b=6, c=c).to(dtype)
        y = T.apply(name, x, mags(name, 6))
        assert y.shape == x.shape and y.dtype == dtype
        assert y.min() >= 0 and y.max() <= 1 and torch.isfinite(y).all()


@pytest.mark.parametrize("name", [n for n in ALL if n != "gaussian_noise"])
def test_batch_equals_each_image_alone(name):
    x = images(b=5, c=3, h=12, w=14)  # non-square: catches swapped height/width
    m = mags(name, 5, seed=1)
    if name in ("hflip", "vflip", "equalize", "autocontrast", "invert"):
        m = torch.tensor([0.0, 0.3, 0.5, 0.8, 1.0])
    # a random op draws once for the whole batch with shared=True: then each image alone, from the same seed,
    # gets the same draw
    opts = lambda: dict(generator=torch.Generator().manual_seed(3), shared=True) if name in RANDOM else {}
    batched = T.apply(name, x, m, **opts())
    alone = torch.cat([T.apply(name, x[i : i + 1], m[i], **opts()) for i in range(5)])
    torch.testing.assert_close(batched, alone, atol=1e-6, rtol=0)


def test_scalar_magnitude_broadcasts():
    x = images()
    assert torch.equal(T.apply("brightness", x, 0.5), T.apply("brightness", x, torch.full((4,), 0.5)))
    assert torch.equal(T.apply("rotate", x, 30), T.apply("rotate", x, torch.tensor(30.0)))


# ------------------------------------------------------------------------------------------- semantics


def test_rotate_90_is_rot90_counter_clockwise():
    x = images(h=16, w=16)
    torch.testing.assert_close(T.apply("rotate", x, 90.0), torch.rot90(x, 1, (-2, -1)), atol=1e-5, rtol=0)
    torch.testing.assert_close(T.apply("rotate", x, -90.0), torch.rot90(x, -1, (-2, -1)), atol=1e-5, rtol=0)
    torch.testing.assert_close(T.apply("rotate", x, 180.0), x.flip(-1).flip(-2), atol=1e-5, rtol=0)
    # counter-clockwise as displayed (y down): the right-hand column becomes the top row
    dot = torch.zeros(1, 1, 9, 9)
    dot[..., 4, 8] = 1.0
    assert T.apply("rotate", dot, 90.0)[0, 0].argmax().item() == 0 * 9 + 4


def test_translate_moves_content_by_a_fraction_of_the_size():
    x = images(h=12, w=16)
    y = T.apply("translate_x", x, 0.5)
    torch.testing.assert_close(y[..., 8:], x[..., :8], atol=1e-6, rtol=0)
    assert y[..., :8].abs().max() < 1e-6
    y = T.apply("translate_y", x, -0.25)  # up by 3 rows
    torch.testing.assert_close(y[..., :9, :], x[..., 3:, :], atol=1e-6, rtol=0)
    assert y[..., 9:, :].abs().max() < 1e-6


def test_shear_x_45_shifts_each_row_by_its_offset_from_the_centre():
    x = images(h=15, w=15)  # centre row 7
    y = T.apply("shear_x", x, 45.0)
    torch.testing.assert_close(y[..., 7, :], x[..., 7, :], atol=1e-5, rtol=0)
    torch.testing.assert_close(y[..., 9, 2:], x[..., 9, :-2], atol=1e-5, rtol=0)  # 2 below -> 2 right
    torch.testing.assert_close(y[..., 4, :-3], x[..., 4, 3:], atol=1e-5, rtol=0)  # 3 above -> 3 left
    y = T.apply("shear_y", x, 45.0)
    torch.testing.assert_close(y[..., 2:, 9], x[..., :-2, 9], atol=1e-5, rtol=0)  # 2 right -> 2 down
    # the paper grid's extremes (+-91, +-89 degrees) stay finite
    for deg in (-91.0, -89.0, 89.0, 90.0, 91.0):
        assert torch.isfinite(T.apply("shear_x", x, deg)).all()


def test_zoom_in_2_is_a_centre_crop_upsampled():
    x = images(h=32, w=32)
    crop = Fn.interpolate(x[..., 8:24, 8:24], scale_factor=2, mode="bilinear", align_corners=False)
    y = T.apply("zoom_in", x, 2.0)
    # interpolate clamps at the crop's border where zoom_in still sees the neighbouring pixels
    torch.testing.assert_close(y[..., 1:-1, 1:-1], crop[..., 1:-1, 1:-1], atol=1e-5, rtol=0)


def test_zoom_out_shrinks_about_the_centre_with_black_fill():
    x = torch.ones(2, 3, 16, 16)
    y = T.apply("zoom_out", x, 0.5)
    assert y[..., :3, :].max() == 0 and y[..., :, -3:].max() == 0
    assert torch.allclose(y[..., 5:11, 5:11], torch.ones(1))


def test_flips():
    x = images()
    assert torch.equal(T.apply("hflip", x, 1.0), x.flip(-1))
    assert torch.equal(T.apply("vflip", x, 1.0), x.flip(-2))
    y = T.apply("hflip", x, torch.tensor([0.0, 0.49, 0.5, 1.0]))
    assert torch.equal(y[:2], x[:2]) and torch.equal(y[2:], x[2:].flip(-1))


def test_point_ops():
    x = images()
    assert T.apply("brightness", x, 0.0).max() == 0
    torch.testing.assert_close(T.apply("invert", x, 1.0), 1 - x)
    torch.testing.assert_close(T.apply("invert", x, 0.25), 0.75 * x + 0.25 * (1 - x))
    assert set(T.apply("posterize", x, 1.0).unique().tolist()) <= {0.0, 0.5}
    assert set(T.apply("posterize", x, 2.4).unique().tolist()) <= {0.0, 0.25, 0.5, 0.75}  # rounded to 2 bits
    assert T.apply("posterize", x, 0.0).max() == 0
    torch.testing.assert_close(T.apply("solarize", x, 0.0), 1 - x)
    torch.testing.assert_close(T.apply("solarize", x, 0.5), torch.where(x >= 0.5, 1 - x, x))
    assert torch.equal(T.apply("solarize", torch.ones(1, 1, 2, 2), 1.0), torch.ones(1, 1, 2, 2))
    gray = T.apply("saturation", x, 0.0)
    assert torch.allclose(gray[:, 0], gray[:, 1]) and torch.allclose(gray[:, 1], gray[:, 2])
    flat = T.apply("contrast", x, 0.0)
    assert torch.allclose(flat, flat.mean(dim=(1, 2, 3), keepdim=True).expand_as(flat))
    # hue: half a turn twice is the identity, and +0.5 == -0.5
    torch.testing.assert_close(T.apply("hue", T.apply("hue", x, 0.5), 0.5), x, atol=1e-5, rtol=0)
    torch.testing.assert_close(T.apply("hue", x, 0.5), T.apply("hue", x, -0.5), atol=1e-5, rtol=0)


def test_saturation_and_hue_are_identity_on_grayscale():
    x = images(c=1)
    assert torch.equal(T.apply("saturation", x, 2.0), x) and torch.equal(T.apply("hue", x, 0.3), x)


def test_gaussian_blur_smooths_more_with_larger_sigma():
    x = images(b=1, h=24, w=24).expand(4, -1, -1, -1)
    y = T.apply("gaussian_blur", x, torch.tensor([0.0, 0.5, 1.5, 4.0]))
    stds = y.std(dim=(1, 2, 3))
    assert (stds[1:] < stds[:-1]).all()
    torch.testing.assert_close(y.mean(dim=(2, 3)), x.mean(dim=(2, 3)), atol=0.02, rtol=0)
    const = torch.full((2, 3, 8, 8), 0.3)
    torch.testing.assert_close(T.apply("gaussian_blur", const, 2.0), const)


def test_gaussian_noise_std_is_measured_and_generator_reproducible():
    x = torch.full((4, 3, 64, 64), 0.5)
    m = torch.tensor([0.0, 0.05, 0.1, 0.15])  # >= 3 std inside [0, 1]: the clamp hardly matters
    y = T.apply("gaussian_noise", x, m, generator=torch.Generator().manual_seed(0))
    noise = y - x
    torch.testing.assert_close(noise.std(dim=(1, 2, 3)), m, atol=0.005, rtol=0.03)
    assert noise.mean().abs() < 0.005
    assert torch.equal(y, T.apply("gaussian_noise", x, m, generator=torch.Generator().manual_seed(0)))
    assert not torch.equal(y, T.apply("gaussian_noise", x, m, generator=torch.Generator().manual_seed(1)))
    # ops without randomness ignore the generator
    assert torch.equal(T.apply("invert", x, 1.0, generator=torch.Generator()), 1 - x)


# ------------------------------------------------------------------------------------------- torchvision

# Colour ops follow the same formulas as torchvision on float tensors; the tolerance only absorbs float32
# rounding from a different order of operations (e.g. hue through a closed-form HSV -> RGB).
TV_COLOUR = {
    "brightness": TF.adjust_brightness,
    "contrast": TF.adjust_contrast,
    "saturation": TF.adjust_saturation,
    "hue": TF.adjust_hue,
    "sharpness": TF.adjust_sharpness,
    "solarize": TF.solarize,
    "autocontrast": lambda img, m: TF.autocontrast(img),
}


@pytest.mark.parametrize("name", sorted(TV_COLOUR))
def test_colour_ops_agree_with_torchvision(name):
    x = images(b=6, h=12, w=12, seed=2)
    m = mags(name, 6, seed=2)
    if name == "autocontrast":
        m = torch.ones(6)
    if name == "solarize":
        m = m.clamp(max=0.99)  # threshold 1 is our "nothing" (PIL's 256); torchvision would invert the 1.0s
    expected = torch.cat([TV_COLOUR[name](x[i : i + 1], m[i].item()) for i in range(6)])
    torch.testing.assert_close(T.apply(name, x, m), expected, atol=2e-6, rtol=0)


def test_posterize_agrees_with_torchvision_float_path():
    x = images(seed=3)
    for bits in range(8):  # torchvision's float path quantises even at 8 bits; ours is the identity there
        ours = T.apply("posterize", x, float(bits))
        torch.testing.assert_close(ours, TF.posterize(x, bits), atol=0, rtol=0)


def test_equalize_agrees_with_torchvision_uint8_path():
    u8 = images(b=4, h=20, w=20, seed=4).mul(255).round().to(torch.uint8)
    u8[0, 1] = u8[0, 1] // 4 + 100  # a low-contrast channel, where equalisation matters most
    u8[1, 2] = 17  # a flat channel: left unchanged
    expected = TF.equalize(u8).float() / 255
    torch.testing.assert_close(T.apply("equalize", u8.float() / 255, 1.0), expected, atol=1e-6, rtol=0)


def test_rotate_agrees_with_torchvision():
    x = images(b=5, h=16, w=20, seed=5)
    m = torch.tensor([-170.0, -33.3, 5.0, 45.0, 120.0])
    expected = torch.cat(
        [TF.rotate(x[i : i + 1], m[i].item(), interpolation=TF.InterpolationMode.BILINEAR) for i in range(5)]
    )
    # Same centre, bilinear sampling and zero fill; the tolerance absorbs float32 differences in how the
    # two sampling grids are computed (torchvision goes through affine_grid).
    torch.testing.assert_close(T.apply("rotate", x, m), expected, atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------------------- gradients


@pytest.mark.parametrize(
    "name, value",
    [
        ("rotate", 20.0),
        ("translate_x", 0.15),
        ("shear_x", 10.0),
        ("zoom_in", 1.3),
        ("brightness", 0.7),
        ("contrast", 1.4),
        ("saturation", 0.6),
        ("hue", 0.2),
        ("sharpness", 1.5),
        ("gaussian_blur", 1.2),
        ("invert", 0.3),
        ("equalize", 0.4),
    ],
)
def test_gradient_reaches_magnitude_and_matches_finite_differences(name, value):
    x = images(b=2, h=24, w=24, seed=6).double()  # >= 256 pixels, or PIL-style equalize is a no-op
    x = Fn.avg_pool2d(Fn.pad(x, (1, 1, 1, 1), mode="replicate"), 3, 1)  # smooth: finite differences behave
    x.requires_grad_(True)
    w = torch.rand(x.shape, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    m = torch.full((2,), value, dtype=torch.float64, requires_grad=True)
    loss = (T.apply(name, x, m) * w).sum()
    gm, gx = torch.autograd.grad(loss, (m, x))
    assert torch.isfinite(gm).all() and (gm.abs() > 1e-6).all() and gx.abs().sum() > 0
    eps = 1e-4 * max(1.0, abs(value))
    with torch.no_grad():
        numeric = ((T.apply(name, x, m + eps) - T.apply(name, x, m - eps)) * w).sum((1, 2, 3)) / (2 * eps)
    torch.testing.assert_close(gm, numeric, rtol=0.02, atol=1e-3)


# ------------------------------------------------------------------------------------------- errors


def test_unknown_op_lists_valid_names():
    with pytest.raises(ValueError, match=r"Unknown op 'rotat'.*Did you mean 'rotate'.*brightness.*zoom_out"):
        T.apply("rotat", images(), 1.0)
    with pytest.raises(ValueError, match="Valid ops"):
        T.get("nope")
    with pytest.raises(ValueError, match="Valid ops"):
        T.levels("nope")


def test_bad_group_lists_groups():
    with pytest.raises(ValueError, match="appearance, geometric"):
        T.available("colour")
    with pytest.raises(ValueError, match="appearance, geometric"):
        T.register("x_test", "colour", 0, 1, 0, "unit")


def test_magnitude_out_of_range_names_op_range_and_unit():
    with pytest.raises(ValueError, match=r"'rotate' must be in \[-180, 180\] \(degrees\)"):
        T.apply("rotate", images(), torch.tensor([0.0, 10.0, 200.0, 0.0]))
    with pytest.raises(ValueError, match=r"'zoom_out' must be in \[0.1, 1\] \(scale\)"):
        T.apply("zoom_out", images(), 2.0)
    with pytest.raises(ValueError, match=r"\[0, 8\] \(bits\)"):
        T.apply("posterize", images(), float("nan"))


def test_magnitude_with_wrong_shape():
    with pytest.raises(ValueError, match=r"shape \(4,\).*got shape \(3,\)"):
        T.apply("brightness", images(b=4), torch.ones(3))
    with pytest.raises(ValueError, match="one per image"):
        T.apply("brightness", images(b=4), torch.ones(4, 1))


def test_bad_images():
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        T.apply("rotate", torch.rand(3, 16, 16), 10.0)
    with pytest.raises(TypeError, match="floating point"):
        T.apply("rotate", torch.zeros(1, 3, 16, 16, dtype=torch.uint8), 10.0)
    with pytest.raises(TypeError, match="torch.Tensor"):
        T.apply("rotate", [[0.0]], 10.0)


# ---------------------------------------------------------------------------------------------- 1-D signals
def sinusoid(hz=3.0, fs=100.0, seconds=10.0, b=1, dtype=torch.float32):
    t = torch.arange(int(fs * seconds), dtype=torch.float64) / fs
    return torch.sin(2 * math.pi * hz * t).to(dtype).expand(b, 1, -1).clone()


def peak_hz(x, fs=100.0):
    """Frequency of the largest rfft bin of each signal, ``(B, 1, T) -> (B,)``."""
    return torch.fft.rfft(x[:, 0].double(), dim=-1).abs().argmax(-1).double() * fs / x.shape[-1]


@pytest.mark.parametrize("shift, expected", [(0.5, 3.5), (-0.5, 2.5), (1.2, 4.2), (0.0, 3.0)])
def test_frequency_shift_moves_peak(shift, expected):
    y = T.frequency_shift(sinusoid(), shift, fs=100)
    assert y.shape == (1, 1, 1000) and y.dtype == torch.float32
    assert float(peak_hz(y)[0]) == pytest.approx(expected, abs=1e-9)
    # a whole-bin shift of a whole-bin sinusoid is exact: the sinusoid at the new frequency (with its phase)
    if shift in (0.5, -0.5):
        assert torch.allclose(y, sinusoid(expected), atol=1e-4)


def test_frequency_shift_per_sample():
    shifts = torch.tensor([0.5, -0.5, 2.0, 0.0])
    y = T.frequency_shift(sinusoid(b=4), shifts, fs=100)
    assert torch.allclose(peak_hz(y), torch.tensor([3.5, 2.5, 5.0, 3.0], dtype=torch.float64))
    assert torch.allclose(y[3], sinusoid()[0], atol=1e-5)  # 0 Hz is the identity
    # each sample's shift alone gives that sample's result
    assert torch.allclose(y[2], T.frequency_shift(sinusoid(), 2.0, fs=100)[0], atol=1e-5)


def test_frequency_shift_keeps_other_sampling_rates_straight():
    x = sinusoid(hz=10.0, fs=250.0, seconds=4.0)
    assert float(peak_hz(T.frequency_shift(x, -1.5, fs=250), fs=250)[0]) == pytest.approx(8.5)


def test_frequency_shift_differentiable():
    hz = torch.tensor([0.3, -0.7], requires_grad=True)
    x = torch.randn(2, 2, 500, generator=torch.Generator().manual_seed(0))
    y = T.frequency_shift(x, hz, fs=100)
    w = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
    (y * w).sum().backward()
    assert torch.isfinite(hz.grad).all() and (hz.grad != 0).all()
    # and matches a finite difference
    with torch.no_grad():
        f = lambda h: float((T.frequency_shift(x.double(), h, fs=100) * w.double()).sum())
        d = 1e-6
        fd = (f(torch.tensor([0.3 + d, -0.7], dtype=torch.float64)) - f(torch.tensor([0.3 - d, -0.7],
              dtype=torch.float64))) / (2 * d)
    assert float(hz.grad[0]) == pytest.approx(fd, rel=1e-3)


def test_ft_surrogate_keeps_amplitude_spectrum():
    g = torch.Generator().manual_seed(0)
    for n in (1000, 999):  # even (Nyquist bin) and odd lengths
        x = torch.randn(4, 2, n, generator=g)
        y = T.ft_surrogate(x, torch.tensor([0.1, 0.5, 1.0, 0.3]), generator=g)
        assert y.shape == x.shape and y.dtype == x.dtype
        ax, ay = torch.fft.rfft(x, dim=-1).abs(), torch.fft.rfft(y, dim=-1).abs()
        assert ((ay - ax).abs() <= 1e-4 * ax.abs().amax(-1, keepdim=True)).all()
        assert not torch.allclose(y, x, atol=1e-2)  # the phases did change
        assert torch.allclose(y.mean(-1), x.mean(-1), atol=1e-5)  # the mean stays (real DC bin)


def test_ft_surrogate_zero_is_identity_and_seeded():
    x = torch.randn(3, 1, 256, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(T.ft_surrogate(x, 0.0), x, atol=1e-5)
    assert torch.allclose(T.ft_surrogate(x, torch.tensor([0.0, 0.0, 0.0])), x, atol=1e-5)
    a = T.ft_surrogate(x, 1.0, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, T.ft_surrogate(x, 1.0, generator=torch.Generator().manual_seed(4)))
    y = T.ft_surrogate(x, torch.tensor([0.0, 1.0, 0.0]))
    assert torch.allclose(y[[0, 2]], x[[0, 2]], atol=1e-5) and not torch.allclose(y[1], x[1], atol=1e-2)


def test_ft_surrogate_differentiable_in_m():
    m = torch.tensor([0.2, 0.6], requires_grad=True)
    x = torch.randn(2, 1, 128, generator=torch.Generator().manual_seed(0))
    y = T.ft_surrogate(x, m, generator=torch.Generator().manual_seed(1))
    (y * torch.randn(y.shape, generator=torch.Generator().manual_seed(2))).sum().backward()
    assert torch.isfinite(m.grad).all() and (m.grad != 0).all()


def test_signal_noise_std():
    g = torch.Generator().manual_seed(0)
    x = torch.full((3, 2, 20000), 5.0)
    y = T.signal_noise(x, torch.tensor([0.0, 0.5, 2.0]), generator=g)
    assert torch.equal(y[0], x[0])
    d = (y - x).flatten(1)
    assert torch.allclose(d.std(-1), torch.tensor([0.0, 0.5, 2.0]), rtol=0.02)
    assert d[1:].mean(-1).abs().max() < 0.05
    assert T.signal_noise(x, 1.0).sub(x).std() == pytest.approx(1.0, rel=0.02)
    a = T.signal_noise(x, 1.0, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, T.signal_noise(x, 1.0, generator=torch.Generator().manual_seed(1)))


@pytest.mark.parametrize("fn", [lambda x, v: T.frequency_shift(x, v, fs=100), T.ft_surrogate, T.signal_noise])
def test_signal_ops_bad_shapes(fn):
    with pytest.raises(ValueError, match=r"\(B, C, T\)"):
        fn(torch.randn(4, 100), 0.1)
    with pytest.raises(ValueError, match=r"\(B, C, T\)"):
        fn(torch.randn(2, 1, 3, 100), 0.1)
    with pytest.raises(ValueError, match=r"\(B, C, T\)"):
        fn(torch.zeros(2, 1, 100, dtype=torch.long), 0.1)
    with pytest.raises(ValueError, match=r"shape \(4,\), got shape \(3,\)"):
        fn(torch.randn(4, 1, 100), torch.full((3,), 0.1))
    with pytest.raises(ValueError, match=r"shape \(4,\), got shape \(4, 1\)"):
        fn(torch.randn(4, 1, 100), torch.full((4, 1), 0.1))


# ------------------------------------------------------------------------------------------- paper C's ops


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def ramps(b=2, h=20, w=24):
    """Channel 0 = column index, channel 1 = row index (scaled into [0, 1]): bilinear sampling of a ramp is exact,
    so a warped ramp says, per output pixel, where the op sampled the input."""
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float64), torch.arange(w, dtype=torch.float64), indexing="ij")
    return torch.stack([xs / (w - 1), ys / (h - 1)]).expand(b, -1, -1, -1).contiguous()


@pytest.mark.parametrize("name, m", [("elastic", 4.0), ("perspective", 0.08)])
def test_elastic_and_perspective_zero_is_bit_identity_and_seeded(name, m):
    x = images(b=4, c=3, h=20, w=24)
    for opts in ({}, {"shared": True}):
        assert torch.equal(T.apply(name, x, 0.0, seeded(1), **opts), x)
    # a per-sample magnitude: the images at 0 stay bit for bit, the others move
    y = T.apply(name, x, torch.tensor([0.0, m, 0.0, m]), seeded(1))
    assert torch.equal(y[[0, 2]], x[[0, 2]]) and (y[[1, 3]] - x[[1, 3]]).abs().amax((1, 2, 3)).min() > 0.05
    a, b, c = (T.apply(name, x, m, seeded(s)) for s in (5, 5, 6))
    assert torch.equal(a, b)  # the same seed: the same deformation
    assert (a - c).abs().max() > 0.05  # another seed: another one
    assert (a - x).abs().max() > 0.05


@pytest.mark.parametrize("name, m", [("elastic", 4.0), ("perspective", 0.08), ("color_cast", 0.1)])
def test_shared_gives_every_image_of_the_batch_the_same_draw(name, m):
    x = images(b=1, c=3, h=20, w=24).expand(5, -1, -1, -1).contiguous()  # five identical images
    shared = T.apply(name, x, m, seeded(2), shared=True)
    assert all(torch.equal(shared[0], shared[i]) for i in range(1, 5))
    own = T.apply(name, x, m, seeded(2))  # default: one draw per image
    assert min((own[0] - own[i]).abs().max() for i in range(1, 5)) > 1e-3


def test_elastic_displacement_is_smooth_bounded_by_alpha_and_linear_in_it():
    x = ramps()
    g = lambda alpha, sigma=3.0: T.apply("elastic", x, alpha, seeded(0), sigma=sigma)
    # displacement in pixels, read off the ramps, inside a margin where no sample leaves the image
    disp = lambda y: torch.stack([(y[:, 0] - x[:, 0]) * 23, (y[:, 1] - x[:, 1]) * 19], 1)[..., 3:-3, 3:-3]
    d2, d1 = disp(g(2.0)), disp(g(1.0))
    assert d2.abs().max() <= 2.0 + 1e-9 and d2.abs().max() > 0.1  # |U(-1, 1) smoothed| <= 1, times alpha
    torch.testing.assert_close(d2, 2 * d1, atol=1e-9, rtol=0)  # the same field, scaled by alpha
    # smoothed: neighbouring pixels move alike, far less than the field varies over the image; a narrower
    # smoothing (sigma 1) gives a rougher field
    rough = lambda d: (d[..., 1:, :] - d[..., :-1, :]).abs().mean() / d.abs().mean()
    assert rough(d1) < 0.35  # white noise: about 1.3
    assert rough(disp(g(1.0, sigma=1.0))) > 1.5 * rough(d1)


def test_perspective_samples_through_the_homography_of_the_moved_corners():
    """Rebuild the corner moves from the same seed, solve the homography (DLT) independently, check the op."""
    np = pytest.importorskip("numpy")
    h, w, m = 20, 24, 0.05
    x = ramps(b=1, h=h, w=w)
    y = T.apply("perspective", x, m, seeded(4))
    z = torch.randn((1, 4, 2), generator=seeded(4), dtype=torch.float64)[0].numpy()
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=float) - 0.5
    moved = corners + z * m * np.array([w, h])
    # the homography H with H(corner_k) = moved_k: the image square goes to the moved quadrilateral
    rows = []
    for (u, v), (p, q) in zip(corners, moved):
        rows += [[u, v, 1, 0, 0, 0, -p * u, -p * v, -p], [0, 0, 0, u, v, 1, -q * u, -q * v, -q]]
    H = np.linalg.svd(np.array(rows))[2][-1].reshape(3, 3)
    inv = np.linalg.inv(H)
    checked = 0
    for r in range(h):
        for c in range(w):
            sx, sy, s = inv @ [c, r, 1]
            sx, sy = sx / s, sy / s
            if 0.5 <= sx <= w - 1.5 and 0.5 <= sy <= h - 1.5:  # sampled inside: the ramps give the source point
                assert float(y[0, 0, r, c]) * (w - 1) == pytest.approx(sx, abs=1e-4)
                assert float(y[0, 1, r, c]) * (h - 1) == pytest.approx(sy, abs=1e-4)
                checked += 1
    assert checked > h * w / 2


def test_brightness_shift_adds_exactly_m_and_clamps():
    x = images()
    assert torch.equal(T.apply("brightness_shift", x, 10 / 255), (x + 10 / 255).clamp(0, 1))
    m = torch.tensor([0.0, 0.25, -0.25, 1.0])
    y = T.apply("brightness_shift", x, m)
    assert torch.equal(y, (x + m.view(-1, 1, 1, 1)).clamp(0, 1))
    assert torch.equal(y[0], x[0]) and torch.equal(y[3], torch.ones_like(x[3]))
    with pytest.raises(ValueError, match=r"'brightness_shift' must be in \[-1, 1\]"):
        T.apply("brightness_shift", x, 1.5)


def test_color_cast_shifts_each_channel_by_one_constant():
    x = 0.4 + 0.2 * images(b=64, c=3)  # room on both sides: no clamping
    y = T.apply("color_cast", x, 0.02, seeded(0))
    d = (y - x).double()
    offsets = d[..., :1, :1]
    assert (d - offsets).abs().max() < 1e-6  # the same value at every pixel of a channel
    offsets = offsets.flatten(1)  # (64, 3): one value per image and channel, different across them
    assert (offsets[:, 0] - offsets[:, 1]).abs().max() > 1e-3 and (offsets[0] - offsets[1]).abs().max() > 1e-3
    assert offsets.std().item() == pytest.approx(0.02, rel=0.25)  # N(0, m)
    assert torch.equal(y, T.apply("color_cast", x, 0.02, seeded(0)))
    assert not torch.equal(y, T.apply("color_cast", x, 0.02, seeded(1)))
    assert torch.equal(T.apply("color_cast", x, 0.0, seeded(0)), x)


def test_paper_c_ops_are_registered_with_their_ranges():
    for name, group, low, high in (("elastic", "geometric", 0, 64), ("perspective", "geometric", 0, 0.5),
                                   ("brightness_shift", "appearance", -1, 1), ("color_cast", "appearance", 0, 1)):
        op = T.get(name)
        assert (op.group, op.low, op.high, op.identity) == (group, low, high, 0)
    with pytest.raises(ValueError, match=r"'elastic' must be in \[0, 64\] \(alpha \(pixels\)\)"):
        T.apply("elastic", images(), -1.0)
    with pytest.raises(TypeError):  # an op's own keyword, misspelt, is not silently ignored
        T.apply("elastic", images(), 1.0, sigmaa=2.0)


def test_affine_ops_take_a_sampling_mode_a_fill_and_an_origin():
    x = torch.rand(3, 3, 16, 16)
    # a constant fill: what comes in from outside is the fill, the rest is the zero-fill warp plus nothing
    shifted = T.apply("translate_x", x, 0.25, fill=0.5)
    assert torch.all(shifted[..., :4] == 0.5)
    assert torch.allclose(shifted[..., 4:], T.apply("translate_x", x, 0.25)[..., 4:])
    # nearest-neighbour by a whole number of pixels moves pixels exactly
    assert torch.equal(T.apply("translate_y", x, 0.25, mode="nearest")[..., 4:, :], x[..., :12, :])
    # about the top-left corner, a shear keeps the top row where it is and moves the bottom one
    corner = T.apply("shear_x", x, 30.0, origin="corner", mode="nearest")
    assert torch.equal(corner[..., 0, :], x[..., 0, :]) and not torch.equal(corner[..., -1, :], x[..., -1, :])
    centre = T.apply("shear_x", x, 30.0, mode="nearest")
    assert not torch.equal(centre[..., 0, :], x[..., 0, :])
    # rotation's fill is exact in every mode (the weights of bicubic sum to one)
    for mode in ("bilinear", "nearest", "bicubic"):
        assert T.apply("rotate", torch.full((1, 1, 9, 9), 0.3), 45.0, mode=mode, fill=0.3).sub(0.3).abs().max() < 1e-5
    with pytest.raises(ValueError, match="warp mode must be one of bilinear, nearest, bicubic"):
        T.apply("rotate", x, 10.0, mode="area")
    with pytest.raises(ValueError, match="origin one of centre, corner"):
        T.apply("rotate", x, 10.0, origin="middle")


def test_random_op_draws_one_magnitude_per_image_in_its_range():
    x = torch.full((64, 3, 8, 8), 0.25)
    out = T.RandomOp("brightness", 0.5, 2.0)(x, torch.Generator().manual_seed(0))
    factor = out[:, 0, 0, 0] / 0.25
    assert factor.min() >= 0.5 - 1e-6 and factor.max() <= 2.0 + 1e-6 and factor.std() > 0.2
    again = T.RandomOp("brightness", 0.5, 2.0)(x, torch.Generator().manual_seed(0))
    assert torch.equal(out, again)
    with pytest.raises(ValueError, match="rotate"):
        T.RandomOp("rotate", -400.0, 0.0)
