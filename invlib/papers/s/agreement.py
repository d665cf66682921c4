"""Synthesis (chapter S1): every paper's measure of invariance on the same models, and where invariance comes from.

Each paper measures invariance its own way. This module applies all of them, through the papers' own public
functions (no measure is implemented a second time), to one set of models:

- **the models** (:func:`models`; trained or loaded by :func:`train`): every model variant the book trains on
  ``scenes`` (56 px views of 64 px scenes) that another chapter has already trained, ``seeds`` seeds each. Paper B's
  small ResNet in chapter B1's recipe, trained without augmentation (B1's fixed central crop), with
  RandomResizedCrop, with B1's other crops (translation: B1's fixed-size random crop; scale: B1's random-size
  central crop; a shift of the central crop, alone, then with a random-size crop, with and without its aspect
  ratio), with chapter B2's RandomResizedCrop at its other Beta shapes of the crop's area, with rotation or
  brightness (:func:`invlib.zoo.random_op`, the two this chapter trains) and untrained;
  chapter B6's Augerino runs (every regulariser weight and group it runs; measured without the learned
  augmentation); chapter D2's crop family (paper D's InstaAug, its ablations, Augerino and the random crop, each
  method and fixed weight D2 trains on whole 56 px scenes, measured without the learned crops); chapter B7's models
  at variation 0 of the scenes (without augmentation and with RandomResizedCrop); chapter B3's ResNet and ViT,
  trained without augmentation and with its standard augmentation. The recipes are
  those chapters' settings (:func:`invlib.papers.b.rrc.settings`, ...), read, not copied; :func:`s1_zoo_specs`
  lists the zoo models.
- **the measures** (:func:`measure`), for each transformation of :data:`TRANSFORMS` the measure has:
  accuracy under the transformation (paper B's grids, mean over the levels, read from the forward passes of B's
  sweep, :func:`sweep_predictions`); A's ranking-probe accuracy on the
  embedding (:func:`invlib.papers.a.probes.extract`, ``train_probe``, ``accuracy``); B's relative invariance and
  equivariance alignment (:func:`invlib.papers.b.similarity.sweep`); C's invariance and equivariance through
  ``M_g`` and the normalised L2 distance (:func:`invlib.papers.c.equivariance.measure_network`). Every measure is
  taken on the embedding the classifier reads (``pre_logits``); the untrained models and D2's get the accuracy and
  B's measures only (:func:`sweep_only`).
- **agreement** (:func:`agreement`, :func:`pooled_agreement`): Spearman's rho between two measures across the models
  per transformation, and its average over the transformations with a bootstrap interval over whole variants;
  **sources** (:func:`sources`): what the data's variation, augmentation, architecture and training each change in
  one measure.

This module is the one above the papers: it imports paper modules (A, B, C, D), which never import each other.
The chapter's claims, tables and figures are :mod:`invlib.papers.s.agreement_reports`.

Example
-------
>>> S = settings("smoke")
>>> [m.name for m in models(S)][:3]
['none 0', 'standard 0', 'translation 0']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ... import data, zoo
from ...crops import stored_size
from ...models import mark_precision, measuring, precision, weights_key
from ...profiles import settings as _settings
from ...utils import cached, check_choice, digest
from ...utils import progress as bar
from ...verdicts import Interval, rank_correlation
from ..a import probes
from ..b import grounding, rrc, similarity
from ..c import equivariance
from ..d import cropping

CACHE_VERSION = 2  # 2: accuracy under T from the sweep's forward passes (the same numbers); sweep_only

# One transformation, as each measure has it (None: the measure has no such transformation):
# A's ranking task, B's grid (also the grid of "accuracy under"), C's type and its fixed values.
TRANSFORMS = {
    "translation": dict(a=None, b="translate", c=("crop", (10, 14))),  # the windows left and right of the centre
    "zoom": dict(a="zoom_in", b="zoom_in", c=None),
    "rotation": dict(a=None, b="rotate", c=("rotation", (-30.0, 30.0))),
    "brightness": dict(a="brightness", b="brightness_up", c=("color_jitter", (-45.0, 45.0))),
}
# The models trained with one transformation, per transformation they are about: B1's crop methods, and the two
# augmentations this chapter trains (rotation within +-``rotation`` degrees, brightness factor in ``brightness``).
AUGMENTED = {"translation": "translation", "zoom": "scale", "rotation": "rotation", "brightness": "brightness"}
# B1's crop methods by variant: the central crop (none), RRC (standard), the two that each vary one factor of it
# (translation, scale: claim 1's augmented models) and the shifted central crop, alone and before a random-size crop
# (with and without the aspect ratio), which B1 trains for its decomposition
B1_METHODS = {"none": rrc.NONE, "standard": rrc.RRC, "translation": "fixed_size_random_crop",
              "scale": "random_size_center_crop", "shift": "translate",
              "shift_scale": "translate_random_size_center_crop",
              "shift_scale_square": "translate_random_size_center_crop_no_ar"}
# measure -> (column name, +1 if larger means more invariant, -1 if smaller does, 0: not an invariance score)
MEASURES = {
    "accuracy": ("accuracy under T (%)", 1),
    "a_probe": ("A: probe ranks T (acc.)", -1),
    "b_invariance": ("B: relative invariance", 1),
    "b_alignment": ("B: equivariance alignment", 0),
    "c_inv_acc": ("C: invariance acc. (%)", 1),
    "c_inv_l2": ("C: invariance L2", -1),
    "c_eq_acc": ("C: equivariance acc. (%)", 0),
}


@dataclass(frozen=True)
class Settings:
    """What chapter S1 runs on. No paper has this experiment: the defaults are the cpu profile's.

    Attributes
    ----------
    profile:      the profile's name (filled in by :func:`settings`); the models' recipes are chapter B1's,
                  B2's, B6's, B7's, B3's and D2's at this profile
    seeds:        seeds per model variant (B1's recipe: :data:`VARIANTS`; B2's Beta shapes; B7's models at
                  variation 0; B3's ResNet and ViT; B6's Augerino runs: as many as B6 runs, up to this); the claims
                  about what training does need 3 (``N_MIN`` of :mod:`invlib.papers.s.protocol`). A seed B1, B2,
                  B7 or B3 does not train is trained here
    rotation:     the rotation models' training range, +- degrees
    brightness:   the brightness models' factor range
    transforms:   the transformations measured (:data:`TRANSFORMS`)
    levels:       paper B's grid levels measured (0 = none, 9 = the largest; the cpu profile takes the lower half,
                  where the models' training ranges lie: translation by 11-56 % of the side, zoom 1.3-2.4x,
                  rotation 27-90 degrees, brightness x1.1-1.6)
    n_probe:      scenes of B's sweep and of the accuracy under each transformation
    n_pairs:      scenes whose views train A's probe (as many again test it)
    n_fit, n_eval, map_epochs: C's maps: fitted on ``n_fit`` training scenes, scored on ``n_eval``
    augerino:     with chapter B6's Augerino runs (B1's recipe, each group and regulariser weight B6 runs),
                  measured without their learned augmentation (their trunks)
    augerino_reg: the regulariser weight of the run (translation then scale) whose learned range the chapter shows
    variation:    with chapter B7's models trained on scenes at variation 0 (without augmentation and with RRC)
    architectures: with chapter B3's ResNet and ViT trained without augmentation (the architecture factor) and
                  with B3's standard augmentation
    crop_seeds:   seeds of chapter D2's crop family measured (each method and fixed weight D2 trains, its first
                  seeds, as many as D2 runs at most; 0: none), without their learned crops (their classifiers), by
                  the sweep only: more variants, trained by the book already, for the claim on the accuracy
                  under a transformation and B's invariance
    resamples:    of the bootstrap intervals over variants
    seed:         the draw of the scenes and of every random part of the measures
    """

    profile: str = "cpu"
    seeds: int = 3
    rotation: float = 45.0
    brightness: tuple[float, float] = (0.5, 2.0)
    transforms: tuple[str, ...] = tuple(TRANSFORMS)
    levels: tuple[int, ...] = (0, 1, 3, 5)
    # n_probe, n_pairs 192 and n_fit, n_eval 128: every verdict as with 256 and 192, for a fifth less time
    # (benchmarks/measurements/b.md)
    n_probe: int = 192
    n_pairs: int = 192
    n_fit: int = 128
    n_eval: int = 128
    map_epochs: int = 10
    augerino: bool = True
    augerino_reg: float = 0.1
    variation: bool = True
    architectures: bool = True
    # D2's crop family, one seed a variant, by the sweep only (declared before the build that decides it,
    # 2026-12-01): s1/accuracy_tracks_invariance read +0.649 [+0.496, +0.750] over 20 variants (boundary 0.5; the plan:
    # 21 would decide it) and rests on the sweep alone, as D2's eight variants are measured (0.9 s a model here, against
    # 3.2 s with A's probe and C's maps; S1 took 101.0 s of its 102 at 883 img/s in c594875's cold build). The claims
    # on A's probe and C's maps keep their 20 variants: one is decided, the other needs 56 (benchmarks/measurements).
    crop_seeds: int = 1
    resamples: int = 2000
    seed: int = 0
    device: str = "auto"
    progress: bool = True

    def __post_init__(self):
        for t in self.transforms:
            check_choice(t, TRANSFORMS, "transformation")
        if self.levels[:1] != (0,) or len(self.levels) < 2 or not all(0 <= lv <= 9 for lv in self.levels):
            raise ValueError(f"levels are B's grid levels 0..9, starting with 0 (none) and one more; got "
                             f"{self.levels}.")
        if self.seeds < 1 or min(self.n_probe, self.n_pairs, self.n_fit, self.n_eval) < 2:
            raise ValueError("seeds must be at least 1; n_probe, n_pairs, n_fit and n_eval at least 2.")
        if self.crop_seeds < 0:
            raise ValueError(f"crop_seeds: D2's seeds measured, 0 or more; got {self.crop_seeds}.")


SETTINGS = {
    "smoke": dict(seeds=1, levels=(0, 9), n_probe=64, n_pairs=64, n_fit=64, n_eval=64, map_epochs=2,
                  transforms=("translation", "rotation", "brightness")),
    "gpu": dict(seeds=3, levels=tuple(range(10)), n_probe=1000, n_pairs=2000, n_fit=5000, n_eval=2000),
    "paper": dict(seeds=3, levels=tuple(range(10)), n_probe=1000, n_pairs=2000, n_fit=5000, n_eval=2000),
}


def settings(profile: str = "cpu", **overrides) -> Settings:
    """Chapter S1's settings: the defaults, the profile's changes, then the overrides that are not None.

    Example
    -------
    >>> settings("smoke").levels, settings("cpu").seeds, settings("cpu", seeds=2).seeds
    ((0, 9), 3, 2)
    >>> settings("smoke", transforms=("shear",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown transformation 'shear'. Valid transformations: brightness, rotation, translation, zoom.
    """
    return _settings(Settings, SETTINGS, profile, **overrides)


# ------------------------------------------------------------------------------ the family
@dataclass(frozen=True)
class Model:
    """One model of the family: ``variant`` (none, standard, one of B1's other crops, a single transformation,
    untrained, an Augerino run, one of D2's crop family), ``seed``, ``arch`` (ResNet or ViT), ``variation`` of its
    training scenes, ``recipe`` (the chapter whose recipe trained it: B1, B2, B6, B7, B3 or D2), and where it comes
    from (``spec``: a zoo spec, a ``zoo:`` name of B3's, B6's ``(group, regulariser weight)``, or D2's model label,
    e.g. ``"instaaug"``)."""

    variant: str
    seed: int
    arch: str = "ResNet"
    variation: float = 1.0
    recipe: str = "B1"
    spec: object = None

    @property
    def name(self) -> str:
        base = self.variant if self.recipe != "B3" else f"{self.arch} {self.variant}"
        return f"{base}{' (variation 0)' if self.variation == 0 else ''} {self.seed}"


def _b1(S: Settings):
    return rrc.settings(S.profile, device=S.device, progress=S.progress)


def _b1_spec(B, variant: str, seed: int, rotation: float, brightness) -> zoo.Spec:
    if variant in B1_METHODS:
        return rrc.spec(B, B1_METHODS[variant], seed)
    if variant == "untrained":
        return rrc.spec(B, rrc.NONE, seed).replace(epochs=0)
    op, low, high = ("rotate", -rotation, rotation) if variant == "rotation" else ("brightness", *brightness)
    return B.spec("random_op", dict(op=op, low=low, high=high, size=B.size), seed, n_test=min(B.n_test, 2000),
                  img_size=stored_size(B.size))


VARIANTS = ("none", "standard", "translation", "scale", "shift", "shift_scale", "shift_scale_square", "rotation",
            "brightness", "untrained")
# Variants measured by the sweep only (the accuracy and B's measures): no claim reads an untrained model's A probe or
# C maps (the agreement claims leave the untrained models out; claim 5's "training" factor reads B's invariance)
SWEEP_ONLY = ("untrained",)


def sweep_only(m: Model) -> bool:
    """Whether model ``m`` is measured by the sweep only (the accuracy and B's measures): an untrained one
    (:data:`SWEEP_ONLY`), or one of chapter D2's (the variants the claim on the accuracy and B's invariance adds;
    ``Settings.crop_seeds`` says why).

    Example
    -------
    >>> sweep_only(Model("untrained", 0)), sweep_only(Model(crop_variant("instaaug"), 0, recipe="D2"))
    (True, True)
    >>> sweep_only(Model("none", 0))
    False
    """
    return m.variant in SWEEP_ONLY or m.recipe == "D2"


AUGERINO_WORDS = {"translation": "shift", "translation then scale": "shift+zoom"}  # B6's groups, short


def beta_variant(shape: float) -> str:
    """The variant name of chapter B2's RandomResizedCrop whose area fraction is drawn from ``Beta(1, shape)``.

    Example
    -------
    >>> beta_variant(0.1), beta_variant(10.0)
    ('standard beta 0.1', 'standard beta 10')
    """
    return f"standard beta {shape:g}"


def crop_variant(label: str) -> str:
    """The variant name of the model chapter D2 labels ``label`` (:attr:`invlib.papers.d.cropping.Trained.variant`:
    a method of its family, its random crop's range or a fixed weight).

    Example
    -------
    >>> crop_variant("instaaug"), crop_variant("fixed lambda 0.02")
    ('crops instaaug', 'crops fixed lambda 0.02')
    """
    return f"crops {label}"


def _d2(S: Settings) -> cropping.Cropping:
    """Chapter D2's settings at this profile, with ``S.crop_seeds`` of its seeds (its first ones, as many as it runs
    at most)."""
    D = cropping.settings(S.profile, device=S.device, progress=S.progress)
    return cropping.settings(S.profile, device=S.device, progress=S.progress, seeds=min(S.crop_seeds, D.seeds))


def augerino_variant(group: str, reg: float) -> str:
    """The variant name of chapter B6's Augerino run of ``group`` at regulariser weight ``reg``.

    Example
    -------
    >>> augerino_variant("translation then scale", 0.1), augerino_variant("translation", 1.0)
    ('augerino shift+zoom 0.1', 'augerino shift 1')
    """
    return f"augerino {AUGERINO_WORDS[check_choice(group, AUGERINO_WORDS, 'Augerino group')]} {reg:g}"


def models(S: Settings) -> list[Model]:
    """Every model of the chapter, ``S.seeds`` seeds of each variant: each of :data:`VARIANTS` (chapter B1's recipe
    and models; rotation and brightness are trained here), B2's RandomResizedCrop at its other Beta shapes of the
    crop's area, every Augerino run of chapter B6 (each group and
    regulariser weight, as many of its seeds as B6 runs up to ``S.seeds``), B7's models without augmentation and
    with RandomResizedCrop at variation 0, B3's ResNet and ViT trained without augmentation and with B3's
    standard augmentation (B3's zoo entries of those seeds, :func:`invlib.papers.b.grounding.load_model`), and
    chapter D2's crop family (:func:`invlib.papers.d.cropping.labels`, ``S.crop_seeds`` of D2's seeds).

    Example
    -------
    >>> fam = models(settings("cpu"))
    >>> len(fam), fam[0].spec.name, [m.name for m in fam[-2:]]
    (71, 'small_resnet18_s4/fixed_size_center_crop', ['crops class_specific 0', 'crops fixed lambda 0.02 0'])
    >>> len(models(settings("cpu", crop_seeds=0))), len(models(settings("cpu", crop_seeds=5)))
    (63, 87)
    >>> sorted({m.variant for m in fam if m.recipe == "B6"})
    ['augerino shift 0.01', 'augerino shift 1', 'augerino shift+zoom 0.1']
    """
    B = _b1(S)
    out = [Model(v, k, spec=_b1_spec(B, v, k, S.rotation, S.brightness)) for v in VARIANTS for k in range(S.seeds)]
    # B2's RandomResizedCrop with its area fraction drawn from another Beta shape (shape 1 is B1's RRC, above)
    out += [Model(beta_variant(a), k, recipe="B2", spec=rrc.spec(B, rrc.RRC, k, a)) for a in B.beta_shapes if a != 1
            for k in range(S.seeds)]
    if S.augerino:  # B6's runs: each group at each of its weights, the seeds B6 runs (chapter B6's cache)
        out += [Model(augerino_variant(g, r), k, recipe="B6", spec=(g, r)) for g in rrc.AUGERINO_GROUPS
                for r in rrc.group_regs(B, g) for k in range(min(S.seeds, B.augerino_seeds))]
    if S.variation:  # B7's recipe and seeds, as many as this chapter's (the same specs as B7's own)
        specs = grounding.variation_specs(grounding.settings(S.profile, variation={"seeds": S.seeds}))
        out += [Model(v, k, variation=0.0, recipe="B7", spec=s) for v, method in (("none", rrc.NONE),
                                                                                 ("standard", rrc.RRC))
                for k, s in enumerate(specs[(0.0, method)])]
    if S.architectures:
        # B3's untrained ViT is read by no claim (the architecture factor compares the trained ones), and B3's
        # untrained ResNet is the untrained models above: neither is measured
        G = grounding.settings(S.profile)
        out += [Model(v, k, arch=arch, recipe="B3", spec=G.models[arch][v]) for v in ("none", "standard")
                for k in range(S.seeds) for arch in ("ResNet", "ViT")]
    if S.crop_seeds:  # D2's family, trained and cached by chapter D2 (its seeds D.seed, D.seed + 1, ...)
        D = _d2(S)
        out += [Model(crop_variant(label), D.seed + k, recipe="D2", spec=label) for label in cropping.labels(D)
                for k in range(D.seeds)]
    return out


def s1_zoo_specs(profile: str = "cpu", **params) -> list[zoo.Spec]:
    """The zoo models chapter S1's run loads, for its papermill parameters ``params`` (None = default): the B1-recipe
    models of :func:`models` (B1's, and the rotation, brightness and untrained ones trained here), B7's at
    variation 0 and B3's ``zoo:`` entries of each seed under B3's profile (:func:`invlib.zoo.chapter_profile`: the
    specs chapter B3 lists, :func:`invlib.papers.b.grounding.b3_zoo_specs`). B6's Augerino runs are no zoo models
    (chapter B6's cache, :func:`invlib.papers.b.rrc.augerino_model`).

    Example
    -------
    >>> specs = s1_zoo_specs("cpu")
    >>> len(specs), sorted({s.arch for s in specs})
    (54, ['small_resnet18_s4', 'small_vit_p14_cls'])
    >>> len(s1_zoo_specs("cpu", seeds=1, architectures=False, variation=False))
    12
    """
    S = settings(profile, **params)
    zp = zoo.chapter_profile(grounding.settings(S.profile))
    return [zoo.spec(m.spec[len("zoo:"):], zp, seed=m.seed) if m.recipe == "B3" else m.spec
            for m in models(S) if m.recipe not in ("B6", "D2")]


def models_table(fam: list[Model]) -> pd.DataFrame:
    """The models as a table narrow enough for a page, one row per model over its seeds: ``model`` (the name
    without the seed: variant, B3's architecture, B7's variation) | ``seeds`` | ``recipe`` (the chapter whose
    recipe trained it) | ``training`` (the zoo name, or the augmentation and its parameters).

    Example
    -------
    >>> t = models_table(models(settings("smoke")))
    >>> list(t.columns), t.loc["rotation", "training"], t.loc["none", "seeds"]
    (['seeds', 'recipe', 'training'], 'random_op: high=45.0, low=-45.0, op=rotate, size=56', '0')
    """
    def training(m: Model) -> str:
        if m.recipe == "D2":
            return f"{m.spec}, D2's recipe"
        if isinstance(m.spec, str):
            return m.spec
        if m.recipe == "B6":
            return f"Augerino ({m.spec[0]}, regulariser {m.spec[1]:g}), B1's recipe"
        if m.spec.epochs == 0:
            return "untrained"
        params = ", ".join(f"{k}={v}" for k, v in dict(m.spec.augment_params).items())
        return f"{m.spec.augment}: {params}" if params else m.spec.augment

    rows: dict[str, dict] = {}
    for m in fam:
        row = rows.setdefault(m.name.rsplit(" ", 1)[0], dict(seeds=[], recipe=m.recipe, training=training(m)))
        row["seeds"].append(str(m.seed))
    return pd.DataFrame([{**row, "model": name, "seeds": ", ".join(row["seeds"])} for name, row in rows.items()]
                        ).set_index("model")[["seeds", "recipe", "training"]]


def train(S: Settings, fam: list[Model] | None = None) -> dict[Model, torch.nn.Module]:
    """The models of ``fam`` (default :func:`models`) in eval mode: loaded from the zoo, trained there on first use
    (:func:`invlib.zoo.train_many`; a book build trains them before any chapter runs, :func:`s1_zoo_specs`). B6's
    Augerino model is its trunk, the network without the learned augmentation (chapter B6's run, cached); D2's
    models are their classifiers (:func:`crop_classifier`; chapter D2's family, cached, trained here on first
    use)."""
    fam = models(S) if fam is None else fam
    specs = [m.spec for m in fam if m.recipe in ("B1", "B2", "B7")]
    trained = dict(zip(specs, zoo.train_many(specs, progress=S.progress)))
    G = grounding.settings(S.profile)
    crops = {}
    if any(m.recipe == "D2" for m in fam):
        D = _d2(S)
        crops = {(t.variant, t.seed): crop_classifier(t.model, D.size)
                 for t in cropping.train(D, cropping.scene_data(D)[0])}

    def get(m: Model):
        if m.recipe == "B3":
            return at_side(grounding.load_model(m.spec, G, m.seed), G.zoo_data["img_size"])
        if m.recipe == "B6":
            return rrc.augerino_model(_b1(S), *m.spec, seed=m.seed)[0].trunk
        if m.recipe == "D2":
            return crops[m.spec, m.seed]
        return trained[m.spec]

    return {m: get(m).eval() for m in fam}


def crop_classifier(net: torch.nn.Module, side: int) -> torch.nn.Module:
    """The classifier of a model of chapter D2: the network itself, or an InstaAug or Augerino model's trunk (the
    network without its learned crops), marked with the precision it was trained in and fed ``side`` px inputs
    (:func:`at_side`: D2 trains on whole scenes of that side).

    Example
    -------
    >>> from invlib import models
    >>> from invlib.learned import augerino
    >>> net = mark_precision(augerino.augerino(models.create("small_resnet18_s4", num_classes=10, img_size=56)),
    ...                      "bf16")
    >>> c = crop_classifier(net, 56)
    >>> c is net.trunk, precision(c), c.input_side
    (True, 'bf16', 56)
    """
    trunk = getattr(net, "trunk", net)
    if precision(net) != precision(trunk):
        mark_precision(trunk, precision(net))
    return at_side(trunk, side)


def seed_claims_read(m: Model) -> bool:
    """Whether the claims about what training does (one value per seed: augmentation's gain, and its lead over the
    data, the architecture and training) read model ``m``: B1's models without augmentation, with one
    transformation (:data:`AUGMENTED`) and untrained, B7's and B3's without augmentation. The other variants serve
    the agreement claims, which rest on variants, not seeds.

    Example
    -------
    >>> [seed_claims_read(Model(v, 0)) for v in ("none", "scale", "standard", "shift", "untrained")]
    [True, True, False, False, True]
    >>> seed_claims_read(Model("none", 0, recipe="B7", variation=0.0)), seed_claims_read(Model("standard", 0,
    ...                                                                                        recipe="B3"))
    (True, False)
    """
    if m.recipe == "B1":
        return m.variant in ("none", "untrained", *AUGMENTED.values())
    return m.recipe in ("B7", "B3") and m.variant == "none"


def seed_seconds(nets: dict) -> list[float]:
    """Per seed, in seed order, what training that seed's models took: the zoo checkpoints' training seconds
    (``model.zoo_info["seconds"]``, measured when each was trained; 0 for an untrained one) of the models the
    claims about training read (:func:`seed_claims_read`), summed: what one replicate of ``seeds`` costs those
    claims (:meth:`invlib.results.Run.replicates`).

    Example
    -------
    >>> from torch import nn
    >>> net = lambda s: setattr(m := nn.Linear(1, 1), "zoo_info", {"seconds": s}) or m
    >>> seed_seconds({Model("none", 0): net(10.0), Model("none", 1): net(11.0), Model("scale", 0): net(12.0),
    ...               Model("shift", 0): net(50.0), Model("augerino shift 1", 0, recipe="B6"): net(99.0),
    ...               Model("untrained", 1): nn.Linear(1, 1)})
    [22.0, 11.0]
    """
    out: dict[int, float] = {}
    for m, net in nets.items():
        if seed_claims_read(m):
            out[m.seed] = out.get(m.seed, 0.0) + zoo.train_seconds(net)
    return [out[k] for k in sorted(out)]


def at_side(model: torch.nn.Module, side: int) -> torch.nn.Module:
    """``model`` with its inputs ``(B, C, h, w)`` resized (bilinear, antialiased) to ``side`` px before its first
    layer, where they have another side: B3's ResNet and ViT were trained on whole ``side`` px scenes, and the
    family's images are B1's evaluation crops (48 px at cpu), which a ViT would otherwise zero-pad to its patch
    grid. The transformations are applied to the family's images first, so every model sees the same content.
    Marks ``model.input_side`` (part of :func:`measure_model`'s cache key).

    Example
    -------
    >>> from invlib import models
    >>> net = at_side(models.create("small_vit_p14_cls", num_classes=10, img_size=56, seed=0).eval(), 56)
    >>> seen = []
    >>> _ = net.patch_embed.register_forward_pre_hook(lambda _m, a: seen.append(tuple(a[0].shape)))
    >>> _ = net(torch.rand(2, 3, 48, 48)); seen, net.input_side
    ([(2, 3, 56, 56)], 56)
    """
    def resize(_module, args):
        x = args[0]
        if x.shape[-2:] == (side, side):
            return None
        return (F.interpolate(x, size=(side, side), mode="bilinear", align_corners=False, antialias=True),
                *args[1:])

    model.register_forward_pre_hook(resize)
    model.input_side = side
    return model


AUGERINO_GROUP = "translation then scale"


def learned_range(S: Settings) -> dict:
    """What chapter B6's Augerino model of the family learned: the largest translation (a fraction of the side, x
    and y) and the largest zoom of its warps, with its accuracy with and without them (%); empty without one.

    Example
    -------
    >>> learned_range(settings("smoke", augerino=False))
    {}
    """
    if not S.augerino:
        return {}
    row = rrc.augerino_model(_b1(S), AUGERINO_GROUP, S.augerino_reg)[1]
    keep = ("translate_x bound", "translate_y bound", "scale bound", "top1_on", "top1_off")
    out = {k: float(row[k]) for k in keep if k in row}
    if "scale bound" in out:
        out["largest zoom"] = float(np.exp(out.pop("scale bound")))
    return out


# ------------------------------------------------------------------------------ the data
def scenes(S: Settings, split: str, n: int) -> data.Dataset:
    """``n`` scenes of ``split`` as the models see them: the central 56 px of scenes stored at 64 (chapter B1's
    evaluation crop; B3's models were trained on whole 56 px scenes), uint8, with boxes in the crop's pixels.

    Example
    -------
    >>> ds = scenes(settings("smoke"), "test", 4)
    >>> tuple(ds.images.shape), ds.boxes.shape
    ((4, 3, 56, 56), torch.Size([4, 4]))
    """
    B = _b1(S)
    stored, size = stored_size(B.size), B.size
    ds = data.load(B.dataset, split, root=B.root, n=n, seed=S.seed, size=stored, cap=True)
    lo = (stored - size) // 2
    boxes = (ds.boxes - lo).clamp(0, size)
    return data.Dataset(ds.name, ds.split, ds.images[..., lo:lo + size, lo:lo + size].contiguous(), ds.labels,
                        ds.classes, ds.synsets, boxes, ds.factors)


# ------------------------------------------------------------------------------ the measures
def _embed_and_predict(model, preds: list):
    """B's embedding of ``model`` (:func:`invlib.papers.b.similarity.embedding`: the classifier's input) that also
    appends the classifier's prediction of every batch it embeds to ``preds``, from the same forward pass."""
    embed = similarity.embedding(model)
    split = hasattr(model, "forward_head") and hasattr(model, "forward_features")  # as the embedding splits it

    def f(b):
        if not split:  # a model without timm's split: one more pass for its prediction
            preds.append(model(b).argmax(1).cpu())
            return embed(b)
        with measuring(model) as net:  # as the embedding runs it (bf16 for a model trained so)
            h = net.forward_features(b)
            preds.append(net.forward_head(h).argmax(1).cpu())
            return net.forward_head(h, pre_logits=True).float()

    return f


def sweep_predictions(model, x: torch.Tensor, grids: list[str], levels: list[int], seed: int = 0,
                      device="cpu") -> tuple[pd.DataFrame, dict]:
    """B's sweep of one model (:func:`invlib.papers.b.similarity.sweep` on its embedding, ``levels`` all > 0) and the
    classifier's predictions on the very images the sweep embedded: ``(sweep, {(grid, level): (N,) classes})``,
    ``(None, 0)`` for ``x`` itself. Accuracy under a transformation is read from these, with no forward pass of its
    own (the grids of :data:`TRANSFORMS` draw nothing: the images are the ones a separate pass would make).

    Example
    -------
    >>> from invlib import models
    >>> net = models.create("small_resnet18_s4", num_classes=10, img_size=56, seed=0).eval()
    >>> sweep, preds = sweep_predictions(net, torch.rand(4, 3, 56, 56), ["rotate"], [3, 9])
    >>> len(sweep), list(preds), tuple(preds["rotate", 9].shape)
    (2, [(None, 0), ('rotate', 3), ('rotate', 9)], (4,))
    """
    if min(levels) < 1:
        raise ValueError(f"the sweep embeds the untransformed images once; levels must be > 0, got {levels}.")
    preds = []
    with torch.inference_mode():
        sweep = pd.DataFrame(similarity.sweep({"m": _embed_and_predict(model, preds)}, x, grids, levels=levels,
                                              seed=seed, device=device))
    passes = [(None, 0)] + [(g, lv) for g in grids for lv in levels]  # the sweep's order: x, then grid by level
    out = torch.cat(preds)
    if len(out) != len(passes) * len(x):
        raise RuntimeError(f"the sweep embedded {len(out)} images, not {len(passes)} passes of {len(x)}.")
    return sweep, dict(zip(passes, out.split(len(x))))


def _c_settings(S: Settings):
    return equivariance.settings(S.profile, layer="pre_logits", n_fit=S.n_fit, n_eval=S.n_eval,
                                 map_epochs=S.map_epochs, seed=S.seed, device=S.device, progress=False)


def measure_model(S: Settings, model, probe: data.Dataset, pairs: tuple, c_sets: tuple, sweep_only: bool = False
                  ) -> list[dict]:
    """Every measure of one model on every transformation of ``S.transforms``: rows ``transform, measure,
    value`` (``measure`` a key of :data:`MEASURES`, ``transform`` also ``"none"`` for clean accuracy).

    ``probe``: the scenes of B's sweep and of the accuracy; ``pairs``: A's (train, test) scenes;
    ``c_sets``: C's (fit, eval) scenes. ``sweep_only``: the accuracy and B's measures only (no A probe, no C maps).
    Cached on disk by the model's weights, the scenes and the settings.
    """
    key = digest(weights_key(model), getattr(model, "input_side", None), S.transforms, S.levels, S.map_epochs, S.seed,
                 probe.images, pairs[0].images,
                 pairs[1].images, c_sets[0].images, c_sets[1].images, sweep_only)
    return cached("synthesis", f"measures-{key}", lambda: _measure_model(S, model, probe, pairs, c_sets, sweep_only),
                  version=CACHE_VERSION)


def _measure_model(S, model, probe, pairs, c_sets, sweep_only=False) -> list[dict]:
    device = next(model.parameters()).device
    x, levels = probe.images.float() / 255, [lv for lv in S.levels if lv > 0]
    sweep, preds = sweep_predictions(model, x, [TRANSFORMS[t]["b"] for t in S.transforms], levels, S.seed, device)
    acc = lambda p: float((p == probe.labels).float().mean() * 100)
    rows = [dict(transform="none", measure="accuracy", value=acc(preds[None, 0]))]
    featurizer = probes.Backbone(model, ["pre_logits"])
    C = _c_settings(S)
    for t in S.transforms:
        spec = TRANSFORMS[t]
        on = sweep[sweep["transform"] == spec["b"]]
        rows += [dict(transform=t, measure="accuracy", value=float(np.mean([acc(preds[spec["b"], lv])
                                                                             for lv in levels]))),
                 dict(transform=t, measure="b_invariance", value=float(on["median"].mean())),
                 dict(transform=t, measure="b_alignment", value=float(on["alignment"].mean()))]
        if spec["a"] and not sweep_only:
            train, test = (probes.extract(featurizer, ds.images, ds.boxes, spec["a"], ds.images.shape[-1],
                                          seed=S.seed + k, cache=False) for k, ds in enumerate(pairs))
            rows.append(dict(transform=t, measure="a_probe", value=probes.accuracy(probes.train_probe(train), test)))
        if spec["c"] and not sweep_only:
            kind, values = spec["c"]
            c = equivariance.measure_network(model, kind, values, C, *c_sets, resize=equivariance.crop_resize([]))
            rows += [dict(transform=t, measure=f"c_{col}", value=float(c[col].mean()))
                     for col in ("inv_acc", "inv_l2", "eq_acc")]
    return rows


def measure_sets(S: Settings) -> dict:
    """The scenes of the measures, none shared between two of them: ``probe`` (B's sweep and the accuracy,
    ``S.n_probe`` test scenes), ``pairs`` (A's probe: ``S.n_pairs`` training and as many test scenes) and ``maps``
    (C: ``S.n_fit`` training scenes to fit ``M_g`` on, ``S.n_eval`` test scenes to score).

    Example
    -------
    >>> sets = measure_sets(settings("smoke", n_probe=4, n_pairs=4, n_fit=4, n_eval=4))
    >>> len(sets["probe"]), [len(d) for d in sets["pairs"]], [len(d) for d in sets["maps"]]
    (4, [4, 4], [4, 4])
    """
    test = scenes(S, "test", S.n_probe + S.n_pairs + S.n_eval)  # one draw per split, cut into disjoint sets
    train = scenes(S, "train", S.n_pairs + S.n_fit)
    cut = lambda ds, start, n: ds.rows(slice(start, start + n))
    return dict(probe=cut(test, 0, S.n_probe),
                pairs=(cut(train, 0, S.n_pairs), cut(test, S.n_probe, S.n_pairs)),
                maps=(cut(train, S.n_pairs, S.n_fit), cut(test, S.n_probe + S.n_pairs, S.n_eval)))


def measure(S: Settings, nets: dict, sets: dict | None = None) -> pd.DataFrame:
    """Every measure on every model of ``nets`` (:func:`train`): one row per (model, transform, measure) with the
    model's ``variant``, ``seed``, ``arch``, ``variation``, ``recipe`` and ``value``; the models of
    :func:`sweep_only` get the accuracy and B's measures only. ``sets``: the images (default :func:`measure_sets`;
    any uint8 datasets with labels and boxes in that shape).

    Example
    -------
    >>> S = settings("smoke", n_probe=8, n_pairs=8, n_fit=8, n_eval=8, transforms=("zoom",), levels=(0, 9),
    ...              map_epochs=1, progress=False)
    >>> from invlib import models
    >>> net = models.create("small_resnet18_s4", num_classes=10, img_size=56, seed=0).eval()
    >>> t = measure(S, {Model("none", 0): net, Model("untrained", 1): net})
    >>> sorted(t["measure"].unique()), sorted(t.loc[t["variant"] == "untrained", "measure"].unique())
    (['a_probe', 'accuracy', 'b_alignment', 'b_invariance'], ['accuracy', 'b_alignment', 'b_invariance'])
    """
    sets = measure_sets(S) if sets is None else sets
    rows = []
    for m, net in bar(list(nets.items()), S.progress, "measures", leave=True):
        only = sweep_only(m)
        rows += [dict(model=m.name, variant=m.variant, seed=m.seed, arch=m.arch, variation=m.variation,
                      recipe=m.recipe, **r)
                 for r in measure_model(S, net, sets["probe"], sets["pairs"], sets["maps"], sweep_only=only)]
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, transform: str) -> pd.DataFrame:
    """One transformation's measures, a model per row and a measure (:data:`MEASURES` key) per column.

    Example
    -------
    >>> t = pd.DataFrame(dict(model=["a", "a", "b"], transform="zoom", measure=["accuracy", "a_probe", "accuracy"],
    ...                       value=[1.0, 0.5, 2.0]))
    >>> wide(t, "zoom").columns.tolist()
    ['accuracy', 'a_probe']
    """
    part = table[table["transform"] == transform]
    out = part.pivot_table(index="model", columns="measure", values="value", sort=False)
    return out[[m for m in MEASURES if m in out.columns]]


# ------------------------------------------------------------------------------ agreement and sources
def oriented(a: str, b: str) -> int:
    """+1 or -1: the sign that turns the rank correlation of measures ``a`` and ``b`` (:data:`MEASURES` keys) into
    "both call the same models invariant" (an equivariance measure counts as it is).

    Example
    -------
    >>> oriented("accuracy", "a_probe"), oriented("a_probe", "c_inv_l2"), oriented("b_alignment", "accuracy")
    (-1, 1, 1)
    """
    return (MEASURES[a][1] or 1) * (MEASURES[b][1] or 1)


def variants(table: pd.DataFrame) -> pd.Series:
    """Each model's variant: what it shares with its seed-mates (variant, recipe, architecture, data variation), the
    cluster the agreement intervals resample whole.

    Example
    -------
    >>> t = pd.DataFrame(dict(model=["none 0", "none 1", "none (variation 0) 0"], variant="none", arch="ResNet",
    ...                       recipe=["B1", "B1", "B7"], variation=[1.0, 1.0, 0.0]))
    >>> variants(t).tolist()
    ['none | B1 | ResNet | 1.0', 'none | B1 | ResNet | 1.0', 'none | B7 | ResNet | 0.0']
    """
    first = table.drop_duplicates("model").set_index("model")
    return first["variant"] + " | " + first["recipe"] + " | " + first["arch"] + " | " + first["variation"].astype(str)


def _pair(table: pd.DataFrame, transform: str, a: str, b: str, models_) -> pd.DataFrame | None:
    """Measures ``a`` and ``b`` of the models ``models_`` (all: None) for one transformation, a model per row; None
    where the transformation lacks one of them."""
    w = wide(table, transform)
    if a not in w.columns or b not in w.columns:
        return None
    keep = w.index if models_ is None else [m for m in w.index if m in set(models_)]
    return w.loc[keep, [a, b]].dropna()


def agreement(table: pd.DataFrame, transform: str, models_: list[str] | None = None) -> pd.DataFrame:
    """Spearman's rho between every two measures across the models (all, or ``models_``), for one transformation:
    one row per pair ``transform, a, b, rho, n`` (``n``: the models). ``rho`` is oriented (:func:`oriented`):
    positive when the two measures call the same models more invariant; NaN where a measure is the same for every
    model.

    Example
    -------
    >>> t = pd.DataFrame(dict(model=list("abcd") * 2, transform="zoom", measure=["accuracy"] * 4 + ["a_probe"] * 4,
    ...                       value=[1.0, 2, 3, 4, 0.9, 0.8, 0.7, 0.6]))
    >>> agreement(t, "zoom")[["a", "b", "rho", "n"]].values.tolist()
    [['accuracy', 'a_probe', 1.0, 4]]
    """
    cols, rows = list(wide(table, transform).columns), []
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            ok = _pair(table, transform, a, b, models_)
            rho = rank_correlation(ok[a].values, oriented(a, b) * ok[b].values)[0] if len(ok) >= 3 else np.nan
            rows.append(dict(transform=transform, a=a, b=b, rho=float(rho), n=len(ok)))
    return pd.DataFrame(rows, columns=["transform", "a", "b", "rho", "n"])


def ranked_transforms(table: pd.DataFrame, a: str, b: str, models_: list[str] | None = None,
                      transforms=None) -> list[str]:
    """The transformations (of ``transforms``, default every one in ``table``) under which measures ``a`` and ``b``
    both rank the models: both measured, and neither the same for every model of ``models_``.

    Example
    -------
    >>> t = pd.DataFrame(dict(model=list("abc") * 2, transform=["zoom"] * 3 + ["rotation"] * 3,
    ...                       measure="accuracy", value=[1.0, 2, 3, 5, 5, 5]))
    >>> t = pd.concat([t, t.assign(measure="b_invariance")])
    >>> ranked_transforms(t, "accuracy", "b_invariance")  # under rotation every model reads 5
    ['zoom']
    """
    transforms = list(dict.fromkeys(table["transform"])) if transforms is None else list(transforms)
    out = []
    for t in transforms:
        ok = _pair(table, t, a, b, models_) if t in set(table["transform"]) else None
        if ok is not None and len(ok) >= 2 and ok[a].nunique() > 1 and ok[b].nunique() > 1:
            out.append(t)
    return out


def pooled_agreement(table: pd.DataFrame, a: str, b: str, models_: list[str] | None = None, transforms=None,
                     level: float = 0.95, resamples: int = 2000, seed: int = 0) -> Interval | None:
    """Whether measures ``a`` and ``b`` rank the models alike, as one number: the oriented Spearman's rho across
    ``models_`` (default all) within each transformation of :func:`ranked_transforms`, averaged over them, with a
    percentile bootstrap interval at ``level`` that resamples whole variants (:func:`variants`; every
    transformation's models in each resample, so one interval covers them all); ``n`` is the variants. None where
    no transformation of ``transforms`` has both measures; a NaN estimate where none ranks the models.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=24)
    >>> t = pd.DataFrame([dict(model=f"m{i}", variant=f"v{i // 2}", recipe="B1", arch="ResNet", variation=1.0,
    ...                        transform=tr, measure=m, value=v) for tr in ("zoom", "rotation")
    ...                   for i in range(24) for m, v in (("accuracy", x[i]), ("a_probe", -x[i] + 0.3 * (i % 3)))])
    >>> iv = pooled_agreement(t, "accuracy", "a_probe")
    >>> round(iv.estimate, 2), iv.n, iv.method, bool(0.5 < iv.lo < iv.estimate < iv.hi <= 1)  # 24 models, 12 variants
    (0.95, 12, 'cluster bootstrap', True)
    """
    have = [t for t in (transforms if transforms is not None else dict.fromkeys(table["transform"]))
            if {a, b} <= set(table.loc[table["transform"] == t, "measure"])]
    if not have:
        return None
    used = ranked_transforms(table, a, b, models_, have)
    pairs = [_pair(table, t, a, b, models_) for t in used]
    labels = variants(table)
    members = sorted({m for p in pairs for m in p.index} or
                     {m for t in have for m in _pair(table, t, a, b, models_).index})
    keys, group = np.unique(labels[members].values, return_inverse=True)
    where = dict(zip(members, group))
    if not pairs:
        return Interval(np.nan, np.nan, np.nan, len(keys), level, "cluster bootstrap")
    sign = oriented(a, b)
    whole = np.mean([rank_correlation(p[a].values, sign * p[b].values)[0] for p in pairs])
    pick = np.random.default_rng(seed).integers(0, len(keys), size=(resamples, len(keys)))
    counts = np.zeros((resamples, len(keys)))
    np.add.at(counts, (np.arange(resamples)[:, None], pick), 1)
    boot = np.mean([rank_correlation(p[a].values, sign * p[b].values, counts[:, [where[m] for m in p.index]],
                                     constant=0.0) for p in pairs], axis=0)
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(whole), float(lo), float(hi), len(keys), level, "cluster bootstrap")


def group_mean(table: pd.DataFrame, transform: str, measure_: str, **where) -> float:
    """Mean of one measure over the models whose fields equal ``where`` (e.g. ``variant="none", recipe="B1"``);
    NaN if none.

    Example
    -------
    >>> t = pd.DataFrame(dict(transform="zoom", measure="accuracy", variant=["none", "none", "scale"],
    ...                       value=[1.0, 3.0, 5.0]))
    >>> group_mean(t, "zoom", "accuracy", variant="none")
    2.0
    """
    keep = (table["transform"] == transform) & (table["measure"] == measure_)
    for k, v in where.items():
        keep &= table[k] == v
    return float(table.loc[keep, "value"].mean()) if keep.any() else float("nan")


SOURCES = {  # factor -> (what it is, the models it compares: (where "before"), (where "after"))
    "data": ("variation 1 vs 0, no augmentation", dict(variant="none", recipe="B7"),
             dict(variant="none", recipe="B1")),
    "augmentation": ("the transformation's own augmentation vs none", dict(variant="none", recipe="B1"), None),
    "architecture": ("ViT vs ResNet, trained without augmentation", dict(arch="ResNet", variant="none", recipe="B3"),
                     dict(arch="ViT", variant="none", recipe="B3")),
    "training": ("trained without augmentation vs untrained", dict(variant="untrained", recipe="B1"),
                 dict(variant="none", recipe="B1")),
}


def sources(table: pd.DataFrame, measure_: str = "b_invariance", transforms=None) -> pd.DataFrame:
    """What each factor of :data:`SOURCES` changes in one measure (default B's relative invariance), per
    transformation: the mean over the "after" models minus the mean over the "before" models (seeds averaged);
    ``largest``: the factor with the largest change in absolute value.

    Example
    -------
    >>> t = pd.DataFrame(dict(transform="zoom", measure="b_invariance", value=[0.5, 0.6, 0.9, 0.4, 0.7, 0.3],
    ...     variant=["none", "none", "scale", "untrained", "none", "none"], recipe=["B1", "B7", "B1", "B1", "B3", "B3"],
    ...     arch=["ResNet"] * 5 + ["ViT"]))
    >>> row = sources(t).loc["zoom"]
    >>> [round(float(row[k]), 2) for k in SOURCES], row["largest"]
    ([-0.1, 0.4, -0.4, 0.1], 'augmentation')
    """
    transforms = list(dict.fromkeys(table["transform"])) if transforms is None else transforms
    rows = {}
    for t in transforms:
        if t == "none":
            continue
        row = {}
        for factor, (_, before, after) in SOURCES.items():
            after = after or dict(variant=AUGMENTED[t], recipe="B1")
            row[factor] = group_mean(table, t, measure_, **after) - group_mean(table, t, measure_, **before)
        changes = {k: abs(v) for k, v in row.items() if v == v}
        row["largest"] = max(changes, key=changes.get) if changes else "n/a"
        rows[t] = row
    return pd.DataFrame.from_dict(rows, orient="index")
