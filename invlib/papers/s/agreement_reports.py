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
>>> run.claims["s1/augmentation_moves_invariance_most"]["evidence"]["parts"]["zoom: vs architecture"]["n"]
3
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...pages import number
from ...pages import why as pages_why
from ...results import (
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    Interval,
    not_measurable,
    rho_interval,
    text,
)
from .agreement import (
    AUGMENTED,
    MEASURES,
    SOURCES,
    TRANSFORMS,
    Settings,
    agreement,
    group_mean,
    settings,  # noqa: F401  (the examples use it)
    sources,
    wide,
)
from .protocol import FAMILY, N_MIN, PROTOCOL  # noqa: F401  (N_MIN: read from here by the tests)

SHORT = dict(accuracy="accuracy", a_probe="A probe", b_invariance="B invariance", b_alignment="B alignment",
             c_inv_acc="C inv. acc.", c_inv_l2="C inv. L2", c_eq_acc="C eq. acc.")  # also the parts' names


def trained(table: pd.DataFrame) -> list[str]:
    """The models that were trained (the untrained ones score at chance under every accuracy-based measure, so
    the rank correlations leave them out; they are measured by B's sweep only, for claim 5's training factor)."""
    return list(dict.fromkeys(table.loc[table["variant"] != "untrained", "model"]))


# ------------------------------------------------------------------------------ the figures, one question each
COLOURS = {t: plt.get_cmap("tab10")(k) for k, t in enumerate(TRANSFORMS)}  # a transformation's colour everywhere
ORIENTED = {1: "↑ more invariant", -1: "↑ more invariant (axis reversed)", 0: "↑ more equivariant"}
VARIANT_WORDS = {"none": "no augmentation", "standard": "RandomResizedCrop", "translation": "translation",
                 "scale": "zoom", "rotation": "rotation", "brightness": "brightness", "augerino": "Augerino (learned)",
                 "untrained": "untrained"}
PAIRS = {"s1/b_and_c_rank_alike": ("b_invariance", "c_inv_acc"),  # claim -> (x, y) of its figure
         "s1/probe_finds_what_is_not_invariant": ("b_invariance", "a_probe"),
         "s1/accuracy_tracks_invariance": ("b_invariance", "accuracy")}
WORDS = {"accuracy": "the accuracy under the transformation", "a_probe": "A's probe accuracy",
         "b_invariance": "B's relative invariance", "b_alignment": "B's equivariance alignment",
         "c_inv_acc": "C's invariance accuracy", "c_inv_l2": "C's invariance L2 distance",
         "c_eq_acc": "C's equivariance accuracy"}  # each measure in a sentence
GAIN_LABELS = {"accuracy": "gain (points)", "a_probe": "fall in probe accuracy", "b_invariance": "gain",
               "c_inv_acc": "gain (points)", "c_inv_l2": "fall in L2 distance"}


