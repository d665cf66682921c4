"""Paper B's reports for sections 3 to 4.5 (chapters B3, B4 and B5's Fig. 4 and App. E.2) and the thesis's
controlled test (chapter B7): the effects of the claims :mod:`invlib.papers.b.protocol` declares, recorded with
:meth:`invlib.results.Run.claim` (whose verdict comes from the declaration alone, :func:`invlib.protocol.decide`),
the sentences the chapters' prose quotes, and the figures. The method is :mod:`invlib.papers.b.grounding` (with the
measures of :mod:`invlib.papers.b.similarity`).

Claims about what training (or a random initialisation, or augmentation) does rest on seeds; claims about one given
model's search rest on its evaluation items (image pairs, classes) and say "this model".
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import metrics, results
from ...pages import number
from ...protocol import decide  # noqa: F401  (the examples decide their effects with it)
from ...verdicts import _plural
from . import similarity
from .grounding import APPEARANCE_B3, VARIANT_LABELS, fig3c, level_mean, rotation_classes, seed_seconds, training_change
from .protocol import FIG3C_RATIO, PREMISE, PROTOCOL

ARCHS = ("ResNet", "ViT")  # chapter B3's architectures, in its claims' order


def _archs(table, *variants: str) -> list[str]:
    """The architectures of :data:`ARCHS` whose ``variants`` the sweep ``table`` holds."""
    return [a for a in ARCHS if set(variants) <= set(table[table.arch == a].variant)]


# A grid's name as a figure shows it (tables keep the names the settings take).
GRID_TITLES = {"translate": "translation", "translate_y": "vertical translation", "zoom_in": "zoom in",
               "zoom_out": "zoom out", "rotate": "rotation", "shear": "shear", "shear_y": "vertical shear",
               "brightness_up": "brightening", "brightness_down": "darkening", "contrast_up": "more contrast",
               "contrast_down": "less contrast", "hflip": "horizontal flip", "vflip": "vertical flip",
               "gaussian_blur": "blur", "gaussian_noise": "noise"}
# The sweep's variants, one colour each (Okabe and Ito's palette, told apart with any colour vision).
VARIANT_COLOURS = {"untrained": "#E69F00", "none": "#0072B2", "standard": "#CC79A7"}


def grid_title(grid: str) -> str:
    """A sweep grid's name in words, for figures.

    Example
    -------
    >>> grid_title("brightness_down"), grid_title("equalize")
    ('darkening', 'equalize')
    """
    return GRID_TITLES.get(grid, grid.replace("_", " "))


def figure_a2(x: torch.Tensor, grids=None):
    """Fig. A2: the first image of ``x`` (in [0, 1], or uint8 images, on disk too) under every grid at levels 0-9
    (rows: grids, by :func:`grid_title`; columns: levels; :func:`invlib.plots.mosaic`).

    Example
    -------
    >>> len(figure_a2(torch.rand(1, 3, 16, 16), ["rotate", "hflip"]).axes)
    20
    """
    from ... import plots

    grids = list(similarity.GRIDS if grids is None else grids)
    first = x[:1] if x.dtype != torch.uint8 else x[:1].float() / 255  # images on disk are read as uint8
    draw = lambda g, lv: similarity.transform_level(g, first, lv, torch.Generator().manual_seed(lv))
    rows = {grid_title(g): torch.cat([draw(g, lv) for lv in range(10)]) for g in grids}
    return plots.mosaic(rows, col_titles=[str(lv) for lv in range(10)], size=(0.85, 0.9), fontsize=8, pad=0.2)


def plot_sweep(table, grids=None, column: str = "median", ncols: int = 4):
    """Fig. 2 / A3 (``column="median"``, with the quartiles shaded) or Fig. A10 (``column="alignment"``):
    one panel per grid, one line per architecture (solid ResNet, dashed ViT) and variant (a colour of
    :data:`VARIANT_COLOURS`), against the level (with several seeds, the mean over seeds of each seed's median and
    quartiles)."""
    import matplotlib.pyplot as plt

    grids = list(dict.fromkeys(table["transform"]) if grids is None else grids)
    ncols = min(ncols, len(grids))
    nrows = -(-len(grids) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.4 * ncols, 1.9 * nrows + 1.1), squeeze=False, sharey=True,
                             sharex=True, layout="constrained")
    styles = {"ResNet": "-", "ViT": "--"}
    for ax, g in zip(axes.flat, grids):
        for (arch, variant), t in table[table["transform"] == g].groupby(["arch", "variant"], sort=False):
            t = t.groupby("level")[[c for c in dict.fromkeys((column, "q25", "q75")) if c in t]].mean().reset_index()
            colour = VARIANT_COLOURS.get(variant)
            ax.plot(t.level, t[column], styles.get(arch, ":"), color=colour, lw=1.6,
                    label=f"{arch}, {VARIANT_LABELS.get(variant, variant)}")
            if column == "median":
                ax.fill_between(t.level, t.q25, t.q75, color=colour, alpha=0.12, lw=0)
        ax.set_title(grid_title(g), fontsize=10)
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_xticks([0, 3, 6, 9])
        ax.tick_params(labelsize=9, labelbottom=True)
    for ax in list(axes.flat)[len(grids):]:
        ax.axis("off")
    fig.supxlabel("level of the transformation (0: none, 9: the largest)", fontsize=10)
    fig.supylabel("relative invariance" if column == "median" else "equivariance alignment", fontsize=10)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=2 if ncols < 3 else 3, fontsize=9)
    return fig


def _record(run, cid: str, ours, effects):
    """Record the claim ``cid`` (its declaration in :data:`~invlib.papers.b.protocol.PROTOCOL`) on ``run`` from its
    ``effects``; return its evidence (the same one decision, for the prose)."""
    run.claim(PROTOCOL[cid], ours=ours, effects=effects)
    return run.evidence[cid]


def _join(items: list[str], word: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit if n == 1 else _plural(unit)}"


# How a chapter's reading names each verdict: the papers' claims are reproduced or not; the book's own hypotheses
# (chapter B7) are borne out or not.
PAPER_WORDS = ("reproduces", "does not reproduce", "reproduces in part")
HYPOTHESIS_WORDS = ("bears out", "does not bear out", "bears out in part")


def reading(ev: dict, that: dict[str, str], words: tuple[str, str, str] = PAPER_WORDS) -> str:
    """What a chapter's claims came to, in a few grouped sentences (the prose around a chapter's claims table; the
    findings box lists them one by one): the claims of ``that`` (claim id -> a clause, "training lowers invariance to
    rotation") that this run decided, named by verdict; those it does not test because the data do not meet their
    premise (a gate); then the undecided ones counted, with why and, where the effects and spreads measured here say
    it, how many replicates would decide them (each claim's ``n_needed``); then those this profile cannot test.

    Example
    -------
    >>> one = decide(PROTOCOL["fig2/untrained_vit_translation"], [0.3])   # one seed, where the claim needs 3
    >>> reading({"a": one, "b": one}, {"a": "A holds", "b": "B holds"})
    'Neither claim can be decided on this run: each rests on 1 seed where it needs 3.'
    >>> up = decide(PROTOCOL["fig2/untrained_vit_translation"], [0.3, 0.35, 0.4])
    >>> down = decide(PROTOCOL["fig2/untrained_vit_translation"], [-0.3, -0.35, -0.4])
    >>> reading({"a": up, "b": one, "c": down}, {"a": "A holds", "b": "B holds", "c": "C holds"})
    ... # doctest: +NORMALIZE_WHITESPACE
    'This run reproduces that A holds. It does not reproduce that C holds. The other claim cannot be decided on this
     run: it rests on 1 seed where it needs 3.'
    >>> gap = {"premise: no augmentation overfits": [1.0, 1.1, 0.9], "gain rises": {"0 → 1": [5.0, 6.0, 7.0]}}
    >>> reading({"a": up, "g": decide(PROTOCOL["thesis/crop_gain_grows_with_variation"], gap)},
    ...         {"a": "A holds", "g": "the gain grows"})
    'This run reproduces that A holds. It does not test that the gain grows: its premise is not met.'
    """
    claims = {cid: ev[cid] for cid in that if cid in ev}
    said = []
    for verdict, verb in zip((results.REPRODUCED, results.NOT_REPRODUCED, results.PARTLY), words):
        named = [f"that {that[cid]}" for cid, e in claims.items() if e.verdict == verdict]
        if named:
            said.append(f"{'It' if said else 'This run'} {verb} "
                        f"{_join(named, 'or' if verdict == results.NOT_REPRODUCED else 'and')}.")
    unmet = [cid for cid, e in claims.items() if e.premise_not_met]  # a gate the data do not pass: not tested
    if unmet:
        said.append(f"{'It' if said else 'This run'} does not test {_join([f'that {that[c]}' for c in unmet], 'or')}: "
                    f"{'its premise is' if len(unmet) == 1 else 'their premises are'} not met.")
    open_ = [e for cid, e in claims.items() if e.verdict == results.INCONCLUSIVE and cid not in unmet]
    if open_:
        k = len(open_)
        if k < len(claims):
            head = f"The other {'claim' if k == 1 else f'{k} claims'} cannot"
        else:
            head = "The claim cannot" if k == 1 else ("Neither claim can" if k == 2 else f"None of the {k} claims can")
        few = [e for e in open_ if e.n < e.n_min]
        wide = [e for e in open_ if e.n >= e.n_min]
        why = []
        if few:
            every = len(few) == k
            subject = ("it rests" if k == 1 else "each rests") if every else \
                ("one rests" if len(few) == 1 else f"{len(few)} rest")
            one = every or len(few) == 1
            why.append(f"{subject} on {_count(few[0].n, few[0].unit)} where {'it' if one else 'each'} needs "
                       f"{few[0].n_min}" if len({(e.n, e.n_min, e.unit) for e in few}) == 1 else
                       f"{subject} on fewer replicates than {'it needs' if one else 'they need'}")
        if wide:
            over = f"over {_count(wide[0].n, wide[0].unit)}, " if len({(e.n, e.unit) for e in wide}) == 1 else ""
            if not few:
                whose = "its interval still straddles its boundary" if k == 1 else \
                    "each interval still straddles its boundary"
            elif len(wide) == 1:
                whose = "the interval of the other still straddles its boundary"
            else:
                whose = f"the intervals of the other {len(wide)} still straddle their boundaries"
            why.append(over + whose)
        needed = [e for e in open_ if e.n_needed]
        if needed:
            units = {e.unit for e in needed}
            lo, hi = min(e.n_needed for e in needed), max(e.n_needed for e in needed)
            unit = _plural(needed[0].unit) if len(units) == 1 else "replicates"
            span = number(lo) if lo == hi else f"{number(lo)} to {number(hi)}"
            whom = ("it" if k == 1 else "them") if len(needed) == k else \
                ("one of them" if len(needed) == 1 else f"{len(needed)} of them")
            why.append(f"at the effects and spreads measured here, {span} {unit} would decide {whom}")
        said.append(f"{head} be decided on this run: {'; '.join(why)}.")
    untestable = [cid for cid, e in claims.items() if e.verdict == results.NOT_MEASURABLE]
    if untestable:
        reasons = list(dict.fromkeys(claims[cid].reason for cid in untestable if claims[cid].reason))
        n = len(untestable)
        said.append(f"{'One claim' if n == 1 else f'{n} claims'} cannot be tested at this profile"
                    + (f" ({'; '.join(reasons)})." if reasons else "."))
    return " ".join(said)


# ------------------------------------------------------------------------------ section 3 (chapter B3)
def seed_level_means(table, arch: str, variant: str, grid: str, column: str = "median",
                     levels: tuple[int, int] = (1, 9)) -> dict[int, float]:
    """``{seed: mean of column over levels lo..hi}`` for one model per seed (a table without a ``seed`` column holds
    one model per variant: seed 0); ``{}`` where the table has no such model or grid.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="R", variant="none", transform="rotate", level=[0, 1, 2], median=[1, 0.4, 0.2]))
    >>> seed_level_means(t, "R", "none", "rotate")
    {0: 0.30000000000000004}
    """
    lo, hi = levels
    t = table[(table.arch == arch) & (table.variant == variant) & (table["transform"] == grid)
              & (table.level >= lo) & (table.level <= hi)]
    seeds = t["seed"] if "seed" in t else np.zeros(len(t), dtype=int)
    return {int(k): float(g[column].mean()) for k, g in t.groupby(seeds)}


def seed_change(table, arch: str, grid: str, after: str = "none", before: str = "untrained",
                column: str = "median") -> np.ndarray:
    """Per seed, ``after - before`` of :func:`seed_level_means` (paired: the same seed's models, e.g. a network and
    its own initialisation), over the seeds both have.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="R", variant=["untrained", "none"] * 2, transform="rotate", level=1,
    ...                       median=[0.2, 0.5, 0.3, 0.4], seed=[0, 0, 1, 1]))
    >>> seed_change(t, "R", "rotate").round(2).tolist()
    [0.3, 0.1]
    """
    a, b = (seed_level_means(table, arch, v, grid, column) for v in (after, before))
    common = sorted(set(a) & set(b))
    return results.paired([a[k] for k in common], [b[k] for k in common])


UNTRAINED_CLAIMS = ("fig2/untrained_vit_translation", "figA10/untrained_resnet_equivariant")


def sweep_effects(table, untrained=None) -> dict:
    """The effects of section 3's claims (Fig. 2, A3, A10) by claim id, from the sweep ``table``
    (:func:`invariance_table`, one model per (arch, variant), or several with a ``seed`` column). Every claim is
    about what training, augmentation or an architecture's random initialisation does, so its replicate is a seed;
    the effect per seed is a difference of level-mean (1-9) median invariances, paired by seed (:func:`seed_change`),
    per architecture where the claim is made for each; not measurable without the models or grids it compares.
    ``untrained``: the untrained models' own sweep over their seeds
    (:func:`~invlib.papers.b.grounding.untrained_table`), from which the claims on initialisations alone
    (:data:`UNTRAINED_CLAIMS`) read; None: ``table``'s.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="ResNet", variant=["untrained", "none"], transform="zoom_in", level=1,
    ...                       median=[0.40, 0.41]))
    >>> effects = sweep_effects(t)["fig2/zoom_in_unchanged"]  # per architecture, one value per seed
    >>> list(effects), decide(PROTOCOL["fig2/zoom_in_unchanged"], effects).verdict  # one seed
    (['ResNet'], 'inconclusive at this budget')
    """
    archs, std_archs = _archs(table, "untrained", "none"), _archs(table, "untrained", "standard")
    aug_archs = _archs(table, "untrained", "none", "standard")
    have = set(table["transform"])
    app = [g for g in APPEARANCE_B3 if g in have]
    missing = lambda grids, who: results.not_measurable(  # noqa: E731
        f"no {who} model pair or no {', '.join(grids)} grid in this profile's sweep")
    ch = lambda a, g, after="none", before="untrained": seed_change(table, a, g, after, before)  # noqa: E731
    fx = {}
    fx["fig2/train_raises_translation_appearance"] = dict(
        translate={a: ch(a, "translate") for a in archs},
        appearance={a: np.mean([ch(a, g) for g in app], axis=0) for a in archs},
    ) if archs and "translate" in have and app else missing(["translate", "appearance"], "untrained/none")
    fx["fig2/train_lowers_rotation_shear"] = {g: {a: ch(a, g) for a in archs} for g in ("rotate", "shear")} \
        if archs and {"rotate", "shear"} <= have else missing(["rotate", "shear"], "untrained/none")
    fx["fig2/zoom_in_unchanged"] = {a: ch(a, "zoom_in") for a in archs} if archs and "zoom_in" in have else \
        missing(["zoom_in"], "untrained/none")
    fx["fig2/standard_raises_translation"] = {a: ch(a, "translate", "standard") for a in std_archs} \
        if std_archs and "translate" in have else missing(["translate"], "untrained/standard")
    fx["fig2/standard_zoom_in_unchanged"] = {a: ch(a, "zoom_in", "standard") for a in std_archs} \
        if std_archs and "zoom_in" in have else missing(["zoom_in"], "untrained/standard")
    gain = {a: ch(a, "translate", "standard", "none") for a in aug_archs} if "translate" in have else {}
    fx["fig2/augmentation_slight_translation"] = {"raises": gain, "only slightly": gain} if gain else \
        missing(["translate"], "none/standard")
    ut = table if untrained is None else untrained
    untrained = {a: seed_level_means(ut, a, "untrained", "translate") for a in ARCHS}
    aligned = {a: seed_level_means(ut, a, "untrained", "translate", "alignment") for a in ARCHS}
    if all(untrained.values()):
        common = sorted(set(untrained["ViT"]) & set(untrained["ResNet"]))
        pair = lambda d: results.paired([d["ViT"][k] for k in common], [d["ResNet"][k] for k in common])  # noqa: E731
        fx["fig2/untrained_vit_translation"] = pair(untrained)
        fx["figA10/untrained_resnet_equivariant"] = {
            "ResNet aligned": list(aligned["ResNet"].values()), "ResNet more aligned than ViT": -pair(aligned),
            "ResNet not invariant": list(untrained["ResNet"].values())}
    else:
        for cid in UNTRAINED_CLAIMS:
            fx[cid] = missing(["translate"], "untrained ResNet and untrained ViT")
    return fx


def report_sweep(run, table, untrained=None) -> dict:
    """Section 3's claims (Fig. 2, A3, A10) as scoreboard rows, from the effects of :func:`sweep_effects`; returns
    what the chapter's prose quotes (:func:`sweep_readings`).

    Per model, a grid's score is the mean over levels 1-9 of the median relative invariance; "training" is the model
    trained without augmentation against the untrained one, and for translation and zoom also the model trained with
    standard augmentation (the paper's and its authors' "trained" model) against the untrained one, each with its own
    claim; equivariance is the mean alignment over levels 1-9. With several seeds (the table's ``seed``) each claim's
    effect is per seed and the numbers in "this run" are means over seeds. Records what a seed of the models costs to
    train (``seeds``: :func:`~invlib.papers.b.grounding.seed_seconds`) where every model is the zoo's or a seeded
    initialisation (hub weights have no seeds). ``untrained``: the untrained models' own sweep
    (:func:`~invlib.papers.b.grounding.untrained_table`), the family of the claims on initialisations alone
    (``untrained_seeds``, each seed's cost its sweeps' seconds); None: they read ``table`` as the rest do. The
    returned phrases include ``b3_untrained_seeds`` ("16 seeds"), what those claims average over.
    """
    fx = sweep_effects(table, untrained)
    ut = table if untrained is None else untrained
    archs, std_archs = _archs(table, "untrained", "none"), _archs(table, "untrained", "standard")
    have = set(table["transform"])
    app = [g for g in APPEARANCE_B3 if g in have]
    change = {a: training_change(table, a) for a in archs}
    change_std = {a: training_change(table, a, after="standard") for a in std_archs}
    fmt = lambda d: "; ".join(f"{a}: " + ", ".join(f"{g} {v:+.3f}" for g, v in row.items()) for a, row in d.items())  # noqa: E731
    pick = lambda src, grids: {a: {g: src[a].get(g, np.nan) for g in grids if g in have} for a in src}  # noqa: E731
    d = pick(change_std, ["translate", "zoom_in"])
    aug = {a: (level_mean(table, a, "standard", "translate") - level_mean(table, a, "none", "translate"),
               change[a].get("translate", np.nan)) for a in archs}
    v = {a: level_mean(ut, a, "untrained", "translate") for a in ARCHS}
    al = {a: level_mean(ut, a, "untrained", "translate", "alignment") for a in ARCHS}
    ours = {
        "fig2/train_raises_translation_appearance": fmt(pick(change, ["translate", *app])),
        "fig2/train_lowers_rotation_shear": fmt(pick(change, ["rotate", "shear"])),
        "fig2/zoom_in_unchanged": fmt(pick(change, ["zoom_in"])),
        "fig2/standard_raises_translation": fmt(d), "fig2/standard_zoom_in_unchanged": fmt(d),
        "fig2/augmentation_slight_translation": "; ".join(
            f"{a}: augmentation {g:+.3f} vs training {t:+.3f}" for a, (g, t) in aug.items() if not np.isnan(g))
        or "no model pair",
        "fig2/untrained_vit_translation": f"ViT {v['ViT']:.3f}, ResNet {v['ResNet']:.3f}",
        "figA10/untrained_resnet_equivariant": f"alignment ResNet {al['ResNet']:.3f}, ViT {al['ViT']:.3f}; ResNet "
                                               f"invariance {v['ResNet']:.3f}"}
    seeded = lambda t: {"seed", "seconds", "spec"} <= set(t) and t.spec.str.startswith(("zoo:", "random:")).all()  # noqa: E731
    on_seeds = [cid for cid in ours if untrained is None or cid not in UNTRAINED_CLAIMS]
    if seeded(table):
        run.replicates("seeds", seed_seconds(table), on_seeds, note="a seed: every model of the sweep, each "
                       "architecture and variant (the zoo's training seconds; an untrained one costs its build)")
    if untrained is not None and seeded(untrained):
        run.replicates("untrained_seeds", seed_seconds(untrained), list(UNTRAINED_CLAIMS), note="an untrained seed: "
                       "each architecture's initialisation and its translation sweep (seconds: the sweeps')")
    readings = sweep_readings({cid: _record(run, cid, text, fx[cid]) for cid, text in ours.items()}, table)
    return dict(readings, b3_untrained_seeds=_count(int(ut["seed"].nunique()) if "seed" in ut else 1, "seed"))


# Chapter B3's claims as its reading names them (:func:`reading`).
B3_THAT = {
    "fig2/train_raises_translation_appearance": "training without augmentation raises invariance to translation and "
                                                "to appearance changes",
    "fig2/train_lowers_rotation_shear": "training lowers invariance to rotation and shear",
    "fig2/zoom_in_unchanged": "training without augmentation leaves the mean invariance to zooming in unchanged",
    "fig2/standard_raises_translation": "training with standard augmentation raises invariance to translation",
    "fig2/standard_zoom_in_unchanged": "training with standard augmentation leaves the mean invariance to zooming in "
                                       "unchanged",
    "fig2/augmentation_slight_translation": "standard augmentation adds only a little translation invariance",
    "fig2/untrained_vit_translation": "an untrained ViT is more translation-invariant than an untrained ResNet",
    "figA10/untrained_resnet_equivariant": "an untrained ResNet responds to translation in an aligned way without "
                                           "being invariant to it, and a ViT does not"}


def sweep_readings(ev: dict, table=None) -> dict:
    """What chapter B3's prose quotes (``{glue:md}``): ``b3_reading``, its claims grouped by verdict
    (:func:`reading`), and, from the sweep ``table``, :func:`sweep_numbers`.

    Example
    -------
    >>> up = decide(PROTOCOL["fig2/untrained_vit_translation"], [0.3, 0.35, 0.4])
    >>> sweep_readings({"fig2/untrained_vit_translation": up})["b3_reading"]
    'This run reproduces that an untrained ViT is more translation-invariant than an untrained ResNet.'
    """
    return dict(b3_reading=reading(ev, B3_THAT), **({} if table is None else sweep_numbers(table)))


def sweep_numbers(table) -> dict:
    """What training without augmentation changed (:func:`~invlib.papers.b.grounding.training_change`, the mean
    over seeds) as short phrases for chapter B3's prose: ``b3_translate``, ``b3_rotate``, ``b3_shear`` (e.g. "+0.063
    for the ResNet and +0.378 for the ViT") and ``b3_appearance`` (the mean over the appearance grids the sweep
    holds); ``b3_seeds``, the seeds ("3 seeds"). "not measured" where the sweep lacks the models or the grid.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="ResNet", variant=["untrained", "none"], transform="rotate", level=1, seed=0,
    ...                       median=[0.6, 0.4]))
    >>> n = sweep_numbers(t)
    >>> n["b3_rotate"], n["b3_translate"], n["b3_seeds"]
    ('-0.2 for the ResNet', 'not measured', '1 seed')
    """
    change = {a: training_change(table, a) for a in _archs(table, "untrained", "none")}
    app = [g for g in APPEARANCE_B3 if g in set(table["transform"])]
    for row in change.values():
        row["appearance"] = float(np.mean([row[g] for g in app])) if app else math.nan

    def phrase(grid):
        said = [f"{number(row[grid], sign=True)} for the {a}" for a, row in change.items()
                if not math.isnan(row.get(grid, math.nan))]
        return _join(said) if said else "not measured"

    seeds = int(table["seed"].nunique()) if "seed" in table else 1
    grids = ("translate", "rotate", "shear", "appearance")
    return dict(b3_seeds=_count(seeds, "seed"), **{f"b3_{g}": phrase(g) for g in grids})


# ------------------------------------------------------------------------------ section 3: the untrained ResNet and
# darkening (grounding.homogeneity_check)
NETWORKS = {"untrained": "untrained, as initialised", "untrained, centred": "untrained, BatchNorm centred on the "
            "probe images", "none": VARIANT_LABELS["none"], "standard": VARIANT_LABELS["standard"]}


def homogeneity_table(check):
    """:func:`invlib.papers.b.grounding.homogeneity_check` for the page: one row per network (named as
    :data:`NETWORKS` names them), its seeds, the largest turn of the embedding when the image is halved (over images
    and seeds) and the mean over seeds of its relative invariance to darkening.

    Example
    -------
    >>> import pandas as pd
    >>> c = pd.DataFrame(dict(network=["untrained", "untrained, centred"] * 2, seed=[0, 0, 1, 1],
    ...                       direction=[0.0, 0.4, 1e-9, 0.5], invariance=[0.889, 0.2, 0.889, 0.3]))
    >>> t = homogeneity_table(c)
    >>> t.index.tolist()
    ['untrained, as initialised', 'untrained, BatchNorm centred on the probe images']
    >>> t.seeds.tolist(), t.iloc[:, 1].round(3).tolist(), t.iloc[:, 2].round(3).tolist()
    ([2, 2], [0.0, 0.5], [0.889, 0.25])
    """
    import pandas as pd

    rows = {NETWORKS.get(net, net): {"seeds": len(g), "halving the image: largest 1 − cos": g.direction.max(),
                                     "invariance to darkening, levels 1-9": g.invariance.mean()}
            for net, g in check.groupby("network", sort=False)}
    return pd.DataFrame(rows).T.astype({"seeds": int})


def homogeneity_numbers(check, table=None) -> dict:
    """The numbers chapter B3's prose quotes from :func:`invlib.papers.b.grounding.homogeneity_check` (means over
    seeds; the turns are the largest over images and seeds): ``b3h_seeds``; ``b3h_turn`` (in words: "less than
    0.001" for a homogeneous network) and ``b3h_turn_centred``, how far halving the image turns the untrained
    network's embedding as initialised and centred;
    ``b3h_untrained``, ``b3h_centred`` and ``b3h_trained``, their invariance to darkening and the trained model's;
    ``b3h_change`` and ``b3h_change_centred``, trained minus each untrained one; ``b3h_trained_label``, which
    trained model. With the chapter's sweep ``table``, ``b3h_claim``: what darkening weighs in the appearance part
    of the claim that training raises invariance to appearance changes.

    Example
    -------
    >>> import pandas as pd
    >>> c = pd.DataFrame(dict(network=["untrained", "untrained, centred", "none"], seed=0, direction=[0, 0.4, 0.3],
    ...                       invariance=[0.889, 0.2, 0.4]))
    >>> n = homogeneity_numbers(c)
    >>> round(n["b3h_change"], 3), round(n["b3h_change_centred"], 3), n["b3h_trained_label"]
    (-0.489, 0.2, 'trained without augmentation')
    """
    inv = check.groupby("network").invariance.mean()
    turn = check.groupby("network").direction.max()
    trained = next((v for v in ("none", "standard") if v in inv), None)
    value = lambda key, s=inv: float(s[key]) if key in s else math.nan  # noqa: E731
    small = lambda v: "less than 0.001" if v < 0.0005 else number(v)  # noqa: E731
    out = dict(b3h_seeds=int(check.seed.nunique()), b3h_turn=small(value("untrained", turn)),
               b3h_turn_centred=value("untrained, centred", turn), b3h_untrained=value("untrained"),
               b3h_centred=value("untrained, centred"), b3h_trained=value(trained),
               b3h_trained_label={"none": "trained without augmentation", "standard": "trained with standard "
                                  "augmentation"}.get(trained, "trained"))
    out.update(b3h_change=out["b3h_trained"] - out["b3h_untrained"],
               b3h_change_centred=out["b3h_trained"] - out["b3h_centred"])
    if table is not None:
        out["b3h_claim"] = _darkening_in_claim(table)
    return out


def _darkening_in_claim(table, arch: str = "ResNet") -> str:
    """One sentence: the ResNet's mean change over the appearance grids (the effect of the claim's appearance part)
    with and without darkening, or why darkening is not in it on this run.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="ResNet", variant=["untrained", "none"] * 2, level=1, median=[0.9, 0.4, 0.5, 0.6],
    ...                       transform=["brightness_down"] * 2 + ["posterize"] * 2))
    >>> _darkening_in_claim(t)[-70:]
    "the ResNet's mean change over them is -0.2, and +0.1 over the other 1."
    """
    app = [g for g in APPEARANCE_B3 if g in set(table["transform"])]
    if "brightness_down" not in app:
        return ("This run's sweep leaves darkening out (its `grids`), so the claim's appearance part does not read "
                "it here; the `cpu` profile's sweep does.")
    if arch not in _archs(table, "untrained", "none"):
        return f"This run has no {arch} trained without augmentation, so the claim's appearance part is not measured."
    change = training_change(table, arch)
    others = [g for g in app if g != "brightness_down"]
    mean = lambda grids: number(float(np.mean([change[g] for g in grids])), sign=True) if grids else "n/a"  # noqa: E731
    return (f"The table of what training changed gives the first of these changes (darkening is its "
            f"`brightness_down`). Darkening is one of the {len(app)} appearance grids whose changes the claim's "
            f"appearance part averages: the {arch}'s mean change over them is {mean(app)}, and {mean(others)} over "
            f"the other {len(others)}.")


def plot_search(searches: dict, kind: str = "single", drop=()):
    """Fig. 3A / A4 / A5: the distribution over classes of each entry's mean percent change, one panel per model
    (side by side), one box per entry (a row, named), the pool's order kept. ``drop``: operation types to leave out
    (Fig. A5 drops translations and rescales)."""
    import matplotlib.pyplot as plt

    first = next(iter(searches.values()))[kind]
    keep = [j for j, e in enumerate(first.entries) if similarity.op_type(e) not in drop]
    fig, axes = plt.subplots(1, len(searches), figsize=(3.4 * len(searches) + 1.6, 0.155 * len(keep) + 1.3),
                             squeeze=False, sharey=True, sharex=True, layout="constrained")
    for ax, (variant, found) in zip(axes[0], searches.items()):
        s = found[kind]
        m = s.class_means()[:, [s.entries.index(first.entries[j]) for j in keep]]
        ax.boxplot(m, vert=False, showfliers=True, widths=0.6, flierprops=dict(markersize=2))
        ax.axvline(0, color="red", lw=0.8)
        ax.set_xlabel("% change of pair similarity", fontsize=9)
        ax.set_title(f"ResNet, {VARIANT_LABELS.get(variant, variant)}", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    axes[0, 0].set_yticks(range(1, len(keep) + 1), [first.entries[j] for j in keep], fontsize=8)
    axes[0, 0].invert_yaxis()  # the pool's first entry on top
    return fig


def plot_top_per_class(searches: dict):
    """Fig. 3B: each class's best entry against the best entry across classes (mean ± SEM over its pairs), in the
    search of the model without augmentation (``searches["none"]["single"]``)."""
    import matplotlib.pyplot as plt

    s = searches["none"]["single"]
    m, best = s.class_means(), s.global_ranking()[0][0]
    j_best = s.entries.index(best)
    tops = [row[0] for row in s.top(1)]
    sems = [metrics.sem(s.changes[s.entries.index(t), s.labels == c]) for c, t in enumerate(tops)]
    sems_g = [metrics.sem(s.changes[j_best, s.labels == c]) for c in range(len(s.classes))]
    fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
    pos = np.arange(len(s.classes))
    bars = dict(ecolor="0.25", elinewidth=1, capsize=2)
    ax.bar(pos - 0.2, [m[c, s.entries.index(t)] for c, t in enumerate(tops)], 0.4, yerr=sems, color="#56B4E9",
           error_kw=bars, label="the class's best entry (named under the class)")
    ax.bar(pos + 0.2, m[:, j_best], 0.4, yerr=sems_g, color="#E69F00", error_kw=bars,
           label=f"the best across classes ({best})")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xticks(pos, [f"{c}\n{t}" for c, t in zip(s.classes, tops)], rotation=40, fontsize=8, ha="right",
                  rotation_mode="anchor")
    ax.set_ylabel("% change of pair similarity", fontsize=9)
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------------ sections 4.1-4.4 (chapter B4)
# The search is one trained model's: its claims are about that model ("this model"), whose evaluation items are its
# same-class image pairs (an interval over a class's pairs) or its classes (an interval over classes). A maximum or
# minimum over many entries or classes is decided on simultaneous intervals (Bonferroni, level 1 - 0.05 / k), made
# here at the level of the family the declaration names.
def _cells(s, entries, level: float):
    """``(mean, lo, hi, n)``: each (class, entry)'s mean percent change with its t-interval over the class's pairs at
    ``level``, as ``(C, E)`` arrays, and the fewest pairs of a class."""
    cols = [s.entries.index(e) for e in entries]
    changes, labels = s.changes.double().numpy()[cols], s.labels.numpy()
    cells = [results.t_intervals(changes[:, labels == c], level) for c in range(len(s.classes))]
    arrays = (np.stack([cell[k] for cell in cells]) for k in range(3))
    return (*arrays, int(min((labels == c).sum() for c in range(len(s.classes)))))


def largest_worst_class(s, entries=None) -> results.Interval:
    """The effect of "no entry raises every class" in this model's search ``s``: the largest over entries of an
    entry's smallest class mean, with simultaneous t-intervals over each class's pairs (Bonferroni over the entries
    or the classes, whichever are more).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "color/4"], torch.tensor([[5.0, 6, 5, 6, -5, -6, -5, -6], [-6.0, -5, -6, -5, 5, 6,
    ...            5, 6]]), torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]), ["a", "b"])
    >>> decide(PROTOCOL["figA4/no_subpolicy"], largest_worst_class(s)).verdict
    'reproduced'
    """
    entries = s.transforms() if entries is None else entries
    level = 1 - (1 - results.LEVEL["less"]) / max(len(entries), len(s.classes))
    mean, lo, hi, n = _cells(s, entries, level)
    pick = lambda m: float(m.min(0).max())  # noqa: E731
    return results.Interval(pick(mean), pick(lo), pick(hi), n, level, "bonferroni t")


def smallest_best_entry(s) -> results.Interval:
    """The effect of "each class has an entry that raises it" in this model's search ``s``: the smallest over
    classes of a class's best entry's mean, with simultaneous t-intervals over the class's pairs (Bonferroni over the
    entries or the classes, whichever are more; the class's best is chosen among the entries).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "color/4"], torch.tensor([[5.0, 6, 5, 6, -5, -6, -5, -6], [-6.0, -5, -6, -5, 5, 6,
    ...            5, 6]]), torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]), ["a", "b"])
    >>> decide(PROTOCOL["fig3b/top_per_class"], smallest_best_entry(s)).verdict
    'reproduced'
    """
    entries = s.transforms()
    level = 1 - (1 - results.LEVEL["greater"]) / max(len(entries), len(s.classes))
    mean, lo, hi, n = _cells(s, entries, level)
    pick = lambda m: float(m.max(1).min())  # noqa: E731
    return results.Interval(pick(mean), pick(lo), pick(hi), n, level, "bonferroni t")


def best_global_interval(s) -> results.Interval:
    """The effect of "the best entry across classes changes nothing": each entry's 90 % t-interval over the
    classes' means, Bonferroni over the entries, and the largest estimate, lower and upper end (a valid interval for
    the best entry's true mean).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3"], torch.tensor([[0.1, 0.2, -0.1, 0.0, 0.1, 0.1]]), torch.tensor([0, 0, 1, 1, 2, 2]),
    ...            ["a", "b", "c"])
    >>> part = PROTOCOL["fig3a/no_single_transform"].parts["best across classes within ± 1 %"]
    >>> iv = best_global_interval(s)
    >>> part.boundary - part.smallest < iv.lo and iv.hi < part.boundary + part.smallest
    True
    """
    cols = [s.entries.index(e) for e in s.transforms()]
    level = 1 - (1 - results.LEVEL["equivalent"]) / len(cols)
    m = s.class_means()[:, cols]
    ivs = [results.t_interval(m[:, j], level) for j in range(len(cols))]
    best = lambda k: float(max(getattr(iv, k) for iv in ivs))  # noqa: E731
    return results.Interval(best("estimate"), best("lo"), best("hi"), m.shape[0], level, "bonferroni t")


def fig3c_per_class(f3c: dict) -> np.ndarray:
    """Per class, its share of Fig. 3C's slots per grid that grew minus
    :data:`~invlib.papers.b.protocol.FIG3C_RATIO` times its share per other grid
    (:func:`invlib.papers.b.grounding.fig3c`, whose ``per_class`` slots it reads): the mean over classes is
    ``increases - 1.5 x decreases``. Empty where no grid, or every grid, grew.

    Example
    -------
    >>> f = dict(per_class=[{"rotate": 2, "posterize": 1}, {"rotate": 3}], gap={"rotate": 0.1, "posterize": -0.1})
    >>> fig3c_per_class(f).round(3).tolist()
    [0.167, 1.0]
    """
    gap, per_class = f3c["gap"], f3c["per_class"]
    grids = {g for row in per_class for g, n in row.items() if n}
    up, down = [g for g in grids if gap[g] > 0], [g for g in grids if not gap[g] > 0]
    if not up or not down:
        return np.array([])
    total = sum(sum(row.values()) for row in per_class)
    c = len(per_class)
    return np.array([c * (sum(row.get(g, 0) for g in up) / (total * len(up))
                          - FIG3C_RATIO * sum(row.get(g, 0) for g in down) / (total * len(down)))
                     for row in per_class])


def box_spread(boxes, size, generated: bool) -> dict:
    """The effects of "foreground boxes vary more in scale than in position" by part: the std of the box side (sqrt
    of its area fraction) minus the larger std of its centre (fractions of the frame). On generated data
    (``scenes``) the boxes are the generator's own draws: a deterministic check of the data the chapter runs on
    (part ``generated boxes``); on other data a 95 % bootstrap over the images (``measured boxes``). The other part
    is not measurable.

    Example
    -------
    >>> b = torch.tensor([[4.0, 4, 12, 12], [2, 2, 14, 14], [6, 6, 10, 10], [3, 3, 13, 13]])
    >>> decide(PROTOCOL["e1/scale_varies_more"], box_spread(b, (16, 16), generated=True)).verdict
    'reproduced'
    """
    st = similarity.foreground_stats(boxes, size)
    def spread(side, cx, cy, axis=-1):  # every bootstrap resample at once
        return np.std(side, axis=axis) - np.maximum(np.std(cx, axis=axis), np.std(cy, axis=axis))

    if generated:
        return {"generated boxes": results.exact(float(spread(st["side"], st["cx"], st["cy"]))),
                "measured boxes": results.not_measurable("the boxes are the scenes generator's own draws")}
    return {"generated boxes": results.not_measurable("the boxes are measured on the images"),
            "measured boxes": results.bootstrap_interval((st["side"], st["cx"], st["cy"]), spread, paired=True)}


def _share_appearance(names) -> float:
    names = list(names)
    return sum(similarity.group_of(similarity.op_type(e)) == "appearance" for e in names) / max(1, len(names))


def dampening(none, standard) -> dict:
    """Fig. 3A's dampening numbers of one seed's searches (single operations) with the models without and with
    standard augmentation: per variant, ``(mean change, spread over classes and entries, spread without
    translations and rescales)`` of the class means, in percent.

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "translateX/5"], torch.tensor([[2.0, -2], [4, -4]]), torch.tensor([0, 1]), ["a", "b"])
    >>> [round(v, 3) for v in dampening(s, s)["none"]]  # the translation left out of the last: rotate/3 alone
    [0.0, 3.162, 2.0]
    """
    geo = [j for j, e in enumerate(none.entries) if similarity.op_type(e) not in ("translateX", "translateY",
                                                                                   "rescale")]
    return {v: (float(mm.mean()), float(mm.std()), float(mm[:, geo].std()))
            for v, mm in (("none", none.class_means()), ("standard", standard.class_means()))}


def report_search(run, searches: dict, gap: dict | None, boxes=None, size=None, generated: bool = False,
                  seeds: dict | None = None) -> dict:
    """Section 4.1-4.4's claims (Fig. 3, A4, A5) and App. E.1's as scoreboard rows; returns the numbers, and under
    ``"readings"`` what the chapter's prose quotes (:func:`search_readings`). ``gap``: Fig. 3C's invariance gap per
    sweep grid (:func:`invlib.papers.b.grounding.invariance_gap`); ``generated``: the boxes are drawn by the data's
    generator (``scenes``), so App. E.1's claim checks the data rather than measures it; ``seeds``: Fig. 3A's
    dampening over seeds (:func:`invlib.papers.b.grounding.seed_searches`; without it, the seed-0 searches of
    ``searches``), whose cost a seed is recorded (``seeds``). Also logs ``top_per_class``, ``appearance_share_top5`` and
    ``identity_best_geometric`` on ``run``."""
    s = searches["none"]["single"]
    m = s.class_means()
    ranking = s.global_ranking()
    best, best_mean, best_sem = ranking[0]
    out = dict(best_global=best, best_global_mean=best_mean, best_global_sem=best_sem)
    ev = {}
    record = lambda cid, ours, effects: ev.__setitem__(cid, _record(run, cid, ours, effects))  # noqa: E731
    # 1. no single transform raises similarity for every class
    n_all = sum(bool((m[:, s.entries.index(e)] > 0).all()) for e in s.transforms())
    record("fig3a/no_single_transform",
           f"{n_all} of {len(s.transforms())} raise every class's mean; best: {best}, {best_mean:+.2f} ± "
           f"{best_sem:.2f} % (mean ± SEM over classes)",
           {"no entry raises every class": largest_worst_class(s),
            "best across classes within ± 1 %": best_global_interval(s)})
    # 2. the top transform per class raises similarity for every class
    tops = [row[0] for row in s.top(1)]
    top_vals = np.array([m[c, s.entries.index(t)] for c, t in enumerate(tops)])
    out.update(top_per_class=dict(zip(s.classes, tops)), top_mean=float(top_vals.mean()),
               top_sem=metrics.sem(torch.from_numpy(top_vals)))
    record("fig3b/top_per_class", f"{int((top_vals > 0).sum())} of {len(tops)} classes; {top_vals.mean():+.2f} ± "
                                  f"{out['top_sem']:.2f} %", smallest_best_entry(s))
    counts = np.array([sum(m[c, s.entries.index(e)] > 0 for e in row) for c, row in enumerate(s.top(10))], float)
    out["top10_positive"] = float(counts.mean())
    record("e/top10_positive", round(float(counts.mean()), 2), counts)
    # 3. sub-policies
    if "sub" in searches["none"]:
        sub = searches["none"]["sub"]
        n_sub = sum(bool((sub.class_means()[:, sub.entries.index(e)] > 0).all()) for e in sub.transforms())
        record("figA4/no_subpolicy", f"{n_sub} of {len(sub.entries)} raise every class's mean",
               largest_worst_class(sub))
    # 4. augmentation dampens similarity changes: a claim about what training with augmentation does (seeds)
    if "standard" in searches:
        per_seed = [dampening(v["none"], v["standard"]) for _, v in sorted(seeds.items())] if seeds else \
            [dampening(s, searches["standard"]["single"])]
        vals = {v: tuple(float(np.mean([d[v][i] for d in per_seed])) for i in range(3)) for v in ("none", "standard")}
        out["dampen"] = vals
        over = f" (means over {len(per_seed)} seeds)" if len(per_seed) > 1 else ""
        record("fig3a/augmentation_dampens",
               f"mean {vals['none'][0]:+.2f} → {vals['standard'][0]:+.2f} %, spread {vals['none'][1]:.2f} → "
               f"{vals['standard'][1]:.2f}, without translations and rescales {vals['none'][2]:.2f} → "
               f"{vals['standard'][2]:.2f}{over}",
               {"higher mean change": [d["standard"][0] - d["none"][0] for d in per_seed],
                "lower spread": [d["none"][1] - d["standard"][1] for d in per_seed],
                "lower spread without translations and rescales": [d["none"][2] - d["standard"][2]
                                                                    for d in per_seed]})
        if seeds:
            run.replicates("seeds", [v["seconds"] for _, v in sorted(seeds.items())], ["fig3a/augmentation_dampens"],
                           note="a seed: the search architecture's models without and with standard augmentation "
                                "(chapter B3's models of the seed; the zoo's training seconds)")
    # 5. appearance vs geometric
    top5 = s.top(5)
    pool_share = _share_appearance(s.transforms())
    share5, share1 = _share_appearance([e for row in top5 for e in row]), _share_appearance(tops)
    out.update(appearance_top5=share5, appearance_top1=share1, appearance_pool=pool_share)
    record("sec4.3/appearance_prevails", f"appearance: {share1:.0%} of the top-1 and {share5:.0%} of the top-5 "
                                         f"entries per class (pool: {pool_share:.0%})",
           [_share_appearance(row) - pool_share for row in top5])
    j_geo = [s.entries.index(e) for e in s.transforms() if similarity.group_of(similarity.op_type(e)) == "geometric"]
    identity = int((m[:, j_geo].max(1) <= 0).sum())
    out["identity_best_geometric"] = identity / len(s.classes)
    record("sec4.3/identity_best_geometric", f"{identity} of {len(s.classes)} classes",
           results.share_interval(identity, len(s.classes)))
    if "standard" in searches:
        tops_std = [row[0] for row in searches["standard"]["single"].top(1)]
        k_std = sum(similarity.group_of(similarity.op_type(e)) == "appearance" for e in tops_std)
        out["appearance_top1_standard"] = k_std / len(tops_std)
        record("sec4.3/appearance_with_augmentation", f"{k_std} of {len(tops_std)} classes",
               results.share_interval(k_std, len(tops_std)))
    # 6. Fig. 3C, as the authors' script computes it
    if gap:
        f3c = fig3c(s, gap)
        out["fig3c"] = f3c
        up = sorted(g for g in f3c["counts"] if gap[g] > 0)
        down = sorted(g for g in f3c["counts"] if not gap[g] > 0)
        record("fig3c/invariance_grew_top5",
               f"mean share of the top-5 slots: {f3c['increases']:.0%} per grid that grew ({', '.join(up)}) vs "
               f"{f3c['decreases']:.0%} per other grid ({', '.join(down) or 'none'})", fig3c_per_class(f3c))
    elif gap is not None:
        record("fig3c/invariance_grew_top5", "—", results.not_measurable(
            "no untrained and standard model of the search architecture: no invariance gap"))
    # 7. App. E.1
    if boxes is not None:
        fg = similarity.foreground_stats(boxes, size)["summary"]
        out["foreground"] = fg
        spread_c = max(fg["cx"]["std"], fg["cy"]["std"])
        record("e1/scale_varies_more",
               f"side std {fg['side']['std']:.3f} (area {fg['area']['p5']:.2f}–{fg['area']['p95']:.2f}); centre std "
               f"{spread_c:.3f} (cx {fg['cx']['mean']:.3f} ± {fg['cx']['sem']:.3f})",
               box_spread(boxes, size, generated))
    out["readings"] = search_readings(ev)
    run.log("top_per_class", out["top_per_class"])
    run.log("appearance_share_top5", out["appearance_top5"])
    run.log("identity_best_geometric", out["identity_best_geometric"])
    return out


# Chapter B4's claims that carry the paper's argument, as its reading names them (:func:`reading`; the findings box
# and the claims table give every claim).
B4_THAT = {
    "fig3a/no_single_transform": "no single transformation raises every class's similarity while the best one "
                                 "across classes changes it by less than 1 %",
    "fig3b/top_per_class": "every class has a transformation that raises its similarity",
    "sec4.3/appearance_prevails": "appearance operations fill a class's top 5 more often than their share of the "
                                  "pool",
    "fig3a/augmentation_dampens": "standard augmentation dampens the similarity changes",
    "fig3c/invariance_grew_top5": "the transformations whose invariance grew in training fill more of the classes' "
                                  "top 5"}


def search_readings(ev: dict) -> dict:
    """What chapter B4's prose quotes (``{glue:md}``): ``b4_reading``, the claims of :data:`B4_THAT` that
    :func:`report_search` recorded, grouped by verdict (:func:`reading`; a claim it did not record is left out).

    Example
    -------
    >>> iv = results.Interval(1.5, 1.2, 1.8, 10, 0.99, "bonferroni t")  # every class's best raises it by > 1 %
    >>> search_readings({"fig3b/top_per_class": decide(PROTOCOL["fig3b/top_per_class"], iv)})["b4_reading"]
    'This run reproduces that every class has a transformation that raises its similarity.'
    """
    return dict(b4_reading=reading(ev, B4_THAT))


# A short name for each claim of the sensitivity table (search_sensitivity's rows).
SEARCH_SHORT = {"fig3a/no_single_transform": "no transformation for every class (Fig. 3A)",
                "fig3b/top_per_class": "a transformation per class (Fig. 3B)",
                "e/top10_positive": "6.5 of a class's top 10 raise it (App. E)",
                "figA4/no_subpolicy": "no sub-policy for every class (Fig. A4)",
                "fig3a/augmentation_dampens": "augmentation dampens the changes (Fig. 3A)",
                "sec4.3/appearance_prevails": "appearance prevails (sec. 4.3)",
                "sec4.3/identity_best_geometric": "the identity, best geometric choice (sec. 4.3)",
                "sec4.3/appearance_with_augmentation": "appearance on top with augmentation (sec. 4.3)",
                "fig3c/invariance_grew_top5": "grown invariances in the top 5 (Fig. 3C)",
                "e2/rotation_top_weighted_boost": "rotations fill the top 10 (App. E.2)"}


def search_sensitivity(configurations: dict, gap: dict | None = None):
    """The headline search claims (Fig. 3A-C, section 4.3, App. E.2) under each configuration of
    :func:`invlib.papers.b.grounding.search_configurations`: one row per claim, one verdict column per
    configuration (``"not computed"`` where one has no such search, e.g. the sub-policies of the alternatives), and
    ``differs`` (True where a verdict changes). Each configuration's claims are computed by
    :func:`report_search` on a scratch run, so the criteria are the chapter's.

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> one = Search(["rotate/3", "posterize/5"], torch.tensor([[1.0, 2, -1, 3], [-1.0, 1, 2, 2]]),
    ...              torch.tensor([0, 0, 1, 1]), ["a", "b"])
    >>> t = search_sensitivity({"x": {"none": {"single": one}}, "y": {"none": {"single": one}}})
    >>> t.loc["fig3b/top_per_class", "x"], bool(t["differs"].any())  # two pairs per class: too few to decide
    ('inconclusive at this budget', False)
    """
    import pandas as pd

    from ...results import Run

    columns = {}
    for label, searches in configurations.items():
        scratch = Run("smoke", name="sensitivity")
        report_search(scratch, searches, gap)
        report_wordnet(scratch, {}, searches)  # App. E.2 as chapter B5 decides it (Fig. 4 needs synsets)
        columns[label] = {cid: c["verdict"] for cid, c in scratch.claims.items()
                          if cid != "fig4/wordnet_similar_classes"}
    table = pd.DataFrame(columns)
    table["differs"] = table.nunique(axis=1) > 1  # among the configurations that computed the claim
    return table.fillna("not computed")


def log_sensitivity(run, configurations: dict, gap: dict | None = None):
    """:func:`search_sensitivity`'s table, logged on ``run`` as ``search_sensitivity``."""
    table = search_sensitivity(configurations, gap)
    run.log("search_sensitivity", table.to_dict())
    return table


