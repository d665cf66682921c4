"""The Dataset core: one split of a dataset (:class:`Dataset`) and what every loader of :mod:`invlib.data` shares:
subsets that are seeded and nested, resizing, the cache of parsed arrays, foreground boxes, and the colouring of
grey items and smooth backgrounds that the coloured and generated sets paint with.

Nothing here reads files or knows a dataset's name: the loaders (:mod:`invlib.data.real`,
:mod:`~invlib.data.generated`, :mod:`~invlib.data.scenes`, :mod:`~invlib.data.lighting`) build on it, and the
registry (:func:`invlib.data.load`) composes them. Names with an underscore are the package's own helpers.

Example
-------
>>> ds = Dataset("toy", "test", torch.zeros(6, 1, 4, 4, dtype=torch.uint8), torch.arange(6) % 2, ["a", "b"])
>>> ds, len(ds.subset(3))
(Dataset('toy', 'test', images=6x1x4x4 uint8, classes=2, synsets=False, boxes=False), 3)
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from .. import streaming
from ..streaming import ImageFiles, is_lazy

SPLITS = ("train", "test")

_CACHE: dict[tuple, object] = {}  # parsed / coloured arrays, so repeated loads are instant
_CACHE_MAX = 6


class DataMissingError(FileNotFoundError):
    """A dataset's files are nowhere to be found; the message names the three ways to get them."""


