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
from .criteria import ENTROPY_IN_BAND_SHARE, INPUT_DEPENDENT_KL, ON_OBJECT, SIZE_FOLLOWS_OBJECT_RHO
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


# The smallest effects that matter, (boundary, reason), declared before the run; paper D's shared ones in criteria.
GAIN = (0.0, "Table 1 orders the methods by mean accuracy: any paired gain over seeds is the paper's order")
NEAR_WHOLE_SIDE = (0.85, "0.85 of the image's side: about half-way between the tuned random crop's mean side (0.72 "
                         "for areas uniform in [0.1, 1]) and the whole image (1)")
NEARER_NONE = (0.0, "the midpoint between no augmentation and the tuned random crop: above 0 the model's accuracy lies "
                    "nearer none")
COLLAPSE_ENTROPY = (1.0, "1 nat, as much as e = 2.7 equally likely crops out of a few hundred: almost all the mass on "
                         "a few crops, near no augmentation (the band's lower edge, 3 nats, is 20 crops)")
COST_RATIO = (2.0, "twice the random crop's seconds: the paper's 0.25 s against 0.15 s per iteration (1.7x) is 'very "
                   "little overhead'; at 2x InstaAug would double the training time")
N_MIN = 3  # every claim here is about what training produces (or, for the cost, about runs): three before a verdict


def _seeds(acc: pd.DataFrame, method: str, col: str = "acc_tta") -> list[float]:
    """The accuracies of ``method`` over seeds; for the random crop, of the best range (the tuned one)."""
    return by_seed(acc, method, col).tolist()


def by_seed(acc: pd.DataFrame, method: str, col: str = "acc_tta") -> pd.Series:
    """``col`` of ``method``'s main models (variant ``method``), indexed by seed; for the random crop, of the range
    with the best mean accuracy over seeds (the paper's tuned one).

    Example
    -------
    >>> acc = pd.DataFrame(dict(method=["random_crop"] * 2, variant=["random_crop 0.1-1", "random_crop 0.35-1"],
    ...                         seed=[0, 0], acc_tta=[0.6, 0.7]))
    >>> by_seed(acc, "random_crop").to_dict()
    {0: 0.7}
    """
    rows = acc[acc.method == method]
    if method == "random_crop" and len(rows):
        best = rows.groupby("variant")["acc_tta"].mean().idxmax()
        rows = rows[rows.variant == best]
    elif method != "random_crop":  # the main model, not a band or fixed-lambda variant
        rows = rows[rows.variant == method]
    return rows.set_index("seed")[col].sort_index()


def gains(a: pd.Series, b: pd.Series, scale: float = 100.0) -> np.ndarray:
    """Per seed both series have, ``scale * (a - b)`` (points for accuracies): the effect of a paired design, the
    same seed training both arms (:func:`invlib.results.paired`).

    Example
    -------
    >>> gains(pd.Series([0.6, 0.7], index=[0, 1]), pd.Series([0.5], index=[0])).round(6).tolist()
    [10.0]
    """
    seeds = a.index.intersection(b.index)
    return results.paired(a.loc[seeds].to_numpy(float), b.loc[seeds].to_numpy(float)) * scale


def ranked(main: pd.DataFrame, above: str, below: str) -> results.Evidence:
    """``above`` beats ``below`` in test accuracy: the paired gain in points per seed, 95 % t-interval over seeds
    above :data:`GAIN`, at least :data:`N_MIN` seeds.

    Example
    -------
    >>> acc = pd.DataFrame(dict(method=["a"] * 3 + ["b"] * 3, variant=["a"] * 3 + ["b"] * 3, seed=[0, 1, 2] * 2,
    ...                         acc_tta=[0.61, 0.62, 0.60, 0.55, 0.55, 0.54]))
    >>> ranked(acc, "a", "b").verdict, ranked(acc, "b", "a").verdict, ranked(acc[acc.seed == 0], "a", "b").verdict
    ('reproduced', 'not reproduced', 'inconclusive at this budget')
    """
    boundary, reason = GAIN
    return results.decide(gains(by_seed(main, above), by_seed(main, below)), boundary=boundary, reason=reason,
                          unit="seed", n_min=N_MIN)


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