def search_numbers(searches: dict) -> dict:
    """What chapter B4's prose says of the search of the model without augmentation: ``b4_pairs`` same-class pairs,
    ``b4_classes``, ``b4_entries`` pool entries (``b4_distinct`` distinct operations), ``b4_similarity`` the mean
    cosine similarity of a pair, ``b4_subpolicies`` the two-operation sub-policies searched (0: none).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3"], torch.tensor([[1.0, -1.0]]), torch.tensor([0, 1]), ["a", "b"],
    ...            meta=dict(pairs=2, evaluated=1, mean_similarity=0.5))
    >>> search_numbers({"none": {"single": s}})
    {'b4_pairs': 2, 'b4_classes': 2, 'b4_entries': 1, 'b4_distinct': 1, 'b4_similarity': 0.5, 'b4_subpolicies': 0}
    """
    s = searches["none"]["single"]
    sub = searches["none"].get("sub")
    return dict(b4_pairs=int(s.meta["pairs"]), b4_classes=len(s.classes), b4_entries=len(s.entries),
                b4_distinct=int(s.meta["evaluated"]), b4_similarity=float(s.meta["mean_similarity"]),
                b4_subpolicies=len(sub.entries) if sub is not None else 0)


def sensitivity_table(table):
    """:func:`search_sensitivity`'s table for the page: each claim by its short name (:data:`SEARCH_SHORT`).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["reproduced"], "differs": [False]}, index=["fig3b/top_per_class"])
    >>> sensitivity_table(t).index.tolist()
    ['a transformation per class (Fig. 3B)']
    """
    return table.rename(index=lambda cid: SEARCH_SHORT.get(cid, cid))