@dataclass(eq=False)
class Dataset:
    """One split of a dataset: its images in memory, or on disk for an image folder too large for memory.

    Attributes
    ----------
    images:  (N, C, H, W) uint8, or (N, C, T) float32 for signal datasets (``sinusoids``), or an
             :class:`invlib.streaming.ImageFiles` (N, 3, H, W) uint8 decoded from disk when indexed, for an image
             folder larger than :func:`invlib.streaming.memory_cap` (``load(..., stream=True)`` forces it):
             read them with :func:`invlib.streaming.batches`, as every consumer of the library does
    labels:  (N,) int64, indices into ``classes``
    classes: class names, in label order
    synsets: WordNet synset name per class (``'coat.n.01'``), or None if unknown
    boxes:   (N, 4) float32 ``x0, y0, x1, y1`` in pixels of ``images`` (x1, y1 exclusive), or None
    factors: per-image generating factors of a generated set, name -> (N,) float32, or None (real data):

             - ``sprites``: ``angle``, the rotation applied to the canvas in radians, wrapped to (-pi, pi],
               counter-clockwise positive as the ``rotate`` op of :mod:`invlib.transforms` (the image is
               ``apply("rotate", canvas, rad2deg(angle))``); ``upside_down``, 0 or 1.
             - ``scenes``: the main item's ``side`` (a fraction of the canvas side), ``offset_x`` and ``offset_y``
               (its centre's offset as a fraction of half the free room, in [-1, 1]), ``hue`` (radians in
               [0, 2 pi)); ``distractor``, 0 or 1.
             - ``lighting``: ``condition`` (index into ``list(LIGHTING_CONDITIONS)``), ``hue`` (the item's hue
               before lighting, radians in [0, 2 pi)) and ``saturation`` (in [0, 1]).

    Every Dataset made from another (:meth:`rows`, :meth:`subset`, :meth:`resize`) keeps the factors of its
    images, in its images' order.

    Example
    -------
    >>> from invlib.data import load
    >>> ds = load("fashion_mnist", "test")
    >>> len(ds), ds.float().shape, ds.classes[ds.labels[0]]
    (10000, torch.Size([10000, 1, 28, 28]), 'Ankle boot')
    >>> sorted(load("sprites", "test", n=4).factors)
    ['angle', 'upside_down']
    """

    name: str
    split: str
    images: Tensor
    labels: Tensor
    classes: list[str]
    synsets: list[str] | None = None
    boxes: Tensor | None = None
    factors: dict[str, Tensor] | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def rows(self, index) -> Dataset:
        """The samples at ``index`` (a slice, or a ``(M,)`` index tensor or list), as a Dataset.

        Example
        -------
        >>> from invlib.data import load
        >>> ds = load("sinusoids", "test", n=10)
        >>> len(ds.rows(slice(0, 3))), len(ds.rows([4, 7]))
        (3, 2)
        """
        return dataclasses.replace(self, images=streaming.rows(self.images, index), labels=self.labels[index],
                                   boxes=None if self.boxes is None else self.boxes[index],
                                   factors=_index_factors(self.factors, index))

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.images.shape))
        where = " on disk" if self.streams else ""
        return (
            f"Dataset({self.name!r}, {self.split!r}, images={shape} {str(self.images.dtype)[6:]}{where}, "
            f"classes={len(self.classes)}, synsets={self.synsets is not None}, boxes={self.boxes is not None})"
        )

    @property
    def streams(self) -> bool:
        """Whether the images stay on disk (:class:`invlib.streaming.ImageFiles`) and are decoded batch by batch.

        Example
        -------
        >>> from invlib.data import load
        >>> load("fashion_mnist", "test", n=4).streams
        False
        """
        return is_lazy(self.images)

    def float(self) -> Tensor:
        """The images as (N, C, H, W) float32 in [0, 1] (all of them decoded, for a dataset that streams).

        Example
        -------
        >>> from invlib.data import load
        >>> load("fashion_mnist", "test", n=8).float().max() <= 1
        tensor(True)
        """
        return self.images.float().div_(255) if self.images.dtype == torch.uint8 else self.images.float()

    def with_channels(self, channels: int) -> Dataset:
        """The same images with ``channels`` channels: grey images ``(N, 1, H, W)`` repeated to
        ``(N, channels, H, W)`` (3 for RGB networks on greyscale data); images that already have them are returned
        as they are, and any other conversion is a ``ValueError``. The library's one grey-to-RGB conversion
        (``load(..., channels=3)`` calls it).

        Example
        -------
        >>> from invlib.data import load
        >>> load("fashion_mnist", "test", n=4).with_channels(3).images.shape
        torch.Size([4, 3, 28, 28])
        """
        have = self.images.shape[1]
        if have == channels:
            return self
        if have != 1:
            raise ValueError(f"cannot turn {have}-channel images of {self.name!r} into {channels} channels; only "
                             "grey (1-channel) images are repeated")
        return dataclasses.replace(self, images=self.images.expand(-1, channels, *self.images.shape[2:]).contiguous())

    def with_whole_boxes(self) -> Dataset:
        """The same dataset with boxes: its own, or the whole image ``[0, 0, W, H]`` as every image's box when it
        has none (a zoom then zooms into the whole image).

        Example
        -------
        >>> ds = Dataset("folder", "test", torch.zeros(2, 3, 8, 6, dtype=torch.uint8), torch.zeros(2).long(), ["a"])
        >>> ds.with_whole_boxes().boxes.tolist()
        [[0.0, 0.0, 6.0, 8.0], [0.0, 0.0, 6.0, 8.0]]
        """
        if self.boxes is not None:
            return self
        h, w = self.images.shape[-2:]
        return dataclasses.replace(self, boxes=torch.tensor([[0.0, 0.0, w, h]]).expand(len(self), 4).contiguous())

    def resize(self, size: int) -> Dataset:
        """Every image resized to ``size x size`` (bilinear, antialiased, on uint8, in chunks of ~64 MB) and the
        boxes scaled with them; images on disk are decoded at the new side when they are read. The library's one
        resize of a dataset (``load(..., size=...)`` calls it).

        ``(N, C, H, W)`` uint8 -> ``(N, C, size, size)`` uint8; a dataset already at that side is returned as it is.

        Example
        -------
        >>> from invlib.data import load
        >>> ds = load("fashion_mnist", "test", n=4).resize(14)
        >>> ds.images.shape, bool((ds.boxes <= 14).all())
        (torch.Size([4, 1, 14, 14]), True)
        """
        n, c, h, w = self.images.shape
        if (h, w) == (size, size):
            return self
        boxes = None if self.boxes is None else self.boxes * torch.tensor([size / w, size / h, size / w, size / h])
        if self.streams:  # decode the files at the new side when they are read
            if self.images.margin != 1:
                raise ValueError("resize images on disk before adding a margin (ImageFiles.with_margin), not after.")
            out = ImageFiles(self.images.paths, size, self.images.decoder)
            return Dataset(self.name, self.split, out, self.labels, self.classes, self.synsets, boxes, self.factors)
        out = torch.empty((n, c, size, size), dtype=torch.uint8)
        step = max(1, 2**26 // (c * max(h * w, size * size)))
        for i in range(0, n, step):
            out[i : i + step] = streaming.resize(self.images[i : i + step], size)
        return Dataset(self.name, self.split, out, self.labels, self.classes, self.synsets, boxes, self.factors)

    def subset(self, n: int, seed: int = 0) -> Dataset:
        """The first ``n`` images of one permutation fixed by ``seed``: deterministic and nested, so
        ``subset(100)`` is ``subset(1000)[:100]`` (same images, same order).

        Example
        -------
        >>> from invlib.data import load
        >>> ds = load("fashion_mnist", "test")
        >>> torch.equal(ds.subset(100).images, ds.subset(1000).images[:100])
        True
        """
        return self._take(_subset_indices(len(self), n, seed, f"{self.name}/{self.split}"))

    def _take(self, idx: Tensor) -> Dataset:
        boxes = None if self.boxes is None else self.boxes[idx]
        return Dataset(
            self.name,
            self.split,
            streaming.rows(self.images, idx),
            self.labels[idx],
            list(self.classes),
            None if self.synsets is None else list(self.synsets),
            boxes,
            _index_factors(self.factors, idx),
        )


def _index_factors(factors: dict[str, Tensor] | None, index, clone: bool = False) -> dict[str, Tensor] | None:
    """``factors`` at ``index`` (a slice, or an index tensor or list), or all of them copied with ``clone``."""
    if factors is None:
        return None
    return {k: v.clone() if clone else v[index] for k, v in factors.items()}


def _subset_indices(total: int, n: int, seed: int, what: str, cap: bool = False) -> Tensor:
    """The first ``n`` of a permutation of ``range(total)`` fixed by ``seed``; ``n > total`` is an error, or, with
    ``cap``, all ``total`` with a printed note (``what`` names the images in both)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    if n > total and cap:
        print(f"note: {what} has {total} images, fewer than the {n} asked for; using all {total}.")
        n = total
    if n > total:
        raise ValueError(f"n={n} is larger than {what}, which has {total} images "
                         f"(load(..., cap=True) uses what there is).")
    return torch.randperm(total, generator=torch.Generator().manual_seed(seed))[:n]


def _finish(ds: Dataset, n: int | None, seed: int, cap: bool = False) -> Dataset:
    """``subset(n, seed)`` (``cap``: at most what ``ds`` holds), else a copy: loaders build ``ds`` on cached arrays
    that callers must not alter."""
    if n is not None:
        return ds._take(_subset_indices(len(ds), n, seed, f"{ds.name}/{ds.split}", cap))
    boxes = None if ds.boxes is None else ds.boxes.clone()
    return Dataset(
        ds.name,
        ds.split,
        ds.images.take(slice(None)) if ds.streams else ds.images.clone(),
        ds.labels.clone(),
        list(ds.classes),
        None if ds.synsets is None else list(ds.synsets),
        boxes,
        _index_factors(ds.factors, None, clone=True),
    )


def _cached(key: tuple, make):
    """``make()``, kept under ``key`` among the last :data:`_CACHE_MAX` arrays made."""
    if key not in _CACHE:
        while len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = make()
    return _CACHE[key]


def _data_env(sub: str) -> Path | None:
    """``$INVLIB_DATA/<sub>``, or None when ``$INVLIB_DATA`` is unset."""
    return Path(os.environ["INVLIB_DATA"]) / sub if os.environ.get("INVLIB_DATA") else None


def foreground_boxes(gray: Tensor, threshold: int = 10) -> Tensor:
    """Tight ``(x0, y0, x1, y1)`` boxes (x1, y1 exclusive) of the pixels above ``threshold``, batched.

    ``gray``: (N, H, W) or (N, 1, H, W) uint8 -> (N, 4) float32. An image without foreground gets the
    whole image.

    Example
    -------
    >>> g = torch.zeros(1, 5, 5, dtype=torch.uint8); g[0, 1:3, 2] = 200
    >>> foreground_boxes(g).tolist()
    [[2.0, 1.0, 3.0, 3.0]]
    """
    fg = (gray.reshape(len(gray), *gray.shape[-2:]) > threshold).to(torch.uint8)
    rows, cols = fg.amax(dim=2), fg.amax(dim=1)  # (N, H), (N, W): any foreground in that row / column
    h, w = rows.shape[1], cols.shape[1]
    # argmax returns the first maximum: the first foreground row/column from each side
    x0, y0 = cols.argmax(1), rows.argmax(1)
    box = torch.stack([x0, y0, w - cols.flip(1).argmax(1), h - rows.flip(1).argmax(1)], 1)
    empty = rows.amax(1) == 0
    box[empty] = torch.tensor([0, 0, w, h])
    return box.float()


# ---------------------------------------------------------------- colour and backgrounds the generated sets share


def colorize(gray: Tensor, hue: Tensor, saturation: Tensor) -> Tensor:
    """Grayscale -> RGB with one hue and saturation per image; value (intensity) = the gray pixel.

    ``gray`` (N, 1, H, W) uint8, ``hue`` (N,) radians in [0, 2 pi), ``saturation`` (N,) in [0, 1]
    -> (N, 3, H, W) uint8 whose channel maximum is ``gray`` (up to rounding). For a fixed hue and saturation
    HSV -> RGB is linear in the value, so this is ``gray * hsv_to_rgb(hue, saturation, 1)`` per image:
    kornia converts N colours, not N x H x W pixels.

    Example
    -------
    >>> colorize(torch.full((1, 1, 2, 2), 255, dtype=torch.uint8), torch.zeros(1), torch.ones(1))[0, :, 0, 0]
    tensor([255,   0,   0], dtype=torch.uint8)
    """
    rgb = _tint(hue, saturation)  # (N, 3, 1, 1): the colour at full intensity
    out = torch.empty((len(gray), 3, *gray.shape[-2:]), dtype=torch.uint8)
    step = max(1, 2**24 // gray[0].numel())
    for i in range(0, len(gray), step):
        out[i : i + step] = (gray[i : i + step] * rgb[i : i + step]).round_().clamp_(0, 255).to(torch.uint8)
    return out


def _tint(hue: Tensor, saturation: Tensor) -> Tensor:
    """``(N,)`` hues (radians) and saturations -> ``(N, 3, 1, 1)`` RGB colours at full value (kornia)."""
    from kornia.color import hsv_to_rgb

    hsv = torch.stack([hue.float(), saturation.float(), torch.ones(len(hue))], 1)[:, :, None, None]
    return hsv_to_rgb(hsv)


_BICUBIC: dict[int, Tensor] = {}


def _smooth(control: Tensor, size: int) -> Tensor:
    """Control points ``(B, C, k, k)`` -> ``(B, C, size, size)``, bicubic (as ``interpolate``, done separably as
    two matrix products: faster at these sizes, benchmarks/measurements/data.md)."""
    k = control.shape[-1]
    if (k, size) not in _BICUBIC:
        basis = torch.eye(k)[:, None, None, :]  # (k, 1, 1, k): each control point alone
        _BICUBIC[(k, size)] = torch.nn.functional.interpolate(basis, size=(1, size), mode="bicubic",
                                                              align_corners=False)[:, 0, 0].T  # (size, k)
    m = _BICUBIC[(k, size)]
    return m @ control @ m.T
