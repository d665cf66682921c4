"""What chapter D2 shows: Table 1 beside the paper's, the claims of section 5.2 and App. E.2 with computed verdicts,
Fig. 6's sampled crops, crop-centre densities and crop sizes, the entropy band over training (Fig. E.1), and the
numbers its prose quotes.

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the tables of
:mod:`invlib.papers.d.cropping` (:func:`~invlib.papers.d.cropping.accuracy_table`,
:func:`~invlib.papers.d.cropping.crop_table`) and the trained family; it logs the metrics, records the claims and
returns the "paper vs this run" table and the facts for the prose.

Example
-------
>>> PAPER_TABLE1["instaaug"], PAPER_TABLE1["random_crop"]
(66.02, 64.49)
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ... import results
from .cropping import Cropping, Trained, entropy_trace, final_entropy, in_band_share

PAPER_TABLE1 = {"none": 55.06, "random_crop": 64.49, "augerino": 55.02, "instaaug": 66.02, "no_lrp": 55.39,
                "no_input": 63.20, "class_specific": 60.55}  # Table 1, % over 10 runs
PAPER_SE = {"none": 0.10, "random_crop": 0.12, "augerino": 0.29, "instaaug": 0.18, "no_lrp": 0.19, "no_input": 0.12,
            "class_specific": 0.50}
PAPER_BANDS = {(0.0, 0.5): 52.12, (0.5, 1.0): 61.28, (1.0, 1.5): 62.91, (1.5, 2.0): 64.39, (2.0, 2.5): 65.04,
               (2.5, 3.0): 65.05, (3.0, 3.5): 66.03, (3.5, 4.5): 65.60, (4.0, 4.5): 64.35, (4.5, 5.0): 64.17,
               (0.0, 1.0): 51.78, (1.0, 2.0): 63.96, (2.0, 3.0): 65.25, (3.0, 4.0): 65.78, (4.0, 5.0): 64.23}
LABELS = {"none": "No augmentation", "random_crop": "Random crop (tuned)", "augerino": "Augerino",
          "instaaug": "InstaAug", "no_lrp": "InstaAug without LRP", "no_input": "InstaAug without input",
          "class_specific": "InstaAug, class-specific"}


def _seeds(acc: pd.DataFrame, method: str, col: str = "acc_tta") -> list[float]:
    """The accuracies of ``method`` over seeds; for the random crop, of the best range (the tuned one)."""
    rows = acc[acc.method == method]
    if method == "random_crop" and len(rows):
        best = rows.groupby("variant")[col].mean().idxmax()
        rows = rows[rows.variant == best]
    return rows[col].tolist()


def _main(acc: pd.DataFrame, S: Cropping) -> pd.DataFrame:
    """Only the main family (no band sweep, no fixed lambda)."""
    return acc[~acc.variant.str.startswith(("band", "fixed"))]


def table1(S: Cropping, acc: pd.DataFrame) -> pd.DataFrame:
    """Table 1 beside the paper's: per method the mean test accuracy with test-time augmentation (%), its standard
    error over seeds, without test-time augmentation, and the paper's.

    Example
    -------
    >>> from invlib.papers.d.cropping import settings
    >>> acc = pd.DataFrame(dict(method=["none", "instaaug"], variant=["none", "instaaug"], seed=[0, 0],
    ...                         acc=[0.5, 0.55], acc_tta=[0.5, 0.6], seconds_per_epoch=[1.0, 1.5]))
    >>> table1(settings("smoke"), acc)["this run (%)"].tolist()
    [50.0, 60.0]
    """
    main, rows = _main(acc, S), []
    for m in [m for m in LABELS if m in set(acc.method)]:
        mean, se = results.mean_se(_seeds(main, m))
        plain = results.mean_se(_seeds(main, m, "acc"))[0]
        label = LABELS[m]
        if m == "random_crop":
            best = main[main.method == m].groupby("variant").acc_tta.mean().idxmax()
            label += f" (area {best.split()[-1]})"
        rows.append({"method": label, "this run (%)": round(100 * mean, 2),
                     "± s.e.": round(100 * se, 2) if not math.isnan(se) else None,
                     "without TTA (%)": round(100 * plain, 2), "paper (%)": PAPER_TABLE1[m],
                     "paper ± s.e.": PAPER_SE[m]})
    return pd.DataFrame(rows)


def _ranked(a: list[float], b: list[float]) -> tuple[bool, bool, float]:
    """``a`` above ``b``: (beyond 2 standard errors of the difference over paired seeds, above on average,
    mean difference)."""
    n = min(len(a), len(b))
    diff = [x - y for x, y in zip(a[:n], b[:n])]
    mean, se = results.mean_se(diff)
    return results.beyond_se(mean, se), mean > 0, mean


def report(run, S: Cropping, acc: pd.DataFrame, crops: pd.DataFrame,
           family: list[Trained]) -> tuple[pd.DataFrame, dict]:
    """Log D2's metrics, record its claims, return ``(Table 1 beside the paper's, facts for the prose)``.

    Example
    -------
    >>> from invlib.papers.d.cropping import settings
    >>> acc = pd.DataFrame(dict(method=["none", "random_crop", "instaaug", "no_input"], seed=[0] * 4,
    ...                         variant=["none", "random_crop 0.1-1", "instaaug", "no_input"],
    ...                         acc=[0.5, 0.55, 0.5, 0.5], acc_tta=[0.5, 0.58, 0.6, 0.57],
    ...                         seconds_per_epoch=[1.0, 1.0, 1.5, 1.5]))
    >>> run = results.Run("demo", "smoke")
    >>> _, facts = report(run, settings("smoke"), acc, pd.DataFrame(), [])
    >>> run.claims["table1/instaaug_random_none"]["verdict"]  # one seed: at most partly
    'partly'
    """
    main = _main(acc, S)
    table = table1(S, acc)
    for _, r in table.iterrows():
        run.log(f"acc_tta/{r['method']}", r["this run (%)"], paper=r["paper (%)"])
    has = set(main.method)
    seeds = int(main.seed.nunique()) if len(main) else 0
    nan = float("nan")  # every number the prose quotes exists, NaN where this profile did not measure it
    facts = dict(seeds=seeds, tta=S.tta, n_train=S.n_train, epochs=S.epochs, kl=nan, side_rho=nan, in_box=nan,
                 in_box_free=nan, side=nan, entropy=nan, in_band=nan, fixed_entropy=nan, fixed_lam=nan)
    facts = _claims(run, S, acc, crops, family, main, has, seeds, facts)
    measured = {k: v for k, v in facts.items() if not (isinstance(v, float) and math.isnan(v))}
    return table, {**measured, **prose(facts)}


def prose(facts: dict) -> dict:
    """The facts a profile may not measure, as Markdown text (``"n/a"`` where NaN), for ``{glue:md}`` in the prose.

    Example
    -------
    >>> prose(dict(kl=0.3183, side_rho=float("nan"), in_box=57.2, in_box_free=55.9, in_band=27.0,
    ...            fixed_lam=0.02, fixed_entropy=0.0))["side_rho_text"]
    'n/a'
    """
    def fmt(key, spec):
        return results.text(facts.get(key), spec)

    fixed = (f"with a small fixed λ of {fmt('fixed_lam', 'g')} it ends at {fmt('fixed_entropy', '.2f')} nats"
             if fmt("fixed_lam", "g") != "n/a" else "no fixed λ was run at this profile")
    return dict(kl_text=fmt("kl", ".3f"), side_rho_text=fmt("side_rho", ".2f"), in_box_text=fmt("in_box", ".1f"),
                in_box_free_text=fmt("in_box_free", ".1f"), in_band_text=fmt("in_band", ".0f"), fixed_text=fixed)


def _claims(run, S, acc, crops, family, main, has, seeds, facts) -> dict:
    """Record D2's claims on ``run``; return ``facts`` with the numbers they measured."""
    acc_of = {m: 100 * float(np.mean(_seeds(main, m))) for m in has}
    facts.update({f"acc_{m}": v for m, v in acc_of.items()})

    if {"instaaug", "random_crop", "none"} <= has:
        sure1, up1, d1 = _ranked(_seeds(main, "instaaug"), _seeds(main, "random_crop"))
        sure2, up2, d2 = _ranked(_seeds(main, "random_crop"), _seeds(main, "none"))
        run.claim("table1/instaaug_random_none", "InstaAug beats the tuned random crop, which beats no augmentation.",
                  paper="66.02 > 64.49 > 55.06 %", ours=f"{acc_of['instaaug']:.1f} vs {acc_of['random_crop']:.1f} "
                  f"vs {acc_of['none']:.1f} % ({seeds} seed(s))",
                  criterion="both differences beyond 2 s.e. over seeds (reproduced); both positive (partly)",
                  reproduced=sure1 and sure2, partly=up1 and up2)
        facts.update(gain_random=d1 * 100, gain_none=d2 * 100)
    if {"instaaug", "no_input"} <= has:
        sure, up, d = _ranked(_seeds(main, "instaaug"), _seeds(main, "no_input"))
        run.claim("table1/instaaug_beats_no_input", "InstaAug beats its input-free version (one crop distribution "
                  "for all inputs).", paper="66.02 vs 63.20 % (+2.8)",
                  ours=f"{acc_of['instaaug']:.1f} vs {acc_of['no_input']:.1f} % ({100 * d:+.1f})",
                  criterion="difference beyond 2 s.e. over seeds (reproduced); positive (partly)",
                  reproduced=sure, partly=up)
    if {"instaaug", "class_specific"} <= has:
        sure, up, d = _ranked(_seeds(main, "instaaug"), _seeds(main, "class_specific"))
        run.claim("table1/class_specific_below", "A class-specific module does worse than InstaAug.",
                  paper="60.55 vs 66.02 %", ours=f"{acc_of['class_specific']:.1f} vs {acc_of['instaaug']:.1f} %",
                  criterion="InstaAug above class-specific beyond 2 s.e. (reproduced); above (partly)",
                  reproduced=sure, partly=up)
    if len(crops) and "instaaug" in crops.index:
        c = crops.loc["instaaug"]
        facts.update(kl=float(c.kl_to_mean), side_rho=float(c.side_rho), in_box=100 * float(c.centre_in_box),
                     side=float(c.side), entropy=float(c.entropy))
        run.log("crops/instaaug/kl_to_mean", float(c.kl_to_mean))
        run.claim("fig6/input_dependent", "InstaAug's crop distribution depends on the input.",
                  paper="Fig. 6: crops follow each image's object",
                  ours=f"mean KL to the average {c.kl_to_mean:.3f} nats",
                  criterion="mean KL(p(tau|x) || mean_x p(tau|x)) >= 0.05 nats (the input-free module: 0)",
                  reproduced=bool(c.kl_to_mean >= 0.05), partly=bool(c.kl_to_mean >= 0.01))
        if "no_input" in crops.index:
            free = crops.loc["no_input"]
            facts.update(in_box_free=100 * float(free.centre_in_box))
            run.claim("fig6/concentrates_on_object", "InstaAug's crops concentrate on the object, more than the "
                      "input-free version's.", paper="Fig. 6 (b) vs (e)",
                      ours=f"crop centre in the object's box: {100 * c.centre_in_box:.1f} vs "
                      f"{100 * free.centre_in_box:.1f} %",
                      criterion="share of crop mass centred in the box at least 5 points above the input-free "
                      "module's (reproduced); above it (partly)",
                      reproduced=bool(c.centre_in_box >= free.centre_in_box + 0.05),
                      partly=bool(c.centre_in_box > free.centre_in_box))
        run.claim("fig6/size_follows_object", "InstaAug's expected crop size grows with the object's size.",
                  paper="Fig. 6 (c, f), Fig. 8: patch sizes correlate with object sizes",
                  ours=f"Spearman rho {c.side_rho:+.2f} over {S.n_test} test scenes",
                  criterion="rank correlation >= 0.2 (reproduced); > 0 (partly)",
                  reproduced=bool(c.side_rho >= 0.2), partly=bool(c.side_rho > 0))
    stuck = [m for m in ("no_lrp", "augerino") if m in has]
    if stuck and "none" in has and "random_crop" in has:
        sides = {m: _mean_side(family, crops, m) for m in stuck}
        near_none = all(abs(acc_of[m] - acc_of["none"]) <= abs(acc_of["random_crop"] - acc_of[m]) for m in stuck)
        near_identity = all(s >= 0.85 for s in sides.values())
        run.claim("table1/uniform_stays_near_identity", "With a uniform parameterisation (InstaAug without LRP, "
                  "Augerino) the crops stay near the whole image and accuracy near no augmentation.",
                  paper="55.39 and 55.02 vs 55.06 % (none)",
                  ours=", ".join(f"{LABELS[m]}: side {sides[m]:.2f}, {acc_of[m]:.1f} %" for m in stuck)
                  + f"; none {acc_of['none']:.1f} %",
                  criterion="mean crop side >= 0.85 and accuracy closer to none than to the random crop, for both "
                  "(reproduced); one of the two holds (partly)",
                  reproduced=near_identity and near_none, partly=near_identity or near_none)
    _band_claims(run, S, family, acc, facts)
    _cost_claim(run, main, facts)
    return facts


