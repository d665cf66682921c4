"""Datasets by name -> uint8 image tensors, labels, boxes and class -> WordNet synsets.

>>> ds = load("fashion_mnist_color", "test", n=256, size=32)
>>> ds.images.shape, ds.images.dtype, ds.boxes.shape
(torch.Size([256, 3, 32, 32]), torch.uint8, torch.Size([256, 4]))

Registered datasets (:func:`available`); adding one = one loader function + one ``_REGISTRY`` entry. A loader
takes ``(split, root, n, seed, size, **its_options)`` and returns a :class:`Dataset` with ``n`` applied (image
folders pick the subset before decoding and decode at ``size``); :func:`load` then resizes to ``size``. The
loader's keyword-only parameters are the dataset's options.

| name                | images          | boxes                   | source                                  |
|---------------------|-----------------|-------------------------|-----------------------------------------|
| fashion_mnist       | 1x28x28         | foreground (tight)      | Debian package / $INVLIB_DATA / download |
| fashion_mnist_color | 3x28x28         | foreground (tight)      | the same, coloured per image             |
| cifar10             | 3x32x32         | None                    | $INVLIB_DATA/cifar10 / download          |
| imagenet            | 3 x size x size | first XML object / all  | root/<train,val>/<wnid>/*.JPEG           |
| folder              | 3 x size x size | None                    | root/[<split>/]<class>/<image>           |
| scenes              | 3 x 56 x 56     | the main item (exact)   | generated from Fashion-MNIST items       |
| sprites             | 1 or 3 x 32     | None                    | generated from two Fashion-MNIST items   |
| sinusoids           | 1 x T signals   | None                    | generated                                |
| lighting            | 3 x 32 x 32     | foreground (tight)      | generated: coloured items, 23 lights     |

An ``imagenet`` or ``folder`` split larger than :func:`invlib.streaming.memory_cap` (4 GiB, ``$INVLIB_MEMORY_CAP``)
stays on disk: its ``images`` are an :class:`invlib.streaming.ImageFiles`, decoded batch by batch by whatever
reads them (:func:`invlib.streaming.batches`); :func:`write_imagenet_folder` makes such a folder for tests.

Boxes are ``(x0, y0, x1, y1)`` float32 in pixels of the stored images, ``x1``/``y1`` exclusive (pixel edges:
a box covering only pixel (0, 0) is ``(0, 0, 1, 1)``), so resizing scales them exactly.
"""

from __future__ import annotations

import contextvars
import dataclasses
import gzip
import inspect
import math
import os
import pickle
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import torch
from torch import Tensor

from . import streaming
from .streaming import ImageFiles, is_lazy
from .utils import cache_dir, check_choice, is_online

SPLITS = ("train", "test")
DEBIAN_FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
FASHION_MNIST_MIRROR = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"  # torchvision's mirror
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"  # what torchvision downloads
FASHION_MNIST_CLASSES = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
]
CIFAR10_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

