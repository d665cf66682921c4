"""The model zoo: families of trained models, each described by a :class:`Spec` and cached on disk by its hash.

A :class:`Spec` says everything that changes the trained weights: architecture, dataset (and ``root`` for data
of your own), a named training augmentation with its parameters, seed, sizes, epochs, batch size and the
optimiser recipe. :func:`get` trains a spec on first use and loads it afterwards; :func:`train_many` trains a
family, in this process or as one job per spec through a `submitit <https://github.com/facebookincubator/submitit>`_
executor (SLURM, or local processes). A checkpoint is keyed by the SHA-256 of the spec (and of the
augmentation's full parameters), written atomically; a corrupt file is retrained with a warning; an
interrupted training resumes from its per-epoch checkpoint (a requeued SLURM job too).

Named entries, ``"<model>/<variant>"`` (:func:`available`), build a spec from a profile (:func:`spec`):
``<variant>`` is ``untrained`` (the seeded initialisation, 0 epochs) or the name of a training augmentation
(:data:`AUGMENTATIONS`: ``none``; ``standard`` = RandomResizedCrop + horizontal flip). The book trains only
the entries its chapters use (:data:`BOOK`); chapter 00 trains those that several chapters share (:data:`SHARED`),
the others are trained by the chapter that first needs them. Every other combination stays available.

Example
-------
>>> s = spec("small_resnet18/standard", "cpu")
>>> s.arch, s.augment, s.epochs, s.name
('small_resnet18', 'standard', 3, 'small_resnet18/standard')
>>> family = [s.replace(seed=k) for k in range(3)]   # one architecture, three seeds
>>> len({path(f) for f in family})
3
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import re
import time
import typing
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from . import crops, models, transform_types, transforms
from . import data as datasets
from .models import CheckpointError
from .profiles import Profile, get_profile, replace_checked
from .train import OPTIMIZERS, SCHEDULES, TrainConfig, evaluate, fit, world_rank
from .utils import allocator_env, atomic_save, cache_dir, check_choice, check_type, resolve_device, seeded
from .utils import progress as progress_bar

ZOO_VERSION = 4  # 3: n_test left the key (it never changed the weights); 4: every seed trains on one training set
# The draw of a spec's training and test images, the same for every seed: a seed is the initialisation, the order and
# the augmentation's draws, as in the papers (one ImageNet for every seed), and every seed is scored on the same
# test images (which, for a folder without split sub-folders, none of them trained on).
DATA_SEED = 0

# ----------------------------------------------------------------------------- training augmentations
AUGMENTATIONS: dict[str, Callable] = {
    "none": lambda: None,
    "standard": crops.standard,  # RandomResizedCrop (scale, ratio) + horizontal flip (flip_p)
    # paper B's crop family (invlib.crops.METHODS): each method with its parameters (size, scale, ratio, ...)
    **{method: functools.partial(crops.Crop, method) for method in crops.METHODS},
    # paper C's nine transformation types (invlib.transform_types): tm_rotation(magnitude=20.0), ...
    **transform_types.AUGMENTATIONS,
}


@dataclass(frozen=True)
class Chain:
    """Augmentations applied in turn, each ``step(x, generator)`` with the same generator."""

    steps: tuple

    def __call__(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        for step in self.steps:
            x = step(x, generator)
        return x


def random_op(op: str = "rotate", low: float = 0.0, high: float = 0.0, size: int | None = None) -> Chain:
    """One op of :mod:`invlib.transforms` with a per-image magnitude in ``[low, high]``
    (:class:`invlib.transforms.RandomOp`), then, with ``size``, the fixed central crop of that side (paper B's
    evaluation crop, so that the model sees what a ``fixed_size_center_crop`` model sees, transformed).

    Example
    -------
    >>> aug = augmentation("random_op", op="brightness", low=0.5, high=2.0, size=56)
    >>> aug(torch.rand(2, 3, 64, 64), torch.Generator().manual_seed(0)).shape
    torch.Size([2, 3, 56, 56])
    """
    centre = (crops.Crop("fixed_size_center_crop", size=size),) if size else ()
    return Chain((transforms.RandomOp(op, float(low), float(high)), *centre))


def register_augmentation(name: str, factory: Callable) -> Callable:
    """Make ``factory(**params) -> augment`` available to specs as ``Spec(augment=name, augment_params=...)``.

    ``augment(x (B, C, H, W) float, generator) -> (B, C, H, W)`` is what :func:`invlib.train.fit` applies to each
    batch; the factory's keyword arguments are the augmentation's parameters (they enter the cache key).

    Example
    -------
    >>> from invlib.crops import Crop
    >>> _ = register_augmentation("crop_only", lambda scale=(0.08, 1.0): Crop("rrc", scale=scale))
    >>> Spec(augment="crop_only", augment_params={"scale": (0.5, 1.0)}).name
    'small_resnet18/crop_only'
    >>> del AUGMENTATIONS["crop_only"]
    """
    if not callable(factory):
        raise TypeError(f"register_augmentation({name!r}, ...) needs a callable factory, got {factory!r}.")
    AUGMENTATIONS[name] = factory
    return factory


register_augmentation("random_op", random_op)


def augmentation(name: str, **params):
    """The training augmentation ``name`` built with ``params`` (``None`` for ``"none"``).

    Example
    -------
    >>> augmentation("standard", flip_p=0.0)
    Crop('rrc', size=None, scale=(0.35, 1.0), ratio=(0.75, 1.3333333333333333))
    >>> augmentation("translate", size=28)
    Crop('translate', size=28, translate=0.3)
    >>> augmentation("flip")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown augmentation 'flip'. Valid augmentations: fixed_size_center_crop, ...
    """
    arguments = augmentation_arguments(name, **params)
    return AUGMENTATIONS[name](**arguments)


def augmentation_arguments(name: str, **params) -> dict:
    """Every parameter of augmentation ``name``, defaults included: what enters the cache key.

    Example
    -------
    >>> augmentation_arguments("standard", flip_p=0.0)
    {'scale': (0.35, 1.0), 'ratio': (0.75, 1.3333333333333333), 'flip_p': 0.0, 'size': None}
    """
    factory = AUGMENTATIONS[check_choice(name, AUGMENTATIONS, "augmentation")]
    signature = inspect.signature(factory)
    try:
        bound = signature.bind(**params)
    except TypeError:
        valid = ", ".join(signature.parameters) or "none"
        raise TypeError(f"Augmentation {name!r} takes the parameters ({valid}); got {sorted(params)}.") from None
    bound.apply_defaults()
    return dict(bound.arguments)


# ----------------------------------------------------------------------------- specs
def _frozen(value):
    """Lists (from JSON or papermill) as tuples, recursively, so a spec stays hashable."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Spec:
    """One zoo model: everything that changes its trained weights (``device`` only says where to train).

    ``epochs=0`` is the seeded, untrained initialisation (then the training fields do not enter the cache key).
    ``augment_params`` may be given as a dict; it is kept as sorted ``(name, value)`` pairs. ``n_train`` and
    ``n_test`` are capped at what the data hold; a ``folder`` dataset without ``test/`` (or ``val/``) sub-folder
    holds out up to ``n_test`` of its images (at most a fifth) for testing. Every seed draws the same training and
    test images (:data:`DATA_SEED`): ``seed`` sets the initialisation, the order and the augmentation's draws.

    Example
    -------
    >>> s = Spec("small_resnet18", augment="standard", augment_params={"scale": [0.2, 1.0]}, epochs=2)
    >>> s.name, s.augment_params
    ('small_resnet18/standard', (('scale', (0.2, 1.0)),))
    >>> Spec(augment="flip")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown augmentation 'flip'. Valid augmentations: fixed_size_center_crop, ...
    """

    arch: str = "small_resnet18"
    dataset: str = "fashion_mnist_color"
    root: str | None = None
    augment: str = "none"
    augment_params: tuple | dict = ()
    seed: int = 0
    n_train: int = 12_000
    n_test: int = 10_000
    img_size: int = 28
    epochs: int = 4
    batch_size: int = 128
    optimizer: str = "sgd"
    lr: float = 0.1
    weight_decay: float = 5e-4
    warmup_epochs: float = 0.0
    schedule: str = "cosine"  # or "step": lr x gamma 0.1 every step_size epochs (the paper B recipe)
    step_size: int = 30
    data_options: tuple | dict = ()  # the dataset's options (invlib.data.load), e.g. {"variation": 0.5} for scenes
    device: str = field(default="auto", compare=False)  # "auto": CUDA when there is one (on the job's node)
    precision: str = "auto"  # "float32" | "bf16" (autocast on the CPU) | "auto": resolve_precision's choice

    def __post_init__(self):
        params = self.augment_params
        params = sorted(params.items()) if isinstance(params, dict) else params
        set_ = lambda k, v: object.__setattr__(self, k, v)
        set_("augment_params", tuple((str(k), _frozen(v)) for k, v in _frozen(params)))
        opts = self.data_options
        opts = sorted(opts.items()) if isinstance(opts, dict) else opts
        set_("data_options", tuple((str(k), _frozen(v)) for k, v in _frozen(opts)))
        hints = typing.get_type_hints(Spec)
        for f in dataclasses.fields(self):
            if f.name not in ("augment_params", "data_options"):
                set_(f.name, check_type(f"zoo spec field {f.name!r}", getattr(self, f.name), hints[f.name]))
        if self.root is not None:
            set_("root", str(Path(self.root).expanduser().resolve()))
        check_choice(self.dataset, datasets.available(), "dataset")
        datasets.check_options(self.dataset, dict(self.data_options))
        # an option at the loader's default is no option: {"variation": 1.0} on scenes is the plain scenes spec
        defaults = datasets.option_defaults(self.dataset)
        set_("data_options", tuple((k, v) for k, v in self.data_options if k not in defaults or v != defaults[k]))
        check_choice(self.optimizer, OPTIMIZERS, "optimizer")
        check_choice(self.schedule, SCHEDULES, "schedule")
        set_("precision", resolve_precision(self.arch, self.device, self.precision))
        augmentation(self.augment, **dict(self.augment_params))  # a known name, parameters it takes, valid values
        small = [k for k in ("n_train", "n_test", "img_size", "batch_size") if getattr(self, k) < 1]
        if small or self.epochs < 0 or self.lr <= 0:
            raise ValueError(f"Spec {self.name}: {', '.join(small) or 'epochs/lr'} out of range; sizes, batch_size "
                             f"and lr must be positive, epochs >= 0 (0 = untrained).")

    @property
    def name(self) -> str:
        """``"<arch>/<variant>"``: the variant is ``untrained`` for 0 epochs, else the augmentation's name."""
        return f"{self.arch}/{'untrained' if self.epochs == 0 else self.augment}"

    def replace(self, **changes) -> Spec:
        """A copy with some fields changed (names and types checked).

        Example
        -------
        >>> Spec().replace(seed=3).seed
        3
        """
        return replace_checked(self, changes, "zoo spec field")

    def key(self) -> dict:
        """What the cache key hashes: the spec without ``device`` (and without its training fields when it is
        untrained), the augmentation's parameters with their defaults, and the zoo version.

        Example
        -------
        >>> Spec(augment="standard").key()["augment_params"]["flip_p"]
        0.5
        """
        fields = {k: v for k, v in asdict(self).items() if k != "device"}
        for k in _LATER_FIELDS:  # added after ZOO_VERSION 2: at their defaults, keys are unchanged
            if fields[k] == Spec.__dataclass_fields__[k].default:
                fields.pop(k)
        if fields.get("precision") == "float32":  # float32, the precision of every key before it: no field
            fields.pop("precision")
        if self.dataset != "folder":  # a folder without split sub-folders holds its test images out of training
            fields.pop("n_test")  # elsewhere it says where a model is scored, not what it learns (ZOO_VERSION 3)
        if self.epochs == 0:
            for k in ("augment", "augment_params", "n_train", "epochs", "batch_size", "optimizer", "lr",
                      "weight_decay", "warmup_epochs", "schedule", "step_size", "precision"):
                fields.pop(k, None)
        else:
            fields["augment_params"] = augmentation_arguments(self.augment, **dict(self.augment_params))
        return dict(fields, zoo_version=ZOO_VERSION)

    def train_config(self) -> TrainConfig:
        """The :class:`invlib.train.TrainConfig` that :func:`get` trains this spec with."""
        return TrainConfig(epochs=max(self.epochs, 1), batch_size=self.batch_size, optimizer=self.optimizer,
                           lr=self.lr, weight_decay=self.weight_decay, warmup_epochs=self.warmup_epochs,
                           schedule=self.schedule, step_size=self.step_size, seed=self.seed, device=self.device,
                           cpu_bf16=self.precision == "bf16")


