"""What chapter D4 shows: Table 5 of the InstaAug paper beside this run, the claims of section 6 with computed
verdicts, the numbers its prose quotes, and the figures (Figure 8's sampled crops, crop size against object size,
the entropy band over training).

:func:`report` takes the :class:`invlib.results.Run` of the chapter, its settings
(:func:`invlib.papers.d.contrastive.settings`) and what the method module measured (the trained models, the probe's
table, the crop table, the yardsticks); it logs the metrics, records the claims and returns the table and the
``{glue name: Markdown text or number}`` facts for the prose.

Every claim is about what training produces (an encoder, a module trained with it), so its replicate is the
**seed**: one value per seed (paired by seed where two methods are compared), a 95 % t-interval over seeds
(:func:`invlib.results.decide`), decisive from :data:`N_MIN` seeds. The test scenes of one trained module are not
replicates of training and do not enter a verdict. The boundaries paper D's chapters share come from
:mod:`invlib.papers.d.criteria`.

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

from ... import results
from ...results import mean_se
from .contrastive import METHODS, PAPER, Contrastive, band_trace, entropy_bound, sample_crops
from .criteria import ENTROPY_IN_BAND_SHARE, INPUT_DEPENDENT_KL, ON_OBJECT, SIZE_FOLLOWS_OBJECT_RHO

FREE, INSTA, RANDOM = "InstaAug (without input)", "InstaAug", "Random crop"
LAST = 0.3  # the share of training at the end over which the entropy should stay in its band
MIN_CHECKS = 5  # band checks per seed in the last LAST of training below which the share is not measured
# The tests the claims declare before the run, (boundary, reason); the shared ones come from criteria.py.
N_MIN = 3  # seeds before a claim about what training produces can be decisive
ORDER = (0.0, "Table 5 states an order of the methods, not its size: a gain of any size, paired by seed")
# the expected crop side on the third of the scenes with the largest objects minus that on the smallest third
MIN_SIZE_GAP = (0.03, "3 % of the image side: a size change one can see in Fig. 8's crops; an untrained module's "
                    "expected side varies in the fourth decimal")

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
def _by_seed(initial: dict, seeds) -> dict:
    """``{seed: measures}`` of the untrained modules: ``initial`` as it is when keyed by seed, else one module's
    measures for every seed."""
    return initial if initial and all(isinstance(v, dict) for v in initial.values()) else {s: initial for s in seeds}


def _seed_claim(effect: str, boundary: float) -> str:
    return (f"{effect}; one value per seed, 95 % t-interval over seeds above {boundary:g}; decisive from {N_MIN} "
            f"seeds")


def ranking_claim(run, probes: pd.DataFrame) -> results.Evidence:
    """Record ``table5/ranking``: InstaAug > InstaAug (without input) > random crop in linear-probe accuracy with
    TTA, two parts (each a per-seed paired gain in points, 95 % t-interval over seeds above :data:`ORDER`; both
    must hold). Returns its evidence.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> ranking_claim(results.Run("smoke", name="demo"), p).verdict  # one seed: the spread of training is unknown
    'inconclusive at this budget'
    """
    up, top = _paired(probes, FREE, RANDOM) * 100, _paired(probes, INSTA, FREE) * 100
    ev = results.decide_parts({f"{FREE} over {RANDOM}": results.decide(up, boundary=ORDER[0], reason=ORDER[1],
                                                                      unit="seed", n_min=N_MIN),
                               f"{INSTA} over {FREE}": results.decide(top, boundary=ORDER[0], reason=ORDER[1],
                                                                     unit="seed", n_min=N_MIN)},
                              reason="both steps of the order must hold")
    means = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    ours = ", ".join(f"{m} {means[m]:.1f}" for m in METHODS) + f" ({len(up)} seed{'s' * (len(up) != 1)})"
    run.claim("table5/ranking", "Linear-probe accuracy (TTA, 10 crops): InstaAug > InstaAug without input > "
                     "random crop.", paper="random crop 51.63, without input 54.20, InstaAug 55.05", ours=ours,
                     criterion=_seed_claim("each step of the order: the per-seed paired gain in points (TTA)",
                                           ORDER[0]) + "; both steps must hold", evidence=ev)
    return ev


def gain_claim(run, probes: pd.DataFrame) -> results.Evidence:
    """Record ``table5/instaaug_beats_random``: InstaAug's TTA accuracy above random crops' (paper: +3.42 points),
    the per-seed paired gain in points, 95 % t-interval over seeds above :data:`ORDER`. Returns its evidence.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=[RANDOM, INSTA] * 3, seed=[0, 0, 1, 1, 2, 2], acc=0.5,
    ...                       acc_tta=[.5, .6, .5, .61, .52, .6]))
    >>> gain_claim(results.Run("smoke", name="demo"), p).verdict
    'reproduced'
    """
    d = _paired(probes, INSTA, RANDOM) * 100
    ev = results.decide(d, boundary=ORDER[0], reason=ORDER[1], unit="seed", n_min=N_MIN)
    run.claim("table5/instaaug_beats_random", "InstaAug crops give SimCLR a better linear-probe accuracy "
                     "than random crops.", paper=round(PAPER[INSTA][0] - PAPER[RANDOM][0], 2),
                     ours=round(ev.estimate, 2) if len(d) else None,
                     criterion=_seed_claim("InstaAug minus random crop, the per-seed paired gain in points (TTA)",
                                           ORDER[0]), evidence=ev)
    return ev


def crop_measures_per_seed(crops: pd.DataFrame, initial: dict) -> pd.DataFrame:
    """Per seed, what its trained InstaAug module does on the test scenes (means over scenes; one row per seed, the
    claims' replicates): ``kl`` (mean KL to the average distribution), ``rho`` (Spearman's rank correlation of the
    expected crop side with the object's size), ``spread`` (the expected side's standard deviation over scenes),
    ``size_gap`` (the mean expected side on the third of the scenes with the largest objects minus that on the
    third with the smallest, in image sides: signed, so a crop that shrinks as the object grows is negative),
    ``focus`` (the chance that a crop's centre lies on the object), ``over_free`` (``focus`` minus the input-free
    model's of that seed, paired over scenes) and ``over_untrained`` (minus the untrained module's of that seed,
    ``initial``: ``{seed: measures}`` of :func:`~invlib.papers.d.contrastive.initial_measures`).

    Example
    -------
    >>> t = pd.DataFrame(dict(method=[INSTA] * 3 + [FREE] * 3, seed=0, scene=[0, 1, 2] * 2,
    ...                       object_size=[.3, .5, .7] * 2, side=[.4, .5, .8, .7, .7, .7],
    ...                       centre_in_box=[.9, .8, .7, .5, .5, .5], kl_to_mean=[.2, .3, .1, 0, 0, 0]))
    >>> m = crop_measures_per_seed(t, {0: dict(centre_in_box=0.6)}).round(2)
    >>> m.to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'seed': 0, 'kl': 0.2, 'rho': 1.0, 'spread': 0.21, 'size_gap': 0.4, 'focus': 0.8, 'over_free': 0.3,
      'over_untrained': 0.2}]
    """
    rows = []
    for seed, g in crops[crops["method"] == INSTA].groupby("seed"):
        ins = g.groupby("scene").mean(numeric_only=True)
        free = crops[(crops["method"] == FREE) & (crops["seed"] == seed)].groupby("scene").mean(numeric_only=True)
        varies = ins["side"].std() > 0 and ins["object_size"].std() > 0
        focus = float(ins["centre_in_box"].mean())
        small, large = np.quantile(ins["object_size"], [1 / 3, 2 / 3])
        gap = ins.loc[ins["object_size"] >= large, "side"].mean() - ins.loc[ins["object_size"] <= small, "side"].mean()
        rows.append(dict(seed=seed, kl=float(ins["kl_to_mean"].mean()),
                         rho=float(spearmanr(ins["side"], ins["object_size"]).statistic) if varies else math.nan,
                         spread=float(ins["side"].std()), size_gap=float(gap), focus=focus,
                         over_free=float((ins["centre_in_box"] - free["centre_in_box"]).dropna().mean())
                         if len(free) else math.nan,
                         over_untrained=focus - initial.get(seed, {}).get("centre_in_box", math.nan)))
    return pd.DataFrame(rows, columns=["seed", "kl", "rho", "spread", "size_gap", "focus", "over_free",
                                       "over_untrained"])


def crop_claims(run, crops: pd.DataFrame, initial: dict) -> dict:
    """Record the claims of Figure 8 from :func:`crop_measures_per_seed` of the crop table of
    :func:`invlib.papers.d.contrastive.crop_table`. Each is about what training produces, so its replicate is the
    seed (one trained module each); the test scenes of one module are not replicates of training. ``initial``: the
    untrained modules' measures, ``{seed: measures}`` (or one module's, for every seed).

    - ``fig8/input_dependent``: the module's mean KL of ``p(tau | x)`` to the test set's average distribution above
      the boundary paper D's chapters share (:data:`~invlib.papers.d.criteria.INPUT_DEPENDENT_KL`);
    - ``fig8/size_correlation``: two parts, Spearman's rho of the expected crop side with the object's size above
      :data:`~invlib.papers.d.criteria.SIZE_FOLLOWS_OBJECT_RHO`, and the expected side of the largest third of the
      objects above that of the smallest third by more than :data:`MIN_SIZE_GAP` (an untrained module's ripples in
      the fourth decimal rank too);
    - ``fig8/crops_on_object``: two parts, the chance that a crop's centre lies on the object above the input-free
      model's and above the untrained module's (whose global crop is centred where the objects gather), each by
      more than :data:`ON_OBJECT`.

    Returns ``{"kl", "rho", "spread", "focus", "focus_free", "focus_initial"}`` (means over seeds) and the evidence
    of each claim (``"evidence"``).

    Example
    -------
    >>> from invlib import results
    >>> rng = np.random.default_rng(0)
    >>> size = rng.uniform(0.3, 0.9, 200)
    >>> t = pd.concat([pd.DataFrame(dict(method=m, seed=s, scene=np.arange(200), object_size=size,
    ...                                  side=side + 0.01 * s, centre_in_box=c + 0.01 * s, kl_to_mean=kl))
    ...                for s in (0, 1, 2)
    ...                for m, side, c, kl in ((INSTA, size + rng.normal(0, .05, 200), .8, .5), (FREE, .7, .5, 0.))])
    >>> run = results.Run("smoke", name="demo")
    >>> out = crop_claims(run, t, dict(kl_to_mean=0.001, centre_in_box=0.7, side_std=0.001))
    >>> [run.claims[c]["verdict"] for c in ("fig8/input_dependent", "fig8/size_correlation", "fig8/crops_on_object")]
    ['reproduced', 'reproduced', 'reproduced']
    """
    seeds = sorted(set(crops.loc[crops["method"] == INSTA, "seed"]))
    initial = _by_seed(initial, seeds)
    m = crop_measures_per_seed(crops, initial)

    def at(col, boundary, reason):
        return results.decide(m[col].to_numpy(float), boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)

    init = {k: float(np.mean([initial[s].get(k, math.nan) for s in seeds])) if seeds else math.nan
            for k in ("kl_to_mean", "centre_in_box", "side_std")}
    kl = at("kl", *INPUT_DEPENDENT_KL)
    run.claim("fig8/input_dependent", "The learned crop distribution depends on the input (instance-specific).",
              paper="Fig. 8: crops differ per image", ours=f"mean KL to the average {kl.estimate:.3f} nats (untrained "
              f"module {init['kl_to_mean']:.4f})",
              criterion=_seed_claim("the trained module's mean KL(p(tau|x) || mean_x p(tau|x)) over the test scenes, "
                                    "in nats", INPUT_DEPENDENT_KL[0]), evidence=kl)
    size = results.decide_parts({"rank correlation": at("rho", *SIZE_FOLLOWS_OBJECT_RHO),
                                 "large objects' crops larger": at("size_gap", *MIN_SIZE_GAP)},
                                reason="the crop size must follow the object's size and visibly vary")
    run.claim("fig8/size_correlation", "The learned crop size correlates with the object's size.",
              paper="Fig. 8: sizes of learned patches correlate with object sizes (no number)",
              ours=f"Spearman rho {m['rho'].mean():.3f} over {crops['scene'].nunique()} test scenes; expected side, "
              f"largest third of the objects minus smallest {m['size_gap'].mean():+.3f} (std over scenes "
              f"{m['spread'].mean():.3f}, untrained module {init['side_std']:.4f})",
              criterion=_seed_claim("Spearman's rho of the expected crop side with the object's size over the test "
                                    "scenes", SIZE_FOLLOWS_OBJECT_RHO[0]) + f"; and the mean expected side of "
              f"the largest third of the objects minus that of the smallest third above {MIN_SIZE_GAP[0]:g} image "
              "sides (the same interval); both must hold", evidence=size)
    focus = results.decide_parts({"over the input-free model": at("over_free", *ON_OBJECT),
                                  "over the untrained module": at("over_untrained", *ON_OBJECT)},
                                 reason="the crops must sit on the object more than both references")
    focus_free = float(m["focus"].mean() - m["over_free"].mean())
    run.claim("fig8/crops_on_object", "InstaAug's crops focus on the salient object.",
              paper="Fig. 8: crops on the salient features", ours=f"crop centre on the object {m['focus'].mean():.3f} "
              f"(without input {focus_free:.3f}, untrained module {init['centre_in_box']:.3f})",
              criterion=_seed_claim("P(crop centre in the object's box), InstaAug minus the input-free model of the "
                                    "seed (paired over scenes) and minus the untrained module of the seed",
                                    ON_OBJECT[0]) + "; both must hold", evidence=focus)
    return dict(kl=kl.estimate, rho=float(m["rho"].mean()), spread=float(m["spread"].mean()),
                size_gap=float(m["size_gap"].mean()),
                focus=float(m["focus"].mean()), focus_free=focus_free, focus_initial=init["centre_in_box"],
                evidence=dict(kl=kl, size=size, focus=focus))


def band_claim(run, S: Contrastive, trained: dict) -> dict:
    """Record ``band/entropy_in_band``: per seed, the share of InstaAug's band checks over the last :data:`LAST` of
    training whose entropy lies inside ``S.band``, 95 % t-interval over seeds above
    :data:`~invlib.papers.d.criteria.ENTROPY_IN_BAND_SHARE`. Not measurable where the profile's settings give a
    seed fewer than :data:`MIN_CHECKS` such checks (fixed by the steps and ``check_every``, not by the run's
    noise). Returns ``{"share", "mean", "checks", "evidence"}`` (means over seeds; checks: the fewest of a seed).

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> tr = {(INSTA, s): dict(band=[(i, 1.0 if i < 70 else 3.2, 0.2) for i in range(1, 101)], steps=100)
    ...       for s in (0, 1, 2)}
    >>> run = results.Run("smoke", name="demo")
    >>> band_claim(run, settings("smoke"), tr)["share"], run.claims["band/entropy_in_band"]["verdict"]
    (1.0, 'reproduced')
    """
    t = band_trace({k: v for k, v in trained.items() if k[0] == INSTA})
    lo, hi = S.band
    last = t[t["fraction"] > 1 - LAST] if len(t) else t
    per = [(g["entropy"].between(lo, hi).mean(), g["entropy"].mean(), len(g)) for _, g in last.groupby("seed")]
    share, mean, checks = (np.array([p[i] for p in per], dtype=float) for i in range(3))
    fewest = int(checks.min()) if len(per) else 0
    ev = results.decide(share, boundary=ENTROPY_IN_BAND_SHARE[0], reason=ENTROPY_IN_BAND_SHARE[1], unit="seed",
                        n_min=N_MIN) if fewest >= MIN_CHECKS else results.not_measurable(
        f"the profile's settings check the band {fewest} times in the last {LAST:.0%} of training, fewer than "
        f"{MIN_CHECKS}", unit="seed")
    out = dict(share=float(share.mean()) if len(per) else math.nan, mean=float(mean.mean()) if len(per) else math.nan,
               checks=fewest, evidence=ev)
    run.claim("band/entropy_in_band", "The dynamic entropy weight keeps the entropy in its band.",
              paper=f"band [{lo:g}, {hi:g}]", ours=f"{out['share']:.0%} of the checks in the band over the last "
              f"{LAST:.0%} of training ({fewest} per seed), mean {out['mean']:.2f}",
              criterion=_seed_claim(f"the share of the band checks in the last {LAST:.0%} of training inside "
                                    f"[{lo:g}, {hi:g}]", ENTROPY_IN_BAND_SHARE[0])
              + f"; measurable with >= {MIN_CHECKS} checks per seed", evidence=ev)
    return out


# ----------------------------------------------------------------------------- the report
def report(run, S: Contrastive, trained: dict, probes: pd.DataFrame, crops: pd.DataFrame, initial: dict,
           untrained: float | None = None) -> tuple[pd.DataFrame, dict]:
    """Log chapter D4's metrics, record its claims; return Table 5 beside the paper (:func:`table5`) and the facts
    the prose quotes, ``{glue name: Markdown text or number}``, the sentences that state a result made from the
    verdicts. ``initial``: the untrained modules' crop measures per seed, ``{seed: measures}``
    (:func:`invlib.papers.d.contrastive.initial_measures`; one module's measures serve every seed);
    ``untrained``: the untrained encoder's probe accuracy.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> tr = {(m, 0): dict(history=[dict(loss=4.0)], nt_xent=[4.0, 3.5], band=[], steps=10, seconds=1.0)
    ...       for m in METHODS}
    >>> run = results.Run("smoke", name="demo")
    >>> no_crops = pd.DataFrame(columns=["method", "scene"])
    >>> table, facts = report(run, settings("smoke"), tr, p, no_crops, {0: dict(kl_to_mean=0.0, centre_in_box=0.7)})
    >>> sorted(run.claims)  # doctest: +NORMALIZE_WHITESPACE
    ['band/entropy_in_band', 'fig8/crops_on_object', 'fig8/input_dependent', 'fig8/size_correlation',
     'table5/instaaug_beats_random', 'table5/ranking']
    >>> facts["d4_gain"]
    '+5.00 points (paper +3.42). This run cannot decide it at its budget (+5, 1 seed; > 0; needs >= 3 seeds).'
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
    evidence = dict(rank=ranking_claim(run, probes), gain=gain_claim(run, probes))
    initial = _by_seed(initial, sorted({s for _, s in trained}))
    crop = crop_claims(run, crops, initial) if len(crops) else _empty_crop_claims(run, initial)
    band = band_claim(run, S, trained)
    evidence |= {**crop.pop("evidence"), "band": band.pop("evidence")}
    for name, value in {**crop, **{f"band_{k}": v for k, v in band.items()}}.items():
        run.log(f"instaaug/{name}", value)
    for seed, measures in initial.items():
        for name, value in measures.items():
            run.log(f"untrained_module/seed{seed}/{name}", value)
    rs = list(trained.values())
    steps, secs = int(rs[0]["steps"]), float(np.mean([r["seconds"] for r in rs]))
    run.log("steps_per_model", steps)
    run.log("seconds_per_model", secs, note="wall seconds, on the machine that ran it")
    return table5(probes, untrained, S.tta), _facts(S, trained, probes, crop, band, initial, untrained, evidence)


