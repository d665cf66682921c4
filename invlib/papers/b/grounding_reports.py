"""Paper B's reports for sections 3 to 4.4 (chapters B3 and B4; chapter B5's figure, whose claims
:mod:`invlib.papers.b.rrc_reports` records) and the thesis's controlled test (chapter B7): the claims with the
evidence that decides them (:func:`invlib.results.decide`), the sentences the chapters' prose quotes, and the
figures. The method is :mod:`invlib.papers.b.grounding` (with the measures of
:mod:`invlib.papers.b.similarity`).

Every boundary and margin below is declared before the run, with its reason. Claims about what training (or a
random initialisation, or augmentation) does rest on seeds; claims about one given model's search rest on its
evaluation items (image pairs, classes) and say "this model".
"""

from __future__ import annotations

import numpy as np
import torch

from ... import metrics, results
from . import similarity
from .grounding import APPEARANCE_B3, VARIANT_LABELS, fig3c, level_mean, training_change
from .rrc import OVERFIT_GAP


def figure_a2(x: torch.Tensor, grids=None):
    """Fig. A2: the first image of ``x`` (in [0, 1], or uint8 images, on disk too) under every grid at levels 0-9
    (rows: grids, columns: levels; :func:`invlib.plots.mosaic`).

    Example
    -------
    >>> len(figure_a2(torch.rand(1, 3, 16, 16), ["rotate", "hflip"]).axes)
    20
    """
    from ... import plots

    grids = list(similarity.GRIDS if grids is None else grids)
    first = x[:1] if x.dtype != torch.uint8 else x[:1].float() / 255  # images on disk are read as uint8
    draw = lambda g, lv: similarity.transform_level(g, first, lv, torch.Generator().manual_seed(lv))
    rows = {g: torch.cat([draw(g, lv) for lv in range(10)]) for g in grids}
    return plots.mosaic(rows, col_titles=[str(lv) for lv in range(10)], size=(1.0, 1.05), fontsize=8, pad=0.2)


def plot_sweep(table, grids=None, column: str = "median", ncols: int = 4):
    """Fig. 2 / A3 (``column="median"``, with the quartiles shaded) or Fig. A10 (``column="alignment"``):
    one panel per grid, one line per model, against the level."""
    import matplotlib.pyplot as plt

    grids = list(dict.fromkeys(table["transform"]) if grids is None else grids)
    nrows = -(-len(grids) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.5 * nrows), squeeze=False, sharey=True)
    styles = {"ResNet": "-", "ViT": "--"}
    colours = {"untrained": "tab:orange", "none": "tab:blue", "standard": "navy"}
    for ax, g in zip(axes.flat, grids):
        for (arch, variant), t in table[table["transform"] == g].groupby(["arch", "variant"], sort=False):
            t = t.sort_values("level")
            ax.plot(t.level, t[column], styles.get(arch, ":"), color=colours.get(variant), lw=1.5,
                    label=f"{arch}, {VARIANT_LABELS.get(variant, variant)}")
            if column == "median":
                ax.fill_between(t.level, t.q25, t.q75, color=colours.get(variant), alpha=0.12)
        ax.set_title(g, fontsize=9)
        ax.axhline(0, color="grey", lw=0.5)
    for ax in list(axes.flat)[len(grids):]:
        ax.axis("off")
    axes[0, 0].set_ylabel("relative invariance" if column == "median" else "equivariance alignment")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


# ------------------------------------------------------------------------------ declared before the run
# The smallest effects that matter, as (value, reason), for the claims of chapters B3, B4, B5 and B7.
SEED_MIN = 3  # a claim about what training (or a random initialisation) does needs three seeds before a verdict
RISE = (0.0, "the paper states a direction only (its values are not in the text): any change on its side counts, "
             "and the interval over seeds guards against noise")
UNCHANGED = (0.05, "a twentieth of the relative-invariance scale from an embedding moved as far as another image's "
                   "(0) to an unmoved one (1), fixed before the run as the largest change still read as 'no change' "
                   "(the paper gives no number)")
SLIGHT = (0.10, "a tenth of the relative-invariance scale, twice the 'unchanged' margin: the most a rise the paper "
                "calls slight may be (its values are not in the text)")
ALIGNED = (0.0, "the alignment is 0 where the responses align no better than after shuffling them (its chance "
                "level), so any alignment above 0 is equivariance")
NOT_INVARIANT = (0.5, "a median relative invariance below 0.5: translation moves the embedding more than half as far "
                      "as swapping the image for another one, which is not invariance")


def _say(ev, what: str, yes: str, no: str, partly: str | None = None) -> str:
    """The prose sentence for ``ev``: ``yes`` / ``no`` / ``partly`` where the verdict is decisive, else why this run
    cannot say whether ``what``."""
    if ev.verdict == results.INCONCLUSIVE:
        why = (f"it has {ev.n} {ev.unit if ev.n == 1 else ev.unit + 's'} where the claim needs {ev.n_min}"
               if ev.n < ev.n_min else "the interval straddles the boundary")
        return f"This run cannot decide whether {what}: {why}."
    if ev.verdict == results.NOT_MEASURABLE:
        return f"This profile cannot test whether {what} ({ev.reason})."
    return {results.REPRODUCED: yes, results.NOT_REPRODUCED: no}.get(
        ev.verdict, partly or "It holds in part only (see the parts in the table).")


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


def _rise(values, direction: str = "greater"):
    return results.decide(values, direction=direction, boundary=RISE[0], reason=RISE[1], unit="seed", n_min=SEED_MIN)


def _within(values, margin: tuple[float, str]):
    return results.decide(values, direction="equivalent", margin=margin[0], reason=margin[1], unit="seed",
                          n_min=SEED_MIN)


