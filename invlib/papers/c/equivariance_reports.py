"""Paper C's reports: the summaries, figures and scoreboard claims of chapters C1-C3, from the tables that
:mod:`invlib.papers.c.equivariance` measures (:func:`~invlib.papers.c.equivariance.curves`,
:func:`~invlib.papers.c.equivariance.distances`,
:func:`~invlib.papers.c.equivariance.cross_dataset`, :func:`~invlib.papers.c.equivariance.finetune_table`).

Every claim is declared in :mod:`invlib.papers.c.protocol` (what each part measures, over which replicates, and the
smallest effect that matters with its reason); the reports compute the effects only (one value per type, per
baseline seed or per network, or an interval over the pairs or the images) and record them through
:meth:`invlib.results.Run.claim`, which decides them against the declaration.

Example
-------
>>> t = pd.DataFrame(dict(type=["noise"] * 2 + ["blur"] * 2 + ["crop"] * 2, network="n",
...                       transform=["untransformed", "8"] * 3, original=80.0, finetuned=[81.0, 62.0] * 3))
>>> from invlib import results
>>> run = results.Run("c9_doc", "smoke")
>>> _ = report_c3(run, t.assign(original=[80.0, 60.0, 80.0, 59.8, 80.0, 60.2]))  # +2.0, +2.2, +1.8
>>> run.claims["sec6.3/finetuning_raises_equivariance"]["verdict"]
'reproduced'
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ... import data, pages, results, zoo
from ... import transform_types as tt
from ...utils import check_choice
from .equivariance import Distances, Settings, spec, strongest
from .protocol import N_MIN, PROTOCOL

GROUPS_C = {"rigid": ("rotation", "shear", "perspective"), "pixelwise": ("baseline", "color_jitter", "noise")}


def _per_type(effect) -> np.ndarray:
    """One value per type (NaN dropped): the effect of a claim over the types.

    Example
    -------
    >>> _per_type(pd.Series({"a": 1.0, "b": 2.0, "c": float("nan")})).tolist()
    [1.0, 2.0]
    """
    return pd.Series(effect, dtype=float).dropna().to_numpy()


def _record(run, cid: str, ours, effects) -> results.Evidence:
    """Record claim ``cid`` of the protocol with this run's ``effects`` (:meth:`invlib.results.Run.claim`) and
    return its evidence, for the prose (the same declaration, decided by the same :func:`invlib.protocol.decide`)."""
    run.claim(PROTOCOL[cid], ours=ours, effects=effects)
    return run.evidence[cid]


TYPES_NOTE = "at most the 9 types of invlib.transform_types.TYPES"


def family_seconds(seconds: dict, family: str, kinds=None) -> list[float]:
    """Per replicate of a family of the networks, what training it took, from ``seconds`` (``{member: seconds}``,
    :func:`~invlib.papers.c.equivariance.network_seconds`): ``"baselines"``, one per baseline seed;
    ``"types"``, per type of ``kinds`` (default every augmented type, in family order), its widest network (the one
    the claims over types read); ``"wide_types"``, per type with two ranges or more, its narrower networks (the
    wider one is its ``"types"`` replicate).

    Example
    -------
    >>> from invlib.papers.c.equivariance import Member
    >>> s = {Member(None, None, 0): 20.0, Member(None, None, 1): 21.0, Member("rotation", 5.0): 22.0,
    ...      Member("rotation", 20.0): 23.0, Member("noise", 20.0): 24.0}
    >>> [family_seconds(s, f) for f in ("baselines", "types", "wide_types")]
    [[20.0, 21.0], [23.0, 24.0], [22.0]]
    >>> family_seconds(s, "types", kinds=("noise", "blur"))  # a type the family lacks has no replicate
    [24.0]
    """
    check_choice(family, ("baselines", "types", "wide_types"), "family")
    members = list(seconds)
    if family == "baselines":
        return [seconds[m] for m in members if m.kind is None]
    kinds = [k for k in (kinds or dict.fromkeys(m.kind for m in members if m.kind)) if
             any(m.kind == k for m in members)]
    if family == "types":
        return [seconds[strongest(members, k)] for k in kinds]
    return [sum(seconds[m] for m in members if m.kind == k and m != strongest(members, k)) for k in kinds
            if sum(m.kind == k for m in members) > 1]


def _replicates(run, parameter: str, seconds: list[float], claims: list[str], note: str) -> None:
    """:meth:`invlib.results.Run.replicates` where the family has a replicate (a family without one records none)."""
    if seconds:
        run.replicates(parameter, seconds, claims, note=note)


def _values(effect: pd.Series, fmt: str = "{:+.1f}") -> str:
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in effect.items())


# ------------------------------------------------------------------------------ C1: Fig. 1, 2, 7-9, Table 3
def plot_training_draws(S: Settings, members, ds: data.Dataset, n: int = 6, index: int = 0):
    """One image under ``n`` random training draws of each type's widest range (one row per type; the original
    first; :func:`invlib.plots.mosaic`)."""
    from ... import plots

    x = ds.rows(slice(index, index + 1)).float().expand(n, -1, -1, -1)
    gen = torch.Generator().manual_seed(S.seed)
    rows = {}
    for m in (strongest(members, k) for k in S.types):
        aug = zoo.augmentation(spec(S, m).augment, **dict(spec(S, m).augment_params))
        rows[m.name] = torch.cat([x[:1], aug(x, gen)])
    return plots.mosaic(rows, col_titles=["original"], size=(1.0, 1.0), fontsize=8)


def _mean(t: pd.DataFrame, col: str) -> float:
    return float(t[col].mean()) if len(t) else float("nan")


def _by_type(table: pd.DataFrame):
    """Per type with an augmented network: ``(kind, widest augmented member, its rows, {baseline member: rows})``,
    the rows of each network in the order of the type's grid (the same values for every network)."""
    for kind, t in table[table.kind.isin(table[table.group != "baseline"].kind)].groupby("kind", sort=False):
        aug_m = [m for m in t.member.unique() if m.kind is not None][-1]
        aug = t[t.member == aug_m].reset_index(drop=True)
        bases = {m: t[t.member == m].reset_index(drop=True) for m in t.member.unique() if m.kind is None}
        for m, b in bases.items():
            if b.label.tolist() != aug.label.tolist():
                raise ValueError(f"{m.name} was measured on another {kind} grid than {aug_m.name}: "
                                 f"{b.label.tolist()} vs {aug.label.tolist()}")
        yield kind, aug_m, aug, bases


