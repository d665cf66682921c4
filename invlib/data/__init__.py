"""Datasets by name -> uint8 image tensors, labels, boxes and class -> WordNet synsets.

>>> ds = load("fashion_mnist_color", "test", n=256, size=32)
>>> ds.images.shape, ds.images.dtype, ds.boxes.shape
(torch.Size([256, 3, 32, 32]), torch.uint8, torch.Size([256, 4]))

Registered datasets (:func:`available`); adding one = one loader function + one ``_REGISTRY`` entry. A loader
takes ``(split, root, n, seed, size)``, then ``cap`` if it draws a subset (``n`` more than the data hold: all of
them, with a note) and ``stream`` if it reads an image folder (keep the images on disk), as plain arguments, and
its dataset's options as keyword-only arguments; it returns a :class:`Dataset` with ``n`` applied (image folders
pick the subset before decoding and decode at ``size``); :func:`load` then resizes to ``size``.

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

The package, one job per module: :mod:`~invlib.data.dataset` (the :class:`Dataset` core and what every loader
shares), :mod:`~invlib.data.real` (Fashion-MNIST, CIFAR-10, image folders, :func:`write_imagenet_folder`),
:mod:`~invlib.data.generated` (sprites, sinusoids; the one module above :mod:`invlib.transforms`),
:mod:`~invlib.data.scenes`, :mod:`~invlib.data.lighting`, and here the registry with :func:`load`, which composes
them (scenes are drawn on items it loads). Every name users reach as ``data.X`` is importable from here.

An ``imagenet`` or ``folder`` split larger than :func:`invlib.streaming.memory_cap` (4 GiB, ``$INVLIB_MEMORY_CAP``)
stays on disk: its ``images`` are an :class:`invlib.streaming.ImageFiles`, decoded batch by batch by whatever
reads them (:func:`invlib.streaming.batches`); :func:`write_imagenet_folder` makes such a folder for tests.

Boxes are ``(x0, y0, x1, y1)`` float32 in pixels of the stored images, ``x1``/``y1`` exclusive (pixel edges:
a box covering only pixel (0, 0) is ``(0, 0, 1, 1)``), so resizing scales them exactly.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from ..utils import check_choice
from . import generated, lighting, real, scenes
from .dataset import SPLITS, DataMissingError, Dataset, colorize, foreground_boxes
from .generated import SPRITE_CLASSES, SPRITE_TINTS, sprite_images
from .lighting import (
    LIGHTING_BACKGROUND,
    LIGHTING_CLASSES,
    LIGHTING_CONDITIONS,
    LIGHTING_EXPOSURE,
    LIGHTING_FREE_ITEMS,
    LIGHTING_GROUPS,
    LIGHTING_HUE_PAIRS,
    LIGHTING_HUE_SHARES,
    LIGHTING_SATURATION,
    LIGHTING_SIZE,
    lighting_classes,
)
from .real import (
    CIFAR10_CLASSES,
    CIFAR10_SYNSETS,
    CIFAR10_URL,
    DEBIAN_FASHION_MNIST,
    FASHION_MNIST_CLASSES,
    FASHION_MNIST_FILES,
    FASHION_MNIST_MIRROR,
    FASHION_MNIST_SYNSETS,
    IMAGE_EXTENSIONS,
    check,
    image_size,
    wnid_to_synset,
    write_imagenet_folder,
)
from .scenes import (
    SCENE_BACKGROUND,
    SCENE_CENTER_STD,
    SCENE_DISTRACTOR,
    SCENE_LOG_SIDE_STD,
    SCENE_MEDIAN_SIDE,
    SCENE_SIDE_RANGE,
    SCENE_SIZE,
)

__all__ = [
    "SPLITS", "DataMissingError", "Dataset", "colorize", "foreground_boxes",
    "SPRITE_CLASSES", "SPRITE_TINTS", "sprite_images",
    "LIGHTING_BACKGROUND", "LIGHTING_CLASSES", "LIGHTING_CONDITIONS", "LIGHTING_EXPOSURE", "LIGHTING_FREE_ITEMS",
    "LIGHTING_GROUPS", "LIGHTING_HUE_PAIRS", "LIGHTING_HUE_SHARES", "LIGHTING_SATURATION", "LIGHTING_SIZE",
    "lighting_classes",
    "CIFAR10_CLASSES", "CIFAR10_SYNSETS", "CIFAR10_URL", "DEBIAN_FASHION_MNIST", "FASHION_MNIST_CLASSES",
    "FASHION_MNIST_FILES", "FASHION_MNIST_MIRROR", "FASHION_MNIST_SYNSETS", "IMAGE_EXTENSIONS", "check",
    "image_size", "wnid_to_synset", "write_imagenet_folder",
    "SCENE_BACKGROUND", "SCENE_CENTER_STD", "SCENE_DISTRACTOR", "SCENE_LOG_SIDE_STD", "SCENE_MEDIAN_SIDE",
    "SCENE_SIDE_RANGE", "SCENE_SIZE",
    "available", "option_defaults", "check_options", "load", "one_split_folder", "train_test", "too_few_classes",
    "inventory",
    "dataset", "generated", "lighting", "real", "scenes",
]


# ---------------------------------------------------------------- composed entries


def _scene_items(items: str, split: str, root) -> tuple[Dataset, str]:
    """The objects a scene is made of, as :func:`invlib.data.scenes.scenes` takes them: ``(Dataset of (M, C, h, w)
    uint8 items with foreground boxes, the name of their source)``. Fashion-MNIST by default; any other registered
    dataset of objects on a dark background works (``items="folder", root=...``: a folder with one split gives its
    images to both scene splits)."""
    if items in ("fashion_mnist", "fashion_mnist_color"):
        return real.fashion_mnist_items(split, root)
    if items in ("scenes", "sprites", "sinusoids"):
        raise ValueError(f"scenes are made of object images; items={items!r} is not one. Use 'fashion_mnist' or "
                         "'folder' (with root=) or another dataset of objects on a dark background.")
    src = load(items, "train" if one_split_folder(items, root) else split, root=root, size=28)
    return dataclasses.replace(src, boxes=foreground_boxes(src.images.amax(1, keepdim=True))), f"{items}:{root}"


def _scenes(split, root, n, seed, size, cap: bool = False, *, variation: float = 1.0,
            distractors: float = SCENE_DISTRACTOR["p"], background: float = SCENE_BACKGROUND,
            items: str = "fashion_mnist", scene_seed: int = 0) -> Dataset:
    """``scenes``: the ``items`` (a dataset name, loaded here) drawn by :func:`invlib.data.scenes.scenes`, whose
    docstring describes the set and its options."""
    objects, source = _scene_items(items, split, root)
    return scenes.scenes(split, objects, source, n, seed, size, cap, variation=variation, distractors=distractors,
                         background=background, scene_seed=scene_seed)


# ---------------------------------------------------------------- registry and entry points

_REGISTRY = {
    "fashion_mnist": real.fashion_mnist,
    "fashion_mnist_color": real.fashion_mnist_color,
    "cifar10": real.cifar10,
    "imagenet": real.imagenet,
    "folder": real.folder,
    "sprites": generated.sprites,
    "sinusoids": generated.sinusoids,
    "scenes": _scenes,
    "lighting": lighting.lighting,
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


def _arguments_taken(fn, **arguments) -> dict:
    """The ``arguments`` that loader ``fn`` has parameters for (``cap`` where it draws a subset, ``stream`` where
    it reads an image folder)."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in arguments.items() if k in params}


