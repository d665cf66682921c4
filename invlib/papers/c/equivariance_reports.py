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

from ... import data, results, zoo
from ... import transform_types as tt
from ...utils import check_choice
from .equivariance import Distances, Settings, spec, strongest
from .protocol import PROTOCOL

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
    return plots.mosaic(rows, col_titles=["original"], size=(1.1, 1.15))


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
    the baseline's (red, black), over the measurement grid; values beyond the training range are shaded.
    ``what="l2"`` plots ``1 - L_L2`` instead of accuracy (as Fig. 10)."""
    import matplotlib.pyplot as plt

    kinds = [k for k in (kinds or table.kind.unique()) if (table[table.kind == k].group != "baseline").any()]
    cols = min(3, len(kinds))
    fig, axes = plt.subplots(-(-len(kinds) // cols), cols, figsize=(4.2 * cols, 2.9 * -(-len(kinds) // cols)),
                             squeeze=False)
    for ax, kind in zip(axes.flat, kinds):
        t = table[table.kind == kind]
        aug_m = [m for m in t.member.unique() if m.kind is not None][-1]
        base_m = [m for m in t.member.unique() if m.kind is None][0]
        for m, (c_eq, c_inv) in ((aug_m, ("tab:blue", "tab:green")), (base_m, ("tab:red", "black"))):
            r = t[t.member == m].reset_index(drop=True)
            for col, c, ls in (("eq", c_eq, "-"), ("inv", c_inv, "--")):
                y = r[f"{col}_acc"] if what == "acc" else 1 - r[f"{col}_l2"]
                ax.plot(range(len(r)), y, ls, marker="o", ms=3, color=c, label=f"{m.name}: {col}")
            if m is aug_m:
                for i, inside in enumerate(r.in_range):
                    if not inside:
                        ax.axvspan(i - 0.5, i + 0.5, color="0.92", zorder=0)
        ax.set_xticks(range(len(r)), r.label, rotation=60, fontsize=7)
        ax.set_title(tt.TYPES[kind], fontsize=9)
        ax.set_ylabel("accuracy (%)" if what == "acc" else "1 - L2", fontsize=8)
        ax.legend(fontsize=6)
    for ax in axes.flat[len(kinds):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_ranges(table: pd.DataFrame, kinds=None):
    """Fig. 2: invariance accuracy of every magnitude of a type (darker = wider range) and of the baseline."""
    import matplotlib.pyplot as plt

    kinds = [k for k in (kinds or table.kind.unique()) if table[(table.kind == k) & (table.group == k)]
             .member.nunique() > 1]
    fig, axes = plt.subplots(1, max(1, len(kinds)), figsize=(4.2 * max(1, len(kinds)), 3), squeeze=False)
    for ax, kind in zip(axes.flat, kinds):
        t = table[table.kind == kind]
        ms = [m for m in t.member.unique() if m.kind is not None]
        base = [m for m in t.member.unique() if m.kind is None][0]
        for i, m in enumerate([base, *ms]):
            r = t[t.member == m].reset_index(drop=True)
            color = "black" if m.kind is None else plt.cm.Blues(0.4 + 0.6 * (i / len(ms)))
            ax.plot(range(len(r)), r.inv_acc, marker="o", ms=3, color=color, label=m.name)
        ax.set_xticks(range(len(r)), r.label, rotation=60, fontsize=7)
        ax.set_title(f"{tt.TYPES[kind]}: invariance by training range", fontsize=9)
        ax.set_ylabel("accuracy (%)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def scale_readings(S: Settings) -> dict:
    """The sizes chapter C1's prose states about its run, taken from the settings (never typed in the prose):
    ``arch``, ``n_train``, ``epochs``, ``n_fit`` (images the maps are fitted on), ``n_eval`` (images they are
    scored on), ``dataset``.

    Example
    -------
    >>> from invlib.papers.c.equivariance import settings
    >>> r = scale_readings(settings("cpu"))
    >>> r["n_fit"] == settings("cpu").n_fit, r["arch"]
    (True, 'small_resnet18')
    """
    return dict(arch=S.arch, n_train=S.n_train, epochs=S.epochs, n_fit=S.n_fit, n_eval=S.n_eval, dataset=S.dataset)


def report_c1(run, table: pd.DataFrame, acc: pd.DataFrame, seconds: dict | None = None) -> None:
    """The scoreboard rows of chapter C1, each decided from this run's numbers: ``table`` from
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
    _record(run, "sec6.1/augmentation_raises_invariance",
            ours=f"over the grid {overall.mean():+.1f} points on average over {len(overall)} types (against each "
                 "baseline: " + _values(each.rsub(summary.aug_inv, axis=0).mean()) + "), beyond the range "
                 f"{beyond.mean():+.1f} over {len(beyond)} types; per type " + _values(overall),
            effects={"over the grid": _per_type(overall), "beyond the range": _per_type(beyond)}
            if len(summary) else results.not_measurable("the family has no augmented network"))
    not_colour = gaps.drop(index="color_jitter", errors="ignore")
    per_seed = not_colour.median(axis=0) if len(not_colour) else pd.Series(dtype=float)
    _record(run, "sec6.1/baseline_equivariance_gap",
            ours="median over the non-colour types: " + _values(per_seed) + " points (per baseline); per type "
                 "(mean of the baselines): " + _values(gaps.mean(axis=1)) + " points (eq - inv)",
            effects=per_seed.to_numpy() if len(not_colour)
            else results.not_measurable("the family has no type but colour jitter"))
    inside = summary.dropna(subset=["aug_gap_inside", "base_gap_inside"])
    _record(run, "sec6.1/augmentation_collapses_structure",
            ours=", ".join(f"{k} {r.aug_gap_inside:+.1f} vs {r.base_gap_inside:+.1f}" for k, r in inside.iterrows())
                 + " points (augmented vs baseline, eq - inv inside the training range)",
            effects={"small": _per_type(inside.aug_gap_inside),
                     "below the baseline": _per_type(inside.aug_gap_inside - inside.base_gap_inside)}
            if len(inside) else results.not_measurable("no augmented network has grid values inside its range"))
    wider = ranges.wide_inv - ranges.narrow_inv if len(ranges) else pd.Series(dtype=float)
    _record(run, "fig2/wider_range_more_robust",
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


# ------------------------------------------------------------------------------ C2: Fig. 3, 10-12
def tsne(dist: Distances, seed: int = 0) -> np.ndarray:
    """Fig. 11: a 2-D t-SNE embedding ``(M, 2)`` of the Eq. 4 distance matrix (scikit-learn, precomputed metric,
    random initialisation; the paper found it unstable across initialisations)."""
    from sklearn.manifold import TSNE

    m = len(dist.names)
    return TSNE(2, perplexity=min(5.0, (m - 1) / 3), metric="precomputed", init="random",
                random_state=seed).fit_transform(dist.total)


def plot_distances(dist: Distances, knn: pd.DataFrame, groups: pd.DataFrame, seed: int = 0):
    """Figs. 3, 11, 12 side by side: K-NN same-type rate vs chance, the type heatmap, the t-SNE embedding and the
    asymmetry heatmap."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(19, 4.3))
    ax = axes[0]
    ax.plot(knn.index, knn.rate, "o-", label="same-type pairs")
    ax.plot(knn.index, knn.chance, "--", color="gray", label="chance")
    ax.set_xlabel("K nearest neighbours")
    ax.set_ylabel("share of same-type pairs")
    ax.set_title(f"Fig. 3a ({int(knn.pairs.iloc[0])} ordered pairs)")
    ax.legend()
    for ax, frame, title in ((axes[1], groups, "Fig. 3b: mean distance by type"),
                             (axes[3], dist.frame("asymmetry"), "Fig. 12: |d(i,j) - d(j,i)|")):
        im = ax.imshow(frame.values.astype(float), cmap="viridis")
        short = [str(n)[:14] for n in frame.index]
        ax.set_xticks(range(len(frame)), short, rotation=90, fontsize=6)
        ax.set_yticks(range(len(frame)), short, fontsize=6)
        ax.set_title(title)
        fig.colorbar(im, ax=ax, fraction=0.046)
    xy = tsne(dist, seed)
    ax = axes[2]
    kinds = list(dict.fromkeys(dist.groups))
    for i, (name, g) in enumerate(zip(dist.names, dist.groups)):
        ax.scatter(*xy[i], color=plt.cm.tab10(kinds.index(g) % 10), s=40)
        ax.annotate(name, xy[i], fontsize=6)
    ax.set_title("Fig. 11: t-SNE of the distances")
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
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
    ``{glue name: text}``: ``c2_partners`` (networks with a same-type partner), ``c2_typical`` (the median Eq. 4
    distance) and ``c2_reading`` (what the verdicts say). ``seconds`` (``{member: seconds}``,
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
    pairs = int(knn.pairs.iloc[0])
    chance_declared = PROTOCOL["sec6.2/same_type_nearest"].parts[""].null
    ev = dict(nearest=_record(
        run, "sec6.2/same_type_nearest",
        ours=f"{rate:.0%} of {pairs} ordered same-type pairs within {k} of {m - 1} neighbours (chance {chance:.0%}); "
             "per network: " + _values(shares, "{:.0%}"),
        effects=results.not_measurable("no two networks of the family share a training type") if not pairs else
        results.not_measurable(f"the family is too small: chance k / (M - 1) = {chance:.2f} is above the declared "
                               f"{chance_declared:g}") if chance > chance_declared else
        results.share_interval(round(rate * pairs), pairs, results.LEVEL["greater"])))
    contrasts = {name: group_contrast(dist, types) for name, types in GROUPS_C.items()}
    missing = [name for name, c in contrasts.items() if c is None]
    ev["groups"] = _record(
        run, "sec6.2/transform_groups",
        ours="; ".join(f"{n}: {c.mean():+.3f} ({_values(c, '{:+.3f}')})" for n, c in contrasts.items()
                       if c is not None) + " (Eq. 4 distance to the group's other types minus to the rest)",
        effects=results.not_measurable(f"the family lacks the types of the {' and '.join(missing)} group")
        if missing else {name: c.to_numpy() for name, c in contrasts.items()})
    pairs = m * (m - 1) // 2  # now: every unordered pair of networks
    level = max(results.LEVEL["greater"], 1 - 0.05 / max(pairs, 1))  # Bonferroni over the pairs
    asym = asymmetry_intervals(dist, level)
    typical = float(np.median(dist.total[~np.eye(m, dtype=bool)])) if m > 1 else float("nan")
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
    return dict(c2_partners=str(len(shares)), c2_typical=f"{typical:.3f}", c2_reading=_c2_reading(ev))


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


def _c2_reading(ev: dict) -> str:
    """The prose's reading of chapter C2's verdicts (:func:`invlib.results.phrase`), one sentence per claim."""
    return " ".join([
        results.phrase(ev["nearest"], reproduced="Networks trained with the same type are among each other's "
                       "nearest neighbours here too.", not_reproduced="Networks trained with the same type are not "
                       "among each other's nearest neighbours as often as the paper found.",
                       inconclusive="Whether networks of the same type are each other's nearest neighbours, this run "
                       f"cannot decide ({ev['nearest'].text()})."),
        results.phrase(ev["groups"], reproduced="Both groups of types the paper saw are nearer each other than the "
                       "rest.", partly="Only one of the paper's two groups of types is nearer each other than the "
                       "rest.", not_reproduced="Neither of the paper's groups of types is nearer each other than the "
                       "rest by 5 % of the paper's typical distance.",
                       inconclusive="Whether the paper's groups of types are nearer each other than the rest, this run "
                       "cannot decide.", not_measurable="The family lacks some of the types of the paper's groups."),
        results.phrase(ev["asymmetry"], reproduced="Some pairs' one-way distances differ by more than 5 % of a typical "
                       "distance, beyond the noise of the evaluation images.", not_reproduced="No pair's one-way "
                       "distances differ by as much as 5 % of a typical distance.", inconclusive="Whether some pair's "
                       "one-way distances differ by 5 % of a typical distance, this run cannot decide."),
        results.phrase(ev["transfer"], reproduced="On the unseen data set the augmented networks stay more invariant "
                       "than the baselines, and close to their own data.", partly="On the unseen data set only one "
                       "half of the transfer claim holds (the claims table says which).", not_reproduced="On the "
                       "unseen data set the augmented networks neither stay more invariant than the baselines (by a "
                       "tenth of the 1 - L2 scale) nor close to their own data.", inconclusive="Whether invariance "
                       "carries over to the unseen data set, this run cannot decide at its number of types.",
                       not_measurable="There is no second data set in this run.")])


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
    its control, so paired); returns the prose's facts ``{glue name: text}`` (``c3_reading``). Where ``table`` has
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
    return dict(c3_reading=_c3_reading(ev, ch))


def _c3_reading(ev: dict, ch: pd.DataFrame) -> str:
    """The prose's reading of chapter C3's verdicts (:func:`invlib.results.phrase`)."""
    n = f"{len(ch)} type{'s' if len(ch) != 1 else ''}"
    mean = f"{ch.equivariance.mean():+.2f} points on average"
    out = [results.phrase(
        ev["raised"], reproduced=f"Here fine-tuning with Eq. 7 raised equivariance over the {n} ({mean}),",
        not_reproduced=f"Here fine-tuning with Eq. 7 did not raise equivariance by half the paper's gain over the {n} "
        f"({mean}),", inconclusive=f"Whether fine-tuning with Eq. 7 raised equivariance here, this run cannot decide "
        f"over its {n} ({ev['raised'].text()}),")]
    out.append(results.phrase(
        ev["kept"], reproduced="and clean accuracy was kept within the paper's slight drop.",
        not_reproduced="and clean accuracy fell by more than the paper's slight drop.",
        inconclusive="and whether clean accuracy was kept within a slight drop is undecided."))
    if "control" in ev:
        out.append(results.phrase(
            ev["control"], reproduced="The control separates the two: Eq. 7's terms add equivariance beyond what the "
            "same updates give without them.", not_reproduced="The control separates the two: Eq. 7's terms add less "
            "than half the paper's gain beyond the same updates without them, so what moved is continued training.",
            inconclusive="Whether Eq. 7's terms add anything beyond the same updates without them, the control "
            f"cannot tell at this budget ({ev['control'].text()})."))
    return " ".join(out)


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
    fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(t)), 3.4))
    x, w = np.arange(len(t)), 0.8 / len(bars)
    for i, (col, label) in enumerate(bars):
        ax.bar(x + (i - (len(bars) - 1) / 2) * w, t[col], w, label=label)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, [f"{k}: {tr}" for k, tr in zip(t["type"], t["transform"])], rotation=75, fontsize=7)
    ax.set_ylabel("after - before (points)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