def sweep_evidence(table) -> dict:
    """The evidence of section 3's claims (Fig. 2, A3, A10) from the sweep ``table`` (:func:`invariance_table`, one
    model per (arch, variant), or several with a ``seed`` column). Every claim is about what training, augmentation or
    an architecture's random initialisation does, so its replicate is a seed (``n_min`` :data:`SEED_MIN`); the effect
    per seed is a difference of level-mean (1-9) median invariances, paired by seed; "every architecture" claims are
    decided part by part (:func:`invlib.verdicts.decide_parts`).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame(dict(arch="ResNet", variant=["untrained", "none"], transform="zoom_in", level=1,
    ...                       median=[0.40, 0.41]))
    >>> sweep_evidence(t)["fig2/zoom_in_unchanged"].verdict  # one seed
    'inconclusive at this budget'
    """
    variants = lambda a: set(table[table.arch == a].variant)  # noqa: E731
    archs = [a for a in ("ResNet", "ViT") if {"untrained", "none"} <= variants(a)]
    std_archs = [a for a in ("ResNet", "ViT") if {"untrained", "standard"} <= variants(a)]
    aug_archs = [a for a in archs if "standard" in variants(a)]
    have = set(table["transform"])
    app = [g for g in APPEARANCE_B3 if g in have]
    missing = lambda grids, who: results.not_measurable(  # noqa: E731
        f"no {who} model pair or no {', '.join(grids)} grid in this profile's sweep")
    ch = lambda a, g, after="none", before="untrained": seed_change(table, a, g, after, before)  # noqa: E731
    ev = {}
    if archs and "translate" in have and app:
        parts = {}
        for a in archs:
            parts[f"{a} translate"] = _rise(ch(a, "translate"))
            parts[f"{a} appearance"] = _rise(np.mean([ch(a, g) for g in app], axis=0))
        ev["fig2/train_raises_translation_appearance"] = results.decide_parts(parts, "every architecture, both")
    else:
        ev["fig2/train_raises_translation_appearance"] = missing(["translate", "appearance"], "untrained/none")
    ok = archs and {"rotate", "shear"} <= have
    ev["fig2/train_lowers_rotation_shear"] = results.decide_parts(
        {f"{a} {g}": _rise(ch(a, g), "less") for a in archs for g in ("rotate", "shear")}, "every architecture, both"
    ) if ok else missing(["rotate", "shear"], "untrained/none")
    ev["fig2/zoom_in_unchanged"] = results.decide_parts(
        {a: _within(ch(a, "zoom_in"), UNCHANGED) for a in archs}, "every architecture"
    ) if archs and "zoom_in" in have else missing(["zoom_in"], "untrained/none")
    ev["fig2/standard_raises_translation"] = results.decide_parts(
        {a: _rise(ch(a, "translate", "standard")) for a in std_archs}, "every architecture"
    ) if std_archs and "translate" in have else missing(["translate"], "untrained/standard")
    ev["fig2/standard_zoom_in_unchanged"] = results.decide_parts(
        {a: _within(ch(a, "zoom_in", "standard"), UNCHANGED) for a in std_archs}, "every architecture"
    ) if std_archs and "zoom_in" in have else missing(["zoom_in"], "untrained/standard")
    if aug_archs and "translate" in have:
        parts = {}
        for a in aug_archs:
            gain = ch(a, "translate", "standard", "none")
            parts[f"{a} raises"], parts[f"{a} only slightly"] = _rise(gain), _within(gain, SLIGHT)
        ev["fig2/augmentation_slight_translation"] = results.decide_parts(parts, "every architecture, both")
    else:
        ev["fig2/augmentation_slight_translation"] = missing(["translate"], "none/standard")
    untrained = {a: seed_level_means(table, a, "untrained", "translate") for a in ("ResNet", "ViT")}
    aligned = {a: seed_level_means(table, a, "untrained", "translate", "alignment") for a in ("ResNet", "ViT")}
    if all(untrained.values()):
        common = sorted(set(untrained["ViT"]) & set(untrained["ResNet"]))
        pair = lambda d: results.paired([d["ViT"][k] for k in common], [d["ResNet"][k] for k in common])  # noqa: E731
        ev["fig2/untrained_vit_translation"] = _rise(pair(untrained))
        ev["figA10/untrained_resnet_equivariant"] = results.decide_parts({
            "ResNet aligned": results.decide(list(aligned["ResNet"].values()), boundary=ALIGNED[0],
                                             reason=ALIGNED[1], unit="seed", n_min=SEED_MIN),
            "ResNet more aligned than ViT": _rise(-pair(aligned)),
            "ResNet not invariant": results.decide(list(untrained["ResNet"].values()), direction="less",
                                                   boundary=NOT_INVARIANT[0], reason=NOT_INVARIANT[1], unit="seed",
                                                   n_min=SEED_MIN)}, "all three")
    else:
        for cid in ("fig2/untrained_vit_translation", "figA10/untrained_resnet_equivariant"):
            ev[cid] = missing(["translate"], "untrained ResNet and untrained ViT")
    return ev


