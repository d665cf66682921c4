"""What chapter D4 shows: Table 5 of the InstaAug paper beside this run, the claims of section 6 with computed
verdicts, the numbers its prose quotes, and the figures (Figure 8's sampled crops, crop size against object size,
the entropy band over training).

:func:`report` takes the :class:`invlib.results.Run` of the chapter, its settings
(:func:`invlib.papers.d.contrastive.settings`) and what the method module measured (the trained models, the probe's
table, the crop table, the yardsticks); it logs the metrics, records the claims and returns the table and the
``{glue name: Markdown text or number}`` facts for the prose.

Example
-------
>>> import pandas as pd
>>> from invlib import results
>>> from invlib.papers.d.contrastive import settings
>>> probes = pd.DataFrame(dict(method=["Random crop", "InstaAug (without input)", "InstaAug"], seed=0,
...                            acc=[0.50, 0.52, 0.55], acc_tta=[0.51, 0.54, 0.56]))
>>> t = table5(probes)
>>> t.loc["InstaAug", "paper (%)"], t.loc["InstaAug", "TTA, 10 crops (%)"]
('55.05 ± 0.21', '56.0')
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle
from scipy.stats import spearmanr

from ...results import beyond_se, mean_se
from .contrastive import METHODS, PAPER, Contrastive, band_trace, entropy_bound, sample_crops

FREE, INSTA, RANDOM = "InstaAug (without input)", "InstaAug", "Random crop"
LAST = 0.3  # the share of training at the end over which the entropy should stay in its band
MIN_SPREAD = 0.03  # expected crop side must vary this much (std over scenes) for its rank correlation to count


# ----------------------------------------------------------------------------- helpers
def _key(method: str) -> str:
    """``"InstaAug (without input)"`` -> ``"instaaug_without_input"``."""
    return method.lower().replace(" (", "_").replace(")", "").replace(" ", "_")


def _pm(values, scale: float = 100.0, digits: int = 1) -> str:
    """``"mean ± se"`` of ``values`` times ``scale`` (the mean alone for one value).

    Example
    -------
    >>> _pm([0.5, 0.6]), _pm([0.5])
    ('55.0 ± 5.0', '50.0')
    """
    m, se = mean_se(np.asarray(values, dtype=float) * scale)
    return f"{m:.{digits}f}" if math.isnan(se) else f"{m:.{digits}f} ± {se:.{digits}f}"


def _paired(probes: pd.DataFrame, a: str, b: str, col: str = "acc_tta") -> np.ndarray:
    """Per seed, ``a``'s accuracy minus ``b``'s (the seeds both have)."""
    pa, pb = (probes[probes["method"] == m].set_index("seed")[col] for m in (a, b))
    seeds = sorted(set(pa.index) & set(pb.index))
    return np.array([pa[s] - pb[s] for s in seeds], dtype=float)


# ----------------------------------------------------------------------------- Table 5
def table5(probes: pd.DataFrame, untrained: float | None = None, tta: int = 10) -> pd.DataFrame:
    """Table 5 beside this run: per method the paper's linear-probe accuracy (Tiny-ImageNet, TTA of 10 crops) and
    this run's on the whole image and with TTA over ``tta`` crops (mean ± standard error over seeds, in %);
    ``untrained``: the whole-
    image accuracy of the untrained encoder, as a last row.

    Example
    -------
    >>> p = pd.DataFrame(dict(method=["Random crop"] * 2, seed=[0, 1], acc=[0.4, 0.5], acc_tta=[0.45, 0.55]))
    >>> table5(p, untrained=0.2).loc[["Random crop", "untrained encoder"], "whole image (%)"].tolist()
    ['45.0 ± 5.0', '20.0']
    """
    rows = []
    for m in METHODS:
        g = probes[probes["method"] == m]
        if len(g):
            first = g["acc_tta"].iloc[0]
            rows.append({"method": m, "paper (%)": f"{PAPER[m][0]:.2f} ± {PAPER[m][1]:.2f}",
                         "whole image (%)": _pm(g["acc"]), f"TTA, {tta} crops (%)": _pm(g["acc_tta"])
                         if first == first else "—", "seeds": len(g)})
    if untrained is not None:
        rows.append({"method": "untrained encoder", "paper (%)": "—", "whole image (%)": _pm([untrained]),
                     f"TTA, {tta} crops (%)": "—", "seeds": 1})
    return pd.DataFrame(rows).set_index("method")


# ----------------------------------------------------------------------------- claims
def ranking_claim(run, probes: pd.DataFrame) -> str:
    """Record ``table5/ranking``: InstaAug > InstaAug (without input) > random crop in linear-probe accuracy with
    TTA. Reproduced: both per-seed differences beyond 2 standard errors (at least 2 seeds); partly: the means in the
    paper's order; else not reproduced. Returns the verdict.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> ranking_claim(results.Run("smoke", name="demo"), p)  # one seed: at most partly
    'partly'
    """
    up, top = _paired(probes, FREE, RANDOM), _paired(probes, INSTA, FREE)
    order = bool(len(up) and len(top) and up.mean() > 0 and top.mean() > 0)
    sure = len(up) >= 2 and beyond_se(*mean_se(up)) and beyond_se(*mean_se(top))
    means = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    ours = ", ".join(f"{m} {means[m]:.1f}" for m in METHODS) + f" ({len(up)} seed{'s' * (len(up) != 1)})"
    return run.claim("table5/ranking", "Linear-probe accuracy (TTA, 10 crops): InstaAug > InstaAug without input > "
                     "random crop.", paper="random crop 51.63, without input 54.20, InstaAug 55.05", ours=ours,
                     criterion="reproduced: both per-seed gains beyond 2 SE (>= 2 seeds); partly: the means in this "
                     "order", reproduced=bool(sure and order), partly=order)


def gain_claim(run, probes: pd.DataFrame) -> str:
    """Record ``table5/instaaug_beats_random``: InstaAug's TTA accuracy above random crops' (paper: +3.42 points).
    Reproduced: the per-seed gain beyond 2 standard errors (at least 2 seeds); partly: a positive mean gain.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=[RANDOM, INSTA] * 2, seed=[0, 0, 1, 1], acc=0.5, acc_tta=[.5, .6, .5, .61]))
    >>> gain_claim(results.Run("smoke", name="demo"), p)
    'reproduced'
    """
    d = _paired(probes, INSTA, RANDOM) * 100
    m, se = mean_se(d)
    return run.claim("table5/instaaug_beats_random", "InstaAug crops give SimCLR a better linear-probe accuracy "
                     "than random crops.", paper=round(PAPER[INSTA][0] - PAPER[RANDOM][0], 2),
                     ours=round(m, 2) if len(d) else None, criterion="gain in points (TTA); reproduced: beyond 2 SE "
                     "over >= 2 seeds; partly: positive", reproduced=bool(len(d) >= 2 and beyond_se(m, se)),
                     partly=bool(len(d) and m > 0))


def crop_claims(run, crops: pd.DataFrame, initial: dict) -> dict:
    """Record the claims of Figure 8 on the crop table of :func:`invlib.papers.d.contrastive.crop_table` (all
    seeds pooled per scene and method), against the untrained module's means ``initial``
    (:func:`invlib.papers.d.contrastive.initial_measures`):

    - ``fig8/input_dependent``: InstaAug's mean KL of ``p(tau | x)`` to the test set's average distribution;
      reproduced at >= 0.1 nats and 10 times the untrained module's, partly at >= 0.01 nats and above the
      untrained module's (the input-free model's is 0 by construction);
    - ``fig8/size_correlation``: Spearman's rank correlation of the expected crop side with the object's size over
      test scenes; reproduced: rho >= 0.3 and p < 0.01 with an expected side that varies visibly (std over scenes
      >= :data:`MIN_SPREAD` of the image side); partly: rho > 0 and p < 0.05 with a spread of at least a tenth of
      that and 10 times the untrained module's (``side_std``; an untrained module's ripples in the fourth decimal
      rank too);
    - ``fig8/crops_on_object``: the chance that a crop's centre lies on the object, InstaAug against the input-free
      model, paired over scenes; reproduced: higher beyond 2 standard errors and higher than the untrained
      module's (whose global crop is centred where the objects gather); partly: higher than the input-free
      model's.

    Returns ``{"kl", "rho", "p", "spread", "focus", "focus_free"}`` (InstaAug's values, the last the input-free's).

    Example
    -------
    >>> from invlib import results
    >>> rng = np.random.default_rng(0)
    >>> size = rng.uniform(0.3, 0.9, 200)
    >>> t = pd.concat([pd.DataFrame(dict(method=m, seed=0, scene=np.arange(200), object_size=size, side=side,
    ...                                  centre_in_box=c, kl_to_mean=kl))
    ...                for m, side, c, kl in ((INSTA, size + rng.normal(0, .05, 200), .8, .5), (FREE, .7, .5, 0.))])
    >>> run = results.Run("smoke", name="demo")
    >>> out = crop_claims(run, t, dict(kl_to_mean=0.001, centre_in_box=0.7, side_std=0.001))
    >>> [run.claims[c]["verdict"] for c in ("fig8/input_dependent", "fig8/size_correlation", "fig8/crops_on_object")]
    ['reproduced', 'reproduced', 'reproduced']
    """
    ins = crops[crops["method"] == INSTA].groupby("scene").mean(numeric_only=True)
    free = crops[crops["method"] == FREE].groupby("scene").mean(numeric_only=True)
    kl, initial_kl, initial_focus = float(ins["kl_to_mean"].mean()), initial["kl_to_mean"], initial["centre_in_box"]
    run.claim("fig8/input_dependent", "The learned crop distribution depends on the input (instance-specific).",
              paper="Fig. 8: crops differ per image", ours=f"mean KL to the average {kl:.3f} nats (untrained module "
              f"{initial_kl:.4f})", criterion="reproduced: KL >= 0.1 nats and >= 10x the untrained module's; partly: "
              ">= 0.01 nats and above it", reproduced=bool(kl >= 0.1 and kl >= 10 * initial_kl),
              partly=bool(kl >= 0.01 and kl > initial_kl))
    res = spearmanr(ins["side"], ins["object_size"])
    rho, p, spread = float(res.statistic), float(res.pvalue), float(ins["side"].std())
    learned = spread >= max(10 * initial.get("side_std", 0.0), MIN_SPREAD / 10)
    run.claim("fig8/size_correlation", "The learned crop size correlates with the object's size.",
              paper="Fig. 8: sizes of learned patches correlate with object sizes (no number)",
              ours=f"Spearman rho {rho:.3f} (p {p:.2g}) over {len(ins)} test scenes; std of the expected side "
              f"{spread:.3f} (untrained module {initial.get('side_std', math.nan):.4f})",
              criterion=f"reproduced: rho >= 0.3, p < 0.01 and std of the expected side >= {MIN_SPREAD}; partly: "
              f"rho > 0, p < 0.05 and that std >= {MIN_SPREAD / 10:g} and >= 10x the untrained module's",
              reproduced=bool(spread >= MIN_SPREAD and rho >= 0.3 and p < 0.01),
              partly=bool(learned and rho > 0 and p < 0.05))
    focus, focus_free = float(ins["centre_in_box"].mean()), float(free["centre_in_box"].mean()) if len(free) else \
        math.nan
    d = (ins["centre_in_box"] - free["centre_in_box"]).dropna().to_numpy() if len(free) else np.array([])
    m, se = mean_se(d)
    run.claim("fig8/crops_on_object", "InstaAug's crops focus on the salient object.",
              paper="Fig. 8: crops on the salient features", ours=f"crop centre on the object {focus:.3f} "
              f"(without input {focus_free:.3f}, untrained module {initial_focus:.3f})",
              criterion="P(crop centre in the object's box), InstaAug minus without input, paired over scenes; "
              "reproduced: beyond 2 SE and above the untrained module's; partly: positive",
              reproduced=bool(len(d) and beyond_se(m, se) and focus > initial_focus), partly=bool(len(d) and m > 0))
    return dict(kl=kl, rho=rho, p=p, spread=spread, focus=focus, focus_free=focus_free, focus_initial=initial_focus)


def band_claim(run, S: Contrastive, trained: dict) -> dict:
    """Record ``band/entropy_in_band``: InstaAug's mean training entropy at the band's checks over the last
    :data:`LAST` of training. Reproduced: at least 80 % of those checks inside ``S.band``; partly: their mean inside
    the band widened by half its width on each side; not measurable with fewer than 5 such checks (all seeds
    pooled). Returns ``{"share", "mean", "checks"}``.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> tr = {(INSTA, 0): dict(band=[(i, 1.0 if i < 70 else 3.2, 0.2) for i in range(1, 101)], steps=100)}
    >>> run = results.Run("smoke", name="demo")
    >>> band_claim(run, settings("smoke"), tr)["share"], run.claims["band/entropy_in_band"]["verdict"]
    (1.0, 'reproduced')
    """
    t = band_trace({k: v for k, v in trained.items() if k[0] == INSTA})
    last = t[t["fraction"] > 1 - LAST]["entropy"].to_numpy() if len(t) else np.array([])
    lo, hi = S.band
    share = float(((last >= lo) & (last <= hi)).mean()) if len(last) else math.nan
    mean = float(last.mean()) if len(last) else math.nan
    half = (hi - lo) / 2
    run.claim("band/entropy_in_band", "The dynamic entropy weight keeps the entropy in its band.",
              paper=f"band [{lo:g}, {hi:g}]", ours=f"{share:.0%} of {len(last)} checks in the band over the last "
              f"{LAST:.0%} of training, mean {mean:.2f}", criterion=f"reproduced: >= 80 % of the checks in the band; "
              f"partly: their mean in [{lo - half:g}, {hi + half:g}]; measurable with >= 5 checks",
              reproduced=bool(share >= 0.8), partly=bool(lo - half <= mean <= hi + half), measurable=len(last) >= 5)
    return dict(share=share, mean=mean, checks=len(last))


# ----------------------------------------------------------------------------- the report
def report(run, S: Contrastive, trained: dict, probes: pd.DataFrame, crops: pd.DataFrame, initial: dict,
           untrained: float | None = None) -> tuple[pd.DataFrame, dict]:
    """Log chapter D4's metrics, record its claims; return Table 5 beside the paper (:func:`table5`) and the facts
    the prose quotes, ``{glue name: Markdown text or number}``. ``initial``: the untrained module's crop measures
    (:func:`invlib.papers.d.contrastive.initial_measures`); ``untrained``: the untrained encoder's probe accuracy.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> tr = {(m, 0): dict(history=[dict(loss=4.0)], nt_xent=[4.0, 3.5], band=[], steps=10, seconds=1.0)
    ...       for m in METHODS}
    >>> run = results.Run("smoke", name="demo")
    >>> no_crops = pd.DataFrame(columns=["method", "scene"])
    >>> table, facts = report(run, settings("smoke"), tr, p, no_crops, dict(kl_to_mean=0.0, centre_in_box=0.7))
    >>> sorted(run.claims)  # doctest: +NORMALIZE_WHITESPACE
    ['band/entropy_in_band', 'fig8/crops_on_object', 'fig8/input_dependent', 'fig8/size_correlation',
     'table5/instaaug_beats_random', 'table5/ranking']
    """
    for m in METHODS:
        g = probes[probes["method"] == m]
        if not len(g):
            continue
        k = _key(m)
        run.log(f"{k}/probe_acc_tta", mean_se(g["acc_tta"])[0], paper=PAPER[m][0] / 100,
                note=f"Tiny-ImageNet; here scenes, seeds {g['seed'].tolist()}")
        run.log(f"{k}/probe_acc", mean_se(g["acc"])[0])
        run.log(f"{k}/nt_xent_by_epoch", [r["nt_xent"] for (mm, _), r in trained.items() if mm == m])
    if untrained is not None:
        run.log("untrained_encoder/probe_acc", untrained)
    verdicts = dict(rank=ranking_claim(run, probes), gain=gain_claim(run, probes))
    crop = crop_claims(run, crops, initial) if len(crops) else _empty_crop_claims(run, initial)
    band = band_claim(run, S, trained)
    for name, value in {**crop, **{f"band_{k}": v for k, v in band.items()}}.items():
        run.log(f"instaaug/{name}", value)
    for name, value in initial.items():
        run.log(f"untrained_module/{name}", value)
    rs = list(trained.values())
    steps, secs = int(rs[0]["steps"]), float(np.mean([r["seconds"] for r in rs]))
    run.log("steps_per_model", steps)
    run.log("seconds_per_model", secs, note="wall seconds, on the machine that ran it")
    acc = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    whole = {m: probes.loc[probes["method"] == m, "acc"].mean() * 100 for m in METHODS}
    nt = {m: (np.mean([r["nt_xent"][0] for (mm, _), r in trained.items() if mm == m]),
              np.mean([r["nt_xent"][-1] for (mm, _), r in trained.items() if mm == m])) for m in METHODS}
    lo, hi = S.band
    facts = {
        "d4_scale": f"{S.n_train:,} training scenes of {S.size} px, {S.epochs} epochs at batch {S.batch_size} "
                    f"({steps} steps per model), an encoder of widths {'-'.join(map(str, S.widths))}, "
                    f"{len(S.seeds)} seed{'s' * (len(S.seeds) != 1)}",
        "d4_module": f"Adam at {S.aug_lr:g} for the module (the input-free one at {S.free_aug_lr or S.aug_lr:g}), "
                     f"warmed up over {S.warmup_epochs:g} epochs, the band [{lo:g}, {hi:g}] checked every "
                     f"{S.check_every or 'epoch'} steps",
        "d4_seconds": f"{secs:.0f} s",
        "d4_loss": "; ".join(f"{m} {a:.2f} → {b:.2f}" for m, (a, b) in nt.items()),
        "d4_chance": f"{math.log(2 * S.batch_size - 1):.2f}",
        "d4_acc": ", ".join(f"{m} {acc[m]:.1f} %" for m in METHODS),
        "d4_whole": ", ".join(f"{m} {whole[m]:.1f} %" for m in METHODS),
        "d4_untrained": "not measured" if untrained is None else f"{untrained * 100:.1f} %",
        "d4_rank": f"**{verdicts['rank']}**; InstaAug minus random crop: **{verdicts['gain']}** "
                   f"({run.claims['table5/instaaug_beats_random']['ours']} points; paper +3.42)",
        "d4_kl": f"{crop['kl']:.2f} nats (the untrained module's: {initial['kl_to_mean']:.4f}; the input-free "
                 f"model's is 0 by "
                 f"construction): **{run.claims['fig8/input_dependent']['verdict']}**",
        "d4_rho": f"ρ = {crop['rho']:.2f} (p = {crop['p']:.1g}; the expected side varies with a standard deviation of "
                  f"{crop['spread']:.3f}): **{run.claims['fig8/size_correlation']['verdict']}**",
        "d4_focus": f"{crop['focus']:.2f} for InstaAug against {crop['focus_free']:.2f} without input and "
                    f"{crop['focus_initial']:.2f} for the untrained module: "
                    f"**{run.claims['fig8/crops_on_object']['verdict']}**",
        "d4_band": f"{band['share']:.0%} of the {band['checks']} checks in the last {LAST:.0%} of training lie in "
                   f"[{lo:g}, {hi:g}], their mean is {band['mean']:.2f}: "
                   f"**{run.claims['band/entropy_in_band']['verdict']}**",
        "d4_hmax": f"{entropy_bound(S):.2f}",
    }
    return table5(probes, untrained, S.tta), facts


def _empty_crop_claims(run, initial: dict) -> dict:
    """The crop claims when no InstaAug model was measured: not measurable."""
    for cid, claim in (("fig8/input_dependent", "The learned crop distribution depends on the input."),
                       ("fig8/size_correlation", "The learned crop size correlates with the object's size."),
                       ("fig8/crops_on_object", "InstaAug's crops focus on the salient object.")):
        run.claim(cid, claim, paper="Fig. 8", ours=None, criterion="needs a trained InstaAug model",
                  reproduced=False, measurable=False)
    return dict(kl=math.nan, rho=math.nan, p=math.nan, spread=math.nan, focus=math.nan, focus_free=math.nan,
                focus_initial=initial.get("centre_in_box", math.nan))


# ----------------------------------------------------------------------------- figures
def plot_crops(trained: dict, test, n_scenes: int = 8, n_crops: int = 6, seed: int = 0, axes=None):
    """Figure 8: test scenes (columns, smallest object to largest) with the object's box (dashed white) and
    ``n_crops`` crops drawn from each model's distribution (rows: InstaAug, then without input; seed ``seed``'s
    models). Returns the axes.

    Example
    -------
    >>> from invlib.papers.d.contrastive import make_model, scene_data, settings
    >>> S = settings("smoke")
    >>> te = scene_data(S)[1]
    >>> ax = plot_crops({(INSTA, 0): dict(model=make_model(S, INSTA, 0))}, te, n_scenes=3)
    >>> ax.shape
    (1, 3)
    >>> plt.close("all")
    """
    from .contrastive import object_size

    rows = [m for m in (INSTA, FREE) if (m, seed) in trained]
    size = object_size(test)
    pick = np.argsort(size.numpy())[np.linspace(0, len(test) - 1, n_scenes).round().astype(int)]
    x = test.images[pick]
    if axes is None:
        _, axes = plt.subplots(len(rows), n_scenes, figsize=(1.6 * n_scenes, 1.75 * len(rows)), squeeze=False)
    h = x.shape[-1]
    colours = plt.cm.autumn(np.linspace(0, 1, n_crops))
    for r, m in enumerate(rows):
        boxes = sample_crops(trained[m, seed]["model"], x, n_crops, seed).numpy()  # (n, B, 3)
        for c in range(n_scenes):
            ax = axes[r, c]
            ax.imshow(x[c].permute(1, 2, 0).numpy())
            x0, y0, x1, y1 = test.boxes[pick[c]].tolist()
            ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, ec="white", ls="--", lw=1))
            for k in range(n_crops):
                cx, cy, s = boxes[k, c] * h
                ax.add_patch(Rectangle((cx - s / 2 - 0.5, cy - s / 2 - 0.5), s, s, fill=False, ec=colours[k], lw=1))
            ax.set(xticks=[], yticks=[], xlim=(-0.5, h - 0.5), ylim=(h - 0.5, -0.5))
            if c == 0:
                ax.set_ylabel(m, fontsize=8)
            if r == 0:
                ax.set_title(f"object {size[pick[c]]:.2f}", fontsize=8)
    return axes


def plot_size(crops: pd.DataFrame, ax=None):
    """Expected crop side against object size, one point per test scene and model (seeds pooled), with Spearman's
    rho in the legend. Returns the axes.

    Example
    -------
    >>> t = pd.DataFrame(dict(method=INSTA, seed=0, scene=[0, 1, 2], object_size=[.3, .5, .7], side=[.4, .5, .8]))
    >>> plot_size(t).get_legend().get_texts()[0].get_text()
    'InstaAug (ρ = 1.00)'
    >>> plt.close("all")
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.5))
    for m, colour in ((INSTA, "C3"), (FREE, "C0")):
        g = crops[crops["method"] == m].groupby("scene").mean(numeric_only=True)
        if not len(g):
            continue
        rho = spearmanr(g["side"], g["object_size"]).statistic if g["side"].std() > 0 else math.nan
        ax.scatter(g["object_size"], g["side"], s=5, alpha=0.5, color=colour,
                   label=f"{m} (ρ = {rho:.2f})" if rho == rho else f"{m} (one distribution)")
    ax.set(xlabel="object size (√ box area / image side)", ylabel="expected crop side (fraction of the image)")
    ax.legend(fontsize=8)
    return ax