def report(run, S: Cropping, acc: pd.DataFrame, crops: pd.DataFrame,
           family: list[Trained]) -> tuple[pd.DataFrame, dict]:
    """Log D2's metrics, record its claims, return ``(Table 1 beside the paper's, facts for the prose)``.
    ``acc`` is :func:`~invlib.papers.d.cropping.accuracy_table`'s, ``crops`` :func:`~invlib.papers.d.cropping.
    crop_seeds`' (one row per learned model and seed): every claim is about what training produces and is decided
    over seeds (at least :data:`N_MIN`); the facts hold the numbers and the sentences of :func:`prose`.

    Example
    -------
    >>> from invlib.papers.d.cropping import settings
    >>> acc = pd.DataFrame(dict(method=["none", "random_crop", "instaaug", "no_input"], seed=[0] * 4,
    ...                         variant=["none", "random_crop 0.1-1", "instaaug", "no_input"],
    ...                         acc=[0.5, 0.55, 0.5, 0.5], acc_tta=[0.5, 0.58, 0.6, 0.57],
    ...                         seconds_per_epoch=[1.0, 1.0, 1.5, 1.5]))
    >>> run = results.Run("demo", "smoke")
    >>> _, facts = report(run, settings("smoke"), acc, pd.DataFrame(), [])
    >>> run.claims["table1/instaaug_random_none"]["verdict"]  # one seed
    'inconclusive at this budget'
    """
    main = _main(acc, S)
    table = table1(S, acc)
    for _, r in table.iterrows():
        run.log(f"acc_tta/{r['method']}", r["this run (%)"], paper=r["paper (%)"])
    seeds = int(main.seed.nunique()) if len(main) else 0
    nan = float("nan")  # every number the prose quotes exists, NaN where this profile did not measure it
    facts = dict(seeds=seeds, tta=S.tta, n_train=S.n_train, epochs=S.epochs, kl=nan, side_rho=nan, in_box=nan,
                 in_box_free=nan, side=nan, entropy=nan, in_band=nan, fixed_entropy=nan, fixed_lam=nan)
    crops = crops if len(crops) else pd.DataFrame(columns=["variant", "seed"])
    evidence: dict[str, results.Evidence] = {}
    _table1_claims(run, main, facts, evidence)
    _crop_claims(run, S, crops, facts, evidence)
    _identity_claim(run, main, crops, family, facts, evidence)
    _band_claims(run, S, family, acc, facts, evidence)
    _cost_claim(run, main, facts, evidence)
    measured = {k: v for k, v in facts.items() if not (isinstance(v, float) and math.isnan(v))}
    return table, {**measured, **prose(facts, evidence)}