def report_sweep(run, table) -> dict:
    """Section 3's claims (Fig. 2, A3, A10) as scoreboard rows, with the evidence of :func:`sweep_evidence`; returns
    the sentences the chapter's prose quotes (``{glue:md}``).

    Per model, a grid's score is the mean over levels 1-9 of the median relative invariance; "training" is the model
    trained without augmentation against the untrained one, and for translation and zoom also the model trained with
    standard augmentation (the paper's and its authors' "trained" model) against the untrained one, each with its own
    claim; equivariance is the mean alignment over levels 1-9.
    """
    ev = sweep_evidence(table)
    archs = [a for a in ("ResNet", "ViT") if {"untrained", "none"} <= set(table[table.arch == a].variant)]
    std_archs = [a for a in ("ResNet", "ViT") if {"untrained", "standard"} <= set(table[table.arch == a].variant)]
    have = set(table["transform"])
    app = [g for g in APPEARANCE_B3 if g in have]
    change = {a: training_change(table, a) for a in archs}
    change_std = {a: training_change(table, a, after="standard") for a in std_archs}
    fmt = lambda d: "; ".join(f"{a}: " + ", ".join(f"{g} {v:+.3f}" for g, v in row.items()) for a, row in d.items())  # noqa: E731
    pick = lambda src, grids: {a: {g: src[a].get(g, np.nan) for g in grids if g in have} for a in src}  # noqa: E731
    per_seed = "per seed, the level-mean (1-9) median invariance"
    seeds = f"95 % t-interval over seeds; >= {SEED_MIN} seeds"
    run.claim("fig2/train_raises_translation_appearance",
              "Training (here without augmentation) raises invariance to translation and to appearance changes "
              "(Fig. 2a-b, A3).", paper="raised (Fig. 2, A3; values not in the text)",
              ours=fmt(pick(change, ["translate", *app])),
              criterion=f"{per_seed} trained without augmentation minus untrained (paired by seed) > 0 on translate "
                        f"and on the mean of the {len(app)} appearance grids, every architecture (one part each); "
                        f"{seeds}", evidence=ev["fig2/train_raises_translation_appearance"])
    run.claim("fig2/train_lowers_rotation_shear", "Training lowers invariance to rotation and shear (Fig. 2d, A3).",
              paper="lowered (values not in the text)", ours=fmt(pick(change, ["rotate", "shear"])),
              criterion=f"{per_seed} trained without augmentation minus untrained (paired by seed) < 0 on rotate "
                        f"and on shear, every architecture (one part each); {seeds}",
              evidence=ev["fig2/train_lowers_rotation_shear"])
    run.claim("fig2/zoom_in_unchanged",
              "Training (here without augmentation) leaves the mean invariance to zooming in unchanged (Fig. 2).",
              paper="no change in the mean, less spread (values not in the text)", ours=fmt(pick(change, ["zoom_in"])),
              criterion=f"{per_seed} to zoom_in, trained without augmentation minus untrained (paired by seed), "
                        f"90 % t-interval over seeds within 0 ± {UNCHANGED[0]:g}, every architecture; "
                        f">= {SEED_MIN} seeds", evidence=ev["fig2/zoom_in_unchanged"])
    # the same two claims for the model trained with standard augmentation, the one the paper's Fig. 2 and its
    # authors' code call "trained" (torchvision's ResNet-18, timm's ViT)
    d = pick(change_std, ["translate", "zoom_in"])
    run.claim("fig2/standard_raises_translation",
              "Training (with standard augmentation, the paper's trained models) raises invariance to translation "
              "(Fig. 2a-b).", paper="raised (values not in the text)", ours=fmt(d),
              criterion=f"{per_seed} to translate, trained with standard augmentation minus untrained (paired by "
                        f"seed) > 0, every architecture; {seeds}", evidence=ev["fig2/standard_raises_translation"])
    run.claim("fig2/standard_zoom_in_unchanged",
              "Training (with standard augmentation) leaves the mean invariance to zooming in unchanged (Fig. 2).",
              paper="no change in the mean, less spread (values not in the text)", ours=fmt(d),
              criterion=f"{per_seed} to zoom_in, trained with standard augmentation minus untrained (paired by seed),"
                        f" 90 % t-interval over seeds within 0 ± {UNCHANGED[0]:g}, every architecture; "
                        f">= {SEED_MIN} seeds", evidence=ev["fig2/standard_zoom_in_unchanged"])
    aug = {a: (level_mean(table, a, "standard", "translate") - level_mean(table, a, "none", "translate"),
               change[a].get("translate", np.nan)) for a in archs}
    run.claim("fig2/augmentation_slight_translation",
              "Standard augmentation raises translation invariance, but only slightly (Fig. 2a-b).",
              paper="slightly (values not in the text)",
              ours="; ".join(f"{a}: augmentation {g:+.3f} vs training {t:+.3f}" for a, (g, t) in aug.items()
                             if not np.isnan(g)) or "no model pair",
              criterion=f"{per_seed} to translate, standard augmentation minus none (paired by seed): > 0 (95 % "
                        f"t-interval) and within 0 ± {SLIGHT[0]:g} (90 %), every architecture; >= {SEED_MIN} seeds",
              evidence=ev["fig2/augmentation_slight_translation"])
    v = {a: level_mean(table, a, "untrained", "translate") for a in ("ResNet", "ViT")}
    run.claim("fig2/untrained_vit_translation",
              "An untrained ViT is more translation-invariant than an untrained ResNet (Fig. 2a-b).",
              paper="ViT higher (values not in the text)", ours=f"ViT {v['ViT']:.3f}, ResNet {v['ResNet']:.3f}",
              criterion=f"{per_seed} to translate, untrained ViT minus untrained ResNet (the replicate is the random "
                        f"initialisation; paired by seed, the same probe images) > 0; {seeds}",
              evidence=ev["fig2/untrained_vit_translation"])
    al = {a: level_mean(table, a, "untrained", "translate", "alignment") for a in ("ResNet", "ViT")}
    run.claim("figA10/untrained_resnet_equivariant",
              "An untrained ResNet responds to translation in an aligned way (equivariance) without being invariant "
              "to it; a ViT does not (App. D, Fig. A10).",
              paper="aligned for ResNet, not for ViT (values not in the text)",
              ours=f"alignment ResNet {al['ResNet']:.3f}, ViT {al['ViT']:.3f}; ResNet invariance {v['ResNet']:.3f}",
              criterion=f"untrained models, per seed (the random initialisation), level-mean (1-9) translate values: "
                        f"ResNet's alignment > {ALIGNED[0]:g}, ResNet's minus ViT's alignment > 0, ResNet's median "
                        f"invariance < {NOT_INVARIANT[0]:g}; {seeds}",
              evidence=ev["figA10/untrained_resnet_equivariant"])
    return sweep_readings(ev)


def sweep_readings(ev: dict) -> dict:
    """The sentences chapter B3's prose quotes, from the evidence of :func:`sweep_evidence`.

    Example
    -------
    >>> from invlib import results
    >>> up = results.decide([0.1, 0.2, 0.15], reason="r", unit="seed")
    >>> sweep_readings({k: up for k in ("fig2/train_raises_translation_appearance",
    ...     "fig2/train_lowers_rotation_shear", "fig2/zoom_in_unchanged", "fig2/standard_raises_translation",
    ...     "fig2/augmentation_slight_translation", "fig2/untrained_vit_translation")})["b3_raises"]
    'Training without augmentation raised invariance to translation and to appearance changes on every architecture.'
    """
    return dict(
        b3_raises=_say(ev["fig2/train_raises_translation_appearance"],
                       "training raises invariance to translation and to appearance changes",
                       "Training without augmentation raised invariance to translation and to appearance changes on "
                       "every architecture.", "Training without augmentation lowered invariance to translation and "
                       "to appearance changes on every architecture.",
                       "Training without augmentation raised invariance to some of translation and appearance "
                       "changes and lowered it to others (see the parts in the table)."),
        b3_lowers=_say(ev["fig2/train_lowers_rotation_shear"], "training lowers invariance to rotation and shear",
                       "Training lowered invariance to rotation and shear on every architecture.",
                       "Training raised invariance to rotation and shear on every architecture.",
                       "Training lowered invariance to some of rotation and shear and raised it to others."),
        b3_zoom=_say(ev["fig2/zoom_in_unchanged"], "training leaves the mean invariance to zooming in unchanged",
                     f"Training left the mean invariance to zooming in unchanged (within ± {UNCHANGED[0]:g}).",
                     f"Training moved the mean invariance to zooming in by more than {UNCHANGED[0]:g}.",
                     "Training left the mean invariance to zooming in unchanged on some architectures only."),
        b3_standard=_say(ev["fig2/standard_raises_translation"],
                         "training with standard augmentation raises translation invariance",
                         "Training with standard augmentation raised translation invariance on every architecture.",
                         "Training with standard augmentation lowered translation invariance on every architecture.",
                         "Training with standard augmentation raised translation invariance on some architectures "
                         "only."),
        b3_augmentation=_say(ev["fig2/augmentation_slight_translation"],
                             "standard augmentation adds only a little translation invariance",
                             f"Standard augmentation added translation invariance, less than {SLIGHT[0]:g}.",
                             "Standard augmentation did not add a little translation invariance: it lowered it, or "
                             f"added more than {SLIGHT[0]:g}.", "Standard augmentation's effect on translation "
                             "invariance was slight on some architectures and not on others."),
        b3_vit=_say(ev["fig2/untrained_vit_translation"],
                    "an untrained ViT is more translation-invariant than an untrained ResNet",
                    "An untrained ViT was more translation-invariant than an untrained ResNet.",
                    "An untrained ViT was less translation-invariant than an untrained ResNet."))


