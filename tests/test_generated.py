"""invlib.data.generated: paper E's sprites and sinusoids."""

import math

import numpy as np
import pytest
import torch

from invlib.data import DataMissingError, generated, load

# ---------------------------------------------------------------- generated sets: sprites and sinusoids


@pytest.fixture(scope="module")
def sprites_train():
    try:
        return load("sprites", "train", n=400, size=28)
    except DataMissingError as e:
        pytest.skip(f"Fashion-MNIST not installed: {e}")


def test_sprites_shapes_labels_and_classes(sprites_train):
    ds = sprites_train
    assert ds.images.shape == (400, 1, 28, 28) and ds.images.dtype == torch.uint8
    assert ds.labels.dtype == torch.int64 and set(ds.labels.tolist()) == {0, 1, 2, 3}
    assert ds.labels.bincount().min() > 60  # about 100 each
    assert ds.classes == ["Sneaker upright", "Sneaker upside down", "Ankle boot upright", "Ankle boot upside down"]
    assert ds.images.float().mean() > 5 and ds.images.max() > 200  # sprites drawn, not blank


def _border_mean(ds):
    im = ds.images
    return torch.cat([im[..., 0, :], im[..., -1, :], im[..., :, 0], im[..., :, -1]], -1).float().mean()


def test_sprites_fill_the_frame_or_stay_inside(sprites_train):
    inside = load("sprites", "train", n=400, size=28, fill=2**-0.5)
    assert _border_mean(inside) < 0.1 * inside.images.float().mean()  # every rotation stays inside the canvas
    assert _border_mean(sprites_train) > 3 * _border_mean(inside)  # the whole frame turns: sprites reach the edges
    assert sprites_train.images.float().mean() > 1.5 * inside.images.float().mean()
    with pytest.raises(ValueError, match="fraction of the canvas"):
        load("sprites", "train", n=4, fill=1.5)


def test_sprites_default_size_and_splits(sprites_train):
    assert load("sprites", "train", n=6).images.shape == (6, 1, 32, 32)  # the paper's 32 px
    again = load("sprites", "train", n=400, size=28)
    assert torch.equal(again.images, sprites_train.images) and torch.equal(again.labels, sprites_train.labels)
    test = load("sprites", "test", n=400, size=28)
    assert not torch.equal(test.images, sprites_train.images)
    other_seed = load("sprites", "train", n=400, size=28, seed=1)
    assert not torch.equal(other_seed.labels, sprites_train.labels)


def test_sprites_upside_down_is_upright_turned(sprites_train):
    ds = sprites_train
    mean = [ds.images[ds.labels == k].float().mean(0) for k in range(4)]
    turn = lambda a: torch.rot90(a, 2, dims=(-2, -1))
    for down, up in [(1, 0), (3, 2)]:
        turned = (turn(mean[down]) - mean[up]).abs().mean()
        as_is = (mean[down] - mean[up]).abs().mean()
        assert turned < 0.5 * as_is, (down, float(turned), float(as_is))