def group_of(table: pd.DataFrame) -> pd.Series:
    """Each model's group in the figures' legends, in words: the recipe and what it was trained with (its seeds
    together).

    Example
    -------
    >>> g = group_of(demo_table())
    >>> g["standard B1 ResNet 0"], g["none B7 ResNet 1"], g["none B3 ViT 0"]
    ('B1: RandomResizedCrop', 'B7: no augmentation, variation 0', 'B3 ViT: no augmentation')
    """
    first = table.drop_duplicates("model").set_index("model")

    def words(r) -> str:
        what = VARIANT_WORDS.get(r["variant"], r["variant"])
        if r["recipe"] == "B3":
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
    measure, a transformation per row: each seed's gain of the augmented model over the one without augmentation
    (small dots) and their mean (large), oriented (right = more invariant); the grey line is no change, the dashed
    one the smallest gain that matters (the claim's boundary).

    Example
    -------
    >>> fig = plot_gains(demo_table(), settings("smoke", transforms=("zoom",)))
    >>> [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()][:2]
    ['accuracy', 'A probe']
    """
    g = gains_per_seed(table, S)
    ms = [m for m in MEASURES if m in set(g["measure"])]
    claim = PROTOCOL["s1/augmentation_raises_invariance"]
    cols = min(3, max(len(ms), 1))
    rows = -(-len(ms) // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(2.8 * cols + 0.3, 0.45 * len(S.transforms) * rows
                                                                 + 1.2 * rows + 0.3))
    for ax, m in zip(axes.flat, ms):
        part = g[g["measure"] == m]
        ts = [t for t in S.transforms if t in set(part["transform"])]
        for i, t in enumerate(ts):
            v = part.loc[part["transform"] == t, "gain"].values
            ax.plot(v, np.full(len(v), i), "o", ms=3.5, color=COLOURS[t], alpha=0.55)
            ax.plot([v.mean()], [i], "D", ms=7, color=COLOURS[t], mec="black", mew=0.6)
        ax.axvline(0, color="0.5", lw=1)
        ax.axvline(claim.parts[SHORT[m]].smallest, color="0.3", lw=1, ls="--")
        ax.set_yticks(range(len(ts)), ts, fontsize=8)
        ax.set_ylim(-0.6, len(ts) - 0.4)
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
    """Questions 2 to 4: do two measures rank the models alike? One panel per transformation: each trained model a
    point, B's relative invariance (x, right = more invariant) against the other measure of claim ``cid``
    (:data:`PAIRS`; up = more invariant, its axis reversed where a lower value is the more invariant one), coloured
    by its group (:func:`group_of`); the title gives the oriented Spearman's rho and its interval over variants from
    the recorded claim (``claims``: :attr:`invlib.results.Run.claims`).

    Example
    -------
    >>> from invlib import results
    >>> run = results.Run("smoke", name="demo")
    >>> _ = report(run, settings("smoke", transforms=("zoom",)), demo_table())
    >>> fig = plot_pair(demo_table(), settings("smoke", transforms=("zoom",)), "s1/accuracy_tracks_invariance",
    ...                 run.claims)
    >>> fig.axes[0].get_title().splitlines()[0]
    'zoom: rho +1.00'
    """
    x_m, y_m = PAIRS[cid]
    parts = (claims.get(cid, {}).get("evidence") or {}).get("parts") or {}
    groups = group_of(table)
    names = list(dict.fromkeys(groups[trained(table)]))
    colours = {n: plt.get_cmap("tab10")(k % 10) for k, n in enumerate(names)}
    ts = list(S.transforms)
    fig, axes = plt.subplots(1, len(ts), squeeze=False, figsize=(2.0 * len(ts) + 0.7, 3.2 + 0.17 * -(-len(names) // 4)))
    first = True
    for ax, t in zip(axes[0], ts):
        w = wide(table, t)
        w = w.loc[[m for m in w.index if m in set(trained(table))]]
        if x_m not in w.columns or y_m not in w.columns:
            ax.text(0.5, 0.5, f"{MEASURES[y_m if y_m not in w.columns else x_m][0].split(' (')[0]}\nis not measured "
                    f"for {t}", ha="center", va="center", fontsize=8, transform=ax.transAxes, color="0.35")
            ax.set_xticks([]), ax.set_yticks([]), ax.set_title(t, fontsize=9)
            continue
        for name in names:
            keep = [m for m in w.index if groups[m] == name]
            ax.plot(w.loc[keep, x_m], w.loc[keep, y_m], "o", ms=5, color=colours[name], label=name, alpha=0.85)
        p = parts.get(t) or {}
        est, lo, hi = (p.get(k) for k in ("estimate", "lo", "hi"))
        rho = (f"rho {est:+.2f}" + (f"\n({lo:+.2f} to {hi:+.2f})" if lo is not None and hi is not None else "")
               if est is not None else "no rho:\none measure is constant")
        ax.set_title(f"{t}: {rho}", fontsize=9)
        ax.set_xlabel("B: relative invariance →", fontsize=8)
        if first:
            _orient_y(ax, y_m, MEASURES[y_m][0])
        elif MEASURES[y_m][1] < 0:
            ax.invert_yaxis()
        first = False
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(plt.MaxNLocator(4))
        ax.grid(alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colours[n], ms=5) for n in names]
    fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.045 * -(-len(names) // 4), 1, 1))
    return fig


def agreement_table(agree: pd.DataFrame) -> pd.DataFrame:
    """The agreement of every two measures as a short table: a pair of measures per row, a transformation per
    column, the oriented Spearman's rho (permutation p-value in brackets).

    Example
    -------
    >>> a = pd.DataFrame(dict(transform=["zoom", "rotation"], a="accuracy", b="b_invariance", rho=[0.9, 0.2],
    ...                       p=[0.001, 0.4], n=10))
    >>> agreement_table(a).to_dict(orient="records")
    [{'zoom': '+0.9 (p 0.001)', 'rotation': '+0.2 (p 0.4)'}]
    """
    a = agree.assign(pair=[f"{SHORT[x]} – {SHORT[y]}" for x, y in zip(agree["a"], agree["b"])],
                     cell=[f"{number(r, sign=True)} (p {number(p)})" if np.isfinite(r) else "—"
                           for r, p in zip(agree["rho"], agree["p"])])
    out = a.pivot_table(index="pair", columns="transform", values="cell", aggfunc="first", sort=False)
    out = out.reindex(index=list(dict.fromkeys(a["pair"])), columns=list(dict.fromkeys(a["transform"])))
    out.index.name, out.columns.name = "measures", None
    return out.fillna("—")


def plot_agreement(agree: pd.DataFrame, S: Settings):
    """Do all the measures agree? Every pair of measures (a row; the three the claims test in bold), its oriented
    Spearman's rho across the trained models for each transformation (a colour; filled where the permutation
    p-value is below 0.05): right of 0, the two measures call the same models invariant; the dashed line is the
    claims' 0.5.

    Example
    -------
    >>> a = pd.DataFrame(dict(transform="zoom", a=["accuracy", "a_probe"], b="b_invariance", rho=[0.9, -0.2],
    ...                       p=[0.001, 0.4], n=10))
    >>> fig = plot_agreement(a, settings("smoke", transforms=("zoom",)))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['accuracy – B invariance', 'A probe – B invariance']
    """
    order = list(MEASURES).index
    pairs = sorted(dict.fromkeys(zip(agree["a"], agree["b"])), key=lambda p: (order(p[0]), order(p[1])))
    claimed = {tuple(sorted(p, key=list(MEASURES).index)) for p in PAIRS.values()}
    ts = [t for t in S.transforms if t in set(agree["transform"])]
    fig, ax = plt.subplots(figsize=(7.2, 0.27 * len(pairs) + 1.3))
    for k, t in enumerate(ts):
        part = agree[agree["transform"] == t].set_index(["a", "b"])
        for i, pair in enumerate(pairs):
            if pair in part.index and np.isfinite(part.loc[pair, "rho"]):
                r, p = part.loc[pair, ["rho", "p"]]
                y = i + (k - (len(ts) - 1) / 2) * 0.16
                ax.plot(r, y, "o", ms=5.5, color=COLOURS[t], mfc=COLOURS[t] if p < 0.05 else "white", mew=1.3)
    ax.axvline(0, color="0.5", lw=1)
    ax.axvline(0.5, color="0.3", lw=1, ls="--")
    ax.set_yticks(range(len(pairs)), [f"{SHORT[a]} – {SHORT[b]}" for a, b in pairs], fontsize=8)
    for label, pair in zip(ax.get_yticklabels(), pairs):
        if tuple(sorted(pair, key=list(MEASURES).index)) in claimed:
            label.set_fontweight("bold")
    ax.set_ylim(len(pairs) - 0.5, -0.5)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman's rho, oriented (positive: both call the same models invariant)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", ls="", color=COLOURS[t], ms=5.5) for t in ts]
    handles.append(plt.Line2D([], [], marker="o", ls="", color="0.3", mfc="white", ms=5.5))
    ax.legend(handles, [*ts, "hollow: p ≥ 0.05"], fontsize=8, loc="lower center", bbox_to_anchor=(0.45, 1.0),
              ncol=len(ts) + 1, frameon=False)
    fig.tight_layout()
    return fig


def plot_sources(src: pd.DataFrame):
    """Question 5: where does invariance come from? What each factor (a row) changes in B's relative invariance to
    each transformation (a colour), mean over seeds: after minus before (:data:`SOURCES`).

    Example
    -------
    >>> t = demo_table()
    >>> fig = plot_sources(sources(t, "b_invariance", ["zoom"]))
    >>> len(fig.axes[0].get_yticklabels())
    4
    """
    factors = list(SOURCES)
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * len(factors) + 1.2))
    for k, t in enumerate(src.index):
        y = np.arange(len(factors)) + (k - (len(src) - 1) / 2) * 0.14
        ax.plot(src.loc[t, factors].astype(float).values, y, "o", ms=7, color=COLOURS.get(t, "0.3"), label=t)
    ax.axvline(0, color="0.5", lw=1)
    ax.set_yticks(range(len(factors)), [f"{f}\n({SOURCES[f][0]})" for f in factors], fontsize=8)
    ax.set_ylim(len(factors) - 0.5, -0.5)
    ax.set_xlabel("change in B's relative invariance (→ the factor makes the model more invariant)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(src), loc="lower center", bbox_to_anchor=(0.4, 1.0), frameon=False)
    fig.tight_layout()
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


def variants(table: pd.DataFrame) -> pd.Series:
    """Each model's variant: what it shares with its seed-mates (variant, recipe, architecture, data variation), the
    cluster the agreement intervals resample whole.

    Example
    -------
    >>> v = variants(demo_table())
    >>> v["none B1 ResNet 0"] == v["none B1 ResNet 1"], v["none B1 ResNet 0"] == v["none B7 ResNet 0"]
    (True, False)
    """
    first = table.drop_duplicates("model").set_index("model")
    return first["variant"] + " | " + first["recipe"] + " | " + first["arch"] + " | " + first["variation"].astype(str)


def rank_agreement(table: pd.DataFrame, transform: str, a: str, b: str, models_: list[str],
                   level: float = 0.95) -> Interval | None:
    """Oriented Spearman's rho between measures ``a`` and ``b`` across ``models_`` for one transformation, with a
    bootstrap interval over whole variants (:func:`variants`, :func:`invlib.results.rho_interval`) at ``level``;
    None when the transformation lacks one of the measures.

    Example
    -------
    >>> iv = rank_agreement(demo_table(), "zoom", "accuracy", "b_invariance", trained(demo_table()))
    >>> round(iv.estimate, 2), iv.n, iv.method  # 24 models, 10 variants
    (1.0, 10, 'cluster bootstrap')
    """
    w = wide(table, transform)
    if a not in w.columns or b not in w.columns:
        return None
    ok = w.loc[[m for m in w.index if m in models_], [a, b]].dropna()
    sign = (MEASURES[a][1] or 1) * (MEASURES[b][1] or 1)
    return rho_interval(ok[a].values, sign * ok[b].values, level=level, groups=variants(table)[ok.index].values)


def agreement_effects(table: pd.DataFrame, transforms, a: str, b: str, models_: list[str]):
    """The effects of "measures ``a`` and ``b`` rank the models alike": per transformation that has both, the
    oriented rho with its interval over variants at ``1 - FAMILY / k`` (Bonferroni over the ``k`` transformations),
    ``{transformation: Interval}``; not measurable where no transformation has both.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> t, claim = demo_table(), PROTOCOL["s1/accuracy_tracks_invariance"]
    >>> ev = decide(claim, agreement_effects(t, ["zoom"], "accuracy", "b_invariance", trained(t)))
    >>> ev.verdict, [name for name, _ in ev.parts]  # every measure ranks the 10 variants alike
    ('reproduced', ['zoom'])
    >>> decide(claim, agreement_effects(demo_table(seeds=1).query("recipe == 'B1'"), ["zoom"], "accuracy",
    ...                                 "b_invariance", trained(t))).verdict  # 6 variants: too few to resample
    'inconclusive at this budget'
    >>> no_c = t[t["measure"] != "c_inv_acc"]  # as C has no zoom
    >>> decide(claim, agreement_effects(no_c, ["zoom"], "accuracy", "c_inv_acc", trained(t))).verdict
    'not measurable at this profile'
    """
    ts = [t for t in transforms if {a, b} <= set(table.loc[table["transform"] == t, "measure"])]
    if not ts:
        return not_measurable(f"no transformation measured has both {MEASURES[a][0]} and {MEASURES[b][0]}")
    return {t: rank_agreement(table, t, a, b, models_, 1 - FAMILY / len(ts)) for t in ts}


def _agree_claim(run, cid: str, table: pd.DataFrame, S: Settings, a: str, b: str) -> str:
    models_ = trained(table)
    effects = agreement_effects(table, S.transforms, a, b, models_)
    rho = lambda e: (f"rho {e.estimate:+.2f} [{e.lo:+.2f}, {e.hi:+.2f}]" if np.isfinite(e.lo) else
                     f"rho {e.estimate:+.2f}, no interval" if np.isfinite(e.estimate) else "no rho (a measure is "
                     "constant over the models)")
    ours = "—"
    if isinstance(effects, dict):
        ours = "; ".join(f"{t}: {rho(e)}" for t, e in effects.items())
        ours = f"{ours} ({len(models_)} models in {variants(table)[models_].nunique()} variants)"
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


def raises_effects(table: pd.DataFrame, S: Settings):
    """The effects of "augmenting with a transformation raises the invariance to it under every measure": per
    invariance measure (named as in :data:`SHORT`) and transformation, the oriented gain of the augmented model over
    the one without augmentation, one value per seed (B1's recipe trains both from each seed), ``{measure:
    {transformation: values}}``; a measure no transformation has is not measurable.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_raises_invariance"],
    ...             raises_effects(demo_table(), settings("smoke", transforms=("zoom",))))
    >>> ev.verdict, len(ev.parts)  # 3 seeds, gains far above their spread
    ('reproduced', 5)
    """
    parts = {}
    for m, (_, sign) in MEASURES.items():
        for t in S.transforms:
            aug = per_seed(table, t, m, variant=AUGMENTED[t], recipe="B1")
            none = per_seed(table, t, m, variant="none", recipe="B1")
            seeds = aug.index.intersection(none.index)
            if sign and len(seeds):
                parts.setdefault(SHORT[m], {})[t] = sign * (aug[seeds] - none[seeds]).values
    if not parts:
        return not_measurable("no transformation has models trained with and without its augmentation")
    claim = PROTOCOL["s1/augmentation_raises_invariance"]
    return {name: parts.get(name) or not_measurable(f"no transformation measured has {name}") for name in claim.parts}


def most_effects(table: pd.DataFrame, S: Settings, measure_: str = "b_invariance"):
    """The effects of "augmentation moves the invariance the most": per (transformation, other factor of
    :data:`invlib.papers.s.agreement.SOURCES`), ``|augmentation's change| - |the factor's change|`` in one measure,
    one value per seed number, ``{"<transformation>: vs <factor>": values}``.

    Example
    -------
    >>> from invlib.protocol import decide
    >>> ev = decide(PROTOCOL["s1/augmentation_moves_invariance_most"],
    ...             most_effects(demo_table(), settings("smoke", transforms=("zoom",))))  # 3 seeds of every model
    >>> [(name, e.n, e.verdict) for name, e in ev.parts]  # doctest: +NORMALIZE_WHITESPACE
    [('zoom: vs data', 3, 'reproduced'), ('zoom: vs architecture', 3, 'reproduced'),
     ('zoom: vs training', 3, 'reproduced')]
    >>> decide(PROTOCOL["s1/augmentation_moves_invariance_most"], most_effects(demo_table(b3_seeds=1), settings(
    ...     "smoke", transforms=("zoom",)))).parts[1][1].text()  # B3's one ResNet and one ViT: seed 0 alone
    '+0.48, 1 seed; > 0.05; needs >= 3 seeds'
    """
    parts = {}
    for t in S.transforms:
        changes = {}
        for factor, (_, before, after) in SOURCES.items():
            after = per_seed(table, t, measure_, **(after or dict(variant=AUGMENTED[t], recipe="B1")))
            before = per_seed(table, t, measure_, **before)
            changes[factor] = (after - before).dropna()
        aug = changes.pop("augmentation")
        for factor, change in changes.items():
            seeds = aug.index.intersection(change.index)
            if len(seeds):
                parts[f"{t}: vs {factor}"] = aug[seeds].abs().values - change[seeds].abs().values
    return parts or not_measurable("no transformation has augmentation and another factor measured")


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


def report(run, S: Settings, table: pd.DataFrame, seconds: list[float] | None = None
           ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log the measures, record the chapter's claims and return ``(agreement, sources, facts)``: the agreement of
    every two measures per transformation over the trained models (:func:`invlib.papers.s.agreement.agreement`),
    what each factor changes in B's relative invariance (:func:`invlib.papers.s.agreement.sources`) and the
    numbers the prose quotes. ``seconds``: what each seed's models took to train
    (:func:`invlib.papers.s.agreement.seed_seconds`), recorded as the replicates of ``seeds`` with the claims that
    rest on them (:data:`SEED_CLAIMS`; the agreement claims rest on the variants, which seeds do not add)."""
    models_ = trained(table)
    for r in table.itertuples():
        run.log(f"{r.transform}/{r.measure}/{r.model}", float(r.value))
    agree = pd.concat([agreement(S, table, t, models_) for t in S.transforms], ignore_index=True)
    src = sources(table, "b_invariance", list(S.transforms))

    gains = augmentation_gains(table, S)
    by_t = gains.groupby("transform", sort=False)["raised"].agg(["sum", "count"])
    run.claim(PROTOCOL["s1/augmentation_raises_invariance"], effects=raises_effects(table, S),
              ours="; ".join(f"{t}: higher on average under {int(r['sum'])} of {int(r['count'])} measures"
                             for t, r in by_t.iterrows()) + f" ({S.seeds} seed(s) per variant)")
    _agree_claim(run, "s1/b_and_c_rank_alike", table, S, "b_invariance", "c_inv_acc")
    _agree_claim(run, "s1/probe_finds_what_is_not_invariant", table, S, "a_probe", "b_invariance")
    _agree_claim(run, "s1/accuracy_tracks_invariance", table, S, "accuracy", "b_invariance")
    largest = src["largest"] if len(src) else pd.Series(dtype=object)
    run.claim(PROTOCOL["s1/augmentation_moves_invariance_most"], effects=most_effects(table, S),
              ours="; ".join(f"{t}: {f} ({src.loc[t, f]:+.3f})" for t, f in largest.items()) or "—")
    if seconds:
        run.replicates("seeds", seconds, list(SEED_CLAIMS), note="a seed: its B1-recipe models (each variant; the "
                       "untrained one costs nothing), B7's at variation 0 and B3's ResNet and ViT (their zoo "
                       "checkpoints' training seconds)")

    counts = dict(s1_models=len(set(table["model"])), s1_trained=len(models_), s1_seeds=S.seeds, s1_n_probe=S.n_probe,
                  s1_n_pairs=S.n_pairs, s1_n_fit=S.n_fit, s1_n_eval=S.n_eval,
                  s1_variants=variants(table)[models_].nunique())
    facts = dict({k: f"{v:,}" for k, v in counts.items()},  # text: the prose quotes every fact as Markdown
                 s1_levels=", ".join(map(str, S.levels[1:])), s1_rotation=text(S.rotation, ".0f"),
                 s1_brightness=f"{S.brightness[0]:g}–{S.brightness[1]:g}",
                 s1_raised=f"{int(gains['raised'].sum())} of {len(gains)}", s1_augerino_reg=text(S.augerino_reg, "g"),
                 s1_not_raised="; ".join(f"{r.transform} under {SHORT[r.measure]} ({number(r.gain, sign=True)})"
                                         for r in gains[~gains["raised"]].itertuples()) or "none")
    facts.update(answers(run.claims, table, src))
    learned = []
    for t in (t for t in S.transforms if t in ("translation", "zoom")):
        a, n, r = (group_mean(table, t, "b_invariance", variant=v, recipe=rec) for v, rec in LEARNED_VS)
        if np.isfinite(a):
            learned.append(f"{t}: {a:.2f} (none {n:.2f}, RandomResizedCrop {r:.2f})")
    facts["s1_augerino"] = "; ".join(learned) or "n/a"
    return agree, src, facts


