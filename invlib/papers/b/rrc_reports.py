"""Paper B's RandomResizedCrop reports (chapters B1, B2, B5 and B6): the paper's tables beside this run, the claims
with their verdicts and the figures. The method is :mod:`invlib.papers.b.rrc` (B5's search is
:mod:`invlib.papers.b.similarity`'s).

Every claim is decided by :func:`invlib.results.decide` against a test declared below before the run. The claims
about what training does (B1, B2's Table 1b, B6) take a seed as their replicate, paired by seed, and need
:data:`N_MIN` seeds: the ``cpu`` profile trains three of B1's and B2's, and one per Augerino weight, where B6's
claims stay "inconclusive at this budget" (the interval column says how many seeds would decide them). Table A1
and the size ratios are deterministic; B5's claims are about this run's one trained model of each kind (a bootstrap
over classes, or over the search's image pairs).

Example
-------
>>> ev = Evaluation(np.zeros(4, int), ["a"], None, {NONE: np.ones((2, 4), int)}, {NONE: np.array([90.0, 95.0])})
>>> regime_evidence(ev).text()
'+92.5 [+60.7, +124], 2 seeds; > 5; needs >= 3 seeds'
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import torch

from ... import crops, data, metrics
from ...results import (
    LEVEL,
    Evidence,
    Interval,
    decide,
    decide_parts,
    exact,
    not_measurable,
    paired,
    phrase,
    t_interval,
)
from .rrc import (
    IOU_METHODS,
    NAMES,
    NONE,
    OVERFIT_GAP,
    OVERFIT_REASON,
    PAPER_TOP1,
    RRC,
    Evaluation,
    Settings,
    table_a1_shapes,
)


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

    return plots.mosaic(rows, overlay=draw_boxes, size=(1.3, 1.35))


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
    ax.legend(fontsize=8, loc="lower right")
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
            ax.text(j, i, f"{iou.values[i, j]:.2f}", ha="center", va="center", color="w")
    ax.figure.colorbar(im, ax=ax, label="mean IoU of helped samples")
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


# ------------------------------------------------------------------------------ the tests, declared before the run
# B1's claims, B2's Table 1b and B6 are about what training does: a replicate is a seed (n_min 3), and the methods
# are paired by seed (seed k of every method, Beta shape and Augerino run starts from the same weights and trains on
# the same images), so each effect is a per-seed difference (results.paired). (boundary, reason), or (margin, reason):
N_MIN = 3
ORDER = (0.0, "the paper states an order between methods (its Tables 1a and 1b lost their numbers in extraction), "
              "not a size: any paired difference in its direction counts; the interval over seeds says whether there "
              "is one")
MOST = (0.5, "'most of RRC's gain' is more than half of it: per seed, T.(30%)'s gain minus half of RRC's must be > 0")
CONSISTENT_IOU = (0.5, "two equal lists with IoU 0.5 share two thirds of their samples: from there on the helped "
                       "samples would be mostly the same ones, a pattern of consistency")
PATTERN = (0.1, "a pattern would show as the lists of one method overlapping more than the lists of two methods; a "
                "tenth of IoU's range is the least such excess worth calling a pattern")
RELATED = (0.1, "a tenth of Wu-Palmer's range (0 to 1): hurt classes that sit closer than that to each other than to "
                "the rest share a WordNet pattern")
ZOOM_FALL = (0.0, "Fig. A7 shows falls without a size ('RRC falls from the smallest values'): any fall counts; the "
                  "interval over seeds, each averaged over its test draws, says whether there is one")


def _seed(effect, test: tuple, direction: str = "greater", shift: float | None = None) -> Evidence:
    """A claim's effect per seed against ``test`` = (boundary, reason); ``shift`` replaces the boundary (the effect
    then carries the test's number itself, as MOST's)."""
    boundary, reason = test
    return decide(effect, direction=direction, boundary=boundary if shift is None else shift, reason=reason,
                  unit="seed", n_min=N_MIN)


def _claim(run, evidence: dict, cid: str, claim: str, **texts) -> str:
    """:meth:`invlib.results.Run.claim` with the evidence of ``cid`` from ``evidence``."""
    return run.claim(cid, claim, evidence=evidence[cid], **texts)


def _missing(ran, *methods) -> Evidence | None:
    """Not measurable where a method of the claim was not run (-p methods=...): structural, not noise."""
    lost = [NAMES[m] for m in methods if m not in ran]
    return not_measurable(f"not run at this profile: {', '.join(lost)}") if lost else None


def regime_evidence(ev: Evaluation) -> Evidence:
    """The regime the crop claims need, declared as their first part: the model without augmentation overfits,
    training minus test top-1 per seed above :data:`~invlib.papers.b.rrc.OVERFIT_GAP` points.

    Example
    -------
    >>> ev = Evaluation(np.zeros(4, int), ["a"], None, {NONE: np.ones((3, 4), int)}, {NONE: np.array([100., 99, 98])})
    >>> regime_evidence(ev).verdict
    'reproduced'
    """
    gaps = ev.overfit_gaps() if NONE in ev.train and NONE in ev.preds else []
    return decide(gaps, boundary=OVERFIT_GAP, reason=OVERFIT_REASON, unit="seed", n_min=N_MIN)


def helped_replicates(ev: Evaluation, methods=IOU_METHODS) -> pd.DataFrame:
    """App. B over independent replicates: seeds (0, 1), (2, 3), ... of every method, one row each. A seed's list
    of a method is the samples the model without augmentation of that seed gets wrong and the method's model of
    that seed right; the lists of the two seeds are compared: ``within`` (mean IoU of a method's two lists),
    ``across`` (mean IoU of two methods' lists, one of each seed) and ``largest`` (the largest of these IoUs, a
    pair of methods counted in both orders). Empty without the models without augmentation or two methods.

    Example
    -------
    >>> y = np.arange(6) % 2
    >>> wrong = (y + 1) % 2
    >>> ev = Evaluation(y, ["a", "b"], None, {NONE: np.stack([wrong] * 2), "translate": np.stack([y, y]),
    ...                                        "fixed_size_random_crop": np.stack([y, wrong])})
    >>> helped_replicates(ev).round(2).to_dict("records")
    [{'within': 0.5, 'across': 0.5, 'largest': 1.0}]
    """
    methods = [m for m in methods if m in ev.preds] if NONE in ev.preds else []
    lists = {m: [metrics.helped(b, p, ev.labels) for b, p in zip(ev.preds[NONE], ev.preds[m])] for m in methods}
    seeds = min((len(v) for v in lists.values()), default=0) if len(methods) > 1 else 0
    rows = []
    for a in range(0, seeds - 1, 2):
        cell = {(m, n): np.mean([metrics.iou(lists[m][a], lists[n][a + 1]), metrics.iou(lists[n][a], lists[m][a + 1])])
                for m in methods for n in methods}
        within = [cell[m, m] for m in methods]
        across = [cell[m, n] for m in methods for n in methods if m != n]
        rows.append(dict(within=float(np.mean(within)), across=float(np.mean(across)),
                         largest=float(max(cell.values()))))
    return pd.DataFrame(rows, columns=["within", "across", "largest"])


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


def b1_evidence(ev: Evaluation, curve: pd.DataFrame) -> dict[str, Evidence]:
    """The evidence of every claim of chapter B1 (by claim id), from the paired per-seed effects of :data:`N_MIN`
    seeds or more; the Table 1a claims and Table A2 carry their regime as parts (:func:`regime_evidence`; RRC's
    own gain where the claim presupposes it), so an undecided regime leaves them undecided."""
    ran = set(ev.preds)
    t, ts, rscc, fsrc = "translate", "translate_random_size_center_crop", "random_size_center_crop", \
        "fixed_size_random_crop"
    acc = {m: ev.accuracy(m) for m in ran}
    gain = {m: paired(acc[m], acc[NONE]) for m in ran if NONE in ran}
    regime = regime_evidence(ev)
    out = {}
    out["table1a/translation_recovers_rrc"] = _missing(ran, NONE, t, RRC) or decide_parts(
        {"no augmentation overfits": regime, "RRC helps": _seed(gain[RRC], ORDER),
         "T.(30%) recovers more than half": _seed(gain[t] - MOST[0] * gain[RRC], MOST, shift=0.0)})
    out["table1a/scale_alone_less"] = _missing(ran, NONE, rscc, ts, RRC) or decide_parts(
        {"no augmentation overfits": regime, "RSCC below T + RSCC": _seed(paired(acc[ts], acc[rscc]), ORDER),
         "RSCC below RRC": _seed(paired(acc[RRC], acc[rscc]), ORDER)})
    out["table1a/neither_part_matches_rrc"] = _missing(ran, NONE, rscc, fsrc, RRC) or decide_parts(
        {"no augmentation overfits": regime, "RSCC beats none": _seed(gain[rscc], ORDER),
         "FSRC beats none": _seed(gain[fsrc], ORDER), "RSCC below RRC": _seed(paired(acc[RRC], acc[rscc]), ORDER),
         "FSRC below RRC": _seed(paired(acc[RRC], acc[fsrc]), ORDER)})
    reps = helped_replicates(ev)
    unit = dict(unit="run", n_min=N_MIN)  # a run: the models of two seeds, compared with each other
    out["appB/no_pattern_in_helped_samples"] = not_measurable(
        "App. B needs the models without augmentation and two translation-type methods") if NONE not in ran or len(
        [m for m in IOU_METHODS if m in ran]) < 2 else decide_parts(
        {"every IoU below 0.5": decide(reps.largest.to_numpy(), direction="less", boundary=CONSISTENT_IOU[0],
                                       reason=CONSISTENT_IOU[1], **unit),
         "within no higher than across": decide((reps.within - reps.across).to_numpy(), direction="less",
                                                boundary=PATTERN[0], reason=PATTERN[1], **unit)})
    iv, _ = hurt_class_interval(ev) if {RRC, NONE} <= ran else (None, "")
    out["tableA2/classes_consistently_hurt"] = _missing(ran, NONE, RRC) or decide_parts(
        {"RRC helps overall": _seed(gain[RRC], ORDER),
         "a class hurt (Bonferroni over classes)": decide(iv, direction="less", boundary=ORDER[0], reason=(
             "the paper lists the classes hurt whatever the size of their loss: any loss counts, at the level "
             f"1 - 0.05 / K of K simultaneous tests ({iv.level:.4f})"), unit="seed", n_min=N_MIN)})
    falls = zoom_falls(curve)
    r, n = falls[NAMES[RRC]], falls[NAMES[NONE]]
    out["figA7/rrc_partly_invariant_to_zoom"] = decide_parts(
        {"RRC falls": _seed(r["last"], ZOOM_FALL), "none falls": _seed(n["last"], ZOOM_FALL),
         "RRC falls less": _seed(paired(n["last"], r["last"]), ZOOM_FALL),
         "RRC falls at the smallest zoom": _seed(r["first"], ZOOM_FALL)})
    return out


def report_b1(run, S: Settings, ev: Evaluation, iou: pd.DataFrame, hurt: pd.DataFrame,
                     curve: pd.DataFrame) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B1, each decided by :func:`b1_evidence`; returns the evidence by claim id."""
    evidence = b1_evidence(ev, curve)
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
    paired_seeds = f"per seed, paired by seed (95 % t-intervals over seeds, >= {N_MIN} seeds)"
    first = f"part 1: no augmentation's training minus test top-1 per seed > {OVERFIT_GAP:g} points ({OVERFIT_REASON})"
    claim = functools.partial(_claim, run, evidence)
    claim("table1a/translation_recovers_rrc",
          "Translation alone, T.(30%), recovers most of RRC's gain over no augmentation.",
          paper="T.(30%) almost matches T.(30%) + RandomSizeCenterCrop, which nearly matches RRC",
          ours=f"gain T.(30%) {gain[t]:+.2f}, RRC {gain[RRC]:+.2f} points{regime}",
          criterion=f"{first}; 2: RRC's gain over none > 0; 3: T's gain minus half of RRC's > 0; gains in top-1 "
                    f"points {paired_seeds}")
    claim("table1a/scale_alone_less",
          "Scale alone (RandomSizeCenterCrop) helps less than RRC and than translation with scale.",
          paper="RandomSizeCenterCrop ~67.9 % < T.(30%) + RandomSizeCenterCrop < RRC",
          ours=f"RSCC {gain[rscc]:+.2f}, T + RSCC {gain[ts]:+.2f}, RRC {gain[RRC]:+.2f} points{regime}",
          criterion=f"{first}; 2, 3: T + RSCC's and RRC's top-1 minus RSCC's > 0 {paired_seeds}")
    claim("table1a/neither_part_matches_rrc",
          "Neither RandomSizeCenterCrop nor FixedSizeRandomCrop alone reaches RRC; both beat no augmentation.",
          paper="67.9 % (both) vs 63.5 % without augmentation; RRC best",
          ours=f"RSCC {gain[rscc]:+.2f}, FSRC {gain[fsrc]:+.2f}, RRC {gain[RRC]:+.2f} points over none{regime}",
          criterion=f"{first}; 2-5: RSCC and FSRC minus none > 0, RRC minus each > 0 {paired_seeds}")
    off = iou.values[~np.eye(len(iou), dtype=bool)] if len(iou) > 1 else np.full(1, np.nan)
    diag = np.diag(iou.values) if len(iou) else np.full(1, np.nan)
    run.log("helped_iou", iou.to_dict())
    claim("appB/no_pattern_in_helped_samples",
          "The samples that translation-type augmentations fix are not consistent, within or across methods.",
          paper="IoUs within and across methods show no pattern (values not in the text)",
          ours=f"within {np.nanmin(diag):.2f}-{np.nanmax(diag):.2f}, across {np.nanmin(off):.2f}-{np.nanmax(off):.2f} "
               "(every pair of seeds)",
          criterion=f"per replicate, the models of two seeds (0, 1), (2, 3), ... (independent trainings; >= "
                    f"{N_MIN} replicates, 95 % t-intervals): part 1, the largest IoU of two seeds' helped lists < "
                    f"{CONSISTENT_IOU[0]:g} ({CONSISTENT_IOU[1]}); 2, within-method minus across-method IoU < "
                    f"{PATTERN[0]:g} ({PATTERN[1]})")
    _, worst = hurt_class_interval(ev) if {RRC, NONE} <= ran else (None, "")
    comparisons = len(ev.preds.get(RRC, ())) * len(ev.preds.get(NONE, ()))
    run.log("hurt_classes", hurt.reset_index().to_dict("records"))
    claim("tableA2/classes_consistently_hurt",
          "Some classes are consistently hurt by RRC compared with no augmentation.",
          paper="17 of 1000 classes hurt in >= 72 % of 25 comparisons, losing up to 22 points",
          ours=f"{int((hurt.consistently == 'hurt').sum())} of {len(hurt)} classes hurt in > {S.hurt_share:.0%} of "
               f"{comparisons} comparisons; most hurt by the paired mean: {worst or 'none'}",
          criterion="part 1: RRC's top-1 minus none's > 0 per seed; part 2: per class, RRC's minus none's top-1 of "
                    f"the same seed, a t-interval over seeds at 1 - 0.05 / K (Bonferroni over the K classes), the "
                    "most-hurt class's upper end < 0 (not reproduced: every class's lower end > 0); >= "
                    f"{N_MIN} seeds")
    falls = zoom_falls(curve)
    mean = lambda m, k: float(np.mean(falls[NAMES[m]][k]))  # noqa: E731
    run.log("zoom_drop", {name: float(np.mean(f["last"])) for name, f in falls.items()})
    claim("figA7/rrc_partly_invariant_to_zoom",
          "Zooming validation crops lowers accuracy, less for the RRC model than without augmentation, yet "
          "the RRC model already drops at the smallest zooms (partial invariance).",
          paper="Fig. A7: both fall; RRC more robust; RRC falls from the smallest values",
          ours=f"fall to the largest zoom: RRC {mean(RRC, 'last'):.2f}, none {mean(NONE, 'last'):.2f} points; RRC "
               f"at the smallest zoom {mean(RRC, 'first'):.2f}",
          criterion=f"per seed, top-1 on the central crop minus on zoomed crops: RRC's and none's falls to the "
                    f"largest zoom > 0, none's minus RRC's > 0 (paired by seed), RRC's fall at the smallest zoom "
                    f"> 0 ({ZOOM_FALL[1]}); 95 % t-intervals over >= {N_MIN} seeds")
    return evidence


def b1_numbers(S: Settings, ev: Evaluation, evidence: dict[str, Evidence]) -> dict:
    """The numbers and sentences chapter B1's prose quotes (:func:`invlib.results.glue`): the data and regime of
    the run, how much the model without augmentation overfits, RRC's gain paired by seed with its interval, and
    what the verdicts say about them."""
    none = ev.accuracy(NONE)
    gain = _seed(paired(ev.accuracy(RRC), none), ORDER)
    regime = regime_evidence(ev)
    return dict(dataset=S.dataset, n_train=S.n_train, epochs=S.epochs, seeds=S.seeds, size=S.size,
                none_train=float(np.mean(ev.train.get(NONE, np.nan))), none_test=float(none.mean()),
                gap=ev.overfit_gap(), overfit_gap=OVERFIT_GAP, rrc_gain=gain.estimate,
                gap_text=regime.text(), rrc_gain_text=gain.text(),
                regime_sentence=phrase(regime, reproduced="The crop claims are tested where a crop can pay.",
                                       not_reproduced="No crop can pay here: the crop claims are tested outside "
                                                      "their regime.",
                                       inconclusive="Too few seeds to say whether the run is in the regime where "
                                                    "a crop can pay; the crop claims wait for it."),
                rrc_sentence=phrase(gain, reproduced="RRC helps at this budget.", not_reproduced="RRC hurts here.",
                                    inconclusive=f"{S.seeds} seeds cannot say whether RRC helps (each claim's "
                                                 f"interval column gives the seeds that would)."),
                claims_sentence=tally(evidence))


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
    the other hurt classes minus to the others (``report["differences"]``, :func:`~invlib.papers.b.rrc.hurt_wordnet`)
    below :data:`RELATED` (a t-interval over the hurt classes). Not measurable only without synsets."""
    run.log("d1_wordnet", report)
    evidence = not_measurable("the classes have no WordNet synsets (a folder of your own)") if not report.get(
        "wordnet", True) else \
        decide_parts({"RRC helps overall": _seed(report.get("rrc_gains", []), ORDER),
                      "hurt classes no closer to each other": decide(
                          report["differences"], direction="less", boundary=RELATED[0], reason=RELATED[1],
                          unit="class", n_min=N_MIN)})
    run.claim("appD1/hurt_classes_unrelated",
              "The classes RRC consistently hurts show no WordNet pattern: they are no closer to each other than "
              "to other classes.", paper="17 hurt classes; similarities among / with helped / with the rest not "
                                         "in the text; 'no pattern'",
              ours=f"RRC gain {report.get('rrc_gain', np.nan):+.2f} points; {report['n_hurt']} hurt classes "
                   f"({', '.join(report['hurt']) or 'none'}): among "
                   f"{report['among']:.3f}, with helped {report['with_helped']:.3f}, with the rest "
                   f"{report['with_rest']:.3f} (wup)",
              criterion=f"part 1: RRC's top-1 minus none's > 0 per seed (>= {N_MIN} seeds); part 2: per class hurt in "
                        "most comparisons (Table A2's rule), its Wu-Palmer similarity to the other hurt classes "
                        f"minus to the others < {RELATED[0]:g}, 95 % t-interval over >= {N_MIN} hurt classes "
                        f"({RELATED[1]})", evidence=evidence)
    return evidence



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
    ax.set_xlabel("Beta shape (1 = uniform, RRC)")
    ax.set_ylabel("top-1 (%)", color="tab:blue")
    if "var_inv_s" in t1b:
        twin = ax.twinx()
        twin.plot(t1b.index, t1b.var_inv_s, "s--", color="tab:gray")
        twin.set_ylabel("Var(1/s)", color="tab:gray")
    ax.set_title("Table 1b: top-1 per shape of the scale distribution")
    return ax


A1_TOLERANCE = (0.01, "Table A1 is itself a Monte-Carlo estimate, off the exact values (ours, by quadrature) by up "
                      "to 0.0065; one unit of the second decimal, 0.01, covers its error, and a different "
                      "distribution of s would move Var(1/s) by more")
MONOTONE = (0.0, "an order: each larger shape must give a larger train/test size ratio, by any amount (the ratios "
                 "are computed, not trained)")


def b2_evidence(beta: pd.DataFrame, ev: Evaluation) -> dict[str, Evidence]:
    """The evidence of chapter B2's claims: Table A1 and the size ratios are deterministic (``exact``, the largest
    difference from the paper, and the smallest rise of the ratio from one shape to the next); Table 1b's orderings
    are per-seed differences of top-1 paired by seed (seed k of every shape), one part per shape compared."""
    paper = {a: p for a, p in beta.paper.items() if not isinstance(p, str)}
    err = max(abs(beta.var_inv_s[a] - p) for a, p in paper.items()) if paper else math.nan
    ratio = beta.size_ratio.sort_index().to_numpy()
    out = {"tableA1/variance_of_inverse_scale": decide(exact(err), direction="less", boundary=A1_TOLERANCE[0],
                                                       reason=A1_TOLERANCE[1], unit="deterministic", n_min=1)
           if paper else not_measurable("none of the shapes run is in Table A1"),
           "sec2.2/smaller_shape_less_discrepancy": decide(exact(np.diff(ratio).min()), boundary=MONOTONE[0],
                                                           reason=MONOTONE[1], unit="deterministic", n_min=1)
           if len(ratio) > 1 else not_measurable("one shape only")}
    shapes = sorted(ev.preds)
    if 1.0 not in ev.preds or len(shapes) < 3:
        lost = not_measurable("Table 1b needs shape 1 (RRC) and two other shapes")
        return dict(out, **{"table1b/uniform_best": lost, "table1b/too_small_shape_hurts": lost})
    acc = {a: ev.accuracy(a) for a in shapes}
    out["table1b/uniform_best"] = decide_parts(
        {f"shape {a:g} below shape 1": _seed(paired(acc[1.0], acc[a]), ORDER) for a in shapes if a != 1.0},
        "every other shape below shape 1")
    small, nxt = shapes[0], shapes[1]
    out["table1b/too_small_shape_hurts"] = decide_parts(
        {f"shape {small:g} below shape {b:g}": _seed(paired(acc[b], acc[small]), ORDER)
         for b in dict.fromkeys((nxt, 1.0)) if b != small}, "below the next shape and below shape 1")
    return out


def report_b2(run, beta: pd.DataFrame, ev: Evaluation) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B2 (:func:`b2_evidence`); returns the evidence by claim id."""
    evidence = b2_evidence(beta, ev)
    claim = functools.partial(_claim, run, evidence)
    paper = {a: p for a, p in beta.paper.items() if not isinstance(p, str)}
    run.log("var_inv_s", beta.var_inv_s.to_dict(), paper=paper)
    claim("tableA1/variance_of_inverse_scale", "Var(1/s) per Beta shape is as Table A1 gives it (to two decimals).",
          paper=", ".join(f"{a:g}: {p}" for a, p in paper.items()),
          ours=", ".join(f"{a:g}: {beta.var_inv_s[a]:.3f}" for a in paper),
          criterion=f"deterministic: the largest |ours - paper| over the shapes < {A1_TOLERANCE[0]:g} "
                    f"({A1_TOLERANCE[1]})")
    ratio = beta.size_ratio.sort_index()
    claim("sec2.2/smaller_shape_less_discrepancy",
          "Smaller Beta shapes reduce the train/test discrepancy of apparent object sizes.",
          paper="the smaller the shape, the smaller the expected zoom",
          ours=", ".join(f"{a:g}: {r:.3f}" for a, r in ratio.items()),
          criterion="deterministic: the smallest rise of the train/test size ratio from one shape to the next > 0")
    acc = {a: float(ev.accuracy(a).mean()) for a in sorted(ev.preds)}
    run.log("top1_per_shape", acc)
    run.log("top1_per_shape_per_seed", {a: ev.accuracy(a).tolist() for a in sorted(ev.preds)})
    best = max(acc, key=acc.get) if acc else math.nan
    claim("table1b/uniform_best", "Changing the shape of the scale distribution, same range, costs accuracy.",
          paper="shape 1 (uniform, RRC) gives the best top-1 (values not in the text)",
          ours=", ".join(f"{a:g}: {v:.2f}" for a, v in acc.items()),
          criterion="one part per other shape: shape 1's top-1 minus that shape's, paired by seed, > 0 (95 % "
                    f"t-interval over >= {N_MIN} seeds; {ORDER[1]})")
    small = min(acc) if acc else math.nan
    claim("table1b/too_small_shape_hurts",
          "Too small a shape (0.1: little scale variance) also costs accuracy: a trade-off between variance "
          "and train/test consistency.", paper="shape 0.1 below 0.5 and 1",
          ours=f"shape {small:g}: {acc.get(small, math.nan):.2f}, best: {best:g} ({acc.get(best, math.nan):.2f})",
          criterion="the next shape's and shape 1's top-1 minus the smallest shape's, paired by seed, > 0 (95 % "
                    f"t-intervals over >= {N_MIN} seeds)")
    return evidence


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
                            not_reproduced="Here every other shape beats shape 1.",
                            partly="Here shape 1 beats some shapes and loses to others.",
                            inconclusive="At this budget the seeds cannot order the shapes (the claims' interval "
                                         "column says how many seeds would)."))


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


