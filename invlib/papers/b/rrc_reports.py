"""Paper B's RandomResizedCrop reports (chapters B1, B2, B5's App. D.1 and B6): the paper's tables beside this run,
the claims with their verdicts and the figures. The method is :mod:`invlib.papers.b.rrc` (B5's Fig. 4 and App. E.2
are :mod:`invlib.papers.b.grounding_reports`').

The reports compute each claim's effects (``b1_effects``, ``b2_effects``, ``b6_effects``: by claim id, per part)
and record them with the claim's declaration in paper B's protocol (:data:`invlib.papers.b.protocol.PROTOCOL`,
written before the run: the quantity, the smallest effect that matters and why); :func:`invlib.protocol.decide`
alone decides. The claims about what training does (B1, B2's Table 1b, B6) take a seed as their replicate, paired
by seed, and need three seeds: the ``cpu`` profile trains three of B1's, B2's and of each Augerino weight; App. B's
replicate is a run, two seeds of its methods compared with each other, and ``helped_runs`` sets three (six seeds of
them). Table A1 and the size ratios are deterministic; App. D.1's WordNet part takes a hurt class as its replicate.
Each report records what one replicate of its families cost (:func:`report_replicates`).

Example
-------
>>> ev = Evaluation(np.zeros(4, int), ["a"], None, {NONE: np.ones((2, 4), int)}, {NONE: np.array([90.0, 95.0])})
>>> regime_evidence(ev).text()
'+92.5 [+60.7, +124], 2 seeds; > 4.4; needs >= 3 seeds'
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import torch

from ... import crops, data, metrics
from ...pages import number
from ...protocol import decide
from ...results import LEVEL, Evidence, Interval, exact, not_measurable, paired, phrase, t_interval
from ...verdicts import INCONCLUSIVE, NOT_MEASURABLE, _plural
from .protocol import OVERFIT_GAP, PREMISE, PROTOCOL
from .rrc import IOU_METHODS, NAMES, NONE, PAPER_TOP1, RRC, Evaluation, Settings, augerino_seconds, table_a1_shapes


def plot_methods(ds: data.Dataset, S: Settings, n: int = 5, index: int = 0):
    """One stored image under each method of ``S.methods``: its ``n`` boxes drawn on the image, then the ``n``
    crops the model sees (:func:`invlib.plots.mosaic`, the boxes as its overlay)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from ... import plots

    x = ds.images[index:index + 1].float() / 255
    h, w = x.shape[-2:]
    gen = torch.Generator().manual_seed(S.seed)
    rows, boxes = {}, {}
    for m in S.methods:
        label = NAMES[m].replace(" + ", "\n+ ")
        boxes[label] = crops.Crop(m, S.size, translate=S.translate).boxes(n, h, w, gen)
        rows[label] = [x[0], *crops.resample(x.expand(n, -1, -1, -1), boxes[label], S.size)]

    def draw_boxes(ax, label, column):
        for k, (x0, y0, x1, y1) in enumerate(boxes[label].tolist() if column == 0 else []):
            ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, lw=0.8, color=plt.cm.tab10(k)))

    titles = ["boxes on the image", *(f"crop {k + 1}" for k in range(n))]
    return plots.mosaic(rows, col_titles=titles, overlay=draw_boxes, size=(1.3, 1.35), fontsize=8)


# ------------------------------------------------------------------------------ B1: Table 1a, App. B, D.1, F
def table_1a(ev: Evaluation) -> pd.DataFrame:
    """Table 1a: top-1 (%) mean and SEM over seeds per method, the gain over no augmentation, the training accuracy
    over the last epoch (``train``, on the method's own augmented crops), the paper's top-1."""
    rows = []
    base = ev.accuracy(NONE).mean() if NONE in ev.preds else np.nan
    for m in ev.preds:
        acc = ev.accuracy(m)
        train = np.mean(ev.train[m]) if m in ev.train else np.nan
        rows.append(dict(method=NAMES[m], top1=acc.mean(), sem=metrics.sem(acc), gain=acc.mean() - base,
                         train=train, seeds=len(acc), paper=PAPER_TOP1.get(m, "not in the text")))
    return pd.DataFrame(rows).set_index("method").round(2)


