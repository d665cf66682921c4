"""invlib.data.dataset: the Dataset core (subsets, resizing, rows, copies, foreground boxes) and the colouring and
smooth backgrounds the generated sets share."""

import pytest
import torch

from invlib import data
from invlib.data import dataset as core
from invlib.data import load


def test_subsets_are_deterministic_and_nested(fm_test):
    s100, s1000 = fm_test.subset(100, seed=3), fm_test.subset(1000, seed=3)
    assert torch.equal(s100.images, s1000.images[:100]) and torch.equal(s100.labels, s1000.labels[:100])
    assert torch.equal(s100.boxes, s1000.boxes[:100])
    assert torch.equal(fm_test.subset(100, seed=3).images, s100.images)
    assert not torch.equal(fm_test.subset(100, seed=4).labels, s100.labels)
    assert len(set(map(bytes, s1000.images.reshape(1000, -1).numpy()))) > 990  # no repeated draws
    ds = load("fashion_mnist", "test", n=100, seed=3)
    assert torch.equal(ds.images, s100.images) and len(ds) == 100
    with pytest.raises(ValueError, match="n=10001 is larger than fashion_mnist/test, which has 10000"):
        load("fashion_mnist", "test", n=10001)
    with pytest.raises(ValueError, match="positive integer"):
        fm_test.subset(0)


def test_boxes_contain_all_foreground_and_are_tight(fm_test):
    fg = fm_test.images[:, 0] > 10
    b = fm_test.boxes.long()
    ys, xs = torch.arange(28)[None, :, None], torch.arange(28)[None, None, :]
    inside = (xs >= b[:, 0, None, None]) & (xs < b[:, 2, None, None])
    inside = inside & (ys >= b[:, 1, None, None]) & (ys < b[:, 3, None, None])
    assert not (fg & ~inside).any()  # contains every foreground pixel
    has_fg = fg.flatten(1).any(1)
    assert has_fg.all()
    n = torch.arange(len(fg))
    assert fg[n, b[:, 1]].any(1).all() and fg[n, b[:, 3] - 1].any(1).all()  # first / last rows touched
    assert fg[n, :, b[:, 0]].any(1).all() and fg[n, :, b[:, 2] - 1].any(1).all()  # first / last columns
    g = torch.zeros(2, 1, 6, 7, dtype=torch.uint8)
    g[0, 0, 2:4, 1:6] = 50
    assert data.foreground_boxes(g).tolist() == [[1, 2, 6, 4], [0, 0, 7, 6]]  # empty image -> whole image


def test_resize_scales_boxes_and_images(fm_test):
    small = fm_test.subset(50, seed=1)
    big = load("fashion_mnist", "test", n=50, seed=1, size=56)
    assert big.images.shape == (50, 1, 56, 56) and big.images.dtype == torch.uint8
    assert torch.allclose(big.boxes, small.boxes * 2)
    # the box of the resized foreground stays within a pixel of the scaled box
    assert (data.foreground_boxes(big.images) - big.boxes).abs().max() <= 1
    down = load("fashion_mnist", "test", n=50, seed=1, size=14)
    assert torch.allclose(down.boxes, small.boxes / 2)
    # antialiased, one batched op: downsampling noise 4x averages it (plain bilinear would alias)
    noise = torch.randint(0, 256, (64, 3, 28, 28), generator=torch.Generator().manual_seed(0), dtype=torch.uint8)
    ds = data.Dataset("noise", "test", noise, torch.zeros(64, dtype=torch.int64), ["x"])
    out = ds.resize(7).images.float()
    plain = torch.nn.functional.interpolate(noise.float(), size=(7, 7), mode="bilinear")
    assert out.shape == (64, 3, 7, 7) and out.std() < 0.5 * plain.std()
    assert abs(out.mean() - noise.float().mean()) < 1


def test_factors_follow_rows_subsets_resizing_and_copies():
    ds = load("sprites", "train", n=400, size=28)
    sub = ds.subset(50, seed=2)
    idx = core._subset_indices(400, 50, 2, "")
    for k, v in ds.factors.items():
        assert torch.equal(sub.factors[k], v[idx]), k
        assert torch.equal(ds.rows(slice(3, 9)).factors[k], v[3:9])
        assert torch.equal(ds.rows([5, 1]).factors[k], v[[5, 1]])
    assert torch.equal(ds.resize(14).factors["angle"], ds.factors["angle"])
    assert torch.equal(ds.with_channels(3).factors["angle"], ds.factors["angle"])
    copy = core._finish(ds, None, 0)
    copy.factors["angle"].zero_()  # a copy, like the images and boxes
    assert ds.factors["angle"].abs().max() > 0
    assert load("fashion_mnist", "test", n=5).factors is None and ds.subset(5).boxes is None


def test_cap_takes_what_there_is_and_says_so(capsys):
    assert torch.equal(core._subset_indices(5, 8, 0, "five things", cap=True), torch.randperm(
        5, generator=torch.Generator().manual_seed(0)))
    assert "five things has 5 images, fewer than the 8 asked for" in capsys.readouterr().out
    with pytest.raises(ValueError, match="n=8 is larger than five things"):
        core._subset_indices(5, 8, 0, "five things")


def test_colorize_keeps_the_grey_level_and_smooth_is_bicubic():
    g = torch.Generator().manual_seed(0)
    gray = torch.randint(0, 256, (6, 1, 5, 5), generator=g, dtype=torch.uint8)
    rgb = core.colorize(gray, torch.rand(6, generator=g) * 6.28, 0.5 + 0.5 * torch.rand(6, generator=g))
    assert rgb.shape == (6, 3, 5, 5) and (rgb.amax(1).int() - gray[:, 0].int()).abs().max() <= 1
    control = torch.rand(3, 3, 4, 4, generator=g)
    bicubic = torch.nn.functional.interpolate(control, size=(20, 20), mode="bicubic", align_corners=False)
    assert torch.allclose(core._smooth(control, 20), bicubic, atol=1e-5)