def _mean_side(family: list[Trained], crops: pd.DataFrame, method: str) -> float:
    """Mean crop side a model applies (1 = the whole image): from the crop table for InstaAug's modules; for
    Augerino from its learned zoom width (its zoom-in coefficient is ``U[-theta/2, 0]`` and the crop's side is
    ``exp`` of it, so the mean side is ``E[exp(-u)]``, ``u ~ U[0, theta/2]``)."""
    if method in crops.index:
        return float(crops.loc[method, "side"])
    for t in family:
        if t.method == "augerino":
            half = t.model.state()["layer0"]["scale"]["magnitude"] / 2
            return float((1 - math.exp(-half)) / half) if half > 0 else 1.0
    return float("nan")


def _band_claims(run, S: Cropping, family: list[Trained], acc: pd.DataFrame, facts: dict) -> None:
    main = [t for t in family if t.variant == "instaaug"]
    if main:
        share = in_band_share(main[0], S.band)
        facts.update(in_band=100 * share if not math.isnan(share) else float("nan"))
        run.claim("figE1/entropy_in_band", "The dynamic lambda holds the entropy inside its band.",
                  paper=f"band {S.band[0]:g}-{S.band[1]:g}", ours=f"{100 * share:.0f} % of the checks in the last 30 %",
                  criterion="at least 70 % of the band checks in the last 30 % of training inside the band "
                  "(reproduced); at least 40 % (partly)", reproduced=share >= 0.7, partly=share >= 0.4,
                  measurable=not math.isnan(share))
    fixed = [t for t in family if t.variant.startswith("fixed")]
    if fixed:
        t = min(fixed, key=lambda t: t.history[0]["state"]["lambda"] or 0)
        h = final_entropy(t)
        facts.update(fixed_entropy=h, fixed_lam=float(t.variant.split()[-1]))
        run.claim("figE1/small_fixed_lambda_collapses", "A small fixed lambda lets the crop distribution collapse "
                  "to almost no augmentation.", paper="lambda <= 0.1: entropy nearly 0 throughout",
                  ours=f"{t.variant}: last epoch's entropy {h:.2f} nats (band {S.band[0]:g}-{S.band[1]:g})",
                  criterion="final entropy below 1 nat (reproduced); below H_min (partly)",
                  reproduced=h < 1.0, partly=h < S.band[0])
    rc = _seeds(_main(acc, S), "random_crop")
    bands = acc[acc.variant.str.startswith("band")]
    if len(bands) and rc:
        inside = bands[bands.variant.map(lambda v: 2.0 <= float(v.split()[1].split("-")[0]))]
        if len(inside):
            best_rc = float(np.mean(rc))
            above = bool((inside.acc_tta > best_rc).all())
            run.claim("tableE1/bands_beat_random_crop", "Every band inside [2, 4] beats the tuned random crop.",
                      paper="65.04-66.03 vs 64.49 %", ours=", ".join(f"{v}: {100 * a:.1f} %" for v, a in
                                                                    zip(inside.variant, inside.acc_tta))
                      + f" vs {100 * best_rc:.1f} %", criterion="every band tried above the random crop "
                      "(one seed: at most partly)", reproduced=above and len(rc) > 1, partly=above)