def table_1a_page(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`table_1a` for the page: its columns named for a reader, the paper's top-1 a number where its text
    states one and empty elsewhere.

    Example
    -------
    >>> t = pd.DataFrame(dict(top1=[70.0], sem=[0.5], gain=[2.0], train=[90.0], seeds=[3], paper=["not in the text"]))
    >>> table_1a_page(t).columns[-1], bool(table_1a_page(t).iloc[0].isna().iloc[-1])
    ("paper's top-1 (%)", True)
    """
    return table.assign(paper=pd.to_numeric(table.paper, errors="coerce")).rename(columns={
        "top1": "top-1 (%)", "sem": "SEM", "gain": "gain over none (points)", "train": "training top-1 (%)",
        "seeds": "seeds", "paper": "paper's top-1 (%)"})


def plot_table_1a(table: pd.DataFrame, ax=None):
    """Bar chart of Table 1a with SEM error bars; the paper's values, where its text states them, as black ticks
    (the paper's ImageNet top-1 beside this run's: compare orderings, not levels)."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(8, 3.2))[1]
    y = np.arange(len(table))
    ax.barh(y, table.top1, xerr=table["sem"].fillna(0), color="tab:blue", alpha=0.8, label="this run")
    paper = pd.to_numeric(table.paper, errors="coerce")  # "not in the text" -> NaN, not drawn
    ax.scatter(paper, y, marker="|", s=300, color="black", zorder=3, label="paper (where the text states it)")
    ax.set_yticks(y, table.index)
    ax.invert_yaxis()
    lo = min(table.top1.min(), paper.min()) - 3 * max(table["sem"].fillna(0).max(), 0.5)
    ax.set_xlim(lo, max(table.top1.max(), paper.max()) + 2)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_xlabel("top-1 on the central crop (%)")
    ax.set_title("Table 1a: the crop family (mean and SEM over seeds)")
    return ax


def plot_iou(iou: pd.DataFrame, ax=None):
    """App. B's IoU matrix as a heat map."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(5, 4))[1]
    im = ax.imshow(iou.values.astype(float), vmin=0, vmax=1, cmap="viridis")
    short = [n.replace(" + RandomSizeCenterCrop", " + RSCC") for n in iou.index]
    ax.set_xticks(range(len(iou)), short, rotation=30, ha="right")
    ax.set_yticks(range(len(iou)), short)
    for i in range(len(iou)):
        for j in range(len(iou)):
            v = float(iou.values[i, j])
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=9, color="black" if v > 0.6 else "white")
    ax.figure.colorbar(im, ax=ax, label="mean IoU of the helped test images")
    return ax


def plot_zoom(curve: pd.DataFrame, ax=None):
    """Fig. A7: top-1 against the largest zoom of the validation crops, RRC vs no augmentation."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(5, 3.2))[1]
    for name, g in curve.groupby("method", sort=False):
        ax.errorbar(g.zoom, g.top1, yerr=g["sem"].fillna(0), marker="o", capsize=3, label=name)
    ax.set_xlabel("largest zoom of the validation crop (per axis)")
    ax.set_ylabel("top-1 (%)")
    ax.legend()
    return ax


# ------------------------------------------------------------------------------ recording the declared claims
# B1's claims, B2's Table 1b and B6 are about what training does: a replicate is a seed, and the methods are paired
# by seed (seed k of every method, Beta shape and Augerino run starts from the same weights and trains on the same
# images), so each effect is a per-seed difference (results.paired). Their tests are declared in the protocol.
def _record(run, effects: dict, cid: str, ours) -> Evidence:
    """Record claim ``cid`` on ``run`` (:meth:`invlib.results.Run.claim`) from its declaration and this run's
    ``effects[cid]``; returns its evidence for the prose (the same one decision function)."""
    run.claim(PROTOCOL[cid], ours=ours, effects=effects[cid])
    return run.evidence[cid]


def _part(cid: str, name: str, effect) -> Evidence:
    """The evidence of part ``name`` of claim ``cid`` on its own, for the prose: its declaration as a claim of that
    one part, decided by :func:`invlib.protocol.decide`."""
    return decide(PROTOCOL[cid].part(name), effect)


def _missing(ran, *methods) -> Evidence | None:
    """Not measurable where a method of the claim was not run (-p methods=...): structural, not noise."""
    lost = [NAMES[m] for m in methods if m not in ran]
    return not_measurable(f"not run at this profile: {', '.join(lost)}") if lost else None


def overfit_gaps(ev: Evaluation) -> np.ndarray | list:
    """The regime's effect: training minus test top-1 of the model without augmentation, per seed (none without
    it)."""
    return ev.overfit_gaps() if NONE in ev.train and NONE in ev.preds else []


def regime_evidence(ev: Evaluation) -> Evidence:
    """The premise the crop claims need, declared as their gate: the model without augmentation overfits, training
    minus test top-1 per seed above :data:`~invlib.papers.b.protocol.OVERFIT_GAP` points.

    Example
    -------
    >>> ev = Evaluation(np.zeros(4, int), ["a"], None, {NONE: np.ones((3, 4), int)}, {NONE: np.array([100., 99, 98])})
    >>> regime_evidence(ev).verdict
    'reproduced'
    """
    return _part("table1a/translation_recovers_rrc", PREMISE, overfit_gaps(ev))


def iou_beyond_chance(a, b, pool_a, pool_b) -> float:
    """IoU of lists ``a`` and ``b`` beyond chance, ``(IoU - c) / (1 - c)``: ``c`` is the IoU two lists of their sizes
    would have if each were drawn at random from its pool (``a`` from ``pool_a``, ``b`` from ``pool_b``: the samples
    each seed's model without augmentation gets wrong), their expected overlap ``|a| |b| |pool_a & pool_b| / (|pool_a|
    |pool_b|)`` over their expected union. 0: no more alike than chance; 1: identical; NaN for two empty lists.

    Example
    -------
    >>> pool = range(100)
    >>> round(iou_beyond_chance(range(10), range(10, 20), pool, pool), 3)  # disjoint: below chance (c = 1/19)
    -0.056
    >>> iou_beyond_chance(range(10), range(10), pool, pool)
    1.0
    """
    a, b, pool_a, pool_b = (set(np.asarray(list(x)).tolist()) for x in (a, b, pool_a, pool_b))
    if not a and not b:
        return math.nan
    shared = len(a) * len(b) * len(pool_a & pool_b) / (len(pool_a) * len(pool_b)) if pool_a and pool_b else 0.0
    chance = shared / (len(a) + len(b) - shared)
    return (metrics.iou(a, b) - chance) / (1 - chance) if chance < 1 else math.nan


def helped_replicates(ev: Evaluation, methods=IOU_METHODS) -> pd.DataFrame:
    """App. B over independent replicates: seeds (0, 1), (2, 3), ... of every method, one row each. A seed's list
    of a method is the samples the model without augmentation of that seed gets wrong and the method's model of
    that seed right; the lists of the two seeds are compared: ``within`` (mean IoU of a method's two lists),
    ``across`` (mean IoU of two methods' lists, one of each seed) and ``largest`` (the largest of these IoUs, a
    pair of methods counted in both orders); ``within_beyond``, ``across_beyond`` and ``largest_beyond`` the same
    of the IoU beyond chance (:func:`iou_beyond_chance`, the pools the wrong samples of the two seeds' models without
    augmentation). Empty without the models without augmentation or two methods.

    Example
    -------
    >>> y = np.arange(8) % 2
    >>> wrong = (y + 1) % 2
    >>> first, last = np.where(np.arange(8) < 4, y, wrong), np.where(np.arange(8) < 4, wrong, y)
    >>> ev = Evaluation(y, ["a", "b"], None, {NONE: np.stack([wrong] * 2), "translate": np.stack([first] * 2),
    ...                                        "fixed_size_random_crop": np.stack([last] * 2)})
    >>> helped_replicates(ev).round(2).to_dict("records")  # each method fixes the same half on both seeds
    [{'within': 1.0, 'across': 0.0, 'largest': 1.0, 'within_beyond': 1.0, 'across_beyond': -0.5, \
'largest_beyond': 1.0}]
    """
    methods = [m for m in methods if m in ev.preds] if NONE in ev.preds else []
    lists = {m: [metrics.helped(b, p, ev.labels) for b, p in zip(ev.preds[NONE], ev.preds[m])] for m in methods}
    pools = [np.flatnonzero(np.asarray(b) != np.asarray(ev.labels)) for b in ev.preds.get(NONE, ())]
    seeds = min((len(v) for v in lists.values()), default=0) if len(methods) > 1 else 0
    rows = []
    for a in range(0, seeds - 1, 2):
        row = {}
        beyond = functools.partial(iou_beyond_chance, pool_a=pools[a], pool_b=pools[a + 1])
        for suffix, measure in (("", metrics.iou), ("_beyond", beyond)):
            cell = {(m, n): np.mean([measure(lists[m][a], lists[n][a + 1]), measure(lists[n][a], lists[m][a + 1])])
                    for m in methods for n in methods}
            with np.errstate(all="ignore"):  # NaN: lists that fill their pools have no chance to beat
                row |= {f"within{suffix}": float(np.nanmean([cell[m, m] for m in methods])),
                        f"across{suffix}": float(np.nanmean([cell[m, n] for m in methods for n in methods if m != n])),
                        f"largest{suffix}": float(np.nanmax(list(cell.values())))}
        rows.append(row)
    return pd.DataFrame(rows, columns=[f"{k}{suffix}" for suffix in ("", "_beyond")
                                       for k in ("within", "across", "largest")])


def hurt_class_interval(ev: Evaluation) -> tuple[Interval, str]:
    """Table A2's test with multiplicity control: per class, RRC's top-1 minus no augmentation's of the same seed,
    a t-interval over seeds at the Bonferroni level ``1 - 0.05 / K`` (K classes); returns the interval of the
    most-hurt class's effect, ``[min lo, min hi]`` over the classes (simultaneous intervals cover the minimum of
    the class means), and that class's name. Its upper end below 0: some class is hurt; its lower end above 0:
    every class is helped.

    Example
    -------
    >>> y = np.arange(40) % 4
    >>> rrc = np.stack([np.where(y == 3, (y + 1) % 4, y)] * 3); rrc[:, :3] = 0  # class 3 always wrong
    >>> ev = Evaluation(y, list("abcd"), None, {RRC: rrc, NONE: np.stack([y, y, np.where(y == 0, 1, y)])})
    >>> iv, name = hurt_class_interval(ev)
    >>> name, iv.estimate, iv.hi < 0, round(iv.level, 4)
    ('d', -100.0, True, 0.9875)
    """
    diff = paired(ev.per_class(RRC), ev.per_class(NONE)).reshape(ev.per_class(RRC).shape)
    keep = np.flatnonzero(np.isfinite(diff).all(0))
    level = 1 - (1 - LEVEL["less"]) / max(len(keep), 1)
    ivs = [t_interval(diff[:, c], level) for c in keep]
    if not ivs:
        return Interval(math.nan, math.nan, math.nan, len(diff), level, "t"), ""
    worst = int(np.argmin([iv.estimate for iv in ivs]))
    return Interval(ivs[worst].estimate, float(np.min([iv.lo for iv in ivs])), float(np.min([iv.hi for iv in ivs])),
                    ivs[worst].n, level, "t"), ev.classes[keep[worst]]


def zoom_falls(curve: pd.DataFrame) -> dict[str, dict[str, np.ndarray]]:
    """Fig. A7 per seed, from :func:`~invlib.papers.b.rrc.zoom_curve`'s ``per_seed``: for each method, ``last``
    (top-1 on the central crop minus at the largest zoom) and ``first`` (minus at the smallest zoom above 1).

    Example
    -------
    >>> c = pd.DataFrame(dict(method="RRC", zoom=[1.0, 2.0, 3.0], per_seed=[(70, 72), (69, 70), (60, 61)]))
    >>> {k: v.tolist() for k, v in zoom_falls(c)["RRC"].items()}
    {'last': [10.0, 11.0], 'first': [1.0, 2.0]}
    """
    out = {}
    for name, g in curve.groupby("method", sort=False):
        g = g.sort_values("zoom")
        at = {z: np.asarray(v, dtype=float) for z, v in zip(g.zoom, g.per_seed)}
        zooms = sorted(at)
        out[name] = dict(last=at[zooms[0]] - at[zooms[-1]], first=at[zooms[0]] - at[zooms[min(1, len(zooms) - 1)]])
    return out


def b1_effects(ev: Evaluation, curve: pd.DataFrame, helped: Evaluation | None = None) -> dict:
    """The effects of every claim of chapter B1, by claim id and part (the parts the protocol declares): paired
    per-seed differences of top-1; the Table 1a claims carry their premise as a gate (:func:`overfit_gaps`: unless
    the model without augmentation overfits, they are not decided) and, like Table A2, RRC's own gain where the
    claim presupposes it. App. B's lists are compared beyond chance (:func:`iou_beyond_chance`); its runs come
    from ``helped`` (App. B's family, :func:`~invlib.papers.b.rrc.train_helped`: more seeds of its methods), else
    from ``ev``."""
    ran = set(ev.preds)
    t, ts, rscc, fsrc = "translate", "translate_random_size_center_crop", "random_size_center_crop", \
        "fixed_size_random_crop"
    acc = {m: ev.accuracy(m) for m in ran}
    gain = {m: paired(acc[m], acc[NONE]) for m in ran if NONE in ran}
    regime = overfit_gaps(ev)
    out = {}
    out["table1a/translation_recovers_rrc"] = _missing(ran, NONE, t, RRC) or {
        PREMISE: regime, "RRC helps": gain[RRC],
        "T.(30%) recovers more than half": gain[t] - 0.5 * gain[RRC]}
    out["table1a/scale_alone_less"] = _missing(ran, NONE, rscc, ts, RRC) or {
        PREMISE: regime, "RSCC below T + RSCC": paired(acc[ts], acc[rscc]),
        "RSCC below RRC": paired(acc[RRC], acc[rscc])}
    out["table1a/neither_part_matches_rrc"] = _missing(ran, NONE, rscc, fsrc, RRC) or {
        PREMISE: regime, "RSCC beats none": gain[rscc], "FSRC beats none": gain[fsrc],
        "RSCC below RRC": paired(acc[RRC], acc[rscc]), "FSRC below RRC": paired(acc[RRC], acc[fsrc])}
    helped = ev if helped is None else helped
    reps = helped_replicates(helped)  # a replicate is a run: the models of two seeds, compared with each other
    out["appB/no_pattern_in_helped_samples"] = not_measurable(
        "App. B needs the models without augmentation and two translation-type methods") if NONE not in helped.preds \
        or len([m for m in IOU_METHODS if m in helped.preds]) < 2 else {
        "every IoU beyond chance below 0.2": reps.largest_beyond.to_numpy(),
        "within no higher than across": (reps.within_beyond - reps.across_beyond).to_numpy()}
    out["tableA2/classes_consistently_hurt"] = _missing(ran, NONE, RRC) or {
        "RRC helps overall": gain[RRC], "a class hurt (Bonferroni over classes)": hurt_class_interval(ev)[0]}
    falls = zoom_falls(curve)
    r, n = falls[NAMES[RRC]], falls[NAMES[NONE]]
    out["figA7/rrc_partly_invariant_to_zoom"] = {
        "RRC falls": r["last"], "none falls": n["last"], "RRC falls less": paired(n["last"], r["last"]),
        "RRC falls at the smallest zoom": r["first"]}
    return out


B1_SEED_CLAIMS = ("table1a/translation_recovers_rrc", "table1a/scale_alone_less", "table1a/neither_part_matches_rrc",
                  "tableA2/classes_consistently_hurt", "figA7/rrc_partly_invariant_to_zoom")  # B1's claims on seeds
B1_RUN_CLAIMS = ("appB/no_pattern_in_helped_samples",)  # on App. B's runs (pairs of seeds)


def report_replicates(run, parameter: str, seconds, claims, note: str = "", same_as: str = "") -> None:
    """:meth:`invlib.results.Run.replicates` where this run measured what its replicates cost (``seconds``: one per
    replicate; none, e.g. an evaluation made without its models' zoo records: nothing recorded).

    Example
    -------
    >>> from invlib.results import Run
    >>> run = Run("smoke", name="demo")
    >>> report_replicates(run, "seeds", [3.0, 4.0], ["x"]); report_replicates(run, "beta_seeds", [], ["y"])
    >>> sorted(run.replicate_costs), run.replicate_costs["seeds"]["seconds"]
    (['seeds'], [3.0, 4.0])
    """
    if len(seconds):
        run.replicates(parameter, seconds, list(claims), note=note, same_as=same_as)


def record_variance(run, ev: Evaluation) -> None:
    """Record where the spread over seeds of each method's top-1 gain over no augmentation comes from
    (:meth:`invlib.results.Run.variance`, in points per evaluation image, paired by seed): evaluation (the finite
    evaluation set) or training (the seeds); the claims of Table 1a and A2 are made of these gains. Needs two seeds.

    Example
    -------
    >>> from invlib.results import Run
    >>> y = np.arange(6) % 2
    >>> ev = Evaluation(y, ["a", "b"], None, {NONE: np.stack([y, 1 - y]), RRC: np.stack([y, y])})
    >>> run = Run("smoke", name="demo")
    >>> record_variance(run, ev)
    >>> split = run.variance_splits["seeds"][f"{NAMES[RRC]} - {NAMES[NONE]}"]
    >>> split["items"], split["seeds"]
    (6, 2)
    """
    if NONE not in ev.preds:
        return
    right = {m: (p == ev.labels[None]).astype(float) * 100 for m, p in ev.preds.items()}
    for m in ev.preds:
        k = min(len(right[m]), len(right[NONE]))
        if m != NONE and k >= 2:
            run.variance("seeds", f"{NAMES[m]} - {NAMES[NONE]}", right[m][:k] - right[NONE][:k])


def table_1a_seconds(S: Settings, ev: Evaluation) -> list[float]:
    """Per seed of Table 1a, what the seed adds to the zoo's training: its models' training seconds, less those of
    no augmentation and App. B's methods at the seeds App. B's runs train anyway (``2 * S.helped_runs``, family
    ``helped_runs``): a model counted in two families would be priced twice by the plan.

    Example
    -------
    >>> ev = Evaluation(np.arange(2), ["a"], None, {}, seconds={m: np.array([10.0, 12, 14]) for m in (NONE, RRC)})
    >>> from invlib.papers.b.rrc import settings
    >>> table_1a_seconds(settings("smoke", helped_runs=1), ev)  # seeds 0 and 1 are App. B's run 0
    [10.0, 12.0, 28.0]
    """
    return ev.seed_seconds(shared=(NONE, *IOU_METHODS), shared_seeds=2 * S.helped_runs)


def report_b1(run, S: Settings, ev: Evaluation, iou: pd.DataFrame, hurt: pd.DataFrame,
                     curve: pd.DataFrame, helped: Evaluation | None = None) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B1, their effects from :func:`b1_effects` (App. B's from ``helped``, its
    family, where given); returns the evidence by claim id. Records what a seed of Table 1a's family and a run of App.
    B's cost to train (``seeds``, ``helped_runs``: the zoo's training seconds of their models)."""
    record = functools.partial(_record, run, b1_effects(ev, curve, helped))
    report_replicates(run, "seeds", table_1a_seconds(S, ev), B1_SEED_CLAIMS,
                      note="a seed: the models of Table 1a's methods that App. B's runs do not train (the zoo's "
                           "training seconds; no augmentation and App. B's three methods are `helped_runs`' models "
                           "at its seeds, 2 x helped_runs of them)")
    record_variance(run, ev)
    report_replicates(run, "helped_runs", (ev if helped is None else helped).run_seconds([NONE, *IOU_METHODS]),
                      B1_RUN_CLAIMS, note="a run: seeds 2r and 2r + 1 of no augmentation and App. B's three "
                                          "methods (8 models; those of seeds below `seeds` are Table 1a's too)")
    ran = set(ev.preds)
    gain = {m: float(np.mean(ev.accuracy(m) - ev.accuracy(NONE))) if m in ran and NONE in ran else float("nan")
            for m in crops.METHODS}
    run.log("top1", {NAMES[m]: float(ev.accuracy(m).mean()) for m in ev.preds},
            paper={NAMES[m]: v for m, v in PAPER_TOP1.items()})
    run.log("top1_per_seed", {NAMES[m]: ev.accuracy(m).tolist() for m in ev.preds})
    run.log("train_top1", {NAMES[m]: float(np.mean(v)) for m, v in ev.train.items()})
    run.log("overfit_gap", ev.overfit_gap())
    t, ts, rscc, fsrc = "translate", "translate_random_size_center_crop", "random_size_center_crop", \
        "fixed_size_random_crop"
    regime = f"; no augmentation overfits by {ev.overfit_gap():.1f} points"
    out = {}
    out["table1a/translation_recovers_rrc"] = record(
        "table1a/translation_recovers_rrc", f"gain T.(30%) {gain[t]:+.2f}, RRC {gain[RRC]:+.2f} points{regime}")
    out["table1a/scale_alone_less"] = record(
        "table1a/scale_alone_less", f"RSCC {gain[rscc]:+.2f}, T + RSCC {gain[ts]:+.2f}, RRC {gain[RRC]:+.2f} "
                                    f"points{regime}")
    out["table1a/neither_part_matches_rrc"] = record(
        "table1a/neither_part_matches_rrc", f"RSCC {gain[rscc]:+.2f}, FSRC {gain[fsrc]:+.2f}, RRC {gain[RRC]:+.2f} "
                                            f"points over none{regime}")
    off = iou.values[~np.eye(len(iou), dtype=bool)] if len(iou) > 1 else np.full(1, np.nan)
    diag = np.diag(iou.values) if len(iou) else np.full(1, np.nan)
    run.log("helped_iou", iou.to_dict())
    out["appB/no_pattern_in_helped_samples"] = record(
        "appB/no_pattern_in_helped_samples", f"within {np.nanmin(diag):.2f}-{np.nanmax(diag):.2f}, across "
                                             f"{np.nanmin(off):.2f}-{np.nanmax(off):.2f} (every pair of seeds)")
    _, worst = hurt_class_interval(ev) if {RRC, NONE} <= ran else (None, "")
    comparisons = len(ev.preds.get(RRC, ())) * len(ev.preds.get(NONE, ()))
    run.log("hurt_classes", hurt.reset_index().to_dict("records"))
    out["tableA2/classes_consistently_hurt"] = record(
        "tableA2/classes_consistently_hurt", f"{int((hurt.consistently == 'hurt').sum())} of {len(hurt)} classes "
                                             f"hurt in > {S.hurt_share:.0%} of {comparisons} comparisons; most hurt "
                                             f"by the paired mean: {worst or 'none'}")
    falls = zoom_falls(curve)
    mean = lambda m, k: float(np.mean(falls[NAMES[m]][k]))  # noqa: E731
    run.log("zoom_drop", {name: float(np.mean(f["last"])) for name, f in falls.items()})
    out["figA7/rrc_partly_invariant_to_zoom"] = record(
        "figA7/rrc_partly_invariant_to_zoom", f"fall to the largest zoom: RRC {mean(RRC, 'last'):.2f}, none "
                                              f"{mean(NONE, 'last'):.2f} points; RRC at the smallest zoom "
                                              f"{mean(RRC, 'first'):.2f}")
    return out


def _span(ev: Evidence, unit: str = "points") -> str:
    """An interval in words for the prose, e.g. ``"95 % interval -0.4 to +10.7 points, over 3 seeds"``."""
    if ev.verdict == NOT_MEASURABLE:
        return "not measured at this profile"
    units = ev.unit if ev.n == 1 else _plural(ev.unit)
    if not (math.isfinite(ev.lo) and math.isfinite(ev.hi)):
        return f"{ev.n} {units}, too few for an interval"
    return (f"{number(100 * ev.level)} % interval {number(ev.lo, sign=True)} to {number(ev.hi, sign=True)} {unit}, "
            f"over {ev.n} {units}")


def b1_numbers(S: Settings, ev: Evaluation, evidence: dict[str, Evidence]) -> dict:
    """The numbers and short phrases chapter B1's prose quotes (:func:`invlib.results.glue`): the run's data and
    budget, the paper's stated top-1 (``paper_none``, ``paper_parts``), the regime (how much the model without
    augmentation overfits, ``gap`` with its interval in words, ``gap_span``), RRC's gain paired by seed
    (``rrc_gain``, ``rrc_span``), a sentence on each, the settings the sections quote (``hurt_share`` in percent,
    ``zoom_max``, ``n_classes``) and one sentence on the claims left undecided (:func:`undecided`)."""
    none = ev.accuracy(NONE)
    gain = _part("tableA2/classes_consistently_hurt", "RRC helps overall", paired(ev.accuracy(RRC), none))
    regime = regime_evidence(ev)
    return dict(dataset=S.dataset, n_train=S.n_train, epochs=S.epochs, seeds=S.seeds, size=S.size,
                paper_none=PAPER_TOP1[NONE], paper_parts=PAPER_TOP1["random_size_center_crop"],
                none_train=float(np.mean(ev.train.get(NONE, np.nan))), none_test=float(none.mean()),
                gap=ev.overfit_gap(), overfit_gap=OVERFIT_GAP, gap_span=_span(regime), rrc_gain=gain.estimate,
                rrc_span=_span(gain), hurt_share=100 * S.hurt_share, zoom_max=max(S.zooms),
                n_classes=len(ev.classes),
                regime_sentence=phrase(regime, reproduced="So the run is in the regime where a crop can pay.",
                                       not_reproduced="So the run is outside the regime where a crop can pay, and "
                                                      "the crop claims are not decided: their premise is not met.",
                                       inconclusive=f"{S.seeds} seeds cannot yet say whether the run is in that "
                                                    "regime, and every crop claim waits on it."),
                rrc_sentence=phrase(gain, reproduced="RRC helps at this budget.",
                                    not_reproduced="RRC does not help by the point that matters here.",
                                    inconclusive=f"{S.seeds} seeds cannot yet say whether RRC helps."),
                open_sentence=undecided(evidence))


def undecided(evidence: dict[str, Evidence]) -> str:
    """One sentence for the claims of ``evidence`` that this run leaves undecided: how many, and how many
    replicates would decide them if the effects and spreads measured here are the true ones (each claim's
    ``n_needed``), or why no number can be said.

    Example
    -------
    >>> from invlib.verdicts import decide
    >>> held = decide([1.0, 1.1, 1.2], reason="gain", unit="seed")
    >>> ev = {"a": decide([1.0, 2.0], reason="gain", unit="seed", n_min=3), "b": held, "c": not_measurable("no boxes")}
    >>> undecided(ev)  # doctest: +NORMALIZE_WHITESPACE
    '1 of the 2 claims measured is undecided at this budget; at the effect and spread measured here, 4 seeds would
    decide it.'
    >>> undecided({"b": held})
    'Every claim this run measures is decided.'
    """
    measured = [e for e in evidence.values() if e.verdict != NOT_MEASURABLE]
    open_ = [e for e in measured if e.verdict == INCONCLUSIVE]
    if not measured:
        return ""
    if not open_:
        return "Every claim this run measures is decided."
    k, m = len(open_), len(measured)
    head = (f"{'The' if k == 1 else 'All'} {'' if k == 1 else f'{k} '}claim{'s' * (k > 1)} measured "
            f"{'is' if k == 1 else 'are'}" if k == m else f"{k} of the {m} claims measured {'is' if k == 1 else 'are'}")
    needs: dict[str, list[int]] = {}
    why = []
    for e in open_:
        if e.n_needed:
            needs.setdefault(e.unit, []).append(int(e.n_needed))
        else:
            why.append(e.n_needed_why or next((p.n_needed_why for _, p in e.parts if p.n_needed_why), ""))
    bits = []
    if needs:
        counted = sum(len(v) for v in needs.values())
        spans = [f"{min(v)} {_plural(u)}" if min(v) == max(v) else f"{min(v)} to {max(v)} {_plural(u)}"
                 for u, v in needs.items()]
        whom = ("it" if k == 1 else "them") if counted == k else f"{counted} of them"
        bits.append(f"at the effect{'s' * (k > 1)} and spread{'s' * (k > 1)} measured here, {' and '.join(spans)} "
                    f"would decide {whom}")
    if why:
        reasons = "; ".join(dict.fromkeys(w for w in why if w))
        bits.append(f"for {'it' if k == 1 else len(why) if needs else 'them'}, no number can be said"
                    + (f" ({reasons})" if reasons else ""))
    return f"{head} undecided at this budget; {'; '.join(bits)}."


def tally(evidence: dict[str, Evidence]) -> str:
    """How many claims got each verdict, e.g. ``"2 reproduced, 4 inconclusive at this budget"``.

    Example
    -------
    >>> tally({"a": not_measurable("no boxes"), "b": not_measurable("no synsets")})
    '2 not measurable at this profile'
    """
    counts = pd.Series([e.verdict for e in evidence.values()]).value_counts()
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def report_hurt_wordnet(run, report: dict) -> Evidence:
    """Chapter B5's row for App. D.1: the classes RRC hurts are not related in WordNet. Two parts: RRC helps overall
    (``report["rrc_gains"]``, per seed; otherwise "hurt" means most classes), and per hurt class its similarity to
    the other hurt classes minus to the others (``report["differences"]``, :func:`~invlib.papers.b.rrc.hurt_wordnet`;
    a t-interval over the hurt classes). Not measurable only without synsets. Returns its evidence."""
    run.log("d1_wordnet", {k: v for k, v in report.items() if k != "seconds"})
    report_replicates(run, "rrc.seeds", report.get("seconds", []), ["appD1/hurt_classes_unrelated"],
                      note="chapter B1's seeds (invlib.papers.b.rrc.Settings.seeds, B1's parameter `seeds`; chapter "
                           "B5 reads B1's models and has no parameter of its own for them): a seed's RRC and "
                           "no-augmentation models", same_as="b1_rrc_decomposition:seeds")
    effects = not_measurable("the classes have no WordNet synsets (a folder of your own)") if not report.get(
        "wordnet", True) else {"RRC helps overall": report.get("rrc_gains", []),
                               "hurt classes no closer to each other": report["differences"]}
    return _record(run, {"appD1/hurt_classes_unrelated": effects}, "appD1/hurt_classes_unrelated",
                   f"RRC gain {report.get('rrc_gain', np.nan):+.2f} points; {report['n_hurt']} hurt classes "
                   f"({', '.join(report['hurt']) or 'none'}): among {report['among']:.3f}, with helped "
                   f"{report['with_helped']:.3f}, with the rest {report['with_rest']:.3f} (wup)")


def plot_beta_shapes(S: Settings, ax=None):
    """Fig. A1: the density of RRC's area fraction ``s`` for each Beta shape of Table A1
    (:func:`~invlib.papers.b.rrc.table_a1_shapes`; a histogram of 200,000 draws)."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(5.5, 3.2))[1]
    u = torch.rand(200_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for a in table_a1_shapes(S):
        ax.hist(crops.sample_scale(u, (0.08, 1.0), a).numpy(), bins=60, density=True, histtype="step",
                label=f"shape {a:g}")
    ax.set_xlabel("area fraction s of the crop")
    ax.set_ylabel("density")
    ax.set_ylim(0, 6)
    ax.legend(fontsize=8)
    return ax


def table_1b(ev: Evaluation) -> pd.DataFrame:
    """Table 1b: top-1 (%) mean and SEM per Beta shape."""
    rows = [dict(shape=a, top1=ev.accuracy(a).mean(), sem=metrics.sem(ev.accuracy(a)), seeds=len(ev.preds[a]))
            for a in ev.preds]
    return pd.DataFrame(rows).set_index("shape").round(2)


def plot_table_1b(t1b: pd.DataFrame, ax=None):
    """Table 1b as top-1 (± SEM) against the Beta shape (log axis), with Var(1/s) on a second axis."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(5.5, 3.2))[1]
    ax.errorbar(t1b.index, t1b.top1, yerr=t1b["sem"].fillna(0), marker="o", capsize=3, color="tab:blue")
    ax.set_xscale("log")
    ax.set_xticks(list(t1b.index), [f"{a:g}" for a in t1b.index])
    ax.minorticks_off()
    ax.set_xlabel("Beta shape (1 = uniform, RRC)")
    ax.set_ylabel("top-1 (%)", color="tab:blue")
    if "var_inv_s" in t1b:
        twin = ax.twinx()
        twin.plot(t1b.index, t1b.var_inv_s, "s--", color="tab:gray")
        twin.set_ylabel("Var(1/s)", color="tab:gray")
    ax.set_title("Table 1b: top-1 per shape of the scale distribution")
    return ax


def b2_effects(beta: pd.DataFrame, ev: Evaluation) -> dict:
    """The effects of chapter B2's claims: Table A1 and the size ratios are deterministic (``exact``, the largest
    difference from the paper, and the smallest rise of the ratio from one shape to the next); Table 1b's orderings
    are per-seed differences of top-1 paired by seed (seed k of every shape), one per shape compared."""
    paper = {a: p for a, p in beta.paper.items() if not isinstance(p, str)}
    err = max(abs(beta.var_inv_s[a] - p) for a, p in paper.items()) if paper else math.nan
    ratio = beta.size_ratio.sort_index().to_numpy()
    out = {"tableA1/variance_of_inverse_scale": exact(err) if paper else not_measurable(
               "none of the shapes run is in Table A1"),
           "sec2.2/smaller_shape_less_discrepancy": exact(np.diff(ratio).min()) if len(ratio) > 1 else
           not_measurable("one shape only")}
    shapes = sorted(ev.preds)
    if 1.0 not in ev.preds or len(shapes) < 3:
        lost = not_measurable("Table 1b needs shape 1 (RRC) and two other shapes")
        return dict(out, **{"table1b/uniform_best": lost, "table1b/too_small_shape_hurts": lost})
    acc = {a: ev.accuracy(a) for a in shapes}
    out["table1b/uniform_best"] = {f"shape {a:g} below shape 1": paired(acc[1.0], acc[a]) for a in shapes if a != 1.0}
    small, nxt = shapes[0], shapes[1]
    out["table1b/too_small_shape_hurts"] = {f"shape {small:g} below shape {b:g}": paired(acc[b], acc[small])
                                            for b in dict.fromkeys((nxt, 1.0)) if b != small}
    return out


def report_b2(run, beta: pd.DataFrame, ev: Evaluation, b1_seeds: int = 0) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B2 (:func:`b2_effects`); returns the evidence by claim id. Records what a seed
    of Table 1b's family costs to train (``beta_seeds``): its shapes' models, less shape 1's at the first
    ``b1_seeds`` seeds (chapter B1's RRC models, B1's ``seeds``: counted there)."""
    record = functools.partial(_record, run, b2_effects(beta, ev))
    report_replicates(run, "beta_seeds", ev.seed_seconds(shared=(1.0,), shared_seeds=b1_seeds),
                      ("table1b/uniform_best", "table1b/too_small_shape_hurts"),
                      note="a seed: one model of each Beta shape (shape 1 is chapter B1's RRC model of the seed, "
                           "counted in B1's `seeds` where B1 trains the seed)")
    paper = {a: p for a, p in beta.paper.items() if not isinstance(p, str)}
    run.log("var_inv_s", beta.var_inv_s.to_dict(), paper=paper)
    out = {"tableA1/variance_of_inverse_scale": record("tableA1/variance_of_inverse_scale", ", ".join(
        f"{a:g}: {beta.var_inv_s[a]:.3f}" for a in paper))}
    ratio = beta.size_ratio.sort_index()
    out["sec2.2/smaller_shape_less_discrepancy"] = record("sec2.2/smaller_shape_less_discrepancy", ", ".join(
        f"{a:g}: {r:.3f}" for a, r in ratio.items()))
    acc = {a: float(ev.accuracy(a).mean()) for a in sorted(ev.preds)}
    run.log("top1_per_shape", acc)
    run.log("top1_per_shape_per_seed", {a: ev.accuracy(a).tolist() for a in sorted(ev.preds)})
    best = max(acc, key=acc.get) if acc else math.nan
    out["table1b/uniform_best"] = record("table1b/uniform_best", ", ".join(f"{a:g}: {v:.2f}" for a, v in acc.items()))
    small = min(acc) if acc else math.nan
    out["table1b/too_small_shape_hurts"] = record(
        "table1b/too_small_shape_hurts", f"shape {small:g}: {acc.get(small, math.nan):.2f}, best: {best:g} "
                                         f"({acc.get(best, math.nan):.2f})")
    return out