def global_ranking_table(searches: dict, k: int = 10):
    """Fig. 3B's other side: the ``k`` best entries across classes of the model without augmentation's search,
    ``entry | mean change (%) | SEM over classes``.

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "posterize/5"], torch.tensor([[1.0, 2, -1, 3], [-1.0, 1, 2, 2]]),
    ...            torch.tensor([0, 0, 1, 1]), ["a", "b"])
    >>> list(global_ranking_table({"none": {"single": s}}, k=1).entry)
    ['rotate/3']
    """
    import pandas as pd

    ranking = searches["none"]["single"].global_ranking()[:k]
    return pd.DataFrame(ranking, columns=["entry", "mean change (%)", "SEM over classes"])


def fig3c_table(numbers: dict, gap: dict):
    """Fig. 3C per sweep grid: ``invariance gap`` (:func:`invlib.papers.b.grounding.invariance_gap`) and ``top-5
    slots`` (the grid's slots among the classes' top 5, :func:`report_search`'s ``numbers["fig3c"]``; NaN where
    there is none), rounded to 3 decimals.

    Example
    -------
    >>> fig3c_table({"fig3c": {"counts": {"rotate": 2}}}, {"rotate": 0.12345, "shear": -0.2}).to_dict("index")
    {'rotate': {'invariance gap': 0.123, 'top-5 slots': 2.0}, 'shear': {'invariance gap': -0.2, 'top-5 slots': nan}}
    """
    import pandas as pd

    counts = numbers.get("fig3c", {}).get("counts", {})
    return pd.DataFrame({"invariance gap": pd.Series(gap, dtype=float),
                         "top-5 slots": pd.Series(counts, dtype=float)}).round(3)


