"""Scenes: objects that vary in position and scale, on backgrounds that are not empty (:func:`scenes`).

A scene generator draws on objects it is given: the registry (:func:`invlib.data.load`) loads the items (the
``items`` option: Fashion-MNIST by default, any dataset of objects on a dark background) and passes them here,
so nothing in this module loads data.

Example
-------
>>> from invlib.data.real import fashion_mnist_items
>>> ds = scenes("test", *fashion_mnist_items("test"), n=4, seed=0, size=None)
>>> ds.images.shape, ds.boxes.shape, sorted(ds.factors)
(torch.Size([4, 3, 56, 56]), torch.Size([4, 4]), ['distractor', 'hue', 'offset_x', 'offset_y', 'side'])
"""

from __future__ import annotations

import torch
from torch import Tensor

from .dataset import SPLITS, Dataset, _cached, _finish, _smooth, _subset_indices, _tint

SCENE_SIZE = 56  # default canvas: a stride-2 stem (models.small_resnet18_s2) sees 28 x 28 maps, as at 28 px
SCENE_MEDIAN_SIDE = 0.55  # the main item's median side / canvas side: about 30 % of the area, items near 28 px
SCENE_LOG_SIDE_STD = 0.35  # std of log(side) at variation 1: area spans about x/4 to x4 of the median (95 %)
SCENE_CENTER_STD = 0.5  # std of the centre's offset at variation 1, as a fraction of half the free room
SCENE_SIDE_RANGE = (0.25, 1.0)  # sides are clipped to this; offsets to the free room (the item stays whole)
SCENE_DISTRACTOR = dict(p=0.5, side=0.6, dim=0.6)  # probability, side relative to the main item, brightness
SCENE_BACKGROUND = 0.35  # the brightest a background pixel gets (smooth colour noise, 4 x 4 control points)


def _scene_draws(labels: Tensor, n_classes: int, gen: torch.Generator, variation: float, distractors: float):
    """Per-scene random numbers for a whole split (so a scene is the same under any subset)."""
    m = len(labels)
    side = SCENE_MEDIAN_SIDE * torch.exp(SCENE_LOG_SIDE_STD * variation * torch.randn(m, generator=gen))
    side = side.clamp(*SCENE_SIDE_RANGE)
    offset = (SCENE_CENTER_STD * variation * torch.randn(m, 2, generator=gen)).clamp(-1, 1)
    hue = torch.rand(m, 2, generator=gen) * (2 * torch.pi)
    sat = 0.5 + 0.5 * torch.rand(m, 2, generator=gen)
    other_class = (labels + torch.randint(1, n_classes, (m,), generator=gen)) % n_classes
    pick = torch.rand(m, generator=gen)
    d_pos = torch.rand(m, 2, generator=gen) * 2 - 1
    present = torch.rand(m, generator=gen) < distractors
    background = torch.rand(m, 3, 4, 4, generator=gen)
    return dict(side=side, offset=offset, hue=hue, sat=sat, other_class=other_class, pick=pick, d_pos=d_pos,
                present=present, background=background)


def _item_left(px: Tensor, offset: Tensor, size: int) -> Tensor:
    """Where an item ``px`` pixels wide starts on a canvas of ``size``, centred at ``offset`` (a fraction of half
    the free room, in [-1, 1]): the one placement rule of the pixels (:func:`_axis_weights`) and the boxes."""
    return (size - px) / 2 * (1 + offset)


def _axis_weights(side: Tensor, offset: Tensor, n_in: int, size: int) -> Tensor:
    """``(B, size, n_in)`` resampling weights along one axis: output pixel ``x`` of a canvas of ``size`` px
    reads the item (``n_in`` px, pasted ``side * size`` px wide at ``offset`` of half the free room) through a
    tent filter as wide as the shrink factor (antialiased when the item gets smaller, bilinear when larger);
    weights are zero beyond the item, so the canvas there is empty."""
    px = (side * size)[:, None, None]
    left = _item_left(px, offset[:, None, None], size)
    u = ((torch.arange(size)[None, :, None] + 0.5) - left) * (n_in / px) - 0.5  # item coordinate of pixel x
    radius = (n_in / px).clamp_min(1.0)
    w = (1 - (u - torch.arange(n_in)[None, None, :]).abs() / radius).clamp_min(0) / radius
    inside = ((u > -0.5) & (u < n_in - 0.5)).float()  # x shows the item at all
    return w / w.sum(-1, keepdim=True).clamp_min(1e-8) * inside