def b2_sentences(evidence: dict[str, Evidence]) -> dict:
    """The sentences chapter B2's prose quotes, from the verdicts (:func:`invlib.results.glue`)."""
    a1 = evidence["tableA1/variance_of_inverse_scale"]
    return dict(
        a1_sentence=phrase(a1, reproduced=f"every shape's variance agrees with the paper's to two decimals (the "
                                          f"largest difference is {a1.estimate:.4f})",
                           not_reproduced=f"a shape's variance differs from the paper's by {a1.estimate:.4f}, more "
                                          "than the two decimals the paper gives"),
        ratio_sentence=phrase(evidence["sec2.2/smaller_shape_less_discrepancy"],
                              reproduced="it rises with the shape at every step",
                              not_reproduced="it does not rise with the shape at every step"),
        t1b_sentence=phrase(evidence["table1b/uniform_best"], reproduced="Here too shape 1 beats every other shape.",
                            not_reproduced="Here shape 1 does not beat the other shapes by the point that matters.",
                            partly="Here shape 1 beats some shapes and not others.",
                            inconclusive="The seeds cannot yet order the shapes."))


def table_a1_page(beta: pd.DataFrame) -> pd.DataFrame:
    """:func:`~invlib.papers.b.rrc.beta_table` for the page, its columns named for a reader.

    Example
    -------
    >>> from invlib.papers.b.rrc import beta_table, settings
    >>> list(table_a1_page(beta_table(settings("smoke"))).columns)[:2]
    ['Var(1/s), exact', 'Var(1/s), paper']
    """
    return beta.assign(paper=pd.to_numeric(beta.paper, errors="coerce")).rename(columns={
        "var_inv_s": "Var(1/s), exact", "paper": "Var(1/s), paper", "mean_s": "mean area fraction s",
        "size_ratio": "train/test size ratio", "trained": "trained here"})