# Class -> WordNet 3.0 noun synset (tests/test_wordnet.py checks each lemma and definition).
FASHION_MNIST_SYNSETS = [
    "jersey.n.03",  # jersey, T-shirt, tee_shirt: a close-fitting pullover shirt
    "trouser.n.01",  # trouser, pant: a garment extending from the waist to the knee or ankle, ...
    "sweater.n.01",  # sweater, jumper: a crocheted or knitted garment covering the upper part of the body
    "dress.n.01",  # dress, frock: a one-piece garment for a woman; has skirt and bodice
    "coat.n.01",  # an outer garment that has sleeves and covers the body from shoulder down; worn outdoors
    "sandal.n.01",  # a shoe consisting of a sole fastened by straps to the foot
    "shirt.n.01",  # a garment worn on the upper half of the body
    "gym_shoe.n.01",  # gym_shoe, sneaker, tennis_shoe: a canvas shoe with a pliable rubber sole
    "bag.n.04",  # bag, handbag, pocketbook, purse: a container used for carrying money and small items
    "boot.n.01",  # footwear that covers the whole foot and lower leg (WordNet has no "ankle boot")
]
CIFAR10_SYNSETS = [
    "airplane.n.01",
    "car.n.01",
    "bird.n.01",
    "cat.n.01",
    "deer.n.01",
    "dog.n.01",
    "frog.n.01",
    "horse.n.01",
    "ship.n.01",
    "truck.n.01",
]
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp")

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

    Every Dataset made from another (:meth:`rows`, :meth:`subset`, :func:`load`'s ``size``) keeps the factors
    of its images, in its images' order.

    Example
    -------
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
        >>> load("fashion_mnist", "test", n=4).streams
        False
        """
        return is_lazy(self.images)

    def float(self) -> Tensor:
        """The images as (N, C, H, W) float32 in [0, 1] (all of them decoded, for a dataset that streams).

        Example
        -------
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

    def subset(self, n: int, seed: int = 0) -> Dataset:
        """The first ``n`` images of one permutation fixed by ``seed``: deterministic and nested, so
        ``subset(100)`` is ``subset(1000)[:100]`` (same images, same order).

        Example
        -------
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


_CAP = contextvars.ContextVar("invlib_data_cap", default=False)  # load(..., cap=True) in progress
_STREAM = contextvars.ContextVar("invlib_data_stream", default=None)  # load(..., stream=...) in progress


def _subset_indices(total: int, n: int, seed: int, what: str) -> Tensor:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    if n > total and _CAP.get():
        print(f"note: {what} has {total} images, fewer than the {n} asked for; using all {total}.")
        n = total
    if n > total:
        raise ValueError(f"n={n} is larger than {what}, which has {total} images "
                         f"(load(..., cap=True) uses what there is).")
    return torch.randperm(total, generator=torch.Generator().manual_seed(seed))[:n]


def _resize(ds: Dataset, size: int) -> Dataset:
    """Resize every image to ``size x size`` (bilinear, antialiased, on uint8) in chunks of ~64 MB."""
    n, c, h, w = ds.images.shape
    if (h, w) == (size, size):
        return ds
    if ds.streams:  # decode the files at the new side when they are read
        if ds.images.margin != 1:
            raise ValueError("resize images on disk before adding a margin (ImageFiles.with_margin), not after.")
        out = ImageFiles(ds.images.paths, size, ds.images.decoder)
        boxes = None if ds.boxes is None else ds.boxes * torch.tensor([size / w, size / h, size / w, size / h])
        return Dataset(ds.name, ds.split, out, ds.labels, ds.classes, ds.synsets, boxes, ds.factors)
    out = torch.empty((n, c, size, size), dtype=torch.uint8)
    step = max(1, 2**26 // (c * max(h * w, size * size)))
    for i in range(0, n, step):
        out[i : i + step] = streaming.resize(ds.images[i : i + step], size)
    boxes = None
    if ds.boxes is not None:
        boxes = ds.boxes * torch.tensor([size / w, size / h, size / w, size / h])
    return Dataset(ds.name, ds.split, out, ds.labels, ds.classes, ds.synsets, boxes, ds.factors)


def _finish(ds: Dataset, n: int | None, seed: int) -> Dataset:
    """``subset(n, seed)``, else a copy: loaders build ``ds`` on cached arrays that callers must not alter."""
    if n is not None:
        return ds.subset(n, seed)
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
    if key not in _CACHE:
        while len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = make()
    return _CACHE[key]


def _data_env(sub: str) -> Path | None:
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


# ---------------------------------------------------------------- Fashion-MNIST


def _read_idx(path: Path) -> np.ndarray:
    """An idx file (``.gz`` or not): magic ``0 0 0x08 ndim``, ``ndim`` big-endian int32 sizes, then uint8."""
    with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
        data = f.read()
    if data[:3] != b"\x00\x00\x08":
        raise ValueError(f"{path} is not a uint8 idx file (magic {data[:4].hex()}).")
    ndim = data[3]
    shape = tuple(int(d) for d in np.frombuffer(data, ">i4", ndim, 4))
    return np.frombuffer(data, np.uint8, int(np.prod(shape)), 4 + 4 * ndim).reshape(shape)


def _fashion_dirs(root) -> list[Path]:
    dirs = [Path(root), Path(root) / "FashionMNIST" / "raw"] if root is not None else []
    env = _data_env("fashion-mnist")
    return dirs + ([env] if env else []) + [DEBIAN_FASHION_MNIST, cache_dir("data") / "FashionMNIST" / "raw"]


def _find_fashion(split: str, root) -> tuple[Path, Path] | None:
    for d in _fashion_dirs(root):
        found = [
            next((d / (f + gz) for gz in (".gz", "") if (d / (f + gz)).is_file()), None)
            for f in FASHION_MNIST_FILES[split]
        ]
        if all(found):
            return found[0], found[1]
    return None


def _fashion_missing(split: str, root) -> DataMissingError:
    files = ", ".join(f + "[.gz]" for s in SPLITS for f in FASHION_MNIST_FILES[s])
    return DataMissingError(
        f"Fashion-MNIST ({split}) not found. Looked in: {', '.join(map(str, _fashion_dirs(root)))}.\n"
        "Three ways to get it:\n"
        "  1. Debian/Ubuntu package: `sudo apt-get install dataset-fashion-mnist` "
        f"(installs the files into {DEBIAN_FASHION_MNIST}).\n"
        f"  2. Set $INVLIB_DATA to a folder with a fashion-mnist/ subfolder, or pass root= a folder, holding "
        f"{files} (gzipped or not).\n"
        f"  3. Go online: torchvision downloads them from {FASHION_MNIST_MIRROR} into "
        f"{cache_dir('data') / 'FashionMNIST' / 'raw'} on the next load (tried only when the mirror answers and "
        "INVLIB_OFFLINE / HF_HUB_OFFLINE are unset)."
    )


def _fashion_arrays(split: str, root) -> tuple[Tensor, Tensor, Tensor, Path]:
    """(images (N,1,28,28) uint8, labels (N,) int64, boxes (N,4), folder), cached per split and folder."""
    found = _find_fashion(split, root)
    if found is None:
        url = urlparse(FASHION_MNIST_MIRROR)
        if not is_online(url.hostname, url.port or (443 if url.scheme == "https" else 80)):
            raise _fashion_missing(split, root)
        from torchvision.datasets import FashionMNIST

        FashionMNIST(str(cache_dir("data")), train=split == "train", download=True)
        found = _find_fashion(split, root)
        if found is None:
            raise _fashion_missing(split, root)

    def parse():
        images = torch.from_numpy(_read_idx(found[0]).copy()).unsqueeze(1)
        labels = torch.from_numpy(_read_idx(found[1]).astype(np.int64))
        if len(images) != len(labels):
            raise ValueError(f"{found[0]} has {len(images)} images but {found[1]} {len(labels)} labels.")
        return images, labels, foreground_boxes(images), found[0].parent

    return _cached(("fashion_mnist", split, str(found[0])), parse)


def _fashion_mnist(split, root, n, seed, size) -> Dataset:
    """Fashion-MNIST, 1x28x28 grayscale; boxes = tight box of the pixels above 10/255."""
    images, labels, boxes, _ = _fashion_arrays(split, root)
    ds = Dataset(
        "fashion_mnist", split, images, labels, list(FASHION_MNIST_CLASSES), list(FASHION_MNIST_SYNSETS), boxes
    )
    return _finish(ds, n, seed)


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


def _fashion_mnist_color(split, root, n, seed, size, *, color_seed: int = 0) -> Dataset:
    """Fashion-MNIST made RGB: hue ~ U(0, 2 pi) and saturation ~ U(0.5, 1) per image, independent of the
    class, drawn for the whole split from ``color_seed`` (so an image keeps its colour under any subset)."""
    gray, labels, boxes, folder = _fashion_arrays(split, root)

    def make():
        g = torch.Generator().manual_seed(int(color_seed) * 2 + SPLITS.index(split))
        hue = torch.rand(len(gray), generator=g) * (2 * torch.pi)
        sat = 0.5 + 0.5 * torch.rand(len(gray), generator=g)
        return colorize(gray, hue, sat)

    images = _cached(("fashion_mnist_color", split, str(folder), int(color_seed)), make)
    ds = Dataset(
        "fashion_mnist_color", split, images, labels, list(FASHION_MNIST_CLASSES), list(FASHION_MNIST_SYNSETS), boxes
    )
    return _finish(ds, n, seed)


# ---------------------------------------------------------------- CIFAR-10


def _cifar_dirs(root) -> list[Path]:
    env = _data_env("cifar10")
    return ([Path(root)] if root is not None else []) + ([env] if env else []) + [cache_dir("data")]


def _cifar10(split, root, n, seed, size) -> Dataset:
    """CIFAR-10, 3x32x32, no boxes, read from torchvision's ``cifar-10-batches-py`` pickles (downloaded by
    ``torchvision.datasets.CIFAR10`` into ``cache_dir('data')`` when online). Read here rather than through
    ``CIFAR10(download=False)``, which insists on the official MD5 sums. The batches are pickles, like in
    torchvision: only point ``root`` at files you trust."""
    names = [f"data_batch_{i}" for i in range(1, 6)] if split == "train" else ["test_batch"]
    batch_dir = lambda d: d / "cifar-10-batches-py"  # noqa: E731
    complete = [batch_dir(d) for d in _cifar_dirs(root) if all((batch_dir(d) / f).is_file() for f in names)]
    found = complete[0] if complete else None
    if found is None and is_online(urlparse(CIFAR10_URL).hostname):
        from torchvision.datasets import CIFAR10

        CIFAR10(str(cache_dir("data")), train=split == "train", download=True)
        found = batch_dir(cache_dir("data"))
    if found is None:
        raise DataMissingError(
            f"CIFAR-10 ({split}) not found. Looked for {'/'.join(['cifar-10-batches-py', names[0]])} "
            f"(and the other batches) in: {', '.join(map(str, _cifar_dirs(root)))}.\n"
            "Three ways to get it:\n"
            "  1. There is no Debian package: copy the python-version batches (the cifar-10-batches-py/ "
            "folder of cifar-10-python.tar.gz: data_batch_1..5, test_batch, batches.meta) into "
            f"{cache_dir('data')}.\n"
            "  2. Set $INVLIB_DATA to a folder with a cifar10/cifar-10-batches-py/ subfolder, or pass root= "
            "a folder holding cifar-10-batches-py/.\n"
            f"  3. Go online: torchvision downloads {CIFAR10_URL} into {cache_dir('data')} on the next load "
            "(tried only when the host answers and INVLIB_OFFLINE / HF_HUB_OFFLINE are unset)."
        )

    def parse():
        images, labels = [], []
        for f in names:
            with open(found / f, "rb") as fh:
                batch = pickle.load(fh, encoding="latin1")
            images.append(np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            labels.extend(batch["labels"] if "labels" in batch else batch["fine_labels"])
        classes = list(CIFAR10_CLASSES)
        if (found / "batches.meta").is_file():
            with open(found / "batches.meta", "rb") as fh:
                classes = list(pickle.load(fh, encoding="latin1")["label_names"])
        return torch.from_numpy(np.concatenate(images)), torch.tensor(labels, dtype=torch.int64), classes

    images, labels, classes = _cached(("cifar10", split, str(found)), parse)
    synsets = list(CIFAR10_SYNSETS) if classes == CIFAR10_CLASSES else None
    return _finish(Dataset("cifar10", split, images, labels, classes, synsets), n, seed)


# ---------------------------------------------------------------- image folders (ImageNet-style and user's)


def wnid_to_synset(wnid: str) -> str:
    """WordNet synset name of an ImageNet id (``'n'`` + the 8-digit WordNet 3.0 noun offset).

    Example
    -------
    >>> wnid_to_synset("n02084071")
    'dog.n.01'
    """
    from . import wordnet

    if not re.fullmatch(r"n\d{8}", str(wnid)):
        raise ValueError(f"{wnid!r} is not an ImageNet id ('n' followed by 8 digits, e.g. 'n02084071').")
    wn = wordnet.ensure()
    with warnings.catch_warnings():  # NLTK warns, then returns None, for an offset that is no synset
        warnings.simplefilter("ignore")
        try:
            found = wn.synset_from_pos_and_offset("n", int(wnid[1:]))
        except Exception:  # noqa: BLE001 - older NLTK raises instead
            found = None
    if found is None:
        raise ValueError(f"{wnid!r} is not a WordNet 3.0 noun offset (no synset at {int(wnid[1:])}).")
    return found.name()


def _list_images(folder: Path) -> tuple[list[str], list[Path], list[int]]:
    """Sorted class subfolders of ``folder`` and their images, sorted by (class, file name)."""
    classes = sorted(d.name for d in folder.iterdir() if d.is_dir())
    files, labels = [], []
    for i, c in enumerate(classes):
        imgs = sorted(p for p in (folder / c).iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)
        files += imgs
        labels += [i] * len(imgs)
    return classes, files, labels


def _image_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file, from its header (nothing decoded)."""
    from PIL import Image

    with Image.open(path) as im:
        return im.size