def _paste(item: Tensor, side: Tensor, offset: Tensor, size: int) -> Tensor:
    """Items ``(B, C, h, w)`` float -> canvases ``(B, C, size, size)``: each item scaled to ``side * size`` px and
    centred at ``offset`` (``(B, 2)``, x and y as fractions of half the free room, in [-1, 1]); zero outside.
    The move is a scale and a shift, so it is separable: two batched matrix products per batch."""
    wy = _axis_weights(side, offset[:, 1], item.shape[-2], size)
    wx = _axis_weights(side, offset[:, 0], item.shape[-1], size)
    return wy[:, None] @ item @ wx[:, None].transpose(-1, -2)


def _layer(items: Tensor, hue: Tensor, sat: Tensor, side: Tensor, offset: Tensor, size: int):
    """Items ``(B, C, h, w)`` uint8 pasted onto empty canvases: ``(colour (B, 3, size, size), opacity (B, 1,
    size, size))`` floats in [0, 1]. A pixel's brightness is its opacity; grey items are pasted as one channel
    and tinted afterwards (tinting is linear in the value, so the order does not matter)."""
    pasted = _paste(items.float().div_(255), side, offset, size)
    alpha = pasted.amax(1, keepdim=True)
    return (pasted * _tint(hue, sat) if pasted.shape[1] == 1 else pasted), alpha


def _render_scenes(items: Tensor, d: dict, idx: Tensor, size: int, distractor: Tensor, background: float):
    """The scenes ``idx`` of one split: ``(len(idx), 3, size, size)`` uint8, in chunks of 1,024."""
    out = torch.empty((len(idx), 3, size, size), dtype=torch.uint8)
    dim = SCENE_DISTRACTOR["dim"]
    for lo in range(0, len(idx), 1024):
        i = idx[lo : lo + 1024]
        canvas = _smooth(d["background"][i], size).clamp_(0, 1).mul_(background)
        j = i[d["present"][i]]  # the scenes of this chunk that have a distractor
        if len(j):
            rgb, alpha = _layer(items[distractor[j]], d["hue"][j, 1], d["sat"][j, 1],
                                d["side"][j] * SCENE_DISTRACTOR["side"], d["d_pos"][j], size)
            k = d["present"][i]
            canvas[k] = canvas[k] * (1 - alpha) + rgb * dim
        rgb, alpha = _layer(items[i], d["hue"][i, 0], d["sat"][i, 0], d["side"][i], d["offset"][i], size)
        canvas = canvas.mul_(1 - alpha).add_(rgb)
        out[lo : lo + 1024] = canvas.mul_(255).round_().clamp_(0, 255).to(torch.uint8)
    return out


def _scene_boxes(item_boxes: Tensor, item_side: int, side: Tensor, offset: Tensor, size: int) -> Tensor:
    """The main items' foreground boxes in canvas pixels: the item's own box, scaled and moved as pasted."""
    px = side * size
    left = _item_left(px[:, None], offset, size)  # (M, 2): x, y of the item's top-left corner
    scale = (px / item_side)[:, None]
    return torch.cat([left + item_boxes[:, :2] * scale, left + item_boxes[:, 2:] * scale], 1).clamp(0, size)




