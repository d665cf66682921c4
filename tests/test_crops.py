"""invlib.crops: each method's boxes, resampling, flips, RRC against torchvision, Beta shapes, bad inputs."""

import math

import pytest
import torch
from torchvision.transforms import RandomResizedCrop

from invlib.crops import CROP_FRACTION, METHODS, Crop, beta_stats, resample, sample_boxes, sample_scale, standard

N = 4000  # draws per image-space check
SHAPES = [(32, 32), (24, 40)]  # (H, W): square and not
TRANSLATED = ["translate", "translate_random_size_center_crop", "translate_random_size_center_crop_no_ar"]
TABLE_A1 = {0.1: 0.823, 0.5: 3.193, 1: 4.962, 2: 6.809, 3: 7.626, 10: 7.317}  # Var[1/s] per Beta shape


def boxes(method, h, w, seed=0, **kw):
    """``N`` boxes as (centre x, centre y, width, height)."""
    b = sample_boxes(method, N, h, w, torch.Generator().manual_seed(seed), **kw)
    return (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]


def ks(a, b):
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    a, b = torch.sort(a.double()).values, torch.sort(b.double()).values
    at = torch.cat([a, b])
    return float((torch.searchsorted(a, at, right=True) / len(a) - torch.searchsorted(b, at, right=True) / len(b))
                 .abs().max())


# ------------------------------------------------------------------------------------------- image-space boxes


@pytest.mark.parametrize("h, w", SHAPES)
@pytest.mark.parametrize("method", ["random_size_center_crop", "fixed_size_center_crop"])
def test_centred_methods_keep_the_image_centre(method, h, w):
    cx, cy, _, _ = boxes(method, h, w)
    assert (cx - w / 2).abs().max() < 1e-9 and (cy - h / 2).abs().max() < 1e-9


@pytest.mark.parametrize("h, w", SHAPES)
@pytest.mark.parametrize("method", ["fixed_size_random_crop", "fixed_size_center_crop", "translate"])
def test_fixed_size_methods_never_change_the_size(method, h, w):
    _, _, bw, bh = boxes(method, h, w)
    side = CROP_FRACTION * min(h, w)
    assert (bw - side).abs().max() < 1e-9 and (bh - side).abs().max() < 1e-9


@pytest.mark.parametrize("h, w", SHAPES)
@pytest.mark.parametrize("p", [0.1, 0.3])
@pytest.mark.parametrize("method", TRANSLATED)
def test_translations_stay_within_and_use_their_range(method, p, h, w):
    cx, cy, _, _ = boxes(method, h, w, translate=p)
    for shift, size in ((cx - w / 2, w), (cy - h / 2, h)):
        assert shift.abs().max() <= p * size + 1e-9
        assert shift.abs().max() > 0.9 * p * size


@pytest.mark.parametrize("h, w", SHAPES)
def test_random_crops_stay_inside_and_no_ar_is_square(h, w):
    for method in ("rrc", "fixed_size_random_crop"):
        b = sample_boxes(method, N, h, w, torch.Generator().manual_seed(0))
        assert (b[:, :2] >= -1e-9).all() and (b[:, 2] <= w + 1e-9).all() and (b[:, 3] <= h + 1e-9).all()
    _, _, bw, bh = boxes("translate_random_size_center_crop_no_ar", h, w)
    assert (bw - bh).abs().max() < 1e-9
    _, _, bw, bh = boxes("translate_random_size_center_crop", h, w)  # the control: not square
    assert (bw - bh).abs().max() > 1


