"""What chapter S1 shows: one figure per question (does augmentation raise invariance, :func:`plot_gains`; do two
measures rank the models alike, :func:`plot_pair`; do all the measures agree, :func:`plot_agreement`; where does
invariance come from, :func:`plot_sources`), the measures per model as short tables, the claims' effects and the
facts its prose quotes, among them each question's answer (:func:`answers`).

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the table of
:func:`invlib.papers.s.agreement.measure`; it logs the metrics, computes each claim's effects and records them with
:meth:`invlib.results.Run.claim` against the claim's declaration in :mod:`invlib.papers.s.protocol` (which decides
it), and returns the agreement table, the sources table and ``facts`` (``{glue name: Markdown}``).

Example
-------
>>> from invlib import results
>>> S = settings("smoke", transforms=("zoom",))
>>> t = demo_table()
>>> run = results.Run("smoke", name="demo")
>>> agree, src, facts = report(run, S, t)
>>> {cid: c["verdict"] for cid, c in run.claims.items()}  # doctest: +NORMALIZE_WHITESPACE
{'s1/augmentation_raises_invariance': 'reproduced', 's1/b_and_c_rank_alike': 'reproduced',
 's1/probe_finds_what_is_not_invariant': 'reproduced', 's1/accuracy_tracks_invariance': 'reproduced',
 's1/augmentation_moves_invariance_most': 'reproduced'}
>>> run.claims["s1/augmentation_moves_invariance_most"]["evidence"]["parts"]["vs architecture"]["n"]
3
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...pages import count, number
from ...pages import why as pages_why
from ...results import (
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    not_measurable,
    text,
)
from ..d import cropping_reports
from .agreement import (
    AUGERINO_GROUP,
    AUGMENTED,
    MEASURES,
    SOURCES,
    TRANSFORMS,
    Settings,
    agreement,
    augerino_variant,
    crop_variant,
    group_mean,
    pooled_agreement,
    ranked_transforms,
    settings,  # noqa: F401  (the examples use it)
    sources,
    variants,
    wide,
)
from .protocol import FACTORS, N_MIN, PROTOCOL  # noqa: F401  (N_MIN: read from here by the tests)

SHORT = dict(accuracy="accuracy", a_probe="A probe", b_invariance="B invariance", b_alignment="B alignment",
             c_inv_acc="C inv. acc.", c_inv_l2="C inv. L2", c_eq_acc="C eq. acc.")  # also the parts' names
ALL = "all"  # the agreement table's rows over every transformation at once (the claims' number)


def trained(table: pd.DataFrame) -> list[str]:
    """The models that were trained (the untrained ones score at chance under every accuracy-based measure, so
    the rank correlations leave them out; they are measured by B's sweep only, for claim 5's training factor)."""
    return list(dict.fromkeys(table.loc[table["variant"] != "untrained", "model"]))


# ------------------------------------------------------------------------------ the figures, one question each
COLOURS = {t: plt.get_cmap("tab10")(k) for k, t in enumerate(TRANSFORMS)}  # a transformation's colour everywhere
ORIENTED = {1: "↑ more invariant", -1: "↑ more invariant (axis reversed)", 0: "↑ more equivariant"}
VARIANT_WORDS = {"none": "no augmentation", "standard": "RandomResizedCrop", "translation": "translation (random crop)",
                 "scale": "zoom (random-size crop)", "shift": "shift", "shift_scale": "shift + zoom",
                 "shift_scale_square": "shift + zoom, square", "rotation": "rotation", "brightness": "brightness",
                 "untrained": "untrained"}
MARKERS = {"B1": "o", "B2": "v", "B6": "^", "B7": "s", "B3": "D", "D2": "P"}  # a recipe's marker in the scatter plots
PAIRS = {"s1/b_and_c_rank_alike": ("b_invariance", "c_inv_acc"),  # claim -> (x, y) of its figure
         "s1/probe_finds_what_is_not_invariant": ("b_invariance", "a_probe"),
         "s1/accuracy_tracks_invariance": ("b_invariance", "accuracy")}
WORDS = {"accuracy": "the accuracy under the transformation", "a_probe": "A's probe accuracy",
         "b_invariance": "B's relative invariance", "b_alignment": "B's equivariance alignment",
         "c_inv_acc": "C's invariance accuracy", "c_inv_l2": "C's invariance L2 distance",
         "c_eq_acc": "C's equivariance accuracy"}  # each measure in a sentence
GAIN_LABELS = {"accuracy": "gain (points)", "a_probe": "fall in probe accuracy", "b_invariance": "gain",
               "c_inv_acc": "gain (points)", "c_inv_l2": "fall in L2 distance"}
AVERAGE = "average (the claim)"  # the row of the figures that shows a claim's own quantity


def variant_words(variant: str) -> str:
    """A variant in words (:data:`VARIANT_WORDS`; B6's Augerino runs by what they learn and their weight).

    Example
    -------
    >>> variant_words("shift_scale"), variant_words(augerino_variant("translation", 0.01))
    ('shift + zoom', 'Augerino, learned shift, weight 0.01')
    >>> variant_words("standard beta 0.1")
    'RandomResizedCrop, area ~ Beta(1, 0.1)'
    >>> variant_words(crop_variant("no_input")), variant_words(crop_variant("fixed lambda 0.02"))
    ('InstaAug without input', 'InstaAug, fixed λ 0.02')
    >>> variant_words(crop_variant("random_crop 0.35-1"))
    'Random crop, area 0.35-1'
    """
    if variant.startswith(crop_variant("")):  # chapter D2's model: its own name for it
        return cropping_reports.label(variant[len(crop_variant("")):])
    if variant.startswith("standard beta "):
        return f"RandomResizedCrop, area ~ Beta(1, {variant.rsplit(' ', 1)[1]})"
    if variant.startswith("augerino "):
        _, what, reg = variant.split(" ")
        return f"Augerino, learned {what.replace('+', ' + ')}, weight {reg}"
    return VARIANT_WORDS.get(variant, variant)


def group_of(table: pd.DataFrame) -> pd.Series:
    """Each model's group in the figures' legends, in words: the recipe and what it was trained with (its seeds
    together).

    Example
    -------
    >>> g = group_of(demo_table())
    >>> g["standard B1 ResNet 0"], g["none B7 ResNet 1"], g["none B3 ViT 0"]
    ('B1: RandomResizedCrop', 'B7: no augmentation, variation 0', 'B3 ViT: no augmentation')
    >>> group_of(demo_table().replace({"variant": {"none": "standard"}}))["none B3 ResNet 0"]  # B3 standard
    'B3 ResNet: RandomResizedCrop + flip'
    """
    first = table.drop_duplicates("model").set_index("model")

    def words(r) -> str:
        what = variant_words(r["variant"])
        if r["recipe"] == "B3":
            what = "RandomResizedCrop + flip" if r["variant"] == "standard" else what  # the zoo's "standard"
            return f"B3 {r['arch']}: {what}"
        if r["recipe"] == "B7" or r["variation"] == 0:
            return f"{r['recipe']}: {what}, variation 0"
        return f"{r['recipe']}: {what}"

    return first.apply(words, axis=1)


def _orient_y(ax, measure: str, label: str) -> None:
    ax.set_ylabel(f"{label}\n{ORIENTED[MEASURES[measure][1]]}", fontsize=8)
    if MEASURES[measure][1] < 0:
        ax.invert_yaxis()


def gains_per_seed(table: pd.DataFrame, S: Settings) -> pd.DataFrame:
    """Question 1's numbers, one row per (measure, transformation, seed): the model trained with the transformation
    minus the one trained without augmentation (B1's recipe, the same seed), oriented (positive = more invariant),
    as :func:`raises_effects` takes them.

    Example
    -------
    >>> g = gains_per_seed(demo_table(), settings("smoke", transforms=("zoom",)))
    >>> g.groupby("measure")["gain"].size().to_dict()["b_invariance"], bool((g["gain"] > 0).all())
    (3, True)
    """
    rows = []
    for m, (_, sign) in MEASURES.items():
        for t in S.transforms:
            aug = per_seed(table, t, m, variant=AUGMENTED[t], recipe="B1")
            none = per_seed(table, t, m, variant="none", recipe="B1")
            for seed in aug.index.intersection(none.index) if sign else ():
                rows.append(dict(measure=m, transform=t, seed=seed, gain=sign * (aug[seed] - none[seed])))
    return pd.DataFrame(rows, columns=["measure", "transform", "seed", "gain"])


def plot_gains(table: pd.DataFrame, S: Settings):
    """Question 1: does augmenting with a transformation raise the invariance to it? One panel per invariance
    measure, a transformation per row and, last, their average (the claim's quantity, :func:`raises_effects`):
    each seed's gain of the augmented model over the one without augmentation (small dots) and their mean (large),
    oriented (right = more invariant); the grey line is no change, the dashed one the smallest gain that matters
    (the claim's boundary).

    Example
    -------
    >>> fig = plot_gains(demo_table(), settings("smoke", transforms=("zoom",)))
    >>> [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()][:2]
    ['accuracy', 'A probe']
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['zoom', 'average (the claim)']
    """
    g = gains_per_seed(table, S)
    effects = raises_effects(table, S)
    ms = [m for m in MEASURES if m in set(g["measure"])]
    claim = PROTOCOL["s1/augmentation_raises_invariance"]
    cols = min(3, max(len(ms), 1))
    rows = -(-len(ms) // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(2.8 * cols + 0.3, 0.45 * (len(S.transforms) + 1)
                                                                 * rows + 1.2 * rows + 0.3))
    for ax, m in zip(axes.flat, ms):
        part = g[g["measure"] == m]
        ts = [t for t in S.transforms if t in set(part["transform"])]
        values = [part.loc[part["transform"] == t, "gain"].values for t in ts]
        mean = effects.get(SHORT[m])
        values.append(np.asarray(mean) if isinstance(mean, np.ndarray) else np.array([]))
        for i, (t, v) in enumerate(zip([*ts, AVERAGE], values)):
            colour = COLOURS.get(t, "black")
            ax.plot(v, np.full(len(v), i), "o", ms=3.5, color=colour, alpha=0.55)
            if len(v):
                ax.plot([v.mean()], [i], "D", ms=7, color=colour, mec="black", mew=0.6)
        ax.axvline(0, color="0.5", lw=1)
        ax.axvline(claim.parts[SHORT[m]].smallest, color="0.3", lw=1, ls="--")
        ax.axhline(len(ts) - 0.5, color="0.7", lw=0.8)
        ax.set_yticks(range(len(ts) + 1), [*ts, AVERAGE], fontsize=8)
        ax.set_ylim(-0.6, len(ts) + 0.6)
        ax.invert_yaxis()
        ax.set_title(SHORT[m], fontsize=9)
        ax.set_xlabel(f"{GAIN_LABELS[m]} →", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(ms):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def plot_pair(table: pd.DataFrame, S: Settings, cid: str, claims: dict):
    """Questions 2 to 4: do two measures rank the models alike? One panel per transformation that has both measures
    (one saying so where none has): each trained model a point, B's relative invariance (x, right = more
    invariant) against the other measure of claim ``cid`` (:data:`PAIRS`; up = more invariant, its axis reversed
    where a lower value is the more invariant one), coloured by its group (:func:`group_of`), its marker the
    recipe; each title gives the transformation's oriented Spearman's rho, the figure's title the claim's: their
    average with its interval over variants, from the recorded claim (``claims``: :attr:`invlib.results.Run.claims`).

    Example
    -------
    >>> from invlib import results
    >>> run = results.Run("smoke", name="demo")
    >>> _ = report(run, settings("smoke", transforms=("zoom",)), demo_table())
    >>> fig = plot_pair(demo_table(), settings("smoke", transforms=("zoom",)), "s1/accuracy_tracks_invariance",
    ...                 run.claims)
    >>> fig.axes[0].get_title(), fig._suptitle.get_text().split(",")[0]
    ('zoom: rho +1.00', 'Averaged over the transformations: rho +1.00')
    """
    x_m, y_m = PAIRS[cid]
    ev = claims.get(cid, {}).get("evidence") or {}
    groups = group_of(table)
    models_ = pair_models(table, x_m, y_m)
    names = list(dict.fromkeys(groups[models_]))
    recipe = table.drop_duplicates("model").set_index("model")["recipe"]
    cmap = plt.get_cmap("tab20")
    colours = {n: cmap(k % 20) for k, n in enumerate(names)}
    ranked = ranked_transforms(table, x_m, y_m, models_, S.transforms)
    ts = [t for t in S.transforms if {x_m, y_m} <= set(table.loc[table["transform"] == t, "measure"])]
    rows = -(-len(names) // 3)
    fig, axes = plt.subplots(1, max(len(ts), 1), squeeze=False, figsize=(2.3 * max(len(ts), 2) + 0.9,
                                                                         3.4 + 0.16 * rows))
    if not ts:
        axes[0, 0].text(0.5, 0.5, f"no transformation measured has both\n{MEASURES[x_m][0]} and {MEASURES[y_m][0]}",
                        ha="center", va="center", fontsize=8, transform=axes[0, 0].transAxes, color="0.35")
        axes[0, 0].set_xticks([]), axes[0, 0].set_yticks([])
    first = True
    for ax, t in zip(axes[0], ts):
        w = wide(table, t)
        w = w.loc[[m for m in w.index if m in set(models_)]]
        for name in names:
            keep = [m for m in w.index if groups[m] == name]
            ax.plot(w.loc[keep, x_m], w.loc[keep, y_m], MARKERS.get(recipe[keep[0]], "o") if keep else "o", ms=4.5,
                    color=colours[name], label=name, alpha=0.85, ls="")
        rho = rho_at(table, t, x_m, y_m, models_)
        ax.set_title(f"{t}: rho {rho:+.2f}" if t in ranked else f"{t}: no rho\n(a measure is constant)", fontsize=9)
        ax.set_xlabel("B: relative invariance →", fontsize=8)
        if first:
            _orient_y(ax, y_m, MEASURES[y_m][0])
        elif MEASURES[y_m][1] < 0:
            ax.invert_yaxis()
        first = False
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.grid(alpha=0.3)
    est, lo, hi, n = (ev.get(k) for k in ("estimate", "lo", "hi", "n"))
    if est is not None and lo is not None and hi is not None:
        fig.suptitle(f"Averaged over the transformations: rho {est:+.2f}, 95 % interval {lo:+.2f} to {hi:+.2f} "
                     f"over {n} variants", fontsize=9)
    handles = [plt.Line2D([], [], marker=MARKERS.get(recipe[groups[groups == n].index[0]], "o"), ls="",
                          color=colours[n], ms=5) for n in names]
    fig.legend(handles, names, loc="lower center", ncol=min(3, len(names)), fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.052 * rows * 3.4 / (3.4 + 0.16 * rows), 1, 1))
    return fig


def agreement_frame(table: pd.DataFrame, S: Settings, models_: list[str] | None = None) -> pd.DataFrame:
    """The agreement of every two measures across the trained models (or ``models_``): per transformation the
    oriented Spearman's rho (:func:`invlib.papers.s.agreement.agreement`, ``n`` the models), and over every
    transformation at once (``transform`` :data:`ALL`) the claims' number, the rho averaged over the
    transformations with its 95 % interval over whole variants (``lo``, ``hi``; ``n`` the variants,
    :func:`invlib.papers.s.agreement.pooled_agreement`).

    Example
    -------
    >>> a = agreement_frame(demo_table(), settings("smoke", transforms=("zoom",)))
    >>> a.loc[(a["a"] == "accuracy") & (a["b"] == "b_invariance"), ["transform", "rho", "n"]].values.tolist()
    [['zoom', 1.0, 28], ['all', 1.0, 10]]
    """
    models_ = trained(table) if models_ is None else models_
    per = pd.concat([agreement(table, t, models_) for t in S.transforms if t in set(table["transform"])],
                    ignore_index=True)
    rows = []
    for a, b in dict.fromkeys(zip(per["a"], per["b"])):
        iv = pooled_agreement(table, a, b, models_, S.transforms, 0.95, S.resamples, S.seed)
        rows.append(dict(transform=ALL, a=a, b=b, rho=iv.estimate, lo=iv.lo, hi=iv.hi, n=iv.n))
    return pd.concat([per, pd.DataFrame(rows)], ignore_index=True)[["transform", "a", "b", "rho", "lo", "hi", "n"]]


def agreement_table(agree: pd.DataFrame) -> pd.DataFrame:
    """The agreement of every two measures as a short table (:func:`agreement_frame`): a pair of measures per row
    (in :data:`invlib.papers.s.agreement.MEASURES`' order), the oriented Spearman's rho per transformation, then
    their average with its 95 % interval over variants.

    Example
    -------
    >>> a = pd.DataFrame(dict(transform=["zoom", "rotation", "all"], a="accuracy", b="b_invariance",
    ...                       rho=[0.9, 0.2, 0.55], lo=[np.nan, np.nan, 0.3], hi=[np.nan, np.nan, 0.7], n=10))
    >>> agreement_table(a).to_dict(orient="records")
    [{'zoom': '+0.9', 'rotation': '+0.2', 'average (95 % interval)': '+0.55 (+0.3 to +0.7)'}]
    """
    def cell(r) -> str:
        if not np.isfinite(r.rho):
            return "—"
        rho = number(r.rho, sign=True)
        return f"{rho} ({number(r.lo, sign=True)} to {number(r.hi, sign=True)})" if r.transform == ALL else rho

    a = agree.assign(pair=[f"{SHORT[x]} – {SHORT[y]}" for x, y in zip(agree["a"], agree["b"])],
                     cell=[cell(r) for r in agree.itertuples()])
    head = "average (95 % interval)"
    a["transform"] = a["transform"].replace(ALL, head)
    order = list(MEASURES).index
    pairs = sorted(dict.fromkeys(zip(agree["a"], agree["b"])), key=lambda p: (order(p[0]), order(p[1])))
    out = a.pivot_table(index="pair", columns="transform", values="cell", aggfunc="first", sort=False)
    out = out.reindex(index=[f"{SHORT[x]} – {SHORT[y]}" for x, y in pairs],
                      columns=list(dict.fromkeys(a["transform"])))
    out.index.name, out.columns.name = "measures", None
    return out.fillna("—")


def plot_agreement(agree: pd.DataFrame, S: Settings):
    """Do all the measures agree? Every pair of measures (a row; the three the claims test in bold): the oriented
    Spearman's rho across the trained models for each transformation (a colour) and their average with its 95 %
    interval over variants (black, :func:`agreement_frame`): right of 0, the two measures call the same models
    invariant; the dashed line is the claims' 0.5.

    Example
    -------
    >>> a = pd.DataFrame(dict(transform=["zoom", "zoom", "all", "all"], a=["accuracy", "a_probe"] * 2,
    ...                       b="b_invariance", rho=[0.9, -0.2, 0.9, -0.2], lo=[np.nan, np.nan, 0.7, -0.5],
    ...                       hi=[np.nan, np.nan, 1.0, 0.1], n=10))
    >>> fig = plot_agreement(a, settings("smoke", transforms=("zoom",)))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['accuracy – B invariance', 'A probe – B invariance']
    """
    order = list(MEASURES).index
    pairs = sorted(dict.fromkeys(zip(agree["a"], agree["b"])), key=lambda p: (order(p[0]), order(p[1])))
    claimed = {tuple(sorted(p, key=order)) for p in PAIRS.values()}
    ts = [t for t in S.transforms if t in set(agree["transform"])]
    fig, ax = plt.subplots(figsize=(7.2, 0.3 * len(pairs) + 1.3))
    for k, t in enumerate([*ts, ALL]):
        part = agree[agree["transform"] == t].set_index(["a", "b"])
        for i, pair in enumerate(pairs):
            if pair not in part.index or not np.isfinite(part.loc[pair, "rho"]):
                continue
            if t == ALL:
                lo, hi = part.loc[pair, ["lo", "hi"]]
                ax.plot([lo, hi], [i, i], color="black", lw=1.6)
                ax.plot(part.loc[pair, "rho"], i, "D", ms=6, color="black")
            else:
                y = i + (k - (len(ts) - 1) / 2) * 0.14 - 0.08
                ax.plot(part.loc[pair, "rho"], y, "o", ms=4.5, color=COLOURS[t], alpha=0.8)
    ax.axvline(0, color="0.5", lw=1)
    ax.axvline(0.5, color="0.3", lw=1, ls="--")
    ax.set_yticks(range(len(pairs)), [f"{SHORT[a]} – {SHORT[b]}" for a, b in pairs], fontsize=8)
    for label, pair in zip(ax.get_yticklabels(), pairs):
        if tuple(sorted(pair, key=order)) in claimed:
            label.set_fontweight("bold")
    ax.set_ylim(len(pairs) - 0.5, -0.5)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman's rho, oriented (positive: both call the same models invariant)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", ls="", color=COLOURS[t], ms=5) for t in ts]
    handles.append(plt.Line2D([], [], marker="D", color="black", ms=5))
    ax.legend(handles, [*ts, "average, 95 % interval"], fontsize=8, loc="lower center", bbox_to_anchor=(0.45, 1.0),
              ncol=len(ts) + 1, frameon=False)
    fig.tight_layout()
    return fig


def plot_sources(src: pd.DataFrame, leads: dict | None = None):
    """Question 5: where does invariance come from? Left: what each factor (a row) changes in B's relative
    invariance to each transformation (a colour), mean over seeds: after minus before (:data:`SOURCES`). Right,
    with ``leads`` (:func:`most_effects`): the claim's quantity, how far augmentation's change is ahead of each
    other factor's (absolute sizes, averaged over the transformations), each seed a dot and their mean a diamond;
    the dashed line is the smallest lead that matters.

    Example
    -------
    >>> t, S = demo_table(), settings("smoke", transforms=("zoom",))
    >>> fig = plot_sources(sources(t, "b_invariance", ["zoom"]), most_effects(t, S))
    >>> len(fig.axes[0].get_yticklabels()), [x.get_text() for x in fig.axes[1].get_yticklabels()]
    (4, ['vs data', 'vs architecture', 'vs training'])
    """
    factors = list(SOURCES)
    leads = {k: v for k, v in (leads or {}).items() if isinstance(v, np.ndarray)}
    fig, axes = plt.subplots(1, 2 if leads else 1, squeeze=False, figsize=(7.2, 0.55 * len(factors) + 1.4),
                             gridspec_kw=dict(width_ratios=[1.6, 1]) if leads else None)
    ax = axes[0, 0]
    for k, t in enumerate(src.index):
        y = np.arange(len(factors)) + (k - (len(src) - 1) / 2) * 0.14
        ax.plot(src.loc[t, factors].astype(float).values, y, "o", ms=6, color=COLOURS.get(t, "0.3"), label=t)
    ax.axvline(0, color="0.5", lw=1)
    ax.set_yticks(range(len(factors)), [f"{f}\n({SOURCES[f][0]})" for f in factors], fontsize=7.5)
    ax.set_ylim(len(factors) - 0.5, -0.5)
    ax.set_xlabel("change in B's relative invariance\n(→ the factor makes the model more invariant)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, ncol=len(src), loc="upper center", frameon=False)
    if leads:
        ax = axes[0, 1]
        names = list(leads)
        for i, name in enumerate(names):
            ax.plot(leads[name], np.full(len(leads[name]), i), "o", ms=3.5, color="0.3", alpha=0.6)
            ax.plot([leads[name].mean()], [i], "D", ms=7, color="black")
        ax.axvline(0, color="0.5", lw=1)
        ax.axvline(PROTOCOL["s1/augmentation_moves_invariance_most"].parts[names[0]].smallest, color="0.3", lw=1,
                   ls="--")
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_title("the claim: augmentation's lead", fontsize=9)
        ax.set_xlabel("|augmentation's change| − |factor's|,\nmean over the transformations", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    return fig


def model_means(table: pd.DataFrame, transform: str) -> pd.DataFrame:
    """One transformation's measures, a row per model group (:func:`group_of`, its seeds averaged) and a measure per
    column (their labels): a short table (the per-seed values are in the chapter's JSON).

    Example
    -------
    >>> model_means(demo_table(), "zoom").shape  # 11 groups, 7 measures
    (11, 7)
    """
    w = wide(table, transform)
    out = w.groupby(group_of(table)[w.index].values, sort=False).mean()
    out.index.name, out.columns.name = "models", None
    return out.rename(columns={k: MEASURES[k][0] for k in out.columns})


def learned_table(learned: dict) -> pd.DataFrame:
    """Chapter B6's Augerino model's learned range and accuracies (:func:`invlib.papers.s.agreement.learned_range`)
    with words for names.

    Example
    -------
    >>> learned_table({"translate_x bound": 0.1, "top1_on": 80.0}).index.tolist()
    ['largest translation, x (fraction of the side)', 'accuracy with its warps (%)']
    """
    words = {"translate_x bound": "largest translation, x (fraction of the side)",
             "translate_y bound": "largest translation, y (fraction of the side)", "largest zoom": "largest zoom (×)",
             "top1_on": "accuracy with its warps (%)", "top1_off": "accuracy without them (%)"}
    return pd.DataFrame({"learned": list(learned.values())}, index=[words.get(k, k) for k in learned])


def rho_at(table: pd.DataFrame, transform: str, a: str, b: str, models_: list[str] | None = None) -> float:
    """The oriented Spearman's rho of measures ``a`` and ``b`` across ``models_`` for one transformation (NaN where
    one is missing or constant).

    Example
    -------
    >>> t = demo_table()
    >>> round(rho_at(t, "zoom", "b_invariance", "a_probe", trained(t)), 6), round(rho_at(t, "zoom", "c_inv_l2",
    ...                                                                                 "a_probe"), 6)
    (1.0, 1.0)
    """
    r = agreement(table, transform, models_)
    row = r[((r["a"] == a) & (r["b"] == b)) | ((r["a"] == b) & (r["b"] == a))]
    return float(row["rho"].iloc[0]) if len(row) else float("nan")


def agreement_effects(table: pd.DataFrame, S: Settings, a: str, b: str, models_: list[str]):
    """The effect of "measures ``a`` and ``b`` rank the models alike": the oriented Spearman's rho within each
    transformation of ``S.transforms`` that has both, averaged over them, with its interval over whole variants
    (:func:`invlib.papers.s.agreement.pooled_agreement`), as a function ``level -> Interval``; not measurable where
    no transformation has both.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> t, claim, S = demo_table(), PROTOCOL["s1/accuracy_tracks_invariance"], settings("smoke", transforms=("zoom",))
    >>> ev = decide(claim, agreement_effects(t, S, "accuracy", "b_invariance", trained(t)))
    >>> ev.verdict, ev.n  # every measure ranks the 10 variants alike
    ('reproduced', 10)
    >>> decide(claim, agreement_effects(demo_table(seeds=1).query("recipe == 'B1'"), S, "accuracy",
    ...                                 "b_invariance", trained(t))).verdict  # 6 variants: too few to resample
    'inconclusive at this budget'
    >>> no_c = t[t["measure"] != "c_inv_acc"]  # as C has no zoom
    >>> decide(claim, agreement_effects(no_c, S, "accuracy", "c_inv_acc", trained(t))).verdict
    'not measurable at this profile'
    """
    if pooled_agreement(table, a, b, models_, S.transforms, resamples=1) is None:
        return not_measurable(f"no transformation measured has both {MEASURES[a][0]} and {MEASURES[b][0]}")
    return lambda level: pooled_agreement(table, a, b, models_, S.transforms, level, S.resamples, S.seed)


def pair_models(table: pd.DataFrame, a: str, b: str) -> list[str]:
    """The trained models measured by both ``a`` and ``b`` (:data:`MEASURES` keys): the points of a pair's figure
    and its claim (D2's models have the sweep's measures only, :func:`invlib.papers.s.agreement.sweep_only`).

    Example
    -------
    >>> t = demo_table()
    >>> len(pair_models(t, "accuracy", "b_invariance")), len(pair_models(t[t["measure"] != "a_probe"], "a_probe",
    ...                                                                  "b_invariance"))
    (28, 0)
    """
    have = set(table.loc[table["measure"] == a, "model"]) & set(table.loc[table["measure"] == b, "model"])
    return [m for m in trained(table) if m in have]


def pair_counts(table: pd.DataFrame, a: str, b: str) -> tuple[int, int]:
    """``(models, variants)`` of :func:`pair_models`: what a pair's caption counts.

    Example
    -------
    >>> pair_counts(demo_table(), "accuracy", "b_invariance")
    (28, 10)
    """
    both = pair_models(table, a, b)
    return len(both), int(variants(table)[both].nunique()) if both else 0


def _agree_claim(run, cid: str, table: pd.DataFrame, S: Settings, a: str, b: str) -> str:
    models_ = trained(table)
    effects = agreement_effects(table, S, a, b, models_)
    ours = "—"
    if callable(effects):
        iv = effects(PROTOCOL[cid].parts[""].level())
        used = ranked_transforms(table, a, b, models_, S.transforms)
        per = {t: rho_at(table, t, a, b, models_) for t in used}
        ours = (f"rho {number(iv.estimate, sign=True)}, 95 % interval {number(iv.lo, sign=True)} to "
                f"{number(iv.hi, sign=True)}, over {iv.n} variants ({len(pair_models(table, a, b))} models); per "
                "transformation: "
                + ", ".join(f"{t} {number(r, sign=True)}" for t, r in per.items())
                if np.isfinite(iv.estimate) else "no rho: under every transformation a measure is constant")
    return run.claim(PROTOCOL[cid], ours=ours, effects=effects)


def per_seed(table: pd.DataFrame, transform: str, measure_: str, **where) -> pd.Series:
    """One measure of the models whose fields equal ``where``, indexed by seed (the mean where a seed has several).

    Example
    -------
    >>> per_seed(demo_table(), "zoom", "b_invariance", variant="scale", recipe="B1").round(2).tolist()
    [0.89, 0.9, 0.91]
    """
    keep = (table["transform"] == transform) & (table["measure"] == measure_)
    for k, v in where.items():
        keep &= table[k] == v
    return table[keep].groupby("seed")["value"].mean()


def raises_effects(table: pd.DataFrame, S: Settings) -> dict:
    """The effects of "augmenting with a transformation raises the invariance to it under every measure": per
    invariance measure (named as in :data:`SHORT`), the oriented gain of the model trained with a transformation
    over the one trained without augmentation (B1's recipe trains both from each seed), averaged over the
    transformations the measure has, one value per seed (the seeds measured under every one of them); a measure no
    transformation has is not measurable.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_raises_invariance"],
    ...             raises_effects(demo_table(), settings("smoke", transforms=("zoom",))))
    >>> ev.verdict, len(ev.parts)  # 3 seeds, gains far above their spread
    ('reproduced', 5)
    """
    g = gains_per_seed(table, S)
    parts = {}
    for m in MEASURES:
        by = g[g["measure"] == m].pivot_table(index="seed", columns="transform", values="gain")
        if len(by.columns):
            parts[SHORT[m]] = by.dropna().mean(axis=1).values
    claim = PROTOCOL["s1/augmentation_raises_invariance"]
    return {name: parts[name] if name in parts and len(parts[name]) else
            not_measurable(f"no transformation measured has {name} of models trained with and without it")
            for name in claim.parts}


def factor_changes(table: pd.DataFrame, S: Settings, measure_: str = "b_invariance") -> dict:
    """What each factor of :data:`invlib.papers.s.agreement.SOURCES` changes in one measure, per seed number and
    transformation: ``{factor: DataFrame seed x transformation}`` of "after" minus "before" (augmentation: the model
    trained with the transformation minus the one without).

    Example
    -------
    >>> ch = factor_changes(demo_table(), settings("smoke", transforms=("zoom",)))
    >>> list(ch), ch["augmentation"]["zoom"].round(2).tolist()
    (['data', 'augmentation', 'architecture', 'training'], [0.59, 0.59, 0.59])
    """
    out = {}
    for factor, (_, before, after) in SOURCES.items():
        cols = {}
        for t in S.transforms:
            a = per_seed(table, t, measure_, **(after or dict(variant=AUGMENTED[t], recipe="B1")))
            cols[t] = a - per_seed(table, t, measure_, **before)
        out[factor] = pd.DataFrame(cols).dropna(how="all").dropna(axis=1, how="all")
    return out


def most_effects(table: pd.DataFrame, S: Settings, measure_: str = "b_invariance") -> dict:
    """The effects of "augmentation moves the invariance the most": per other factor of
    :data:`invlib.papers.s.protocol.FACTORS`, ``|augmentation's change| - |the factor's change|`` in one measure
    (:func:`factor_changes`), averaged over the transformations, one value per seed number (those with both
    changes under every transformation), ``{"vs <factor>": values}``.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_moves_invariance_most"],
    ...             most_effects(demo_table(), settings("smoke", transforms=("zoom",))))  # 3 seeds of every model
    >>> [(name, e.n, e.verdict) for name, e in ev.parts]  # doctest: +NORMALIZE_WHITESPACE
    [('vs data', 3, 'reproduced'), ('vs architecture', 3, 'reproduced'), ('vs training', 3, 'reproduced')]
    >>> decide(PROTOCOL["s1/augmentation_moves_invariance_most"], most_effects(demo_table(b3_seeds=1), settings(
    ...     "smoke", transforms=("zoom",)))).parts[1][1].text()  # B3's one ResNet and one ViT: seed 0 alone
    '+0.48, 1 seed; > 0.05; needs >= 3 seeds'
    """
    changes = factor_changes(table, S, measure_)
    aug = changes.pop("augmentation").abs()
    parts = {}
    for factor in FACTORS:
        other = changes[factor].abs()
        both = aug.columns.intersection(other.columns)
        lead = (aug[both] - other[both]).dropna()
        parts[f"vs {factor}"] = lead.mean(axis=1).values if lead.size else not_measurable(
            f"no seed has both augmentation's and the {factor} factor's change measured")
    return parts


def augmentation_gains(table: pd.DataFrame, S: Settings) -> pd.DataFrame:
    """Per transformation and invariance measure: the models trained with the transformation minus those trained
    without augmentation (B1's recipe, seeds averaged), oriented (positive = more invariant), and whether positive."""
    rows = []
    for t in S.transforms:
        for m, (_, sign) in MEASURES.items():
            if sign == 0:
                continue
            aug = group_mean(table, t, m, variant=AUGMENTED[t], recipe="B1")
            none = group_mean(table, t, m, variant="none", recipe="B1")
            if np.isfinite(aug) and np.isfinite(none):
                rows.append(dict(transform=t, measure=m, augmented=aug, none=none, gain=sign * (aug - none)))
    out = pd.DataFrame(rows, columns=["transform", "measure", "augmented", "none", "gain"])
    out["raised"] = out["gain"] > 0
    return out


SEED_CLAIMS = ("s1/augmentation_raises_invariance", "s1/augmentation_moves_invariance_most")  # per seed, paired


def _means(parts: dict) -> str:
    """``name +x.xx`` for each part with values (their mean over seeds), for a claim's "ours"."""
    return ", ".join(f"{name} {number(np.mean(v), sign=True)}" for name, v in parts.items()
                     if isinstance(v, np.ndarray) and len(v)) or "—"


def report(run, S: Settings, table: pd.DataFrame, seconds: list[float] | None = None
           ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log the measures, record the chapter's claims and return ``(agreement, sources, facts)``: the agreement of
    every two measures over the trained models, per transformation and averaged over them (:func:`agreement_frame`),
    what each factor changes in B's relative invariance (:func:`invlib.papers.s.agreement.sources`) and the
    numbers the prose quotes. ``seconds``: what each seed's models took to train
    (:func:`invlib.papers.s.agreement.seed_seconds`), recorded as the replicates of ``seeds`` with the claims that
    rest on them (:data:`SEED_CLAIMS`; the agreement claims rest on the variants, which seeds do not add)."""
    models_ = trained(table)
    for r in table.itertuples():
        run.log(f"{r.transform}/{r.measure}/{r.model}", float(r.value))
    agree = agreement_frame(table, S, models_)
    src = sources(table, "b_invariance", list(S.transforms))

    gains = augmentation_gains(table, S)
    raised = raises_effects(table, S)
    run.claim(PROTOCOL["s1/augmentation_raises_invariance"], effects=raised,
              ours=f"mean gain over the transformations and {count(S.seeds, 'seed')}: {_means(raised)}")
    _agree_claim(run, "s1/b_and_c_rank_alike", table, S, "b_invariance", "c_inv_acc")
    _agree_claim(run, "s1/probe_finds_what_is_not_invariant", table, S, "a_probe", "b_invariance")
    _agree_claim(run, "s1/accuracy_tracks_invariance", table, S, "accuracy", "b_invariance")
    largest = src["largest"] if len(src) else pd.Series(dtype=object)
    leads = most_effects(table, S)
    run.claim(PROTOCOL["s1/augmentation_moves_invariance_most"], effects=leads,
              ours=f"augmentation's mean lead over the transformations and seeds: {_means(leads)}; the largest "
                   "factor per transformation: " + ("; ".join(f"{t}: {f} ({number(src.loc[t, f], sign=True)})"
                                                               for t, f in largest.items()) or "—"))
    if seconds:
        run.replicates("seeds", seconds, list(SEED_CLAIMS), note="a seed: the models these claims compare (B1's "
                       "recipe without augmentation, with each transformation and untrained, which costs nothing; "
                       "B7's at variation 0; B3's ResNet and ViT), their zoo checkpoints' training seconds")

    family = table.drop_duplicates("model")
    counts = dict(s1_models=len(family), s1_trained=len(models_), s1_seeds=S.seeds, s1_n_probe=S.n_probe,
                  s1_n_pairs=S.n_pairs, s1_n_fit=S.n_fit, s1_n_eval=S.n_eval,
                  s1_variants=variants(table)[models_].nunique(),
                  s1_variants_full=variants(table)[sorted(set(models_) & set(table.loc[table["measure"].isin(
                      ("a_probe", "c_inv_acc")), "model"]))].nunique(),
                  s1_augerino_runs=family["variant"].str.startswith("augerino").sum(),
                  s1_crop_models=(family["recipe"] == "D2").sum(),
                  s1_resamples=S.resamples)
    facts = dict({k: f"{v:,}" for k, v in counts.items()},  # text: the prose quotes every fact as Markdown
                 s1_seeds_text=count(S.seeds, "seed"), s1_levels=", ".join(map(str, S.levels[1:])),
                 s1_rotation=text(S.rotation, ".0f"),
                 s1_brightness=f"{S.brightness[0]:g}–{S.brightness[1]:g}",
                 s1_raised=f"{int(gains['raised'].sum())} of {len(gains)}", s1_augerino_reg=text(S.augerino_reg, "g"),
                 s1_not_raised="; ".join(f"{r.transform} under {SHORT[r.measure]} ({number(r.gain, sign=True)})"
                                         for r in gains[~gains["raised"]].itertuples()) or "none")
    facts.update(answers(run.claims, table, src, S))
    learned = []
    for t in (t for t in S.transforms if t in ("translation", "zoom")):
        a, n, r = (group_mean(table, t, "b_invariance", variant=v, recipe=rec) for v, rec in learned_vs(S))
        if np.isfinite(a):
            learned.append(f"{t}: {a:.2f} (none {n:.2f}, RandomResizedCrop {r:.2f})")
    facts["s1_augerino"] = "; ".join(learned) or "n/a"
    return agree, src, facts


def learned_vs(S: Settings) -> tuple:
    """``(variant, recipe)`` of the Augerino run whose learned range the chapter shows, beside the fixed ones (none,
    RandomResizedCrop).

    Example
    -------
    >>> learned_vs(settings("smoke"))
    (('augerino shift+zoom 0.1', 'B6'), ('none', 'B1'), ('standard', 'B1'))
    """
    return (augerino_variant(AUGERINO_GROUP, S.augerino_reg), "B6"), ("none", "B1"), ("standard", "B1")


def sources_table(src: pd.DataFrame) -> pd.DataFrame:
    """The sources table with its factors named (:data:`invlib.papers.s.agreement.SOURCES`)."""
    return src.rename(columns={k: f"{k}: {v[0]}" for k, v in SOURCES.items()})


def demo_table(seed: int = 0, seeds: int = 3, b3_seeds: int | None = None, transforms=("zoom",)) -> pd.DataFrame:
    """A made-up table in the shape of :func:`invlib.papers.s.agreement.measure` for ``transforms``: B1's six
    variants, B7's models and B3's ResNet and ViT with ``seeds`` seeds each (B3's: ``b3_seeds``, default ``seeds``),
    B6's Augerino and an untrained model (10 trained variants), every measure a monotone function of one invariance,
    which augmenting with scale raises the most (for the examples and tests).

    Example
    -------
    >>> t = demo_table()
    >>> sorted(t["measure"].unique())[:2], len(trained(t)), variants(t)[trained(t)].nunique()
    (['a_probe', 'accuracy'], 28, 10)
    """
    rng = np.random.default_rng(seed)
    levels = dict(none=0.3, standard=0.5, translation=0.4, scale=0.8, rotation=0.33, brightness=0.36)
    models_ = [(v, k, "B1", "ResNet", inv) for v, inv in levels.items() for k in range(seeds)]
    models_ += [("none", k, "B7", "ResNet", 0.25) for k in range(seeds)]
    models_ += [("none", k, "B3", arch, inv) for k in range(seeds if b3_seeds is None else b3_seeds)
                for arch, inv in (("ResNet", 0.35), ("ViT", 0.45))]
    models_ += [(augerino_variant(AUGERINO_GROUP, 0.1), 0, "B6", "ResNet", 0.6)]
    models_ += [("untrained", k, "B1", "ResNet", 0.5) for k in range(seeds)]
    rows = []
    for j, transform in enumerate(transforms):
        for i, (variant, k, recipe, arch, inv) in enumerate(models_):
            inv += 0.01 * i + 0.02 * j
            name = f"{variant} {recipe} {arch} {k}"
            for m, v in dict(accuracy=40 + 50 * inv, a_probe=1 - 0.5 * inv, b_invariance=inv,
                             b_alignment=rng.random(), c_inv_acc=30 + 60 * inv, c_inv_l2=1 - inv,
                             c_eq_acc=50 + 10 * rng.random()).items():
                rows.append(dict(model=name, variant=variant, seed=k, arch=arch, recipe=recipe, transform=transform,
                                 variation=0.0 if recipe == "B7" else 1.0, measure=m, value=float(v)))
    return pd.DataFrame(rows)


ANSWERS = {  # claim -> what a decided verdict answers (for "partly" and "not reproduced", why follows)
    "s1/augmentation_raises_invariance": {
        REPRODUCED: "Yes, under every measure, on average over the transformations", PARTLY: "In part",
        NOT_REPRODUCED: "No"},
    "s1/b_and_c_rank_alike": {
        REPRODUCED: "Yes: B's relative invariance, forward passes only, ranks the models as C's invariance accuracy "
                    "does, so the cheap measure can stand for the expensive one",
        NOT_REPRODUCED: "No: report both, or the one whose question you ask (B: does the embedding move? C: does the "
                        "rest of the network still classify it?)"},
    "s1/probe_finds_what_is_not_invariant": {
        REPRODUCED: "Yes: a layer a probe can read the transformation from tends not to be invariant to it",
        NOT_REPRODUCED: "No: whether a probe can rank a transformation is another question than whether the "
                        "embedding moves"},
    "s1/accuracy_tracks_invariance": {
        REPRODUCED: "Yes: the robustness check a practitioner runs first ranks the models as B's invariance does",
        NOT_REPRODUCED: "No: robustness under a transformation and the embedding's invariance rank the models "
                        "differently"},
    "s1/augmentation_moves_invariance_most": {
        REPRODUCED: "Yes: on average over the transformations, augmentation moved B's relative invariance more than "
                    "the data, the architecture and training did", PARTLY: "In part", NOT_REPRODUCED: "No"},
}


def _names_list(names: list[str], most: int = 3) -> str:
    names = list(names)
    shown = names[:most] + ([f"{len(names) - most} more"] if len(names) > most else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def why_open(c: dict, table: pd.DataFrame | None = None) -> str:
    """Why this run cannot decide a recorded claim, in plain words: too few seeds to judge a difference by, too few
    variants to resample, a measure that is the same for every model, or intervals that reach both sides of the
    smallest effect that matters.

    Example
    -------
    >>> ev = dict(unit="seed", n=1, n_min=3, parts={"B invariance": dict(verdict="inconclusive at this budget", n=1,
    ...                                                                  n_min=3, unit="seed")})
    >>> why_open(dict(id="s1/augmentation_raises_invariance", evidence=ev))
    'with 1 seed per variant there is no spread between seeds to judge a difference by; at least 3 are needed'
    >>> why_open(dict(id="s1/b_and_c_rank_alike", evidence=dict(verdict="inconclusive at this budget", n=12,
    ...                                                          n_min=8, estimate=0.55, lo=0.2, hi=0.8)))
    'over 12 variants the interval of rho, +0.20 to +0.80, reaches both sides of 0.5'
    """
    ev = c.get("evidence") or {}
    parts = {k: p for k, p in (ev.get("parts") or {"": ev}).items() if p.get("verdict", INCONCLUSIVE) == INCONCLUSIVE}
    few = [p for p in parts.values() if p.get("n", 0) < p.get("n_min", 0)]
    if few and few[0].get("unit") == "seed":
        n = few[0]["n"]
        return (f"with {n} seed{'s' * (n != 1)} per variant there is no spread between seeds to judge a difference "
                f"by; at least {few[0]['n_min']} are needed")
    if few:
        return f"it needs at least {few[0]['n_min']} variants, and this run has {few[0]['n']}"
    if c.get("id") in PAIRS:
        p = parts.get("") or {}
        if p.get("estimate") is None or not np.isfinite(p["estimate"]):
            return "under every transformation one of the two measures is the same for every model: nothing to rank"
        return (f"over {p.get('n')} variants the interval of rho, {p['lo']:+.2f} to {p['hi']:+.2f}, reaches both "
                "sides of 0.5")
    wide_ = [k for k, p in parts.items() if p.get("lo") is not None and p.get("hi") is not None]
    if wide_:
        n = parts[wide_[0]].get("n")
        return (f"the interval{'s' * (len(wide_) > 1)} over {n} seeds of {_names_list(wide_)} still "
                f"{'reach' if len(wide_) > 1 else 'reaches'} across the smallest effect that matters")
    return "its parts are not yet decided"


def _answer(c: dict, table: pd.DataFrame) -> str:
    v, ev = c["verdict"], c.get("evidence") or {}
    if v == INCONCLUSIVE:
        return f"Not decided: {why_open(c, table)}"
    if v == NOT_MEASURABLE:
        return f"Not measurable at this profile: {ev.get('reason') or 'the models it needs are not in this run'}"
    said = ANSWERS.get(c["id"], {}).get(v, v)
    detail = pages_why(ev) if v in (PARTLY, NOT_REPRODUCED) else ""
    return f"{said} ({detail})" if detail else said


def _rhos(cid: str, c: dict | None, table: pd.DataFrame, transforms) -> str:
    """Claim ``cid``'s rho averaged over the transformations, its interval and variants, and each transformation's."""
    ev = (c or {}).get("evidence") or {}
    a, b = PAIRS[cid]
    models_ = trained(table)
    used = ranked_transforms(table, a, b, models_, transforms)
    if ev.get("estimate") is None or not used:
        return "not measured (no transformation ranks the models by both measures)"
    per = ", ".join(f"{t} {number(rho_at(table, t, a, b, models_), sign=True)}" for t in used)
    return (f"{number(ev['estimate'], sign=True)} averaged over {_names_list(used, most=4)} (95 % interval "
            f"{number(ev['lo'], sign=True)} to {number(ev['hi'], sign=True)}, over {ev['n']} variants); per "
            f"transformation: {per}")


def answers(claims: dict, table: pd.DataFrame, src: pd.DataFrame, S: Settings | None = None) -> dict:
    """Each question's answer for the chapter's last section, from the recorded claims (``{claim id: record}``):
    ``s1_answer_<claim>`` (what the verdict answers, or why this run cannot decide it, :func:`why_open`),
    ``s1_rhos_<claim>`` (the rank correlation of questions 2 to 4, averaged and per transformation of
    ``S.transforms``, default every one in ``table``), ``s1_largest`` (the factor that moved B's relative invariance
    most, per transformation) and ``s1_decided`` (how many questions this run decides); all text.

    Example
    -------
    >>> from invlib import results
    >>> run = results.Run("smoke", name="demo")
    >>> t = demo_table()
    >>> _, src, facts = report(run, settings("smoke", transforms=("zoom",)), t)
    >>> facts["s1_answer_accuracy_tracks_invariance"].split(":")[0], facts["s1_rhos_accuracy_tracks_invariance"]
    ('Yes', '+1 averaged over zoom (95 % interval +1 to +1, over 10 variants); per transformation: zoom +1')
    >>> facts["s1_largest"], facts["s1_decided"]
    ('zoom: augmentation (+0.59)', 'all five questions')
    """
    transforms = list(S.transforms) if S is not None else list(dict.fromkeys(table["transform"]))
    out = {}
    for cid, c in claims.items():
        short = cid.split("/")[1]
        out[f"s1_answer_{short}"] = _answer(c, table)
        if cid in PAIRS:
            out[f"s1_rhos_{short}"] = _rhos(cid, c, table, transforms)
    bits = []
    for t in src.index:
        row = src.loc[t, list(SOURCES)].astype(float)
        moved = row.abs().max() > 1e-6
        bits.append(f"{t}: {src.loc[t, 'largest']} ({row[src.loc[t, 'largest']]:+.2f})" if moved else
                    f"{t}: none (no factor changed it)")
    out["s1_largest"] = "; ".join(bits) or "n/a"
    decided = [c for c in claims.values() if c["verdict"] in (REPRODUCED, NOT_REPRODUCED, PARTLY)]
    say = lambda k: ("none", "one", "two", "three", "four", "five", "six")[k] if k < 7 else f"{k:,}"  # noqa: E731
    n = len(claims)
    out["s1_decided"] = ("none of the " if not decided else "all " if len(decided) == n else
                         f"{say(len(decided))} of the ") + f"{say(n)} question{'s' * (n != 1)}"
    return out