def plot_bounds(tables: pd.DataFrame, S: Settings):
    """Fig. A8-A9: the learned bounds against the regulariser weight, one panel per group; dashed: the caps."""
    import matplotlib.pyplot as plt

    groups = list(dict.fromkeys(tables.index.get_level_values(0)))
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.2), squeeze=False)
    for ax, g in zip(axes[0], groups):
        t = tables.loc[g]
        for col, color in (("tx (% size)", "tab:red"), ("ty (% size)", "tab:green")):
            ax.plot(t.index, t[col], "o-", color=color, label=col)
        ax.axhline(S.translate_cap * 100, ls="--", color="gray")
        ax.set_xscale("log")
        ax.set_xlabel("regulariser weight")
        ax.set_ylabel("largest translation (% of size)")
        ax.set_title(g)
        if t["zoom (x)"].notna().any():
            twin = ax.twinx()
            twin.plot(t.index, t["zoom (x)"], "s-", color="tab:blue", label="zoom (x)")
            twin.axhline(S.zoom_cap, ls=":", color="tab:blue")
            twin.set_ylabel("largest zoom (x)", color="tab:blue")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ B6: App. G
STRONG = (0.25, "'strongly': the weights move the bound over at least a quarter of the range the regulariser acts "
                "on (0 to its cap, 30 % of the size)")
