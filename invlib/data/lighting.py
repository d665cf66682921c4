"""Lighting: a stand-in for RawFooT under its lighting conditions (paper D, section 5.4), Fashion-MNIST items in
colour classes and free classes, lit by daylight, coloured lights and mixtures (:func:`lighting`).

The lights (:data:`LIGHTING_CONDITIONS`, :data:`LIGHTING_GROUPS`) and the classes (:data:`LIGHTING_CLASSES`,
:func:`lighting_classes`) are public: paper D's colour chapter reads them. Users load the set through
:func:`invlib.data.load` (``load("lighting", ...)``).

Example
-------
>>> lighting("test", None, 4, 0, None, conditions="red").images.shape
torch.Size([4, 3, 32, 32])
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .. import streaming
from .dataset import SPLITS, Dataset, _cached, _finish, _smooth, _subset_indices, _tint
from .real import FASHION_MNIST_CLASSES, _fashion_arrays

LIGHTING_SIZE = 32  # default canvas; the 28 px items are resized to it
LIGHTING_HUE_PAIRS = {  # item class -> its two colour classes (name, hue in degrees), 120 degrees apart
    "Sandal": (("red", 0.0), ("green", 120.0)),
    "Sneaker": (("chartreuse", 90.0), ("azure", 210.0)),
    "Ankle boot": (("cyan", 180.0), ("magenta", 300.0)),
    "Bag": (("violet", 270.0), ("orange", 30.0)),
}
LIGHTING_FREE_ITEMS = ("T-shirt/top", "Trouser", "Pullover", "Dress")  # hue uniform on the circle: no information
LIGHTING_CLASSES = [f"{colour} {item}" for item, pair in LIGHTING_HUE_PAIRS.items() for colour, _ in pair] + list(
    LIGHTING_FREE_ITEMS)
LIGHTING_HUE_SHARES = tuple(k / len(LIGHTING_HUE_PAIRS) for k in range(len(LIGHTING_HUE_PAIRS) + 1))  # 0, .25, ... 1
LIGHTING_SATURATION = (0.6, 1.0)  # an item's saturation ~ U(0.6, 1), every class
LIGHTING_BACKGROUND = (0.3, 0.1)  # background: grey 0.3 plus smooth colour noise of amplitude 0.1 per channel
LIGHTING_EXPOSURE = 0.8  # the brightest item pixel reflects 80 %: headroom for gains up to 1.25 before clipping


def _daylight_gains(kelvin: float) -> tuple[float, float, float]:
    """RGB gains of daylight at ``kelvin``: Planck's black-body radiance ``B(l, T) = l^-5 / (exp(c2 / (l T)) - 1)``
    (``c2`` = 1.4388e7 nm K) at one wavelength per channel, 595 / 550 / 480 nm, divided by its value at 6500 K
    and scaled to a mean of 1, so ``D65`` is (1, 1, 1) and a temperature changes the colour, not the brightness.
    The three wavelengths (closer together than the sRGB primaries) stand for a camera's broad bands: 2700 K
    comes out at about (1.54, 1.01, 0.45), the warm cast of a tungsten lamp.

    Example
    -------
    >>> [round(g, 2) for g in _daylight_gains(4500)]
    [1.17, 1.03, 0.8]
    """
    c2 = 1.4388e7
    ratio = [(math.expm1(c2 / (lam * 6500)) / math.expm1(c2 / (lam * kelvin))) for lam in (595.0, 550.0, 480.0)]
    return tuple(r * 3 / sum(ratio) for r in ratio)


def _light_gains(hue_degrees: float, saturation: float) -> tuple[float, float, float]:
    """RGB gains of a coloured light: the HSV colour (``hue_degrees``, ``saturation``, value 1) scaled to a mean of
    1 (HSV -> RGB: channel ``c(n) = 1 - s * clip(min(k, 4 - k), 0, 1)``, ``k = (n + hue / 60) mod 6``, n = 5, 3, 1).

    Example
    -------
    >>> _light_gains(0, 0.5)
    (1.5, 0.75, 0.75)
    """
    rgb = [1 - saturation * min(max(min(k, 4 - k), 0), 1) for k in ((n + hue_degrees / 60) % 6 for n in (5, 3, 1))]
    return tuple(c * 3 / sum(rgb) for c in rgb)


def _mix(a: str, b: str) -> tuple[float, float, float]:
    """Two lights of :data:`LIGHTING_CONDITIONS` at equal power: the mean of their gains (mean 1 again)."""
    return tuple((x + y) / 2 for x, y in zip(LIGHTING_CONDITIONS[a][0], LIGHTING_CONDITIONS[b][0]))


# name -> ((r, g, b) gains of mean 1, intensity). Daylight "D45" is 4500 K (RawFooT's names); "D45x0.5" the same
# light at half intensity; coloured lights at HSV saturation 0.5; "a+b" two lights at equal power.
LIGHTING_CONDITIONS: dict[str, tuple[tuple[float, float, float], float]] = {
    f"D{k // 100}": (_daylight_gains(k), 1.0) for k in (2700, 3000, 4000, 4500, 5000, 5500, 6500, 7500, 9500)
}
LIGHTING_CONDITIONS.update({f"{d}x{i:g}": (LIGHTING_CONDITIONS[d][0], i) for d in ("D45", "D65") for i in (0.5, 0.75)})
LIGHTING_CONDITIONS.update({name: (_light_gains(h, 0.5), 1.0) for name, h in (
    ("red", 0), ("amber", 40), ("green", 120), ("cyan", 180), ("blue", 240), ("magenta", 300))})
LIGHTING_CONDITIONS.update({f"{a}+{b}": (_mix(a, b), 1.0) for a, b in (
    ("red", "green"), ("green", "blue"), ("blue", "red"), ("D27", "blue"))})
# The analogue of paper D's App. D.2 split of RawFooT's conditions around the training light D45. easy: daylight
# of RawFooT's range (4000 to 9500 K) and intensity changes; hard: coloured lights and two-light mixtures. The
# warm lamps D27 and D30 (outside RawFooT's daylight range) are in neither group.
LIGHTING_GROUPS = {
    "easy": ["D40", "D45", "D50", "D55", "D65", "D75", "D95", "D45x0.5", "D45x0.75", "D65x0.5", "D65x0.75"],
    "hard": ["red", "amber", "green", "cyan", "blue", "magenta", "red+green", "green+blue", "blue+red", "D27+blue"],
}


def lighting_classes(hue_share: float = 1.0) -> list[str]:
    """The class names of ``load("lighting", hue_share=...)``: the colour classes of the first ``hue_share`` of
    :data:`LIGHTING_HUE_PAIRS` (two per item), then each other pair's item as one free class (its bare name), then
    :data:`LIGHTING_FREE_ITEMS`. A class is free (its hue carries nothing) exactly when its name is a bare item.

    Example
    -------
    >>> lighting_classes() == LIGHTING_CLASSES, lighting_classes(0.25)[:4]
    (True, ['red Sandal', 'green Sandal', 'Sneaker', 'Ankle boot'])
    >>> len(lighting_classes(0.0)), len(lighting_classes(0.5))
    (8, 10)
    >>> lighting_classes(0.3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: hue_share is the share of LIGHTING_HUE_PAIRS whose hue is the label; valid: 0.0, 0.25, ...; got 0.3.
    """
    pairs = _hue_pairs(hue_share)
    items = list(LIGHTING_HUE_PAIRS)
    return ([f"{colour} {item}" for item in items[:pairs] for colour, _ in LIGHTING_HUE_PAIRS[item]] + items[pairs:]
            + list(LIGHTING_FREE_ITEMS))


def _hue_pairs(hue_share: float) -> int:
    """``hue_share`` (one of :data:`LIGHTING_HUE_SHARES`) -> the number of hue-defined pairs."""
    if not any(isinstance(hue_share, (int, float)) and abs(hue_share - s) < 1e-9 for s in LIGHTING_HUE_SHARES):
        raise ValueError(f"hue_share is the share of LIGHTING_HUE_PAIRS whose hue is the label; valid: "
                         f"{', '.join(map(str, LIGHTING_HUE_SHARES))}; got {hue_share!r}.")
    return round(hue_share * len(LIGHTING_HUE_PAIRS))


def _lighting_conditions(conditions) -> list[int]:
    """Condition names and group names (:data:`LIGHTING_GROUPS`) -> indices into ``list(LIGHTING_CONDITIONS)``."""
    names = list(LIGHTING_CONDITIONS)
    asked = [conditions] if isinstance(conditions, str) else list(conditions)
    found = []
    for c in asked:
        if isinstance(c, str) and c in LIGHTING_GROUPS:
            found += [names.index(g) for g in LIGHTING_GROUPS[c]]
        elif isinstance(c, str) and c in LIGHTING_CONDITIONS:
            found.append(names.index(c))
        else:
            raise ValueError(f"Unknown lighting condition {c!r}. Valid conditions: {', '.join(names)}; "
                             f"or a group: {', '.join(LIGHTING_GROUPS)}.")
    if not found:
        raise ValueError("conditions is empty: give a condition name, a group name or a tuple of them.")
    return list(dict.fromkeys(found))


def _lighting_draws(labels: Tensor, gen: torch.Generator, hue_spread: float, hue_pairs: int = 4) -> dict:
    """Per-item random numbers and classes for a whole Fashion-MNIST split (so an image is the same under any
    subset and any condition): which items are kept, their class, hue, saturation, background and a uniform
    number that picks the condition. The first ``hue_pairs`` pairs are colour classes; the other pairs' items are
    free classes (kept, labelled and hued as :data:`LIGHTING_FREE_ITEMS`), with the same random numbers."""
    m = len(labels)
    perm = torch.randperm(m, generator=gen)
    jitter = torch.rand(m, generator=gen) * 2 - 1
    free_hue = torch.rand(m, generator=gen) * (2 * torch.pi)
    sat = LIGHTING_SATURATION[0] + (LIGHTING_SATURATION[1] - LIGHTING_SATURATION[0]) * torch.rand(m, generator=gen)
    background = torch.rand(m, 3, 4, 4, generator=gen)
    pick = torch.rand(m, generator=gen)
    # rank of each item among its Fashion-MNIST class, in the order of perm: a seeded, exactly balanced split
    pos = torch.empty(m, dtype=torch.int64)
    pos[perm] = torch.arange(m)
    order = torch.argsort(labels * m + pos)
    counts = torch.bincount(labels, minlength=len(FASHION_MNIST_CLASSES))
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.empty(m, dtype=torch.int64)
    rank[order] = torch.arange(m) - starts[labels[order]]
    pair_of = torch.full((len(FASHION_MNIST_CLASSES),), -1)
    pair_of[[FASHION_MNIST_CLASSES.index(c) for c in LIGHTING_HUE_PAIRS]] = torch.arange(len(LIGHTING_HUE_PAIRS))
    free_of = torch.full((len(FASHION_MNIST_CLASSES),), -1)
    free_of[[FASHION_MNIST_CLASSES.index(c) for c in LIGHTING_FREE_ITEMS]] = torch.arange(len(LIGHTING_FREE_ITEMS))
    pair, free, half = pair_of[labels], free_of[labels], rank % 2
    free = torch.where(pair >= hue_pairs, pair - hue_pairs,  # a free class's rank: the pairs' items come first
                       torch.where(free >= 0, free + len(LIGHTING_HUE_PAIRS) - hue_pairs, -1))
    pair = torch.where(pair >= hue_pairs, -1, pair)  # a pair past hue_pairs: one free class of its item
    keep = (pair >= 0) | ((free >= 0) & (rank < counts[labels] // 2))  # free items: half, as many as a colour class
    label = torch.where(pair >= 0, 2 * pair + half, 2 * hue_pairs + free)
    base = torch.deg2rad(torch.tensor([[h for _, h in p] for p in LIGHTING_HUE_PAIRS.values()]))  # (pairs, 2)
    pair_hue = base[pair.clamp_min(0), half] + math.radians(hue_spread) * jitter
    hue = torch.remainder(torch.where(pair >= 0, pair_hue, free_hue), 2 * torch.pi)
    return dict(keep=keep, label=label, hue=hue, sat=sat, background=background, pick=pick)


def _render_lighting(gray: Tensor, hue: Tensor, sat: Tensor, background: Tensor, light: Tensor, size: int) -> Tensor:
    """Items ``(B, 1, 28, 28)`` uint8 -> ``(B, 3, size, size)`` uint8 lit scenes, in chunks of 1,024: ``clamp(light
    * (background * (1 - a) + a * EXPOSURE * colour), 0, 1)`` with ``a`` the item's grey level (its opacity) and
    ``light`` ``(B, 3)`` = gains x intensity."""
    out = torch.empty((len(gray), 3, size, size), dtype=torch.uint8)
    mean, amplitude = LIGHTING_BACKGROUND
    for lo in range(0, len(gray), 1024):
        s = slice(lo, lo + 1024)
        a = streaming.resize(gray[s], size).float().div_(255)
        scene = _smooth(background[s] * 2 - 1, size).mul_(amplitude).add_(mean).clamp_(0, 1).mul_(1 - a)
        scene.add_(a * (_tint(hue[s], sat[s]) * LIGHTING_EXPOSURE))
        out[s] = scene.mul_(light[s, :, None, None] * 255).round_().clamp_(0, 255).to(torch.uint8)
    return out


def lighting(split, root, n, seed, size, cap: bool = False, *, conditions=("D45",), hue_spread: float = 10.0,
             lighting_seed: int = 0, hue_share: float = 1.0) -> Dataset:
    """A stand-in for RawFooT under its lighting conditions (paper D, section 5.4): classes that only colour tells
    apart, classes whose colour means nothing, and lights that change every colour of the image.

    **Classes** (:data:`LIGHTING_CLASSES`, 12). Eight *colour classes*: four Fashion-MNIST items
    (:data:`LIGHTING_HUE_PAIRS`: Sandal, Sneaker, Ankle boot, Bag), each in two hues 120 degrees apart ("red
    Sandal" 0 and "green Sandal" 120 degrees, ...), plus ``U(-hue_spread, hue_spread)`` degrees per image: the
    two classes of a pair have one shape and differ only in hue, like a lemon and a lime, so jittering the hue
    destroys their label. Four *free classes* (:data:`LIGHTING_FREE_ITEMS`: T-shirt/top, Trouser, Pullover,
    Dress): hue ``U(0, 360)`` degrees, so hue carries no information and may be jittered freely. The two groups
    are garments and footwear / bags, shapes that do not mix. Each item of a pair's class goes to one of its two
    colours, half each (seeded); the free classes take a seeded half of their items, so every class has 3,000
    train / 500 test images (36,000 / 6,000). Saturation ``U(0.6, 1)`` for all.

    **The share of hue-defined classes**, ``hue_share`` (:data:`LIGHTING_HUE_SHARES`, default 1: the above): only
    the first ``hue_share`` of the pairs are colour classes; each other pair's item becomes one free class (its
    bare name, a seeded half of its items, hue ``U(0, 360)``), so at 0 no class is defined by hue (8 free classes)
    and per-image hue ranges have nothing to gain over one range for all (:func:`lighting_classes`). Every other
    draw is the same: at 1 the data are those of before the knob, bit for bit.

    **Image.** The item, resized from 28 px to ``size`` (default 32), is pasted with its grey level as opacity
    and ``colorize`` colour (brightest pixel reflecting :data:`LIGHTING_EXPOSURE` = 0.8) on a background of grey
    0.3 plus smooth colour noise of amplitude 0.1 (4 x 4 control points, bicubic), so the light shows everywhere.
    The stored image is ``clamp(gains x intensity x scene, 0, 1)`` in uint8: one diagonal (von Kries) change of
    the whole image per condition, clipped where a bright channel saturates.

    **Lighting** (:data:`LIGHTING_CONDITIONS`, 23): daylight D27 to D95 (2700 to 9500 K, gains from Planck's
    law, D65 = (1, 1, 1)), D45 and D65 at intensities 0.5 and 0.75, six coloured lights (red, amber, green,
    cyan, blue, magenta) and four two-light mixtures; :data:`LIGHTING_GROUPS` splits them into ``easy`` and
    ``hard`` as App. D.2 does. ``conditions``: a condition name, a group name, or a tuple of them (default
    ``("D45",)``, the paper's training light); each image is rendered under one of them, drawn per image with a
    fixed seeded number, so an image differs between two loads only by its light. The other draws do not
    depend on ``conditions``: ``load(..., conditions="red")`` is the same images as ``conditions="D45"``, lit red.

    ``factors``: ``condition`` (index into ``list(LIGHTING_CONDITIONS)``), ``hue`` (the item's hue before the
    light, radians in [0, 2 pi)) and ``saturation``. ``lighting_seed`` fixes a split's draws; ``n`` / ``seed``
    pick a subset as for every dataset (``cap``: at most the images there are), and only the images asked for are
    rendered. Boxes: the item's
    foreground box, scaled. Synsets: None (the two colour classes of a pair are one kind of thing).

    Example
    -------
    >>> from invlib.data import load
    >>> ds = load("lighting", "test", n=4, conditions=("D45", "red"))
    >>> ds.images.shape, ds.classes[:2], sorted(ds.factors)
    (torch.Size([4, 3, 32, 32]), ['red Sandal', 'green Sandal'], ['condition', 'hue', 'saturation'])
    """
    chosen = _lighting_conditions(conditions)
    if not (isinstance(hue_spread, (int, float)) and 0 <= hue_spread <= 60):
        raise ValueError(f"hue_spread is the half-width in degrees of a colour class's hue, in [0, 60] (the hues "
                         f"of a pair are 120 degrees apart); got {hue_spread!r}.")
    size = size or LIGHTING_SIZE
    if size < 8:
        raise ValueError(f"lighting needs a canvas of at least 8 px, got size={size}.")
    pairs = _hue_pairs(hue_share)
    gray, labels, boxes, folder = _fashion_arrays(split, root)
    d = _lighting_draws(labels, torch.Generator().manual_seed(2 * int(lighting_seed) + SPLITS.index(split)),
                        float(hue_spread), pairs)
    idx = d["keep"].nonzero()[:, 0]  # the split's images, in file order
    if n is not None:
        idx = idx[_subset_indices(len(idx), n, seed, f"lighting/{split}", cap)]
    key = ("lighting", split, str(folder), tuple(chosen), float(hue_spread), int(lighting_seed), size, n, seed,
           pairs)

    def make():
        condition = torch.tensor(chosen)[(d["pick"][idx] * len(chosen)).long().clamp_max(len(chosen) - 1)]
        table = torch.tensor([[g * i for g in gains] for gains, i in LIGHTING_CONDITIONS.values()])  # (K, 3)
        images = _render_lighting(gray[idx], d["hue"][idx], d["sat"][idx], d["background"][idx], table[condition],
                                  size)
        factors = {"condition": condition.float(), "hue": d["hue"][idx], "saturation": d["sat"][idx]}
        return images, d["label"][idx], boxes[idx] * (size / gray.shape[-1]), factors

    images, label, box, factors = _cached(key, make)
    ds = Dataset("lighting", split, images, label, lighting_classes(hue_share), None, box, factors)
    return _finish(ds, None, seed)