def b2_numbers(beta: pd.DataFrame, evidence: dict[str, Evidence]) -> dict:
    """The numbers and short phrases chapter B2's prose quotes (:func:`invlib.results.glue`): :func:`b2_sentences`,
    the shape whose Table A1 value is farthest from the paper's (``a1_shape``, ``a1_paper``, ``a1_exact``,
    ``a1_diff``) and one sentence on the claims left undecided (:func:`undecided`).

    Example
    -------
    >>> from invlib.papers.b.rrc import beta_table, settings
    >>> n = b2_numbers(beta_table(settings("smoke")), {})
    >>> n["a1_shape"], n["a1_paper"], round(n["a1_exact"], 3)
    (3.0, 7.626, 7.633)
    """
    paper = pd.to_numeric(beta.paper, errors="coerce")
    diff = (beta.var_inv_s - paper).abs()
    far = diff.idxmax() if diff.notna().any() else math.nan
    known = isinstance(far, float) and not math.isnan(far)
    return dict(b2_sentences(evidence) if evidence else {}, a1_shape=float(far),
                a1_paper=float(paper[far]) if known else math.nan,
                a1_exact=float(beta.var_inv_s[far]) if known else math.nan,
                a1_diff=float(diff[far]) if known else math.nan, open_sentence=undecided(evidence))