LEARNED_VS = (("augerino", "B6"), ("none", "B1"), ("standard", "B1"))  # the learned range beside the fixed ones


def sources_table(src: pd.DataFrame) -> pd.DataFrame:
    """The sources table with its factors named (:data:`invlib.papers.s.agreement.SOURCES`)."""
    return src.rename(columns={k: f"{k}: {v[0]}" for k, v in SOURCES.items()})


def demo_table(seed: int = 0, seeds: int = 3, b3_seeds: int | None = None) -> pd.DataFrame:
    """A made-up table in the shape of :func:`invlib.papers.s.agreement.measure` for ``zoom``: B1's six variants,
    B7's models and B3's ResNet and ViT with ``seeds`` seeds each (B3's: ``b3_seeds``, default ``seeds``), B6's
    Augerino and an untrained model (10 trained variants), every measure a monotone function of one invariance,
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
    models_ += [("augerino", 0, "B6", "ResNet", 0.6)]
    models_ += [("untrained", k, "B1", "ResNet", 0.5) for k in range(seeds)]
    rows = []
    for i, (variant, k, recipe, arch, inv) in enumerate(models_):
        inv += 0.01 * i
        name = f"{variant} {recipe} {arch} {k}"
        for m, v in dict(accuracy=40 + 50 * inv, a_probe=1 - 0.5 * inv, b_invariance=inv, b_alignment=rng.random(),
                         c_inv_acc=30 + 60 * inv, c_inv_l2=1 - inv, c_eq_acc=50 + 10 * rng.random()).items():
            rows.append(dict(model=name, variant=variant, seed=k, arch=arch, variation=0.0 if recipe == "B7" else 1.0,
                             recipe=recipe, transform="zoom", measure=m, value=float(v)))
    return pd.DataFrame(rows)


ANSWERS = {  # claim -> what a decided verdict answers (for "partly" and "not reproduced", why follows)
    "s1/augmentation_raises_invariance": {
        REPRODUCED: "Yes, under every measure and for every transformation", PARTLY: "In part", NOT_REPRODUCED: "No"},
    "s1/b_and_c_rank_alike": {
        REPRODUCED: "Yes: B's relative invariance, forward passes only, ranks the models as C's invariance accuracy "
                    "does, so the cheap measure can stand for the expensive one",
        PARTLY: "For some transformations only: report both, or the one whose question you ask", NOT_REPRODUCED:
        "No: report both, or the one whose question you ask (B: does the embedding move? C: does the rest of the "
        "network still classify it?)"},
    "s1/probe_finds_what_is_not_invariant": {
        REPRODUCED: "Yes: a layer a probe can read the transformation from tends not to be invariant to it",
        PARTLY: "For some transformations only", NOT_REPRODUCED: "No: whether a probe can rank a transformation is "
                                                                  "another question than whether the embedding moves"},
    "s1/accuracy_tracks_invariance": {
        REPRODUCED: "Yes: the robustness check a practitioner runs first ranks the models as B's invariance does",
        PARTLY: "For some transformations only: robustness and the embedding's invariance are related, not "
                "interchangeable",
        NOT_REPRODUCED: "No: robustness under a transformation is not a measure of the embedding's invariance"},
    "s1/augmentation_moves_invariance_most": {
        REPRODUCED: "Yes: augmentation moved B's relative invariance more than the data, the architecture and "
                    "training did, for every transformation", PARTLY: "In part", NOT_REPRODUCED: "No"},
}


def _names_list(names: list[str], most: int = 3) -> str:
    names = list(names)
    shown = names[:most] + ([f"{len(names) - most} more"] if len(names) > most else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _constant(table: pd.DataFrame, transform: str, a: str, b: str) -> str:
    """Which of measures ``a`` and ``b`` is the same for every trained model for ``transform`` (its label), or ""."""
    w = wide(table, transform)
    w = w.loc[[m for m in w.index if m in set(trained(table))]]
    same = [WORDS[m] for m in (a, b) if m in w.columns and w[m].nunique() <= 1]
    return " and ".join(same)


def why_open(c: dict, table: pd.DataFrame | None = None) -> str:
    """Why this run cannot decide a recorded claim, in plain words: too few seeds to judge a difference by, a
    measure that is the same for every model, or intervals that reach both sides of the smallest effect that matters.

    Example
    -------
    >>> ev = dict(unit="seed", n=1, n_min=3, parts={"zoom": dict(verdict="inconclusive at this budget", n=1,
    ...                                                          n_min=3, unit="seed")})
    >>> why_open(dict(id="s1/augmentation_raises_invariance", evidence=ev))
    'with 1 seed per variant there is no spread between seeds to judge a difference by; at least 3 are needed'
    """
    ev = c.get("evidence") or {}
    parts = {k: p for k, p in (ev.get("parts") or {"": ev}).items() if p.get("verdict") == INCONCLUSIVE}
    few = [p for p in parts.values() if p.get("n", 0) < p.get("n_min", 0)]
    if few and few[0].get("unit") == "seed":
        n = few[0]["n"]
        return (f"with {n} seed{'s' * (n != 1)} per variant there is no spread between seeds to judge a difference "
                f"by; at least {few[0]['n_min']} are needed")
    if few:
        return f"it needs at least {few[0]['n_min']} variants, and this run has {few[0]['n']}"
    out = []
    if c.get("id") in PAIRS and table is not None:
        flat = {t: _constant(table, t, *PAIRS[c["id"]]) for t, p in parts.items() if p.get("estimate") is None}
        out += [f"for {t}, {what} is the same for every model, so there is no ranking to compare"
                for t, what in flat.items() if what]
    wide_ = {t: p for t, p in parts.items() if p.get("lo") is not None and p.get("hi") is not None}
    if wide_ and c.get("id") in PAIRS:
        n = next(iter(wide_.values())).get("n")
        spans = "; ".join(f"{t}: {p['lo']:+.2f} to {p['hi']:+.2f}" for t, p in wide_.items())
        out.append(f"over {n} variants the intervals of rho are too wide to place it on either side of 0.5 ({spans})")
    elif wide_:
        n = next(iter(wide_.values())).get("n")
        out.append(f"the intervals over {n} seeds of {_names_list(list(wide_))} still reach across the smallest "
                   "effect that matters")
    return "; ".join(out) or "its parts are not yet decided"


def _answer(c: dict, table: pd.DataFrame) -> str:
    v, ev = c["verdict"], c.get("evidence") or {}
    if v == INCONCLUSIVE:
        return f"Not decided: {why_open(c, table)}"
    if v == NOT_MEASURABLE:
        return f"Not measurable at this profile: {ev.get('reason') or 'the models it needs are not in this run'}"
    said = ANSWERS.get(c["id"], {}).get(v, v)
    detail = pages_why(ev) if v in (PARTLY, NOT_REPRODUCED) else ""
    return f"{said} ({detail})" if detail else said


def _rhos(c: dict | None, table: pd.DataFrame) -> str:
    parts = ((c or {}).get("evidence") or {}).get("parts") or {}
    if not parts:
        return "not measured (no transformation has both measures)"
    have = [f"{p['estimate']:+.2f} for {t}" for t, p in parts.items() if p.get("estimate") is not None]
    none = [t for t, p in parts.items() if p.get("estimate") is None]
    return "; ".join(filter(None, [", ".join(have), f"none for {_names_list(none)}" if none else ""]))


def answers(claims: dict, table: pd.DataFrame, src: pd.DataFrame) -> dict:
    """Each question's answer for the chapter's last section, from the recorded claims (``{claim id: record}``):
    ``s1_answer_<claim>`` (what the verdict answers, or why this run cannot decide it, :func:`why_open`),
    ``s1_rhos_<claim>`` (the rank correlations of questions 2 to 4, per transformation), ``s1_largest`` (the
    factor that moved B's relative invariance most, per transformation) and ``s1_decided`` (how many questions this
    run decides); all text.

    Example
    -------
    >>> from invlib import results
    >>> run = results.Run("smoke", name="demo")
    >>> t = demo_table()
    >>> _, src, facts = report(run, settings("smoke", transforms=("zoom",)), t)
    >>> facts["s1_answer_accuracy_tracks_invariance"].split(":")[0], facts["s1_rhos_accuracy_tracks_invariance"]
    ('Yes', '+1.00 for zoom')
    >>> facts["s1_largest"], facts["s1_decided"]
    ('zoom: augmentation (+0.59)', 'all five questions')
    """
    out = {}
    for cid, c in claims.items():
        short = cid.split("/")[1]
        out[f"s1_answer_{short}"] = _answer(c, table)
        if cid in PAIRS:
            out[f"s1_rhos_{short}"] = _rhos(c, table)
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