def _detail(ev: results.Evidence) -> str:
    """The evidence in words; for a claim of several parts, each part's interval."""
    return " | ".join(f"{name}: {part.text()}" for name, part in ev.parts) if ev.parts else ev.text()


def _says(ev: results.Evidence, reproduced: str, not_reproduced: str) -> str:
    """The prose's sentence for a verdict, with the interval it rests on."""
    d = _detail(ev)
    return results.phrase(ev, reproduced=f"{reproduced} ({d}).", not_reproduced=f"{not_reproduced} ({d}).",
                          inconclusive=f"This run cannot decide it at its budget ({d}).",
                          partly=f"Only partly: {d}.", not_measurable=f"Not measurable at this profile ({ev.reason}).")


def _facts(S: Contrastive, trained: dict, probes: pd.DataFrame, crop: dict, band: dict, initial: dict,
           untrained: float | None, ev: dict) -> dict:
    """The facts the prose quotes: the run's numbers, and its sentences about results made from the verdicts."""
    acc = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    whole = {m: probes.loc[probes["method"] == m, "acc"].mean() * 100 for m in METHODS}
    nt = {m: (np.mean([r["nt_xent"][0] for (mm, _), r in trained.items() if mm == m]),
              np.mean([r["nt_xent"][-1] for (mm, _), r in trained.items() if mm == m])) for m in METHODS}
    rs = list(trained.values())
    lo, hi = S.band
    seeds = len({s for _, s in trained})
    ripple, kl0 = (np.mean([v.get(k, math.nan) for v in initial.values()]) if initial else math.nan
                   for k in ("side_std", "kl_to_mean"))
    return {
        "d4_scale": f"{S.n_train:,} training scenes of {S.size} px, {S.epochs} epochs at batch {S.batch_size} "
                    f"({int(rs[0]['steps'])} steps per model), an encoder of widths {'-'.join(map(str, S.widths))}, "
                    f"{seeds} seed{'s' * (seeds != 1)}",
        "d4_module": f"Adam at {S.aug_lr:g} for the module (the input-free one at {S.free_aug_lr or S.aug_lr:g}), "
                     f"warmed up over {S.warmup_epochs:g} epochs, the band [{lo:g}, {hi:g}] checked every "
                     f"{S.check_every or 'epoch'} steps",
        "d4_seconds": f"{float(np.mean([r['seconds'] for r in rs])):.0f} s",
        "d4_loss": "; ".join(f"{m} {a:.2f} → {b:.2f}" for m, (a, b) in nt.items()),
        "d4_chance": f"{math.log(2 * S.batch_size - 1):.2f}",
        "d4_acc": ", ".join(f"{m} {acc[m]:.1f} %" for m in METHODS),
        "d4_whole": ", ".join(f"{m} {whole[m]:.1f} %" for m in METHODS),
        "d4_untrained": "not measured" if untrained is None else f"{untrained * 100:.1f} %",
        "d4_seeds": f"{seeds} seed{'s' * (seeds != 1)}" + (f": the claims about training need {N_MIN}, so they are "
                                                          "inconclusive at this budget" if seeds < N_MIN else ""),
        "d4_rank": _says(ev["rank"], "The order of Table 5 holds beyond the spread of the seeds",
                         "The order of Table 5 is reversed beyond the spread of the seeds"),
        "d4_gain": f"{ev['gain'].estimate:+.2f} points (paper +3.42). " + _says(
            ev["gain"], "InstaAug is ahead of random crops", "Random crops are ahead of InstaAug"),
        "d4_kl": f"{crop['kl']:.2f} nats (the untrained module's: {kl0:.4f}; the input-free model's is 0 by "
                 "construction). " + _says(ev["kl"], "The learned distribution depends on the image",
                                           "The learned distribution depends on the image less than the boundary"),
        "d4_rho": f"ρ = {crop['rho']:.2f}; the expected side is {crop['size_gap']:+.3f} image sides larger on the "
                  f"largest third of the objects than on the smallest, and varies with a standard deviation of "
                  f"{crop['spread']:.3f} (the untrained module's: {ripple:.4f}). " + _says(
            ev["size"], "The crop size follows the object's size", "The crop size does not follow the object's size"),
        "d4_focus": f"{crop['focus']:.2f} for InstaAug against {crop['focus_free']:.2f} without input and "
                    f"{crop['focus_initial']:.2f} for the untrained module. " + _says(
            ev["focus"], "The crops sit on the object more than both references",
            "The crops sit on the object no more than the references"),
        "d4_band": f"{band['share']:.0%} of the checks in the last {LAST:.0%} of training lie in [{lo:g}, {hi:g}], "
                   f"their mean is {band['mean']:.2f}. " + _says(
            ev["band"], "The dynamic weight holds the entropy in its band",
            "The dynamic weight does not hold the entropy in its band"),
        "d4_hmax": f"{entropy_bound(S):.2f}",
    }


def _empty_crop_claims(run, initial: dict) -> dict:
    """The crop claims when no InstaAug model was trained (a method not run): not measurable."""
    none = results.not_measurable("no InstaAug model was trained at this profile", unit="seed")
    for cid, claim in (("fig8/input_dependent", "The learned crop distribution depends on the input."),
                       ("fig8/size_correlation", "The learned crop size correlates with the object's size."),
                       ("fig8/crops_on_object", "InstaAug's crops focus on the salient object.")):
        run.claim(cid, claim, paper="Fig. 8", ours=None, criterion="needs a trained InstaAug model", evidence=none)
    focus0 = float(np.mean([v.get("centre_in_box", math.nan) for v in initial.values()])) if initial else math.nan
    return dict(kl=math.nan, rho=math.nan, spread=math.nan, size_gap=math.nan, focus=math.nan, focus_free=math.nan,
                focus_initial=focus0, evidence=dict(kl=none, size=none, focus=none))


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