def foreground_table(numbers: dict):
    """App. E.1's foreground boxes (:func:`report_search`'s ``numbers["foreground"]``, from
    :func:`invlib.papers.b.similarity.foreground_stats`): one row per statistic of the boxes, one column per
    summary, rounded to 3 decimals; empty without boxes.

    Example
    -------
    >>> foreground_table({"foreground": {"side": {"mean": 0.51234, "std": 0.1}}}).to_dict("index")
    {'side': {'mean': 0.512, 'std': 0.1}}
    >>> len(foreground_table({}))
    0
    """
    import pandas as pd

    return pd.DataFrame(numbers.get("foreground", {})).T.round(3)


def plot_wordnet(reports: dict):
    """Fig. 4: ranking correlation against WordNet similarity, per class pair, with binned means ± SE, one panel per
    WordNet measure (None when ``reports`` is empty: classes without synsets)."""
    import matplotlib.pyplot as plt

    if not reports:
        return None
    fig, axes = plt.subplots(1, len(reports), figsize=(3.1 * len(reports), 3.0), squeeze=False, sharey=True,
                             layout="constrained")
    for ax, (metric, r) in zip(axes[0], reports.items()):
        f, b = r["pairs"], r["bins"]
        ax.scatter(f.wordnet, f.ranking, s=10, alpha=0.5, color="#0072B2", label="a class pair")
        ax.errorbar(b.wordnet, b.ranking, yerr=b.se, color="#D55E00", marker="o", capsize=3,
                    label="mean in a quartile bin ± SE")
        ax.set_xlabel(f"WordNet similarity ({WORDNET_NAMES.get(metric, metric)})", fontsize=9)
        ax.set_title(f"ρ = {r['rho']:.2f}, Mantel p = {r['p']:.3f}", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0, 0].set_ylabel("Spearman ρ of the two classes'\nrankings of operation types", fontsize=9)
    axes[0, 0].legend(fontsize=8, loc="lower left")
    return fig