_LATER_FIELDS = ("schedule", "step_size", "data_options", "precision")
PRECISIONS = ("auto", "float32", "bf16")
# The architectures whose CPU training step bf16 autocast speeds up (benchmarks/measurements/foundation.md: the
# ResNets and conv4 1.6-2.8x on a CPU with AVX512-BF16); the ViTs run slower under it (0.6x) and stay float32.
BF16_ARCHS = ("small_resnet18", "small_resnet50", "small_resnet18_s4", "small_resnet18_s2", "small_resnet50_s2")


def resolve_precision(arch: str, device: str = "auto", precision: str = "auto") -> str:
    """The precision a spec trains in, as its cache key records it: ``precision`` when it is not ``"auto"``; for
    ``"auto"``, ``$INVLIB_PRECISION`` (default ``auto``): ``"bf16"`` (autocast) for an architecture of
    :data:`BF16_ARCHS` trained on a CPU that computes bf16 natively (:func:`invlib.train.cpu_has_bf16`),
    ``"float32"`` otherwise (a GPU autocasts to bf16 anyway, :attr:`TrainConfig.amp`; a CPU without bf16
    instructions emulates it 6-16x slower). ``INVLIB_PRECISION=float32`` trains every model in float32. A checkpoint
    trained in one precision is never loaded for the other.

    bf16 trains these networks 1.6-2.8x faster here (benchmarks/measurements/foundation.md, which also compares
    the book's claims under the two precisions at the same seeds).

    Example
    -------
    >>> resolve_precision("small_vit"), resolve_precision("small_resnet18", precision="float32")
    ('float32', 'float32')
    """
    check_choice(precision, PRECISIONS, "precision")
    if precision == "auto":
        precision = os.environ.get("INVLIB_PRECISION", "auto") or "auto"
        check_choice(precision, PRECISIONS, "$INVLIB_PRECISION")
    if precision != "auto":
        return precision
    from .train import cpu_has_bf16

    on_cpu = device == "cpu" or device == "auto" and not torch.cuda.is_available()
    return "bf16" if arch in BF16_ARCHS and on_cpu and cpu_has_bf16() else "float32"