def _cost_claim(run, main: pd.DataFrame, facts: dict) -> None:
    ia, rc = main[main.method == "instaaug"], main[main.method == "random_crop"]
    if not len(ia) or not len(rc) or ia.seconds_per_epoch.min() <= 0 or rc.seconds_per_epoch.min() <= 0:
        return
    ratio = float(ia.seconds_per_epoch.mean() / rc.seconds_per_epoch.mean())
    facts.update(cost_ratio=ratio)
    run.claim("appD3/cost", "An InstaAug training step costs little more than a random-crop step.",
              paper="0.25 s vs 0.15 s per iteration (1.7x)", ours=f"{ratio:.2f}x (seconds per epoch, this run)",
              criterion="ratio <= 2 (reproduced); <= 3 (partly); measured within one run",
              reproduced=ratio <= 2, partly=ratio <= 3)


# ----------------------------------------------------------------------------- figures
def plot_accuracy(table: pd.DataFrame):
    """Table 1 as bars: this run (with test-time augmentation) beside the paper's accuracy."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.2), sharey=True)
    y = np.arange(len(table))
    ax[0].barh(y, table["this run (%)"], xerr=table["± s.e."].fillna(0), color="tab:blue")
    ax[1].barh(y, table["paper (%)"], xerr=table["paper ± s.e."], color="tab:gray")
    ax[0].set_yticks(y, table["method"])
    for a, title in zip(ax, ("this run", "paper (Tiny-ImageNet)")):
        a.set_title(title)
        a.set_xlabel("test accuracy (%)")
        lo = float(np.nanmin(table[["this run (%)", "paper (%)"]].values))
        a.set_xlim(max(0, lo - 10), None)
    ax[0].invert_yaxis()
    fig.tight_layout()
    return ax


def plot_crops(family: list[Trained], test_set, variants=("no_input", "instaaug"), n_images: int = 4,
               n_crops: int = 6, seed: int = 0):
    """Fig. 6 (a, d) and (b, e): per model and test image, the image with its most likely crops (the red, the
    likelier) and the object's box (dashed), and the density of crop centres."""
    models = {t.variant: t.model for t in family if t.variant in variants}
    x, boxes = test_set.float()[:n_images], test_set.boxes[:n_images]
    size = x.shape[-1]
    fig, axes = plt.subplots(len(models), 2 * n_images, figsize=(2.1 * n_images * 2, 2.3 * len(models)),
                             squeeze=False)
    for r, (name, net) in enumerate(models.items()):
        with torch.inference_mode():
            p = net.augment.distribution(x).exp()
        cells = net.augment.params.boxes
        for i in range(n_images):
            a, d = axes[r, 2 * i], axes[r, 2 * i + 1]
            a.imshow(x[i].permute(1, 2, 0).numpy())
            top = p[i].topk(n_crops)
            for rank, k in enumerate(top.indices.tolist()):
                cx, cy, s = (cells[k] * size).tolist()
                a.add_patch(plt.Rectangle((cx - s / 2, cy - s / 2), s, s, fill=False, lw=1.5,
                                          color=plt.cm.autumn(rank / n_crops)))
            x0, y0, x1, y1 = boxes[i].tolist()
            a.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ls="--", color="white"))
            density, _, _ = np.histogram2d((cells[:, 1] * size).numpy(), (cells[:, 0] * size).numpy(), bins=14,
                                           range=[[0, size], [0, size]], weights=p[i].numpy())
            d.imshow(density, cmap="magma", extent=(0, size, size, 0))
            d.add_patch(plt.Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ls="--", color="white"))
            for ax in (a, d):
                ax.set_xticks([])
                ax.set_yticks([])
            a.set_title(f"{name}" if i == 0 else "", fontsize=9, loc="left")
    fig.tight_layout()
    return axes