def prose(facts: dict, evidence: dict[str, results.Evidence] | None = None) -> dict:
    """What the prose says: the facts a profile may not measure as Markdown text (``"n/a"`` where NaN), and one
    sentence per claim the prose discusses, chosen by its verdict (:func:`invlib.results.phrase`; a claim not
    recorded at this profile says so), for ``{glue:md}``.

    Example
    -------
    >>> out = prose(dict(kl=0.3183, side_rho=float("nan"), in_box=57.2, in_box_free=55.9, in_band=27.0,
    ...                  fixed_lam=0.02, fixed_entropy=0.0))
    >>> out["side_rho_text"], out["size_text"]
    ('n/a', 'Not measured at this profile.')
    """
    def fmt(key, spec):
        return results.text(facts.get(key), spec)

    ev = evidence or {}

    def say(cid, **texts):
        return results.phrase(ev[cid], **texts) if cid in ev else "Not measured at this profile."

    n = facts.get("seeds", 0)
    seeds = f"{n} seed{'s' if n != 1 else ''}"
    fixed = (f"with a small fixed λ of {fmt('fixed_lam', 'g')} the entropy ends at {fmt('fixed_entropy', '.2f')} "
             "nats" if fmt("fixed_lam", "g") != "n/a" else "no fixed λ was run at this profile")
    undecided = f"{seeds.capitalize()} cannot decide"
    return dict(
        kl_text=fmt("kl", ".3f"), side_rho_text=fmt("side_rho", ".2f"), in_box_text=fmt("in_box", ".1f"),
        in_box_free_text=fmt("in_box_free", ".1f"), in_band_text=fmt("in_band", ".0f"), fixed_text=fixed,
        order_text=say("table1/instaaug_random_none",
                       reproduced=f"Over {seeds}, InstaAug beats the tuned random crop, which beats no augmentation, "
                       "as in the paper.", not_reproduced=f"Over {seeds}, the paper's order is reversed on both steps.",
                       partly=f"Over {seeds}, one step of the paper's order holds and the other is reversed.",
                       inconclusive=f"{undecided} the paper's order of InstaAug, the random crop and no "
                       "augmentation: a ranking needs at least three seeds of each."),
        input_text=say("fig6/input_dependent", reproduced=f"Over {seeds}, the crop distribution depends on the input.",
                       not_reproduced=f"Over {seeds}, the crop distribution barely depends on the input.",
                       inconclusive=f"{undecided} whether training makes the crops depend on the input (one "
                       "trained module per seed)."),
        box_text=say("fig6/concentrates_on_object", reproduced=f"Over {seeds}, InstaAug's crops are centred on the "
                     "object more than the input-free module's.", not_reproduced=f"Over {seeds}, InstaAug's crops "
                     "are not centred on the object more than the input-free module's.",
                     inconclusive=f"{undecided} whether they are centred on the object more than the input-free "
                     "module's."),
        size_text=say("fig6/size_follows_object", reproduced=f"Over {seeds}, the crop size follows the object's.",
                      not_reproduced=f"Over {seeds}, the crop size does not follow the object's.",
                      inconclusive=f"{undecided} whether training makes the crop size follow the object's."),
        band_text=say("figE1/entropy_in_band", reproduced=f"Over {seeds}, the dynamic λ holds the entropy in its band.",
                      not_reproduced=f"Over {seeds}, the dynamic λ does not hold the entropy in its band.",
                      inconclusive=f"{undecided} whether the dynamic λ holds the entropy in its band.",
                      not_measurable="No band check fell in training at this profile."),
        collapse_text=say("figE1/small_fixed_lambda_collapses", reproduced="The small fixed λ lets the distribution "
                          "collapse, as in the paper.", not_reproduced="The small fixed λ does not let the "
                          "distribution collapse.", inconclusive="One run with a fixed λ cannot decide whether "
                          "training collapses the distribution: a verdict needs three seeds."))


def _table1_claims(run, main: pd.DataFrame, facts: dict, evidence: dict) -> None:
    has = set(main.method)
    acc_of = {m: 100 * float(np.mean(_seeds(main, m))) for m in has}
    facts.update({f"acc_{m}": v for m, v in acc_of.items()})
    seeds = facts["seeds"]
    rule = (f"paired gain in points per seed, 95 % t-interval over seeds above {GAIN[0]:g}; >= {N_MIN} seeds")
    if {"instaaug", "random_crop", "none"} <= has:
        ev = results.decide_parts({"InstaAug > random crop": ranked(main, "instaaug", "random_crop"),
                                   "random crop > none": ranked(main, "random_crop", "none")},
                                  "both steps of the order")
        evidence["table1/instaaug_random_none"] = ev
        run.claim("table1/instaaug_random_none", "InstaAug beats the tuned random crop, which beats no augmentation.",
                  paper="66.02 > 64.49 > 55.06 %", ours=f"{acc_of['instaaug']:.1f} vs {acc_of['random_crop']:.1f} "
                  f"vs {acc_of['none']:.1f} % ({seeds} seed(s))", criterion=f"two parts, each a {rule}", evidence=ev)
        facts.update(gain_random=acc_of["instaaug"] - acc_of["random_crop"],
                     gain_none=acc_of["random_crop"] - acc_of["none"])
    if {"instaaug", "no_input"} <= has:
        d = acc_of["instaaug"] - acc_of["no_input"]
        run.claim("table1/instaaug_beats_no_input", "InstaAug beats its input-free version (one crop distribution "
                  "for all inputs).", paper="66.02 vs 63.20 % (+2.8)",
                  ours=f"{acc_of['instaaug']:.1f} vs {acc_of['no_input']:.1f} % ({d:+.1f}, {seeds} seed(s))",
                  criterion=f"InstaAug minus the input-free version: {rule}",
                  evidence=ranked(main, "instaaug", "no_input"))
    if {"instaaug", "class_specific"} <= has:
        run.claim("table1/class_specific_below", "A class-specific module does worse than InstaAug.",
                  paper="60.55 vs 66.02 %", ours=f"{acc_of['class_specific']:.1f} vs {acc_of['instaaug']:.1f} % "
                  f"({seeds} seed(s))", criterion=f"InstaAug minus class-specific: {rule}",
                  evidence=ranked(main, "instaaug", "class_specific"))