def plot_search(searches: dict, kind: str = "single", drop=()):
    """Fig. 3A / A4 / A5: the distribution over classes of each entry's mean percent change, per embedding.
    ``drop``: operation types to leave out (Fig. A5 drops translations and rescales)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(searches), 1, figsize=(14, 3.2 * len(searches)), squeeze=False, sharex=True)
    for ax, (variant, s) in zip(axes[:, 0], searches.items()):
        s = s[kind]
        keep = [j for j, e in enumerate(s.entries) if similarity.op_type(e) not in drop]
        m = s.class_means()[:, keep]
        ax.boxplot(m, showfliers=True, widths=0.6, flierprops=dict(markersize=2))
        ax.axhline(0, color="red", lw=0.8)
        ax.set_ylabel("% similarity change")
        ax.set_title(f"ResNet {VARIANT_LABELS.get(variant, variant)}: distribution over classes", fontsize=9)
        ax.set_xticks(range(1, len(keep) + 1), [s.entries[j] for j in keep], rotation=90, fontsize=6)
    fig.tight_layout()
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
    fig, ax = plt.subplots(figsize=(9, 3.2))
    pos = np.arange(len(s.classes))
    ax.bar(pos - 0.2, [m[c, s.entries.index(t)] for c, t in enumerate(tops)], 0.4, yerr=sems, label="top per class")
    ax.bar(pos + 0.2, m[:, j_best], 0.4, yerr=sems_g, label=f"top across classes ({best})")
    for c, t in enumerate(tops):
        ax.annotate(t, (pos[c] - 0.2, 0), rotation=90, fontsize=7, ha="center", va="bottom")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xticks(pos, s.classes, rotation=30, fontsize=8)
    ax.set_ylabel("% similarity change")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ sections 4.1-4.4 (chapter B4)
# The search is one trained model's: its claims are about that model ("this model"), whose evaluation items are its
# same-class image pairs (an interval over a class's pairs) or its classes (an interval over classes). A maximum or
# minimum over many entries or classes is decided on simultaneous intervals (Bonferroni, level 1 - 0.05 / k).
NO_CHANGE = (1.0, "± 1 % of a pair's cosine similarity, fixed before the run as the largest change still read as "
                  "'effectively no change' (the paper's value is lost from its text)")
TOP10 = (6.5, 1.5, "the paper's 6.5 of 10 ± 1.5: from 5 to 8 of a class's top 10 raise similarity, more than half "
                   "but not nearly all, as the paper reads its number")
MOST = (0.5, "'most classes': more than half of them, the least that reads as most (the paper's share is lost from "
             "its text)")
CHANCE_SHARE = "the pool's own appearance share is chance: a top 5 drawn at random from the pool holds it on average " \
               "(the paper checked its pool is split about evenly for the same reason)"
FIG3C_RATIO = (1.5, "'substantially more likely': at least half as often again per grid (the paper's shares are lost "
                    "from its text), i.e. the grown grids' mean share minus 1.5 x the other grids' > 0")
BOX_SPREAD = (0.0, "both spreads are fractions of the frame's side, so the larger one is the factor that varies more")


def _cells(s, entries, level: float):
    """``(mean, lo, hi, n)``: each (class, entry)'s mean percent change with its t-interval over the class's pairs at
    ``level``, as ``(C, E)`` arrays, and the fewest pairs of a class."""
    cols = [s.entries.index(e) for e in entries]
    changes, labels = s.changes.double().numpy()[cols], s.labels.numpy()
    cells = [results.t_intervals(changes[:, labels == c], level) for c in range(len(s.classes))]
    arrays = (np.stack([cell[k] for cell in cells]) for k in range(3))
    return (*arrays, int(min((labels == c).sum() for c in range(len(s.classes)))))


def no_entry_raises_every_class(s, entries=None):
    """Evidence that no entry raises the mean change of every class of this model's search ``s``: the largest over
    entries of an entry's smallest class mean, with simultaneous t-intervals over each class's pairs (Bonferroni
    over the entries and the classes: reproduced needs every entry to lower some class beyond its interval; not
    reproduced, an entry that raises every class beyond them).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "color/4"], torch.tensor([[5.0, 6, 5, 6, -5, -6, -5, -6], [-6.0, -5, -6, -5, 5, 6,
    ...            5, 6]]), torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]), ["a", "b"])
    >>> no_entry_raises_every_class(s).verdict
    'reproduced'
    """
    entries = s.transforms() if entries is None else entries
    level = 1 - (1 - results.LEVEL["less"]) / max(len(entries), len(s.classes))
    mean, lo, hi, n = _cells(s, entries, level)
    pick = lambda m: float(m.min(0).max())  # noqa: E731
    return results.decide(results.Interval(pick(mean), pick(lo), pick(hi), n, level, "bonferroni t"), direction="less",
                          reason="a sign: an entry raises a class or it does not (the paper's 0 of its entries)",
                          unit="image")


def top_entry_raises_every_class(s):
    """Evidence that each class of this model's search ``s`` has an entry that raises its mean change: the smallest
    over classes of a class's best entry's mean, with simultaneous t-intervals over the class's pairs (Bonferroni
    over the entries, the class's best being chosen among them).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3", "color/4"], torch.tensor([[5.0, 6, 5, 6, -5, -6, -5, -6], [-6.0, -5, -6, -5, 5, 6,
    ...            5, 6]]), torch.tensor([0, 0, 0, 0, 1, 1, 1, 1]), ["a", "b"])
    >>> top_entry_raises_every_class(s).verdict
    'reproduced'
    """
    entries = s.transforms()
    level = 1 - (1 - results.LEVEL["greater"]) / max(len(entries), len(s.classes))
    mean, lo, hi, n = _cells(s, entries, level)
    pick = lambda m: float(m.max(1).min())  # noqa: E731
    return results.decide(results.Interval(pick(mean), pick(lo), pick(hi), n, level, "bonferroni t"),
                          reason="a sign: the best entry raises the class's similarity or it does not", unit="image")


def best_global_unchanged(s):
    """Evidence that the best entry across classes (the largest mean over classes) changes similarity by less than
    :data:`NO_CHANGE`: each entry's 90 % t-interval over the classes' means, Bonferroni over the entries, and the
    largest estimate, lower and upper end (a valid interval for the best entry's true mean).

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3"], torch.tensor([[0.1, 0.2, -0.1, 0.0, 0.1, 0.1]]), torch.tensor([0, 0, 1, 1, 2, 2]),
    ...            ["a", "b", "c"])
    >>> best_global_unchanged(s).verdict
    'reproduced'
    """
    cols = [s.entries.index(e) for e in s.transforms()]
    level = 1 - (1 - results.LEVEL["equivalent"]) / len(cols)
    m = s.class_means()[:, cols]
    ivs = [results.t_interval(m[:, j], level) for j in range(len(cols))]
    best = lambda k: float(max(getattr(iv, k) for iv in ivs))  # noqa: E731
    return results.decide(results.Interval(best("estimate"), best("lo"), best("hi"), m.shape[0], level,
                                           "bonferroni t"),
                          direction="equivalent", margin=NO_CHANGE[0], reason=NO_CHANGE[1], unit="class")


def fig3c_per_class(f3c: dict) -> np.ndarray:
    """Per class, its share of Fig. 3C's slots per grid that grew minus :data:`FIG3C_RATIO` times its share per
    other grid (:func:`invlib.papers.b.grounding.fig3c`, whose ``per_class`` slots it reads): the mean over classes
    is ``increases - 1.5 x decreases``. Empty where no grid, or every grid, grew.

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
                          - FIG3C_RATIO[0] * sum(row.get(g, 0) for g in down) / (total * len(down)))
                     for row in per_class])