def cpu_bf16(arch: str, device: str = "auto") -> bool:
    """Whether a model of ``arch`` trained on ``device`` trains under bf16 autocast on the CPU: the
    :attr:`invlib.train.TrainConfig.cpu_bf16` of a chapter's own training (:func:`resolve_precision`'s choice, so
    the zoo's models and a chapter's own follow one rule and ``$INVLIB_PRECISION``).

    Example
    -------
    >>> cpu_bf16("small_vit")
    False
    """
    return resolve_precision(arch, device) == "bf16"


# Per-architecture recipe of the named entries; the profile sets data, sizes, epochs, batch and device. The ViT
# is ~2x faster per image but learns more slowly from 28 px images, so it gets twice the epochs at half the
# batch, AdamW and a warm-up (at the ResNet's epochs and batch it underfits: benchmarks/measurements/foundation.md).
ARCHS = {
    "small_resnet18": dict(optimizer="sgd", lr=0.1, weight_decay=5e-4),
    "small_resnet50": dict(optimizer="sgd", lr=0.1, weight_decay=5e-4),
    "small_vit": dict(optimizer="adamw", lr=1e-3, weight_decay=0.05, warmup_epochs=0.5, epochs=2.0, batch=0.5),
}
# the same recipes for the architectures built for 48-64 px scenes (paper B's models on ``scenes``)
ARCHS.update(small_resnet18_s4=ARCHS["small_resnet18"], small_resnet18_s2=ARCHS["small_resnet18"],
             small_resnet50_s2=ARCHS["small_resnet50"], small_vit_p14=ARCHS["small_vit"],
             small_vit_p14_cls=ARCHS["small_vit"])
# The entries chapters use on the profile's data (chapter 00, paper A's probes): what `python -m invlib zoo train`
# trains. Paper B's models at smoke and cpu are the same recipes on 56 px scenes (small_resnet18_s4, small_vit_p14
# under chapter_profile with paper B's zoo_data), trained by chapter B3 on first use; with
# -p dataset=fashion_mnist_color B3 loads the 28 px entries (small_resnet18/*, small_vit/*) instead.
BOOK = ("small_resnet18/untrained", "small_resnet18/none", "small_resnet18/standard",
        "small_resnet50_s2/standard")
# The entries that several chapters use (chapter 00's own table and A2; the standard one is also A1's backbone).
# ``make book`` trains every entry a chapter loads in its training phase (invlib.papers.CHAPTERS); A1's ResNet-50
# has a stride-2 stem at 28 px (small_resnet50_s2: about 2.6x cheaper to train than the stride-1 net; the gate run
# is in benchmarks/measurements/a.md).
SHARED = ("small_resnet18/untrained", "small_resnet18/none", "small_resnet18/standard")


def available() -> list[str]:
    """Named entries, ``"<model>/<variant>"``, for every recipe of :data:`ARCHS` and every variant.

    Example
    -------
    >>> "small_vit/standard" in available() and set(BOOK) <= set(available())
    True
    """
    return [f"{arch}/{v}" for arch in ARCHS for v in ("untrained", *AUGMENTATIONS)]


def chapter_profile(S) -> Profile:
    """The profile a chapter's ``zoo:`` models are trained under: ``S.profile`` with the changes ``S.zoo_data``
    (settings that name zoo models carry both fields; paper B's and paper D5's do).

    Example
    -------
    >>> from types import SimpleNamespace
    >>> p = chapter_profile(SimpleNamespace(profile="cpu", zoo_data={"dataset": "scenes", "img_size": 56}))
    >>> p.dataset, p.img_size
    ('scenes', 56)
    """
    return get_profile(S.profile).replace(**S.zoo_data)


def image_side(S, size: int | None = None) -> int:
    """The side a chapter loads its images at: ``size`` when given (the chapter's own setting), else the side its
    ``zoo:`` models are built and trained for (:func:`chapter_profile`'s ``img_size``), so a folder of your own or
    another dataset reaches them at the size they were trained at.

    Example
    -------
    >>> from types import SimpleNamespace
    >>> S = SimpleNamespace(profile="cpu", zoo_data={"img_size": 56})
    >>> image_side(S), image_side(S, 64)
    (56, 64)
    """
    return size or chapter_profile(S).img_size


def spec(name: str, profile: str | Profile = "cpu", root: str | os.PathLike | None = None, **changes) -> Spec:
    """The :class:`Spec` of a named entry under a profile (its dataset, sizes, epochs, batch and device), with
    ``root`` for a dataset of your own and any other field changed by ``changes``.

    Example
    -------
    >>> spec("small_vit/none", "smoke").optimizer
    'adamw'
    >>> spec("small_resnet18/untrained", "smoke", seed=1).epochs
    0
    """
    check_choice(name, available(), "zoo entry")
    prof = get_profile(profile)
    arch, variant = name.split("/")
    recipe = dict(ARCHS[arch])
    epochs_factor, batch_factor = recipe.pop("epochs", 1), recipe.pop("batch", 1)
    epochs = 0 if variant == "untrained" else int(prof.epochs * epochs_factor)
    batch = int(prof.batch_size * batch_factor)
    base = Spec(arch, prof.dataset, None if root is None else str(root), "none" if variant == "untrained" else variant,
                (), 0, prof.n_train, prof.n_test, prof.img_size, epochs, batch, device=prof.device, **recipe)
    return base.replace(**changes) if changes else base


def _as_spec(entry: Spec | str, profile, root) -> Spec:
    if isinstance(entry, Spec):
        if root is not None:
            raise ValueError("root= goes into the Spec itself (Spec(..., root=...)), not into get().")
        return entry
    if not isinstance(entry, str):
        raise TypeError(f"A zoo entry is a Spec or a name such as 'small_resnet18/standard', got {entry!r}.")
    return spec(entry, "cpu" if profile is None else profile, root)