def _xml_boxes(paths: list[Path]) -> tuple[list[list[float]], int, int] | None:
    """Every object's box of the first existing VOC/ILSVRC XML, with the annotated (width, height)."""
    for p in paths:
        if p.is_file():
            ann = ET.parse(p).getroot()
            boxes = [[float(b.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax")]
                     for b in ann.findall("object/bndbox")]
            return boxes, int(float(ann.findtext("size/width") or 0)), int(float(ann.findtext("size/height") or 0))
    return None


def _image_folder(name, folder: Path, split, n, seed, size, max_per_class, boxes_from=None,
                  box_filter=None) -> Dataset:
    classes, files, labels = _list_images(folder)
    if not files:
        raise DataMissingError(f"No images ({', '.join(IMAGE_EXTENSIONS)}) in class subfolders of {folder}.")
    idx = torch.arange(len(files))
    if box_filter is not None:  # before subsetting: read every XML, keep the images the filter accepts
        found = [_xml_boxes(boxes_from(f, classes[c])) for f, c in zip(files, labels)]
        ok = [b is not None and b[1] and b[2] and box_filter(torch.tensor(b[0]).view(-1, 4), b[1], b[2])
              for b in found]
        idx = torch.tensor([i for i, keep in enumerate(ok) if keep], dtype=torch.int64)
        if len(idx) == 0:
            raise DataMissingError(f"No image of {folder} has box XML that passes box_filter.")
    if max_per_class is not None:
        lab = torch.tensor(labels)[idx]
        rank = torch.arange(len(idx)) - torch.searchsorted(lab, lab)  # position of each file inside its class
        idx = idx[rank < max_per_class]
    if n is not None:
        idx = idx[_subset_indices(len(idx), n, seed, f"{name}/{split} at {folder}")]
    paths = [files[i] for i in idx.tolist()]
    stream, nbytes = _STREAM.get(), len(paths) * 3 * size * size
    if stream is None and nbytes > streaming.memory_cap():
        stream = True
        print(f"note: {folder}: {len(paths)} images take {nbytes / 2**30:.1f} GiB at {size}x{size}, more than the "
              f"memory cap ({streaming.memory_cap() / 2**30:.1f} GiB, $INVLIB_MEMORY_CAP): they stream from disk.")
    sizes: list[tuple[int, int] | None] = [None] * len(paths)
    if stream:
        images = ImageFiles(paths, size)
    else:
        images = torch.empty((len(paths), 3, size, size), dtype=torch.uint8)
        for k, path in enumerate(paths):
            images[k], w, h = streaming.decode(path, size)
            sizes[k] = (w, h)
    boxes = None
    if boxes_from:
        boxes = torch.empty((len(paths), 4))
        for k, i in enumerate(idx.tolist()):
            found = _xml_boxes(boxes_from(files[i], classes[labels[i]]))
            if not (found and found[0]):  # no XML: the whole image
                boxes[k] = torch.tensor([0.0, 0.0, size, size])
                continue
            box, aw, ah = found[0][0], found[1], found[2]
            if not (aw and ah):
                aw, ah = sizes[k] or _image_size(files[i])
            boxes[k] = (torch.tensor(box) * torch.tensor([size / aw, size / ah] * 2)).clamp(0, size)
    return Dataset(name, split, images, torch.tensor(labels, dtype=torch.int64)[idx], classes, None, boxes)


def _imagenet(split, root, n, seed, size, *, max_per_class: int | None = None, box_filter=None) -> Dataset:
    """ImageNet-style folder ``root/<train|val>/<wnid>/<image>.JPEG`` (split 'test' reads ``val``).

    Images are decoded one by one and resized to ``size`` (default 224) *square*: the aspect ratio is not
    kept. Labels follow the sorted wnids; ``classes`` are the wnids; synsets come from the wnid offsets.
    Box = the *first* ``<object>`` of the image's ILSVRC/VOC XML, found at ``root/<split>/<wnid>/<stem>.xml``,
    ``root/boxes/<split>/<wnid>/<stem>.xml`` or ``root/Annotation/<wnid>/<stem>.xml``, scaled from the XML's
    ``<size>`` to the stored image; an image without XML gets the whole image as its box.
    A split larger than :func:`invlib.streaming.memory_cap` (4 GiB, ``$INVLIB_MEMORY_CAP``) stays on disk and
    streams (:class:`invlib.streaming.ImageFiles`); ``n`` (a seeded subset, chosen before decoding) and/or
    ``max_per_class`` (the first files of each class by name) load fewer.
    ``box_filter(boxes (K, 4), width, height) -> bool``, e.g. :func:`invlib.papers.a.probes.ilsvrc_filter`, keeps only
    images whose XML boxes (in annotated pixels) pass; it runs on every XML before ``n`` is drawn.
    """
    base = Path(root) if root is not None else _data_env("imagenet")
    sub = "train"
    if split == "test":  # ImageNet calls it val; a test/ folder is used when there is no val/
        only_test = base is not None and not (base / "val").is_dir() and (base / "test").is_dir()
        sub = "test" if only_test else "val"
    folder = base / sub if base is not None else None
    if folder is None or not folder.is_dir():
        raise DataMissingError(
            f"ImageNet-style folder {folder or '<root>/train'} not found. ImageNet has no Debian package and "
            "no automatic download (its licence requires registering at image-net.org). Pass root= (or "
            "set $INVLIB_DATA so that $INVLIB_DATA/imagenet exists) pointing to a folder with "
            "train/<wnid>/*.JPEG and val/<wnid>/*.JPEG, optionally with ILSVRC bounding-box XML files."
        )

    def xml_paths(img: Path, wnid: str) -> list[Path]:
        return [
            img.with_suffix(".xml"),
            base / "boxes" / sub / wnid / f"{img.stem}.xml",
            base / "Annotation" / wnid / f"{img.stem}.xml",
        ]

    ds = _image_folder("imagenet", folder, split, n, seed, size or 224, max_per_class, xml_paths, box_filter)
    bad = [c for c in ds.classes if not re.fullmatch(r"n\d{8}", c)]
    if bad:
        raise ValueError(
            f"ImageNet class folders must be wnids like 'n02084071', got {bad[:5]}; "
            "for other names use load('folder', root=...)."
        )
    try:
        ds.synsets = [wnid_to_synset(c) for c in ds.classes]
    except FileNotFoundError as e:
        warnings.warn(f"WordNet unavailable, imagenet synsets set to None: {e}", stacklevel=3)
    return ds


def _folder(
    split, root, n, seed, size, *, synsets: dict[str, str] | None = None, max_per_class: int | None = None
) -> Dataset:
    """A user's image folder: ``root/<class>/<image>``, or ``root/<train|test>/<class>/<image>`` when those
    split folders exist (``val`` is accepted for test). Images resized to ``size`` (default 64) square;
    classes sorted; synsets from the option ``synsets={class: 'name.n.01'}`` (all classes), else None."""
    if root is None:
        raise ValueError("load('folder') needs root= pointing to a folder of class subfolders of images.")
    root = Path(root)
    if not root.is_dir():
        raise DataMissingError(f"Image folder {root} does not exist.")
    splits = [root / s for s in (("train",) if split == "train" else ("test", "val")) if (root / s).is_dir()]
    if splits:
        folder = splits[0]
    elif (root / "train").is_dir() or (root / "test").is_dir() or (root / "val").is_dir():
        raise DataMissingError(f"{root} has split folders but none for split {split!r}.")
    elif split == "train":
        folder = root
    else:
        raise ValueError(f"{root} has no train/ and test/ subfolders: its only split is 'train' (all images).")
    ds = _image_folder("folder", folder, split, n, seed, size or 64, max_per_class)
    if synsets is not None:
        missing = [c for c in ds.classes if c not in synsets]
        if missing:
            raise ValueError(f"synsets= lacks classes {missing}; it must map every class of {ds.classes}.")
        from . import wordnet

        try:
            ds.synsets = [wordnet.synset(synsets[c]).name() for c in ds.classes]
        except FileNotFoundError:  # no WordNet here: keep the names unchecked
            ds.synsets = [synsets[c] for c in ds.classes]
    return ds


def write_imagenet_folder(root, train_per_class: int = 100, test_per_class: int = 20, sides=(64, 300),
                          scene_size: int = 128, seed: int = 0, quality: int = 90) -> Path:
    """Write an ImageNet-style folder of generated JPEGs: ``root/{train,val}/<wnid>/<wnid>_<k>.JPEG`` with ILSVRC
    box XML at ``root/boxes/{train,val}/<wnid>/<wnid>_<k>.xml``, for tests and benchmarks of the paths that real
    ImageNet takes (decoding files of every size, boxes from XML, synsets from wnids, streaming from disk).

    The images are ``scenes`` (objects that move and change size over a textured background, rendered at
    ``scene_size``), each resized to its own width and height drawn from ``sides`` (64-300 px: varied sizes and
    aspect ratios, as ImageNet's); the box is the main item's, in the resized image's pixels. The ten classes
    are the Fashion-MNIST items, named by the wnid of their WordNet synset (``'n03595614'`` for
    ``jersey.n.03``). Needs Fashion-MNIST and WordNet (``make data``). Returns ``root``.

    Example
    -------
    >>> root = write_imagenet_folder(tempfile.mkdtemp(), train_per_class=2, test_per_class=1)  # doctest: +SKIP
    >>> load("imagenet", "test", root=root).boxes.shape  # doctest: +SKIP
    torch.Size([10, 4])
    """
    from PIL import Image

    from . import wordnet

    lo, hi = sides
    if not 16 <= lo <= hi:
        raise ValueError(f"sides must be (low, high) pixel sides with 16 <= low <= high, got {sides!r}.")
    wn = wordnet.ensure()
    wnids = [f"n{wn.synset(name).offset():08d}" for name in FASHION_MNIST_SYNSETS]
    root = Path(root)
    gen = torch.Generator().manual_seed(seed)
    for split, sub, per_class in (("train", "train", train_per_class), ("test", "val", test_per_class)):
        total = 60_000 if split == "train" else 10_000  # Fashion-MNIST's items, one scene each
        scenes = load("scenes", split, n=min(total, 3 * len(wnids) * per_class), seed=seed, size=scene_size)
        for c, wnid in enumerate(wnids):
            idx = (scenes.labels == c).nonzero().flatten()[:per_class]
            (root / sub / wnid).mkdir(parents=True, exist_ok=True)
            (root / "boxes" / sub / wnid).mkdir(parents=True, exist_ok=True)
            for k, i in enumerate(idx.tolist()):
                w, h = (int(v) for v in torch.randint(lo, hi + 1, (2,), generator=gen))
                img = torch.nn.functional.interpolate(scenes.images[i:i + 1], size=(h, w), mode="bilinear",
                                                      antialias=True)[0]
                stem = f"{wnid}_{k}"
                Image.fromarray(img.permute(1, 2, 0).numpy()).save(root / sub / wnid / f"{stem}.JPEG",
                                                                   quality=quality)
                box = (scenes.boxes[i] * torch.tensor([w, h, w, h]) / scene_size).round().int().tolist()
                xml = (f"<annotation><folder>{wnid}</folder><filename>{stem}</filename><size><width>{w}</width>"
                       f"<height>{h}</height><depth>3</depth></size><object><name>{wnid}</name><bndbox>"
                       f"<xmin>{box[0]}</xmin><ymin>{box[1]}</ymin><xmax>{box[2]}</xmax><ymax>{box[3]}</ymax>"
                       "</bndbox></object></annotation>")
                (root / "boxes" / sub / wnid / f"{stem}.xml").write_text(xml)
    return root


# ---------------------------------------------------------------- generated sets (AugNet, section 4)

SPRITE_CLASSES = ("Sneaker", "Ankle boot")  # the default two asymmetric Fashion-MNIST items
SPRITE_TINTS = ((1.0, 0.55, 0.15), (0.25, 0.6, 1.0))  # sprites(color=True): orange sneaker, blue boot


def _split_generator(seed: int, split: str) -> torch.Generator:
    """The random stream of one split of a generated set: train and test never share draws."""
    return torch.Generator().manual_seed(2 * seed + (split == "test"))


def _sprite_images(files, inner: int) -> Tensor:
    """The two sprites ``(2, C, inner, inner)`` float in [0, 1]."""
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


def _sprites(split, root, n, seed, size, *, files=None, max_angle: float = 45.0, fill: float = 1.0,
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
    from .transforms import apply

    side = size or 32
    n = n or (10_000 if split == "train" else 5_000)
    gen = _split_generator(seed, split)
    if not 0 < fill <= 1:
        raise ValueError(f"fill is the sprite's side as a fraction of the canvas, in (0, 1]; got {fill}.")
    sprites = _sprite_images(files, max(1, round(side * fill)))
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


def _sinusoids(split, root, n, seed, size, *, freqs=(2.0, 4.0, 6.0, 8.0), jitter: float = 0.5,
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


# ---------------------------------------------------------------- scenes: objects that vary in position and scale

SCENE_SIZE = 56  # default canvas: a stride-2 stem (models.small_resnet18_s2) sees 28 x 28 maps, today's step cost
SCENE_MEDIAN_SIDE = 0.55  # the main item's median side / canvas side: about 30 % of the area, items near 28 px
SCENE_LOG_SIDE_STD = 0.35  # std of log(side) at variation 1: area spans about x/4 to x4 of the median (95 %)
SCENE_CENTER_STD = 0.5  # std of the centre's offset at variation 1, as a fraction of half the free room
SCENE_SIDE_RANGE = (0.25, 1.0)  # sides are clipped to this; offsets to the free room (the item stays whole)
SCENE_DISTRACTOR = dict(p=0.5, side=0.6, dim=0.6)  # probability, side relative to the main item, brightness
SCENE_BACKGROUND = 0.35  # the brightest a background pixel gets (smooth colour noise, 4 x 4 control points)


def _scene_items(items: str, split: str, root) -> tuple[Tensor, Tensor, Tensor, list[str], list[str] | None, str]:
    """The object images a scene is made of: ``(images (M, C, h, w) uint8, labels, boxes, classes, synsets,
    source)``. Fashion-MNIST by default; any other registered dataset of objects on a dark background works
    (``items="folder", root=...``: a folder with one split gives its images to both scene splits)."""
    if items in ("fashion_mnist", "fashion_mnist_color"):
        images, labels, boxes, folder = _fashion_arrays(split, root)
        return images, labels, boxes, list(FASHION_MNIST_CLASSES), list(FASHION_MNIST_SYNSETS), str(folder)
    if items in ("scenes", "sprites", "sinusoids"):
        raise ValueError(f"scenes are made of object images; items={items!r} is not one. Use 'fashion_mnist' or "
                         "'folder' (with root=) or another dataset of objects on a dark background.")
    src = load(items, "train" if one_split_folder(items, root) else split, root=root, size=28)
    fg = src.images.amax(1, keepdim=True)
    return src.images, src.labels, foreground_boxes(fg), src.classes, src.synsets, f"{items}:{root}"


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


_BICUBIC: dict[int, Tensor] = {}


def _smooth(control: Tensor, size: int) -> Tensor:
    """Control points ``(B, C, k, k)`` -> ``(B, C, size, size)``, bicubic (as ``interpolate``, done separably as
    two matrix products, which is several times faster here)."""
    k = control.shape[-1]
    if (k, size) not in _BICUBIC:
        basis = torch.eye(k)[:, None, None, :]  # (k, 1, 1, k): each control point alone
        _BICUBIC[(k, size)] = torch.nn.functional.interpolate(basis, size=(1, size), mode="bicubic",
                                                              align_corners=False)[:, 0, 0].T  # (size, k)
    m = _BICUBIC[(k, size)]
    return m @ control @ m.T


def _tint(hue: Tensor, saturation: Tensor) -> Tensor:
    """``(N,)`` hues (radians) and saturations -> ``(N, 3, 1, 1)`` RGB colours at full value (kornia)."""
    from kornia.color import hsv_to_rgb

    hsv = torch.stack([hue.float(), saturation.float(), torch.ones(len(hue))], 1)[:, :, None, None]
    return hsv_to_rgb(hsv)


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


def _scenes(split, root, n, seed, size, *, variation: float = 1.0, distractors: float = SCENE_DISTRACTOR["p"],
            background: float = SCENE_BACKGROUND, items: str = "fashion_mnist", scene_seed: int = 0) -> Dataset:
    """Objects that vary in position and scale, on backgrounds that are not empty: Fashion-MNIST items composited
    onto a ``size`` px canvas (default 56), coloured per item as ``fashion_mnist_color``. One scene per item of
    the split (60,000 train, 10,000 test); the label and box are the main item's.

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
    spread of scales. The constants (``SCENE_*`` in this module) are our choice of that shape; the issue that
    asked for this set prototyped the same spreads (log-side 0.35, centres by a quarter of the free room).

    ``items``: the objects, ``"fashion_mnist"`` or any dataset of objects on a dark background, e.g.
    ``load("scenes", items="folder", root="my/objects")`` (grey items are coloured; a pixel's brightness is its
    opacity, so photographs with backgrounds of their own paste as rectangles). ``scene_seed`` fixes the draws
    of a split; ``n`` / ``seed`` pick a subset as for every dataset. Deterministic, generated in memory (about
    1 to 2 s per 10,000 scenes on 2 cores; only the scenes asked for are drawn), uint8. ``factors``: the main
    item's ``side``, ``offset_x``, ``offset_y`` and ``hue``, and ``distractor`` (see :class:`Dataset`).

    Example
    -------
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
    images, labels, boxes, classes, synsets, source = _scene_items(items, split, root)
    if len(classes) < 2:
        raise ValueError(f"scenes need items of at least two classes (a distractor is of another class); "
                         f"{items!r} has {classes}.")
    idx = torch.arange(len(labels)) if n is None else _subset_indices(len(labels), n, seed, f"scenes/{split}")
    key = ("scenes", split, source, float(variation), float(distractors), float(background), size, int(scene_seed),
           n, seed)

    def make():
        gen = torch.Generator().manual_seed(2 * int(scene_seed) + SPLITS.index(split))
        d = _scene_draws(labels, len(classes), gen, float(variation), float(distractors))
        counts = torch.bincount(labels, minlength=len(classes))
        if (counts == 0).any():
            raise ValueError(f"every class needs at least one item for the distractors; {items!r} lacks some.")
        starts = torch.cumsum(counts, 0) - counts  # items sorted by class: class c is order[starts[c]:][:counts[c]]
        c = d["other_class"]
        pick = starts[c] + (d["pick"] * counts[c]).long().clamp_max(counts[c] - 1)
        distractor = torch.argsort(labels, stable=True)[pick]  # (M,) the distractor item of every scene
        pics = _render_scenes(images, d, idx, size, distractor, float(background))
        factors = {"side": d["side"][idx], "offset_x": d["offset"][idx, 0], "offset_y": d["offset"][idx, 1],
                   "hue": d["hue"][idx, 0], "distractor": d["present"][idx].float()}
        return pics, _scene_boxes(boxes[idx], images.shape[-1], d["side"][idx], d["offset"][idx], size), factors

    pics, box, factors = _cached(key, make)
    ds = Dataset("scenes", split, pics, labels[idx], classes, synsets, box, factors)
    return _finish(ds, None, seed)


# ---------------------------------------------------------------- lighting: colour classes under changing light


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
LIGHTING_SATURATION = (0.6, 1.0)  # an item's saturation ~ U(0.6, 1), every class
LIGHTING_BACKGROUND = (0.3, 0.1)  # background: grey 0.3 plus smooth colour noise of amplitude 0.1 per channel
LIGHTING_EXPOSURE = 0.8  # the brightest item pixel reflects 80 %: headroom for gains up to 1.25 before clipping
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


def _lighting(split, root, n, seed, size, *, conditions=("D45",), hue_spread: float = 10.0,
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
    pick a subset as for every dataset, and only the images asked for are rendered. Boxes: the item's
    foreground box, scaled. Synsets: None (the two colour classes of a pair are one kind of thing).

    Example
    -------
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
        idx = idx[_subset_indices(len(idx), n, seed, f"lighting/{split}")]
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


# ---------------------------------------------------------------- registry and entry points

_REGISTRY = {
    "fashion_mnist": _fashion_mnist,
    "fashion_mnist_color": _fashion_mnist_color,
    "cifar10": _cifar10,
    "imagenet": _imagenet,
    "folder": _folder,
    "sprites": _sprites,
    "sinusoids": _sinusoids,
    "scenes": _scenes,
    "lighting": _lighting,
}


def available() -> list[str]:
    """Names accepted by :func:`load`.

    Example
    -------
    >>> "fashion_mnist_color" in available()
    True
    """
    return sorted(_REGISTRY)


def option_defaults(name: str) -> dict:
    """The options dataset ``name`` takes (:func:`load`'s ``**opts``) and their default values.

    Example
    -------
    >>> option_defaults("scenes")["variation"], option_defaults("fashion_mnist")
    (1.0, {})
    """
    fn = _REGISTRY[check_choice(name, _REGISTRY, "dataset")]
    return {p.name: p.default for p in inspect.signature(fn).parameters.values() if p.kind == p.KEYWORD_ONLY}


def check_options(name: str, opts: dict) -> None:
    """Raise ``TypeError`` naming the valid options when ``opts`` holds one that dataset ``name`` does not take.

    Example
    -------
    >>> check_options("scenes", {"variation": 0.5})
    >>> check_options("fashion_mnist", {"variation": 0.5})
    Traceback (most recent call last):
    TypeError: Unknown option(s) variation for dataset 'fashion_mnist'. Valid options: none.
    """
    valid = list(option_defaults(name))
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise TypeError(
            f"Unknown option(s) {', '.join(unknown)} for dataset {name!r}. Valid options: {', '.join(valid) or 'none'}."
        )


def load(
    name: str, split: str = "train", root=None, n: int | None = None, seed: int = 0, size: int | None = None,
    cap: bool = False, channels: int | None = None, stream: bool | None = None, **opts
) -> Dataset:
    """Load one split of a registered dataset (see :func:`available`) into memory, or, for an image folder
    (``imagenet``, ``folder``) larger than :func:`invlib.streaming.memory_cap`, as files streamed from disk.

    ``root``: a folder holding the files (else ``$INVLIB_DATA/<dataset>``, system copies, the cache);
    ``n``: keep ``subset(n, seed)`` (more than the split holds is an error, unless ``cap=True``: then the
    whole split, with a printed note; chapters use it so that they run on a small folder of your own);
    ``size``: resize images to ``size x size`` (antialiased, batched) and scale the boxes; ``opts``: the
    dataset's options (``variation``, ``distractors``, ``background``, ``items``, ``scene_seed`` for scenes,
    ``color_seed`` for fashion_mnist_color, ``conditions``, ``hue_spread``, ``hue_share``, ``lighting_seed`` for
    lighting, ``max_per_class`` for imagenet and folder,
    ``box_filter`` for imagenet, ``synsets`` for folder); ``channels``: repeat grey images to this many
    channels (:meth:`Dataset.with_channels`), e.g. 3 for networks that take RGB; ``stream``: for an image
    folder, ``True`` keeps the images on disk (:class:`invlib.streaming.ImageFiles`, decoded batch by batch by
    whatever reads them), ``False`` decodes them all now, ``None`` (default) streams when they would take more than
    the memory cap (``$INVLIB_MEMORY_CAP``, default 4 GiB); other datasets are made in memory and ignore it.

    Returns a :class:`Dataset` with images (N, C, H, W) uint8, labels (N,) int64, boxes (N, 4) or None.
    Raises :class:`DataMissingError` (a ``FileNotFoundError``) naming the ways to get missing files.

    Example
    -------
    >>> ds = load("fashion_mnist_color", "train", n=1000, seed=0, size=64)
    >>> ds.images.shape, ds.labels.dtype
    (torch.Size([1000, 3, 64, 64]), torch.int64)
    """
    check_choice(name, _REGISTRY, "dataset")
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r} for dataset {name!r}: use 'train' or 'test'.")
    fn = _REGISTRY[name]
    check_options(name, opts)
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        raise ValueError(f"size must be a positive integer (the image side in pixels), got {size!r}.")
    if stream not in (None, True, False):
        raise ValueError(f"stream must be None (by the memory cap), True or False, got {stream!r}.")
    token, streams = _CAP.set(bool(cap)), _STREAM.set(stream)
    try:
        ds = fn(split, root, n, seed, size, **opts)
    finally:
        _CAP.reset(token)
        _STREAM.reset(streams)
    ds = _resize(ds, size) if size is not None else ds
    return ds.with_channels(channels) if channels else ds


def one_split_folder(name: str, root) -> bool:
    """Whether ``name`` is a folder of class folders with no ``train/``, ``test/`` or ``val/`` inside: all its
    images are one split, which :func:`train_test` divides.

    Example
    -------
    >>> one_split_folder("fashion_mnist", None)
    False
    """
    return name == "folder" and root is not None and Path(root).is_dir() and not any(
        (Path(root) / sub).is_dir() for sub in ("train", "test", "val"))


def train_test(name: str, root=None, n_train: int = 1000, n_test: int = 1000, seed: int = 0,
               size: int | None = None, train: bool = True, channels: int | None = None, stream: bool | None = None,
               **opts):
    """``(train, test)`` for one dataset, capped at what the data hold: the two splits, or, for a folder
    without split sub-folders (:func:`one_split_folder`), a seeded draw of ``n_train + n_test`` of its images
    (all of them when it holds fewer) whose first ``n_test`` are the test set (a fifth of the draw when it was
    capped) and the rest the training set. This is the one rule of the library: the zoo trains on the training
    part, and every chapter that scores the zoo's networks on a folder scores them on images they never saw.

    ``stream`` is :func:`load`'s. ``train=False`` returns ``(None, test)``. Both are :class:`Dataset` s of images
    ``(N, C, H, W)`` uint8, ``C`` = ``channels`` when given (:meth:`Dataset.with_channels`).

    Example
    -------
    >>> tr, te = train_test("fashion_mnist", n_train=100, n_test=50, channels=3)
    >>> len(tr), len(te), tuple(te.images.shape[1:])
    (100, 50, (3, 28, 28))
    """
    def get(split, n):
        return load(name, split, root=root, n=n, seed=seed, size=size, cap=True, channels=channels, stream=stream,
                    **opts)

    if one_split_folder(name, root):
        drawn = get("train", n_train + n_test)
        n_test = n_test if len(drawn) == n_train + n_test else max(1, len(drawn) // 5)
        return (drawn.rows(slice(n_test, len(drawn))) if train else None), drawn.rows(slice(0, n_test))
    return (get("train", n_train) if train else None), get("test", n_test)


def check() -> dict:
    """Report (print and return) where Fashion-MNIST is and whether WordNet is ready; never raises.

    Returns ``{"fashion_mnist": {"ok", "train", "test"[, "message"]}, "wordnet": {"ok", "ready", "root",
    "version" | "message"}}``: the folder found per split (None if missing), the missing-data message.

    Example
    -------
    >>> report = check()  # doctest: +SKIP
    fashion_mnist train: /usr/share/datasets/fashion-mnist
    ...
    >>> report["wordnet"]["ok"]  # doctest: +SKIP
    True
    """
    fm: dict = {}
    for split in SPLITS:
        try:
            found = _find_fashion(split, None)
            fm[split] = str(found[0].parent) if found else None
            if found is None:
                fm["message"] = str(_fashion_missing(split, None))
        except Exception as e:  # noqa: BLE001 - a report, not a failure
            fm[split], fm["message"] = None, f"{type(e).__name__}: {e}"
    fm["ok"] = all(fm[s] is not None for s in SPLITS)
    try:
        from . import wordnet

        wn = wordnet.ensure()
        wnr = {"ok": True, "ready": True, "root": str(getattr(wn.root, "path", wn.root)), "version": wn.get_version()}
    except Exception as e:  # noqa: BLE001
        wnr = {"ok": False, "ready": False, "message": f"{type(e).__name__}: {e}"}
    for split in SPLITS:
        print(f"fashion_mnist {split:5s}: {fm[split] or 'MISSING'}")
    if "message" in fm:
        print(fm["message"])
    print(f"wordnet: ready, WordNet {wnr['version']} in {wnr['root']}" if wnr["ready"] else "wordnet: MISSING")
    if not wnr["ready"]:
        print(wnr["message"])
    return {"fashion_mnist": fm, "wordnet": wnr}


def inventory():
    """The datasets ``invlib`` knows and whether each is on this machine: a DataFrame indexed by dataset with
    ``here`` (yes / no / your data), ``classes``, ``boxes``, ``synsets`` and, for a missing one, the first
    sentence of what :func:`load` says about getting it.

    Example
    -------
    >>> inventory().loc["sprites", "here"]
    'yes'
    """
    import pandas as pd

    rows = []
    for name in available():
        row = dict(dataset=name, here="no", classes="—", boxes="—", synsets="—", note="")
        if name == "folder":
            row.update(here="your data", note='data.load("folder", split, root="my/images")')
        else:
            try:
                ds = load(name, "test", n=1)
                row.update(here="yes", classes=len(ds.classes), boxes=ds.boxes is not None,
                           synsets=ds.synsets is not None)
            except FileNotFoundError as err:
                row.update(note=str(err).split(".")[0])
        rows.append(row)
    return pd.DataFrame(rows).set_index("dataset")