def baseline_means(table: pd.DataFrame, col: str = "inv_acc", where: str = "all") -> pd.DataFrame:
    """Per type (rows) and baseline (columns, by name: the seeds of the network without augmentation): the
    baseline's mean ``col`` over the type's grid (``where="all"``), or over the values beyond or inside the
    training range of the type's widest augmented network (``"beyond"``, ``"inside"``; NaN where there are none).

    Example
    -------
    >>> from invlib.papers.c.equivariance import Member
    >>> rows = [dict(kind="noise", value=v, label=str(v), member=m, group=m.group, inv_acc=acc + v,
    ...              in_range=m.kind is not None and v <= 10) for m, acc in ((Member(None, None, 0), 50.0),
    ...             (Member(None, None, 1), 60.0), (Member("noise", 10.0), 80.0)) for v in (5.0, 20.0)]
    >>> baseline_means(pd.DataFrame(rows), where="beyond")
           Baseline  Baseline 2
    noise      70.0        80.0
    """
    check_choice(where, ("all", "beyond", "inside"), "where")
    out = {}
    for kind, _, aug, bases in _by_type(table):
        mask = {"all": np.ones(len(aug), bool), "beyond": ~aug.in_range.to_numpy(bool),
                "inside": aug.in_range.to_numpy(bool)}[where]
        out[kind] = {m.name: _mean(b[mask], col) for m, b in bases.items()}
    return pd.DataFrame.from_dict(out, orient="index")


def baseline_gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per type (rows) and baseline (columns): the baseline's mean (equivariance - invariance) accuracy over the
    type's grid, in points: how much of the accuracy a transformation costs the map ``M_g`` recovers."""
    return baseline_means(table, "eq_acc") - baseline_means(table, "inv_acc")


def baseline_recovered(table: pd.DataFrame) -> pd.DataFrame:
    """Per type (rows) and baseline (columns): the share of the accuracy the type's transformations cost the baseline
    that the map ``M_g`` recovers, ``(eq - inv) / (clean - inv)`` of its means over the type's grid (NaN where the
    transformations cost it nothing).

    Example
    -------
    >>> from invlib.papers.c.equivariance import Member
    >>> rows = [dict(kind="noise", value=v, label=str(v), member=m, group=m.group, clean=80.0, inv_acc=40.0,
    ...              eq_acc=eq, in_range=False) for m, eq in ((Member(None, None, 0), 70.0),
    ...                                                        (Member("noise", 10.0), 40.0)) for v in (5.0, 20.0)]
    >>> baseline_recovered(pd.DataFrame(rows))
           Baseline
    noise      0.75
    """
    lost = baseline_means(table, "clean") - baseline_means(table, "inv_acc")
    return baseline_gaps(table) / lost.where(lost > 0)