def _measure(crops: pd.DataFrame, variant: str, col: str) -> pd.Series:
    """``col`` of ``variant``'s crop measures, indexed by seed."""
    return crops[crops.variant == variant].set_index("seed")[col].sort_index().astype(float)


def _crop_claims(run, S: Cropping, crops: pd.DataFrame, facts: dict, evidence: dict) -> None:
    """Fig. 6's claims. Each is about what training produces, so a replicate is a seed's trained module and its
    number is that module's mean (or rank correlation) over the test scenes."""
    if "instaaug" not in set(crops.variant):
        return
    kl, rho, box = (_measure(crops, "instaaug", c) for c in ("kl_to_mean", "side_rho", "centre_in_box"))
    first = crops[crops.variant == "instaaug"].sort_values("seed").iloc[0]
    facts.update(kl=float(first.kl_to_mean), side_rho=float(first.side_rho), in_box=100 * float(first.centre_in_box),
                 side=float(first.side), entropy=float(first.entropy))
    run.log("crops/instaaug/kl_to_mean", float(first.kl_to_mean))
    per = "a seed's trained module, its mean over the test scenes"
    boundary, reason = INPUT_DEPENDENT_KL
    evidence["fig6/input_dependent"] = ev = results.decide(kl.to_numpy(), boundary=boundary, reason=reason,
                                                           unit="seed", n_min=N_MIN)
    run.claim("fig6/input_dependent", "InstaAug's crop distribution depends on the input.",
              paper="Fig. 6: crops follow each image's object",
              ours="mean KL to the average: " + _per_seed(kl, ".3f", " nats"),
              criterion=f"KL(p(tau|x) || mean_x p(tau|x)) of {per}, 95 % t-interval over seeds above {boundary:g} "
              f"nats; >= {N_MIN} seeds", evidence=ev)
    if "no_input" in set(crops.variant):
        free = _measure(crops, "no_input", "centre_in_box")
        facts.update(in_box_free=100 * float(free.iloc[0]))
        boundary, reason = 100 * ON_OBJECT[0], ON_OBJECT[1]  # in points
        evidence["fig6/concentrates_on_object"] = ev = results.decide(
            gains(box, free), boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)
        run.claim("fig6/concentrates_on_object", "InstaAug's crops concentrate on the object, more than the "
                  "input-free version's.", paper="Fig. 6 (b) vs (e)",
                  ours="crop mass centred in the object's box, InstaAug vs input-free: "
                  + "; ".join(f"seed {s}: {100 * box[s]:.1f} vs {100 * free[s]:.1f} %"
                              for s in box.index.intersection(free.index)),
                  criterion=f"share of crop mass centred in the box, InstaAug minus the input-free module of the "
                  f"same seed, in points ({per}), 95 % t-interval over seeds above {boundary:g}; >= {N_MIN} seeds",
                  evidence=ev)
    boundary, reason = SIZE_FOLLOWS_OBJECT_RHO
    evidence["fig6/size_follows_object"] = ev = results.decide(rho.to_numpy(), boundary=boundary, reason=reason,
                                                               unit="seed", n_min=N_MIN)
    run.claim("fig6/size_follows_object", "InstaAug's expected crop size grows with the object's size.",
              paper="Fig. 6 (c, f), Fig. 8: patch sizes correlate with object sizes",
              ours=f"Spearman rho over {S.n_test} test scenes: " + _per_seed(rho, "+.2f"),
              criterion=f"a seed's trained module's Spearman rho of expected crop side with object side over the "
              f"test scenes, 95 % t-interval over seeds above {boundary:g}; >= {N_MIN} seeds", evidence=ev)


def _per_seed(values: pd.Series, spec: str, unit: str = "") -> str:
    return "; ".join(f"seed {s}: {format(v, spec)}{unit}" for s, v in values.items())


