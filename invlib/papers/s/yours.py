"""Your model (chapter Y1): every paper's measure of invariance on any model, any image folder and any layer, with a
95 % interval over images on every number, beside models of the book whose training the reader knows.

Chapter S1 (:mod:`invlib.papers.s.agreement`) measures the book's own models with every paper's measure at their
embedding. This module takes the same measures, through the same papers' public functions and S1's pieces, to:

- **any model** (:func:`load_model`): every form of :func:`invlib.zoo.load` (``zoo:<entry>``, a timm or ``tv/``
  hub name, ``<name>@<weights file>``, ``random:<name>``, ``<file.py>:<function>``), or ``book:<name>``, one of the
  book's models that S1 measures (:data:`BOOK_MODELS`: chapter B1's recipe on ``scenes`` without augmentation, with
  RandomResizedCrop, with translation or zoom alone, chapter B3's ResNet and ViT);
- **any images** (:func:`images`): ``scenes`` (S1's: B1's central evaluation crops, with their object boxes), a
  dataset of :func:`invlib.data.available`, or a folder of class folders (``data="path/to/folder"``);
- **any layer** (``layers``; default the model's stages, :func:`invlib.models.stages`, ending with ``pre_logits``,
  the embedding S1 measures). At a layer, A's probe and B's measures read the layer's output averaged over its
  positions (A's :class:`~invlib.papers.a.probes.Backbone`), C's maps its whole output (one map per position,
  C's :func:`~invlib.papers.c.equivariance.measure_network`).

The measures (:data:`MEASURES`), per transformation of S1 (:data:`TRANSFORMS`) that the measure has: accuracy under
the transformation (B's grids, from the forward passes of B's sweep, S1's reading), A's ranking-probe accuracy, B's
relative invariance and equivariance alignment, C's invariance and equivariance, as accuracies through the rest of
the network and as normalised L2 distances. The accuracies need the model's classes to be the data's: they are
measured where the model's outputs are as many as the data's classes (output ``k`` = the ``k``-th class folder in
sorted order, :func:`classes_reason`), and otherwise left out with the reason. The images are the unit (the
statement is about this model on these images): every number has a 95 % interval over them (:data:`INTERVALS`), and
the book's models of ``references`` are measured on the same images at their ``pre_logits`` (:func:`measure`).

Everything is cached on disk per (model, images, settings, layer): a second run reads it (:func:`measure_model`).
The chapter's figures, tables and numbers are :mod:`invlib.papers.s.yours_reports`.

Example
-------
>>> S = settings("smoke")
>>> S.model, S.n_images, S.references
('book:B1/scale', 32, ('book:B1/none',))
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ... import data, models, zoo
from ...profiles import settings as _settings
from ...utils import cached_many, check_choice, digest
from ...utils import progress as bar
from ...verdicts import bootstrap_interval, share_interval, t_interval
from ..a import probes
from ..b import similarity
from ..c import equivariance
from . import agreement

CACHE_VERSION = 1
TRANSFORMS = agreement.TRANSFORMS  # S1's: A's task, B's grid and C's kind and values of each transformation
OUTPUT = "output"  # the "layer" of the accuracy under a transformation: the model's prediction
# measure -> its label; S1's measures, and C's equivariance as a distance (where the accuracies are left out)
MEASURES = {**{k: label for k, (label, _) in agreement.MEASURES.items()}, "c_eq_l2": "C: equivariance L2"}
# measure -> how its interval over images is made: a share of images (Wilson's score interval where each image gives
# one 0/1, a bootstrap of the images' shares where it gives several, one per level or value), a percentile
# bootstrap over images (B's median and alignment, fixed seed), a Student-t interval of the images' mean (C's L2)
INTERVALS = {"accuracy": "share", "a_probe": "share", "b_invariance": "bootstrap", "b_alignment": "bootstrap",
             "c_inv_acc": "share", "c_eq_acc": "share", "c_inv_l2": "t", "c_eq_l2": "t"}
NEEDS_CLASSES = ("accuracy", "c_inv_acc", "c_eq_acc")
# The book's models S1 measures, by name: (S1's variant, recipe, architecture) of :func:`agreement.models`
BOOK_MODELS = {"B1/none": ("none", "B1", "ResNet"), "B1/rrc": ("standard", "B1", "ResNet"),
               "B1/translation": ("translation", "B1", "ResNet"), "B1/scale": ("scale", "B1", "ResNet"),
               "B3/resnet": ("none", "B3", "ResNet"), "B3/vit": ("none", "B3", "ViT")}
BOOK = "book:"
REFERENCES = ("book:B1/none", "book:B1/rrc", "book:B1/translation", "book:B3/vit")


@dataclass(frozen=True)
class Settings:
    """What chapter Y1 measures. No paper has this experiment: the defaults are the cpu profile's.

    Attributes
    ----------
    profile:    the profile's name (filled in by :func:`settings`)
    model:      the model (:func:`load_model`: a form of :func:`invlib.zoo.load` or ``book:<name>``)
    data:       ``"scenes"`` (S1's), a dataset of :func:`invlib.data.available` (its test split) or an image folder
                (``root/<class>/<image>``, or with ``train/`` and ``test/``: its test images)
    side:       the side the model sees the images at (None: the model's, :func:`load_model`)
    n_images:   images measured (at most what the data hold); A's probe and C's maps are fitted on the first half
                and scored on the second, B's measures and the accuracy take all of them
    layers:     the layers measured (None: the model's stages, :func:`invlib.models.stages`); a list or a
                comma-separated text
    max_layers: with ``layers=None``, at most this many of the stages, ``pre_logits`` and the deepest kept
    transforms: S1's transformations (:data:`TRANSFORMS`)
    references: the book's models measured beside it at ``pre_logits`` (``book:`` names of :data:`BOOK_MODELS`)
    levels:     B's grid levels (0 first; S1's), over which the accuracy and B's measures are averaged
    map_epochs: epochs of C's maps
    resamples:  of the bootstrap intervals
    seed:       the draw of the images and of every random part of the measures
    """

    profile: str = "cpu"
    model: str = "book:B1/scale"
    data: str = "scenes"
    side: int | None = None
    n_images: int = 256
    layers: tuple[str, ...] | str | None = None
    max_layers: int | None = None
    transforms: tuple[str, ...] | str = tuple(TRANSFORMS)
    references: tuple[str, ...] | str = REFERENCES
    levels: tuple[int, ...] = (0, 1, 3, 5)
    map_epochs: int = 10
    resamples: int = 2000
    seed: int = 0
    device: str = "auto"
    progress: bool = True

    def __post_init__(self):
        for name in ("layers", "transforms", "references"):  # "a,b" (a command line's -p) as ("a", "b")
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, tuple(v.strip() for v in value.split(",") if v.strip()))
        for t in self.transforms:
            check_choice(t, TRANSFORMS, "transformation")
        for ref in self.references:
            if not ref.startswith(BOOK):
                raise ValueError(f"references are the book's models, 'book:<name>' with a name of "
                                 f"{', '.join(BOOK_MODELS)}; got {ref!r}.")
            check_choice(ref[len(BOOK):], BOOK_MODELS, "book model")
        if not self.model or not self.data:
            raise ValueError("model and data must be given: e.g. model='resnet18@weights.pt', data='my_images'.")
        if self.levels[:1] != (0,) or len(self.levels) < 2 or not all(0 <= lv <= 9 for lv in self.levels):
            raise ValueError(f"levels are B's grid levels 0..9, starting with 0 (none) and one more; got "
                             f"{self.levels}.")
        small = [k for k in ("n_images", "side", "max_layers", "map_epochs", "resamples")
                 if getattr(self, k) is not None and getattr(self, k) < (8 if k == "n_images" else 1)]
        if small or self.layers == ():
            raise ValueError(f"{', '.join(small) or 'layers'} out of range: n_images at least 8 (half fit A's probe "
                             "and C's maps, half score them), side, max_layers, map_epochs and resamples positive, "
                             "layers a list of names or None.")


SETTINGS = {
    "smoke": dict(n_images=32, max_layers=2, references=("book:B1/none",), levels=(0, 9), map_epochs=2,
                  resamples=500),
    "gpu": dict(n_images=2000, levels=tuple(range(10))),
    "paper": dict(n_images=5000, levels=tuple(range(10))),
}


def settings(profile: str = "cpu", **overrides) -> Settings:
    """Chapter Y1's settings: the defaults, the profile's changes, then the overrides that are not None.

    Example
    -------
    >>> settings("smoke").levels, settings("cpu", layers="layer2, pre_logits").layers
    ((0, 9), ('layer2', 'pre_logits'))
    >>> settings("smoke", references=["book:B2/none"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown book model 'B2/none'. Did you mean 'B1/none'? Valid book models: B1/none, ...
    """
    return _settings(Settings, SETTINGS, profile, **overrides)


# ------------------------------------------------------------------------------ the models
def _s1(profile: str, seed: int = 0, device: str = "auto") -> agreement.Settings:
    """S1's settings for the book's models of one seed (B1's recipe, B3's ResNet and ViT)."""
    return agreement.settings(profile, seeds=1, augerino=False, variation=False, seed=seed, device=device,
                              progress=False)


def _member(profile: str, name: str) -> agreement.Model:
    want = BOOK_MODELS[check_choice(name, BOOK_MODELS, "book model")]
    return next(m for m in agreement.models(_s1(profile)) if (m.variant, m.recipe, m.arch) == want)


def book_side(profile: str) -> int:
    """The side of the book's models' images: chapter B1's evaluation crop of ``scenes`` (S1 shows B3's models the
    same images, resized inside the model, :func:`invlib.papers.s.agreement.at_side`).

    Example
    -------
    >>> book_side("smoke"), book_side("cpu")
    (56, 48)
    """
    return agreement._b1(_s1(profile)).size


def load_model(spec: str, profile: str = "cpu") -> tuple[torch.nn.Module, int]:
    """``(model in eval mode, its side)``: ``book:<name>`` (:data:`BOOK_MODELS`, trained by the book's training phase
    or here on first use; side :func:`book_side`), else :func:`invlib.zoo.load` (every form it takes, its errors).

    Example
    -------
    >>> model, side = load_model("random:small_resnet18", "smoke")
    >>> side, model.training
    (224, False)
    >>> load_model("book:B1/crop", "smoke")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown book model 'B1/crop'. ...
    """
    if spec.startswith(BOOK):
        member = _member(profile, spec[len(BOOK):])
        return agreement.train(_s1(profile), [member])[member], book_side(profile)
    return zoo.load(spec, profile)


def label(spec: str) -> str:
    """A model's name in tables and figures: the spec, a weights file by its file name.

    Example
    -------
    >>> label("resnet18@/tmp/weights/r18.pt"), label("book:B1/rrc"), label("/home/me/nets.py:tiny")
    ('resnet18@r18.pt', 'B1/rrc', 'nets.py:tiny')
    """
    if spec.startswith(BOOK):
        return spec[len(BOOK):]
    if "@" in spec:
        name, path = spec.split("@", 1)
        return f"{name}@{Path(path).name}"
    if ".py:" in spec:
        path, fn = spec.rsplit(":", 1)
        return f"{Path(path).name}:{fn}"
    return spec


def y1_zoo_specs(profile: str = "cpu", **params) -> list[zoo.Spec]:
    """The zoo models chapter Y1 loads for its papermill parameters ``params``: the book's models among ``model`` and
    ``references`` (S1's specs of them, :func:`invlib.papers.s.agreement.s1_zoo_specs`). A model of the reader's is
    no zoo model (a ``zoo:`` entry trains on first use).

    Example
    -------
    >>> [s.augment for s in y1_zoo_specs("smoke")]
    ['random_size_center_crop', 'fixed_size_center_crop']
    """
    S = settings(profile, **params)
    S1 = _s1(S.profile)
    specs = dict(zip([m.name for m in agreement.models(S1) if m.recipe != "B6"],
                     agreement.s1_zoo_specs(S.profile, seeds=1, augerino=False, variation=False)))
    names = [s[len(BOOK):] for s in (S.model, *S.references) if s.startswith(BOOK)]
    return list(dict.fromkeys(specs[_member(S.profile, n).name] for n in names))


# ------------------------------------------------------------------------------ the images
def images(S: Settings, side: int) -> data.Dataset:
    """``S.n_images`` images of ``S.data`` at ``side`` px (uint8, 3 channels), with labels, classes and boxes (the
    whole image where the data have none: A's probe then zooms into the whole image). ``scenes``: S1's test scenes
    (B1's evaluation crop, :func:`invlib.papers.s.agreement.scenes`), resized; a dataset name: its test split; a
    folder: its images (of ``test/`` when it has one), each resized to a square (the aspect ratio is not kept).

    Example
    -------
    >>> ds = images(settings("smoke", n_images=8), 32)
    >>> tuple(ds.images.shape), ds.boxes.shape, len(ds.classes)
    ((8, 3, 32, 32), torch.Size([8, 4]), 10)
    """
    if S.data == "scenes":
        ds = agreement.scenes(_s1(S.profile, S.seed), "test", S.n_images).resize(side)
    elif S.data in data.available() and S.data != "folder":
        ds = data.load(S.data, "test", n=S.n_images, seed=S.seed, size=side, cap=True, channels=3)
    else:
        root = Path(S.data).expanduser()
        if not root.is_dir():
            raise FileNotFoundError(f"data={S.data!r} is not a folder of images here; data is 'scenes', a dataset "
                                    f"({', '.join(n for n in data.available() if n != 'folder')}) or a folder "
                                    "root/<class>/<image>.")
        split = "train" if data.one_split_folder("folder", root) else "test"
        ds = data.load("folder", split, root=str(root), n=S.n_images, seed=S.seed, size=side, cap=True,
                       channels=3, stream=False)
    ds = ds.with_whole_boxes()
    if len(ds) < 8:
        raise ValueError(f"data={S.data!r} holds {len(ds)} images; the measures need at least 8 (half fit A's probe "
                         "and C's maps, half score them).")
    return ds


def classes_reason(spec: str, outputs: int, ds: data.Dataset, data_name: str) -> str | None:
    """Why the accuracies are left out for model ``spec`` with ``outputs`` outputs on images ``ds`` of ``data_name``,
    or None when they are measured: a book model classifies the classes of ``scenes``; any other model, the data's
    classes when it has as many outputs as the data have classes (output ``k`` = class ``k``, the class folders in
    sorted order), and a single class leaves nothing to classify.

    Example
    -------
    >>> ds = images(settings("smoke", n_images=8), 16)
    >>> classes_reason("random:resnet18", 1000, ds, "scenes")[:52]
    'the model has 1000 outputs and the images 10 classes'
    >>> classes_reason("book:B1/rrc", 10, ds, "scenes") is None
    True
    """
    k = len(ds.classes)
    if k < 2:
        return "the images have one class: there is nothing to classify"
    if spec.startswith(BOOK):
        return None if data_name == "scenes" else f"{label(spec)} classifies the classes of scenes, not those of " \
                                                  f"{data_name}"
    if outputs != k:
        return (f"the model has {outputs} outputs and the images {k} classes (the model's classes are taken to be "
                "the data's, output k the k-th class in sorted order, only where the two counts are equal)")
    return None


def chosen_layers(S: Settings, model: torch.nn.Module) -> list[str]:
    """The layers measured: ``S.layers`` (checked: an unknown one lists the model's), else the model's stages
    (:func:`invlib.models.stages`), at most ``S.max_layers`` of them (the deepest ones, ``pre_logits`` last).

    Example
    -------
    >>> from invlib.models import create
    >>> chosen_layers(settings("smoke"), create("small_resnet18_s4"))
    ['layer4', 'pre_logits']
    """
    if S.layers is not None:
        return models.check_layers(model, list(S.layers))
    layers = models.stages(model)
    return layers[-S.max_layers:] if S.max_layers else layers


def check(S: Settings) -> dict:
    """Everything :func:`measure` needs, checked before any measure runs, each fault as one message: the model loads
    (:func:`load_model`'s errors), takes ``(1, 3, side, side)`` images (:func:`invlib.models.check_input` says what it
    expects), has the layers, and the data hold images. Returns what was found: ``model`` (its label), ``side``,
    ``outputs``, ``layers``, ``images``, ``classes`` and ``accuracy`` (None where measured, else why not).

    Example
    -------
    >>> found = check(settings("smoke", model="random:small_resnet18", side=28, n_images=8))
    >>> found["outputs"], found["layers"], found["accuracy"][:22]
    (1000, ['layer4', 'pre_logits'], 'the model has 1000 out')
    """
    return _prepare(S)[0]


def _prepare(S: Settings) -> tuple[dict, torch.nn.Module, data.Dataset]:
    model, side = load_model(S.model, S.profile)
    side = S.side or side
    outputs = models.check_input(model, side)
    layers = chosen_layers(S, model)
    ds = images(S, side)
    found = dict(model=label(S.model), side=side, outputs=outputs, layers=layers, images=len(ds),
                 classes=len(ds.classes), accuracy=classes_reason(S.model, outputs, ds, S.data))
    return found, model, ds


# ------------------------------------------------------------------------------ the measures
def _joint_embedding(model, layers: list[str], preds: list):
    """Every layer of ``layers`` from one forward pass (:func:`invlib.models.features`, averaged over positions, as
    A's backbone reads them), as one callable with several outputs for B's sweep; the prediction of every batch it
    embeds is appended to ``preds`` (S1's reading of the accuracy under a transformation)."""
    need = list(dict.fromkeys([*layers, "pre_logits"]))

    def f(b):
        out = models.features(model, b, need, pool=True)
        preds.append(models.logits_from(model, "pre_logits", out["pre_logits"]).argmax(1).cpu())
        return tuple(out[layer] for layer in layers)

    return f


def _share(correct: np.ndarray, seed: int, resamples: int) -> tuple:
    """``(estimate, lo, hi, method)`` of the share of ``correct`` ``(n, k)`` (0/1 per image and level or value):
    Wilson's score interval for ``k = 1``, else a bootstrap of the images' shares."""
    if correct.shape[1] == 1:
        iv = share_interval(int(correct.sum()), len(correct))
    else:
        iv = bootstrap_interval(correct.mean(1), seed=seed, resamples=resamples)
    return iv.estimate, iv.lo, iv.hi, iv.method


def _alignment_statistic(pairs: list[torch.Tensor]):
    """B's alignment, averaged over levels, of a resample of the images (``idx`` ``(..., n)`` drawn indices): each
    level's pair terms (:func:`invlib.papers.b.similarity.alignment_pairs`) averaged over the pairs of two different
    images, each image weighted by how often it was drawn; at ``idx = 0..n-1`` the sweep's alignment."""
    m = torch.stack(pairs).double().numpy()  # (L, n, n)
    n = m.shape[-1]

    def statistic(idx, axis=-1):
        idx = np.asarray(idx, dtype=np.int64)
        flat = idx.reshape(-1, n)
        counts = np.bincount((flat + n * np.arange(len(flat))[:, None]).ravel(), minlength=len(flat) * n)
        c = counts.reshape(len(flat), n).astype(float)
        quad = np.stack([((c @ level) * c).sum(1) for level in m], 1)  # the diagonal is 0: an image with itself
        out = (quad / (c.sum(1) ** 2 - (c**2).sum(1))[:, None]).mean(1)  # adds nothing, nor counts as a pair
        return out.reshape(idx.shape[:-1]) if idx.ndim > 1 else float(out[0])

    return statistic


def _row(layer, transform, measure, value, lo, hi, n, method, note=""):
    return dict(layer=layer, transform=transform, measure=measure, value=float(value), low=float(lo), high=float(hi),
                n=int(n), unit="image", interval=method, note=note)


def _sweep_rows(S, model, ds, layers, accuracy: bool) -> tuple[dict, float]:
    """B's measures at ``layers`` (one sweep, every layer from each forward pass) and the accuracy under each
    transformation from the same passes: ``({layer: rows}, seconds)``."""
    t0 = time.perf_counter()
    x, levels = ds.images.float() / 255, [lv for lv in S.levels if lv > 0]
    grids = [TRANSFORMS[t]["b"] for t in S.transforms]
    preds: list = []
    device = next(model.parameters()).device
    with torch.inference_mode():
        rows, per = similarity.sweep({tuple(layers): _joint_embedding(model, layers, preds)}, x, grids, levels,
                                     seed=S.seed, device=device, per_image=True)
    out = {layer: [] for layer in (*layers, OUTPUT)}
    for t, g in zip(S.transforms, grids):
        for layer in layers:
            mine = [(r, p) for r, p in zip(rows, per) if r["model"] == layer and r["transform"] == g]
            inv = [p["invariance"].numpy() for _, p in mine]
            iv = bootstrap_interval(tuple(inv), lambda *a, axis=-1: np.mean([np.median(v, axis=axis) for v in a], 0),
                                    seed=S.seed, resamples=S.resamples, paired=True)
            out[layer].append(_row(layer, t, "b_invariance", np.mean([r["median"] for r, _ in mine]), iv.lo, iv.hi,
                                   len(x), iv.method))
            stat = _alignment_statistic([p["pairs"] for _, p in mine])
            iv = bootstrap_interval(np.arange(len(x)), stat, seed=S.seed, resamples=S.resamples)
            out[layer].append(_row(layer, t, "b_alignment", np.mean([r["alignment"] for r, _ in mine]), iv.lo,
                                   iv.hi, len(x), iv.method))
    if accuracy:
        passes = [(None, 0)] + [(g, lv) for g in grids for lv in levels]  # the sweep's order: x, then grid by level
        by_pass = dict(zip(passes, torch.cat(preds).split(len(x))))
        right = lambda p: (p == ds.labels).numpy()[:, None]  # noqa: E731
        est, lo, hi, how = _share(right(by_pass[None, 0]), S.seed, S.resamples)
        out[OUTPUT].append(_row(OUTPUT, "none", "accuracy", 100 * est, 100 * lo, 100 * hi, len(x), how))
        for t, g in zip(S.transforms, grids):
            est, lo, hi, how = _share(np.hstack([right(by_pass[g, lv]) for lv in levels]), S.seed, S.resamples)
            out[OUTPUT].append(_row(OUTPUT, t, "accuracy", 100 * est, 100 * lo, 100 * hi, len(x), how))
    return out, time.perf_counter() - t0


def _probe_rows(S, model, train, test, layers) -> tuple[dict, float]:
    """A's ranking probe on each layer of ``layers`` (its features of both sets taken once for all of them): trained on
    the view pairs of ``train``, scored on one pair per image of ``test``."""
    t0 = time.perf_counter()
    featurizer = probes.Backbone(model, layers)
    out = {layer: [] for layer in layers}
    for t in S.transforms:
        task = TRANSFORMS[t]["a"]
        if task is None:
            continue
        fit, score = (probes.extract(featurizer, ds.images, ds.boxes, task, ds.images.shape[-1], seed=S.seed + k,
                                     cache=False) for k, ds in enumerate((train, test)))
        for layer in layers:
            right = probes.correct(probes.train_probe(fit, layers=[layer]), score).numpy()[:, None]
            est, lo, hi, how = _share(right, S.seed, S.resamples)
            out[layer].append(_row(layer, t, "a_probe", est, lo, hi, len(right), how))
    return out, time.perf_counter() - t0


def _c_rows(S, model, fit, score, layers, accuracy: bool) -> tuple[dict, float]:
    """C's invariance and equivariance of each of ``layers`` to each transformation C has: maps fitted on ``fit``,
    scored on ``score`` (C's settings at the profile, as S1 takes them; every layer's features from one forward
    pass, :func:`~invlib.papers.c.equivariance.measure_layers`): ``({layer: rows}, seconds)``."""
    t0 = time.perf_counter()
    C = equivariance.settings(S.profile, map_epochs=S.map_epochs, seed=S.seed, device=S.device, progress=False)
    out = {layer: [] for layer in layers}
    for t in S.transforms:
        if TRANSFORMS[t]["c"] is None:
            continue
        kind, values = TRANSFORMS[t]["c"]
        measured = equivariance.measure_layers(model, kind, values, C, fit, score, layers,
                                               resize=equivariance.crop_resize([]), per_image=True,
                                               accuracy=accuracy)
        for layer, (table, per) in measured.items():
            for what in ("inv", "eq"):
                if accuracy:
                    right = np.stack([per[v][f"{what}_correct"].numpy() for v in table.value], 1)
                    _, lo, hi, how = _share(right, S.seed, S.resamples)
                    out[layer].append(_row(layer, t, f"c_{what}_acc", table[f"{what}_acc"].mean(), 100 * lo,
                                           100 * hi, len(score), how))
                iv = t_interval(np.stack([per[v][f"{what}_l2"].numpy() for v in table.value], 1).mean(1))
                out[layer].append(_row(layer, t, f"c_{what}_l2", table[f"{what}_l2"].mean(), iv.lo, iv.hi,
                                       len(score), "t"))
    return out, time.perf_counter() - t0


def measure_model(S: Settings, model: torch.nn.Module, ds: data.Dataset, layers: list[str],
                  reason: str | None = None) -> tuple[list[dict], dict]:
    """Every measure of one model at ``layers`` on the images ``ds`` (:func:`images`): ``(rows, seconds)``, rows
    ``layer, transform, measure, value, low, high, n, unit, interval, note`` (``layer`` :data:`OUTPUT` for the
    accuracy under each transformation, ``transform`` ``"none"`` for the clean accuracy), and the seconds each paper's
    measures took (``{"A": s, "B": s, "C": s}``, of this call's computing; 0 where read from the cache).

    ``reason``: why the accuracies are left out (:func:`classes_reason`; None: measured). Cached on disk per layer
    (by the model's weights and modules, the images, the settings and the CPU threads), so a second call, or one with
    one more layer, computes only what is missing.
    """
    accuracy = reason is None
    # the threads too: C's maps and A's probes are trained, and a sum split over more threads differs in its last
    # bits, so the chapter in the book (one thread) and `python -m invlib measure` (every core) keep their own values
    base = digest(equivariance.model_key(model), getattr(model, "input_side", None), ds.images, ds.boxes, ds.labels,
                  S.profile, S.transforms, S.levels, S.map_epochs, S.resamples, S.seed, accuracy,
                  torch.get_num_threads())
    keys = [*layers, OUTPUT] if accuracy else list(layers)
    names = {layer: f"measures-{digest(base, layer)}" for layer in keys}
    seconds = {"A": 0.0, "B": 0.0, "C": 0.0}
    half = len(ds) // 2
    first, second = ds.rows(slice(0, half)), ds.rows(slice(half, len(ds)))

    def make(missing):
        inner = [layer for layer in missing if layer != OUTPUT] or [layers[-1]]
        out, seconds["B"] = _sweep_rows(S, model, ds, inner, accuracy)
        made_a, seconds["A"] = _probe_rows(S, model, first, second, inner)
        made_c, seconds["C"] = _c_rows(S, model, first, second, inner, accuracy)
        for layer in inner:
            out[layer] += made_a[layer] + made_c[layer]
        return {layer: out[layer] for layer in missing}

    made = cached_many("yours", names, make, version=CACHE_VERSION)
    rows = [r for layer in keys for r in made[layer]]
    if reason:
        rows += [_row(OUTPUT if m == "accuracy" else "all", "all", m, np.nan, np.nan, np.nan, len(ds), "", reason)
                 for m in NEEDS_CLASSES]
    return rows, seconds


def measure(S: Settings) -> pd.DataFrame:
    """Every measure of ``S.model`` at its layers, and of each reference at ``pre_logits``, on ``S.n_images`` images
    of ``S.data`` (each model at its side): one row per (model, layer, transform, measure) with ``value``, ``low``,
    ``high`` (the 95 % interval over images), ``n`` (images), ``unit`` (``"image"``), ``interval`` (how it was made),
    ``note`` (why a measure is left out, with ``value`` NaN) and ``role`` (``"yours"`` or ``"reference"``). Its
    ``attrs["seconds"]`` holds the seconds of the model's measures per paper (``A``, ``B``, ``C``,
    :func:`measure_model`: 0 where read from the cache), of the references' and the ``total``; ``attrs["found"]``
    what :func:`check` finds.

    Example
    -------
    >>> S = settings("smoke", model="random:small_resnet18", side=28, n_images=8, references=(), map_epochs=1,
    ...              transforms=("rotation",), progress=False, resamples=50)
    >>> t = measure(S)  # doctest: +SKIP
    >>> sorted(t.loc[t["value"].notna(), "measure"].unique())  # doctest: +SKIP
    ['b_alignment', 'b_invariance', 'c_eq_l2', 'c_inv_l2']
    >>> t.loc[t["value"].isna(), "note"].iloc[0][:23]  # doctest: +SKIP
    'the model has 1000 outp'
    """
    t0 = time.perf_counter()
    found, model, ds = _prepare(S)
    sets = {found["side"]: ds}
    rows, seconds = measure_model(S, model, ds, found["layers"], found["accuracy"])
    tables = [pd.DataFrame(rows).assign(model=found["model"], role="yours")]
    for spec in bar(S.references, S.progress, "references", leave=True):
        net, side = load_model(spec, S.profile)
        if side not in sets:
            sets[side] = images(S, side)
        ds = sets[side]
        rows, seconds_ref = measure_model(S, net, ds, ["pre_logits"],
                                          classes_reason(spec, models.check_input(net, side), ds, S.data))
        tables.append(pd.DataFrame(rows).assign(model=label(spec), role="reference"))
        seconds["references"] = seconds.get("references", 0.0) + sum(seconds_ref.values())
    out = pd.concat(tables, ignore_index=True)
    out = out[["model", "role", *[c for c in out.columns if c not in ("model", "role")]]]
    out.attrs.update(seconds=dict(seconds, total=time.perf_counter() - t0), found=found)
    return out
