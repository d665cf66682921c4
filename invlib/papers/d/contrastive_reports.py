"""What chapter D4 shows: Table 5 of the InstaAug paper beside this run, the claims of section 6 with computed
verdicts, the numbers its prose quotes, and the figures (Figure 8's sampled crops, crop size against object size,
the entropy band over training).

:func:`report` takes the :class:`invlib.results.Run` of the chapter, its settings
(:func:`invlib.papers.d.contrastive.settings`) and what the method module measured (the trained models, the probe's
table, the crop table, the yardsticks); it logs the metrics, records the claims and returns the table and the
``{glue name: Markdown text or number}`` facts for the prose.

Every claim is about what training produces (an encoder, a module trained with it), so its replicate is the
**seed**: one value per seed (paired by seed where two methods are compared), a 95 % t-interval over seeds,
decisive from the declared ``n_min`` seeds. The test scenes of one trained module are not replicates of training and
do not enter a verdict. The claims are declared in paper D's protocol (:mod:`invlib.papers.d.protocol`, the list
``D4``: each part's smallest effect that matters and its reason); this module computes their effects, and
:meth:`invlib.results.Run.claim` decides them.

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
from ...protocol import decide
from ...results import mean_se
from .contrastive import METHODS, PAPER, UNTRAINED, Contrastive, band_trace, entropy_bound, sample_crops
from .criteria import control_not_run, gain_shrink, record_replicates
from .protocol import PROTOCOL

FREE, INSTA, RANDOM = "InstaAug (without input)", "InstaAug", "Random crop"
LAST = 0.3  # the share of training at the end over which the entropy should stay in its band
MIN_CHECKS = 5  # band checks per seed in the last LAST of training below which the share is not measured
CHAPTER = "d4_contrastive_crops"  # its claims' declarations: PROTOCOL.of_chapter(CHAPTER)


def _declared(cid: str):
    """The declaration of this chapter's claim ``cid`` (paper D's protocol)."""
    return PROTOCOL.get(cid, CHAPTER)


N_MIN = _declared("table5/ranking").parts["floor"].n_min  # seeds before a claim about training can be decisive

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
def table5(probes: pd.DataFrame, untrained: pd.DataFrame | None = None, tta: int = 10) -> pd.DataFrame:
    """Table 5 beside this run: per method the paper's linear-probe accuracy (Tiny-ImageNet, TTA of 10 crops) and
    this run's on the whole image and with TTA over ``tta`` crops (mean ± standard error over seeds, in %);
    ``untrained``: the untrained encoder's probe per seed (:func:`~invlib.papers.d.contrastive.untrained_probe`),
    as a last row.

    Example
    -------
    >>> p = pd.DataFrame(dict(method=["Random crop"] * 2, seed=[0, 1], acc=[0.4, 0.5], acc_tta=[0.45, 0.55]))
    >>> u = pd.DataFrame(dict(method="untrained encoder", seed=[0, 1], acc=[0.2, 0.2], acc_tta=[0.3, 0.3]))
    >>> table5(p, u).loc[["Random crop", "untrained encoder"], "whole image (%)"].tolist()
    ['45.0 ± 5.0', '20.0 ± 0.0']
    """
    rows = []
    for m in METHODS:
        g = probes[probes["method"] == m]
        if len(g):
            first = g["acc_tta"].iloc[0]
            rows.append({"method": m, "paper (%)": f"{PAPER[m][0]:.2f} ± {PAPER[m][1]:.2f}",
                         "whole image (%)": _pm(g["acc"]), f"TTA, {tta} crops (%)": _pm(g["acc_tta"])
                         if first == first else "—", "seeds": len(g)})
    if untrained is not None and len(untrained):
        rows.append({"method": UNTRAINED, "paper (%)": "—", "whole image (%)": _pm(untrained["acc"]),
                     f"TTA, {tta} crops (%)": _pm(untrained["acc_tta"]), "seeds": len(untrained)})
    return pd.DataFrame(rows).set_index("method")


# ----------------------------------------------------------------------------- claims
def _by_seed(initial: dict, seeds) -> dict:
    """``{seed: measures}`` of the untrained modules: ``initial`` as it is when keyed by seed, else one module's
    measures for every seed."""
    return initial if initial and all(isinstance(v, dict) for v in initial.values()) else {s: initial for s in seeds}


def floor_effects(probes: pd.DataFrame, untrained: pd.DataFrame | None, methods=METHODS, key: str = "") -> dict:
    """The effects of the part ``floor`` (:data:`invlib.papers.d.protocol.FLOOR`): per compared encoder of
    ``methods``, its TTA probe accuracy minus its seed's untrained encoder's, in points, one value per seed, keyed
    ``"<key><method> over the untrained encoder"``; each not measurable without ``untrained``.

    Example
    -------
    >>> p = pd.DataFrame(dict(method=[RANDOM, INSTA] * 3, seed=[0, 0, 1, 1, 2, 2], acc=0.5,
    ...                       acc_tta=[.5, .6, .5, .61, .52, .6]))
    >>> u = pd.DataFrame(dict(method=UNTRAINED, seed=[0, 1, 2], acc=0.3, acc_tta=0.4))
    >>> [v.round(6).tolist() for v in floor_effects(p, u, (RANDOM, INSTA)).values()]
    [[10.0, 10.0, 12.0], [20.0, 21.0, 20.0]]
    >>> list(floor_effects(p, u, (INSTA,), key="variation 1: "))
    ['variation 1: InstaAug over the untrained encoder']
    >>> floor_effects(pd.concat([p, u]), u, (INSTA,))["InstaAug over the untrained encoder"].shape  # one per seed
    (3,)
    """
    if untrained is None or not len(untrained):
        return {f"{key}{m} over the untrained encoder": results.not_measurable(
            "the untrained encoder was not probed", unit="seed") for m in methods}
    both = pd.concat([probes[probes["method"] != UNTRAINED], untrained])  # its rows once, were they in both
    return {f"{key}{m} over the untrained encoder": _paired(both, m, UNTRAINED) * 100 for m in methods}


def report_ranking(run, probes: pd.DataFrame, untrained: pd.DataFrame | None = None) -> results.Evidence:
    """Record ``table5/ranking``: InstaAug > InstaAug (without input) > random crop in linear-probe accuracy with
    TTA, two steps (each a per-seed paired gain in points) and the floor (every encoder above its seed's untrained
    encoder, :func:`floor_effects`), as the protocol declares them. Returns its evidence.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> u = pd.DataFrame(dict(method=UNTRAINED, seed=[0], acc=0.3, acc_tta=0.3))
    >>> report_ranking(results.Run("smoke", name="demo"), p, u).verdict  # one seed: the spread of training unknown
    'inconclusive at this budget'
    """
    up, top = _paired(probes, FREE, RANDOM) * 100, _paired(probes, INSTA, FREE) * 100
    effects = {f"{FREE} over {RANDOM}": up, f"{INSTA} over {FREE}": top, "floor": floor_effects(probes, untrained)}
    means = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    floor = "" if untrained is None or not len(untrained) else f", untrained {untrained['acc_tta'].mean() * 100:.1f}"
    ours = ", ".join(f"{m} {means[m]:.1f}" for m in METHODS) + floor + f" ({len(up)} seed{'s' * (len(up) != 1)})"
    run.claim(_declared("table5/ranking"), ours=ours, effects=effects)
    return run.evidence["table5/ranking"]


def report_gain(run, probes: pd.DataFrame, untrained: pd.DataFrame | None = None) -> results.Evidence:
    """Record ``table5/instaaug_beats_random``: InstaAug's TTA accuracy above random crops' (paper: +3.42 points),
    the per-seed paired gain in points, with the floor of both encoders (:func:`floor_effects`), as the protocol
    declares them. Returns its evidence.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=[RANDOM, INSTA] * 3, seed=[0, 0, 1, 1, 2, 2], acc=0.5,
    ...                       acc_tta=[.5, .6, .5, .61, .52, .6]))
    >>> u = pd.DataFrame(dict(method=UNTRAINED, seed=[0, 1, 2], acc=0.3, acc_tta=0.4))
    >>> report_gain(results.Run("smoke", name="demo"), p, u).verdict
    'reproduced'
    >>> report_gain(results.Run("smoke", name="demo"), p, u.assign(acc_tta=0.7)).verdict  # below the floor: untested
    'inconclusive at this budget'
    """
    d = _paired(probes, INSTA, RANDOM) * 100
    effects = {f"{INSTA} over {RANDOM}": d, "floor": floor_effects(probes, untrained, (RANDOM, INSTA))}
    run.claim(_declared("table5/instaaug_beats_random"), ours=round(float(d.mean()), 2) if len(d) else None,
              effects=effects)
    return run.evidence["table5/instaaug_beats_random"]


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


def report_crops(run, crops: pd.DataFrame, initial: dict) -> dict:
    """Record the claims of Figure 8 from :func:`crop_measures_per_seed` of the crop table of
    :func:`invlib.papers.d.contrastive.crop_table`. Each is about what training produces, so its replicate is the
    seed (one trained module each); the test scenes of one module are not replicates of training. ``initial``: the
    untrained modules' measures, ``{seed: measures}`` (or one module's, for every seed).

    - ``fig8/input_dependent``: the module's mean KL of ``p(tau | x)`` to the test set's average distribution;
    - ``fig8/size_correlation``: two parts, Spearman's rho of the expected crop side with the object's size, and the
      expected side of the largest third of the objects minus that of the smallest third (an untrained module's
      ripples in the fourth decimal rank too);
    - ``fig8/crops_on_object``: two parts, the chance that a crop's centre lies on the object minus the input-free
      model's and minus the untrained module's (whose global crop is centred where the objects gather).

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
    >>> out = report_crops(run, t, dict(kl_to_mean=0.001, centre_in_box=0.7, side_std=0.001))
    >>> [run.claims[c]["verdict"] for c in ("fig8/input_dependent", "fig8/size_correlation", "fig8/crops_on_object")]
    ['reproduced', 'reproduced', 'reproduced']
    """
    seeds = sorted(set(crops.loc[crops["method"] == INSTA, "seed"]))
    initial = _by_seed(initial, seeds)
    m = crop_measures_per_seed(crops, initial)

    def at(col):
        return m[col].to_numpy(float)

    init = {k: float(np.mean([initial[s].get(k, math.nan) for s in seeds])) if seeds else math.nan
            for k in ("kl_to_mean", "centre_in_box", "side_std")}
    effects = {"fig8/input_dependent": at("kl"),
               "fig8/size_correlation": {"rank correlation": at("rho"), "large objects' crops larger": at("size_gap")},
               "fig8/crops_on_object": {"over the input-free model": at("over_free"),
                                        "over the untrained module": at("over_untrained")}}
    kl, size, focus = (decide(_declared(cid), e) for cid, e in effects.items())
    run.claim(_declared("fig8/input_dependent"), effects=effects["fig8/input_dependent"],
              ours=f"mean KL to the average {kl.estimate:.3f} nats (untrained module {init['kl_to_mean']:.4f})")
    run.claim(_declared("fig8/size_correlation"), effects=effects["fig8/size_correlation"],
              ours=f"Spearman rho {m['rho'].mean():.3f} over {crops['scene'].nunique()} test scenes; expected side, "
              f"largest third of the objects minus smallest {m['size_gap'].mean():+.3f} (std over scenes "
              f"{m['spread'].mean():.3f}, untrained module {init['side_std']:.4f})")
    focus_free = float(m["focus"].mean() - m["over_free"].mean())
    run.claim(_declared("fig8/crops_on_object"), effects=effects["fig8/crops_on_object"],
              ours=f"crop centre on the object {m['focus'].mean():.3f} (without input {focus_free:.3f}, untrained "
              f"module {init['centre_in_box']:.3f})")
    return dict(kl=kl.estimate, rho=float(m["rho"].mean()), spread=float(m["spread"].mean()),
                size_gap=float(m["size_gap"].mean()),
                focus=float(m["focus"].mean()), focus_free=focus_free, focus_initial=init["centre_in_box"],
                evidence=dict(kl=kl, size=size, focus=focus))


def report_band(run, S: Contrastive, trained: dict) -> dict:
    """Record ``band/entropy_in_band``: per seed, the share of InstaAug's band checks over the last :data:`LAST` of
    training whose entropy lies inside ``S.band``. Not measurable where the profile's settings give a seed fewer
    than :data:`MIN_CHECKS` such checks (fixed by the steps and ``check_every``, not by the run's noise). Returns
    ``{"share", "mean", "checks", "evidence"}`` (means over seeds; checks: the fewest of a seed).

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> tr = {(INSTA, s): dict(band=[(i, 1.0 if i < 70 else 3.2, 0.2) for i in range(1, 101)], steps=100)
    ...       for s in (0, 1, 2)}
    >>> run = results.Run("smoke", name="demo")
    >>> report_band(run, settings("smoke"), tr)["share"], run.claims["band/entropy_in_band"]["verdict"]
    (1.0, 'reproduced')
    """
    t = band_trace({k: v for k, v in trained.items() if k[0] == INSTA})
    lo, hi = S.band
    last = t[t["fraction"] > 1 - LAST] if len(t) else t
    per = [(g["entropy"].between(lo, hi).mean(), g["entropy"].mean(), len(g)) for _, g in last.groupby("seed")]
    share, mean, checks = (np.array([p[i] for p in per], dtype=float) for i in range(3))
    fewest = int(checks.min()) if len(per) else 0
    effects = share if fewest >= MIN_CHECKS else results.not_measurable(
        f"the profile's settings check the band {fewest} times in the last {LAST:.0%} of training, fewer than "
        f"{MIN_CHECKS}", unit="seed")
    out = dict(share=float(share.mean()) if len(per) else math.nan, mean=float(mean.mean()) if len(per) else math.nan,
               checks=fewest, evidence=decide(_declared("band/entropy_in_band"), effects))
    run.claim(_declared("band/entropy_in_band"), effects=effects,
              ours=f"{out['share']:.0%} of the checks in the band [{lo:g}, {hi:g}] over the last {LAST:.0%} of "
              f"training ({fewest} per seed), mean {out['mean']:.2f}")
    return out


# ----------------------------------------------------------------------------- the data control
def control_effects(control: pd.DataFrame, variation: float, control_variation: float) -> pd.DataFrame:
    """Per seed of the data control (:func:`~invlib.papers.d.contrastive.data_control`'s table), at ``variation``
    (``_v``) and ``control_variation`` (``_c``): ``gain`` InstaAug's TTA accuracy minus the input-free model's (in
    points), ``kl`` InstaAug's mean KL to the average distribution (nats), and the shrinks ``gain_shrink`` and
    ``kl_shrink`` (at ``variation`` minus at ``control_variation``).

    Example
    -------
    >>> c = pd.DataFrame(dict(variation=[1.0, 1.0, 0.0, 0.0], method=[INSTA, FREE] * 2, seed=0, acc=0.5,
    ...                       acc_tta=[.6, .5, .5, .5], kl=[.9, 0, .2, 0]))
    >>> control_effects(c, 1.0, 0.0).round(2).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'seed': 0, 'gain_v': 10.0, 'gain_c': 0.0, 'kl_v': 0.9, 'kl_c': 0.2, 'gain_shrink': 10.0, 'kl_shrink': 0.7}]
    """
    def at(v, col, m):
        g = control[(control["variation"] == v) & (control["method"] == m)]
        return g.set_index("seed")[col]

    arms = [at(v, "acc_tta", m) for v in (variation, control_variation) for m in (INSTA, FREE)]
    gain_v, gain_c, shrink = gain_shrink(*arms)
    out = pd.DataFrame(dict(gain_v=gain_v, gain_c=gain_c))
    for k, v in (("v", variation), ("c", control_variation)):
        out[f"kl_{k}"] = at(v, "kl", INSTA)
    out["gain_shrink"], out["kl_shrink"] = shrink, out["kl_v"] - out["kl_c"]
    return out.dropna().rename_axis("seed").reset_index()


def report_control(run, S: Contrastive, control: pd.DataFrame) -> dict:
    """Record the data control's claims (not the paper's experiment; its mechanism's prediction): with no
    per-instance variation (``S.control_variation``) the per-input module has nothing per image to adapt to, so

    - ``control/probe_gain_shrinks``: InstaAug's linear-probe gain over its input-free version (TTA, in points) is
      smaller than at ``S.variation``: per seed the gain at ``S.variation`` minus that at the control, with the
      floor of all four encoders at their variation (:func:`floor_effects`: below it the gains are noise). The
      difference is signed (the interaction of the two factors): a larger loss at the control counts as a shrink;
      whether the gain at ``S.variation`` is positive is ``table5/ranking``'s second step;
    - ``control/input_dependence_shrinks``: InstaAug's crop distribution depends less on the image: per seed its
      mean KL to the average distribution at ``S.variation`` minus that at the control.

    Returns ``{"effects": control_effects(...), "evidence": {"shrink_acc", "shrink_kl"}}``.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> rows = [dict(variation=v, method=m, seed=s, acc=.5, acc_tta=a + .01 * s, kl=k) for s in (0, 1, 2)
    ...         for v, m, a, k in ((1.0, INSTA, .6, .9), (1.0, FREE, .5, 0), (1.0, UNTRAINED, .3, math.nan),
    ...                            (0.0, INSTA, .5, .1), (0.0, FREE, .5, 0), (0.0, UNTRAINED, .3, math.nan))]
    >>> run = results.Run("smoke", name="demo")
    >>> out = report_control(run, settings("smoke"), pd.DataFrame(rows))
    >>> [run.claims[c]["verdict"] for c in ("control/probe_gain_shrinks", "control/input_dependence_shrinks")]
    ['reproduced', 'reproduced']
    """
    v, c = S.variation, S.control_variation
    if not len(control):
        none = results.not_measurable("the data control was not run (no control seeds)", unit="seed")
        effects = dict(shrink_acc=none, shrink_kl=none)
        eff = pd.DataFrame(columns=["seed", "gain_v", "gain_c", "kl_v", "kl_c", "gain_shrink", "kl_shrink"])
    else:
        eff = control_effects(control, v, c)
        floor = {k: e for x in (v, c) for k, e in floor_effects(
            control[control["variation"] == x], control[(control["variation"] == x) & (control["method"] == UNTRAINED)],
            (FREE, INSTA), key=f"variation {x:g}: ").items()}
        effects = dict(shrink_acc={"gain shrinks": eff["gain_shrink"].to_numpy(float), "floor": floor},
                       shrink_kl=eff["kl_shrink"].to_numpy(float))
    cids = dict(shrink_acc="control/probe_gain_shrinks", shrink_kl="control/input_dependence_shrinks")
    ev = {k: decide(_declared(cid), effects[k]) for k, cid in cids.items()}
    seeds = len(eff)
    mean = {k: float(eff[k].mean()) if seeds else math.nan for k in ("gain_v", "gain_c", "kl_v", "kl_c")}
    run.claim(_declared(cids["shrink_acc"]), effects=effects["shrink_acc"],
              ours=f"gain {mean['gain_v']:+.1f} points at variation {v:g}, {mean['gain_c']:+.1f} at {c:g} ({seeds} "
              f"seed{'s' * (seeds != 1)})" if seeds else "not run")
    run.claim(_declared(cids["shrink_kl"]), effects=effects["shrink_kl"],
              ours=f"mean KL to the average {mean['kl_v']:.3f} nats at variation {v:g}, {mean['kl_c']:.3f} at {c:g}"
              if seeds else "not run")
    return dict(effects=eff, evidence=ev)


def control_table(control: pd.DataFrame) -> pd.DataFrame:
    """The data control at a glance: per variation (rows) the TTA probe accuracy of both learned models and of the
    untrained encoder, InstaAug's gain over its input-free version (points) and both modules' mean KL to the
    average distribution (mean ± standard error over seeds).

    Example
    -------
    >>> c = pd.DataFrame(dict(variation=[1.0] * 3, method=[INSTA, FREE, UNTRAINED], seed=0, acc=0.5,
    ...                       acc_tta=[.6, .5, .3], kl=[.9, 0, math.nan]))
    >>> control_table(c).loc[1.0, "gain (points)"]
    '+10.0'
    """
    rows = []
    for v, g in control.groupby("variation", sort=False):
        acc = {m: g[g["method"] == m].set_index("seed")["acc_tta"] for m in (INSTA, FREE, UNTRAINED)}
        gain = (acc[INSTA] - acc[FREE]).dropna() * 100
        m, se = mean_se(gain.to_numpy(float))
        rows.append({"variation": v, **{f"{k} TTA (%)": _pm(a) for k, a in acc.items()},
                     "gain (points)": f"{m:+.1f}" + ("" if math.isnan(se) else f" ± {se:.1f}"),
                     **{f"KL {k} (nats)": _pm(g.loc[g["method"] == k, "kl"].clip(lower=0), 1, 3)  # 0 below 1e-7
                        for k in (INSTA, FREE)},
                     "seeds": len(gain)})
    return pd.DataFrame(rows).set_index("variation")


def plot_control(control: pd.DataFrame, axes=None):
    """The data control: per seed (one line each), InstaAug's TTA probe gain over its input-free version (left,
    points) and its mean KL to the average crop distribution (right, nats) at each variation. Returns the axes.

    Example
    -------
    >>> c = pd.DataFrame(dict(variation=[1.0, 1.0, 0.0, 0.0], method=[INSTA, FREE] * 2, seed=0, acc=0.5,
    ...                       acc_tta=[.6, .5, .5, .5], kl=[.9, 0, .2, 0]))
    >>> [ax.get_ylabel() for ax in plot_control(c)]
    ['InstaAug − without input (TTA points)', 'InstaAug: KL to the average (nats)']
    >>> plt.close("all")
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(7.5, 3))
    vs = sorted(set(control["variation"]))
    for seed, g in control.groupby("seed"):
        acc = g.pivot_table(index="variation", columns="method", values="acc_tta").reindex(vs)
        kl = g[g["method"] == INSTA].set_index("variation")["kl"].reindex(vs)
        axes[0].plot(vs, (acc[INSTA] - acc[FREE]) * 100, "o-", label=f"seed {seed}")
        axes[1].plot(vs, kl, "o-", label=f"seed {seed}")
    axes[0].axhline(0, color="0.5", lw=0.8)
    axes[0].set(xlabel="scenes' variation", ylabel="InstaAug − without input (TTA points)", xticks=vs)
    axes[1].set(xlabel="scenes' variation", ylabel="InstaAug: KL to the average (nats)", xticks=vs)
    axes[0].legend(fontsize=8)
    return axes