def path(entry: Spec | str, profile: str | Profile | None = None, root=None) -> Path:
    """Where a spec's checkpoint lives: ``<cache>/zoo/<arch>-<variant>-<dataset>-<hash12>.pt``.

    Example
    -------
    >>> path(Spec(seed=1)) == path(Spec(seed=1)) != path(Spec(seed=2))
    True
    >>> path("small_resnet18/none", "smoke").name  # doctest: +ELLIPSIS
    'small_resnet18-none-fashion_mnist_color-....pt'
    """
    s = _as_spec(entry, profile, root)
    digest = hashlib.sha256(json.dumps(s.key(), sort_keys=True).encode()).hexdigest()[:12]
    return cache_dir("zoo") / f"{s.name.replace('/', '-')}-{s.dataset}-{digest}.pt"


# ----------------------------------------------------------------------------- data
def splits(entry: Spec | str, profile: str | Profile | None = None, root=None, train: bool = True):
    """``(train, test)`` datasets of a spec (``train`` None when ``train=False``), capped at what the data hold.

    A ``folder`` dataset without split sub-folders is divided by :func:`invlib.data.train_test`, the one rule
    every chapter uses.

    Example
    -------
    >>> tr, te = splits(Spec(n_train=100, n_test=50))
    >>> len(tr), len(te), tuple(te.images.shape[1:])
    (100, 50, (3, 28, 28))
    """
    s = _as_spec(entry, profile, root)
    return _splits(s.dataset, s.root, DATA_SEED, s.n_train, s.n_test, s.img_size, train, s.data_options)


@functools.lru_cache(maxsize=2)  # the entries of a family share their data: load (decode a folder) once
def _splits(dataset, root, seed, n_train, n_test, img_size, train, options=()):
    return datasets.train_test(dataset, root, n_train, n_test, seed=seed, size=img_size, train=train,
                               **dict(options))


class ZooPhaseWarning(UserWarning):
    """A chapter of a book build trained a zoo model that the runner's training phase did not list."""


# ----------------------------------------------------------------------------- train or load one spec
def train_seconds(model) -> float:
    """The seconds the zoo's training of ``model`` took, as its checkpoint recorded them (``model.zoo_info["seconds"]``,
    measured when it was trained; a warm load reads the cold run's); 0 for a model the zoo did not train. What one
    replicate of a zoo family costs (:meth:`invlib.results.Run.replicates`).

    Example
    -------
    >>> m = torch.nn.Linear(1, 1); m.zoo_info = {"seconds": 12.5}
    >>> train_seconds(m), train_seconds(torch.nn.Linear(1, 1))
    (12.5, 0.0)
    """
    return float(getattr(model, "zoo_info", {}).get("seconds", 0.0))


def get(entry: Spec | str, profile: str | Profile | None = None, progress: bool | None = None,
        retrain: bool = False, root: str | os.PathLike | None = None) -> nn.Module:
    """A zoo model in eval mode on its spec's device, trained on first use and loaded from the cache afterwards.

    ``model.zoo_info`` holds ``{"name", "spec", "history", "seconds" (of training), "n_train" (after capping),
    "path", "profile"}``; :func:`test_accuracy` scores it.

    Args:
        entry: a :class:`Spec`, or a named entry of :func:`available` (then ``profile`` and ``root`` build its
            spec with :func:`spec`; default profile ``"cpu"``).
        progress: progress bars while training (default: the profile's setting; ``INVLIB_PROGRESS=0`` hides them).
        retrain: ignore a cached checkpoint.

    Raises:
        FileNotFoundError: the spec's dataset is missing (the message says how to get it).

    Example
    -------
    >>> m = get(Spec(epochs=0))                         # untrained: the seeded initialisation, then cached
    >>> m.zoo_info["name"], m.zoo_info["n_train"]
    ('small_resnet18/untrained', 0)
    >>> m = get("small_resnet18/standard", "cpu")       # doctest: +SKIP
    """
    s = _as_spec(entry, profile, root)
    progress = get_profile(profile or "cpu").progress if progress is None else progress
    file = path(s)
    found = None if retrain else _load(s, file)
    if not found:
        with _lock(file):  # two chapters (or jobs) asking for the same model: one trains, the other then loads
            found = None if retrain else _load(s, file)
            model, meta = found if found else _train(s, file, progress)
    else:
        model, meta = found
    model.zoo_info = dict(meta, name=s.name, path=str(file), profile=profile and get_profile(profile).name)
    if s.device not in (None, "auto") and torch.device(s.device).type == "cuda" and not torch.cuda.is_available():
        return model.eval()  # trained on a GPU elsewhere, loaded on a SLURM login node: stays on the CPU
    return model.to(resolve_device(s.device)).eval()


