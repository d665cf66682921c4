"""Real data, read from files: Fashion-MNIST (idx files), CIFAR-10 (torchvision's pickles), ImageNet-style folders
with ILSVRC box XML, a user's own image folder, and :func:`write_imagenet_folder`, which writes a generated
ImageNet-style folder for the tests and benchmarks of the paths that real ImageNet takes.

Every loader takes ``(split, root, n, seed, size, cap)`` (the image folders also ``stream``) and its dataset's
options as keyword-only arguments, and returns a :class:`~invlib.data.dataset.Dataset` with ``n`` applied; users
call them through :func:`invlib.data.load`. Missing files raise :class:`~invlib.data.dataset.DataMissingError`
naming the ways to get them.

Example
-------
>>> ds = fashion_mnist("test", None, 8, 0, None)
>>> ds.images.shape, ds.boxes.shape, ds.synsets[0]
(torch.Size([8, 1, 28, 28]), torch.Size([8, 4]), 'jersey.n.03')
"""

from __future__ import annotations

import gzip
import itertools
import pickle
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import torch
from torch import Tensor

from .. import streaming
from ..streaming import ImageFiles
from ..utils import cache_dir, is_online
from .dataset import (
    SPLITS,
    DataMissingError,
    Dataset,
    _cached,
    _data_env,
    _finish,
    _subset_indices,
    colorize,
    foreground_boxes,
)
from .scenes import scenes as make_scenes

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


def fashion_mnist_items(split: str, root=None) -> tuple[Dataset, str]:
    """Fashion-MNIST's items as objects to compose (:func:`invlib.data.scenes.scenes` draws on them): the whole
    split, uncopied, with its foreground boxes, and a name of where they come from for the caches of what is
    made of them. ``(Dataset of (N, 1, 28, 28) uint8, str)``.

    Example
    -------
    >>> items, source = fashion_mnist_items("test")
    >>> len(items), items.boxes.shape
    (10000, torch.Size([10000, 4]))
    """
    images, labels, boxes, folder = _fashion_arrays(split, root)
    return Dataset("fashion_mnist", split, images, labels, list(FASHION_MNIST_CLASSES), list(FASHION_MNIST_SYNSETS),
                   boxes), str(folder)


def fashion_mnist(split, root, n, seed, size, cap: bool = False) -> Dataset:
    """Fashion-MNIST, 1x28x28 grayscale; boxes = tight box of the pixels above 10/255."""
    images, labels, boxes, _ = _fashion_arrays(split, root)
    ds = Dataset(
        "fashion_mnist", split, images, labels, list(FASHION_MNIST_CLASSES), list(FASHION_MNIST_SYNSETS), boxes
    )
    return _finish(ds, n, seed, cap)


def fashion_mnist_color(split, root, n, seed, size, cap: bool = False, *, color_seed: int = 0) -> Dataset:
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
    return _finish(ds, n, seed, cap)


# ---------------------------------------------------------------- CIFAR-10


def _cifar_dirs(root) -> list[Path]:
    env = _data_env("cifar10")
    return ([Path(root)] if root is not None else []) + ([env] if env else []) + [cache_dir("data")]


def cifar10(split, root, n, seed, size, cap: bool = False) -> Dataset:
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
    return _finish(Dataset("cifar10", split, images, labels, classes, synsets), n, seed, cap)
# ---------------------------------------------------------------- image folders (ImageNet-style and user's)


def wnid_to_synset(wnid: str) -> str:
    """WordNet synset name of an ImageNet id (``'n'`` + the 8-digit WordNet 3.0 noun offset).

    Example
    -------
    >>> wnid_to_synset("n02084071")
    'dog.n.01'
    """
    from .. import wordnet

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


