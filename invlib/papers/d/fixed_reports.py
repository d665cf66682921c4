"""What chapter D5 shows: Table 2 beside the paper's numbers, the claims of section 5.3 with verdicts computed from
the run, the facts its prose quotes, and its figures (sampled crops on test scenes, the entropy band's trace, the
accuracy against the number of TTA samples).

:func:`report` takes the :class:`invlib.results.Run` of the chapter, its settings and what the drivers of
:mod:`invlib.papers.d.fixed` returned; it logs the metrics (accuracies in percent, keys stable across runs), records
each claim with :meth:`invlib.results.Run.claim` and returns Table 2 and ``facts`` (``{glue name: Markdown}``).

The classifiers are given (frozen); the module is trained once, beside the first of them. Every claim is therefore
about **this** trained module (and these classifiers), not about what training a module produces in general, which
would need several modules (seeds): its replicates are the test images, and its interval a paired percentile
bootstrap over them (:func:`invlib.results.bootstrap_interval`), each image's value the share of the repeats of the
TTA draws that classify it correctly, so the draws are resampled with their images. The repeats of the draws alone
(the paper's ±) leave out the test set's sampling error and do not enter a verdict. The claims are declared in paper
D's protocol (:mod:`invlib.papers.d.protocol`, the list ``D5``: each part's smallest effect that matters and its
reason); this module computes their effects, and :meth:`invlib.results.Run.claim` decides them.

Example
-------
>>> from invlib import results
>>> from invlib.papers.d.fixed import settings
>>> S = settings("cpu", tta_seeds=3)
>>> stats = pd.DataFrame(dict(side=[0.8, 0.8, 0.95, 0.7], covers_object=[0.95, 0.9, 0.9, 0.8],
...                           centre_in_box=[0.8, 0.7, 0.7, 0.6], entropy=[2.7, 3.0, 1.2, None],
...                           kl_to_mean=[0.3, 0.0, 0.001, 0.0]), index=list(STATS_ROWS))
>>> run = results.Run("demo", "cpu")
>>> table, facts = report(run, S, demo_tta(), stats, [], demo_items(), demo_control(3))
>>> {cid: c["verdict"] for cid, c in run.claims.items()}  # doctest: +NORMALIZE_WHITESPACE
{'table2/instaaug_beats_alone': 'reproduced', 'table2/instaaug_beats_random_crop': 'reproduced',
 'table2/global_tta_lowers_accuracy': 'reproduced', 'table2/transfer_without_retraining': 'reproduced',
 'table2/gain_grows_with_samples': 'reproduced', 'table2/instaaug_beats_input_free': 'reproduced',
 'control/gain_shrinks_without_variation': 'reproduced', 'fig6/crops_depend_on_the_input': 'reproduced',
 'fig6/crops_cover_the_object': 'reproduced'}
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ... import results
from ...pages import count
from ...protocol import decide
from ...results import mean_se
from .criteria import gain_shrink, record_replicates, train_seconds
from .fixed import MODULES, NONE, Fixed, settings
from .protocol import PROTOCOL

# Table 2 of the paper: top-1 accuracy (%) on ImageNet, (mean, standard error); the classifier alone has no error.
PAPER_COLUMNS = ("ResNet-50", "ResNet-18", "XCiT")
PAPER = {
    (NONE, 1): ((80.43, None), (69.73, None), (86.34, None)),
    ("random crop", 4): ((78.45, 0.04), (66.13, 0.04), (82.05, 0.01)),
    ("AutoAugment", 4): ((77.84, 0.05), (59.50, 0.01), (81.40, 0.00)),
    ("Fast AutoAugment", 4): ((77.87, 0.06), (61.43, 0.02), (81.42, 0.01)),
    ("InstaAug", 4): ((80.92, 0.04), (70.59, 0.05), (86.43, 0.04)),
    ("random crop", 10): ((79.60, 0.01), (67.87, 0.01), (82.84, 0.00)),
    ("AutoAugment", 10): ((79.20, 0.04), (63.96, 0.03), (82.43, 0.02)),
    ("Fast AutoAugment", 10): ((79.28, 0.01), (65.65, 0.02), (82.45, 0.02)),
    ("InstaAug", 10): ((81.18, 0.02), (70.96, 0.03), (86.47, 0.02)),
}
STATS_ROWS = ("InstaAug", "InstaAug, averaged over images", "untrained module", "random crop")  # fixed.crop_stats

CHAPTER = "d5_fixed_classifier_tta"  # its claims' declarations: PROTOCOL.of_chapter(CHAPTER)
# How the page names the crop measures of :func:`invlib.papers.d.fixed.crop_stats` (the JSON keeps the ids).
COLUMNS = {"side": "expected crop side", "covers_object": "crop holds the object's centre",
           "centre_in_box": "crop centred on the object", "entropy": "entropy (nats)",
           "kl_to_mean": "KL to the average (nats)"}


def _declared(cid: str):
    """The declaration of this chapter's claim ``cid`` (paper D's protocol)."""
    return PROTOCOL.get(cid, CHAPTER)


def _evidence(cid: str, effects) -> results.Evidence:
    """What the one decision function makes of claim ``cid``'s ``effects`` (for the prose and the ``ours`` text;
    :meth:`Run.claim` records the same)."""
    return decide(_declared(cid), effects)


# test images before a bootstrap over them can be decisive (a percentile bootstrap of fewer items undercovers)
N_MIN_IMAGES = _declared("table2/instaaug_beats_alone").parts[""].n_min


def paper_value(method: str, n: int, column: str) -> float | None:
    """The paper's mean accuracy (%) of ``method`` with ``n`` samples for its model ``column``, or None.

    Example
    -------
    >>> paper_value("InstaAug", 10, "ResNet-50"), paper_value("InstaAug", 1, "XCiT")
    (81.18, None)
    """
    row = PAPER.get((method, n))
    return None if row is None or column not in PAPER_COLUMNS else row[PAPER_COLUMNS.index(column)][0]


def column_of(S: Fixed, label: str) -> str:
    """The paper's column (model) our classifier ``label`` stands for.

    Example
    -------
    >>> column_of(settings("cpu"), "ViT"), column_of(settings("paper"), "XCiT")
    ('XCiT', 'XCiT')
    """
    return S.stands_for.get(label, label)


def _key(text: str) -> str:
    return text.lower().replace(", ", "_").replace(" ", "_").replace("-", "")


def _pp(x: float) -> str:
    """A share as percent with two decimals."""
    return f"{100 * x:.2f} %"


def _gain(ev: results.Evidence | results.Interval) -> str:
    """A difference in points with its interval over the test images, e.g. ``"+1.20 points [-0.40, +2.80]"``."""
    if getattr(ev, "verdict", None) == results.NOT_MEASURABLE or not np.isfinite(ev.estimate):
        return "not measured"
    text = f"{ev.estimate:+.2f}".replace("-0.00", "+0.00") + " points"
    return text + ("" if np.isnan(ev.lo) else f" [{ev.lo:+.2f}, {ev.hi:+.2f}]")


def _gain_words(ev: results.Evidence | results.Interval) -> str:
    """The same difference for the prose, its interval in words: ``"+1.20 points (95 % interval -0.40 to +2.80)"``.

    Example
    -------
    >>> _gain_words(results.Interval(1.2, -0.4, 2.8, 200, 0.95, "bootstrap"))
    '+1.20 points (95 % interval -0.40 to +2.80)'
    """
    if getattr(ev, "verdict", None) == results.NOT_MEASURABLE or not np.isfinite(ev.estimate):
        return "not measured"
    text = f"{ev.estimate:+.2f}".replace("-0.00", "+0.00") + " points"
    level = f"{100 * (getattr(ev, 'level', None) or 0.95):g} % interval"
    return text + ("" if np.isnan(ev.lo) else f" ({level} {ev.lo:+.2f} to {ev.hi:+.2f})")


def accuracy(res: pd.DataFrame, model: str, method: str, n: int) -> np.ndarray:
    """The accuracies of ``(model, method, n)`` over the repeats of the draws, in repeat order (the classifier
    alone: its one value).

    Example
    -------
    >>> res = pd.DataFrame(dict(model="a", method="InstaAug", n=4, seed=[1, 0], acc=[0.6, 0.5]))
    >>> accuracy(res, "a", "InstaAug", 4).tolist()
    [0.5, 0.6]
    """
    g = res[(res["model"] == model) & (res["method"] == method) & (res["n"] == n)].sort_values("seed")
    return g["acc"].to_numpy(dtype=float)


def hits(res: pd.DataFrame, model: str, method: str, n: int) -> np.ndarray:
    """``(repeats, N)``: which test images ``(model, method, n)`` classified correctly in each repeat of the draws
    (the classifier alone: one row), from :func:`invlib.papers.d.fixed.tta`'s ``hits``.

    Example
    -------
    >>> res = pd.DataFrame(dict(model="a", method="InstaAug", n=4, seed=[1, 0], hits=[np.array([1, 1]),
    ...                                                                               np.array([0, 1])]))
    >>> hits(res, "a", "InstaAug", 4).tolist()
    [[0, 1], [1, 1]]
    """
    g = res[(res["model"] == model) & (res["method"] == method) & (res["n"] == n)].sort_values("seed")
    return np.stack(g["hits"].to_list()) if len(g) else np.empty((0, 0))


def per_image(res: pd.DataFrame, model: str, a: tuple[str, int], b: tuple[str, int]) -> np.ndarray:
    """Per test image, in points, the share of ``a``'s repeats of the draws that classify it correctly minus
    ``b``'s (``a``, ``b``: ``(method, n)``; the classifier alone has one). The same images and the same repeats'
    draws on both sides: the paired effect a bootstrap over test images resamples.

    Example
    -------
    >>> res = pd.DataFrame([dict(model="a", method="none", n=1, seed=0, hits=np.array([0, 1, 1]))] +
    ...                    [dict(model="a", method="InstaAug", n=10, seed=s, hits=h)
    ...                     for s, h in enumerate([np.array([1, 1, 1]), np.array([0, 1, 0])])])
    >>> per_image(res, "a", ("InstaAug", 10), ("none", 1)).tolist()
    [50.0, 0.0, -50.0]
    """
    return 100 * (hits(res, model, *a).mean(0) - hits(res, model, *b).mean(0))


def image_effect(effect):
    """The effect of a claim about this module from per-image values ``effect`` (points): a function ``level ->
    Interval``, the percentile bootstrap over the test images at the level the claim's declaration needs.

    Example
    -------
    >>> iv = image_effect(np.r_[np.full(40, 100.0), np.zeros(160)])(0.95)  # 40 of 200 images gained
    >>> round(iv.estimate, 1), iv.n, iv.method
    (20.0, 200, 'bootstrap')
    """
    return lambda level: results.bootstrap_interval(effect, level=level)


def interval(effect) -> results.Interval:
    """The 95 % percentile bootstrap interval of per-image values ``effect`` over the test images, for the prose (it
    decides nothing).

    Example
    -------
    >>> round(interval(np.r_[np.full(40, 100.0), np.zeros(160)]).estimate, 1)
    20.0
    """
    return results.bootstrap_interval(effect, level=results.LEVEL["greater"])


# ----------------------------------------------------------------------------- Table 2
def table2(S: Fixed, res: pd.DataFrame) -> pd.DataFrame:
    """Table 2 with this run beside the paper: one row per (method, samples), in the paper's order, then the
    methods the paper has no row for (the input-free control) and the single-sample rows (beyond the paper); per
    classifier ``"<label>: ours"`` (mean ± SE over the repeats, %) and ``"<column>: paper"``.

    Example
    -------
    >>> res = pd.DataFrame(dict(model="ResNet", method=["none", "InstaAug"], n=[1, 10], seed=0, acc=[0.5, 0.6]))
    >>> t = table2(settings("cpu", models={"ResNet": "zoo:small_resnet18_s4/standard"}), res)
    >>> t.loc[("InstaAug", 10)].tolist()
    ['60.00', '81.18 ± 0.02']
    """
    extra = [(m, n) for m in S.methods if not any(k[0] == m for k in PAPER) for n in sorted(S.samples) if n > 1]
    order = list(PAPER) + extra + [(m, 1) for m in S.methods]
    cols = {}
    for label in S.models:
        col = column_of(S, label)
        ours, paper = [], []
        for method, n in order:
            acc = accuracy(res, label, method, n)
            m, se = mean_se(100 * acc) if len(acc) else (np.nan, np.nan)
            ours.append("—" if np.isnan(m) else f"{m:.2f}" + ("" if np.isnan(se) else f" ± {se:.2f}"))
            row = PAPER.get((method, n))
            v = row[PAPER_COLUMNS.index(col)] if row and col in PAPER_COLUMNS else None
            paper.append("—" if v is None else f"{v[0]:.2f}" + ("" if v[1] is None else f" ± {v[1]:.2f}"))
        cols[f"{label}: ours"], cols[f"{col}: paper"] = ours, paper
    index = pd.MultiIndex.from_tuples(order, names=["method", "samples"])
    return pd.DataFrame(cols, index=index)


def control_table(S: Fixed, res: pd.DataFrame, control: pd.DataFrame | None) -> pd.DataFrame:
    """The data control beside the run: the frozen classifier's accuracy (%, mean over the repeats of the draws)
    alone, with the input-free module's and with InstaAug's TTA (``max(S.samples)`` samples) on the test scenes as
    the classifier's data have them and on the same scenes at ``S.control_variation`` (the modules of the run's
    training seed), and InstaAug's gain over the input-free module, one row per data.

    Example
    -------
    >>> S = settings("cpu", models={"ResNet": "zoo:small_resnet18_s4/standard"})
    >>> t = control_table(S, demo_tta(models=("ResNet",)), demo_control())
    >>> list(t.columns), len(t)
    (['alone', 'input-free', 'InstaAug', 'InstaAug − input-free'], 2)
    """
    n = max(S.samples)
    rows = {}
    for name, r in (("variation 1 (the classifier's scenes)", res),
                    (f"variation {S.control_variation:g} (the same scenes, still)",
                     None if control is None else still_scenes(control))):
        if r is None:
            continue
        acc = {m: 100 * accuracy(r, S.frozen, m, k).mean() for m, k in ((NONE, 1), ("input-free", n), ("InstaAug", n))}
        rows[name] = dict(alone=acc[NONE], **{"input-free": acc["input-free"], "InstaAug": acc["InstaAug"],
                                             "InstaAug − input-free": acc["InstaAug"] - acc["input-free"]})
    return pd.DataFrame.from_dict(rows, orient="index").round(2)


def _setting(v) -> str:
    """A setting's value for the table of departures: numbers for people, lists and dicts inline, None as "—".

    Example
    -------
    >>> _setting({"ResNet": "zoo:small"}), _setting(("a", "b")), _setting(1281167), _setting(None), _setting(0.001)
    ('ResNet: zoo:small', 'a, b', '1,281,167', '—', '0.001')
    """
    from ...pages import number

    if isinstance(v, dict):
        return "; ".join(f"{k}: {_setting(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(_setting(x) for x in v)
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return number(v, digits=4) if isinstance(v, (int, float)) else str(v)


def departures(S: Fixed) -> pd.DataFrame:
    """Every setting where ``S`` departs from the paper's (:func:`invlib.papers.d.fixed.settings` ``("paper")``):
    ``setting | paper | this run``.

    Example
    -------
    >>> d = departures(settings("cpu"))
    >>> d.loc["optimizer"].tolist(), d.loc["module_lr"].tolist(), "h_min" in d.index  # the band is the paper's
    (['sgd', 'adam'], ['0.001', '0.003'], False)
    """
    from ... import zoo

    paper, ours = dataclasses.asdict(settings("paper")), dataclasses.asdict(S)
    P = settings("paper")
    paper["size"], ours["size"] = zoo.image_side(P, P.size), zoo.image_side(S, S.size)  # None: the zoo's side
    skip = {"profile", "device", "progress", "chunk", "n_show", "stands_for", "zoo_data"}
    rows = [dict(setting=k, paper=_setting(paper[k]), **{"this run": _setting(v)}) for k, v in ours.items()
            if k not in skip and v != paper[k]]
    return pd.DataFrame(rows, columns=["setting", "paper", "this run"]).set_index("setting")


# ----------------------------------------------------------------------------- the report
def report(run, S: Fixed, res: pd.DataFrame, stats: pd.DataFrame, hist: list[dict], items: pd.DataFrame,
           control: pd.DataFrame | None = None, free_hist: list[dict] | None = None) -> tuple[pd.DataFrame, dict]:
    """Log the chapter's metrics, record the claims of section 5.3 and return Table 2 (:func:`table2`) and the facts
    the prose quotes (its sentences about results made from the verdicts). ``res``:
    :func:`invlib.papers.d.fixed.tta`; ``stats``: :func:`invlib.papers.d.fixed.crop_stats`; ``hist``: the module's
    training history (:func:`invlib.papers.d.fixed.train`); ``items``: the crops per test image
    (:func:`invlib.papers.d.fixed.crop_per_image`); ``control``: the data control
    (:func:`invlib.papers.d.fixed.control`: the same test scenes at ``S.control_variation``; None: not run);
    ``free_hist``: the input-free module's training history. Records what a training seed of the controls costs
    (``control_seeds``, :func:`control_seconds`)."""
    from .fixed import band_trace, summary

    for r in summary(res).to_dict("records"):
        col = column_of(S, r["model"])
        run.log(f"{_key(r['model'])}/{_key(r['method'])}_n{r['n']}", 100 * r["mean"],
                paper=paper_value(r["method"], r["n"], col),
                note=f"% test accuracy, {r['repeats']} repeat(s) of the draws, SE {100 * r['se']:.2f}"
                if r["repeats"] > 1 else "% test accuracy")
    for r in (summary(still_scenes(control)).to_dict("records") if control is not None else []):
        run.log(f"control/{_key(r['model'])}/{_key(r['method'])}_n{r['n']}", 100 * r["mean"],
                note=f"% test accuracy at variation {S.control_variation:g}, {r['repeats']} repeat(s) of the draws")
    for name, row in stats.iterrows():
        run.log(f"crops/{_key(name)}", {k: (None if pd.isna(v) else float(v)) for k, v in row.items()})
    trace = band_trace(hist)
    run.log("band/entropy_by_check", trace["entropy"].tolist())
    run.log("band/lambda_by_check", trace["lambda"].tolist())
    ev = _table2_claims(run, S, res) | _control_claims(run, S, res, control) | _crop_claims(run, stats, items)
    record_replicates(run, "control_seeds", control_seconds(hist, free_hist, control), CONTROL_CLAIMS,
                      note="a training seed: InstaAug's module and its input-free control beside the frozen "
                           "classifier, on the classifier's scenes and on the still ones (the zoo classifier is "
                           "trained once, for every seed)")
    return table2(S, res), _facts(S, res, stats, trace, ev, control)


CONTROL_CLAIMS = ("table2/instaaug_beats_input_free", "control/gain_shrinks_without_variation")  # over training seeds


def control_seconds(hist: list[dict], free_hist: list[dict] | None, control: pd.DataFrame | None) -> list[float]:
    """Per training seed of the controls, in seed order, what it took: training its two modules and measuring
    their test-time augmentation on each kind of scene (``train_seconds`` and, where recorded, ``seconds`` of
    :func:`invlib.papers.d.fixed.control`'s rows, one value per kind of scene and seed). Seed 0's modules on the
    classifier's scenes are the run's (``hist``, ``free_hist``: their fit histories); their test-time augmentation
    is the run's Table 2 (the test images' family), not counted here. Empty without the control's seconds.

    Example
    -------
    >>> c = demo_control(2).assign(train_seconds=lambda d: 10.0 + d["replicate"])
    >>> control_seconds([dict(seconds=2.0)], [dict(seconds=3.0)], c)
    [15.0, 22.0]
    >>> control_seconds([dict(seconds=2.0)], [dict(seconds=3.0)], c.assign(seconds=4.0))  # with the TTA's
    [19.0, 30.0]
    """
    if control is None or "train_seconds" not in control:
        return []
    cost = control["train_seconds"] + (control["seconds"] if "seconds" in control else 0.0)
    per = cost.groupby([control["replicate"], control["still"]]).first().groupby(level=0).sum()
    per.loc[0] = per.get(0, 0.0) + train_seconds(hist) + train_seconds(free_hist or [])
    return [float(v) for v in per.sort_index()]


def _not_run(what: str) -> results.Evidence:
    return results.not_measurable(f"{what} is not run at this profile (its methods, samples or models)", unit="image")


def _table2_claims(run, S: Fixed, res: pd.DataFrame) -> dict:
    """Table 2's claims about this module and these classifiers; returns their evidence by short name."""
    frozen, others = S.frozen, [m for m in S.models if m != S.frozen]
    n_hi, n_lo = max(S.samples), sorted(S.samples)[-2] if len(S.samples) > 1 else max(S.samples)
    with_ia, has_rc = "InstaAug" in S.methods, "InstaAug" in S.methods and "random crop" in S.methods
    alone, ia = accuracy(res, frozen, NONE, 1)[0], accuracy(res, frozen, "InstaAug", n_hi)
    out, cid = {}, "table2/instaaug_beats_alone"

    effects = image_effect(per_image(res, frozen, ("InstaAug", n_hi), (NONE, 1))) if with_ia else \
        _not_run("InstaAug's test-time augmentation")
    out["alone"] = _evidence(cid, effects)
    run.claim(_declared(cid), effects=effects, ours=f"{_pp(alone)} → {_pp(ia.mean()) if len(ia) else '—'} "
              f"({frozen}; {_gain(out['alone'])})")

    cid = "table2/instaaug_beats_random_crop"
    effects = image_effect(per_image(res, frozen, ("InstaAug", n_hi), ("random crop", n_hi))) if has_rc else \
        _not_run("random-crop test-time augmentation")
    out["rc"] = _evidence(cid, effects)
    rc = accuracy(res, frozen, "random crop", n_hi) if has_rc else np.array([np.nan])
    run.claim(_declared(cid), effects=effects,
              ours=f"{_pp(ia.mean()) if len(ia) else '—'} vs {_pp(rc.mean())} ({_gain(out['rc'])})")

    cid = "table2/global_tta_lowers_accuracy"
    drops = {key: image_effect(per_image(res, frozen, (m, int(n)), (NONE, 1)))
             for key in _declared(cid).parts for m, n in [key.split(", ")] if m in S.methods and int(n) in S.samples}
    effects = {key: drops.get(key, _not_run(key)) for key in _declared(cid).parts} if drops else \
        _not_run("random-crop or AutoAugment TTA")
    out["drops"] = _evidence(cid, effects)
    run.claim(_declared(cid), effects=effects,
              ours="; ".join(f"{k}: {_gain(e)}" for k, e in out["drops"].parts if k in drops) or "—")

    cid = "table2/transfer_without_retraining"
    labels = {column_of(S, m): m for m in others if column_of(S, m) in _declared(cid).parts} if with_ia else {}
    effects = {col: image_effect(per_image(res, labels[col], ("InstaAug", n_hi), (NONE, 1))) if col in labels else
               _not_run(f"a classifier standing for {col}") for col in _declared(cid).parts} if labels else \
        _not_run("another classifier")
    out["transfer"] = _evidence(cid, effects)
    out["transfer_by_model"] = {labels[col]: e for col, e in out["transfer"].parts if col in labels}
    run.claim(_declared(cid), effects=effects,
              ours="; ".join(f"{m} ({column_of(S, m)}): {_pp(accuracy(res, m, NONE, 1)[0])} → "
                             f"{_pp(accuracy(res, m, 'InstaAug', n_hi).mean())} ({_gain(e)})"
                             for m, e in out["transfer_by_model"].items()) or "—")

    cid = "table2/gain_grows_with_samples"
    effects = image_effect(per_image(res, frozen, ("InstaAug", n_hi), ("InstaAug", n_lo))) \
        if with_ia and n_hi > n_lo else _not_run("InstaAug's TTA at two numbers of samples")
    out["grow"] = _evidence(cid, effects)
    run.claim(_declared(cid), effects=effects, ours=f"{frozen}: {_gain(out['grow'])}")

    has_free = set(MODULES) <= set(S.methods)
    out["free"] = interval(per_image(res, frozen, *_pair(n_hi))) if has_free else \
        _not_run("the input-free module's test-time augmentation")  # this pair of modules, for the prose
    return out