@contextlib.contextmanager
def _lock(file: Path):
    """Hold an exclusive lock on ``<checkpoint>.lock`` while a model is trained, so processes that need the same
    model at once (the book's chapters run side by side, local jobs) train it once; a no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    if world_rank()[1] > 1:  # torchrun: the ranks train together, in step; a lock held by
        yield  # one rank would leave the others waiting for it inside DDP's first collective
        return
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_suffix(".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(s: Spec, num_classes: int, in_chans: int) -> nn.Module:
    model = models.create(s.arch, num_classes=num_classes, in_chans=in_chans, img_size=s.img_size, seed=s.seed)
    # measured in the precision the spec trains in (its untrained seeds too: paired with the trained ones)
    return models.mark_precision(model, "bf16" if s.precision == "bf16" else "float32")


def _load(s: Spec, file: Path) -> tuple[nn.Module, dict] | None:
    if not file.exists():
        return None
    try:
        state = models.read_checkpoint(file)
        meta = state["meta"]
        model = _build(s, meta["num_classes"], meta["in_chans"])
        model.load_state_dict(state["model"])
        return model, meta
    except Exception as err:  # corrupt or stale: retrain rather than fail a book build
        warnings.warn(f"Zoo checkpoint {file} is unreadable ({err.__class__.__name__}: {err}); retraining.",
                      stacklevel=3)
        file.unlink(missing_ok=True)
        return None


PHASE_ENV = "INVLIB_ZOO_PHASE"  # set by the book runner after its training phase: chapters only load models


def _train(s: Spec, file: Path, progress: bool) -> tuple[nn.Module, dict]:
    if os.environ.get(PHASE_ENV) and s.epochs > 0:
        warnings.warn(f"chapter {os.environ.get('INVLIB_CHAPTER', '?')} trains zoo model {s.name} (seed {s.seed}) that "
                      f"the book's training phase did not: its zoo specs function (invlib.papers.CHAPTERS) misses "
                      f"it", ZooPhaseWarning, stacklevel=3)
    t0 = time.perf_counter()
    # the test split only for the class count (a folder's held-out images change its training part: all of them)
    train, test = splits(s if s.dataset == "folder" else s.replace(n_test=min(s.n_test, 8)), train=s.epochs > 0)
    shape = dict(num_classes=len(test.classes), in_chans=test.images.shape[1])
    model, history = _build(s, **shape), []
    if s.epochs > 0:
        augment = augmentation(s.augment, **dict(s.augment_params))
        partial = file.with_suffix(".partial")
        run = lambda: fit(model, train, s.train_config(), augment=augment, checkpoint=partial, progress=progress)
        try:
            history = run()
        except CheckpointError:
            warnings.warn(f"Partial checkpoint {partial} is corrupt; training {s.name} from scratch.", stacklevel=3)
            partial.unlink()
            model.load_state_dict(_build(s, **shape).state_dict())
            history = run()
        partial.unlink(missing_ok=True)
    meta = dict(spec=asdict(s), history=history, seconds=time.perf_counter() - t0,
                n_train=len(train) if train else 0, **shape)
    rank, world = world_rank()
    if rank == 0:  # under torchrun every rank holds the same weights: one writes them
        atomic_save(dict(model={k: v.cpu() for k, v in model.state_dict().items()}, meta=meta), file)
    if world > 1:
        torch.distributed.barrier()
    return model, meta


SCORE_N = 2000  # test images :func:`test_accuracy` scores a model on by default (its standard error <= 1.1 points)


def test_accuracy(entry: Spec | str, n_test: int = SCORE_N, profile: str | Profile | None = None, root=None,
                  model: nn.Module | None = None) -> float:
    """Top-1 accuracy of a zoo model on the first ``min(n_test, spec.n_test)`` images of its test split (in [0, 1]).

    The zoo does not score a model when it trains it (no chapter but 00 reads that number); this scores it once
    per ``n_test`` and keeps the result beside the checkpoint (``<checkpoint>.scores.json``). ``model``: the
    spec's model when the caller holds it already (else :func:`get` loads or trains it).

    Example
    -------
    >>> test_accuracy(Spec(epochs=0, n_test=200), n_test=100) < 0.3
    True
    """
    s = _as_spec(entry, profile, root)
    n = min(n_test, s.n_test)
    file = path(s).with_suffix(".scores.json")
    scores = json.loads(file.read_text()) if file.exists() else {}
    if str(n) not in scores:
        model = model if model is not None else get(s, progress=False)
        scores[str(n)] = evaluate(model, splits(s.replace(n_test=n), train=False)[1])["acc"]
        atomic_save(json.dumps(scores), file)
    return float(scores[str(n)])


# ----------------------------------------------------------------------------- families
class _TrainJob:
    """What a submitit job runs: train one spec into the cache. A job that times out or is pre-empted is
    requeued (submitit calls ``checkpoint``) and resumes from the spec's per-epoch checkpoint."""

    def __init__(self, cache: str):
        self.cache = cache

    def __call__(self, s: Spec) -> float:
        """Train (or load) ``s``; its seconds of training."""
        os.environ["INVLIB_CACHE"] = self.cache  # the submitting process's cache, whatever the job's env
        return get(s, progress=False).zoo_info["seconds"]

    def checkpoint(self, s: Spec):
        import submitit

        return submitit.helpers.DelayedSubmission(self, s)


def _check_runnable(s: Spec) -> None:
    """Fail in the submitting process, not in a job: the data exist and the architecture is known."""
    datasets.load(s.dataset, "train", root=s.root, n=1, seed=s.seed, cap=True)
    with torch.device("meta"):
        models.create(s.arch, img_size=s.img_size)


def train_many(specs: Iterable[Spec | str], executor=None, progress: bool = True,
               profile: str | Profile | None = None) -> list[nn.Module]:
    """Train (or load) every spec of a family; return the models in the order given.

    Without ``executor`` the specs train one after another in this process. With a submitit executor
    (``submitit.AutoExecutor(folder, cluster="slurm")``, ``submitit.LocalExecutor(folder)``; see
    :func:`executor`) every spec that is not cached yet becomes one job (a job array on SLURM); this waits for
    them, raises if one failed (naming its log), then loads each model from the cache. Data and architecture
    are checked before anything is submitted. Names (``"small_resnet18/none"``) are built with ``profile``.

    Example
    -------
    >>> import submitit
    >>> family = [Spec(augment="standard", seed=k, n_train=512, epochs=2) for k in range(5)]
    >>> models_ = train_many(family, submitit.AutoExecutor("slurm_logs", cluster="slurm"))  # doctest: +SKIP
    >>> [m.zoo_info["name"] for m in train_many([Spec(epochs=0)], progress=False)]
    ['small_resnet18/untrained']
    """
    specs = [_as_spec(e, profile, None) for e in specs]
    if executor is not None:
        todo = list({path(s): s for s in specs if not path(s).exists()}.values())
        for s in todo:
            _check_runnable(s)
        if todo:
            jobs = executor.map_array(_TrainJob(str(cache_dir())), todo)
            for s, job in progress_bar(list(zip(todo, jobs)), progress, "zoo jobs", leave=True):
                try:
                    job.result()
                except Exception as err:
                    raise RuntimeError(f"The zoo job for {s.name} (seed {s.seed}) failed: {err.__class__.__name__}; "
                                       f"its log: {job.paths.stderr}") from err
    bar = progress_bar(specs, progress and executor is None and len(specs) > 1, "zoo", leave=True)
    return [get(s, progress=progress and executor is None, profile=profile) for s in bar]