def plot_sizes(family: list[Trained], test_set, variants=("no_input", "instaaug")):
    """Fig. 6 (c, f): the share of crop mass above each crop side, and the expected crop side against the
    object's side (one dot per test scene)."""
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.4))
    obj = ((test_set.boxes[:, 2:] - test_set.boxes[:, :2]).mean(1) / test_set.images.shape[-1]).numpy()
    for t in family:
        if t.variant not in variants:
            continue
        with torch.inference_mode():
            p = t.model.augment.distribution(test_set.float()).exp()
        sides = t.model.augment.params.boxes[:, 2]
        grid = np.linspace(0.2, 1.0, 41)
        ax[0].plot(grid, [float(p[:, sides >= g].sum(1).mean()) for g in grid], label=t.variant)
        ax[1].scatter(obj, (p * sides).sum(1).numpy(), s=4, alpha=0.5, label=t.variant)
    ax[0].set_xlabel("crop side (fraction of the image)")
    ax[0].set_ylabel("share of crops at least this large")
    ax[1].set_xlabel("object's side (fraction of the image)")
    ax[1].set_ylabel("expected crop side")
    for a in ax:
        a.legend()
    fig.tight_layout()
    return ax


def plot_entropy(family: list[Trained], S: Cropping):
    """Fig. E.1's mechanism: the mean entropy and lambda at every band check, for InstaAug at each band and each
    fixed lambda."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.2))
    for t in family:
        if t.method != "instaaug" or t.seed != S.seed:
            continue
        tr = entropy_trace(t)
        if tr.empty:
            continue
        ax[0].plot(tr.step, tr.entropy, label=t.variant)
        ax[1].plot(tr.step, tr.lam, label=t.variant)
    ax[0].axhspan(*S.band, color="tab:green", alpha=0.15, label="band")
    ax[0].set_ylabel("mean entropy (nats)")
    ax[1].set_ylabel("lambda")
    ax[1].set_yscale("log")
    for a in ax:
        a.set_xlabel("training step")
        a.legend(fontsize=8)
    fig.tight_layout()
    return ax


def band_table(acc: pd.DataFrame, S: Cropping) -> pd.DataFrame:
    """Table E.1 and Fig. E.1, reduced: InstaAug's accuracy at each band and fixed lambda tried, beside the
    paper's where it has the same band."""
    rows = acc[acc.variant.str.startswith(("band", "fixed")) | (acc.variant == "instaaug")]
    out = []
    for _, r in rows.iterrows():
        band = S.band if r.variant == "instaaug" else None
        if r.variant.startswith("band"):
            band = tuple(float(v) for v in r.variant.split()[1].split("-"))
        out.append({"variant": r.variant if r.variant != "instaaug" else f"band {S.band[0]:g}-{S.band[1]:g} (main)",
                    "this run (%)": round(100 * r.acc_tta, 2),
                    "paper (%)": PAPER_BANDS.get(band) if band else "64-65 (0.15-0.5); collapse at <= 0.1"})
    return pd.DataFrame(out)