# ------------------------------------------------------------------------------ section 4.5 (chapter B5)
WORDNET_NAMES = {"wup": "Wu-Palmer", "lch": "Leacock-Chodorow", "path": "path"}


def wordnet_table(reports: dict):
    """Fig. 4's correlations per WordNet measure (:func:`invlib.papers.b.grounding.wordnet_correlations`): Spearman's
    ρ of WordNet similarity with the ranking correlation, its Mantel p-value, and ρ with the top-5 and top-25 IoU;
    an empty table without synsets.

    Example
    -------
    >>> wordnet_table({"wup": dict(rho=0.2, p=0.1, rho_top5=0.3, rho_top25=0.05)}).to_dict("index")
    {'Wu-Palmer': {'Spearman ρ': 0.2, 'Mantel p': 0.1, 'ρ with top-5 IoU': 0.3, 'ρ with top-25 IoU': 0.05}}
    >>> len(wordnet_table({}))
    0
    """
    import pandas as pd

    row = lambda r: {"Spearman ρ": r["rho"], "Mantel p": r["p"], "ρ with top-5 IoU": r["rho_top5"],  # noqa: E731
                     "ρ with top-25 IoU": r["rho_top25"]}
    return pd.DataFrame({WORDNET_NAMES.get(m, m): row(r) for m, r in reports.items()}).T