@dataclass(frozen=True)
class Recipe:
    """The training recipe a paper's family of zoo models shares, with the run's profile, device, progress and
    executor: the base of every paper's settings that trains a family (paper B's crop family, paper C's nine
    types). A paper's ``Settings`` subclasses it, restating only the defaults its paper fixes, so the recipe's
    fields, their checks and the way a :class:`Spec` is made from them are written once.

    Attributes
    ----------
    profile:          the profile's name (filled in by :func:`invlib.profiles.settings`)
    dataset, root:    the training data (a name of :func:`invlib.data.available`) and its folder
    arch:             any :func:`invlib.models.create` name
    size:             the side the models see, in pixels
    n_train:          training images per model
    epochs, batch_size, optimizer, lr, weight_decay, schedule: the training recipe (optimizer: one of
                      :data:`invlib.train.OPTIMIZERS`; schedule "cosine", or "step": /10 every 30 epochs)
    executor:         None or "none" (train here), "local" or "slurm": one zoo job per model (:func:`executor`)
    device, progress: filled from the profile (``-p device=cuda`` overrides)
    data_options:     the dataset's options as ``(name, value)`` pairs (``(("variation", 0.5),)`` for scenes)

    Executor, optimizer and schedule names are checked when the recipe is made (an unknown one lists the valid
    ones); the rest when a spec is made from it (:meth:`spec`).

    Example
    -------
    >>> r = Recipe(dataset="fashion_mnist_color", arch="small_resnet18", size=28, n_train=512, epochs=1)
    >>> s = r.spec("tm_rotation", {"magnitude": 20.0}, seed=1, n_test=100)
    >>> s.name, s.img_size, s.epochs, dict(s.augment_params)
    ('small_resnet18/tm_rotation', 28, 1, {'magnitude': 20.0})
    >>> Recipe(executor="slrum")
    Traceback (most recent call last):
    ValueError: Unknown executor 'slrum'. Did you mean 'slurm'? Valid executors: local, none, slurm.
    """

    profile: str = "paper"
    dataset: str = "imagenet"
    root: str | None = None
    arch: str = "tv/resnet18"
    size: int = 224
    n_train: int = 1_281_167
    epochs: int = 90
    batch_size: int = 256
    optimizer: str = "sgd"
    lr: float = 0.01
    weight_decay: float = 5e-4
    schedule: str = "step"
    executor: str | None = None
    device: str = "auto"
    progress: bool = True
    data_options: tuple = ()

    def __post_init__(self):
        check_choice("none" if self.executor is None else self.executor, ("none", "local", "slurm"), "executor")
        check_choice(self.optimizer, OPTIMIZERS, "optimizer")
        check_choice(self.schedule, SCHEDULES, "schedule")

    def spec(self, augment: str, params: dict, seed: int, n_test: int, img_size: int | None = None) -> Spec:
        """The zoo spec of one model: this recipe trained with the augmentation ``augment(**params)`` (a name of
        :data:`AUGMENTATIONS`) from ``seed``, evaluated by the zoo on ``n_test`` test images, its images stored at
        ``img_size`` pixels (default ``size``). The one place a paper's recipe becomes a :class:`Spec`: the same
        recipe, augmentation and seed give the same cache key (:func:`path`), so trained models are reused.

        Example
        -------
        >>> r = Recipe(dataset="fashion_mnist_color", arch="small_resnet18", size=28, n_train=512, epochs=2)
        >>> s = r.spec("translate", {"size": 28, "translate": 0.3}, seed=1, n_test=200, img_size=32)
        >>> s.arch, s.n_train, s.epochs, s.optimizer, s.schedule, s.img_size, s.seed
        ('small_resnet18', 512, 2, 'sgd', 'step', 32, 1)
        >>> r.spec("flip", {}, 0, 200)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: Unknown augmentation 'flip'. Valid augmentations: fixed_size_center_crop, ...
        """
        return Spec(self.arch, self.dataset, self.root, augment, params, seed, self.n_train, n_test,
                    img_size or self.size, self.epochs, self.batch_size, self.optimizer, self.lr, self.weight_decay,
                    schedule=self.schedule, data_options=self.data_options, device=self.device)

    def train_family(self, specs: dict) -> dict:
        """Train (or load) a family ``{key: [Spec, ...]}`` through :func:`train_many`, in this process
        (``executor`` None) or as one job per untrained spec (``"local"``, ``"slurm"``: :func:`executor`), with
        progress bars when ``progress``; the same dict, ``{key: [nn.Module, ...]}`` in eval mode, models in place
        of specs. The one way a paper trains its family.

        Example
        -------
        >>> r = Recipe(dataset="fashion_mnist_color", arch="small_resnet18", size=28, epochs=0, progress=False)
        >>> family = r.train_family({"a": [r.spec("none", {}, 0, n_test=100)], "b": []})
        >>> {k: len(v) for k, v in family.items()}, family["a"][0].zoo_info["name"]
        ({'a': 1, 'b': 0}, 'small_resnet18/untrained')
        """
        flat = [s for group in specs.values() for s in group]
        ex = None if self.executor in (None, "none") else executor(self.executor)
        trained = iter(train_many(flat, ex, progress=self.progress))
        return {k: [next(trained) for _ in group] for k, group in specs.items()}


def shared_specs(profile: str | Profile = "cpu", **params) -> list[Spec]:
    """The zoo models chapter 00 loads for its papermill parameters ``params`` (:data:`SHARED` on the run's
    profile): what the book's training phase trains for it.

    Example
    -------
    >>> [s.name for s in shared_specs("smoke")]
    ['small_resnet18/untrained', 'small_resnet18/none', 'small_resnet18/standard']
    """
    from .profiles import foundations

    S = foundations(profile, **params)
    return [spec(name, S.run_profile, S.root) for name in SHARED]


