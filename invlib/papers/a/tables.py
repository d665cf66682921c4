"""Paper A's chapters (A1, A2): their settings, their images and backbones, and the runs behind Tables 1 and 2.

The probe itself (views, featurizers, cached features, the probe) is :mod:`invlib.papers.a.probes`; this module
says what the chapters run it on and runs it: :func:`settings` (the paper's setup, then the profile's changes),
:func:`a1_zoo_specs` and :func:`a2_zoo_specs` (the zoo models each chapter loads, for the book's runner),
:func:`chapter_images` (images with one object box, split into training and validation), :func:`featurizers` and
:func:`baselines` (the paper's rows), :func:`run_table` (every featurizer on every task: the tables) and
:func:`layer_importance`, :func:`layer_depths` (Figures 5 and 6). The paper's own numbers are
:data:`PAPER_TABLE1` and :data:`PAPER_TABLE2`; :mod:`invlib.papers.a.probes_reports` sets them beside this run's.

Example
-------
>>> S = settings("smoke", n_train=20, n_val=10)
>>> S.dataset, S.backbones["ResNet-50"], settings("paper").backbones["ResNet-50"]
('fashion_mnist_color', 'zoo:small_resnet50_s2/standard', 'tv/resnet50')
>>> list(baselines(28)[0])
['Passthrough', 'DCT', 'DCT (magnitude)']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch  # noqa: F401 - used by the docstring examples

from ... import streaming, zoo
from ...profiles import Profile, get_profile
from ...profiles import settings as _settings
from ...utils import check_choice
from .probes import (
    BACKGROUNDS,
    DCT,
    ON_BLACK,
    TASKS,
    Backbone,
    Passthrough,
    accuracy,
    add_margin,
    correct,
    data_digest,
    depth,
    extract_many,
    fold_depths,
    ilsvrc_filter,
    importance,
    textured_background,
    train_probe,
    undefined_tasks,
    zoom_out_slack,
)

# ----------------------------------------------------------------------------------------- settings
# smoke and cpu: the ResNet-50 on a stride-2 stem, for speed; every Table 1 verdict as with the stride-1 net
# (benchmarks/measurements/a.md).
_ZOO = {"ResNet-18": "zoo:small_resnet18/standard", "ResNet-50": "zoo:small_resnet50_s2/standard"}
# the zoo's recipe for it is small_resnet50's: registered here until invlib.zoo.ARCHS names it


_ZOO_VARIANTS = {"untrained": "zoo:small_resnet18/untrained", "trained, no augmentation": "zoo:small_resnet18/none",
                 "trained, standard augmentation": "zoo:small_resnet18/standard"}


_HUB = {"ResNet-18": "tv/resnet18", "ResNet-50": "tv/resnet50"}


_HUB_VARIANTS = {"untrained": "random:tv/resnet18", "trained (ImageNet)": "tv/resnet18"}


@dataclass(frozen=True)
class Settings:
    """What chapters A1 and A2 run on. The defaults are the paper's (section 4: 65,000 training and 21,000
    validation ImageNet images with one box, torchvision's ResNet-18 and ResNet-50); :data:`SETTINGS` holds
    what each smaller profile changes. Make one with :func:`settings`.

    Attributes
    ----------
    profile:          the profile's name (filled in by :func:`invlib.profiles.settings`)
    dataset, root:    the images (a name of :func:`invlib.data.available`) and their folder (None: the default)
    n_train, n_val:   training and validation images, one pair per image and task (capped at what there is)
    backbones:        the paper's rows -> backbone spec (:func:`invlib.zoo.load`)
    variants:         label -> spec for "does training change what the layers encode?" (chapter A2)
    source_size:      side the images are loaded at (None: the dataset's own)
    canvas:           black margin around each image, as a factor of its side (:func:`add_margin`)
    background:       ``"texture"``: the black around each object filled with a random texture, as photographs
                      have backgrounds (:func:`~invlib.papers.a.probes.textured_background`); ``"as_is"``: kept;
                      ``"auto"``: texture for the datasets of garments on black (``probes.ON_BLACK``), else as is
    batch_size:       images per forward pass
    weight_decay:     the probe's L2 penalty on standardised features (the paper states none)
    passthrough_size: input side of the raw-pixel baseline (None: the backbones'); 64 at ImageNet scale,
                      because 20,000 pairs of 224 px views would be 12 GB of differences per task
    seeds:            training seeds of the backbones (chapter A1's ResNet-18 against ResNet-50 compares two
                      architectures, so a seed, not a pair, is its replicate): seed k's ``zoo:`` backbone is the zoo's
                      entry of seed k (its initialisation, data order and draw of training images), seed k's
                      ``random:`` one seed k's initialisation; seed 0's are ``backbones``. Hub weights and weight files
                      have one seed (the paper's one model each). The images and views are the same for every seed
    seed:             the draw of the images and of the views

    Example
    -------
    >>> S = settings("cpu", n_train=100, root=None)
    >>> S.profile, S.dataset, S.n_train, S.n_val, S.backbones["ResNet-18"]
    ('cpu', 'fashion_mnist_color', 100, 1000, 'zoo:small_resnet18/standard')
    >>> settings("paper").n_train
    65000
    """

    profile: str = "paper"
    dataset: str = "imagenet"
    root: str | None = None
    n_train: int = 65_000
    n_val: int = 21_000
    backbones: dict[str, str] = field(default_factory=lambda: dict(_HUB))
    variants: dict[str, str] = field(default_factory=lambda: dict(_HUB_VARIANTS))
    source_size: int | None = 256
    canvas: float = 1.0
    background: str = "auto"
    batch_size: int = 512
    weight_decay: float = 1e-3
    passthrough_size: int | None = 64
    seeds: int = 1
    seed: int = 0
    device: str = "auto"  # filled from the profile by invlib.profiles.settings
    progress: bool = True  # likewise


# The small profiles' garments sit on a textured background (issue 58, item 6; declared before the build): on black,
# raw pixels ranked zoom-out and contrast 100 % right (eec49a3's cold build), a cue photographs lack, so the claims
# that set the backbones against pixels read "premise not met". On the texture (probes.textured_background) a
# smoke-sized check at cpu's pairs had pixels at 73 % (zoom-out) and 84 % (contrast), against the paper's 46-62 %.
_SMALL = dict(dataset="fashion_mnist_color", backbones=_ZOO, variants=_ZOO_VARIANTS, source_size=None, canvas=1.5,
              batch_size=128, passthrough_size=None)


SETTINGS = {  # profile -> the fields it changes (see Settings)
    "smoke": dict(_SMALL, n_train=256, n_val=256),
    # cpu: 600 training pairs, every A1 and A2 verdict as with 1,000 and 1,500 (benchmarks/measurements/a.md).
    # seeds 3: "ResNet-18 ranks at least as well as ResNet-50" is about two trained architectures, and a training seed
    # is its replicate; three, the protocol's n_min, the fewest that can decide it. Seeds 1 and 2 are four zoo models
    # more for the training phase (each seed's ResNet-18 and ResNet-50) and their Table 1 probes in A1 (2 backbones
    # x 7 tasks a seed; smoke-measured cost in benchmarks/measurements/a.md). A2 reads seed 0 only.
    # n_val 1,000 (issue 58, item 4; declared before the build): on the textured background, ResNet-50's lead over
    # raw pixels read 10.0 [6.0, 14.4] points on zoom-out and 11.0 [5.0, 17.2] on aspect ratio over 500 validation
    # pairs (boundary 6.2); the pairs are these claims' replicates, and a pair costs a few ms of features.
    # n_val 3,812 (issue 58, item 4; declared before the build that decides it, 2026-11-30: the plan of 6a3fb31's cold
    # build at 8,800 s of replicates, every family at least the n it ran, benchmarks/measurements/plan_8800.md; expected
    # decided 71 -> 74.2 as applied):
    # A2's table2/first_half_beats_second (zoom-in and hue open over 1,000 pairs) 1.0 -> 1.5 expected; A1 reads the
    # same validation pairs (its six claims are decided at 1,000).
    # Back to 1,000 (issue 58, item 4; declared before the build that decides it, 2026-11-30): in a2c09a9's, b79890b's
    # and df84f9f's cold builds the 3,812 pairs decided nothing more than 1,000 had (A2's first_half_beats_second stayed
    # open, on zoom-in), and they cost A1 about 160 s and A2 about 35 s of a build over its 40 minutes. A1's six
    # image-pair claims sit 5-25 points from their boundaries with intervals of 1-2 points at 3,812.
    "cpu": dict(_SMALL, n_train=600, n_val=1000, seeds=3),
    "gpu": dict(n_train=20_000, n_val=5_000),
}


def settings(profile: str | Profile = "cpu", **overrides) -> Settings:
    """Chapters A1 and A2's settings: the paper's, then the profile's changes (:data:`SETTINGS`), then the
    overrides that are not ``None``; type-checked, unknown names list the valid ones.

    Example
    -------
    >>> settings("smoke", n_train=20).n_train, settings("paper").backbones["ResNet-18"]
    (20, 'tv/resnet18')
    """
    S = _settings(Settings, SETTINGS, profile, **overrides)
    if S.seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {S.seeds}.")
    return S


def zoo_specs(specs: dict[str, str], profile: str | Profile = "cpu", seeds: int = 1) -> list[zoo.Spec]:
    """The :class:`invlib.zoo.Spec` of every ``zoo:`` entry among the model specs ``{label: spec}`` (what
    :func:`featurizers` loads through :func:`invlib.zoo.load`: the entry under the profile, whatever the chapter's
    dataset); hub weights, files and random initialisations are no zoo models.

    Example
    -------
    >>> [s.name for s in zoo_specs({"a": "zoo:small_resnet18/none", "b": "random:small_resnet18"}, "smoke")]
    ['small_resnet18/none']
    >>> [(s.name, s.seed) for s in zoo_specs({"a": "zoo:small_resnet18/none"}, "smoke", seeds=2)]  # seed by seed
    [('small_resnet18/none', 0), ('small_resnet18/none', 1)]
    """
    prof = get_profile(profile)
    return [zoo.spec(spec[4:], prof, seed=k) for k in range(seeds) for spec in specs.values()
            if spec.startswith("zoo:")]


def a1_zoo_specs(profile: str = "cpu", **params) -> list[zoo.Spec]:
    """The zoo models chapter A1's run loads, for its papermill parameters ``params``: its backbones, every seed of
    ``seeds`` (seed 0's are chapter A2's too).

    Example
    -------
    >>> [s.name for s in a1_zoo_specs("smoke", n_train=None)]
    ['small_resnet18/standard', 'small_resnet50_s2/standard']
    >>> [(s.arch, s.seed) for s in a1_zoo_specs("cpu")]  # doctest: +NORMALIZE_WHITESPACE
    [('small_resnet18', 0), ('small_resnet50_s2', 0), ('small_resnet18', 1), ('small_resnet50_s2', 1),
     ('small_resnet18', 2), ('small_resnet50_s2', 2)]
    """
    S = settings(profile, **params)
    _check_seeds(S)
    return zoo_specs(S.backbones, S.profile, S.seeds)


def a2_zoo_specs(profile: str = "cpu", **params) -> list[zoo.Spec]:
    """The zoo models chapter A2's run loads, for its papermill parameters ``params``: its backbones and the
    variants of "does training change it?".

    Example
    -------
    >>> [s.name for s in a2_zoo_specs("smoke", backbones={"ResNet-18": "zoo:small_resnet18/standard"})]
    ['small_resnet18/standard', 'small_resnet18/untrained', 'small_resnet18/none', 'small_resnet18/standard']
    """
    S = settings(profile, **params)
    return zoo_specs(S.backbones, S.profile) + zoo_specs(S.variants, S.profile)


# Table 1 and Table 2 of the paper: (train, validation) accuracy in %
PAPER_TABLE1 = {
    "Passthrough": dict(zoom_in=(97.7, 46.4), zoom_out=(98.5, 51.8), aspect_ratio=(98.7, 54.9), hue=(94.0, 65.0),
                        saturation=(97.5, 98.9), contrast=(100.0, 62.0), brightness=(100.0, 100.0)),
    "DCT": dict(zoom_in=(56.8, 46.6), zoom_out=(57.5, 52.4), aspect_ratio=(54.1, 57.7)),
    "ResNet-18": dict(zoom_in=(93.9, 90.1), zoom_out=(82.4, 68.8), aspect_ratio=(87.6, 80.9), hue=(87.6, 71.6),
                      saturation=(97.5, 98.3), contrast=(100.0, 100.0), brightness=(100.0, 100.0)),
    "ResNet-50": dict(zoom_in=(90.8, 84.9), zoom_out=(77.6, 64.8), aspect_ratio=(85.9, 81.3), hue=(84.0, 66.0),
                      saturation=(95.2, 94.0), contrast=(99.7, 99.7), brightness=(99.3, 98.8)),
}


PAPER_TABLE2 = {  # ResNet-18 probes on some of its layers
    "first half": dict(zoom_in=(95.3, 91.0), aspect_ratio=(92.6, 91.8), hue=(78.9, 72.9)),
    "second half": dict(zoom_in=(91.7, 86.9), aspect_ratio=(83.7, 74.2), hue=(86.9, 68.4)),
    "all": dict(zoom_in=(93.9, 90.1), aspect_ratio=(87.6, 80.9), hue=(87.6, 71.6)),
}


# the paper's Figures 5 and 6 order tasks roughly from low level (colour) to high level (scale, aspect ratio)
ORDER = ("brightness", "saturation", "hue", "contrast", "aspect_ratio", "zoom_in", "zoom_out")


COLOUR = ("brightness", "saturation", "hue")


# ----------------------------------------------------------------------------------------- images and backbones
def load_images(dataset: str, n_train: int, n_val: int, seed: int = 0, root=None, source_size: int | None = None,
                canvas: float = 1.0, cap: bool = False, background: str = "auto", **filters):
    """Disjoint train and validation images with boxes: ``((images, boxes), (images, boxes))``.

    Images are the first ``n_train + n_val`` of the train split under ``seed`` (the paper draws both sets
    from ImageNet's training split); ``canvas > 1`` adds a black margin (:func:`add_margin`); ``background``
    ``"texture"`` then fills the black around each object with a random texture
    (:func:`~invlib.papers.a.probes.textured_background`; ``"as_is"``: left as it is; ``"auto"``: texture for the
    datasets of objects on black, ``probes.ON_BLACK``); ImageNet is
    filtered with :func:`ilsvrc_filter` (``filters``: its arguments). Datasets without boxes use the whole
    image as the box (then only a canvas leaves room to zoom out). One-channel images are repeated to three
    (the backbones take RGB). ``cap``: a dataset with fewer images gives all it has, split in the ratio
    ``n_train : n_val``, with a printed note.

    Example
    -------
    >>> (tr, trb), (va, vab) = load_images("fashion_mnist_color", 10, 5, canvas=1.5)
    >>> tr.shape, va.shape, trb.shape
    (torch.Size([10, 3, 42, 42]), torch.Size([5, 3, 42, 42]), torch.Size([10, 4]))
    """
    from ... import data

    opts = {"box_filter": ilsvrc_filter(**filters)} if dataset == "imagenet" else {}
    ds = data.load(dataset, "train", root=root, n=n_train + n_val, seed=seed, size=source_size, cap=cap,
                   channels=3, **opts).with_whole_boxes()
    images, boxes = ds.images, ds.boxes
    if len(images) < n_train + n_val:
        if len(images) < 2:
            raise ValueError(f"{dataset} has {len(images)} image(s); the probes need at least one training and "
                             "one validation image.")
        n_val = max(1, round(len(images) * n_val / (n_train + n_val)))
        n_train = len(images) - n_val
        print(f"note: {n_train} training and {n_val} validation images (the ratio asked for).")
    if canvas != 1.0:
        images, boxes = add_margin(images, boxes, canvas)
    if texture(dataset, background):
        images = textured_background(images, seed=seed + 1)
    return ((streaming.rows(images, slice(0, n_train)), boxes[:n_train]),
            (streaming.rows(images, slice(n_train, None)), boxes[n_train:]))


def texture(dataset: str, background: str = "auto") -> bool:
    """Whether ``background`` puts a random texture behind the objects of ``dataset`` (:func:`load_images`).

    Example
    -------
    >>> texture("fashion_mnist_color"), texture("folder"), texture("folder", "texture")
    (True, False, True)
    """
    choice = check_choice(background, BACKGROUNDS, "background")
    return choice == "texture" or (choice == "auto" and dataset in ON_BLACK)


def chapter_images(S: Settings, quiet: bool = False):
    """:func:`load_images` for a chapter's :class:`Settings`, capped at what the dataset holds, with one line
    printed (unless ``quiet``; :func:`image_facts` gives the same facts for a chapter's prose): how many images of
    which shape, the zoom-out slack, and the tasks these images cannot pose.

    Returns ``((images (N, 3, H, W) uint8, boxes (N, 4)), (images, boxes))``: training, validation.

    Example
    -------
    >>> train, val = chapter_images(settings("smoke", n_train=20, n_val=10))  # doctest: +ELLIPSIS
    fashion_mnist_color: 20 training + 10 validation images of (3, 42, 42); zoom-out slack s from 0.33 to ...
    >>> train[0].shape, val[1].shape
    (torch.Size([20, 3, 42, 42]), torch.Size([10, 4]))
    """
    train, val = load_images(S.dataset, S.n_train, S.n_val, seed=S.seed, root=S.root, source_size=S.source_size,
                             canvas=S.canvas, background=S.background, cap=True)
    if not quiet:
        f = image_facts(S, train, val)
        undefined = undefined_tasks(train[0])
        print(f"{S.dataset}: {f['n_train_images']:,} training + {f['n_val_images']:,} validation images of "
              f"{tuple(train[0].shape[1:])}; zoom-out slack s from {f['slack_lo']:.2f} to {f['slack_hi']:.2f}"
              + "".join(f"; {t} undefined: {why}" for t, why in undefined.items()))
    return train, val


def image_facts(S: Settings, train, val) -> dict:
    """What a chapter's prose says about its images (:func:`chapter_images`), for :func:`invlib.results.glue`:
    ``dataset`` (text), ``n_train_images``, ``n_val_images``, ``side`` (pixels, the canvas included),
    ``canvas`` (its factor), ``background`` (text: what surrounds the objects), ``slack_lo``, ``slack_hi`` (the
    zoom-out slack s over the training images) and ``undefined`` (text: the tasks these images cannot pose and why,
    or "none").

    Example
    -------
    >>> S = settings("smoke", n_train=20, n_val=10)
    >>> f = image_facts(S, *chapter_images(S, quiet=True))
    >>> f["n_train_images"], f["side"], f["canvas"], f["undefined"]
    (20, 42, 1.5, 'none')
    """
    slack = zoom_out_slack(train[1], train[0].shape[-2:])
    undefined = undefined_tasks(train[0])
    return dict(dataset=f"`{S.dataset}`", n_train_images=len(train[0]), n_val_images=len(val[0]),
                side=int(train[0].shape[-1]), canvas=float(S.canvas), slack_lo=float(slack.min()),
                background=("a random texture of random brightness" if texture(S.dataset, S.background) else
                            "the images' own background"),
                slack_hi=float(slack.max()),
                undefined="; ".join(f"{t} ({why})" for t, why in undefined.items()) or "none")


def featurizers(specs: dict[str, str], profile="cpu") -> tuple[dict, dict]:
    """``({label: Backbone}, {label: input side})`` for backbone specs ``{label: spec}`` (:func:`invlib.zoo.load`).

    Example
    -------
    >>> feats, sizes = featurizers({"R-18": "random:small_resnet18"}, "smoke")
    >>> feats["R-18"].name, sizes
    ('r18', {'R-18': 224})
    """
    feats, sizes = {}, {}
    for label, spec in specs.items():
        model, sizes[label] = zoo.load(spec, profile)
        feats[label] = Backbone(model, name=label.lower().replace("-", ""))
    return feats, sizes


def _check_seeds(S: Settings) -> None:
    hub = [spec for spec in S.backbones.values() if not spec.startswith(("zoo:", "random:"))]
    if S.seeds > 1 and hub:
        raise ValueError(f"seeds {S.seeds}: hub weights and weight files have one seed ({', '.join(hub)}); seeds > 1 "
                         "need zoo: or random: backbones (or seeds=1).")


def seed_featurizers(S: Settings, seed: int) -> tuple[dict, dict]:
    """``({label: Backbone}, {label: input side})`` of seed ``seed`` of ``S.backbones`` (:attr:`Settings.seeds`):
    seed 0 is :func:`featurizers`'; seed k of a ``zoo:`` entry is the zoo's entry of seed k under the profile
    (trained on first use), of a ``random:`` model seed k's initialisation. Hub weights and weight files have seed 0
    only.

    Example
    -------
    >>> S = settings("smoke", backbones={"R-18": "random:small_resnet18"}, seeds=2)
    >>> (a, _), (b, sizes) = seed_featurizers(S, 0), seed_featurizers(S, 1)
    >>> a["R-18"].key != b["R-18"].key, sizes
    (True, {'R-18': 224})
    """
    from ... import models
    from ...utils import resolve_device

    if seed == 0:
        return featurizers(S.backbones, S.profile)
    _check_seeds(S)
    prof = get_profile(S.profile)
    feats, sizes = {}, {}
    for label, spec in S.backbones.items():
        if spec.startswith("zoo:"):
            model, sizes[label] = zoo.get(zoo.spec(spec[4:], prof, seed=seed), prof), prof.img_size
        else:
            model = models.create(spec[7:], num_classes=1000, seed=seed).to(resolve_device(prof.device)).eval()
            sizes[label] = 224
        feats[label] = Backbone(model, name=label.lower().replace("-", ""))
    return feats, sizes


def training_seconds(feats: dict) -> float:
    """The seconds the zoo's training of the backbones among ``feats`` took, summed (``model.zoo_info["seconds"]``,
    measured when each was trained; 0 for a backbone the zoo did not train): what one seed of them costs.

    Example
    -------
    >>> from invlib import models
    >>> m = models.create("small_resnet18"); m.zoo_info = {"seconds": 12.5}
    >>> training_seconds({"a": Backbone(m), "b": Passthrough()})
    12.5
    """
    return float(sum(zoo.train_seconds(getattr(f, "model", None)) for f in feats.values()))


@dataclass
class SeedRuns:
    """The other seeds of chapter A1's backbones (:func:`run_seeds`): ``tables[k]`` is :func:`run_table`'s table of
    seed k's backbones (seeds 1 to ``S.seeds - 1``; seed 0's is the chapter's own), ``seconds[k]`` what training
    seed k's backbones took (seed 0 included)."""

    tables: dict
    seconds: list


def run_seeds(S: Settings, train, val, seed0: dict, tasks=None) -> SeedRuns:
    """Table 1's probes on the backbones of every seed but 0 (:func:`seed_featurizers`), on the same images, views
    and tasks (default all) as seed 0's; ``seed0``: seed 0's featurizers (:func:`featurizers`), for their training
    seconds.

    Example
    -------
    >>> run_seeds(settings("smoke", seeds=1), None, None, {"pixels": Passthrough()})  # one seed: seed 0's alone
    SeedRuns(tables={}, seconds=[0.0])
    """
    out = SeedRuns({}, [training_seconds(seed0)])
    for k in range(1, S.seeds):
        feats, sizes = seed_featurizers(S, k)
        out.tables[k] = run_table(feats, train, val, tasks=tasks, sizes=sizes, **run_options(S))[0]
        out.seconds.append(training_seconds(feats))
    return out


def baselines(size: int, passthrough_size: int | None = None) -> tuple[dict, dict]:
    """The paper's baselines and their input sides: raw pixels ("Passthrough", at ``passthrough_size`` or
    ``size``), the signed block DCT ("DCT") and, as the paper's Figure 3 pools it, the DCT of magnitudes.

    Example
    -------
    >>> feats, sizes = baselines(28, 16)
    >>> list(feats), sizes["Passthrough"], sizes["DCT"]
    (['Passthrough', 'DCT', 'DCT (magnitude)'], 16, 28)
    """
    feats = {"Passthrough": Passthrough(), "DCT": DCT(), "DCT (magnitude)": DCT(magnitude=True)}
    return feats, {name: size for name in feats} | {"Passthrough": passthrough_size or size}


def run_options(S: Settings) -> dict:
    """The keyword arguments of :func:`run_table` that come from the settings and their profile.

    Example
    -------
    >>> sorted(run_options(settings("smoke")))
    ['batch_size', 'device', 'progress', 'seed', 'weight_decay']
    """
    return dict(seed=S.seed, weight_decay=S.weight_decay, batch_size=S.batch_size, device=S.device,
                progress=S.progress)


def run_table(featurizers: dict, train, val, tasks=None, sizes=None, seed: int = 0, weight_decay: float = 1e-3,
              batch_size: int = 128, device=None, progress: bool = False, layers=None, folds: int | None = None):
    """Probe every featurizer on every task: ``(table, trained)``.

    ``train``/``val``: ``(images, boxes)`` from :func:`load_images`; ``sizes``: input side per featurizer;
    ``layers``: a function ``groups -> {label: [layer names]}`` (e.g. :func:`halves`) to probe layer subsets
    instead of all layers (label ``"all"``).

    Featurizers of the same input side share the rendering of the views (:func:`extract_many`).
    ``table`` has one row per (featurizer, layers, task), in featurizer order: ``train_acc``, ``val_acc``
    (fractions), ``val_correct`` (per validation pair, :func:`correct`, as a numpy bool array: the items a
    claim about these backbones resamples), ``fold_depth`` (with ``folds``: :func:`fold_depths` of the probe on
    all layers; else empty), ``pairs``, ``seconds`` (feature extraction, ~0 when cached) and ``undefined`` (why
    the images cannot pose the task, see :func:`undefined_tasks`; then the accuracies are NaN, the arrays empty
    and nothing is trained, else "");
    ``trained[(featurizer, layers, task)]`` is the trained :class:`Probe`.

    Example
    -------
    >>> imgs = torch.randint(0, 255, (40, 3, 16, 16), dtype=torch.uint8)
    >>> boxes = torch.tensor([[4.0, 4.0, 12.0, 12.0]]).expand(40, 4)
    >>> table, trained = run_table({"pixels": Passthrough()}, (imgs[:30], boxes[:30]), (imgs[30:], boxes[30:]),
    ...                            tasks=["brightness"], sizes={"pixels": 16})
    >>> table.featurizer.tolist(), table.task.tolist(), table.pairs.tolist(), table.val_correct[0].shape
    (['pixels'], ['brightness'], [30], (10,))
    """
    import numpy as np
    import pandas as pd

    rows, trained = [], {}
    keys = {"train": data_digest(*train), "val": data_digest(*val)}
    undefined = undefined_tasks(train[0])
    common = dict(batch_size=batch_size, device=device, progress=progress)
    for task in tasks or list(TASKS):
        if task in undefined:
            for fname, feat in featurizers.items():
                labels = layers(feat.groups) if layers and feat.groups else {"all": None}
                rows += [dict(featurizer=fname, layers=label, task=task, train_acc=math.nan, val_acc=math.nan,
                              val_correct=np.zeros(0, bool), fold_depth=(), pairs=0, seconds=0.0,
                              undefined=undefined[task]) for label in labels]
            continue
        tr, va = {}, {}
        for side in dict.fromkeys(sizes[f] for f in featurizers):  # one rendering per input side
            group = {f: feat for f, feat in featurizers.items() if sizes[f] == side}
            tr |= extract_many(group, *train, task, side, seed=seed, data_key=keys["train"], **common)
            va |= extract_many(group, *val, task, side, seed=seed + 1, data_key=keys["val"], **common)
        for fname in featurizers:
            seconds = tr[fname].seconds + va[fname].seconds
            for label, names in (layers(tr[fname].groups) if layers else {"all": None}).items():
                probe = train_probe(tr[fname], names, weight_decay)
                trained[fname, label, task] = probe
                right = correct(probe, va[fname]).numpy()
                replicates = fold_depths(tr[fname], folds, weight_decay) if folds and label == "all" else ()
                rows.append(dict(featurizer=fname, layers=label, task=task, train_acc=accuracy(probe, tr[fname]),
                                 val_acc=float(right.mean()), val_correct=right, fold_depth=replicates,
                                 pairs=len(tr[fname]), seconds=round(seconds, 2), undefined=""))
    order = {f: k for k, f in enumerate(featurizers)}
    table = pd.DataFrame(rows)
    return table.iloc[table.featurizer.map(order).argsort(kind="stable")].reset_index(drop=True), trained


def layer_importance(trained: dict, names: list[str], tasks=ORDER) -> dict:
    """``{(backbone, "mean" | "max"): DataFrame tasks x layers}`` of :func:`importance` (each row sums to 1),
    from :func:`run_table`'s probes on all layers; tasks without a probe (undefined) are left out.

    Example
    -------
    >>> from invlib.papers.a.probes import Probe
    >>> p = Probe(torch.tensor([1.0, 3.0, 4.0]), torch.ones(3), torch.arange(3), [("a", 2), ("b", 1)], 0.0)
    >>> layer_importance({("R", "all", "hue"): p}, ["R"])["R", "mean"].round(2).to_dict("index")
    {'hue': {'a': 0.33, 'b': 0.67}}
    """
    import pandas as pd

    out = {}
    for name in names:
        per_task = {t: importance(trained[name, "all", t]) for t in tasks if (name, "all", t) in trained}
        for agg in ("mean", "max"):
            out[name, agg] = pd.DataFrame({t: imp[agg] for t, imp in per_task.items()}).T
    return out


def layer_depths(maps: dict, names: list[str]):
    """``(depths, first_block)``: per task (rows) and backbone (columns), the importance-weighted depth
    (:func:`depth`, 0 = first layer) and the share of the stem and first stage, from the "mean" maps of
    :func:`layer_importance`.

    Example
    -------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"stem.0": [0.5], "layer1.0": [0.25], "layer2.0": [0.25]}, index=["hue"])
    >>> depths, first = layer_depths({("R", "mean"): m}, ["R"])
    >>> float(depths.loc["hue", "R"]), float(first.loc["hue", "R"])
    (0.375, 0.75)
    """
    import pandas as pd

    depths = pd.DataFrame({n: {t: depth(row) for t, row in maps[n, "mean"].iterrows()} for n in names})
    first = {}
    for n in names:
        m = maps[n, "mean"]
        first[n] = m[[c for c in m.columns if c.split(".")[0] in ("stem", "conv1", "bn1", "layer1")]].sum(axis=1)
    return depths, pd.DataFrame(first)