def _list_images(folder: Path, flat_class: str | None = None) -> tuple[list[str], list[Path], list[int]]:
    """Sorted class subfolders of ``folder`` and their images, sorted by (class, file name). With ``flat_class``,
    a folder without class subfolders of images but with images of its own is one class of that name."""
    classes = sorted(d.name for d in folder.iterdir() if d.is_dir())
    files, labels = [], []
    for i, c in enumerate(classes):
        imgs = sorted(p for p in (folder / c).iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)
        files += imgs
        labels += [i] * len(imgs)
    if not files and flat_class is not None:
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
        classes, labels = [flat_class], [0] * len(files)
    return classes, files, labels


def _few(names: list[str], k: int = 5) -> str:
    return ", ".join(names[:k]) + (", ..." if len(names) > k else "")


def _no_images(folder: Path, flat: bool) -> DataMissingError:
    """The error of an image folder without images, saying what it holds instead and what is read."""
    others = sorted(p.relative_to(folder).as_posix() for p in itertools.islice(folder.rglob("*"), 10_000)
                    if p.is_file())
    dirs = sorted(d.name for d in folder.iterdir() if d.is_dir())
    held = f"{len(others)} file(s) of other kinds ({_few(others)})" if others else "no files"
    read = f"<folder>/<class>/<image>{' (or <folder>/<image>, as one class)' if flat else ''}"
    return DataMissingError(
        f"No images in {folder}: it holds {held}" + (f" and the folder(s) {_few(dirs)}" if dirs else "")
        + f". Images are read with the extensions {', '.join(IMAGE_EXTENSIONS)} (any case), from {read}.")