def _identity_claim(run, main: pd.DataFrame, crops: pd.DataFrame, family: list[Trained], facts: dict,
                    evidence: dict) -> None:
    has = set(main.method)
    stuck = [m for m in ("no_lrp", "augerino") if m in has]
    if not stuck or not {"none", "random_crop"} <= has:
        return
    none, rc = by_seed(main, "none"), by_seed(main, "random_crop")
    parts, said = {}, []
    for m in stuck:
        acc, side = by_seed(main, m), _sides(family, crops, m)
        seeds = acc.index.intersection(none.index).intersection(rc.index)
        nearer = [100 * (abs(rc[s] - acc[s]) - abs(acc[s] - none[s])) for s in seeds]
        boundary, reason = NEAR_WHOLE_SIDE
        parts[f"{LABELS[m]}: crops near the whole image"] = results.decide(
            side.to_numpy(float), boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)
        boundary, reason = NEARER_NONE
        parts[f"{LABELS[m]}: accuracy nearer none"] = results.decide(nearer, boundary=boundary, reason=reason,
                                                                     unit="seed", n_min=N_MIN)
        said.append(f"{LABELS[m]}: side " + _per_seed(side, ".2f") + f", {100 * acc.mean():.1f} %")
    evidence["table1/uniform_stays_near_identity"] = ev = results.decide_parts(parts, "every part must hold")
    run.claim("table1/uniform_stays_near_identity", "With a uniform parameterisation (InstaAug without LRP, "
              "Augerino) the crops stay near the whole image and accuracy near no augmentation.",
              paper="55.39 and 55.02 vs 55.06 % (none)",
              ours="; ".join(said) + f"; none {100 * none.mean():.1f} %",
              criterion=f"per model, two parts over seeds (95 % t-intervals, >= {N_MIN} seeds): mean crop side above "
              f"{NEAR_WHOLE_SIDE[0]:g}; |random crop - model| - |model - none| in points above {NEARER_NONE[0]:g} "
              "(accuracy nearer none than the tuned random crop)", evidence=ev)


def _sides(family: list[Trained], crops: pd.DataFrame, method: str) -> pd.Series:
    """Mean crop side a model applies (1 = the whole image), per seed: from the crop measures for InstaAug's
    modules; for Augerino from its learned zoom width (its zoom-in coefficient is ``U[-theta/2, 0]`` and the crop's
    side is ``exp`` of it, so the mean side is ``E[exp(-u)]``, ``u ~ U[0, theta/2]``)."""
    if method in set(crops.variant):
        return _measure(crops, method, "side")
    sides = {}
    for t in family:
        if t.method == method == "augerino":
            half = t.model.state()["layer0"]["scale"]["magnitude"] / 2
            sides[t.seed] = float((1 - math.exp(-half)) / half) if half > 0 else 1.0
    return pd.Series(sides, dtype=float).sort_index()