def closest_pairs(reports: dict, k: int = 10, metric: str = "wup"):
    """The ``k`` class pairs closest in WordNet (``metric``), with their ranking correlation, top-5 and top-25 IoU
    and bin; empty without synsets.

    Example
    -------
    >>> import pandas as pd
    >>> pairs = pd.DataFrame(dict(a=["x", "y"], b=["y", "z"], wordnet=[0.5, 0.9], ranking=[0.1, 0.2]))
    >>> closest_pairs({"wup": {"pairs": pairs}}, k=1).values.tolist()
    [['y', 'z', 0.9, 0.2]]
    """
    import pandas as pd

    if metric not in reports:
        return pd.DataFrame()
    pairs = reports[metric]["pairs"].sort_values("wordnet", ascending=False).head(k).reset_index(drop=True)
    return pairs.rename(columns={"a": "class", "b": "other class", "wordnet": "WordNet similarity",
                                 "ranking": "ranking correlation", "top5_iou": "top-5 IoU", "top25_iou": "top-25 IoU"})


def rotation_interval(s, k: int = 10, level: float = 0.95) -> results.Interval:
    """App. E.2's effect for one model's search ``s`` (:class:`~invlib.papers.b.similarity.Search`): the weighted
    boost of the ``k``-th best rotation (class, entry) combination minus that of the best combination of any other
    transformation, > 0 exactly when all top ``k`` combinations are rotations. Each combination's boost is a mean
    over the class's same-class image pairs (the evaluation items of this one model) with a t-interval made
    simultaneous over all combinations (Bonferroni); the interval of the difference runs from the k-th largest
    lower end among rotations minus the largest upper end among the others, to the k-th largest upper end minus the
    largest lower end. A bootstrap of the top-k count is biased here: resampling a near-tie pushes the count down.

    Example
    -------
    >>> import torch
    >>> from invlib.papers.b.similarity import Search
    >>> changes = torch.tensor([[3.0, 3.2] * 10 + [4.0, 4.1] * 10, [1.0, -1.0] * 20])  # rotate/3 leads both classes
    >>> s = Search(["rotate/3", "posterize/5"], changes, torch.arange(40) // 20, ["a", "b"])
    >>> iv = rotation_interval(s, k=2)
    >>> round(iv.estimate, 2), iv.lo > 0, iv.method
    (2.6, True, 'bonferroni t')
    """
    from scipy import stats

    from .similarity import op_type

    changes = s.changes.double().clamp_min(0).numpy()  # (E, N): the weighted boost keeps the gains only
    labels = s.labels.numpy()
    rotation = np.array([op_type(e) == "rotate" for e in s.entries])
    classes = [np.flatnonzero(labels == c) for c in range(len(s.classes))]
    classes = [c for c in classes if len(c) >= 2]
    if not classes or rotation.all() or len(s.entries) * len(classes) < k:
        return results.Interval(math.nan, math.nan, math.nan, 0, level, "bonferroni t")
    if rotation.sum() * len(classes) < k:  # fewer rotation combinations than places: the claim cannot hold
        return results.Interval(-math.inf, -math.inf, -math.inf, len(labels), level, "exact")
    mean = np.stack([changes[:, c].mean(1) for c in classes], 1)  # (E, C)
    se = np.stack([changes[:, c].std(1, ddof=1) / math.sqrt(len(c)) for c in classes], 1)
    df = np.array([len(c) - 1 for c in classes])[None, :]
    half = stats.t.ppf(1 - (1 - level) / (2 * mean.size), df) * se
    lo, hi = mean - half, mean + half

    def kth(values):
        return np.sort(values[rotation].ravel())[-k]

    return results.Interval(float(kth(mean) - mean[~rotation].max()), float(kth(lo) - hi[~rotation].max()),
                            float(kth(hi) - lo[~rotation].max()), len(labels), level, "bonferroni t")