def _pair(n: int) -> tuple[tuple[str, int], tuple[str, int]]:
    """InstaAug's and the input-free module's TTA with ``n`` samples: the two sides of the control."""
    return ("InstaAug", n), ("input-free", n)


def free_gains(S: Fixed, res: pd.DataFrame, control: pd.DataFrame | None) -> tuple[dict, dict]:
    """``(varied, still)``: per training seed (``{replicate: (N,) array}``), per test image in points, InstaAug's
    TTA minus the input-free module's (``max(S.samples)`` samples, the frozen classifier, each image's share of the
    repeats of the draws) on the classifier's scenes and on the same scenes held still. Seed 0 on the classifier's
    scenes is the run's (``res``); the rest come from :func:`invlib.papers.d.fixed.control`.

    Example
    -------
    >>> S = settings("cpu", control_seeds=2)
    >>> varied, still = free_gains(S, demo_tta(), demo_control(2))
    >>> sorted(varied), sorted(still), varied[0].shape
    ([0, 1], [0, 1], (200,))
    """
    varied, still = _free_arms(S, res, control)
    return ({k: _points(*arms) for k, arms in varied.items()}, {k: _points(*arms) for k, arms in still.items()})


def _points(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per test image, ``a`` minus ``b`` in points (:func:`per_image` of two arms' shares)."""
    return 100 * (a - b)


def _free_arms(S: Fixed, res: pd.DataFrame, control: pd.DataFrame | None) -> tuple[dict, dict]:
    """``(varied, still)`` of :func:`free_gains` before the difference: per training seed ``{replicate: (InstaAug,
    input-free)}``, two ``(N,)`` arrays, each test image's share of the repeats of the draws that classify it
    correctly (``max(S.samples)`` samples, the frozen classifier)."""
    n, varied, still = max(S.samples), {}, {}
    if not set(MODULES) <= set(S.methods):  # the control is InstaAug against its input-free module
        return varied, still

    def arms(frame):
        return tuple(hits(frame, S.frozen, method, n).mean(0) for method, _ in _pair(n))

    varied[0] = arms(res)
    for (is_still, k), g in ([] if control is None else control.groupby(["still", "replicate"])):
        (still if is_still else varied)[int(k)] = arms(g)
    sizes = {len(a) for a, _ in (*varied.values(), *still.values())}
    if len(sizes) > 1:
        raise ValueError(f"the data control pairs test scene i with scene i: it needs the run's test scenes; got "
                         f"{sorted(sizes)} images.")
    return varied, still


def _seeds_text(effects: dict) -> str:
    return ", ".join(f"{v:+.2f}" for _, v in sorted(effects.items())) + f" points ({count(len(effects), 'seed')})"


def _control_claims(run, S: Fixed, res: pd.DataFrame, control: pd.DataFrame | None) -> dict:
    """The controls' claims, about training (unit: seed): per-input crops beat input-free crops, and that gain
    shrinks on scenes without per-instance variation (the same scenes, objects centred and of one size). Returns
    their evidence, and seed 0's per-image evidence (``still``, ``shrink0``) for the prose."""
    frozen, n_hi = S.frozen, max(S.samples)
    arms, arms_still = _free_arms(S, res, control)
    varied = {k: _points(*a) for k, a in arms.items()}
    ia = accuracy(res, frozen, "InstaAug", n_hi)
    free = accuracy(res, frozen, "input-free", n_hi)
    gains = {k: float(d.mean()) for k, d in varied.items()}
    cid = "table2/instaaug_beats_input_free"
    effects = list(gains.values()) if gains else _not_run("the input-free module's test-time augmentation")
    ev = _evidence(cid, effects)
    ev0 = interval(varied[0]) if 0 in varied else ev
    run.claim(_declared(cid), effects=effects, ours=f"{frozen}, InstaAug minus input-free per seed: "
              f"{_seeds_text(gains) if gains else '—'}; seed 0 {_pp(ia.mean()) if len(ia) else '—'} vs "
              f"{_pp(free.mean()) if len(free) else '—'} ({_gain(ev0)} over the test images)")
    per_image_shrink = {k: gain_shrink(*arms[k], *arms_still[k])[2] for k in sorted(set(arms) & set(arms_still))}
    shrink = {k: float(d.mean()) for k, d in per_image_shrink.items()}
    cid = "control/gain_shrinks_without_variation"
    effects = list(shrink.values()) if shrink else _not_run("the data control (data_control, both modules' TTA)")
    ev_c = _evidence(cid, effects)
    still0 = interval(_points(*arms_still[0])) if 0 in arms_still else _not_run("the data control")
    shrink0 = interval(per_image_shrink[0]) if 0 in per_image_shrink else still0
    run.claim(_declared(cid), effects=effects,
              ours=f"{frozen}, InstaAug minus input-free with {n_hi} samples, varied minus still, per seed: "
              f"{_seeds_text(shrink) if shrink else '—'}; seed 0: varied {_gain(ev0)}, still (variation "
              f"{S.control_variation:g}) {_gain(still0)}, shrinks by {_gain(shrink0)} over the test images")
    for name, per_image in (("InstaAug - input-free", varied), ("varied - still", per_image_shrink)):
        if len(per_image) >= 2:  # where the seeds' spread comes from: the test images or the modules' training
            run.variance("control_seeds", name, np.stack([per_image[k] for k in sorted(per_image)]))
    return dict(free_seeds=ev, control=ev_c, still0=still0, shrink0=shrink0)


def _crop_claims(run, stats: pd.DataFrame, items: pd.DataFrame) -> dict:
    """Fig. 6's claims about this module's crops, per test image; returns their evidence by short name."""
    st, avg, rnd = stats.loc["InstaAug"], stats.loc["InstaAug, averaged over images"], stats.loc["random crop"]
    kl0 = max(0.0, float(stats.loc["untrained module", "kl_to_mean"]))
    effects = {"fig6/crops_depend_on_the_input": image_effect(items["kl_to_mean"].clip(lower=0).to_numpy(float)),
               "fig6/crops_cover_the_object": {
                   "over the same crops averaged over images": image_effect(
                       (items["covers_object"] - items["covers_averaged"]).to_numpy(float)),
                   "over the random crop": image_effect((items["covers_object"] - items["covers_random"]).to_numpy(
                       float))}}
    kl, cover = (_evidence(cid, e) for cid, e in effects.items())
    run.claim(_declared("fig6/crops_depend_on_the_input"), effects=effects["fig6/crops_depend_on_the_input"],
              ours=f"mean KL to the average distribution {kl.estimate:.3f} nats (untrained module {kl0:.3f})")
    run.claim(_declared("fig6/crops_cover_the_object"), effects=effects["fig6/crops_cover_the_object"],
              ours=f"P(crop holds the object's centre) {st['covers_object']:.3f}; the same crops averaged over images "
              f"{avg['covers_object']:.3f}; random crop {rnd['covers_object']:.3f}")
    return dict(kl=kl, cover=cover)


def _says(ev: results.Evidence, reproduced: str, not_reproduced: str) -> str:
    """The prose's sentence for a verdict, with the interval (or each measured part's) it rests on."""
    d = " | ".join(f"{name}: {p.text()}" for name, p in ev.parts if p.verdict != results.NOT_MEASURABLE) \
        if ev.parts else ev.text()
    return results.phrase(ev, reproduced=f"{reproduced} ({d}).", not_reproduced=f"{not_reproduced} ({d}).",
                          inconclusive=f"These test images cannot decide it ({d}).", partly=f"Only partly: {d}.",
                          not_measurable=f"Not measurable at this profile ({ev.reason}).")


def _says_seeds(ev: results.Evidence, reproduced: str, not_reproduced: str) -> str:
    """The prose's sentence for a verdict over training seeds."""
    d = ev.text()
    return results.phrase(ev, reproduced=f"Over the training seeds: {reproduced} ({d}).",
                          not_reproduced=f"Over the training seeds: {not_reproduced} ({d}).",
                          inconclusive=f"Whether that holds for modules trained this way, the training seeds run "
                                       f"cannot decide ({d}).",
                          not_measurable=f"Not measurable at this profile ({ev.reason}).")


def still_scenes(control: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`invlib.papers.d.fixed.control` on the still scenes with the first training seed's modules
    (the run's seed), in :func:`invlib.papers.d.fixed.tta`'s columns.

    Example
    -------
    >>> len(still_scenes(demo_control(3))) == len(demo_tta(DEMO_STILL, models=("ResNet",)))
    True
    """
    g = control[control["still"] & (control["replicate"] == 0)]
    return g.drop(columns=["variation", "replicate", "still"]).reset_index(drop=True)


def _facts(S: Fixed, res: pd.DataFrame, stats: pd.DataFrame, trace: pd.DataFrame, ev: dict,
           control: pd.DataFrame | None = None) -> dict:
    """The facts the prose quotes: the run's numbers, and its sentences about results made from the verdicts."""
    frozen, n_hi = S.frozen, max(S.samples)
    alone, ia = accuracy(res, frozen, NONE, 1)[0], accuracy(res, frozen, "InstaAug", n_hi)
    rc = accuracy(res, frozen, "random crop", n_hi)
    st, avg, rnd = stats.loc["InstaAug"], stats.loc["InstaAug, averaged over images"], stats.loc["random crop"]
    others = [m for m in S.models if m != frozen]
    transfer_rc = {m: interval(per_image(res, m, ("InstaAug", n_hi), ("random crop", n_hi))) for m in others
                   if {"InstaAug", "random crop"} <= set(S.methods)}
    vs_alone = {m: _gain_words(interval(per_image(res, frozen, (m, n_hi), (NONE, 1))))
                if m in S.methods else "not measured" for m in ("random crop", "AutoAugment")}
    free = accuracy(res, frozen, "input-free", n_hi)
    still = {m: accuracy(still_scenes(control), frozen, m, n) for m, n in ((NONE, 1), *_pair(n_hi))} \
        if control is not None else {}
    widths = [e.hi - e.lo for e in (ev["alone"], ev["rc"], ev["free"]) if np.isfinite(e.hi - e.lo)]
    return {
        "d5_frozen": f"{frozen} (`{S.models[frozen]}`)",
        "d5_free": _pp(free.mean()) if len(free) else "—", "d5_vs_free": _gain_words(ev["free"]),
        "d5_vs_free_verdict": _says_seeds(ev["free_seeds"], "Per-input crops beat input-free crops",
                                          "Per-input crops do not beat input-free crops by the smallest gain that "
                                          "matters"),
        "d5_control_variation": f"{S.control_variation:g}",
        "d5_still": ", ".join(f"{'alone' if k == NONE else k} {_pp(v.mean())}" for k, v in still.items() if len(v))
                    or "not run",
        "d5_control": _gain_words(ev["shrink0"]), "d5_still_gain": _gain_words(ev["still0"]),
        "d5_control_verdict": _says_seeds(ev["control"], "The per-input gain shrinks without per-instance variation",
                                          "The per-input gain does not shrink by the smallest change that matters "
                                          "without per-instance variation"),
        "d5_ci_width": f"{min(widths):.1f} to {max(widths):.1f} points" if widths else "not measured",
        "d5_alone": _pp(alone), "d5_ia": _pp(ia.mean()) if len(ia) else "—", "d5_n": str(n_hi),
        "d5_n_lo": str(sorted(S.samples)[-2] if len(S.samples) > 1 else n_hi),
        "d5_gain": _gain_words(ev["alone"]), "d5_vs_rc": _gain_words(ev["rc"]),
        "d5_rc": _pp(rc.mean()) if len(rc) else "—",
        "d5_repeats": str(S.tta_seeds), "d5_n_test": f"{S.n_test:,}",
        "d5_gain_verdict": _says(ev["alone"], "This module's TTA raises the frozen classifier's accuracy",
                                 "This module's TTA does not raise the frozen classifier's accuracy by the smallest "
                                 "gain that matters"),
        "d5_vs_rc_verdict": _says(ev["rc"], "This module's crops beat random crops",
                                  "This module's crops do not beat random crops by the smallest gain that matters"),
        "d5_drops_verdict": _says(ev["drops"], "Both global TTAs lower the classifier's accuracy",
                                  "The global TTAs do not lower the classifier's accuracy by the smallest drop that "
                                  "matters"),
        "d5_transfer": "; ".join(f"{m}: {_gain_words(p)}" for m, p in ev["transfer_by_model"].items())
                       or "no other classifier",
        "d5_transfer_verdict": _says(ev["transfer"], "The module raises the other classifiers' accuracy too",
                                     "The module does not raise the other classifiers' accuracy by the smallest "
                                     "gain that matters"),
        "d5_transfer_rc": "; ".join(f"{m}: {_gain_words(e)}" for m, e in transfer_rc.items()) or "not measured",
        "d5_rc_vs_alone": vs_alone["random crop"], "d5_aa_vs_alone": vs_alone["AutoAugment"],
        "d5_grow": _gain_words(ev["grow"]),
        "d5_grow_verdict": _says(ev["grow"], "More samples help",
                                 "More samples do not help by the smallest gain that matters"),
        "d5_kl": f"{ev['kl'].estimate:.3f} nats (untrained module: "
                 f"{max(0.0, float(stats.loc['untrained module', 'kl_to_mean'])):.3f})",
        "d5_kl_verdict": _says(ev["kl"], "The crops depend on the image",
                               "The crops depend on the image less than the boundary"),
        "d5_cover": f"{st['covers_object']:.2f} (the same crops unmatched to the image: {avg['covers_object']:.2f}, "
                    f"random crop: {rnd['covers_object']:.2f})",
        "d5_cover_verdict": _says(ev["cover"], "The crops follow the object",
                                  "The crops hold the object no more often than the references, by the smallest "
                                  "share that matters"),
        "d5_side": f"{st['side']:.2f} of the image side (untrained module: "
                   f"{stats.loc['untrained module', 'side']:.2f}, random crop: {rnd['side']:.2f})",
        "d5_band": (f"from {trace['entropy'].iloc[0]:.2f} to {trace['entropy'].iloc[-1]:.2f} nats over "
                    f"{int(trace['step'].iloc[-1])} steps, λ ending at {trace['lambda'].iloc[-1]:.3f}"
                    if len(trace) else "not traced"),
        "d5_test_se": f"{100 * np.sqrt(alone * (1 - alone) / S.n_test):.1f} points",
        "d5_band_range": f"[{S.h_min:g}, {S.h_max:g}]",
    }


# ----------------------------------------------------------------------------- figures
def plot_crops(test, crops, classes=None, show_boxes: bool = True):
    """Sampled crops on test scenes: each scene with its object's box (red) and the crops ``crops`` ``(n, k, 3)``
    (centre x, centre y, side; yellow) drawn for it from ``p(tau; phi(x))``, and below it the crop-centre density.

    Example
    -------
    >>> import torch
    >>> from invlib import data
    >>> test = data.load("scenes", "test", n=3)
    >>> axes = plot_crops(test, torch.tensor([[[0.5, 0.5, 0.75]] * 3] * 4))
    >>> len(axes)
    3
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    n, k = crops.shape[:2]
    size = test.images.shape[-1]
    fig, axes = plt.subplots(1, k, figsize=(2.2 * k, 2.5), squeeze=False)
    for i, ax in enumerate(axes[0]):
        ax.imshow(test.images[i].permute(1, 2, 0).numpy())
        ax.axis("off")
        for cx, cy, s in crops[:, i].tolist():
            ax.add_patch(Rectangle(((cx - s / 2) * size - 0.5, (cy - s / 2) * size - 0.5), s * size, s * size,
                                   fill=False, ec="yellow", lw=1, alpha=0.6))
        if show_boxes and test.boxes is not None:
            x0, y0, x1, y1 = test.boxes[i].tolist()
            ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, ec="red", lw=1.5))
        ax.set_title((classes or test.classes)[int(test.labels[i])], fontsize=8)
    fig.tight_layout()
    return list(axes[0])


def plot_trace(trace: pd.DataFrame, S: Fixed):
    """The entropy band over training: the mean entropy at each check (the band shaded) and ``lambda`` after it.

    Example
    -------
    >>> t = pd.DataFrame({"step": [5, 10], "entropy": [1.2, 2.6], "lambda": [0.2, 0.2], "epoch": [0, 0]})
    >>> [ax.get_ylabel() for ax in plot_trace(t, settings("cpu"))]
    ['mean entropy (nats)', 'λ']
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3))
    ax.axhspan(S.h_min, S.h_max, color="C2", alpha=0.2, label=f"band [{S.h_min:g}, {S.h_max:g}]")
    ax.plot(trace["step"], trace["entropy"], "o-", ms=3, color="C0", label="entropy")
    ax.set(xlabel="training step of the module", ylabel="mean entropy (nats)")
    twin = ax.twinx()
    twin.plot(trace["step"], trace["lambda"], "s--", ms=3, color="C3", label="λ")
    twin.set_ylabel("λ")
    ax.legend(loc="lower right", fontsize=8)
    twin.legend(loc="center right", fontsize=8)
    fig.tight_layout()
    return [ax, twin]


def plot_tta(res: pd.DataFrame):
    """Accuracy against the number of TTA samples, one panel per classifier, one line per method (mean ± SE over the
    repeats), the classifier alone dashed.

    Example
    -------
    >>> res = pd.DataFrame(dict(model="a", method=["none", "InstaAug", "InstaAug"], n=[1, 1, 4], seed=0,
    ...                         acc=[0.5, 0.4, 0.55]))
    >>> [ax.get_title() for ax in plot_tta(res)]
    ['a']
    """
    import matplotlib.pyplot as plt

    from .fixed import summary

    s = summary(res)
    models_ = list(dict.fromkeys(s["model"]))
    fig, axes = plt.subplots(1, len(models_), figsize=(4.1 * len(models_), 3.2), squeeze=False)
    for ax, m in zip(axes[0], models_):
        g = s[s["model"] == m]
        for i, (method, h) in enumerate(g[g["method"] != NONE].groupby("method", sort=False)):
            ax.errorbar(h["n"], 100 * h["mean"], yerr=100 * h["se"].fillna(0), fmt="o-", ms=3, capsize=2,
                        label=method, color=f"C{i}")
        base = g[g["method"] == NONE]
        if len(base):
            ax.axhline(100 * base["mean"].iloc[0], color="k", ls="--", lw=1, label="alone")
        ax.set(title=m, xlabel="TTA samples", ylabel="test accuracy (%)", xscale="log")
        ticks = sorted(set(g["n"]))
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.legend(fontsize=8)
    fig.tight_layout()
    return list(axes[0])


# ----------------------------------------------------------------------------- examples
DEMO_STILL = {"InstaAug": 0.02, "input-free": 0.02}  # demo_tta's gains for scenes without variation: no per-input gain

def demo_tta(gain: dict | None = None, n_test: int = 200, repeats: int = 3, models=("ResNet", "ViT"),
             seed: int = 0) -> pd.DataFrame:
    """A made-up :func:`invlib.papers.d.fixed.tta` result for the examples and tests: per model the classifier
    alone right on every other test image, and each method with ``n`` of 1, 4, 10 samples changing its accuracy
    by ``gain[method] * n / 10`` (it turns that share of the images wrong or right, drawn per repeat). Defaults:
    InstaAug +0.1, random crop -0.04, AutoAugment -0.08, input-free +0.02 (:data:`DEMO_STILL`: the data control's
    defaults, both modules +0.02).

    Example
    -------
    >>> r = demo_tta()
    >>> float(r[(r["model"] == "ResNet") & (r["method"] == "none")]["acc"].iloc[0]), len(r)
    (0.5, 74)
    """
    gain = {"InstaAug": 0.1, "random crop": -0.04, "AutoAugment": -0.08, "input-free": 0.02} | (gain or {})
    rng = np.random.default_rng(seed)
    base = (np.arange(n_test) % 2).astype(np.uint8)
    rows = []
    for m in models:
        rows.append(dict(model=m, method=NONE, n=1, seed=0, hits=base))
        for s in range(repeats):
            for method, g in gain.items():
                for n in (1, 4, 10):
                    flip = rng.random(n_test) < min(1.0, 2 * abs(g) * n / 10)
                    h = base | flip if g > 0 else base & ~flip
                    rows.append(dict(model=m, method=method, n=n, seed=s, hits=h.astype(np.uint8)))
    out = pd.DataFrame(rows)
    out.insert(4, "acc", [float(h.mean()) for h in out["hits"]])
    return out


def demo_control(replicates: int = 1, still: dict | None = None, varied: dict | None = None,
                 n_test: int = 200) -> pd.DataFrame:
    """A made-up :func:`invlib.papers.d.fixed.control` result: per training seed, :func:`demo_tta` of the frozen
    ResNet on the still scenes (gains ``still``, default :data:`DEMO_STILL`) and, past the first seed, on the
    varied scenes (gains ``varied``, default :func:`demo_tta`'s), each seed's draws its own.

    Example
    -------
    >>> c = demo_control(2)
    >>> c[["still", "replicate"]].drop_duplicates().values.tolist()
    [[True, 0], [False, 1], [True, 1]]
    """
    out = []
    for k in range(replicates):
        for is_still in ([True] if k == 0 else [False, True]):
            r = demo_tta(still or DEMO_STILL if is_still else varied, n_test=n_test, models=("ResNet",),
                         seed=10 * k + 1 + is_still)
            out.append(r.assign(variation=0.0 if is_still else 1.0, replicate=k, still=is_still))
    res = pd.concat(out, ignore_index=True)
    return res[["variation", "replicate", "still"] + [c for c in res.columns if c not in
                                                       ("variation", "replicate", "still")]]


def demo_items(kl: float = 0.3, covers: float = 0.95, n_test: int = 200, seed: int = 0) -> pd.DataFrame:
    """Made-up :func:`invlib.papers.d.fixed.crop_per_image` items: the module's KL and coverage about ``kl`` and
    ``covers`` per image, the references' 0.85 (averaged crops) and 0.8 (random crop).

    Example
    -------
    >>> round(float(demo_items()["covers_object"].mean()), 2)
    0.95
    """
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 0.02, (3, n_test))
    return pd.DataFrame(dict(kl_to_mean=np.clip(kl + noise[0], 0, None), covers_object=np.clip(covers + noise[1], 0, 1),
                             covers_averaged=np.clip(0.85 + noise[2], 0, 1), covers_random=np.full(n_test, 0.8)))