def load(
    name: str, split: str = "train", root=None, n: int | None = None, seed: int = 0, size: int | None = None,
    cap: bool = False, channels: int | None = None, stream: bool | None = None, **opts
) -> Dataset:
    """Load one split of a registered dataset (see :func:`available`) into memory, or, for an image folder
    (``imagenet``, ``folder``) larger than :func:`invlib.streaming.memory_cap`, as files streamed from disk.

    ``root``: a folder holding the files (else ``$INVLIB_DATA/<dataset>``, system copies, the cache);
    ``n``: keep ``subset(n, seed)`` (more than the split holds is an error, unless ``cap=True``: then the
    whole split, with a printed note; chapters use it so that they run on a small folder of your own);
    ``size``: resize images to ``size x size`` (:meth:`Dataset.resize`) and scale the boxes; ``opts``: the
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
    ds = fn(split, root, n, seed, size, **_arguments_taken(fn, cap=bool(cap), stream=stream), **opts)
    ds = ds.resize(size) if size is not None else ds
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


def too_few_classes(ds: Dataset, need: int = 2) -> str:
    """Why a measure that needs ``need`` classes cannot run on ``ds`` (a sentence naming its classes), or ``""``
    when it has enough: what a chapter prints, or glues, when it skips such a measure on a folder of one class.

    Example
    -------
    >>> import torch
    >>> one = Dataset("folder", "train", torch.zeros(3, 3, 8, 8, dtype=torch.uint8), torch.zeros(3).long(), ["cats"])
    >>> too_few_classes(one)
    "not measured: the images have 1 class ('cats'), and this measure compares at least 2."
    >>> too_few_classes(one, need=1)
    ''
    """
    k = len(ds.classes)
    if k >= need:
        return ""
    named = ", ".join(repr(c) for c in ds.classes[:5]) + (", ..." if k > 5 else "")
    return (f"not measured: the images have {k} class{'es' if k != 1 else ''} ({named}), and this measure compares "
            f"at least {need}.")


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