def _top_rotations(s, k: int = 10) -> int:
    """How many of the top ``k`` (class, entry) combinations by weighted boost are rotations."""
    from .similarity import op_type

    boost = s.changes.double().clamp_min(0).numpy()
    labels = s.labels.numpy()
    cells = [(boost[e, labels == c].mean(), op_type(entry) == "rotate") for e, entry in enumerate(s.entries)
             for c in range(len(s.classes)) if (labels == c).any()]
    return sum(rot for _, rot in sorted(cells, key=lambda t: -t[0])[:k])


def report_wordnet(run, reports: dict, searches: dict) -> dict:
    """Section 4.5's claims (Fig. 4, App. E.2) as scoreboard rows; returns their evidence by claim id (for
    :func:`invlib.papers.b.rrc_reports.b5_sentences`). Fig. 4 on the search of the model without augmentation:
    Spearman's rho between the WordNet similarity (Wu-Palmer where there) and the ranking correlation of the class
    pairs, with its bootstrap interval over classes (``reports[metric]["interval"]``,
    :func:`~invlib.papers.b.similarity.wordnet_correlation`: whole classes resampled, so the K (K - 1) / 2 pairs of
    K classes are not taken as independent); not measurable without synsets (``reports`` empty). App. E.2 on the
    standard-augmentation model's search (the model without augmentation's where there is none,
    :func:`rotation_interval`). Both are claims about this run's one trained model of each kind."""
    r = reports.get("wup") or next(iter(reports.values()), dict(rho=math.nan, p=math.nan, metric="wup", pairs=[]))
    others = ", ".join(f"{m} ρ = {x['rho']:+.2f} (Mantel p = {x['p']:.3f})" for m, x in reports.items())
    fig4 = _record(run, "fig4/wordnet_similar_classes",
                   f"{others}; {len(r['pairs'])} class pairs" if reports else "no WordNet synsets for these classes",
                   r["interval"] if reports else results.not_measurable(
                       "these classes have no WordNet synsets (a folder of your own)"))
    variant = "standard" if "standard" in searches else "none"
    s = searches[variant]["single"]
    iv = rotation_interval(s)
    cells = len(s.entries) * len(s.classes)
    rot = {v: rotation_classes(searches, v)["by_boost"] for v in searches}
    e2 = _record(run, "e2/rotation_top_weighted_boost",
                 f"{_top_rotations(s)} of 10 ({variant} model); 10th best rotation minus the best other: "
                 f"{iv.estimate:+.3g}; classes with rotation on top by weighted boost: "
                 f"{', '.join(rot[variant]) or 'none'}",
                 iv if cells >= 10 else results.not_measurable(
                     f"the search has {cells} (class, entry) combinations, fewer than the paper's top 10"))
    return {"fig4/wordnet_similar_classes": fig4, "e2/rotation_top_weighted_boost": e2}


# ------------------------------------------------------------------------------ the thesis, controlled (chapter B7)
def variation_summary(table):
    """Mean and standard error over seeds of every measured column, per (level, method) of
    :func:`invlib.papers.b.grounding.variation_study`'s table, and RRC's crop gain per level (test accuracy of
    each RRC seed minus the no-augmentation model of the same seed, in points).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(level=[0, 0, 1, 1], method=["fixed_size_center_crop", "rrc"] * 2, seed=0,
    ...                       train_acc=[90, 80, 90, 85], test_acc=[60, 55, 61, 64], translate=[.1, .2, .3, .4]))
    >>> variation_summary(t).dropna(subset=["crop_gain"])[["level", "crop_gain"]].values.tolist()
    [[0.0, -5.0], [1.0, 3.0]]
    """
    import pandas as pd

    from ...results import mean_se

    cols = [c for c in table.columns if c not in ("level", "method", "seed", "seconds")]
    rows = []
    for (level, method), g in table.groupby(["level", "method"], sort=True):
        row = dict(level=level, method=method, seeds=len(g))
        for c in cols:
            row[c], row[f"{c}_se"] = mean_se(g[c].to_numpy(float))
        rows.append(row)
    out = pd.DataFrame(rows)
    base = table[table.method == "fixed_size_center_crop"].set_index(["level", "seed"]).test_acc
    gains = {}
    for level, g in table[table.method == "rrc"].groupby("level"):
        gains[level] = mean_se([r.test_acc - base.get((level, r.seed), np.nan) for r in g.itertuples()])
    out["crop_gain"] = [gains.get(lv, (np.nan, np.nan))[0] if m == "rrc" else np.nan
                        for lv, m in zip(out.level, out.method)]
    out["crop_gain_se"] = [gains.get(lv, (np.nan, np.nan))[1] if m == "rrc" else np.nan
                           for lv, m in zip(out.level, out.method)]
    return out