SLIGHT = (2.0, "'slightly': under 2 points of top-1, half the 4.4 points that separate the crop methods from no "
               "augmentation in Table 1a (67.9 against 63.5 %)")
SIGN = (0.0, "the paper states a direction, not a size (App. G's numbers were lost in extraction): any paired "
             "difference in it counts")
KEPT, DROPPED = (0.5, "the widths start at their caps (the authors' code): 'kept' is more than half of where it "
                      "started"), (0.25, "'dropped' is below a quarter of where it started (its cap)")


def _per_seed(runs: pd.DataFrame, group: str, reg: float, column: str) -> pd.Series:
    """One run's ``column`` per seed (index: seed) for ``group`` and weight ``reg``."""
    g = runs[(runs.group == group) & (runs.reg == reg)]
    return g.set_index("seed")[column].astype(float).sort_index()


def _best(runs: pd.DataFrame, group: str) -> float:
    """The regulariser weight of the best mean top-1 with Augerino at evaluation, as the paper picks it (on the same
    evaluation images: the selection favours it)."""
    return float(runs[runs.group == group].groupby("reg").top1_on.mean().idxmax())


def b6_evidence(S: Settings, runs: pd.DataFrame, base: Evaluation) -> dict[str, Evidence]:
    """The evidence of chapter B6's claims from :func:`~invlib.papers.b.rrc.train_augerino`'s runs, per seed: a
    seed's Augerino runs share their trunk's start and training images across weights and with chapter B1's model
    without augmentation of the same seed (``base``), so the differences are paired by seed."""
    tr, ts = "translation", "translation then scale"
    lo, hi = min(S.regs), max(S.regs)
    bound = lambda reg: sum(_per_seed(runs, tr, reg, f"translate_{a} bound") for a in "xy") / 2 / S.translate_cap  # noqa: E731
    out = {"figA8/bounds_depend_on_reg": _seed((bound(hi) - bound(lo)).to_numpy(), STRONG)
           if len(S.regs) > 1 else not_measurable("one regulariser weight only")}
    best, best_ts = _best(runs, tr), _best(runs, ts)
    on = _per_seed(runs, tr, best, "top1_on")
    none = pd.Series(base.accuracy(NONE), index=range(len(base.preds[NONE])))
    out["tableA3/augerino_translation_beats_none"] = _seed((on - none).dropna().to_numpy(), SIGN)
    off_minus_on = runs[runs.group == tr].assign(d=lambda f: f.top1_off - f.top1_on).groupby("seed").d.mean()
    out["tableA4/off_at_evaluation_slightly_higher"] = decide(
        off_minus_on.to_numpy(), direction="equivalent", boundary=SLIGHT[0] / 2, margin=SLIGHT[0] / 2,
        reason=f"higher, by less than {SLIGHT[0]:g} points: {SLIGHT[1]}", unit="seed", n_min=N_MIN)
    tx, ty = (_per_seed(runs, ts, best_ts, f"translate_{a} bound") / S.translate_cap for a in "xy")
    zoom = _per_seed(runs, ts, best_ts, "scale bound") / math.log(S.zoom_cap)
    out["figA9/x_translation_only"] = decide_parts(
        {"x-translation kept": _seed(tx.to_numpy(), KEPT), "y-translation dropped": _seed(ty.to_numpy(), DROPPED,
                                                                                           "less"),
         "zoom dropped": _seed(zoom.to_numpy(), DROPPED, "less")}, "x kept, y and zoom dropped")
    out["tableA5/scale_worse_than_translation"] = _seed(
        paired(_per_seed(runs, ts, best_ts, "top1_on"), on), SIGN, "less")
    return out