def augerino_tables(runs: pd.DataFrame) -> pd.DataFrame:
    """Tables A3-A6 in one frame: per group and regulariser weight, top-1 (%) with Augerino on and off at
    evaluation (mean and SEM over seeds) and the learned bounds (translations in % of the size, scale as the
    largest zoom factor)."""
    bound_cols = [c for c in runs if c.endswith(" bound")]
    agg = runs.groupby(["group", "reg"], sort=False).agg(
        top1_on=("top1_on", "mean"), sem_on=("top1_on", metrics.sem), top1_off=("top1_off", "mean"),
        sem_off=("top1_off", metrics.sem), **{c: (c, "mean") for c in bound_cols})
    for c in bound_cols:
        agg[c] = np.exp(agg[c]) if c.startswith("scale") else agg[c] * 100
    return agg.rename(columns={"translate_x bound": "tx (% size)", "translate_y bound": "ty (% size)",
                               "scale bound": "zoom (x)"}).round(2)


def augerino_page(tables: pd.DataFrame) -> pd.DataFrame:
    """:func:`augerino_tables` for the page, its columns named for a reader.

    Example
    -------
    >>> t = pd.DataFrame({"top1_on": [70.0], "tx (% size)": [12.0]},
    ...                  index=pd.MultiIndex.from_tuples([("translation", 0.1)], names=["group", "reg"]))
    >>> list(augerino_page(t).columns), list(augerino_page(t).index.names)
    (['top-1, Augerino on (%)', 'largest x-translation (% of side)'], ['group', 'weight'])
    """
    out = tables.rename(columns={
        "top1_on": "top-1, Augerino on (%)", "sem_on": "SEM on", "top1_off": "top-1, Augerino off (%)",
        "sem_off": "SEM off", "tx (% size)": "largest x-translation (% of side)",
        "ty (% size)": "largest y-translation (% of side)", "zoom (x)": "largest zoom (x)"})
    return out.rename_axis(["group", "weight"])