def test_color_sprites_are_the_two_sprites_in_their_tints(sprites_train):
    """color=True: 3 channels, each image the grey sprite's levels times its sprite's tint (same draws)."""
    from invlib.data import SPRITE_TINTS

    col = load("sprites", "train", n=400, size=28, color=True)
    assert col.images.shape == (400, 3, 28, 28) and torch.equal(col.labels, sprites_train.labels)
    tint = torch.tensor(SPRITE_TINTS)[col.labels // 2].view(-1, 3, 1, 1)  # sprite = label // 2
    expected = sprites_train.images.float() * tint
    assert (col.images.float() - expected).abs().max() <= 3  # rounding of the rotated levels
    for k, rgb in enumerate(SPRITE_TINTS):  # each sprite's pixels have its own colour
        pix = col.images[col.labels // 2 == k].float().sum((0, 2, 3))
        assert torch.allclose(pix / pix.max(), torch.tensor(rgb) / max(rgb), atol=0.02)


def test_sprites_from_files(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    paths = []
    for name, colour in (("mario", (255, 0, 0)), ("iggy", (0, 255, 0))):
        a = np.zeros((20, 20, 3), dtype=np.uint8)
        a[2:18, 5:9] = colour  # an asymmetric shape: a bar and a foot
        a[14:18, 5:16] = colour
        a[..., 2] = rng.integers(0, 40, (20, 20))
        Image.fromarray(a).save(tmp_path / f"{name}.png")
        paths.append(tmp_path / f"{name}.png")
    ds = load("sprites", "train", n=40, size=28, files=paths)
    assert ds.images.shape == (40, 3, 28, 28) and ds.images.dtype == torch.uint8
    assert ds.classes == ["mario upright", "mario upside down", "iggy upright", "iggy upside down"]
    red, green = ds.images[:, 0].float().sum((1, 2)), ds.images[:, 1].float().sum((1, 2))
    mario = ds.labels < 2
    assert (red[mario] > green[mario]).all() and (green[~mario] > red[~mario]).all()
    with pytest.raises(FileNotFoundError, match="nope.png"):
        load("sprites", "train", n=4, files=[paths[0], tmp_path / "nope.png"])
    with pytest.raises(ValueError, match="exactly two"):
        load("sprites", "train", n=4, files=paths[:1])


def test_sprites_factors_are_the_applied_rotation(sprites_train):
    """factors["angle"] is the rotation of the canvas, in radians, with the ``rotate`` op's sign."""
    from invlib.transforms import apply

    ds = sprites_train
    angle, down = ds.factors["angle"], ds.factors["upside_down"]
    assert angle.shape == down.shape == (400,) and angle.dtype == torch.float32
    assert torch.equal(down.long(), ds.labels % 2)  # the label's orientation
    assert (angle > -math.pi).all() and (angle <= math.pi).all()
    limit = math.radians(45.0) + 1e-5
    assert (angle[down == 0].abs() <= limit).all()
    assert ((math.pi - angle[down == 1].abs()).abs() <= limit).all()  # within max_angle of pi, either side
    assert angle[down == 1].min() < 0 < angle[down == 1].max()  # wrapped, not left above pi
    narrow = load("sprites", "train", n=400, size=28, max_angle=10.0).factors["angle"]
    assert (narrow.abs() <= math.radians(10) + 1e-5).sum() > 150 and narrow.abs().max() > 3
    # the sign: turning an upright image back by -angle restores the canvas, turning it by +angle does not
    up = down == 0
    canvas = generated.sprite_images(None, 28)[ds.labels[up] // 2]  # fill=1: the canvas is the sprite
    deg = torch.rad2deg(angle[up])
    x = ds.images[up].float() / 255
    back = (apply("rotate", x, -deg) - canvas).abs().mean((1, 2, 3))
    ahead = (apply("rotate", x, deg) - canvas).abs().mean((1, 2, 3))
    turned = deg.abs() > 10
    assert turned.sum() > 50 and (back[turned] < ahead[turned]).all()
    assert back.mean() < 0.5 * ahead.mean()


def test_sinusoids_shapes_and_labels():
    train, test = load("sinusoids", "train"), load("sinusoids", "test")
    assert train.images.shape == (400, 1, 1000) and train.images.dtype == torch.float32
    assert test.images.shape == (200, 1, 1000)
    assert set(train.labels.tolist()) == {0, 1, 2, 3} and train.labels.dtype == torch.int64
    assert train.classes == ["2 Hz", "4 Hz", "6 Hz", "8 Hz"]
    assert not torch.equal(train.images[:200], test.images)
    assert torch.equal(load("sinusoids", "train", n=10).images, load("sinusoids", "train", n=10).images)
    # unit amplitude plus noise of std 0.5: variance 1/2 + 1/4
    assert train.images.var(-1).mean() == pytest.approx(0.75, rel=0.05)


def test_sinusoids_dominant_frequency_matches_class():
    ds = load("sinusoids", "train", n=300, noise=0.0)
    freqs = torch.tensor([2.0, 4.0, 6.0, 8.0])[ds.labels]
    peak = torch.fft.rfft(ds.images[:, 0], dim=-1).abs().argmax(-1).float() * 100 / 1000  # 0.1 Hz bins
    assert ((peak - freqs).abs() <= 0.5 + 0.1 + 1e-6).all()
    assert (peak - freqs).abs().max() > 0.3  # the jitter is there
    assert ds.images.abs().max() <= 1.0 + 1e-6


def test_sinusoids_rejects_size():
    with pytest.raises(ValueError, match="size does not apply"):
        load("sinusoids", "train", size=28)