def report_b6(run, S: Settings, runs: pd.DataFrame, base: Evaluation) -> dict[str, Evidence]:
    """The scoreboard rows of chapter B6 (:func:`b6_evidence`); ``runs``: :func:`~invlib.papers.b.rrc.train_augerino`
    's rows; ``base`` holds B1's no-augmentation and translation models. Returns the evidence by claim id."""
    evidence = b6_evidence(S, runs, base)
    claim = functools.partial(_claim, run, evidence)
    tables = augerino_tables(runs)
    tr, ts = tables.loc["translation"], tables.loc["translation then scale"]
    none = base.accuracy(NONE).mean()
    cap = S.translate_cap * 100
    bounds = tr[["tx (% size)", "ty (% size)"]].mean(axis=1)
    seeds = f"95 % t-interval over >= {N_MIN} seeds"
    run.log("augerino", tables.reset_index().to_dict("records"))
    run.log("baselines", {NAMES[m]: float(base.accuracy(m).mean()) for m in base.preds})
    claim("figA8/bounds_depend_on_reg",
          "The translation bounds Augerino learns depend strongly on the regulariser weight.",
          paper="bounds differ across weights 0.01-1.0; saturate at the cap (30 %) where the regulariser stops",
          ours=", ".join(f"{r:g}: {b:.1f} %" for r, b in bounds.items()),
          criterion=f"per seed, the mean translation bound at the largest weight minus at the smallest, as a share of "
                    f"the cap ({cap:g} % of the size), > {STRONG[0]:g} ({STRONG[1]}); {seeds}")
    best = _best(runs, "translation")
    paired_none = float(np.mean(base.accuracy(NONE)[sorted(set(runs.seed) & set(range(len(base.preds[NONE]))))]))
    claim("tableA3/augerino_translation_beats_none", "Augerino learning translation improves over no augmentation.",
          paper="best at an intermediate weight, above FixedSizeCenterCrop's 63.5 %",
          ours=f"best weight {best:g}: {tr.top1_on[best]:.2f} % vs none {paired_none:.2f} % (the same seeds; every "
               f"seed {none:.2f} %)",
          criterion="per seed, Augerino's top-1 at the weight of the best mean minus the model without augmentation "
                    f"of the same seed > 0 ({SIGN[1]}; the weight is picked on the same images, as in the paper, "
                    f"which favours it); {seeds}")
    claim("tableA4/off_at_evaluation_slightly_higher",
          "Switching Augerino (translation) off at evaluation gives slightly higher top-1.",
          paper="Table A4 slightly above Table A3 (values not in the text)",
          ours=", ".join(f"{r:g}: {tr.top1_off[r] - tr.top1_on[r]:+.2f}" for r in tr.index),
          criterion=f"per seed, top-1 off minus on, the mean over the weights: an equivalence test, the 90 % "
                    f"t-interval over >= {N_MIN} seeds inside (0, {SLIGHT[0]:g}) points ({SLIGHT[1]})")
    best_ts = _best(runs, "translation then scale")
    tx, ty, zoom = ts.loc[best_ts, ["tx (% size)", "ty (% size)", "zoom (x)"]]
    claim("figA9/x_translation_only",
          "Allowed translation then zoom, Augerino (at its best weight) keeps x-translation and drops "
          "y-translation and zoom.", paper="tx near its cap; ty and zoom near 0",
          ours=f"weight {best_ts:g}: tx {tx:.1f} %, ty {ty:.1f} %, zoom {zoom:.2f}x",
          criterion=f"per seed at the weight of the best mean, each bound as a share of its cap (log-zoom for the "
                    f"zoom): tx > {KEPT[0]:g} ({KEPT[1]}); ty and zoom < {DROPPED[0]:g} ({DROPPED[1]}); {seeds}")
    claim("tableA5/scale_worse_than_translation",
          "Learning translation and zoom together does worse than learning translation alone.",
          paper="Table A5 below Table A3; small gain over no augmentation",
          ours=f"best {ts.top1_on.max():.2f} % vs translation alone {tr.top1_on.max():.2f} % (none {none:.2f} %)",
          criterion=f"per seed, top-1 with zoom minus translation alone, each at its best weight, paired by seed, "
                    f"< 0; {seeds}")
    return evidence