def test_fixed_size_center_crop_is_the_central_slice():
    x = torch.rand(4, 3, 32, 32)
    crop = Crop("fixed_size_center_crop", size=28)
    a, b = crop(x, torch.Generator().manual_seed(0)), crop(x, torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    torch.testing.assert_close(a, x[..., 2:30, 2:30], atol=1e-5, rtol=0)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_output_shape(method):
    x = torch.rand(5, 3, 24, 40)
    assert Crop(method, size=20)(x, torch.Generator().manual_seed(0)).shape == (5, 3, 20, 20)
    assert Crop(method)(torch.rand(5, 3, 32, 32), torch.Generator().manual_seed(0)).shape == (5, 3, 32, 32)


def test_standard_flips_about_half_and_keeps_the_rest():
    x = torch.linspace(0, 1, 32).expand(64, 3, 32, 32).contiguous()  # a horizontal ramp
    out = standard(scale=(1, 1), ratio=(1, 1), flip_p=0.5)(x, torch.Generator().manual_seed(0))
    flipped = (out - x.flip(-1)).flatten(1).abs().amax(1) < 1e-5
    kept = (out - x).flatten(1).abs().amax(1) < 1e-5
    assert 10 <= int(flipped.sum()) <= 54 and bool((flipped ^ kept).all())


def test_resample_whole_box_is_identity_and_outside_is_black():
    x = torch.rand(2, 3, 16, 16) + 0.5  # never black
    torch.testing.assert_close(resample(x, torch.tensor([[0.0, 0, 16, 16]] * 2), 16), x, atol=1e-5, rtol=0)
    out = resample(x, torch.tensor([[-8.0, 0, 8, 16]] * 2), 16)  # the left half outside the image
    assert torch.equal(out[..., :8], torch.zeros_like(out[..., :8]))
    torch.testing.assert_close(out[..., 8:], x[..., :8], atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------------------- RRC vs torchvision


@pytest.mark.parametrize("h, w", [(224, 224), (200, 300)])
def test_rrc_matches_torchvision_scale_and_ratio(h, w):
    n, threshold = 10_000, 1.95 * math.sqrt(2 / 10_000)  # alpha = 0.001
    with torch.random.fork_rng():
        torch.manual_seed(0)
        tv = torch.tensor([RandomResizedCrop.get_params(torch.empty(3, h, w), (0.08, 1.0), (3 / 4, 4 / 3))
                           for _ in range(n)], dtype=torch.float64)
    th, tw = tv[:, 2], tv[:, 3]
    b = sample_boxes("rrc", n, h, w, torch.Generator().manual_seed(0))
    bw, bh = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    assert ks(bw * bh / (h * w), tw * th / (h * w)) < threshold
    assert ks(bw / bh, tw / th) < threshold
    # torchvision rounds sides to whole pixels: at this size that moves the distributions far less than the threshold
    assert ks(bw * bh, bw.round() * bh.round()) < threshold / 3 and ks(bw / bh, bw.round() / bh.round()) < threshold / 3
    # negative controls, so the test has power: no rejection (the area uniform), or a narrower scale interval
    naive = sample_scale(torch.rand(n, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    assert ks(bw * bh / (h * w), naive) > threshold
    b2 = sample_boxes("rrc", n, h, w, torch.Generator().manual_seed(0), scale=(0.2, 1.0))
    assert ks((b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1]) / (h * w), tw * th / (h * w)) > threshold


# ------------------------------------------------------------------------------------------- Beta shape


@pytest.fixture(scope="module")
def table():
    """Table A1's shapes at 10M draws (Monte-Carlo error about 0.002 on Var[1/s]; the default 40M: the slow test)."""
    return {shape: beta_stats(shape, n=10_000_000) for shape in TABLE_A1}


def test_beta_shape_one_is_the_uniform():
    u = torch.rand(1000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.equal(sample_scale(u, (0.08, 1.0), beta_shape=1), 0.08 + 0.92 * u)
    assert not torch.equal(sample_scale(u, (0.08, 1.0), beta_shape=2), 0.08 + 0.92 * u)


def check_table_a1(table):
    """Var[1/s] within 0.01 of Table A1 and within 0.005 of a quadrature (t = (1 - x)^shape on midpoints)."""
    t = (torch.arange(1_000_000, dtype=torch.float64) + 0.5) / 1_000_000
    for shape, paper in TABLE_A1.items():
        inv = 1 / (0.08 + 0.92 * (1 - t ** (1 / shape)))
        exact = float((inv**2).mean() - inv.mean() ** 2)
        ours = table[shape]["var_inv_s"]
        assert abs(ours - paper) <= 0.01, (shape, ours, paper)
        assert abs(ours - exact) <= 0.005, (shape, ours, exact)


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_beta_stats_match_table_a1_and_quadrature(table):
    check_table_a1(table)


@pytest.mark.slow
def test_beta_stats_default_draws_match_table_a1():
    check_table_a1({shape: beta_stats(shape) for shape in TABLE_A1})


def test_smaller_beta_shapes_zoom_less(table):
    shapes = sorted(TABLE_A1)
    mean_s, zoom = [table[k]["mean_s"] for k in shapes], [table[k]["mean_zoom"] for k in shapes]
    assert all(a > b for a, b in zip(mean_s, mean_s[1:])) and all(a < b for a, b in zip(zoom, zoom[1:]))


# ------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("kwargs, match", [
    (dict(scale=(0.0, 1.0)), r"0 < low <= high <= 1"),
    (dict(scale=(0.5, 1.5)), r"0 < low <= high <= 1"),
    (dict(scale=(0.8, 0.5)), r"0 < low <= high <= 1"),
    (dict(ratio=(4 / 3, 3 / 4)), r"ratio .* 0 < low <= high"),
    (dict(beta_shape=0), r"beta_shape must be > 0"),
    (dict(beta_shape=-1), r"beta_shape must be > 0"),
    (dict(method="translate", translate=1.5), r"translate .* \[0, 1\]"),
    (dict(method="translate", translate=-0.1), r"translate .* \[0, 1\]"),
    (dict(method="zoom"), r"Valid crop methods: fixed_size_center_crop, .*, translate_random_size_center_crop_no_ar"),
    (dict(size=0), r"size must be a positive integer"),
])
def test_bad_inputs_name_the_valid_range(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Crop(**kwargs)
    if "size" not in kwargs:
        with pytest.raises(ValueError, match=match):
            sample_boxes(kwargs.pop("method", "rrc"), 4, 32, 32, **kwargs)


def test_rrc_fallback_is_the_centred_whole_image_as_torchvision():
    # a 10 x 100 strip: few draws fit, and the fallback (height 10, width 10 * 4/3) is centred, as torchvision's
    b = sample_boxes("rrc", 4000, 10, 100, torch.Generator().manual_seed(0), scale=(0.9, 1.0))
    fallback = (b[:, 2] - b[:, 0]) < 14
    assert fallback.sum() > 50
    assert torch.allclose(b[fallback, 0], torch.full((int(fallback.sum()),), 50 - 20 / 3, dtype=torch.float64))