@functools.cache
def _macs(arch: str, img_size: int, in_chans: int) -> float:
    """Multiply-accumulates of one forward pass of ``arch`` on one image (convolutions and linear layers, counted
    on the meta device: nothing is computed); attention products are left out, so ViTs are under-counted."""
    total = 0

    def count(module, _inputs, out):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            total += out.numel() * module.in_channels // module.groups * math.prod(module.kernel_size)
        else:
            total += out.numel() * module.in_features

    with torch.device("meta"):
        model = models.create(arch, img_size=img_size, in_chans=in_chans)
        hooks = [m.register_forward_hook(count) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        model(torch.empty(1, in_chans, img_size, img_size))
    for h in hooks:
        h.remove()
    return float(total)


def estimated_cost(s: Spec) -> float:
    """A spec's training work in multiply-accumulates: forward MACs of one image x 3 (forward and backward) x
    ``n_train`` x ``epochs`` (0 for an untrained spec). What the training phase orders by (longest first).

    Example
    -------
    >>> a, b = Spec(n_train=1000), Spec(n_train=2000)
    >>> estimated_cost(b) / estimated_cost(a), estimated_cost(Spec(epochs=0))
    (2.0, 0.0)
    """
    if s.epochs == 0:
        return 0.0
    try:
        macs = _macs(s.arch, s.img_size, 3)
    except Exception:  # an architecture the meta device cannot run: by pixels
        macs = 1e6 * (s.img_size / 28) ** 2
    return 3 * macs * s.n_train * s.epochs


def _phase_job(s: Spec, cache: str) -> float:
    """One job of :func:`train_phase`: train (or load) ``s`` into ``cache``; the job's seconds."""
    os.environ["INVLIB_CACHE"] = cache
    t0 = time.perf_counter()
    get(s, progress=False)
    return time.perf_counter() - t0


def _task_job(function: Callable, args: tuple, cache: str) -> float:
    """One task of :func:`train_phase`: ``function(*args)`` with the cache at ``cache`` and its prints left out
    (the phase prints one line per job); the job's seconds."""
    os.environ["INVLIB_CACHE"] = cache
    t0 = time.perf_counter()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        function(*args)
    return time.perf_counter() - t0


def _worker_env(threads: int) -> dict[str, str]:
    """What :func:`train_phase`'s processes start with: ``threads`` OpenMP/MKL threads (waiting ones sleep when there
    is one, unless the user set a policy), no progress bars, and a faster allocator where one is installed
    (:func:`invlib.utils.allocator_env`)."""
    env = dict(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), INVLIB_PROGRESS="0", **allocator_env())
    if threads == 1 and not any(k in os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def train_phase(specs: Iterable[Spec], workers: int = 1, threads: int = 1, echo=print,
                tasks: Iterable[tuple[str, Callable, tuple]] = ()) -> list[dict]:
    """Train every spec not in the cache yet, longest first (:func:`estimated_cost`), in ``workers`` processes of
    ``threads`` CPU threads each: the book's training phase, run before the chapters so that they only measure
    (and so that a chapter never waits on another one's training). A spec listed twice trains once.

    ``tasks``: other training that goes to the same processes, before the specs, in the order given: ``(label,
    function, args)`` with ``function`` a module-level function (it is sent to another process), called as
    ``function(*args)`` (the book's chapters that train their own families, :func:`invlib.papers.train_family`).
    A task that needs a zoo model trains it under the model's lock if no job has yet (:func:`get`): once.
    The processes start under a faster memory allocator where one is installed (:func:`invlib.utils.allocator_env`:
    the same weights, sooner).

    Returns one row per trained spec or task, in the order they finished: ``{"name", "seed", "seconds", "path"}``
    (a task's ``name`` is its label, its ``seed`` and ``path`` None). One line per job goes to ``echo``. A
    failing job raises ``RuntimeError`` naming the spec or task.

    Example
    -------
    >>> rows = train_phase([Spec(epochs=0, seed=11)], workers=1, echo=lambda *a, **k: None)  # doctest: +SKIP
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from unittest import mock

    todo = sorted({path(s): s for s in specs if not path(s).exists()}.values(), key=estimated_cost, reverse=True)
    tasks = list(tasks)
    if not todo and not tasks:
        return []
    for s in todo:
        _check_runnable(s)
    rows, cache, n = [], str(cache_dir()), len(tasks) + len(todo)
    with mock.patch.dict(os.environ, _worker_env(threads)), ProcessPoolExecutor(
            min(workers, n), mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = {pool.submit(_task_job, function, tuple(args), cache): (label, None)
                for label, function, args in tasks}  # submitted first: the longest jobs, run first
        jobs.update({pool.submit(_phase_job, s, cache): s for s in todo})
        for i, job in enumerate(as_completed(jobs), 1):
            s = jobs[job]
            name, seed, what = (s[0], None, s[0]) if isinstance(s, tuple) else (
                s.name, s.seed, f"{s.name} (seed {s.seed})")
            try:
                seconds = job.result()
            except Exception as err:
                pool.shutdown(cancel_futures=True)
                raise RuntimeError(f"training {what} failed: {err.__class__.__name__}: {err}") from err
            rows.append(dict(name=name, seed=seed, seconds=seconds, path=None if seed is None else str(path(s))))
            where = "" if seed is None else f" seed {seed} ({s.dataset}, {s.n_train} x {s.epochs})"
            echo(f"  [{i}/{n}] {name}{where}: {seconds:.1f} s", flush=True)
    return rows


def executor(kind: str = "slurm", folder: str | os.PathLike | None = None, **params):
    """A submitit executor for :func:`train_many`: ``"slurm"`` (``submitit.AutoExecutor(folder, cluster="slurm")``)
    or ``"local"`` (``submitit.LocalExecutor``: one process per job on this machine). ``params`` go to
    ``update_parameters`` (e.g. ``timeout_min=60, slurm_partition="gpu", gpus_per_node=1, cpus_per_task=8``);
    logs go to ``folder`` (default ``<cache>/submitit``).

    Example
    -------
    >>> ex = executor("local", timeout_min=10)
    >>> type(ex).__name__
    'LocalExecutor'
    """
    import submitit

    check_choice(kind, ("slurm", "local"), "executor")
    folder = Path(folder) if folder else cache_dir("submitit")
    try:
        ex = submitit.LocalExecutor(folder) if kind == "local" else submitit.AutoExecutor(folder, cluster="slurm")
    except RuntimeError as err:  # no srun/sbatch on this machine
        raise RuntimeError(f"No SLURM here ({err}): run on the cluster's login node, or use the local "
                           "executor (executor('local'), --executor local) or none (train in this process).") from None
    if kind == "local":
        params = {k: v for k, v in params.items() if not k.startswith("slurm_")}
    ex.update_parameters(**params)
    return ex


def train_all(profile: str | Profile = "cpu", names: list[str] | None = None, progress: bool = True,
              root: str | os.PathLike | None = None, executor=None) -> list[dict]:
    """Make sure the book's entries (:data:`BOOK`, or ``names``) are trained on a profile; one row per entry.

    Rows: ``{"name", "test_acc" (:func:`test_accuracy` on <= :data:`SCORE_N` test images), "params" (count),
    "epochs", "n_train", "train_seconds" (when it was trained),
    "seconds" (this call: training or loading), "cached" (bool), "path"}``. ``root``: the folder of the
    profile's dataset when it is one of your own (``dataset="folder"``); ``executor``: see :func:`train_many`.

    Example
    -------
    >>> rows = train_all("smoke", ["small_resnet18/untrained"], progress=False)
    >>> rows[0]["test_acc"] < 0.3, rows[0]["epochs"]
    (True, 0)
    >>> rows = train_all("cpu")  # doctest: +SKIP
    """
    specs = [spec(name, profile, root) for name in names or BOOK]
    if executor is not None:
        train_many(specs, executor, progress)
    rows = []
    for s in specs:
        existed, t0 = path(s).exists(), time.perf_counter()
        model = get(s, profile, progress=progress)
        info = model.zoo_info
        rows.append(dict(name=s.name, test_acc=test_accuracy(s, model=model),
                         params=sum(p.numel() for p in model.parameters()),
                         epochs=s.epochs, n_train=info["n_train"], train_seconds=info["seconds"],
                         seconds=time.perf_counter() - t0, cached=existed, path=info["path"]))
    return rows


# The forms of a model spec (load): what each names, with an example; an unknown form lists them.
FORMS = {
    "zoo:<entry>": "a model of the book's zoo, trained on first use (zoo:small_resnet18/standard; zoo.available())",
    "<model>": "hub weights of a timm or tv/<torchvision> model, online only (resnet18, tv/resnet50)",
    "<model>@<weights-file>": "that architecture with a local weights file, a state dict (resnet18@resnet18.pt)",
    "random:<model>": "the architecture's random initialisation, seed 0 (random:small_resnet18)",
    "<file.py>:<function>": "a function of your Python file that returns a torch.nn.Module (my_net.py:build)",
}


def _forms() -> str:
    return "; ".join(f"{form} = {what}" for form, what in FORMS.items())


def _parse(spec: str) -> tuple[str, ...]:
    """``(form, *parts)`` of a model spec: ``("zoo", entry)``, ``("random", name)``, ``("weights", name, file)``,
    ``("file", file, function)``, ``("hub", name)``. ``@`` decides first, so a weights file whose path holds
    ``:`` is still ``name@path``; ``X:Y`` is the file form when ``X`` ends with ``.py`` (or ``X.py`` alone, which
    then lacks its function); a whole spec that names an existing ``.py`` file and a function is the file form even
    when its path holds ``@``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"A model spec is a non-empty string, got {spec!r}. The forms: {_forms()}.")
    for prefix, form in (("zoo:", "zoo"), ("random:", "random")):
        if spec.startswith(prefix):
            return form, spec[len(prefix):]
    file = re.fullmatch(r"(.+\.py):(.*)", spec)
    if "@" in spec and not (file and Path(file[1]).expanduser().is_file()):
        name, _, weights = spec.partition("@")
        return "weights", name, weights
    if file:
        return "file", file[1], file[2]
    if spec.endswith(".py"):
        return "file", spec, ""
    if ":" in spec:
        raise ValueError(f"Unknown model spec form {spec!r}. The forms: {_forms()}.")
    return "hub", spec