# ------------------------------------------------------------------------------ B5: section 4.5, App. E.2-E.3
WORDNET = (0.0, "the paper says 'more similar' without a size: any positive rank correlation counts")
ALL_TEN = (0.0, "the paper's 'all ten': the 10th best rotation combination above the best of any other operation")


def wordnet_evidence(reports: dict, metric: str = "wup") -> Evidence:
    """Fig. 4's evidence: Spearman's rho between the WordNet similarity (``metric``) and the ranking correlation of
    the class pairs, with its 95 % bootstrap interval over classes (``reports[metric]["interval"]``,
    :func:`~invlib.papers.b.similarity.wordnet_correlation`: whole classes resampled, so the K (K - 1) / 2 pairs
    of K classes are not taken as independent), against 0. Not measurable without synsets (``reports`` empty).

    Example
    -------
    >>> from invlib.results import Interval
    >>> wordnet_evidence({"wup": dict(interval=Interval(0.4, 0.1, 0.6, 10, 0.95, "bootstrap"))}).verdict
    'reproduced'
    >>> wordnet_evidence({}).verdict
    'not measurable at this profile'
    """
    if not reports:
        return not_measurable("these classes have no WordNet synsets (a folder of your own)")
    r = reports.get(metric) or next(iter(reports.values()))
    return decide(r["interval"], boundary=WORDNET[0], reason=WORDNET[1], unit="class", n_min=N_MIN)