def b6_numbers(S: Settings, runs: pd.DataFrame, base: Evaluation, evidence: dict[str, Evidence]) -> dict:
    """The numbers and short phrases chapter B6's prose quotes (:func:`invlib.results.glue`): seeds per weight,
    translation alone at the smallest and largest weights (``reg_lo``, ``reg_hi``, the mean of the learned x and
    y bounds ``bound_lo``, ``bound_hi``, percent of the side), its best weight (``best``, ``best_on``: top-1 with
    Augerino at evaluation) against no augmentation on the same seeds (``none_top1``), translation then scale at
    its best weight (``best_ts``, ``ts_tx``, ``ts_ty``, ``ts_zoom``) and one sentence on the claims left
    undecided (:func:`undecided`)."""
    tables = augerino_tables(runs)
    tr, ts = tables.loc["translation"], tables.loc["translation then scale"]
    bounds = tr[["tx (% size)", "ty (% size)"]].mean(axis=1)
    best, best_ts = _best(runs, "translation"), _best(runs, "translation then scale")
    seeds = sorted(set(runs.seed) & set(range(len(base.preds[NONE]))))
    return dict(augerino_seeds=S.augerino_seeds, reg_lo=float(bounds.index.min()), reg_hi=float(bounds.index.max()),
                bound_lo=float(bounds[bounds.index.min()]), bound_hi=float(bounds[bounds.index.max()]),
                best=best, best_on=float(tr.top1_on[best]),
                none_top1=float(np.mean(base.accuracy(NONE)[seeds])) if seeds else math.nan,
                best_ts=best_ts, ts_tx=float(ts.loc[best_ts, "tx (% size)"]),
                ts_ty=float(ts.loc[best_ts, "ty (% size)"]), ts_zoom=float(ts.loc[best_ts, "zoom (x)"]),
                translate_cap=100 * S.translate_cap, zoom_cap=S.zoom_cap, open_sentence=undecided(evidence))