def box_spread_evidence(boxes, size, generated: bool):
    """Evidence that foreground boxes vary more in scale than in position: the std of the box side (sqrt of its
    area fraction) minus the larger std of its centre (fractions of the frame). On generated data (``scenes``) the
    boxes are the generator's own draws: a deterministic check of the data the chapter runs on; on other data a 95 %
    bootstrap over the images.

    Example
    -------
    >>> b = torch.tensor([[4.0, 4, 12, 12], [2, 2, 14, 14], [6, 6, 10, 10], [3, 3, 13, 13]])
    >>> box_spread_evidence(b, (16, 16), generated=True).verdict
    'reproduced'
    """
    st = similarity.foreground_stats(boxes, size)
    def spread(side, cx, cy, axis=-1):  # every bootstrap resample at once
        return np.std(side, axis=axis) - np.maximum(np.std(cx, axis=axis), np.std(cy, axis=axis))

    if generated:
        return results.decide(results.exact(float(spread(st["side"], st["cx"], st["cy"]))), boundary=BOX_SPREAD[0],
                              reason=BOX_SPREAD[1], unit="deterministic", n_min=1)
    iv = results.bootstrap_interval((st["side"], st["cx"], st["cy"]), spread, paired=True)
    return results.decide(iv, boundary=BOX_SPREAD[0], reason=BOX_SPREAD[1], unit="image")


def _share_appearance(names) -> float:
    names = list(names)
    return sum(similarity.group_of(similarity.op_type(e)) == "appearance" for e in names) / max(1, len(names))


def _share(k: int, n: int):
    return results.decide(results.share_interval(k, n), boundary=MOST[0], reason=MOST[1], unit="class")


