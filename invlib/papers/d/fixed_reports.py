"""What chapter D5 shows: Table 2 beside the paper's numbers, the claims of section 5.3 with verdicts computed from
the run, the facts its prose quotes, and its figures (sampled crops on test scenes, the entropy band's trace, the
accuracy against the number of TTA samples).

:func:`report` takes the :class:`invlib.results.Run` of the chapter, its settings and what the drivers of
:mod:`invlib.papers.d.fixed` returned; it logs the metrics (accuracies in percent, keys stable across runs), records
each claim with :meth:`invlib.results.Run.claim` and returns Table 2 and ``facts`` (``{glue name: Markdown}``).

Example
-------
>>> from invlib import results
>>> from invlib.papers.d.fixed import settings
>>> S = settings("cpu", tta_seeds=2)
>>> res = pd.DataFrame([dict(model=m, method=meth, n=n, seed=s, acc=a)
...                     for m in ("ResNet", "ViT") for meth, n, s, a in
...                     [("none", 1, 0, 0.50), *[(x, n, s, 0.5 + d + 0.01 * s) for x, d in
...                      (("InstaAug", 0.05), ("random crop", -0.02), ("AutoAugment", -0.04)) for n in (1, 4, 10)
...                      for s in (0, 1)]]])
>>> stats = pd.DataFrame(dict(side=[0.8, 0.8, 0.95, 0.7], covers_object=[0.95, 0.9, 0.9, 0.8],
...                           centre_in_box=[0.8, 0.7, 0.7, 0.6], entropy=[2.7, 3.0, 1.2, None],
...                           kl_to_mean=[0.3, 0.0, 0.001, 0.0]), index=list(STATS_ROWS))
>>> run = results.Run("demo", "cpu")
>>> table, facts = report(run, S, res, stats, [])
>>> {cid: c["verdict"] for cid, c in run.claims.items()}  # doctest: +NORMALIZE_WHITESPACE
{'table2/instaaug_beats_alone': 'reproduced', 'table2/instaaug_beats_random_crop': 'reproduced',
 'table2/global_tta_lowers_accuracy': 'reproduced', 'table2/transfer_without_retraining': 'reproduced',
 'table2/gain_grows_with_samples': 'not reproduced', 'fig6/crops_depend_on_the_input': 'reproduced',
 'fig6/crops_cover_the_object': 'reproduced'}
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ...results import beyond_se, mean_se
from .fixed import NONE, Fixed, settings

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


def _gain(m: float, se: float) -> str:
    """A difference of shares in points, with its standard error when there is one."""
    text = f"{100 * m:+.2f}".replace("-0.00", "+0.00")
    return text + ("" if np.isnan(se) else f" ± {100 * se:.2f}") + " points"


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


def gain(res: pd.DataFrame, model: str, a: tuple[str, int], b: tuple[str, int]) -> tuple[float, float, int]:
    """Mean and standard error over the repeats of ``acc(a) - acc(b)``, ``a`` and ``b`` ``(method, n)``: paired by
    repeat when both have repeats, else against the single value (the classifier alone); and the repeats' count.

    Example
    -------
    >>> res = pd.DataFrame([dict(model="a", method="none", n=1, seed=0, acc=0.5)] +
    ...                    [dict(model="a", method="InstaAug", n=10, seed=s, acc=v) for s, v in enumerate([0.6, 0.62])])
    >>> [round(v, 3) for v in gain(res, "a", ("InstaAug", 10), ("none", 1))]
    [0.11, 0.01, 2]
    """
    x, y = accuracy(res, model, *a), accuracy(res, model, *b)
    d = x - y if len(x) == len(y) else (x - y[0] if len(y) == 1 else x[0] - y)
    mean, se = mean_se(d)
    return mean, se, len(d)


def _ranks(m: float, se: float, k: int) -> tuple[bool, bool]:
    """(reproduced, partly) of a gain ``m``: beyond 2 standard errors of at least 2 repeats; partly: positive."""
    return bool(k >= 2 and beyond_se(m, se)), bool(m > 0)


_SE_RULE = ("the mean gain over the repeats of the TTA draws > 2 standard errors of those repeats (one test set, "
            "as the paper's ±); partly: a positive mean gain (a single repeat gives at most partly)")


# ----------------------------------------------------------------------------- Table 2
def table2(S: Fixed, res: pd.DataFrame) -> pd.DataFrame:
    """Table 2 with this run beside the paper: one row per (method, samples), in the paper's order and then the
    single-sample rows (beyond the paper); per classifier ``"<label>: ours"`` (mean ± SE over the repeats, %) and
    ``"<column>: paper"``.

    Example
    -------
    >>> res = pd.DataFrame(dict(model="ResNet", method=["none", "InstaAug"], n=[1, 10], seed=0, acc=[0.5, 0.6]))
    >>> t = table2(settings("cpu", models={"ResNet": "zoo:small_resnet18_s4/standard"}), res)
    >>> t.loc[("InstaAug", 10)].tolist()
    ['60.00', '81.18 ± 0.02']
    """
    order = list(PAPER) + [(m, 1) for m in S.methods]
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


def departures(S: Fixed) -> pd.DataFrame:
    """Every setting where ``S`` departs from the paper's (:func:`invlib.papers.d.fixed.settings` ``("paper")``):
    ``setting | paper | this run``.

    Example
    -------
    >>> d = departures(settings("cpu"))
    >>> d.loc["optimizer"].tolist(), d.loc["module_lr"].tolist(), "h_min" in d.index  # the band is the paper's
    (['sgd', 'adam'], ['0.001', '0.003'], False)
    """
    from .fixed import image_side

    paper, ours = dataclasses.asdict(settings("paper")), dataclasses.asdict(S)
    paper["size"], ours["size"] = image_side(settings("paper")), image_side(S)  # None: the zoo's side
    skip = {"profile", "device", "progress", "chunk", "n_show", "stands_for", "zoo_data"}
    rows = [dict(setting=k, paper=str(paper[k]), **{"this run": str(v)}) for k, v in ours.items()
            if k not in skip and v != paper[k]]
    return pd.DataFrame(rows, columns=["setting", "paper", "this run"]).set_index("setting")


# ----------------------------------------------------------------------------- the report
def report(run, S: Fixed, res: pd.DataFrame, stats: pd.DataFrame, hist: list[dict]) -> tuple[pd.DataFrame, dict]:
    """Log the chapter's metrics, record the claims of section 5.3 and return Table 2 (:func:`table2`) and the facts
    the prose quotes. ``res``: :func:`invlib.papers.d.fixed.tta`; ``stats``: :func:`invlib.papers.d.fixed.crop_stats`;
    ``hist``: the module's training history (:func:`invlib.papers.d.fixed.train_module`)."""
    from .fixed import band_trace, summary

    for r in summary(res).to_dict("records"):
        col = column_of(S, r["model"])
        run.log(f"{_key(r['model'])}/{_key(r['method'])}_n{r['n']}", 100 * r["mean"],
                paper=paper_value(r["method"], r["n"], col),
                note=f"% test accuracy, {r['repeats']} repeat(s) of the draws, SE {100 * r['se']:.2f}"
                if r["repeats"] > 1 else "% test accuracy")
    for name, row in stats.iterrows():
        run.log(f"crops/{_key(name)}", {k: (None if pd.isna(v) else float(v)) for k, v in row.items()})
    trace = band_trace(hist)
    run.log("band/entropy_by_check", trace["entropy"].tolist())
    run.log("band/lambda_by_check", trace["lambda"].tolist())

    frozen, others = S.frozen, [m for m in S.models if m != S.frozen]
    n_hi, n_lo = max(S.samples), sorted(S.samples)[-2] if len(S.samples) > 1 else max(S.samples)
    alone = accuracy(res, frozen, NONE, 1)[0]
    ia = accuracy(res, frozen, "InstaAug", n_hi)
    fc = column_of(S, frozen)
    p_alone, p_ia = paper_value(NONE, 1, fc) or 80.43, paper_value("InstaAug", n_hi, fc) or 81.18
    with_ia = "InstaAug" in S.methods

    g, se, k = gain(res, frozen, ("InstaAug", n_hi), (NONE, 1)) if with_ia else (np.nan, np.nan, 0)
    ok, part = _ranks(g, se, k)
    run.claim("table2/instaaug_beats_alone", f"Trained beside the frozen classifier, InstaAug's test-time "
              f"augmentation with {n_hi} samples raises its accuracy.", paper=f"{p_alone:.2f} → {p_ia:.2f} % "
              "(ResNet-50, 10 samples)", ours=f"{_pp(alone)} → {_pp(ia.mean()) if len(ia) else '—'} ({frozen}; "
              f"{_gain(g, se)}, {k} repeats)", criterion=_SE_RULE, reproduced=ok, partly=part, measurable=with_ia)

    has_rc = with_ia and "random crop" in S.methods
    g2, se2, k2 = gain(res, frozen, ("InstaAug", n_hi), ("random crop", n_hi)) if has_rc else (np.nan, np.nan, 0)
    ok, part = _ranks(g2, se2, k2)
    rc = accuracy(res, frozen, "random crop", n_hi) if has_rc else np.array([np.nan])
    run.claim("table2/instaaug_beats_random_crop", f"With {n_hi} samples, InstaAug's test-time augmentation beats "
              "random-crop test-time augmentation.", paper="81.18 vs 79.60 % (ResNet-50, 10 samples)",
              ours=f"{_pp(ia.mean()) if len(ia) else '—'} vs {_pp(rc.mean())} ({_gain(g2, se2)}, paired by repeat)",
              criterion=_SE_RULE.replace("gain", "difference", 1), reproduced=ok, partly=part, measurable=has_rc)

    drops = []
    for method in [m for m in ("random crop", "AutoAugment") if m in S.methods]:
        for n in [n for n in S.samples if n > 1]:
            d, dse, dk = gain(res, frozen, (NONE, 1), (method, n))
            drops.append((method, n, d, dse, dk))
    low = [bool(dk >= 2 and beyond_se(d, dse)) for *_, d, dse, dk in drops]
    run.claim("table2/global_tta_lowers_accuracy", "Random-crop and AutoAugment test-time augmentation lower the "
              "frozen classifier's accuracy (4 and 10 samples).", paper="78.45, 79.60 (random crop) and 77.84, 79.20 "
              "(AutoAugment) vs 80.43 % alone (ResNet-50)", ours="; ".join(
                  f"{m}, {n}: {_gain(-d, dse)}" for m, n, d, dse, _ in drops) or "—",
              criterion="each of them below the classifier alone by more than 2 standard errors of the repeats; "
              "partly: at least one below", reproduced=bool(drops) and all(low),
              partly=any(d > 0 for *_, d, _, _ in drops), measurable=bool(drops))

    gains = {m: gain(res, m, ("InstaAug", n_hi), (NONE, 1)) for m in others} if with_ia else {}
    marks = [_ranks(*v) for v in gains.values()]
    run.claim("table2/transfer_without_retraining", f"The module, unchanged, raises the accuracy of other classifiers "
              f"too ({n_hi} samples, no fine-tuning).", paper="ResNet-18 69.73 → 70.96, XCiT 86.34 → 86.47 %",
              ours="; ".join(f"{m} ({column_of(S, m)}): {_pp(accuracy(res, m, NONE, 1)[0])} → "
                             f"{_pp(accuracy(res, m, 'InstaAug', n_hi).mean())} ({_gain(*v[:2])})"
                             for m, v in gains.items()) or "—",
              criterion=_SE_RULE + ", for every other classifier", reproduced=bool(marks) and all(r for r, _ in marks),
              partly=any(p for _, p in marks), measurable=bool(marks))

    grow = {m: gain(res, m, ("InstaAug", n_hi), ("InstaAug", n_lo)) for m in S.models} if with_ia else {}
    ok, part = _ranks(*grow[frozen]) if grow and n_hi > n_lo else (False, False)
    run.claim("table2/gain_grows_with_samples", f"InstaAug's test-time augmentation gains more with {n_hi} samples "
              f"than with {n_lo}.", paper="ResNet-50 80.92 → 81.18, ResNet-18 70.59 → 70.96, XCiT 86.43 → 86.47 %",
              ours="; ".join(f"{m}: {_gain(*v[:2])}" for m, v in grow.items()) or "—",
              criterion=f"on the frozen classifier, {_SE_RULE} (accuracy at {n_hi} minus at {n_lo}, the same repeat)",
              reproduced=ok, partly=part, measurable=bool(grow) and n_hi > n_lo)

    st = stats.loc["InstaAug"]
    kl, kl0 = (max(0.0, float(v)) for v in (st["kl_to_mean"], stats.loc["untrained module", "kl_to_mean"]))
    run.claim("fig6/crops_depend_on_the_input", "The module's crop distribution depends on the input.",
              paper="per-image crops (Fig. 6; no number in section 5.3)",
              ours=f"mean KL to the average distribution {kl:.3f} nats (untrained module {kl0:.3f})",
              criterion="mean KL(p(τ; φ(x)) ‖ p̄) >= 0.1 nats and above the untrained module's; partly: above the "
              "untrained module's", reproduced=kl >= 0.1 and kl > kl0, partly=kl > kl0)

    avg, rnd = stats.loc["InstaAug, averaged over images"], stats.loc["random crop"]
    better = [st["covers_object"] > avg["covers_object"] + 0.01, st["covers_object"] > rnd["covers_object"] + 0.01]
    run.claim("fig6/crops_cover_the_object", "The module's crops cover the object, following it from image to image.",
              paper="crops on the key part of the image (Fig. 6)",
              ours=f"P(crop holds the object's centre) {st['covers_object']:.3f}; the same crops averaged over images "
              f"{avg['covers_object']:.3f}; random crop {rnd['covers_object']:.3f}",
              criterion="the module's crops hold the object's centre more often (by more than 0.01) than the same "
              "crops not matched to the image (p̄) and than the random crop; partly: than one of them",
              reproduced=all(better), partly=any(better))

    trace = band_trace(hist)
    facts = {
        "d5_frozen": f"{frozen} (`{S.models[frozen]}`)",
        "d5_alone": _pp(alone), "d5_ia": _pp(ia.mean()) if len(ia) else "—", "d5_n": str(n_hi),
        "d5_gain": _gain(g, se), "d5_vs_rc": _gain(g2, se2), "d5_rc": _pp(rc.mean()),
        "d5_repeats": str(S.tta_seeds), "d5_n_test": f"{S.n_test:,}",
        "d5_transfer": "; ".join(f"{m}: {_gain(*v[:2])}" for m, v in gains.items()) or "no other classifier",
        "d5_transfer_rc": "; ".join(f"{m}: {_gain(*gain(res, m, ('InstaAug', n_hi), ('random crop', n_hi))[:2])}"
                                    for m in gains if "random crop" in S.methods) or "not measured",
        "d5_rc_vs_alone": _vs_alone(res, frozen, "random crop", n_hi, S),
        "d5_aa_vs_alone": _vs_alone(res, frozen, "AutoAugment", n_hi, S),
        "d5_grow": "; ".join(f"{m}: {_gain(*v[:2])}" for m, v in grow.items()) or "—",
        "d5_kl": f"{kl:.3f} nats (untrained module: {kl0:.3f})",
        "d5_cover": f"{st['covers_object']:.2f} (the same crops unmatched to the image: {avg['covers_object']:.2f}, "
                    f"random crop: {rnd['covers_object']:.2f})",
        "d5_side": f"{st['side']:.2f} of the image side (untrained module: "
                   f"{stats.loc['untrained module', 'side']:.2f}, random crop: {rnd['side']:.2f})",
        "d5_band": (f"from {trace['entropy'].iloc[0]:.2f} to {trace['entropy'].iloc[-1]:.2f} nats over "
                    f"{int(trace['step'].iloc[-1])} steps, λ ending at {trace['lambda'].iloc[-1]:.3f}"
                    if len(trace) else "not traced"),
        "d5_test_se": f"{100 * np.sqrt(alone * (1 - alone) / S.n_test):.1f} points",
        "d5_band_range": f"[{S.h_min:g}, {S.h_max:g}]",
        "d5_verdicts": ", ".join(f"{c['verdict']}" for c in run.claims.values()),
    }
    return table2(S, res), facts


def _vs_alone(res: pd.DataFrame, model: str, method: str, n: int, S: Fixed) -> str:
    """``method``'s TTA with ``n`` samples against the classifier alone, as text (or "not measured")."""
    return _gain(*gain(res, model, (method, n), (NONE, 1))[:2]) if method in S.methods else "not measured"


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
    fig, axes = plt.subplots(1, len(models_), figsize=(4.2 * len(models_), 3.2), squeeze=False)
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
        ax.legend(fontsize=7)
    fig.tight_layout()
    return list(axes[0])