def plot_bounds(tables: pd.DataFrame, S: Settings):
    """Fig. A8-A9: the learned bounds against the regulariser weight, one panel per group; dashed: the caps."""
    import matplotlib.pyplot as plt

    groups = list(dict.fromkeys(tables.index.get_level_values(0)))
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.2), squeeze=False)
    for ax, g in zip(axes[0], groups):
        t = tables.loc[g]
        for col, color, label in (("tx (% size)", "tab:red", "x-translation"), ("ty (% size)", "tab:green",
                                                                               "y-translation")):
            ax.plot(t.index, t[col], "o-", color=color, label=label)
        ax.axhline(S.translate_cap * 100, ls="--", color="gray", label=f"translation cap ({S.translate_cap:.0%})")
        ax.set_xscale("log")
        ax.set_xticks(list(t.index), [f"{r:g}" for r in t.index])
        ax.minorticks_off()
        ax.set_xlabel("regulariser weight")
        ax.set_ylabel("largest translation (% of side)")
        ax.set_title(g)
        handles, labels = ax.get_legend_handles_labels()
        if t["zoom (x)"].notna().any():
            twin = ax.twinx()
            twin.plot(t.index, t["zoom (x)"], "s-", color="tab:blue", label="zoom")
            twin.axhline(S.zoom_cap, ls=":", color="tab:blue", label=f"zoom cap ({S.zoom_cap:.2f}x)")
            twin.set_ylabel("largest zoom (x)", color="tab:blue")
            more = twin.get_legend_handles_labels()
            handles, labels = handles + more[0], labels + more[1]
        ax.legend(handles, labels, fontsize=8, loc="best")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ B6: App. G