def rotation_interval(s, k: int = 10, level: float = 0.95) -> Interval:
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
        return Interval(math.nan, math.nan, math.nan, 0, level, "bonferroni t")
    if rotation.sum() * len(classes) < k:  # fewer rotation combinations than places: the claim cannot hold
        return Interval(-math.inf, -math.inf, -math.inf, len(labels), level, "exact")
    mean = np.stack([changes[:, c].mean(1) for c in classes], 1)  # (E, C)
    se = np.stack([changes[:, c].std(1, ddof=1) / math.sqrt(len(c)) for c in classes], 1)
    df = np.array([len(c) - 1 for c in classes])[None, :]
    half = stats.t.ppf(1 - (1 - level) / (2 * mean.size), df) * se
    lo, hi = mean - half, mean + half

    def kth(values):
        return np.sort(values[rotation].ravel())[-k]

    return Interval(float(kth(mean) - mean[~rotation].max()), float(kth(lo) - hi[~rotation].max()),
                    float(kth(hi) - lo[~rotation].max()), len(labels), level, "bonferroni t")


def report_wordnet(run, reports: dict, searches: dict) -> dict[str, Evidence]:
    """Section 4.5's claims (Fig. 4, App. E.2): Fig. 4 on the search of the model without augmentation
    (:func:`wordnet_evidence`), App. E.2 on the standard-augmentation model's search (the model without
    augmentation's where there is none, :func:`rotation_interval`). Both are claims about this run's one trained
    model of each kind; returns the evidence by claim id."""
    r = reports.get("wup") or next(iter(reports.values()), dict(rho=math.nan, p=math.nan, metric="wup", pairs=[]))
    others = ", ".join(f"{m} ρ = {x['rho']:+.2f} (Mantel p = {x['p']:.3f})" for m, x in reports.items())
    fig4 = wordnet_evidence(reports)
    run.claim("fig4/wordnet_similar_classes",
              "Classes close in WordNet have more similar rankings of transformations (Fig. 4), for this run's model "
              "without augmentation.", paper="similar classes consistently more similar (correlation not in the text)",
              ours=f"{others}; {len(r['pairs'])} class pairs" if reports else "no WordNet synsets for these classes",
              criterion=f"Spearman ρ between {r['metric']} similarity and ranking correlation over the class pairs, "
                        f"95 % bootstrap interval over classes (whole classes resampled) > {WORDNET[0]:g} "
                        f"({WORDNET[1]}); "
                        f"the Mantel permutation p is shown beside it; >= {N_MIN} classes, a synset each",
              evidence=fig4)
    variant = "standard" if "standard" in searches else "none"
    s = searches[variant]["single"]
    iv = rotation_interval(s)
    cells = len(s.entries) * len(s.classes)
    e2 = (decide(iv, boundary=ALL_TEN[0], reason=ALL_TEN[1], unit="image", n_min=N_MIN) if cells >= 10 else
          not_measurable(f"the search has {cells} (class, entry) combinations, fewer than the paper's top 10"))
    rot = {v: _rotation_classes(searches[v]["single"]) for v in searches}
    run.claim("e2/rotation_top_weighted_boost",
              "Rotation is the transformation of all top-10 (class, transformation) pairs by weighted boost for the "
              "standard-augmentation ResNet-18 (this run's model); the classes are textiles (velvet, handkerchief, "
              "envelope, wool) (App. E.2).",
              paper="10 of 10", ours=f"{_top_rotations(searches[variant]['single'])} of 10 ({variant} model); 10th "
                                     f"best rotation minus the best other: {iv.estimate:+.3g}; classes with rotation "
                                     f"on top by weighted boost: {', '.join(rot[variant]) or 'none'}",
              criterion=f"the weighted boost of the 10th best rotation (class, entry) combination minus the best other "
                        f"> {ALL_TEN[0]:g} ({ALL_TEN[1]}); each combination a mean over the class's same-class image "
                        f"pairs ({iv.n} in all, the items of this one model), intervals simultaneous over all "
                        "combinations (Bonferroni)",
              evidence=e2)
    return {"fig4/wordnet_similar_classes": fig4, "e2/rotation_top_weighted_boost": e2}


def _top_rotations(s, k: int = 10) -> int:
    """How many of the top ``k`` (class, entry) combinations by weighted boost are rotations."""
    from .similarity import op_type

    boost = s.changes.double().clamp_min(0).numpy()
    labels = s.labels.numpy()
    cells = [(boost[e, labels == c].mean(), op_type(entry) == "rotate") for e, entry in enumerate(s.entries)
             for c in range(len(s.classes)) if (labels == c).any()]
    return sum(rot for _, rot in sorted(cells, key=lambda t: -t[0])[:k])


def _rotation_classes(s) -> list[str]:
    """The classes whose best entry by weighted boost is a rotation."""
    from .similarity import op_type

    return [c for c, row in zip(s.classes, s.top(1, score="weighted")) if op_type(row[0]) == "rotate"]


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
