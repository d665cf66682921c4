"""Generated data of paper E (AugNet, section 4): ``sprites``, two real items rotated on a canvas, and
``sinusoids``, noisy signals of one frequency per class.

This module sits one layer above :mod:`invlib.transforms`, alone in :mod:`invlib.data`: a sprite is rotated by
the ``rotate`` op itself (``transforms.apply``), so that the angle a model must learn is exactly the rotation the
transforms apply. The Dataset core, real data, scenes, lighting and the registry import no transforms.

Both loaders take ``(split, root, n, seed, size)`` and their options as keyword-only arguments; ``n`` is the
number of samples generated (no subset is drawn). Users call them through :func:`invlib.data.load`.

Example
-------
>>> ds = sprites("test", None, 4, 0, None)
>>> ds.images.shape, ds.classes[:2]
(torch.Size([4, 1, 32, 32]), ['Sneaker upright', 'Sneaker upside down'])
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from ..transforms import apply
from .dataset import Dataset
from .real import FASHION_MNIST_CLASSES, _fashion_arrays

SPRITE_CLASSES = ("Sneaker", "Ankle boot")  # the default two asymmetric Fashion-MNIST items
SPRITE_TINTS = ((1.0, 0.55, 0.15), (0.25, 0.6, 1.0))  # sprites(color=True): orange sneaker, blue boot


def _split_generator(seed: int, split: str) -> torch.Generator:
    """The random stream of one split of a generated set: train and test never share draws."""
    return torch.Generator().manual_seed(2 * seed + (split == "test"))


def sprite_images(files, inner: int) -> Tensor:
    """The two sprites ``(2, C, inner, inner)`` float in [0, 1]: the first Sneaker and Ankle boot of
    Fashion-MNIST's training split (:data:`SPRITE_CLASSES`) for ``files=None``, else the two image files, in RGB.

    Example
    -------
    >>> sprite_images(None, 32).shape
    torch.Size([2, 1, 32, 32])
    """
    if files is None:
        images, labels, _, _ = _fashion_arrays("train", None)
        idx = [int((labels == FASHION_MNIST_CLASSES.index(c)).nonzero()[0]) for c in SPRITE_CLASSES]
        src = images[idx].float() / 255
        return torch.nn.functional.interpolate(src, size=(inner, inner), mode="bilinear", antialias=True).clamp(0, 1)
    from PIL import Image

    if len(files) != 2:
        raise ValueError(f"sprites needs exactly two image files, got {len(files)}: {files}")
    for f in files:
        if not Path(f).is_file():
            raise FileNotFoundError(f"Sprite image {f} not found; pass two existing image files.")
    return torch.stack([torch.from_numpy(np.asarray(Image.open(f).convert("RGB").resize((inner, inner))).copy())
                        .permute(2, 0, 1).float() / 255 for f in files])


def sprites(split, root, n, seed, size, *, files=None, max_angle: float = 45.0, fill: float = 1.0,
            color: bool = False) -> Dataset:
    """AugNet's section 4.1 / Augerino's "Mario and Iggy" task, with two real images.

    Each image is one of two sprites (two Fashion-MNIST items by default, ``files`` = two image paths
    otherwise) on a black canvas of ``size`` px (default 32, as the paper), rotated by ``U[-max_angle,
    max_angle]`` degrees (upright) or that plus 180 (upside down). Labels ``2 * sprite + upside_down``:
    0 and 2 upright, 1 and 3 upside down. ``n`` images (default 10,000 train / 5,000 test, as the paper).
    ``fill`` is the sprite's side as a fraction of the canvas: 1 (default) rotates the whole frame, as the
    Mario-Iggy generator of Benton et al. does, so rotations cut the corners; ``1 / sqrt(2)`` keeps every
    rotated sprite whole inside the canvas. ``color=True`` renders grey sprites in colour, 3 channels, as the
    RGB sprites of the AugNet and Augerino code: each sprite keeps its grey levels times its own tint
    (:data:`SPRITE_TINTS`); sprites from colour files are in colour already.

    ``factors``: ``angle``, the rotation applied in radians in (-pi, pi] (counter-clockwise positive, as the
    ``rotate`` op: the degrees given to ``apply("rotate", canvas, degrees)``, in radians), and ``upside_down``
    (0 or 1, the label's orientation). An upright sprite's angle lies in ``±max_angle`` degrees, an upside-down
    one's within ``max_angle`` of pi.
    """
    side = size or 32
    n = n or (10_000 if split == "train" else 5_000)
    gen = _split_generator(seed, split)
    if not 0 < fill <= 1:
        raise ValueError(f"fill is the sprite's side as a fraction of the canvas, in (0, 1]; got {fill}.")
    sprites = sprite_images(files, max(1, round(side * fill)))
    if color and sprites.shape[1] == 1:
        sprites = sprites * torch.tensor(SPRITE_TINTS).view(2, 3, 1, 1)
    pad = (side - sprites.shape[-1]) // 2
    canvas = torch.nn.functional.pad(sprites, (pad, side - sprites.shape[-1] - pad) * 2)
    which = torch.randint(0, 2, (n,), generator=gen)
    flip = torch.randint(0, 2, (n,), generator=gen)
    angle = (torch.rand(n, generator=gen) * 2 - 1) * max_angle + 180.0 * flip
    angle = torch.remainder(angle + 180, 360) - 180
    images = (apply("rotate", canvas[which], angle) * 255).round().to(torch.uint8)
    names = SPRITE_CLASSES if files is None else tuple(Path(f).stem for f in files)
    classes = [f"{s} {o}" for s in names for o in ("upright", "upside down")]
    rad = torch.deg2rad(angle.double())  # in [-pi, pi): -pi (the same turn as pi) moves to pi
    rad = torch.where(rad <= -torch.pi, rad + 2 * torch.pi, rad).float()
    factors = {"angle": rad, "upside_down": flip.float()}
    return Dataset("sprites", split, images, which * 2 + flip, classes, factors=factors)


def sinusoids(split, root, n, seed, size, *, freqs=(2.0, 4.0, 6.0, 8.0), jitter: float = 0.5,
              seconds: float = 10.0, fs: float = 100.0, noise: float = 0.5) -> Dataset:
    """AugNet's section 4.2 signals: one class per frequency in ``freqs`` Hz, each signal at that frequency
    plus ``U(-jitter, jitter)`` Hz, a uniform random phase, ``seconds`` at ``fs`` Hz, unit amplitude and
    Gaussian noise of std ``noise``. ``images`` holds ``(n, 1, T)`` float32 signals; ``n`` defaults to 400
    train / 200 test, as the paper.
    """
    if size is not None:
        raise ValueError("sinusoids are 1-D signals: size does not apply (set seconds and fs instead).")
    n = n or (400 if split == "train" else 200)
    gen = _split_generator(seed, split)
    labels = torch.randint(0, len(freqs), (n,), generator=gen)
    jit = (torch.rand(n, generator=gen, dtype=torch.float64) * 2 - 1) * jitter
    f = torch.tensor(freqs, dtype=torch.float64)[labels] + jit
    phase = torch.rand(n, 1, generator=gen, dtype=torch.float64) * 2 * np.pi
    t = torch.arange(int(round(seconds * fs)), dtype=torch.float64) / fs
    x = torch.sin(2 * np.pi * f[:, None] * t + phase)
    x = x + noise * torch.randn(n, len(t), generator=gen, dtype=torch.float64)
    return Dataset("sinusoids", split, x.float().unsqueeze(1), labels, [f"{g:g} Hz" for g in freqs])