def _decode_all(paths: list[Path], size: int) -> tuple[Tensor, list[tuple[int, int]]]:
    """Every image decoded into ``(N, 3, size, size)`` uint8 and its (width, height); one
    :class:`~invlib.streaming.UnreadableImageError` naming every file that cannot be decoded."""
    images = torch.empty((len(paths), 3, size, size), dtype=torch.uint8)
    sizes, bad = [], []
    for k, path in enumerate(paths):
        try:
            images[k], w, h = streaming.decode(path, size)
            sizes.append((w, h))
        except streaming.UnreadableImageError as err:
            bad.append((path, str(err.__cause__ or err)))
            sizes.append(None)
    if bad:
        listed = "; ".join(f"{p} ({why})" for p, why in bad[:10]) + ("; ..." if len(bad) > 10 else "")
        raise streaming.UnreadableImageError(
            f"{len(bad)} of {len(paths)} image files cannot be decoded: {listed}. Remove or replace them (the "
            f"decoders read {', '.join(IMAGE_EXTENSIONS)}).", [p for p, _ in bad])
    return images, sizes


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file, from its header (nothing decoded).

    Example
    -------
    >>> from PIL import Image; import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.png"; Image.new("RGB", (5, 3)).save(path)
    >>> image_size(path)
    (5, 3)
    """
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


def _image_folder(name, folder: Path, split, n, seed, size, cap, stream, max_per_class, boxes_from=None,
                  box_filter=None, flat_class: str | None = None) -> Dataset:
    classes, files, labels = _list_images(folder, flat_class)
    if not files:
        raise _no_images(folder, flat_class is not None)
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
        idx = idx[_subset_indices(len(idx), n, seed, f"{name}/{split} at {folder}", cap)]
    paths = [files[i] for i in idx.tolist()]
    nbytes = len(paths) * 3 * size * size
    if stream is None and nbytes > streaming.memory_cap():
        stream = True
        print(f"note: {folder}: {len(paths)} images take {nbytes / 2**30:.1f} GiB at {size}x{size}, more than the "
              f"memory cap ({streaming.memory_cap() / 2**30:.1f} GiB, $INVLIB_MEMORY_CAP): they stream from disk.")
    sizes: list[tuple[int, int] | None] = [None] * len(paths)
    if stream:  # a file that cannot be decoded raises UnreadableImageError naming it when its batch is read
        images = ImageFiles(paths, size)
    else:
        images, sizes = _decode_all(paths, size)
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
                aw, ah = sizes[k] or image_size(files[i])
            boxes[k] = (torch.tensor(box) * torch.tensor([size / aw, size / ah] * 2)).clamp(0, size)
    return Dataset(name, split, images, torch.tensor(labels, dtype=torch.int64)[idx], classes, None, boxes)


def imagenet(split, root, n, seed, size, cap: bool = False, stream: bool | None = None, *,
             max_per_class: int | None = None, box_filter=None) -> Dataset:
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

    ds = _image_folder("imagenet", folder, split, n, seed, size or 224, cap, stream, max_per_class, xml_paths,
                       box_filter)
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


def folder(split, root, n, seed, size, cap: bool = False, stream: bool | None = None, *,
           synsets: dict[str, str] | None = None, max_per_class: int | None = None) -> Dataset:
    """A user's image folder: ``root/<class>/<image>``, or ``root/<train|test>/<class>/<image>`` when those
    split folders exist (``val`` is accepted for test). Images resized to ``size`` (default 64) square;
    classes sorted; synsets from the option ``synsets={class: 'name.n.01'}`` (all classes), else None.

    Images are the files with the extensions of :data:`IMAGE_EXTENSIONS`. A folder (or split folder) with images
    but no class sub-folders is one class named after ``root``; a folder with one class loads as any other (its
    ``classes`` say so; :func:`invlib.data.too_few_classes` gives the reason a measure that compares classes
    skips it). A folder without images raises :class:`DataMissingError` saying what it holds and what is read; files
    that cannot be decoded raise :class:`invlib.streaming.UnreadableImageError` naming them: all of them when the
    folder is decoded into memory, the first one read when it streams from disk."""
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
    ds = _image_folder("folder", folder, split, n, seed, size or 64, cap, stream, max_per_class,
                       flat_class=root.resolve().name or "images")
    if synsets is not None:
        missing = [c for c in ds.classes if c not in synsets]
        if missing:
            raise ValueError(f"synsets= lacks classes {missing}; it must map every class of {ds.classes}.")
        from .. import wordnet

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

    from .. import wordnet

    lo, hi = sides
    if not 16 <= lo <= hi:
        raise ValueError(f"sides must be (low, high) pixel sides with 16 <= low <= high, got {sides!r}.")
    wn = wordnet.ensure()
    wnids = [f"n{wn.synset(name).offset():08d}" for name in FASHION_MNIST_SYNSETS]
    root = Path(root)
    gen = torch.Generator().manual_seed(seed)
    for split, sub, per_class in (("train", "train", train_per_class), ("test", "val", test_per_class)):
        total = 60_000 if split == "train" else 10_000  # Fashion-MNIST's items, one scene each
        scenes = make_scenes(split, *fashion_mnist_items(split), min(total, 3 * len(wnids) * per_class), seed,
                             scene_size)
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




# ---------------------------------------------------------------- where the real data are


def check(load: bool = True) -> dict:
    """Report (print and return) where Fashion-MNIST is and whether WordNet is ready; never raises.

    ``load=False``: WordNet counts as ready once its NLTK folder is built from the Debian files and complete
    (:func:`invlib.wordnet.build_from_debian`, a check of the files' sizes: no NLTK import, no reading of the
    corpus, about 6 s less); without the Debian files it is loaded as with ``load=True``
    (:func:`invlib.wordnet.ensure`: an installed NLTK corpus, or a download). ``make data`` checks this way; the
    chapters and tests that use WordNet load it.

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
        from .. import wordnet

        built = None if load else wordnet.build_from_debian()
        if built is not None:
            wnr = {"ok": True, "ready": True, "root": str(built), "version": wordnet.DEBIAN_VERSION}
        else:
            wn = wordnet.ensure()
            wnr = {"ok": True, "ready": True, "root": str(getattr(wn.root, "path", wn.root)),
                   "version": wn.get_version()}
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