def report_search(run, searches: dict, gap: dict | None, boxes=None, size=None, generated: bool = False) -> dict:
    """Section 4.1-4.4's claims (Fig. 3, A4, A5) and App. E.1's as scoreboard rows; returns the numbers, and under
    ``"readings"`` the sentences the chapter's prose quotes. ``gap``: Fig. 3C's invariance gap per sweep grid
    (:func:`invlib.papers.b.grounding.invariance_gap`); ``generated``: the boxes are drawn by the data's generator
    (``scenes``), so App. E.1's claim checks the data rather than measures it. Also logs ``top_per_class``,
    ``appearance_share_top5`` and ``identity_best_geometric`` on ``run``."""
    s = searches["none"]["single"]
    m = s.class_means()
    ranking = s.global_ranking()
    best, best_mean, best_sem = ranking[0]
    out = dict(best_global=best, best_global_mean=best_mean, best_global_sem=best_sem)
    ev = {}
    bonf = f"simultaneous 95 % t-intervals over each class's image pairs (Bonferroni over the {len(s.transforms())} " \
           "entries)"
    # 1. no single transform raises similarity for every class
    n_all = sum(bool((m[:, s.entries.index(e)] > 0).all()) for e in s.transforms())
    ev["fig3a/no_single_transform"] = results.decide_parts({
        "no entry raises every class": no_entry_raises_every_class(s),
        "best across classes within ± 1 %": best_global_unchanged(s)}, "both parts")
    run.claim("fig3a/no_single_transform",
              "For this model, no single transformation raises same-class pair similarity across all classes; the "
              "best one across classes (posterize in the paper) gives no significant change (Fig. 3A).",
              paper="0 transformations; best: posterize (its change: not in the text)",
              ours=f"{n_all} of {len(s.transforms())} raise every class's mean; best: {best}, {best_mean:+.2f} ± "
                   f"{best_sem:.2f} % (mean ± SEM over classes)",
              criterion=f"two parts, this model's search: the largest over entries of an entry's smallest class mean "
                        f"change < 0, {bonf}; the best entry's mean over classes within 0 ± {NO_CHANGE[0]:g} %, 90 % "
                        "t-intervals over classes, Bonferroni over the entries",
              evidence=ev["fig3a/no_single_transform"])
    # 2. the top transform per class raises similarity for every class
    tops = [row[0] for row in s.top(1)]
    top_vals = np.array([m[c, s.entries.index(t)] for c, t in enumerate(tops)])
    out.update(top_per_class=dict(zip(s.classes, tops)), top_mean=float(top_vals.mean()),
               top_sem=metrics.sem(torch.from_numpy(top_vals)))
    ev["fig3b/top_per_class"] = top_entry_raises_every_class(s)
    run.claim("fig3b/top_per_class",
              "For this model, the best transformation chosen per class raises similarity for every class (Fig. 3B).",
              paper="every class (mean ± SEM: not in the text)",
              ours=f"{int((top_vals > 0).sum())} of {len(tops)} classes; {top_vals.mean():+.2f} ± "
                   f"{out['top_sem']:.2f} %",
              criterion=f"the smallest over classes of a class's best entry's mean change > 0, {bonf}",
              evidence=ev["fig3b/top_per_class"])
    counts = np.array([sum(m[c, s.entries.index(e)] > 0 for e in row) for c, row in enumerate(s.top(10))], float)
    out["top10_positive"] = float(counts.mean())
    run.claim("e/top10_positive",
              "For this model, on average 6.5 of a class's top 10 transformations raise similarity (App. E).",
              paper=6.5, ours=round(float(counts.mean()), 2),
              criterion=f"per class, how many of its top 10 entries have a mean change > 0; 90 % t-interval over "
                        f"classes within {TOP10[0]:g} ± {TOP10[1]:g}",
              evidence=results.decide(counts, direction="equivalent", boundary=TOP10[0], margin=TOP10[1],
                                      reason=TOP10[2], unit="class"))
    # 3. sub-policies
    if "sub" in searches["none"]:
        sub = searches["none"]["sub"]
        n_sub = sum(bool((sub.class_means()[:, sub.entries.index(e)] > 0).all()) for e in sub.transforms())
        run.claim("figA4/no_subpolicy", "For this model, no two-operation sub-policy raises similarity across all "
                  "classes (Fig. A4).", paper=0, ours=f"{n_sub} of {len(sub.entries)} raise every class's mean",
                  criterion="the largest over sub-policies of a sub-policy's smallest class mean change < 0, "
                            "simultaneous 95 % t-intervals over each class's image pairs (Bonferroni over the "
                            f"{len(sub.transforms())} sub-policies)",
                  evidence=no_entry_raises_every_class(sub))
    # 4. augmentation dampens similarity changes: a claim about what training with augmentation does (seeds)
    if "standard" in searches:
        ms = searches["standard"]["single"].class_means()
        geo = [j for j, e in enumerate(s.entries) if similarity.op_type(e) not in ("translateX", "translateY",
                                                                                    "rescale")]
        vals = {v: (float(mm.mean()), float(mm.std()), float(mm[:, geo].std())) for v, mm in (("none", m),
                                                                                            ("standard", ms))}
        out["dampen"] = vals
        ev["fig3a/augmentation_dampens"] = results.decide_parts({
            "higher mean change": _rise([vals["standard"][0] - vals["none"][0]]),
            "lower spread": _rise([vals["none"][1] - vals["standard"][1]]),
            "lower spread without translations and rescales": _rise([vals["none"][2] - vals["standard"][2]])},
            "all three")
        run.claim("fig3a/augmentation_dampens",
                  "With standard augmentation, transformations lower similarity less and vary less, also for "
                  "transformations not used in training (Fig. 3A, A5).",
                  paper="smaller decrease, lower variance (values not in the text)",
                  ours=f"mean {vals['none'][0]:+.2f} → {vals['standard'][0]:+.2f} %, spread {vals['none'][1]:.2f} → "
                       f"{vals['standard'][1]:.2f}, without translations and rescales {vals['none'][2]:.2f} → "
                       f"{vals['standard'][2]:.2f}",
                  criterion="per seed (one model with standard augmentation against one without, the same seed): "
                            "standard minus none of the mean change > 0, none minus standard of the spread (std over "
                            "classes and entries) > 0, and of the spread without translations and rescales > 0; 95 % "
                            f"t-intervals over seeds; >= {SEED_MIN} seeds", evidence=ev["fig3a/augmentation_dampens"])
    # 5. appearance vs geometric
    top5 = s.top(5)
    pool_share = _share_appearance(s.transforms())
    share5, share1 = _share_appearance([e for row in top5 for e in row]), _share_appearance(tops)
    out.update(appearance_top5=share5, appearance_top1=share1, appearance_pool=pool_share)
    ev["sec4.3/appearance_prevails"] = results.decide([_share_appearance(row) - pool_share for row in top5],
                                                      reason=CHANCE_SHARE, unit="class")
    run.claim("sec4.3/appearance_prevails",
              "For this model, appearance transformations account for more of the within-class variation than "
              "geometric ones (section 4.3).",
              paper="more appearance than geometric among top transforms (shares not in the text)",
              ours=f"appearance: {share1:.0%} of the top-1 and {share5:.0%} of the top-5 entries per class "
                   f"(pool: {pool_share:.0%})",
              criterion="per class, the appearance share of its top-5 entries minus the pool's appearance share > 0, "
                        "95 % t-interval over classes", evidence=ev["sec4.3/appearance_prevails"])
    j_geo = [s.entries.index(e) for e in s.transforms() if similarity.group_of(similarity.op_type(e)) == "geometric"]
    identity = int((m[:, j_geo].max(1) <= 0).sum())
    out["identity_best_geometric"] = identity / len(s.classes)
    run.claim("sec4.3/identity_best_geometric",
              "For this model, among geometric transformations the identity is the best choice for most classes "
              "(section 4.3).", paper="share of classes not in the text",
              ours=f"{identity} of {len(s.classes)} classes",
              criterion=f"share of classes where every geometric entry lowers the mean change > {MOST[0]:g}, 95 % "
                        "Wilson interval over classes", evidence=_share(identity, len(s.classes)))
    if "standard" in searches:
        tops_std = [row[0] for row in searches["standard"]["single"].top(1)]
        k_std = sum(similarity.group_of(similarity.op_type(e)) == "appearance" for e in tops_std)
        out["appearance_top1_standard"] = k_std / len(tops_std)
        run.claim("sec4.3/appearance_with_augmentation",
                  "For the model trained with standard augmentation too, most classes' top transformation alters "
                  "appearance (section 4.3).", paper="more than a share of classes not in the text",
                  ours=f"{k_std} of {len(tops_std)} classes",
                  criterion=f"share of classes whose top-1 entry (standard-augmentation model) alters appearance > "
                            f"{MOST[0]:g}, 95 % Wilson interval over classes", evidence=_share(k_std, len(tops_std)))
    # 6. Fig. 3C, as the authors' script computes it
    if gap:
        f3c = fig3c(s, gap)
        out["fig3c"] = f3c
        up = sorted(g for g in f3c["counts"] if gap[g] > 0)
        down = sorted(g for g in f3c["counts"] if not gap[g] > 0)
        ev["fig3c/invariance_grew_top5"] = results.decide(fig3c_per_class(f3c), boundary=0.0, reason=FIG3C_RATIO[1],
                                                          unit="class")
        ev3c = ev["fig3c/invariance_grew_top5"]
        run.claim("fig3c/invariance_grew_top5",
                  "For this model, transformations whose invariance grew in training are more often in a class's "
                  "top 5 (Fig. 3C).", paper="substantially more likely (shares not in the text)",
                  ours=f"mean share of the top-5 slots: {f3c['increases']:.0%} per grid that grew ({', '.join(up)}) "
                       f"vs {f3c['decreases']:.0%} per other grid ({', '.join(down) or 'none'})",
                  criterion="as their script: top 5 per class by share of pairs boosted among entries of levels 3-7; "
                            "a grid grew when its median invariance, trained with standard augmentation − untrained "
                            "(this run's one model of each), averaged over levels 3-7, is > 0 (ResNet); per class, "
                            f"its share per grid that grew − {FIG3C_RATIO[0]:g} x its share per other grid > 0, 95 % "
                            "t-interval over classes (no verdict where no grid, or every grid, grew)",
                  evidence=ev3c)
    elif gap is not None:
        run.claim("fig3c/invariance_grew_top5", "For this model, transformations whose invariance grew in training "
                  "are more often in a class's top 5 (Fig. 3C).", paper="substantially more likely", ours="—",
                  criterion="needs an untrained and a standard-augmentation model of the search architecture",
                  evidence=results.not_measurable("no untrained and standard model of the search architecture: no "
                                                  "invariance gap"))
    # 7. App. E.1
    if boxes is not None:
        fg = similarity.foreground_stats(boxes, size)["summary"]
        out["foreground"] = fg
        spread_c = max(fg["cx"]["std"], fg["cy"]["std"])
        how = ("a check of the data this chapter runs on, not a finding: the scenes generator draws each box's scale "
               "and centre with these spreads" if generated else "95 % bootstrap over the images")
        run.claim("e1/scale_varies_more",
                  "Foreground boxes vary more in scale than in position, which stays centred (App. E.1).",
                  paper="scale varies over a range, centres centred (numbers not in the text)",
                  ours=f"side std {fg['side']['std']:.3f} (area {fg['area']['p5']:.2f}–{fg['area']['p95']:.2f}); "
                       f"centre std {spread_c:.3f} (cx {fg['cx']['mean']:.3f} ± {fg['cx']['sem']:.3f})",
                  criterion=f"std of the box side (sqrt of its area fraction) − the larger std of its centre "
                            f"(fractions of the frame) > 0; {how}",
                  evidence=box_spread_evidence(boxes, size, generated))
    out["readings"] = search_readings(ev)
    run.log("top_per_class", out["top_per_class"])
    run.log("appearance_share_top5", out["appearance_top5"])
    run.log("identity_best_geometric", out["identity_best_geometric"])
    return out