def plot_variation(summary, grids=("translate", "zoom_in")):
    """Invariance to each grid (models trained without augmentation and with RRC) and RRC's crop gain against the
    data's variation, mean over seeds with standard-error bars."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grids) + 1, figsize=(3.1 * (len(grids) + 1), 3.0), layout="constrained")
    colours = {"fixed_size_center_crop": "#0072B2", "rrc": "#E69F00"}
    for ax, g in zip(axes, grids):
        for method, part in summary.groupby("method"):
            ax.errorbar(part.level, part[g], part[f"{g}_se"], marker="o", capsize=3, color=colours.get(method),
                        label="no augmentation" if method == "fixed_size_center_crop" else method.upper())
        ax.set(xlabel="variation of the training scenes", ylabel="relative invariance, levels 1-9",
               title=f"invariance to {grid_title(g)}")
        ax.legend(fontsize=8)
    rrc_rows = summary[summary.method == "rrc"]
    axes[-1].errorbar(rrc_rows.level, rrc_rows.crop_gain, rrc_rows.crop_gain_se, marker="o", capsize=3,
                      color=colours["rrc"])
    axes[-1].axhline(0, color="grey", lw=0.8)
    axes[-1].set(xlabel="variation of the training scenes", ylabel="RRC − central crop (points)",
                 title="RRC's gain in test accuracy")
    for ax in axes:
        ax.title.set_fontsize(10)
        ax.xaxis.label.set_fontsize(9)
        ax.yaxis.label.set_fontsize(9)
        ax.tick_params(labelsize=8)
    return fig


def _by_seed(table, method: str, level: float, column: str) -> dict[int, float]:
    t = table[(table.method == method) & (table.level == level)]
    return {int(r.seed): float(getattr(r, column)) for r in t.itertuples()}


def _step_rises(values: dict[float, dict[int, float]]) -> dict:
    """Per step between consecutive levels, the rise of each seed's value (the same seed at both levels)."""
    levels = sorted(values)
    rises = {}
    for a, b in zip(levels[:-1], levels[1:]):
        common = sorted(set(values[a]) & set(values[b]))
        rises[f"{a:g} → {b:g}"] = results.paired([values[b][k] for k in common], [values[a][k] for k in common])
    return rises


def variation_effects(table) -> dict:
    """The effects of the claims the thesis implies by claim id, from
    :func:`invlib.papers.b.grounding.variation_study`'s table (one row per level, method and seed). Each is about
    what training on more varied data does, so its replicate is a seed, and "grows with the variation" is decided
    step by step: for each pair of consecutive levels, the per-seed rise (the same seed at both levels). The crop
    gain is each RRC seed's test accuracy minus the no-augmentation model's of the same seed and level; its claim has
    a gate, the premise that the model without augmentation overfits at the highest level (its train - test accuracy
    per seed).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame([dict(level=lv, method=m, seed=k, train_acc=90.0, test_acc=60 + 5 * lv * (m == "rrc") + k,
    ...                        translate=0.1 * lv + 0.01 * k, zoom_in=0.2)
    ...                   for lv in (0.0, 1.0) for m in ("fixed_size_center_crop", "rrc") for k in range(3)])
    >>> fx = variation_effects(t)
    >>> fx["thesis/translate_grows_with_variation"]["0 → 1"].round(2).tolist()
    [0.1, 0.1, 0.1]
    >>> decide(PROTOCOL["thesis/translate_grows_with_variation"], fx["thesis/translate_grows_with_variation"]).verdict
    'reproduced'
    """
    none = "fixed_size_center_crop"
    levels = sorted(table.level.unique())
    fx = {}
    for grid in ("translate", "zoom_in"):
        if grid in table:
            fx[f"thesis/{grid}_grows_with_variation"] = _step_rises(
                {lv: _by_seed(table, none, lv, grid) for lv in levels})
    if "rrc" in set(table.method):
        gains = {}
        for lv in levels:
            base, rrc = _by_seed(table, none, lv, "test_acc"), _by_seed(table, "rrc", lv, "test_acc")
            gains[lv] = {k: rrc[k] - base[k] for k in rrc if k in base}
        train, test = _by_seed(table, none, levels[-1], "train_acc"), _by_seed(table, none, levels[-1], "test_acc")
        fx["thesis/crop_gain_grows_with_variation"] = {
            "gain rises": _step_rises(gains),
            PREMISE: [train[k] - test[k] for k in sorted(train) if k in test]}
    return fx


def report_variation(run, table) -> dict:
    """The claims the thesis implies (the paper argues them, runs no such test), from the effects of
    :func:`variation_effects` of the study's ``table``: invariance to translation and to zoom of the models trained
    without augmentation rises with the data's variation; RRC's gain over the central crop rises with it. Records
    what a seed of the study costs to train (``variation.seeds``: its models' training seconds, the table's
    ``seconds``, where it has them). Returns what the chapter's prose quotes (:func:`variation_readings`)."""
    fx = variation_effects(table)
    if "seconds" in table:
        run.replicates("variation.seeds", [float(v) for v in table.groupby("seed").seconds.sum().sort_index()],
                       list(fx), note="a seed: one model of each level and method (those at variation 1 are chapter "
                                      "B1's models of the seed)")
    summary = variation_summary(table)
    none = summary[summary.method == "fixed_size_center_crop"].sort_values("level")
    levels = ", ".join(f"{v:g}" for v in none.level)
    seeds = int(none.seeds.min())
    ev = {}
    for grid in ("translate", "zoom_in"):
        cid = f"thesis/{grid}_grows_with_variation"
        if cid in fx:
            per = ", ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(none[grid], none[f"{grid}_se"]))
            ev[cid] = _record(run, cid, f"at variation {levels}: {per} (mean ± SE over {seeds} seeds)", fx[cid])
    cid = "thesis/crop_gain_grows_with_variation"
    if cid in fx:
        rrc = summary[summary.method == "rrc"].sort_values("level")
        gap = float(none.train_acc.iloc[-1] - none.test_acc.iloc[-1])
        per = ", ".join(f"{m:+.1f} ± {s:.1f}" for m, s in zip(rrc.crop_gain, rrc.crop_gain_se))
        ev[cid] = _record(run, cid, f"gain at variation {levels}: {per} points (mean ± SE over seeds); "
                                    f"no-augmentation train − test {gap:.1f} points at the highest level", fx[cid])
    return variation_readings(ev)


# Chapter B7's claims (the book's hypotheses) as its reading names them (:func:`reading`).
B7_THAT = {"thesis/translate_grows_with_variation": "invariance to translation rises with the data's variation",
           "thesis/zoom_in_grows_with_variation": "invariance to zooming in rises with it",
           "thesis/crop_gain_grows_with_variation": "RRC's gain over the central crop rises with it, where the model "
                                                    "without augmentation overfits"}


def variation_readings(ev: dict) -> dict:
    """What chapter B7's prose quotes (``{glue:md}``): ``b7_reading``, its claims grouped by verdict
    (:func:`reading`, in the words of a hypothesis: borne out or not).

    Example
    -------
    >>> one = decide(PROTOCOL["thesis/translate_grows_with_variation"], {"0 → 1": [0.1]})
    >>> variation_readings({"thesis/translate_grows_with_variation": one})["b7_reading"]
    'The claim cannot be decided on this run: it rests on 1 seed where it needs 3.'
    """
    return dict(b7_reading=reading(ev, B7_THAT, HYPOTHESIS_WORDS))


def variation_numbers(V: dict) -> dict:
    """The study's settings (:func:`invlib.papers.b.grounding.variation_settings`) as chapter B7's prose quotes
    them: ``b7_levels`` ("0 and 1"), ``b7_seeds`` ("3 seeds"), ``b7_n_train`` training scenes, ``b7_epochs``
    ("14 epochs"), ``b7_n_test`` test scenes a level, ``b7_n_probe`` probe scenes at variation ``b7_probe_level``.

    Example
    -------
    >>> n = variation_numbers(dict(levels=(0.0, 0.5, 1.0), seeds=3, n_train=2000, epochs=14, n_test=1000,
    ...                            n_probe=128, probe_level=0.0))
    >>> n["b7_levels"], n["b7_n_train"], n["b7_probe_level"]
    ('0, 0.5 and 1', '2,000', '0')
    """
    return dict(b7_levels=_join([number(v) for v in V["levels"]]), b7_seeds=_count(int(V["seeds"]), "seed"),
                b7_n_train=number(int(V["n_train"])), b7_epochs=_count(int(V["epochs"]), "epoch"),
                b7_n_test=number(int(V["n_test"])),
                b7_n_probe=number(int(V["n_probe"])), b7_probe_level=number(float(V["probe_level"])))


def variation_table(summary):
    """:func:`variation_summary` for the page: per level and method, the seeds and each measure's mean ± its
    standard error over seeds, as text (accuracies and the gain in points, invariances as relative invariance).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(level=[0, 0], method=["fixed_size_center_crop", "rrc"], seed=0, train_acc=[90, 80],
    ...                       test_acc=[60, 55], translate=[.1, .2]))
    >>> v = variation_table(variation_summary(t))
    >>> list(v.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['variation', 'method', 'seeds', 'train accuracy (%)', 'test accuracy (%)', 'invariance: translation',
     'RRC − central crop (points)']
    >>> v.iloc[1, 1:].astype(str).tolist()  # one seed: no standard error
    ['RRC', '1', '80 ± n/a', '55 ± n/a', '0.2 ± n/a', '-5 ± n/a']
    """
    import pandas as pd

    names = {"train_acc": "train accuracy (%)", "test_acc": "test accuracy (%)", "crop_gain": "RRC − central crop "
             "(points)"}
    cols = [c for c in summary.columns if f"{c}_se" in summary.columns]
    out = pd.DataFrame({"variation": summary.level.astype(float),
                        "method": ["no augmentation" if m == "fixed_size_center_crop" else m.upper()
                                   for m in summary.method], "seeds": summary.seeds.astype(int)})
    for c in cols:
        out[names.get(c, f"invariance: {grid_title(c)}")] = [
            "—" if math.isnan(m) else f"{number(m, sign=c == 'crop_gain')} ± {number(e)}"
            for m, e in zip(summary[c], summary[f"{c}_se"])]
    return out.reset_index(drop=True)