def _per_seed(runs: pd.DataFrame, group: str, reg: float, column: str) -> pd.Series:
    """One run's ``column`` per seed (index: seed) for ``group`` and weight ``reg``."""
    g = runs[(runs.group == group) & (runs.reg == reg)]
    return g.set_index("seed")[column].astype(float).sort_index()


def _best(runs: pd.DataFrame, group: str) -> float:
    """The regulariser weight of the best mean top-1 with Augerino at evaluation, as the paper picks it (on the same
    evaluation images: the selection favours it)."""
    return float(runs[runs.group == group].groupby("reg").top1_on.mean().idxmax())


def b6_effects(S: Settings, runs: pd.DataFrame, base: Evaluation) -> dict:
    """The effects of chapter B6's claims from :func:`~invlib.papers.b.rrc.train_augerino`'s runs, per seed: a
    seed's Augerino runs share their trunk's start and training images across weights and with chapter B1's model
    without augmentation of the same seed (``base``), so the differences are paired by seed."""
    tr, ts = "translation", "translation then scale"
    lo, hi = min(S.regs), max(S.regs)
    bound = lambda reg: sum(_per_seed(runs, tr, reg, f"translate_{a} bound") for a in "xy") / 2 / S.translate_cap  # noqa: E731
    out = {"figA8/bounds_depend_on_reg": (bound(hi) - bound(lo)).to_numpy() if len(S.regs) > 1 else
           not_measurable("one regulariser weight only")}
    best, best_ts = _best(runs, tr), _best(runs, ts)
    on = _per_seed(runs, tr, best, "top1_on")
    none = pd.Series(base.accuracy(NONE), index=range(len(base.preds[NONE])))
    out["tableA3/augerino_translation_beats_none"] = (on - none).dropna().to_numpy()
    off_minus_on = runs[runs.group == tr].assign(d=lambda f: f.top1_off - f.top1_on).groupby("seed").d.mean()
    out["tableA4/off_at_evaluation_slightly_higher"] = off_minus_on.to_numpy()
    tx, ty = (_per_seed(runs, ts, best_ts, f"translate_{a} bound") / S.translate_cap for a in "xy")
    zoom = _per_seed(runs, ts, best_ts, "scale bound") / math.log(S.zoom_cap)
    out["figA9/x_translation_only"] = {"x-translation kept": tx.to_numpy(), "y-translation dropped": ty.to_numpy(),
                                       "zoom dropped": zoom.to_numpy()}
    out["tableA5/scale_worse_than_translation"] = paired(_per_seed(runs, ts, best_ts, "top1_on"), on)
    return out


B6_CLAIMS = ("figA8/bounds_depend_on_reg", "tableA3/augerino_translation_beats_none",
              "tableA4/off_at_evaluation_slightly_higher", "figA9/x_translation_only",
              "tableA5/scale_worse_than_translation")  # every claim of chapter B6 rests on its seeds


def report_b6(run, S: Settings, runs: pd.DataFrame, base: Evaluation) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B6 (:func:`b6_effects`); ``runs``: :func:`~invlib.papers.b.rrc.train_augerino`
    's rows; ``base`` holds B1's no-augmentation and translation models. Returns the evidence by claim id. Records
    what a seed of App. G's runs costs to train (``augerino_seeds``)."""
    record = functools.partial(_record, run, b6_effects(S, runs, base))
    report_replicates(run, "augerino_seeds", augerino_seconds(runs), B6_CLAIMS,
                      note="a seed: its Augerino runs, every group and weight (chapter B1's models of the seed, "
                           "the baselines, are B1's `seeds`)")
    tables = augerino_tables(runs)
    tr, ts = tables.loc["translation"], tables.loc["translation then scale"]
    none = base.accuracy(NONE).mean()
    bounds = tr[["tx (% size)", "ty (% size)"]].mean(axis=1)
    run.log("augerino", tables.reset_index().to_dict("records"))
    run.log("baselines", {NAMES[m]: float(base.accuracy(m).mean()) for m in base.preds})
    out = {"figA8/bounds_depend_on_reg": record("figA8/bounds_depend_on_reg", ", ".join(
        f"{r:g}: {b:.1f} %" for r, b in bounds.items()))}
    best = _best(runs, "translation")
    paired_none = float(np.mean(base.accuracy(NONE)[sorted(set(runs.seed) & set(range(len(base.preds[NONE]))))]))
    out["tableA3/augerino_translation_beats_none"] = record(
        "tableA3/augerino_translation_beats_none", f"best weight {best:g}: {tr.top1_on[best]:.2f} % vs none "
                                                   f"{paired_none:.2f} % (the same seeds; every seed {none:.2f} %)")
    out["tableA4/off_at_evaluation_slightly_higher"] = record(
        "tableA4/off_at_evaluation_slightly_higher", ", ".join(f"{r:g}: {tr.top1_off[r] - tr.top1_on[r]:+.2f}"
                                                              for r in tr.index))
    best_ts = _best(runs, "translation then scale")
    tx, ty, zoom = ts.loc[best_ts, ["tx (% size)", "ty (% size)", "zoom (x)"]]
    out["figA9/x_translation_only"] = record(
        "figA9/x_translation_only", f"weight {best_ts:g}: tx {tx:.1f} %, ty {ty:.1f} %, zoom {zoom:.2f}x")
    out["tableA5/scale_worse_than_translation"] = record(
        "tableA5/scale_worse_than_translation", f"best {ts.top1_on.max():.2f} % vs translation alone "
                                                f"{tr.top1_on.max():.2f} % (none {none:.2f} %)")
    return out


# ------------------------------------------------------------------------------ B5: section 4.5, App. D.1, E.2
def b5_sentences(evidence: dict[str, Evidence]) -> dict:
    """The sentences chapter B5's prose quotes, from its verdicts (:func:`invlib.results.glue`).

    Example
    -------
    >>> b5_sentences({"fig4/wordnet_similar_classes": not_measurable("no synsets")})["fig4_sentence"]
    'This profile cannot measure it (no synsets).'
    """
    texts = {"fig4/wordnet_similar_classes": dict(
                 reproduced="For this model, classes closer in WordNet rank the transformations more alike.",
                 not_reproduced="For this model, classes closer in WordNet rank the transformations less alike.",
                 inconclusive="The bootstrap over these few classes cannot say whether classes closer in WordNet "
                              "rank the transformations more alike."),
             "e2/rotation_top_weighted_boost": dict(
                 reproduced="Rotations fill the top 10 by weighted boost, as in the paper.",
                 not_reproduced="Rotations do not fill the top 10 by weighted boost here.",
                 inconclusive="Whether rotations fill the top 10 depends on which image pairs the search drew."),
             "appD1/hurt_classes_unrelated": dict(
                 reproduced="The classes RRC hurts are no closer to each other in WordNet than to the rest.",
                 not_reproduced="The classes RRC hurts are closer to each other in WordNet than to the rest.",
                 inconclusive="Too few seeds, or too few hurt classes, to say whether the classes RRC hurts are "
                              "related.")}
    key = {"fig4/wordnet_similar_classes": "fig4_sentence", "e2/rotation_top_weighted_boost": "e2_sentence",
           "appD1/hurt_classes_unrelated": "d1_sentence"}
    return {key[cid]: phrase(ev, **texts[cid]) for cid, ev in evidence.items() if cid in key}