def scenes(split, items: Dataset, source: str, n, seed, size, cap: bool = False, *, variation: float = 1.0,
           distractors: float = SCENE_DISTRACTOR["p"], background: float = SCENE_BACKGROUND,
           scene_seed: int = 0) -> Dataset:
    """Objects that vary in position and scale, on backgrounds that are not empty: the ``items`` (Fashion-MNIST
    by default) composited onto a ``size`` px canvas (default 56), coloured per item as ``fashion_mnist_color``.
    One scene per item of the split (60,000 train, 10,000 test for Fashion-MNIST); the label and box are the main
    item's.

    - **Scale.** The main item's side is ``0.55 x exp(0.35 x variation x N(0, 1))`` of the canvas, clipped to
      [0.25, 1]: a median of 30 % of the area and, at ``variation=1``, areas from about a quarter to four times
      that (95 %).
    - **Position.** The centre is offset on each axis by ``0.5 x variation x N(0, 1)`` of half the free room
      (canvas minus item), clipped to it, so the item stays whole and centres gather near the middle.
    - **Background.** Smooth colour noise (4 x 4 control points, bicubic) up to ``background`` (35 %)
      brightness, so a translated or sheared scene shows background, not black (``background=0``: black).
    - **Distractor.** With probability ``distractors`` (0.5) a second item of another class, at 0.6 of the main
      item's side and 60 % brightness, anywhere on the canvas behind the main item: a crop that shows only it
      loses the label.

    ``variation`` scales both spreads: 0 gives a centred item of fixed size (the Fashion-MNIST regime on a
    background), 1 the ImageNet-like shape below, more spreads further. Where the numbers come from: none is
    copied from a table. Paper B (App. E.1), measuring U2Net foreground boxes over all ImageNet training images,
    reports that object scale varies over a wide range while centres are concentrated at the middle of the
    frame; Russakovsky et al. (2015, IJCV, section 3.3) describe ILSVRC objects as large on average with a wide
    spread of scales. The constants (``SCENE_*`` in this module) are our choice of that shape (their history:
    benchmarks/measurements/data.md).

    ``items``: the objects, a :class:`~invlib.data.dataset.Dataset` of ``(M, C, h, w)`` uint8 items on a dark
    background with their foreground ``boxes`` and at least one item of each of two or more classes; ``source``
    names them for the cache of scenes made of them. Users choose them with :func:`invlib.data.load`'s option
    ``items``: ``load("scenes", items="folder", root="my/objects")`` (grey items are coloured; a pixel's
    brightness is its opacity, so photographs with backgrounds of their own paste as rectangles). ``scene_seed``
    fixes the draws of a split; ``n`` / ``seed`` pick a subset as for every dataset (``cap``: at most the items
    there are). Deterministic, generated in memory (only the scenes asked for are drawn), uint8. ``factors``: the
    main item's ``side``, ``offset_x``, ``offset_y`` and ``hue``, and ``distractor`` (see
    :class:`~invlib.data.dataset.Dataset`).

    Example
    -------
    >>> from invlib.data import load
    >>> ds = load("scenes", "test", n=4, variation=0.5)
    >>> ds.images.shape, ds.boxes.shape, ds.classes[0]
    (torch.Size([4, 3, 56, 56]), torch.Size([4, 4]), 'T-shirt/top')
    """
    if not (isinstance(variation, (int, float)) and 0 <= variation <= 10):
        raise ValueError(f"variation scales the spread of position and scale: a number in [0, 10] (0: centred, "
                         f"fixed size; 1: ImageNet-like), got {variation!r}.")
    if not 0 <= distractors <= 1:
        raise ValueError(f"distractors is the probability of a distractor item, in [0, 1]; got {distractors!r}.")
    if not 0 <= background <= 1:
        raise ValueError(f"background is the brightest a background pixel gets, in [0, 1]; got {background!r}.")
    size = size or SCENE_SIZE
    if size < 16:
        raise ValueError(f"scenes need a canvas of at least 16 px, got size={size}.")
    images, labels, boxes, classes = items.images, items.labels, items.boxes, items.classes
    if len(classes) < 2:
        raise ValueError(f"scenes need items of at least two classes (a distractor is of another class); "
                         f"{items.name!r} has {classes}.")
    idx = torch.arange(len(labels)) if n is None else _subset_indices(len(labels), n, seed, f"scenes/{split}", cap)
    key = ("scenes", split, source, float(variation), float(distractors), float(background), size, int(scene_seed),
           n, seed)

    def make():
        gen = torch.Generator().manual_seed(2 * int(scene_seed) + SPLITS.index(split))
        d = _scene_draws(labels, len(classes), gen, float(variation), float(distractors))
        counts = torch.bincount(labels, minlength=len(classes))
        if (counts == 0).any():
            raise ValueError(f"every class needs at least one item for the distractors; {items.name!r} lacks some.")
        starts = torch.cumsum(counts, 0) - counts  # items sorted by class: class c is order[starts[c]:][:counts[c]]
        c = d["other_class"]
        pick = starts[c] + (d["pick"] * counts[c]).long().clamp_max(counts[c] - 1)
        distractor = torch.argsort(labels, stable=True)[pick]  # (M,) the distractor item of every scene
        pics = _render_scenes(images, d, idx, size, distractor, float(background))
        factors = {"side": d["side"][idx], "offset_x": d["offset"][idx, 0], "offset_y": d["offset"][idx, 1],
                   "hue": d["hue"][idx, 0], "distractor": d["present"][idx].float()}
        return pics, _scene_boxes(boxes[idx], images.shape[-1], d["side"][idx], d["offset"][idx], size), factors

    pics, box, factors = _cached(key, make)
    ds = Dataset("scenes", split, pics, labels[idx], classes, items.synsets, box, factors)
    return _finish(ds, None, seed)