def search_readings(ev: dict) -> dict:
    """The sentences chapter B4's prose quotes, from the evidence :func:`report_search` decided (a claim it
    did not record reads as not tested).

    Example
    -------
    >>> from invlib import results
    >>> search_readings({"fig3b/top_per_class": results.decide([1.0, 2.0, 1.5], reason="r", unit="class")})["b4_top"]
    'For this model a per-class choice works: every class has a transformation that raises its similarity.'
    """
    missing = results.not_measurable("not computed on this run")
    get = lambda cid: ev.get(cid, missing)  # noqa: E731
    return dict(
        b4_global=_say(get("fig3a/no_single_transform"),
                       "no single transformation raises every class's similarity while the best across classes "
                       "changes nothing", "For this model no single transformation raises every class's similarity, "
                       "and the best one across classes changes it by less than 1 %.",
                       "For this model a single transformation raises every class's similarity, or the best one "
                       "across classes changes it by more than 1 %.", "For this model only one half of that holds "
                       "(see the parts in the table)."),
        b4_top=_say(get("fig3b/top_per_class"), "every class has a transformation that raises its similarity",
                    "For this model a per-class choice works: every class has a transformation that raises its "
                    "similarity.", "For this model some class has no transformation that raises its similarity."),
        b4_appearance=_say(get("sec4.3/appearance_prevails"), "appearance operations fill a class's top 5 more often "
                           "than the pool holds them", "Appearance operations fill a class's top 5 more often than "
                           "their share of the pool.", "Appearance operations fill a class's top 5 less often than "
                           "their share of the pool."),
        b4_dampens=_say(get("fig3a/augmentation_dampens"), "standard augmentation dampens the similarity changes",
                        "Standard augmentation dampened the similarity changes.",
                        "Standard augmentation did not dampen the similarity changes.",
                        "Standard augmentation dampened the similarity changes in part."),
        b4_fig3c=_say(get("fig3c/invariance_grew_top5"), "the transformations whose invariance grew in training fill "
                      "more of the top 5", "The transformations whose invariance grew in training fill substantially "
                      "more of the classes' top 5.", "The transformations whose invariance grew in training do not "
                      "fill substantially more of the classes' top 5."))


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
    from .rrc_reports import report_wordnet

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


def search_summary(searches: dict) -> str:
    """One line on the search of the model without augmentation: its pairs, classes, entries and mean pair
    similarity.

    Example
    -------
    >>> from invlib.papers.b.similarity import Search
    >>> s = Search(["rotate/3"], torch.tensor([[1.0, -1.0]]), torch.tensor([0, 1]), ["a", "b"],
    ...            meta=dict(pairs=2, evaluated=1, mean_similarity=0.5))
    >>> search_summary({"none": {"single": s}})
    '2 same-class pairs over 2 classes; 1 entries (1 distinct), mean pair similarity 0.500'
    """
    s = searches["none"]["single"]
    return (f"{s.meta['pairs']} same-class pairs over {len(s.classes)} classes; {len(s.entries)} entries "
            f"({s.meta['evaluated']} distinct), mean pair similarity {s.meta['mean_similarity']:.3f}")


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
    """Fig. 4: ranking correlation against WordNet similarity, per class pair, with binned means ± SE (None when
    ``reports`` is empty: classes without synsets)."""
    import matplotlib.pyplot as plt

    if not reports:
        return None
    fig, axes = plt.subplots(1, len(reports), figsize=(4 * len(reports), 3.2), squeeze=False)
    for ax, (metric, r) in zip(axes[0], reports.items()):
        f, b = r["pairs"], r["bins"]
        ax.scatter(f.wordnet, f.ranking, s=10, alpha=0.5)
        ax.errorbar(b.wordnet, b.ranking, yerr=b.se, color="red", marker="o", capsize=3)
        ax.set_xlabel(f"WordNet similarity ({metric})")
        ax.set_title(f"ρ = {r['rho']:.2f}, p = {r['p']:.3f}", fontsize=9)
    axes[0, 0].set_ylabel("Spearman of op-type rankings")
    fig.tight_layout()
    return fig


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

    cols = [c for c in table.columns if c not in ("level", "method", "seed")]
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
    data's variation, with standard-error bars."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grids) + 1, figsize=(4 * (len(grids) + 1), 3.2))
    for ax, g in zip(axes, grids):
        for method, part in summary.groupby("method"):
            ax.errorbar(part.level, part[g], part[f"{g}_se"], marker="o", capsize=3,
                        label="no augmentation" if method == "fixed_size_center_crop" else method.upper())
        ax.set(xlabel="variation of the training scenes", ylabel="relative invariance (levels 1-9)", title=g)
        ax.legend(fontsize=8)
    rrc_rows = summary[summary.method == "rrc"]
    axes[-1].errorbar(rrc_rows.level, rrc_rows.crop_gain, rrc_rows.crop_gain_se, marker="o", capsize=3, color="C1")
    axes[-1].axhline(0, color="grey", lw=0.8)
    axes[-1].set(xlabel="variation of the training scenes", ylabel="RRC − central crop (points)", title="crop gain")
    fig.tight_layout()
    return fig


OVERFITS = (OVERFIT_GAP, f"chapter B1's threshold: a model without augmentation whose training accuracy exceeds its "
                         f"test accuracy by less than {OVERFIT_GAP:g} points has little overfitting for a crop to "
                         "correct, so the thesis predicts no growing gain there")