def _type_summary(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for kind, aug_m, aug, bases in _by_type(table):
        beyond, inside = ~aug.in_range, aug.in_range
        base = lambda col, mask=None, bases=bases: float(np.mean([_mean(b if mask is None else b[mask], col)
                                                                  for b in bases.values()]))
        rows.append(dict(type=kind, network=aug_m.name, baselines=len(bases), aug_inv=_mean(aug, "inv_acc"),
                         base_inv=base("inv_acc"), aug_inv_beyond=_mean(aug[beyond], "inv_acc"),
                         base_inv_beyond=base("inv_acc", beyond),
                         base_gap=base("eq_acc") - base("inv_acc"),
                         aug_gap_inside=_mean(aug[inside], "eq_acc") - _mean(aug[inside], "inv_acc"),
                         base_gap_inside=base("eq_acc", inside) - base("inv_acc", inside),
                         aug_clean=aug.clean.iloc[0], base_clean=base("clean")))
    return pd.DataFrame(rows).set_index("type")


def type_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per type: the widest augmented network against the baselines (the mean over the ``baselines`` seeds of the
    network without augmentation, each measured on the same grid): mean accuracies over the grid (and over the
    values beyond the training range), the baselines' equivariance-invariance gap, and the augmented network's
    gap inside its training range against the baselines' at the same values; rounded for reading."""
    return _type_summary(table).round(2)


def range_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2: for each type with two or more magnitudes, the widest and the narrowest network's mean invariance
    accuracy over the values beyond the narrow network's training range (rounded for reading)."""
    return _range_summary(table).round(2)


def _range_summary(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for kind, t in table[table.group != "baseline"].groupby("kind", sort=False):
        ms = list(t.member.unique())
        if len(ms) < 2:
            continue
        narrow, wide = t[t.member == ms[0]].reset_index(drop=True), t[t.member == ms[-1]].reset_index(drop=True)
        out = ~narrow.in_range
        rows.append(dict(type=kind, narrow=ms[0].name, wide=ms[-1].name, values=int(out.sum()),
                         narrow_inv=_mean(narrow[out], "inv_acc"), wide_inv=_mean(wide[out], "inv_acc"),
                         narrow_eq=_mean(narrow[out], "eq_acc"), wide_eq=_mean(wide[out], "eq_acc")))
    return pd.DataFrame(rows).set_index("type") if rows else pd.DataFrame(
        columns=["narrow", "wide", "values", "narrow_inv", "wide_inv", "narrow_eq", "wide_eq"])


def plot_curves(table: pd.DataFrame, kinds=None, what: str = "acc"):
    """Fig. 1/7: per type, the strongest augmented network's equivariance (blue) and invariance (green) against
    the first baseline's (red, black), over the measurement grid; values beyond the training range are shaded.
    ``what="l2"`` plots ``1 - L_L2`` instead of accuracy (as Fig. 10). One panel per type, titled by its augmented
    network, three to a row, with one legend for all."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    kinds = [k for k in (kinds or table.kind.unique()) if (table[table.kind == k].group != "baseline").any()]
    cols = min(3, len(kinds))
    rows = -(-len(kinds) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.1 * cols + 0.3, 2.7 * rows + 0.6), squeeze=False,
                             layout="constrained")
    styles = {("aug", "eq"): ("tab:blue", "-"), ("aug", "inv"): ("tab:green", "--"),
              ("base", "eq"): ("tab:red", "-"), ("base", "inv"): ("black", "--")}
    for ax, kind in zip(axes.flat, kinds):
        t = table[table.kind == kind]
        aug_m = [m for m in t.member.unique() if m.kind is not None][-1]
        base_m = [m for m in t.member.unique() if m.kind is None][0]
        for who, m in (("aug", aug_m), ("base", base_m)):
            r = t[t.member == m].reset_index(drop=True)
            for col in ("eq", "inv"):
                c, ls = styles[who, col]
                y = r[f"{col}_acc"] if what == "acc" else 1 - r[f"{col}_l2"]
                ax.plot(range(len(r)), y, ls, marker="o", ms=3, color=c)
            if m is aug_m:
                for i, inside in enumerate(r.in_range):
                    if not inside:
                        ax.axvspan(i - 0.5, i + 0.5, color="0.9", zorder=0)
        ax.set_xticks(range(len(r)), r.label, rotation=60, fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_title(aug_m.name, fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (%)" if what == "acc" else "1 - L2", fontsize=8)
    for ax in axes.flat[len(kinds):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("test transform", fontsize=8)
    names = {("aug", "eq"): "augmented: equivariance", ("aug", "inv"): "augmented: invariance",
             ("base", "eq"): "baseline: equivariance", ("base", "inv"): "baseline: invariance"}
    handles = [Line2D([], [], color=c, ls=ls, marker="o", ms=3) for c, ls in styles.values()]
    handles.append(Patch(color="0.9"))
    fig.legend(handles, [*names.values(), "beyond the training range"], loc="outside upper center", ncols=3,
               fontsize=8, frameon=False)
    return fig


def plot_ranges(table: pd.DataFrame, kinds=None):
    """Fig. 2: invariance accuracy of every magnitude of a type (narrowest to widest: orange, blue, purple, green)
    and of the first baseline (black), one panel per type with two ranges or more."""
    import matplotlib.pyplot as plt

    kinds = [k for k in (kinds or table.kind.unique()) if table[(table.kind == k) & (table.group == k)]
             .member.nunique() > 1]
    n = max(1, len(kinds))
    fig, axes = plt.subplots(1, n, figsize=(min(3.1 * n, 9.3) + 0.3, 3.2), squeeze=False, layout="constrained")
    colours = ("tab:orange", "tab:blue", "tab:purple", "tab:green")
    for ax, kind in zip(axes.flat, kinds):
        t = table[table.kind == kind]
        ms = [m for m in t.member.unique() if m.kind is not None]
        base = [m for m in t.member.unique() if m.kind is None][0]
        for i, m in enumerate([base, *ms]):
            r = t[t.member == m].reset_index(drop=True)
            color = "black" if m.kind is None else colours[(i - 1) % len(colours)]
            ax.plot(range(len(r)), r.inv_acc, marker="o", ms=3, color=color, label=m.name)
        ax.set_xticks(range(len(r)), r.label, rotation=60, fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_title(tt.TYPES[kind], fontsize=9)
        ax.set_xlabel("test transform", fontsize=8)
        ax.legend(fontsize=8)
    axes[0, 0].set_ylabel("invariance accuracy (%)", fontsize=8)
    return fig


def scale_readings(S: Settings) -> dict:
    """The sizes the prose of chapters C1-C3 states about their run, taken from the settings (never typed in the
    prose): ``arch``, ``dataset`` (text, as code), ``n_train``, ``epochs`` (text), ``n_fit`` (images the maps are fitted
    on), ``n_eval`` (images they are scored on), ``size`` and the paper's ``paper_size`` (pixels) with their ratio
    ``size_ratio``, ``n_types`` (types in the family), ``baselines``, ``wide`` (text: the types with two training
    ranges, or "none"), ``ranges`` (training ranges of the other types), ``family`` (text: the baselines, types
    and ranges), ``persp_lo`` and ``persp_hi`` (the
    perspective training sigmas, a fraction of the side), ``ft_steps``, ``ft_lr``, ``paper_ft_steps`` and
    ``paper_ft_lr`` (the fine-tuning updates and learning rate, this run's and the paper's), ``ft_ratio`` (the
    networks' training rate over the fine-tuning rate), ``ft_lambda1`` to ``ft_lambda3`` (Eq. 7's weights),
    ``n_min`` (the replicates a claim needs before it can be decisive).

    Example
    -------
    >>> from invlib.papers.c.equivariance import settings
    >>> r = scale_readings(settings("cpu"))
    >>> r["n_fit"] == settings("cpu").n_fit, r["arch"], r["wide"], r["paper_size"]
    (True, '`small_resnet18`', 'color jitter, crop, elastic, blur, noise, perspective, rotation and shear', 227)
    """
    wide = _and([k.replace("_", " ") for k in S.types if k in S.wide_types or S.magnitudes > 1] or ["none"])
    family = f"{pages.count(S.baselines, 'baseline')} and {pages.count(len(S.types), 'type')}, " \
             f"{pages.count(S.magnitudes, 'training range')} per type" \
             + (f" ({wide} with two)" if wide != "none" and S.magnitudes == 1 else "")
    persp = tt.PAPER_MAGNITUDES["perspective"]
    paper = Settings()
    return dict(arch=f"`{S.arch}`", dataset=f"`{S.dataset}`", n_train=S.n_train, epochs=pages.count(S.epochs, "epoch"),
                n_fit=S.n_fit,
                n_eval=S.n_eval, size=S.size, paper_size=paper.size, size_ratio=paper.size / S.size,
                n_types=len(S.types), baselines=S.baselines, wide=wide, ranges=S.magnitudes, family=family,
                persp_lo=min(persp), persp_hi=max(persp), ft_steps=S.ft_steps, ft_lr=S.ft_lr, ft_ratio=S.lr / S.ft_lr,
                paper_ft_steps=paper.ft_steps, paper_ft_lr=paper.ft_lr, n_min=N_MIN, ft_lambda1=S.ft_lambda1,
                ft_lambda2=S.ft_lambda2, ft_lambda3=S.ft_lambda3)


# Readable column names of the chapters' tables (the frames keep their short names).
LABELS = {"accuracy": "accuracy %", "paper_rvl_cdip": "paper, RVL-CDIP %", "paper_ilsvrc": "paper, ILSVRC %",
          "baselines": "baselines", "aug_inv": "augmented: invariance",
          "base_inv": "baselines: invariance", "aug_inv_beyond": "augmented: invariance beyond its range",
          "base_inv_beyond": "baselines: invariance there", "base_gap": "baselines: map's gain",
          "aug_gap_inside": "augmented: map's gain inside its range", "base_gap_inside": "baselines: map's gain there",
          "aug_clean": "augmented: clean", "base_clean": "baselines: clean", "narrow": "narrow range",
          "wide": "wide range", "values": "values beyond the narrow range", "narrow_inv": "narrow: invariance",
          "wide_inv": "wide: invariance", "narrow_eq": "narrow: equivariance", "wide_eq": "wide: equivariance",
          "aug_eq": "augmented: equivariance", "base_eq": "baselines: equivariance", "transform": "transform",
          "original": "before", "finetuned": "after Eq. 7", "control": "after the control",
          "rvl_cdip_original": "paper RVL-CDIP: before", "rvl_cdip_finetuned": "paper RVL-CDIP: after",
          "ilsvrc_original": "paper ILSVRC: before", "ilsvrc_finetuned": "paper ILSVRC: after"}


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the readable column (and index) names of :data:`LABELS`, for the page.

    Example
    -------
    >>> list(readable(pd.DataFrame({"aug_inv": [1.0], "other": [2.0]})).columns)
    ['augmented: invariance', 'other']
    """
    out = frame.rename(columns=LABELS)
    return out.rename_axis(index=[LABELS.get(n, n) for n in out.index.names])


_ANSWER = {"reproduced": "yes", "not reproduced": "no", "partly": "in part", "inconclusive": "undecided",
           "not measurable": "not measurable here"}


def _answer(ev: results.Evidence, numbers: str) -> str:
    """A claim's verdict as a plain answer with this run's numbers: ``"yes: +5.2 points ..."``."""
    word = next(w for k, w in _ANSWER.items() if ev.verdict.startswith(k))
    if ev.verdict.startswith("not measurable"):
        return f"{word} ({ev.reason})"
    return f"{word}: {numbers}" if numbers else word


# What each claim asks, in a few words for the prose, and the replicates more of which could settle it.
QUESTIONS = {
    "sec6.1/augmentation_raises_invariance": ("whether augmentation makes a network more invariant than the "
                                              "baselines, also beyond its training range", "types"),
    "sec6.1/baseline_equivariance_gap": ("whether the map recovers much of what a baseline loses, colour aside",
                                         "baselines"),
    "sec6.1/augmentation_collapses_structure": ("whether the map adds little inside an augmented network's training "
                                                "range", "types"),
    "fig2/wider_range_more_robust": ("whether a wider training range is robust over a wider range", "wide_types"),
    "sec6.2/same_type_nearest": ("whether networks of the same type are each other's nearest neighbours",
                                 "partners"),
    "sec6.2/transform_groups": ("whether the paper's two groups of types are nearer each other than the rest",
                                "partners"),
    "appB.3/asymmetric_distances": ("whether some pair's two one-way distances differ markedly", "images"),
    "appB.2/invariance_transfers": ("whether invariance carries over to the unseen data set", "cross_types"),
    "sec6.3/finetuning_raises_equivariance": ("whether fine-tuning with Eq. 7 raises equivariance", "ft_types"),
    "sec6.3/clean_accuracy_kept": ("whether clean accuracy is kept", "ft_types"),
    "sec6.3/gain_from_the_loss": ("whether the gain comes from Eq. 7's terms rather than from the extra updates",
                                  "ft_types"),
}
MORE = {"types": "more transformation types (`types`)", "baselines": "more baselines (`baselines`)",
        "wide_types": "more types with two training ranges (`magnitudes`)",
        "partners": "more networks per type (`magnitudes`)", "images": "more evaluation images (`n_eval`)",
        "cross_types": "more types measured on the second data set (`cross_types`)",
        "ft_types": "more fine-tuned types (`ft_types`)"}


def open_questions(run, S: Settings) -> str:
    """One sentence for a chapter's prose: the claims ``run`` recorded and could not decide, grouped by the
    replicates more of which could settle them (:data:`QUESTIONS`), or, where the family already has every type (or
    every training range) those replicates could come from, that this family cannot; or that the run decided every
    claim it could measure.

    Example
    -------
    >>> from types import SimpleNamespace
    >>> from invlib.papers.c.equivariance import settings
    >>> run = SimpleNamespace(claims={"sec6.3/clean_accuracy_kept": dict(verdict="inconclusive at this budget"),
    ...                               "appB.3/asymmetric_distances": dict(verdict="reproduced")})
    >>> open_questions(run, settings("smoke"))
    'It leaves open whether clean accuracy is kept, which more fine-tuned types (`ft_types`) could settle.'
    >>> open_questions(run, settings("cpu"))
    'It leaves open whether clean accuracy is kept, which more replicates cannot settle in this family: it already \
has every type fine-tuned.'
    """
    groups = pages.undecided_groups(run.claims, QUESTIONS)
    if not groups:
        return "It decides every claim it can measure."

    every = set(tt.TYPES)
    full = {"types": "every type", "wide_types": "two training ranges for every type",
            "partners": "every training range of the paper", "cross_types": "every type on the second data set",
            "ft_types": "every type fine-tuned"}
    reached = {"types": set(S.types) >= every, "wide_types": set(S.types) >= every and (
        S.magnitudes > 1 or set(S.wide_types) >= every), "partners": set(S.types) >= every and S.magnitudes >= 4,
        "cross_types": set(S.cross_types) >= every, "ft_types": set(S.ft_types) >= every}

    def settle(more: str) -> str:
        if reached.get(more):
            return f"more replicates cannot settle in this family: it already has {full[more]}"
        return f"{MORE[more]} could settle"

    said = [f"{_and(questions)}, which {settle(more)}" for more, questions in groups.items()]
    return f"It leaves open {_and(said, '; and ', '; ')}."


def _and(items: list[str], last: str = " and ", sep: str = ", ") -> str:
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1]


def report_c1(run, table: pd.DataFrame, acc: pd.DataFrame, seconds: dict | None = None) -> dict:
    """The scoreboard rows of chapter C1, each decided from this run's numbers, and the prose's answers to them
    (``{glue name: text}``: ``c1_raises``, ``c1_gap``, ``c1_collapses``, ``c1_wider``, each the verdict as a plain
    answer with this run's numbers): ``table`` from
    :func:`~invlib.papers.c.equivariance.curves` (every baseline measured on every grid), ``acc`` from
    :func:`~invlib.papers.c.equivariance.accuracy_table`.

    The claims about what augmentation does (more invariance, a collapsed structure, wider ranges) are about the
    transformation types in general: one value per type (its augmented network against the mean of the
    baselines, paired on the type's grid), a t-interval over the types. The claim about the baseline alone is
    about training without augmentation: one value per baseline seed. ``seconds`` (``{member: seconds}``,
    :func:`~invlib.papers.c.equivariance.network_seconds`): what each network's training took, recorded per family
    of replicates (:meth:`invlib.results.Run.replicates`: ``baselines``, ``types``, ``wide_types``).
    """
    summary, ranges, gaps = _type_summary(table), _range_summary(table), baseline_gaps(table)
    run.log("table3_accuracy", acc.accuracy.to_dict(), paper=acc.paper_ilsvrc.dropna().to_dict(),
            note="paper: ILSVRC validation top-1 of the network with the same training range")
    run.log("type_summary", summary.round(4).reset_index().to_dict("records"))
    run.log("baseline_gaps", gaps.round(4).to_dict())
    overall = summary.aug_inv - summary.base_inv
    beyond = (summary.aug_inv_beyond - summary.base_inv_beyond).dropna()
    each = baseline_means(table, "inv_acc")
    ev = {}
    ev["raises"] = _record(run, "sec6.1/augmentation_raises_invariance",
            ours=f"over the grid {overall.mean():+.1f} points on average over {len(overall)} types (against each "
                 "baseline: " + _values(each.rsub(summary.aug_inv, axis=0).mean()) + "), beyond the range "
                 f"{beyond.mean():+.1f} over {len(beyond)} types; per type " + _values(overall),
            effects={"over the grid": _per_type(overall), "beyond the range": _per_type(beyond)}
            if len(summary) else results.not_measurable("the family has no augmented network"))
    recovered = baseline_recovered(table)
    run.log("baseline_recovered", recovered.round(4).to_dict(),
            note="(eq - inv) / (clean - inv): the share of what a type costs a baseline that the map recovers")
    not_colour = recovered.drop(index="color_jitter", errors="ignore")
    per_seed = not_colour.median(axis=0) if len(not_colour) else pd.Series(dtype=float)
    colour = recovered.loc["color_jitter"] if "color_jitter" in recovered.index else pd.Series(dtype=float)
    gap_effects = {"most types": _per_type(per_seed) if len(not_colour) else results.not_measurable(
                       "the family has no type but colour jitter", unit="seed"),
                   "colour the exception": _per_type(colour) if len(colour) else results.not_measurable(
                       "the family has no colour-jitter network", unit="seed")}
    ev["gap"] = _record(run, "sec6.1/baseline_equivariance_gap",
            ours="share of the loss the map recovers, median over the non-colour types: " + _values(per_seed, "{:.2f}")
                 + (f"; colour jitter: {_values(colour, '{:.2f}')}" if len(colour) else "") + " (per baseline); per "
                 "type (mean of the baselines): " + _values(recovered.mean(axis=1), "{:.2f}"),
            effects=gap_effects if len(recovered)
            else results.not_measurable("the family has no augmented network"))
    inside = summary.dropna(subset=["aug_gap_inside", "base_gap_inside"])
    ev["collapses"] = _record(run, "sec6.1/augmentation_collapses_structure",
            ours=", ".join(f"{k} {r.aug_gap_inside:+.1f} vs {r.base_gap_inside:+.1f}" for k, r in inside.iterrows())
                 + " points (augmented vs baseline, eq - inv inside the training range)",
            effects={"small": _per_type(inside.aug_gap_inside),
                     "below the baseline": _per_type(inside.aug_gap_inside - inside.base_gap_inside)}
            if len(inside) else results.not_measurable("no augmented network has grid values inside its range"))
    wider = ranges.wide_inv - ranges.narrow_inv if len(ranges) else pd.Series(dtype=float)
    ev["wider"] = _record(run, "fig2/wider_range_more_robust",
            ours=", ".join(f"{k}: {r.wide} {r.wide_inv:.1f} vs {r.narrow} {r.narrow_inv:.1f}"
                           for k, r in ranges.iterrows()) or "no type with two magnitudes",
            effects=_per_type(wider) if len(ranges)
            else results.not_measurable("the family has no type with two training ranges"))
    if seconds is not None:
        kinds = list(summary.index)
        _replicates(run, "baselines", family_seconds(seconds, "baselines"), ["sec6.1/baseline_equivariance_gap"],
                    "a baseline: one network trained without augmentation, from its own seed (its zoo checkpoint's "
                    "training seconds)")
        _replicates(run, "types", family_seconds(seconds, "types", kinds), ["sec6.1/augmentation_raises_invariance",
                                                                            "sec6.1/augmentation_collapses_structure"],
                    f"a type: its widest augmented network (its zoo checkpoint's training seconds); {TYPES_NOTE}")
        _replicates(run, "wide_types", family_seconds(seconds, "wide_types", kinds), ["fig2/wider_range_more_robust"],
                    f"a type with two ranges: its narrower network (the wider one is a replicate of types); "
                    f"{TYPES_NOTE}")
    return dict(
        c1_raises=_answer(ev["raises"], f"the augmented networks' invariance accuracy stands {overall.mean():+.1f} "
                          f"points against the baselines' over the grid and {beyond.mean():+.1f} beyond the training "
                          f"range, on average over {pages.count(len(overall), 'type')}" if len(summary) else ""),
        c1_gap=_answer(ev["gap"], f"the map recovers {per_seed.mean():.0%} of what a transformation costs the "
                       f"baselines (the median over the non-colour types, averaged over "
                       f"{pages.count(len(per_seed), 'baseline')})"
                       + (f", and {colour.mean():.0%} of what colour jitter costs them" if len(colour) else "")
                       if len(not_colour) else ""),
        c1_collapses=_answer(ev["collapses"], f"inside its training range the map adds "
                             f"{inside.aug_gap_inside.mean():+.1f} points to an augmented network against "
                             f"{inside.base_gap_inside.mean():+.1f} to the baselines, on average over "
                             f"{pages.count(len(inside), 'type')}" if len(inside) else ""),
        c1_wider=_answer(ev["wider"], f"beyond the narrower range, the wider network's invariance accuracy stands "
                         f"{wider.mean():+.1f} points against the narrower one's, on average over "
                         f"{pages.count(len(wider), 'type')}" if len(ranges) else ""))


# ------------------------------------------------------------------------------ C2: Fig. 3, 10-12
def tsne(dist: Distances, seed: int = 0) -> np.ndarray:
    """Fig. 11: a 2-D t-SNE embedding ``(M, 2)`` of the Eq. 4 distance matrix (scikit-learn, precomputed metric,
    random initialisation; the paper found it unstable across initialisations)."""
    from sklearn.manifold import TSNE

    m = len(dist.names)
    return TSNE(2, perplexity=min(5.0, (m - 1) / 3), metric="precomputed", init="random",
                random_state=seed).fit_transform(dist.total)


def plot_distances(dist: Distances, knn: pd.DataFrame, groups: pd.DataFrame, seed: int = 0):
    """Figs. 3, 11, 12 in a 2 x 2 grid: K-NN same-type rate vs chance, the type heatmap, the t-SNE embedding and the
    asymmetry heatmap, labelled with the networks' and types' full names."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9.5, 9), layout="constrained")
    ax = axes[0, 0]
    ax.plot(knn.index, knn.rate, "o-", label="same-type pairs")
    ax.plot(knn.index, knn.chance, "--", color="gray", label="chance")
    ax.set_xlabel("K nearest neighbours", fontsize=8)
    ax.set_ylabel("share of the same-type pairs within K", fontsize=8)
    ax.set_title(f"Fig. 3a: same-type neighbours ({int(knn.pairs.iloc[0])} ordered pairs)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8)
    for ax, frame, title, label in ((axes[0, 1], groups, "Fig. 3b: mean distance between types", "Eq. 4 distance"),
                                    (axes[1, 1], dist.frame("asymmetry"), "Fig. 12: |d(i, j) - d(j, i)|",
                                     "difference of the one-way distances")):
        im = ax.imshow(frame.values.astype(float), cmap="viridis")
        names = [str(n).replace("_", " ") for n in frame.index]
        ax.set_xticks(range(len(frame)), names, rotation=90, fontsize=8)
        ax.set_yticks(range(len(frame)), names, fontsize=8)
        ax.set_title(title, fontsize=9)
        bar = fig.colorbar(im, ax=ax, fraction=0.046)
        bar.set_label(label, fontsize=8)
        bar.ax.tick_params(labelsize=8)
    xy = tsne(dist, seed)
    ax = axes[1, 0]
    kinds = list(dict.fromkeys(dist.groups))
    for i, (name, g) in enumerate(zip(dist.names, dist.groups)):
        ax.scatter(*xy[i], color=plt.cm.tab10(kinds.index(g) % 10), s=40)
        ax.annotate(name, xy[i], fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.set_title("Fig. 11: t-SNE of the distances (colour: type)", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig


def partner_shares(dist: Distances, k: int) -> pd.Series:
    """Fig. 3a per network: the share of its same-type partners among its ``k`` nearest neighbours by the Eq. 4
    distance, for every network that has a partner (ties broken by order, as
    :func:`invlib.metrics.knn_same_group_rate`, whose pooled rate this averages).

    Example
    -------
    >>> d = np.array([[0, 1, 5, 5], [1, 0, 5, 5], [5, 5, 0, 9], [5, 5, 9, 0]], dtype=float) / 2
    >>> partner_shares(Distances(d, ["b1", "b2", "r1", "r2"], ["b", "b", "r", "r"]), 1).tolist()
    [1.0, 1.0, 0.0, 0.0]
    """
    d = np.asarray(dist.total, dtype=float).copy()
    m = len(d)
    np.fill_diagonal(d, np.inf)
    order = np.argsort(d, axis=1, kind="stable")
    rank = np.empty_like(order)
    rank[np.arange(m)[:, None], order] = np.arange(m)[None]  # rank[a, b]: 0 = nearest
    g = np.asarray(dist.groups)
    out = {}
    for a in range(m):
        partners = np.flatnonzero((g == g[a]) & (np.arange(m) != a))
        if len(partners):
            out[dist.names[a]] = float(np.mean(rank[a, partners] < k))
    return pd.Series(out, dtype=float)


def group_contrast(dist: Distances, types) -> pd.Series | None:
    """Figs. 3b-c per network of a group of ``types``: its mean Eq. 4 distance to the networks of the group's other
    types minus its mean distance to the networks of the types outside the group (negative: nearer its group).
    None where fewer than two of ``types`` are in the family, or nothing is outside them.

    Example
    -------
    >>> d = np.array([[0, 1, 4], [1, 0, 4], [4, 4, 0]], dtype=float) / 2
    >>> group_contrast(Distances(d, ["r", "s", "n"], ["rotation", "shear", "noise"]), ("rotation", "shear"))
    r   -3.0
    s   -3.0
    dtype: float64
    """
    g = np.asarray(dist.groups)
    inside = np.isin(g, list(types))
    if len(set(g[inside])) < 2 or inside.all():
        return None
    total = np.asarray(dist.total, dtype=float)
    return pd.Series({dist.names[i]: total[i, inside & (g != g[i])].mean() - total[i, ~inside].mean()
                      for i in np.flatnonzero(inside)}, dtype=float)


def asymmetry_intervals(dist: Distances, level: float = 0.95) -> pd.DataFrame:
    """App. B.3 per pair of networks ``(a, b)``: how much harder it is to predict ``a``'s features from ``b``'s
    than ``b``'s from ``a``'s (``one_way[a, b] - one_way[b, a]``, oriented to be >= 0), in units of the median Eq. 4
    distance (a fixed scale), with its t-interval at ``level`` over the evaluation images (``dist.per_image``):
    columns ``a``, ``b``, ``estimate``, ``lo``, ``hi`` and ``interval`` (the :class:`invlib.results.Interval`).

    Example
    -------
    >>> e = np.zeros((2, 2, 4)); e[0, 1], e[1, 0] = [0.5, 0.6, 0.5, 0.6], [0.4, 0.4, 0.5, 0.5]
    >>> t = asymmetry_intervals(Distances(e.mean(-1), ["p", "q"], ["x", "y"], e))
    >>> t[["a", "b", "estimate"]].round(3).values.tolist()
    [['p', 'q', 0.1]]
    """
    if dist.per_image is None:
        raise ValueError("The asymmetry needs each one-way error per evaluation image (Distances.per_image, kept by "
                         "equivariance.distances).")
    m = len(dist.names)
    typical = float(np.median(dist.total[~np.eye(m, dtype=bool)]))
    rows = []
    for i in range(m):
        for j in range(i + 1, m):
            diff = (np.asarray(dist.per_image[i, j], float) - np.asarray(dist.per_image[j, i], float)) / typical
            a, b, diff = (i, j, diff) if diff.mean() >= 0 else (j, i, -diff)
            iv = results.t_interval(diff, level)
            rows.append(dict(a=dist.names[a], b=dist.names[b], estimate=iv.estimate, lo=iv.lo, hi=iv.hi, interval=iv))
    return pd.DataFrame(rows, columns=["a", "b", "estimate", "lo", "hi", "interval"])


def _cross_summary(cross: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (kind, domain), t in cross.groupby(["kind", "domain"], sort=False):
        aug, base = t[t.group != "baseline"], t[t.group == "baseline"]
        rows.append(dict(type=kind, domain=domain, aug_inv=1 - _mean(aug, "inv_l2"), aug_eq=1 - _mean(aug, "eq_l2"),
                         base_inv=1 - _mean(base, "inv_l2"), base_eq=1 - _mean(base, "eq_l2")))
    return pd.DataFrame(rows).set_index(["type", "domain"])


def cross_summary(cross: pd.DataFrame) -> pd.DataFrame:
    """Per type and domain: mean ``1 - L_L2`` invariance and equivariance of the augmented network and of the
    baselines (the mean over them), rounded for reading."""
    return _cross_summary(cross).round(3)


def report_c2(run, dist: Distances, knn: pd.DataFrame, cross: pd.DataFrame, seconds: dict | None = None) -> dict:
    """The scoreboard rows of chapter C2, each decided from this run's numbers; returns the prose's facts
    ``{glue name: number or text}``: ``c2_networks`` (networks in the family), ``c2_partners`` (networks with a
    same-type partner), ``c2_k`` (the neighbours the nearest-neighbour claim counts, of ``c2_others``),
    ``c2_typical`` (the median Eq. 4 distance) and the answers to the four claims (``c2_nearest``, ``c2_groups``,
    ``c2_asymmetry``, ``c2_transfer``: the verdict as a plain answer with this run's numbers). ``seconds``
    (``{member: seconds}``,
    :func:`~invlib.papers.c.equivariance.network_seconds`): recorded as the replicates of ``cross_types`` (App. B.2's
    claim, one value per type measured on the second data set). The nearest-neighbour and group claims rest on
    pairs and on networks of several families at once (baselines, types, wide types): no one parameter sets their
    n, so they are recorded under none."""
    m = len(dist.names)
    k = max(1, round(5 * (m - 1) / 36))  # the paper's "within 5 neighbours" of 36, scaled to this family
    rate, chance = float(knn.rate.loc[k]), float(knn.chance.loc[k])
    shares = partner_shares(dist, k)
    run.log("distance_total", dist.frame("total").to_dict())
    run.log("knn_rate", knn.rate.to_dict())
    pairs = pairs_same = int(knn.pairs.iloc[0])
    chance_declared = PROTOCOL["sec6.2/same_type_nearest"].parts[""].null
    ev = dict(nearest=_record(
        run, "sec6.2/same_type_nearest",
        ours=f"{rate:.0%} of {pairs} ordered same-type pairs within {k} of {m - 1} neighbours (chance {chance:.0%}); "
             "per network: " + _values(shares, "{:.0%}"),
        effects=results.not_measurable("no two networks of the family share a training type") if not pairs else
        results.not_measurable(f"the family is too small: chance k / (M - 1) = {chance:.2f} is above the declared "
                               f"{chance_declared:g}") if chance > chance_declared else
        results.share_interval(round(rate * pairs), pairs, results.LEVEL["greater"])))
    typical = float(np.median(dist.total[~np.eye(m, dtype=bool)])) if m > 1 else float("nan")
    contrasts = {name: None if c is None else c / typical
                 for name, types in GROUPS_C.items() for c in [group_contrast(dist, types)]}
    missing = [name for name, c in contrasts.items() if c is None]
    ev["groups"] = _record(
        run, "sec6.2/transform_groups",
        ours="; ".join(f"{n}: {c.mean():+.3f} ({_values(c, '{:+.3f}')})" for n, c in contrasts.items()
                       if c is not None) + f" (Eq. 4 distance to the group's other types minus to the rest, in units "
                                           f"of the median distance {typical:.3f})",
        effects=results.not_measurable(f"the family lacks the types of the {' and '.join(missing)} group")
        if missing else {name: c.to_numpy() for name, c in contrasts.items()})
    pairs = m * (m - 1) // 2  # now: every unordered pair of networks
    level = max(results.LEVEL["greater"], 1 - 0.05 / max(pairs, 1))  # Bonferroni over the pairs
    asym = asymmetry_intervals(dist, level)
    run.log("asymmetry", asym.drop(columns="interval").round(4).to_dict("records"))
    bound = PROTOCOL["appB.3/asymmetric_distances"].parts[""].boundary  # some pair above it, or every pair below
    best = asym.loc[asym.lo.idxmax() if asym.lo.max() > bound else asym.hi.idxmax()] if pairs else None
    ev["asymmetry"] = _record(
        run, "appB.3/asymmetric_distances",
        ours=f"largest |d(i,j) - d(j,i)|: {asym.estimate.max():.1%} of the median distance {typical:.3f}; the pair "
             f"decided on: {best.a} from {best.b}, {best.estimate:.1%} ({level:.3%} interval, one of {pairs} pairs)"
        if pairs else "one network",
        effects=best.interval if pairs else results.not_measurable("the family has one network"))
    ev["transfer"] = _report_transfer(run, cross)
    if seconds is not None and cross.domain.nunique() > 1:
        kinds = list(dict.fromkeys(cross.kind))
        _replicates(run, "cross_types", family_seconds(seconds, "types", kinds), ["appB.2/invariance_transfers"],
                    f"a type measured on the second data set: its widest network (its zoo checkpoint's training "
                    f"seconds); {TYPES_NOTE}")
    return dict(c2_networks=m, c2_partners=len(shares), c2_k=k, c2_others=m - 1, c2_typical=typical,
                **_c2_answers(ev, rate, pairs_same, chance, k, contrasts, asym, cross))


def _report_transfer(run, cross: pd.DataFrame) -> results.Evidence:
    domains = list(cross.domain.unique())
    if len(domains) < 2:
        return _record(run, "appB.2/invariance_transfers", ours="one data set",
                       effects=results.not_measurable("no second data set"))
    cs = _cross_summary(cross)
    a, b = cs.xs(domains[0], level="domain"), cs.xs(domains[1], level="domain")
    run.log("cross_dataset", cs.round(4).reset_index().to_dict("records"))
    return _record(run, "appB.2/invariance_transfers",
                   ours=", ".join(f"{t}: {a.aug_inv[t]:.3f} -> {b.aug_inv[t]:.3f} (baseline {b.base_inv[t]:.3f})"
                                  for t in a.index) + f" (1 - L2 invariance, {domains[0]} -> {domains[1]})",
                   effects={"above the baseline": _per_type(b.aug_inv - b.base_inv),
                            "close to its own data": _per_type(b.aug_inv - a.aug_inv)})


def _c2_answers(ev: dict, rate: float, pairs: int, chance: float, k: int, contrasts: dict, asym: pd.DataFrame,
                cross: pd.DataFrame) -> dict:
    """The prose's answers to chapter C2's claims: each verdict as a plain answer with this run's numbers."""
    groups = "; ".join(f"{name} group {c.mean():+.3f}" for name, c in contrasts.items() if c is not None)
    within = f"among the {k} nearest neighbours" if k > 1 else "the nearest neighbour"
    out = dict(c2_nearest=_answer(ev["nearest"], f"in {rate:.0%} of the {pairs} same-type pairs the partner is "
                                  f"{within}, against {chance:.0%} by chance" if pairs else ""),
               c2_groups=_answer(ev["groups"], f"{groups} (a network's mean distance to its group's other types minus "
                                 "to the rest, in units of the median distance; below 0 is nearer its group)"
                                 if groups else ""),
               c2_asymmetry=_answer(ev["asymmetry"], f"the two one-way distances of a pair differ by up to "
                                    f"{asym.estimate.max():.1%} of the median distance" if len(asym) else ""))
    domains = list(cross.domain.unique())
    if len(domains) > 1:
        cs = _cross_summary(cross)
        a, b = cs.xs(domains[0], level="domain"), cs.xs(domains[1], level="domain")
        numbers = (f"the augmented networks' invariance (1 - L2) goes from {a.aug_inv.mean():.3f} on their own data to "
                   f"{b.aug_inv.mean():.3f} on `{domains[1]}`, where the baselines' is {b.base_inv.mean():.3f} "
                   f"(means over {pages.count(len(a), 'type')})")
    else:
        numbers = ""
    return out | dict(c2_transfer=_answer(ev["transfer"], numbers))


# ------------------------------------------------------------------------------ C3: Tables 2 and 4
def finetune_changes(table: pd.DataFrame) -> pd.DataFrame:
    """Per type (rows): ``equivariance``, the change of equivariance accuracy (finetuned - original) averaged over
    the type's fine-tuning transforms; ``clean``, the change of accuracy on untransformed images; and, where the
    table has the control, ``beyond_control`` (finetuned - control over the fine-tuning transforms): points.

    Example
    -------
    >>> t = pd.DataFrame(dict(type="noise", transform=["untransformed", "8", "16"], original=[80.0, 60.0, 50.0],
    ...                       finetuned=[79.0, 62.0, 51.0], control=[80.0, 61.0, 50.0]))
    >>> finetune_changes(t).loc["noise"].tolist()
    [1.5, -1.0, 1.0]
    """
    transformed = table["transform"] != "untransformed"

    def by_type(col, rows, minus="original"):
        t = table[rows]
        return (t[col] - t[minus]).groupby(t["type"], sort=False).mean()

    out = dict(equivariance=by_type("finetuned", transformed), clean=by_type("finetuned", ~transformed))
    if "control" in table:
        out["beyond_control"] = by_type("finetuned", transformed, "control")
    return pd.DataFrame(out)


def report_c3(run, table: pd.DataFrame) -> dict:
    """The scoreboard rows of chapter C3 (``table`` from :func:`~invlib.papers.c.equivariance.finetune_table`),
    each decided over the fine-tuned types (one network per type, compared with itself before fine-tuning or with
    its control, so paired); returns the prose's facts ``{glue name: text}``: ``c3_raised``, ``c3_kept`` and, with
    the control, ``c3_control`` (each verdict as a plain answer with this run's numbers; else "no control in this
    run"), and ``c3_types`` (the fine-tuned types, a number). Where ``table`` has
    the ``seconds`` of each type, records them as the replicates of ``ft_types`` (:meth:`Run.replicates`)."""
    ch = finetune_changes(table)
    run.log("finetune", table.to_dict("records"))
    if "seconds" in table:
        _replicates(run, "ft_types", table.groupby("type", sort=False)["seconds"].first().tolist(),
                    [c.id for c in PROTOCOL.of_chapter("c3_equivariance_finetuning")],
                    f"a type: its widest network (its zoo checkpoint's training seconds) and its two fine-tunings, Eq. "
                    f"7's and the control's (measured, cached with their weights); {TYPES_NOTE}")
    ev = dict(raised=_record(run, "sec6.3/finetuning_raises_equivariance",
                             ours=f"mean {ch.equivariance.mean():+.2f} points over {len(ch)} types, up for "
                                  f"{int((ch.equivariance > 0).sum())}: " + _values(ch.equivariance, "{:+.2f}"),
                             effects=_per_type(ch.equivariance)),
              kept=_record(run, "sec6.3/clean_accuracy_kept",
                           ours=_values(ch.clean, "{:+.2f}") + f" (mean {ch.clean.mean():+.2f})",
                           effects=_per_type(ch.clean)))
    if "beyond_control" in ch:
        extra = ch.beyond_control
        ev["control"] = _record(run, "sec6.3/gain_from_the_loss",
                                ours=f"Eq. 7 minus the control (lambda3 = 0, same updates): mean {extra.mean():+.2f} "
                                     f"points, above 0 for {int((extra > 0).sum())} of {len(extra)} types: "
                                     + _values(extra, "{:+.2f}"), effects=_per_type(extra))
    n = pages.count(len(ch), "type")
    out = dict(c3_types=len(ch),
               c3_raised=_answer(ev["raised"], f"{ch.equivariance.mean():+.2f} points of equivariance accuracy on "
                                 f"average over {n}, up for {int((ch.equivariance > 0).sum())} of them"),
               c3_kept=_answer(ev["kept"], f"{ch.clean.mean():+.2f} points of accuracy on untransformed images on "
                               f"average over {n}"),
               c3_control="no control in this run")
    if "control" in ev:
        extra = ch.beyond_control
        out["c3_control"] = _answer(ev["control"], f"Eq. 7's equivariance accuracy stands {extra.mean():+.2f} "
                                    f"points against the control's on average, ahead of it for "
                                    f"{int((extra > 0).sum())} of {n}")
    return out


def plot_finetune(table: pd.DataFrame):
    """Tables 2/4 as bars: change of accuracy (after - before) per type and transform, ours (Eq. 7 and the control)
    beside the paper's RVL-CDIP and ILSVRC changes where the paper gives them."""
    import matplotlib.pyplot as plt

    t = table.assign(ours=table.finetuned - table.original, rvl=table.rvl_cdip_finetuned - table.rvl_cdip_original,
                     ilsvrc=table.ilsvrc_finetuned - table.ilsvrc_original)
    bars = [("ours", "this run, Eq. 7"), ("rvl", "paper, RVL-CDIP"), ("ilsvrc", "paper, ILSVRC")]
    if "control" in t:
        t = t.assign(ctl=t.control - t.original)
        bars.insert(1, ("ctl", "this run, control (lambda3 = 0)"))
    fig, ax = plt.subplots(figsize=(min(max(6, 0.4 * len(t)), 11), 3.8))
    x, w = np.arange(len(t)), 0.8 / len(bars)
    for i, (col, label) in enumerate(bars):
        ax.bar(x + (i - (len(bars) - 1) / 2) * w, t[col], w, label=label)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, [f"{k.replace('_', ' ')}: {tr}" for k, tr in zip(t["type"], t["transform"])], rotation=75,
                  fontsize=8)
    ax.set_xlabel("type: fine-tuning transform", fontsize=8)
    ax.set_ylabel("after - before (points)", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