# ----------------------------------------------------------------------------- the report
def report(run, S: Contrastive, trained: dict, probes: pd.DataFrame, crops: pd.DataFrame, initial: dict,
           untrained: pd.DataFrame | None = None, control: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """Log chapter D4's metrics, record its claims; return Table 5 beside the paper (:func:`table5`) and the facts
    the prose quotes, ``{glue name: Markdown text or number}``, the sentences that state a result made from the
    verdicts. ``initial``: the untrained modules' crop measures per seed, ``{seed: measures}``
    (:func:`invlib.papers.d.contrastive.initial_measures`; one module's measures serve every seed);
    ``untrained``: the untrained encoder's probe per seed (:func:`~invlib.papers.d.contrastive.untrained_probe`);
    ``control``: the data control's table (:func:`~invlib.papers.d.contrastive.data_control`; None: not run).

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.d.contrastive import settings
    >>> p = pd.DataFrame(dict(method=list(METHODS), seed=0, acc=0.5, acc_tta=[0.50, 0.52, 0.55]))
    >>> tr = {(m, 0): dict(history=[dict(loss=4.0)], nt_xent=[4.0, 3.5], band=[], steps=10, seconds=1.0)
    ...       for m in METHODS}
    >>> run = results.Run("smoke", name="demo")
    >>> no_crops = pd.DataFrame(columns=["method", "scene"])
    >>> u = pd.DataFrame(dict(method=UNTRAINED, seed=[0], acc=0.3, acc_tta=0.3))
    >>> table, facts = report(run, settings("smoke"), tr, p, no_crops, {0: dict(kl_to_mean=0.0, centre_in_box=0.7)},
    ...                       u)
    >>> sorted(run.claims)  # doctest: +NORMALIZE_WHITESPACE
    ['band/entropy_in_band', 'control/input_dependence_shrinks', 'control/probe_gain_shrinks',
     'fig8/crops_on_object', 'fig8/input_dependent', 'fig8/size_correlation', 'table5/instaaug_beats_random',
     'table5/ranking']
    >>> facts["d4_gain"]  # doctest: +ELLIPSIS
    '+5.00 points (paper +3.42). This run cannot decide it at its budget (InstaAug over Random crop: +5, 1 seed; ...'
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
    if untrained is not None and len(untrained):
        run.log("untrained_encoder/probe_acc", mean_se(untrained["acc"])[0])
        run.log("untrained_encoder/probe_acc_tta", mean_se(untrained["acc_tta"])[0])
    evidence = dict(rank=report_ranking(run, probes, untrained), gain=report_gain(run, probes, untrained))
    ctrl = report_control(run, S, control if control is not None else pd.DataFrame())
    evidence |= ctrl["evidence"]
    for name in ("gain_v", "gain_c", "kl_v", "kl_c"):
        if len(ctrl["effects"]):
            run.log(f"control/{name}", float(ctrl["effects"][name].mean()))
    initial = _by_seed(initial, sorted({s for _, s in trained}))
    crop = report_crops(run, crops, initial) if len(crops) else _empty_crop_claims(run, initial)
    band = report_band(run, S, trained)
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
    record_variance(run, probes, crops)
    learned = {k: r for k, r in trained.items() if k[0] != RANDOM}
    record_replicates(run, "seeds", seed_seconds(learned), SEED_CLAIMS,
                      note="a seed: InstaAug's and the input-free module's encoders (SimCLR training, the seconds "
                           "train_one keeps with the model)")
    record_replicates(run, "table5_seeds", seed_seconds({k: r for k, r in trained.items() if k[0] == RANDOM}, probes,
                                                        untrained), TABLE5_CLAIMS,
                      note="a seed of Table 5: the random-crop encoder (SimCLR training) and the linear probes of the "
                           "three encoders and of the seed's untrained one (the seconds probe keeps with its "
                           "outcome); its learned encoders are the seed's of `seeds`")
    record_replicates(run, "control_seeds", control_seconds(control), CONTROL_CLAIMS, note="a seed: InstaAug and "
                      "its input-free version at both variations (those at the chapter's variation are Table 5's "
                      "models of the seed when it is one of seeds); None: the seeds")
    facts = _facts(S, trained, probes, crop, band, initial, untrained, evidence)
    return table5(probes, untrained, S.tta), facts | _control_facts(S, ctrl["effects"], evidence)


VARIANCE_PAIRS = ((INSTA, RANDOM), (INSTA, FREE), (FREE, RANDOM))  # Table 5's paired probe gains


def _per_scene(table: pd.DataFrame, method: str, col: str) -> dict:
    """``{seed: (N,) float array}``: ``method``'s ``col`` per test scene, in scene order, for each seed."""
    g = table[table["method"] == method]
    if "scene" in g:  # the crop table: one row per scene
        return {s: gs.sort_values("scene")[col].to_numpy(float) for s, gs in g.groupby("seed")}
    return {s: np.asarray(v, dtype=float) for s, v in zip(g["seed"], g[col])}  # the probe: an array per row


def record_variance(run, probes: pd.DataFrame, crops: pd.DataFrame) -> None:
    """Record where the spread over seeds comes from (:meth:`invlib.results.Run.variance`): for each of
    :data:`VARIANCE_PAIRS`, the paired gain in TTA probe accuracy per test scene (points); for InstaAug's module,
    each scene's KL to the mean crop distribution (``fig8/input_dependent``) and its crop centre's chance of lying
    on the object minus the input-free module's (``fig8/crops_on_object``). Evaluation (the test scenes) or
    training (the seeds): which one a larger test set or more seeds would narrow. Needs two seeds.

    Example
    -------
    >>> from invlib import results
    >>> p = pd.DataFrame(dict(method=[RANDOM, INSTA] * 2, seed=[0, 0, 1, 1], acc=0.5, acc_tta=0.5,
    ...                       correct_tta=[np.array([1, 0, 1, 0], bool), np.array([1, 1, 1, 0], bool)] * 2))
    >>> run = results.Run("smoke", name="demo")
    >>> record_variance(run, p, pd.DataFrame(columns=["method", "seed", "scene"]))
    >>> list(run.variance_splits["seeds"]), run.variance_splits["seeds"]["InstaAug - Random crop (probe, TTA)"]["items"]
    (['InstaAug - Random crop (probe, TTA)'], 4)
    """
    if "correct_tta" in probes:
        for above, below in VARIANCE_PAIRS:
            a, b = _per_scene(probes, above, "correct_tta"), _per_scene(probes, below, "correct_tta")
            seeds = sorted(set(a) & set(b))
            if len(seeds) >= 2:
                run.variance("seeds", f"{above} - {below} (probe, TTA)",
                             np.stack([(a[s] - b[s]) * 100 for s in seeds]))
    if not len(crops):
        return
    kl = _per_scene(crops, INSTA, "kl_to_mean")
    if len(kl) >= 2:
        run.variance("seeds", f"{INSTA}: KL to the mean distribution (nats)", np.stack([kl[s] for s in sorted(kl)]))
    on, free = _per_scene(crops, INSTA, "centre_in_box"), _per_scene(crops, FREE, "centre_in_box")
    seeds = sorted(set(on) & set(free))
    if len(seeds) >= 2:
        run.variance("seeds", f"{INSTA} - {FREE}: crop centre on the object (points)",
                     np.stack([(on[s] - free[s]) * 100 for s in seeds]))


TABLE5_CLAIMS = ("table5/ranking", "table5/instaaug_beats_random")  # over Table 5's seeds (the probes)
SEED_CLAIMS = ("fig8/input_dependent", "fig8/size_correlation", "fig8/crops_on_object",
               "band/entropy_in_band")  # over every seed of the learned modules
CONTROL_CLAIMS = ("control/probe_gain_shrinks", "control/input_dependence_shrinks")  # over the control's seeds


def seed_seconds(trained: dict, *probes: pd.DataFrame | None) -> list[float]:
    """Per seed, in seed order, what the seed cost: its encoders' training (``seconds`` of each model of
    :func:`~invlib.papers.d.contrastive.train`, the cold run's, kept with the cached model) and, for each frame of
    ``probes`` given (:func:`~invlib.papers.d.contrastive.probe`'s, the untrained encoders' too), its linear probes'
    cold ``seconds``: with test-time augmentation on the probe's training and test scenes alike, a third of a seed.

    Example
    -------
    >>> seed_seconds({("a", 0): dict(seconds=2.0), ("b", 0): dict(seconds=3.0), ("a", 1): dict(seconds=4.0)})
    [5.0, 4.0]
    >>> seed_seconds({("a", 0): dict(seconds=2.0)}, pd.DataFrame(dict(seed=[0, 0], seconds=[0.5, 0.25])), None)
    [2.75]
    """
    per: dict[int, float] = {}
    for (_, seed), r in trained.items():
        per[seed] = per.get(seed, 0.0) + float(r.get("seconds", 0.0))
    for frame in probes:
        if frame is None or "seconds" not in frame:
            continue
        for seed, secs in frame.groupby("seed")["seconds"].sum().items():
            if int(seed) in per:
                per[int(seed)] += float(secs)
    return [per[s] for s in sorted(per)]


def control_seconds(control: pd.DataFrame | None) -> list[float]:
    """Per seed of the data control, in seed order, what training its models took at both variations (the
    ``seconds`` column of :func:`~invlib.papers.d.contrastive.data_control`'s table); empty without it.

    Example
    -------
    >>> c = pd.DataFrame(dict(variation=[1.0, 0.0, 0.0], method=["a", "a", "u"], seed=[0, 0, 0], seconds=[2.0, 3.0, 0]))
    >>> control_seconds(c), control_seconds(None)
    ([5.0], [])
    """
    if control is None or not len(control) or "seconds" not in control:
        return []
    return [float(v) for v in control.groupby("seed")["seconds"].sum().sort_index()]


def _control_facts(S: Contrastive, eff: pd.DataFrame, ev: dict) -> dict:
    """The data control's sentences for the prose."""
    n, v, c = len(eff), S.variation, S.control_variation
    if not n:
        return {"d4_control_seeds": "not run at this profile", "d4_control_why": control_not_run(len(CONTROL_CLAIMS)),
                "d4_control_acc_value": "not run",
                "d4_control_kl_value": "not run", "d4_control_acc": "Not run.", "d4_control_kl": "Not run."}
    m = {k: float(eff[k].mean()) for k in ("gain_v", "gain_c", "kl_v", "kl_c")}
    acc = f"{m['gain_v']:+.1f} points at variation {v:g} and {m['gain_c']:+.1f} at {c:g}"
    kl = f"{m['kl_v']:.3f} nats at variation {v:g} and {m['kl_c']:.3f} at {c:g}"
    seeds = f"{n} seed{'s' * (n != 1)}"
    return {"d4_control_seeds": seeds, "d4_control_why": f"Here it runs at {seeds}.",
            "d4_control_acc_value": acc, "d4_control_kl_value": kl,
            "d4_control_acc": f"{acc}. "
            + _says(ev["shrink_acc"], "The per-input gain shrinks without per-instance variation",
                    "The per-input gain does not shrink by the smallest change that matters without per-instance "
                    "variation"),
            "d4_control_kl": f"{kl}. "
            + _says(ev["shrink_kl"], "The module depends less on the image without per-instance variation",
                    "The module does not depend less on the image, by the smallest drop that matters, without "
                    "per-instance variation")}


def training_table(trained: dict) -> pd.DataFrame:
    """What training did, one row per model and seed (:func:`~invlib.papers.d.contrastive.train`'s results): the
    contrastive loss at the first and last epoch, the share of images whose second view is the nearest to their
    first (last epoch), the learned module's entropy and λ at its last band check, and the seconds.

    Example
    -------
    >>> tr = {(INSTA, 0): dict(history=[dict(train_acc=0.4)], nt_xent=[4.0, 3.5], band=[(4, 2.5, 0.24)],
    ...                         seconds=2.0)}
    >>> training_table(tr).iloc[0].tolist()
    [4.0, 3.5, 0.4, 2.5, 0.24, 2.0]
    """
    rows = [dict(method=m, seed=s, **{"NT-Xent, first epoch": r["nt_xent"][0], "NT-Xent, last epoch": r["nt_xent"][-1],
                                      "views matched": r["history"][-1]["train_acc"],
                                      "entropy (nats)": r["band"][-1][1] if r.get("band") else None,
                                      "λ": r["band"][-1][2] if r.get("band") else None, "seconds": r["seconds"]})
            for (m, s), r in trained.items()]
    return pd.DataFrame(rows).set_index(["method", "seed"])


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
           untrained: pd.DataFrame | None, ev: dict) -> dict:
    """The facts the prose quotes: the run's numbers (the ``*_value`` and ``*_points`` keys: numbers alone), and its
    sentences about results made from the verdicts."""
    acc = {m: probes.loc[probes["method"] == m, "acc_tta"].mean() * 100 for m in METHODS}
    whole = {m: probes.loc[probes["method"] == m, "acc"].mean() * 100 for m in METHODS}
    nt = {m: (np.mean([r["nt_xent"][0] for (mm, _), r in trained.items() if mm == m]),
              np.mean([r["nt_xent"][-1] for (mm, _), r in trained.items() if mm == m])) for m in METHODS}
    rs = list(trained.values())
    lo, hi = S.band
    seeds = len({s for _, s in trained})
    probed = len(set(probes["seed"])) if len(probes) else 0
    ripple, kl0 = (np.mean([v.get(k, math.nan) for v in initial.values()]) if initial else math.nan
                   for k in ("side_std", "kl_to_mean"))
    value = {
        "d4_gain_points": f"{(acc[INSTA] - acc[RANDOM]):+.2f} points",
        "d4_kl_value": f"{crop['kl']:.2f} nats (the untrained module's: {kl0:.4f}; the input-free model's is 0 by "
                       "construction)",
        "d4_rho_value": f"ρ = {crop['rho']:.2f}; the expected side is {crop['size_gap']:+.3f} image sides larger on "
                        f"the largest third of the objects than on the smallest, and varies with a standard deviation "
                        f"of {crop['spread']:.3f} (the untrained module's: {ripple:.4f})",
        "d4_focus_value": f"{crop['focus']:.2f} for InstaAug against {crop['focus_free']:.2f} without input and "
                          f"{crop['focus_initial']:.2f} for the untrained module",
        "d4_band_value": f"{band['share']:.0%} of the checks in the last {LAST:.0%} of training lie in [{lo:g}, "
                         f"{hi:g}], their mean is {band['mean']:.2f}",
        "d4_seed_count": f"{seeds} seed{'s' * (seeds != 1)}" + (
            f" (Table 5's random-crop encoder and probes at {probed} of them)" if probed < seeds else ""),
        "d4_table5_seeds": f"{probed} seed{'s' * (probed != 1)}" + (f" of the {seeds}" if probed < seeds else "")}
    return value | {
        "d4_scale": f"{S.n_train:,} training scenes of {S.size} px, {S.epochs} epochs at batch {S.batch_size} "
                    f"({int(rs[0]['steps'])} steps per model), an encoder of widths {'-'.join(map(str, S.widths))}, "
                    f"{seeds} seed{'s' * (seeds != 1)}",
        "d4_module": f"Adam at {S.aug_lr:g} for both learned modules, its rate warmed up over {S.warmup_epochs:g} "
                     f"epochs, the band [{lo:g}, {hi:g}] checked every {S.check_every or 'epoch'} steps",
        "d4_free": "; ".join(f"seed {s}: {r['band'][0][1]:.2f} → {r['band'][-1][1]:.2f} nats"
                             for (mm, s), r in trained.items() if mm == FREE and r.get("band")) or "not trained",
        "d4_seconds": f"{float(np.mean([r['seconds'] for r in rs])):.0f} s",
        "d4_loss": "; ".join(f"{m} {a:.2f} → {b:.2f}" for m, (a, b) in nt.items()),
        "d4_chance": f"{math.log(2 * S.batch_size - 1):.2f}",
        "d4_acc": ", ".join(f"{m} {acc[m]:.1f} %" for m in METHODS),
        "d4_whole": ", ".join(f"{m} {whole[m]:.1f} %" for m in METHODS),
        "d4_untrained": "not measured" if untrained is None or not len(untrained) else
        f"{untrained['acc'].mean() * 100:.1f} % (whole image), {untrained['acc_tta'].mean() * 100:.1f} % (TTA)",
        "d4_seeds": f"{seeds} seed{'s' * (seeds != 1)}" + (f": the claims about training need {N_MIN}, so they are "
                                                          "inconclusive at this budget" if seeds < N_MIN else ""),
        "d4_rank": _says(ev["rank"], "The order of Table 5 holds beyond the spread of the seeds",
                         "The order of Table 5 does not hold by the smallest gains that matter, beyond the spread of "
                         "the seeds"),
        "d4_gain": f"{value['d4_gain_points']} (paper +3.42). " + _says(
            ev["gain"], "InstaAug is ahead of random crops",
            "InstaAug is not ahead of random crops by the smallest gain that matters"),
        "d4_kl": f"{value['d4_kl_value']}. " + _says(ev["kl"], "The learned distribution depends on the image",
                                                     "The learned distribution depends on the image less than the "
                                                     "boundary"),
        "d4_rho": f"{value['d4_rho_value']}. " + _says(
            ev["size"], "The crop size follows the object's size", "The crop size does not follow the object's size"),
        "d4_focus": f"{value['d4_focus_value']}. " + _says(
            ev["focus"], "The crops sit on the object more than both references",
            "The crops sit on the object no more than the references, by the smallest share that matters"),
        "d4_band": f"{value['d4_band_value']}. " + _says(
            ev["band"], "The dynamic weight holds the entropy in its band",
            "The dynamic weight does not hold the entropy in its band"),
        "d4_hmax": f"{entropy_bound(S):.2f}",
    }


def _empty_crop_claims(run, initial: dict) -> dict:
    """The crop claims when no InstaAug model was trained (a method not run): not measurable."""
    none = results.not_measurable("no InstaAug model was trained at this profile", unit="seed")
    for cid in ("fig8/input_dependent", "fig8/size_correlation", "fig8/crops_on_object"):
        run.claim(_declared(cid), ours=None, effects=none)
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
                ax.set_ylabel(m.replace(" (", "\n("), fontsize=8)
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
    ax.legend(fontsize=8, loc="lower right")
    return ax