def _band_claims(run, S: Cropping, family: list[Trained], acc: pd.DataFrame, facts: dict, evidence: dict) -> None:
    main = [t for t in family if t.variant == "instaaug"]
    if main:
        shares = pd.Series({t.seed: in_band_share(t, S.band) for t in main}).sort_index()
        facts.update(in_band=100 * float(shares.iloc[0]))
        boundary, reason = ENTROPY_IN_BAND_SHARE
        ev = (results.not_measurable("no band check fell in training at this profile") if shares.isna().all()
              else results.decide(shares.dropna().to_numpy(), boundary=boundary, reason=reason, unit="seed",
                                  n_min=N_MIN))
        evidence["figE1/entropy_in_band"] = ev
        run.claim("figE1/entropy_in_band", "The dynamic lambda holds the entropy inside its band.",
                  paper=f"band {S.band[0]:g}-{S.band[1]:g}",
                  ours="checks in the band in the last 30 %: " + _per_seed(100 * shares, ".0f", " %"),
                  criterion=f"a seed's share of the band checks in the last 30 % of training inside the band, 95 % "
                  f"t-interval over seeds above {boundary:g}; >= {N_MIN} seeds", evidence=ev)
    fixed = [t for t in family if t.variant.startswith("fixed")]
    if fixed:
        lam = min(float(t.variant.split()[-1]) for t in fixed)
        runs = [t for t in fixed if float(t.variant.split()[-1]) == lam]
        ends = pd.Series({t.seed: final_entropy(t) for t in runs}).sort_index()
        facts.update(fixed_entropy=float(ends.iloc[0]), fixed_lam=lam)
        boundary, reason = COLLAPSE_ENTROPY
        evidence["figE1/small_fixed_lambda_collapses"] = ev = results.decide(
            ends.to_numpy(), direction="less", boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)
        run.claim("figE1/small_fixed_lambda_collapses", "A small fixed lambda lets the crop distribution collapse "
                  "to almost no augmentation.", paper="lambda <= 0.1: entropy nearly 0 throughout",
                  ours=f"fixed lambda {lam:g}, last epoch's entropy: " + _per_seed(ends, ".2f", " nats")
                  + f" (band {S.band[0]:g}-{S.band[1]:g})",
                  criterion=f"a seed's mean entropy in the last epoch, 95 % t-interval over seeds below {boundary:g} "
                  f"nat; >= {N_MIN} seeds", evidence=ev)
    rc = by_seed(_main(acc, S), "random_crop")
    bands = acc[acc.variant.str.startswith("band")]
    inside = bands[bands.variant.map(_inside)] if len(bands) else bands
    if len(inside) and len(rc):
        boundary, reason = GAIN
        parts = {v: results.decide(gains(rows.set_index("seed").acc_tta, rc), boundary=boundary, reason=reason,
                                   unit="seed", n_min=N_MIN) for v, rows in inside.groupby("variant", sort=True)}
        run.claim("tableE1/bands_beat_random_crop", "Every band inside [2, 4] beats the tuned random crop.",
                  paper="65.04-66.03 vs 64.49 %", ours=", ".join(f"{v}: {100 * a:.1f} %" for v, a in
                                                                zip(inside.variant, inside.acc_tta))
                  + f" vs {100 * rc.mean():.1f} %", criterion="one part per band tried: its paired gain over the "
                  f"tuned random crop in points, 95 % t-interval over seeds above {boundary:g}, >= {N_MIN} seeds; "
                  "every part must hold (an intersection-union test: no multiplicity correction needed)",
                  evidence=results.decide_parts(parts, "every band must beat the random crop"))


def _inside(variant: str, lo: float = 2.0, hi: float = 4.0) -> bool:
    """Whether the band of a ``"band a-b"`` variant lies inside ``[lo, hi]``.

    Example
    -------
    >>> _inside("band 2-2.5"), _inside("band 4-4.5"), _inside("band 1-1.5")
    (True, False, False)
    """
    a, b = (float(v) for v in variant.split()[1].split("-"))
    return lo <= a and b <= hi


def _cost_claim(run, main: pd.DataFrame, facts: dict, evidence: dict) -> None:
    ia, rc = by_seed(main, "instaaug", "seconds_per_epoch"), by_seed(main, "random_crop", "seconds_per_epoch")
    if not len(ia) or not len(rc) or ia.min() <= 0 or rc.min() <= 0:
        return
    seeds = ia.index.intersection(rc.index)
    ratios = ia.loc[seeds] / rc.loc[seeds]
    ratio = float(ia.mean() / rc.mean())
    facts.update(cost_ratio=ratio)
    boundary, reason = COST_RATIO
    evidence["appD3/cost"] = ev = results.decide(ratios.to_numpy(float), direction="less", boundary=boundary,
                                                 reason=reason, unit="run", n_min=N_MIN)
    run.claim("appD3/cost", "An InstaAug training step costs little more than a random-crop step.",
              paper="0.25 s vs 0.15 s per iteration (1.7x)",
              ours="seconds per epoch, InstaAug over the tuned random crop, on this machine: "
              + _per_seed(ratios, ".2f", "x"),
              criterion=f"a run's ratio of InstaAug's mean seconds per epoch to the tuned random crop's (a run: the "
              f"two trainings of one seed, timed on this machine, each from its own training or from the cache that "
              f"recorded it), 95 % t-interval over runs below {boundary:g}; >= {N_MIN} runs, since the wall clock of "
              "a shared machine varies from run to run", evidence=ev)


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