def _by_seed(table, method: str, level: float, column: str) -> dict[int, float]:
    t = table[(table.method == method) & (table.level == level)]
    return {int(r.seed): float(getattr(r, column)) for r in t.itertuples()}


def _step_rises(values: dict[float, dict[int, float]]) -> dict:
    """Per step between consecutive levels, the rise paired by seed, decided > 0 over seeds (one part per step)."""
    levels = sorted(values)
    parts = {}
    for a, b in zip(levels[:-1], levels[1:]):
        common = sorted(set(values[a]) & set(values[b]))
        parts[f"{a:g} → {b:g}"] = _rise(results.paired([values[b][k] for k in common],
                                                        [values[a][k] for k in common]))
    return parts


def variation_evidence(table) -> dict:
    """The evidence of the claims the thesis implies, from :func:`invlib.papers.b.grounding.variation_study`'s table
    (one row per level, method and seed). Each is about what training on more varied data does, so its replicate is
    a seed (``n_min`` :data:`SEED_MIN`), and "grows with the variation" is decided step by step: for each pair of
    consecutive levels, the per-seed rise (the same seed at both levels) > 0, one part per step. The crop gain is
    each RRC seed's test accuracy minus the no-augmentation model of the same seed and level; its claim has one more
    part, the premise that the model without augmentation overfits at the highest level (:data:`OVERFITS`).

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame([dict(level=lv, method=m, seed=k, train_acc=90.0, test_acc=60 + 5 * lv * (m == "rrc") + k,
    ...                        translate=0.1 * lv + 0.01 * k, zoom_in=0.2)
    ...                   for lv in (0.0, 1.0) for m in ("fixed_size_center_crop", "rrc") for k in range(3)])
    >>> {k: e.verdict for k, e in variation_evidence(t).items()}["thesis/translate_grows_with_variation"]
    'reproduced'
    """
    none = "fixed_size_center_crop"
    levels = sorted(table.level.unique())
    ev = {}
    for grid in ("translate", "zoom_in"):
        if grid in table:
            ev[f"thesis/{grid}_grows_with_variation"] = results.decide_parts(
                _step_rises({lv: _by_seed(table, none, lv, grid) for lv in levels}), "every step rises")
    if "rrc" in set(table.method):
        gains = {}
        for lv in levels:
            base, rrc = _by_seed(table, none, lv, "test_acc"), _by_seed(table, "rrc", lv, "test_acc")
            gains[lv] = {k: rrc[k] - base[k] for k in rrc if k in base}
        top = levels[-1]
        train, test = _by_seed(table, none, top, "train_acc"), _by_seed(table, none, top, "test_acc")
        gap = [train[k] - test[k] for k in sorted(train) if k in test]
        parts = {**_step_rises(gains),
                 f"premise: no augmentation overfits at {top:g}": results.decide(
                     gap, boundary=OVERFITS[0], reason=OVERFITS[1], unit="seed", n_min=SEED_MIN)}
        ev["thesis/crop_gain_grows_with_variation"] = results.decide_parts(parts, "every step rises, and the premise")
    return ev


def report_variation(run, table) -> dict:
    """The claims the thesis implies (the paper argues them, runs no such test), with the evidence of
    :func:`variation_evidence` from the study's ``table``: invariance to translation and to zoom of the models
    trained without augmentation rises with the data's variation; RRC's gain over the central crop rises with it.
    Returns the sentences the chapter's prose quotes."""
    ev = variation_evidence(table)
    summary = variation_summary(table)
    none = summary[summary.method == "fixed_size_center_crop"].sort_values("level")
    levels = ", ".join(f"{v:g}" for v in none.level)
    seeds = int(none.seeds.min())
    steps = f"per step between consecutive levels, the rise of a seed's value (paired: the same seed at both levels) " \
            f"> 0, 95 % t-interval over seeds, one part per step; >= {SEED_MIN} seeds"
    for grid, what in (("translate", "position"), ("zoom_in", "scale")):
        if f"thesis/{grid}_grows_with_variation" not in ev:
            continue
        per = ", ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(none[grid], none[f"{grid}_se"]))
        run.claim(f"thesis/{grid}_grows_with_variation",
                  f"Invariance to {grid.replace('_', ' ')} grows with the data's variation in {what} (the "
                  "paper's thesis, tested with no augmentation).",
                  paper="predicted (no such experiment in the paper)",
                  ours=f"at variation {levels}: {per} (mean ± SE over {seeds} seeds)",
                  criterion=f"level-mean (1-9) median invariance of the model without augmentation; {steps}",
                  evidence=ev[f"thesis/{grid}_grows_with_variation"])
    if "thesis/crop_gain_grows_with_variation" in ev:
        rrc = summary[summary.method == "rrc"].sort_values("level")
        gap = float(none.train_acc.iloc[-1] - none.test_acc.iloc[-1])
        per = ", ".join(f"{m:+.1f} ± {s:.1f}" for m, s in zip(rrc.crop_gain, rrc.crop_gain_se))
        run.claim("thesis/crop_gain_grows_with_variation",
                  "RandomResizedCrop's gain over the central crop grows with the data's variation in position and "
                  "scale.", paper="predicted (no such experiment in the paper)",
                  ours=f"gain at variation {levels}: {per} points (mean ± SE over seeds); no-augmentation train − "
                       f"test {gap:.1f} points at the highest level",
                  criterion=f"RRC's test accuracy minus the no-augmentation model's of the same seed and level; "
                            f"{steps}; and a premise part: the no-augmentation model's train − test accuracy at the "
                            f"highest level > {OVERFIT_GAP:g} points, 95 % t-interval over seeds",
                  evidence=ev["thesis/crop_gain_grows_with_variation"])
    return variation_readings(ev)


def variation_readings(ev: dict) -> dict:
    """The sentences chapter B7's prose quotes, from :func:`variation_evidence`.

    Example
    -------
    >>> from invlib import results
    >>> one = results.decide([0.1], reason="r", unit="seed")
    >>> variation_readings({"thesis/translate_grows_with_variation": one})["b7_translate"][-38:]
    'it has 1 seed where the claim needs 3.'
    """
    missing = results.not_measurable("not computed on this run")
    out = {}
    for key, cid, what in (("b7_translate", "thesis/translate_grows_with_variation", "invariance to translation"),
                           ("b7_zoom", "thesis/zoom_in_grows_with_variation", "invariance to zooming in"),
                           ("b7_crop", "thesis/crop_gain_grows_with_variation", "RRC's gain over the central crop")):
        out[key] = _say(ev.get(cid, missing), f"{what} rises with every step of the variation",
                        f"{what[0].upper()}{what[1:]} rose with every step of the variation.",
                        f"{what[0].upper()}{what[1:]} fell at every step of the variation.",
                        f"The claim on {what} holds in part only (see its parts in the table).")
    return out