def _architecture(name: str) -> str:
    """``name`` when :func:`invlib.models.create` knows it; else its ``ValueError`` (close names) with the forms."""
    try:
        return models.check_name(name)
    except ValueError as err:
        raise ValueError(f"{err} A model spec takes one of the forms: {_forms()}.") from None


def _import_file(file: Path):
    """The Python file ``file`` imported as a fresh module (its folder on ``sys.path`` meanwhile, so that it may
    import its neighbours), registered in ``sys.modules`` under a name keyed by its path."""
    import importlib.util
    import sys

    name = f"invlib_user_model_{hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]}"
    found = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    try:
        found.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _from_file(file: str, function: str) -> tuple[nn.Module, int]:
    """The model that ``function()`` of the Python file ``file`` returns (built under seed 0, so that a factory of
    random weights gives the same model every time) and its side: the file's ``INPUT_SIDE``, else 224."""
    import sys

    where = Path(file).expanduser()
    if not where.is_file():
        raise FileNotFoundError(f"Model file {file!r} does not exist (looked in {Path.cwd()} for a relative path). "
                                "The form: <file.py>:<function>, a function of that file that returns a "
                                "torch.nn.Module.")
    folder = str(where.resolve().parent)
    sys.path.insert(0, folder)
    try:
        module = _import_file(where)
        defined = [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
                   and getattr(v, "__module__", None) == module.__name__]
        build = getattr(module, function, None) if function.isidentifier() else None
        if not callable(build):
            wanted = f"no function {function!r}" if function else "a file without its function"
            raise ValueError(f"{file}: {wanted}. Name the function that returns your model, '{file}:<function>'; "
                             f"{where.name} defines: {', '.join(defined) or 'no functions'}.")
        with seeded(0):
            model = build()
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    if not isinstance(model, nn.Module):
        raise TypeError(f"{file}:{function}() returned {type(model).__name__} {model!r:.60}, not a "
                        "torch.nn.Module.")
    side = getattr(module, "INPUT_SIDE", 224)
    if isinstance(side, bool) or not isinstance(side, int) or side < 1:
        raise TypeError(f"{file}: INPUT_SIDE must be a positive int (the side of the square images the model "
                        f"takes), got {side!r}.")
    return model, side


def load(spec: str, profile="cpu") -> tuple[nn.Module, int]:
    """Any model by spec string, in eval mode on the profile's device, and its input side: a zoo entry, hub
    weights, a local file, a random initialisation or a model of your own. Every paper loads its models here.

    | spec                     | what                                                              |
    |--------------------------|-------------------------------------------------------------------|
    | ``zoo:<entry>``          | :func:`invlib.zoo.get` (trained on first use), input = profile's  |
    | ``<model>``              | hub weights of a timm / ``tv/`` model (online only), input 224     |
    | ``<model>@<path>``       | local weights file for that model, input 224 (timm: its cfg's)    |
    | ``random:<model>``       | the model's random initialisation (seed 0), input 224            |
    | ``<file.py>:<function>`` | ``function()`` of your file, a ``torch.nn.Module``; input: the    |
    |                          | file's ``INPUT_SIDE``, else 224                                   |

    ``<model>`` is any name of :func:`invlib.models.create`. A weights file is a state dict (or a checkpoint with a
    ``"model"`` / ``"state_dict"`` entry); the classifier takes the number of classes the file's head has (none:
    a feature extractor, ``num_classes=0``); the model then takes [0, 1] images (the weights' normalisation is
    added). A model of your own is built under seed 0, takes what it is given (put any normalisation inside it)
    and must accept a ``(1, 3, side, side)`` image (:func:`invlib.models.check_input`, run once here).

    Zoo backbones are trained on the profile's dataset (not the chapter's): a chapter on your own images
    probes the same networks, and trains nothing on your folder.

    Raises: ``ValueError`` for an unknown form or architecture (listing the forms; close names);
    :class:`invlib.models.PretrainedUnavailableError` for a hub name offline (at once, naming the
    ``<model>@<weights-file>`` form); :class:`invlib.models.CheckpointError` for a weights file that is missing or
    does not fit (its missing and unexpected keys, shape mismatches); ``FileNotFoundError`` / ``ValueError`` for a
    missing file or function of the file form (listing what the file defines).

    Example
    -------
    >>> model, size = load("random:small_resnet18", "smoke")
    >>> size, model.training
    (224, False)
    >>> load("zoo:small_resnet18/standard", "smoke")[1]  # doctest: +SKIP
    28
    >>> load("timm:resnet18")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown model spec form 'timm:resnet18'. The forms: zoo:<entry> = a model of the book's zoo, ...
    """
    prof = get_profile(profile)
    form, *parts = _parse(spec)
    if form == "zoo":
        return get(parts[0], prof), prof.img_size
    device = resolve_device(prof.device)
    if form == "file":
        model, side = _from_file(*parts)
        model = model.to(device).eval()
        models.check_input(model, side)
        return model, side
    name = _architecture(parts[0])
    if form == "random":
        model = models.create(name, num_classes=1000, seed=0)  # the same untrained weights every time
    elif form == "weights":
        file = parts[1]
        if not file:
            raise ValueError(f"{spec!r}: name the weights file after '@', '{name}@path/to/weights.pt'.")
        state = models.read_weights(file)
        model = models.create(name, num_classes=models.head_outputs(name, state), normalize=True)
        models.load_weights(model, file, state)
    else:
        try:
            model = models.create(name, num_classes=1000, pretrained=True)
        except models.PretrainedUnavailableError as err:
            ours = (f", or a model of the book's zoo, 'zoo:{name}/standard'" if name in models.available() else "")
            raise models.PretrainedUnavailableError(
                f"{spec!r} asks for hub weights, which cannot be had here. Load a local weights file for it "
                f"instead, '{name}@path/to/weights.pt' (a state dict, torch.save(model.state_dict(), path)), or its "
                f"random initialisation, 'random:{name}'{ours}. ({err})") from None
    size = getattr(model, "pretrained_cfg", {}).get("input_size", (3, 224, 224))[-1]
    return model.to(device).eval(), size