def plot_band(S: Contrastive, trained: dict, ax=None):
    """The module's entropy at every check of the band over training (both learned models, every seed), the band
    shaded and the last :data:`LAST` of training marked; ``lambda`` on a second axis. Returns the axes.

    Example
    -------
    >>> from invlib.papers.d.contrastive import settings
    >>> tr = {(INSTA, 0): dict(band=[(2, 1.2, 0.2), (4, 2.5, 0.24)], steps=4)}
    >>> plot_band(settings("smoke"), tr).get_xlabel()
    'share of training'
    >>> plt.close("all")
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    t = band_trace(trained)
    lam_ax = ax.twinx()
    for (m, s), g in t.groupby(["method", "seed"], sort=False):
        colour = "C3" if m == INSTA else "C0"
        ax.plot(g["fraction"], g["entropy"], color=colour, alpha=0.9, label=f"{m}, seed {s}")
        lam_ax.plot(g["fraction"], g["lambda"], color=colour, ls=":", alpha=0.7)
    ax.axhspan(*S.band, color="0.85", label="band")
    ax.axvline(1 - LAST, color="0.4", ls="--", lw=0.8)
    ax.set(xlabel="share of training", ylabel="entropy (nats)", xlim=(0, 1))
    lam_ax.set(ylabel="λ (dotted)", yscale="log")
    ax.legend(fontsize=7, loc="lower right")
    return ax
