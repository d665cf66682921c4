"""What chapter D2 shows: Table 1 beside the paper's, the claims of section 5.2 and App. E.2 with computed verdicts,
Fig. 6's sampled crops, crop-centre densities and crop sizes, the entropy band over training (Fig. E.1), and the
numbers its prose quotes.

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the tables of
:mod:`invlib.papers.d.cropping` (:func:`~invlib.papers.d.cropping.accuracy_table`,
:func:`~invlib.papers.d.cropping.crop_table`) and the trained family; it logs the metrics, computes each claim's
effects and records the claim from its declaration in :mod:`invlib.papers.d.protocol` (D2: the smallest effects and
their reasons), and returns the "paper vs this run" table and the facts for the prose. Every claim is about what
training produces (the cost: about runs), so a replicate is a seed; a claim this profile cannot test is recorded as
not measurable.

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
from ...pages import count
from .criteria import control_not_run, gain_shrink, record_replicates
from .cropping import Cropping, Trained, entropy_trace, final_entropy, in_band_share
from .protocol import PROTOCOL

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


CHAPTER = "d2_instance_crops"
# How the page names the crop measures and the control's columns (the JSON keeps the ids).
COLUMNS = {"side": "expected crop side", "centre_in_box": "mass centred in the box", "covers_object":
           "crops holding the object's centre", "entropy": "entropy (nats)", "kl_to_mean": "KL to the mean (nats)",
           "side_rho": "Spearman ρ, crop side vs object side", "spread": "spread of 64 crops",
           "gain_0": "gain at variation 0 (points)", "gain_1": "gain at variation 1 (points)",
           "drop": "gain lost without variation (points)", "variance": "gradient variance",
           "mean_sq_norm": "mean gradient, squared norm", "draws": "draws"}


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the page's names for D2's models (index) and measures (columns).

    Example
    -------
    >>> readable(pd.DataFrame(dict(side=[0.9]), index=["no_input"])).to_dict("index")
    {'InstaAug without input': {'expected crop side': 0.9}}
    """
    return frame.rename(index=LABELS, columns=COLUMNS)


def label(variant: str) -> str:
    """A model's name on the page, from its label (:func:`invlib.papers.d.cropping.labels`): ``"instaaug"`` ->
    ``"InstaAug"``, ``"band 2-2.5"`` -> ``"InstaAug, band [2, 2.5]"``, ``"fixed lambda 0.02"`` -> ``"InstaAug,
    fixed λ 0.02"``, ``"random_crop 0.35-1"`` -> ``"Random crop, area 0.35-1"``.

    Example
    -------
    >>> label("band 2-2.5"), label("fixed lambda 0.02"), label("no_input"), label("random_crop 0.35-1")
    ('InstaAug, band [2, 2.5]', 'InstaAug, fixed λ 0.02', 'InstaAug without input', 'Random crop, area 0.35-1')
    """
    if variant.startswith("band "):
        return "InstaAug, band [" + ", ".join(variant.split()[1].split("-")) + "]"
    if variant.startswith("fixed "):
        return f"InstaAug, fixed λ {variant.rsplit(' ', 1)[1]}"
    if variant.startswith("random_crop "):
        return f"Random crop, area {variant.split()[1]}"
    return LABELS.get(variant, variant)


def _record(run, cid: str, ours: str, effects, evidence: dict) -> None:
    """Record claim ``cid`` from its declaration and this run's ``effects``; keep its evidence for the prose."""
    run.claim(PROTOCOL.get(cid, CHAPTER), ours=ours, effects=effects)
    evidence[cid] = run.evidence[cid]


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


def gains_of(main: pd.DataFrame, above: str, below: str) -> np.ndarray:
    """``above``'s test accuracy minus ``below``'s, points, per seed both have (:func:`by_seed`): the effect of a
    Table 1 order.

    Example
    -------
    >>> acc = pd.DataFrame(dict(method=["a"] * 3 + ["b"] * 2, variant=["a"] * 3 + ["b"] * 2, seed=[0, 1, 2, 0, 1],
    ...                         acc_tta=[0.625, 0.75, 0.5, 0.5, 0.5]))
    >>> gains_of(acc, "a", "b").tolist()
    [12.5, 25.0]
    """
    return gains(by_seed(main, above), by_seed(main, below))


VARIANCE_PAIRS = (("instaaug", "random_crop"), ("random_crop", "none"), ("instaaug", "no_input"),
                  ("instaaug", "class_specific"))  # Table 1's paired effects whose variance split the JSON keeps


def item_gains(main: pd.DataFrame, above: str, below: str, col: str = "correct_tta") -> np.ndarray:
    """``(seeds, N)``: per seed both have (:func:`by_seed`), each test scene's outcome under ``above`` minus
    under ``below``, points (100, 0 or -100): a row's mean is :func:`gains_of`'s effect of that seed (with TTA).

    Example
    -------
    >>> acc = pd.DataFrame(dict(method=["a", "b"], variant=["a", "b"], seed=[0, 0], acc_tta=[0.5, 0.0],
    ...                         correct_tta=[np.array([True, False]), np.array([False, False])]))
    >>> item_gains(acc, "a", "b").tolist()
    [[100.0, 0.0]]
    """
    a, b = by_seed(main, above, col), by_seed(main, below, col)
    seeds = a.index.intersection(b.index)
    return np.stack([100 * (np.asarray(a[s], float) - np.asarray(b[s], float)) for s in seeds]) if len(seeds) else \
        np.zeros((0, 0))


def record_variance(run, main: pd.DataFrame) -> None:
    """Record, for each of :data:`VARIANCE_PAIRS` the run trained, how the spread over seeds of its paired effect
    splits into evaluation (the finite test set) and training (:meth:`invlib.results.Run.variance`): where
    evaluation dominates, a larger test set narrows the interval more cheaply than seeds."""
    if "correct_tta" not in main:
        return
    for above, below in VARIANCE_PAIRS:
        if {above, below} <= set(main.method):
            per_item = item_gains(main, above, below)
            if per_item.shape[0] >= 2:
                run.variance("seeds", f"{LABELS[above]} - {LABELS[below]}", per_item)


def variance_text(run) -> str:
    """One sentence for the page on where the seeds' spread of Table 1's paired effects comes from (what
    :func:`record_variance` recorded), or why there is none.

    Example
    -------
    >>> run = results.Run("demo", "smoke")
    >>> variance_text(run)
    'One seed has no spread between seeds to split.'
    >>> _ = run.variance("seeds", "A - B", [[100.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    >>> variance_text(run).split(": ")[1]
    'A - B 100 % (312.5 of 312.5 points²).'
    """
    splits = run.variance_splits.get("seeds") or {}
    if not splits:
        return "One seed has no spread between seeds to split."
    first = next(iter(splits.values()))
    said = [f"{name} {s['evaluation_share']:.0%} ({s['evaluation']:.1f} of {s['between']:.1f} points²)".replace(
        "%", " %") for name, s in splits.items()]
    rough = (f" The variance between {first['seeds']} seeds is itself a rough estimate, so the test scenes' part can "
             "read larger than the whole." if any(s["evaluation"] > s["between"] for s in splits.values()) else "")
    return (f"On {first['items']:,} test scenes a seed, the share of each paired effect's variance between seeds that "
            "the test scenes account for: " + "; ".join(said) + "." + rough)


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
                     "± s.e.": round(100 * se, 2) if not math.isnan(se) else "—",  # one seed: no s.e.
                     "without TTA (%)": round(100 * plain, 2), "paper (%)": PAPER_TABLE1[m],
                     "paper ± s.e.": PAPER_SE[m]})
    return pd.DataFrame(rows)


def report(run, S: Cropping, acc: pd.DataFrame, crops: pd.DataFrame, family: list[Trained],
           costs: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """Log D2's metrics, record its claims, return ``(Table 1 beside the paper's, facts for the prose)``.
    ``acc`` is :func:`~invlib.papers.d.cropping.accuracy_table`'s, ``crops`` :func:`~invlib.papers.d.cropping.
    crop_seeds`' (one row per learned model and seed): every claim is about what training produces and is decided
    over seeds; the facts hold the numbers and the sentences of :func:`prose`.

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
                 in_box_free=nan, side=nan, entropy=nan, in_band=nan, fixed_entropy=nan, fixed_lam=nan,
                 fixed_start=nan)
    crops = crops if len(crops) else pd.DataFrame(columns=["variant", "seed"])
    evidence: dict[str, results.Evidence] = {}
    _table1_claims(run, main, facts, evidence)
    _crop_claims(run, S, crops, facts, evidence)
    _diversity_claim(run, main, crops, facts, evidence)
    _band_claims(run, S, family, acc, facts, evidence)
    _cost_claim(run, costs, facts, evidence)
    record_variance(run, main)
    facts["variance_text"] = variance_text(run)
    record_replicates(run, "seeds", seed_seconds(acc), list(evidence), note="a seed: its pre-training and every "
                      "model of the family, bands and fixed lambdas included (their fit's epoch seconds), and the "
                      "models' test accuracy with and without test-time crops (the seconds kept with it)")
    measured = {k: v for k, v in facts.items() if not (isinstance(v, float) and math.isnan(v) or isinstance(v, bool))}
    return table, {**measured, **prose(facts, evidence)}


def seed_seconds(acc: pd.DataFrame) -> list[float]:
    """Per seed, in seed order, what it cost: the ``train_seconds`` of its models
    (:func:`~invlib.papers.d.cropping.accuracy_table`'s rows) and its pre-training's ``start_seconds`` once, at each
    ``variation`` the table has (the data control's), and the models' ``eval_seconds`` (their test accuracy with
    and without test-time crops) where the table has them; empty without the training's columns.

    Example
    -------
    >>> acc = pd.DataFrame(dict(seed=[0, 0, 1], train_seconds=[10.0, 20.0, 11.0], start_seconds=[0.0, 3.0, 3.5]))
    >>> seed_seconds(acc), seed_seconds(acc.assign(variation=[0.0, 1.0, 0.0]))
    ([33.0, 14.5], [33.0, 14.5])
    >>> seed_seconds(acc.assign(eval_seconds=[1.0, 2.0, 0.5]))
    [36.0, 15.0]
    """
    if not len(acc) or not {"train_seconds", "start_seconds"} <= set(acc):
        return []
    keys = ["seed", "variation"] if "variation" in acc else ["seed"]
    acc = acc.assign(eval_seconds=acc["eval_seconds"] if "eval_seconds" in acc else 0.0)
    per = acc.groupby(keys).agg(train=("train_seconds", "sum"), start=("start_seconds", "max"),
                                measure=("eval_seconds", "sum"))
    return [float(v) for v in (per.train + per.start + per.measure).groupby("seed").sum().sort_index()]


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
    seeds = count(n, "seed")
    fixed = (f"with a small fixed λ of {fmt('fixed_lam', 'g')} the entropy ends at {fmt('fixed_entropy', '.2f')} "
             f"nats, from {fmt('fixed_start', '.2f')} before training" if fmt("fixed_lam", "g") != "n/a"
             else "no fixed λ was run at this profile")
    undecided = f"{seeds.capitalize()} cannot decide"
    need = ": a verdict needs three seeds." if n < 3 else "."  # below the protocol's n_min, say why
    no_lrp = ("InstaAug without LRP was not trained at this profile." if "no_lrp_band" not in facts else
              f"InstaAug without LRP (differential entropy, its own band {facts['no_lrp_band']} nats) went from "
              f"{fmt('no_lrp_start', '.2f')} to {fmt('no_lrp_entropy', '.2f')} nats, with "
              f"{fmt('no_lrp_in_band', '.0f')} % of its last checks in its band; its λ "
              + ("came down at some check." if facts.get("no_lrp_lam_falls") else "only rose."))
    return dict(
        kl_text=fmt("kl", ".3f"), side_rho_text=fmt("side_rho", ".2f"), in_box_text=fmt("in_box", ".1f"),
        in_box_free_text=fmt("in_box_free", ".1f"), in_band_text=fmt("in_band", ".0f"), fixed_text=fixed,
        seeds_text=seeds, **{f"acc_{m}_text": fmt(f"acc_{m}", ".1f") for m in LABELS},
        no_lrp_text=no_lrp, spread_text=(f"{fmt('spread_instaaug', '.3f')} for InstaAug, "
                                         f"{fmt('spread_no_lrp', '.3f')} without LRP, {fmt('spread_augerino', '.3f')} "
                                         "for Augerino"),
        order_text=say("table1/instaaug_random_none",
                       reproduced=f"Over {seeds}, InstaAug beats the tuned random crop, which beats no augmentation, "
                       "as in the paper.", not_reproduced=f"Over {seeds}, the paper's order is reversed on both steps.",
                       partly=f"Over {seeds}, one step of the paper's order holds and the other is reversed.",
                       inconclusive=f"{undecided} the paper's order of InstaAug, the random crop and no "
                       f"augmentation{need}"),
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
        diversity_text=say("table1/uniform_low_diversity", reproduced=f"Over {seeds}, the uniform parameterisations "
                           "stay less diverse than InstaAug, with accuracy near no augmentation, as in the paper.",
                           not_reproduced=f"Over {seeds}, neither part of the paper's account holds: the uniform "
                           "parameterisations are not less diverse than InstaAug, nor nearer no augmentation.",
                           partly=f"Over {seeds}, only part of the paper's account holds for the uniform "
                           "parameterisations (the claims table says which).",
                           inconclusive=f"{undecided} whether the uniform parameterisations get stuck at low crop "
                           f"diversity{need}"),
        collapse_text=say("figE1/small_fixed_lambda_collapses", reproduced="The small fixed λ lets the distribution "
                          "collapse, as in the paper.", not_reproduced="The small fixed λ does not let the "
                          "distribution collapse.", inconclusive=f"{undecided} whether a small fixed λ lets training "
                          f"collapse the distribution{need}"))


def _table1_claims(run, main: pd.DataFrame, facts: dict, evidence: dict) -> None:
    has = set(main.method)
    acc_of = {m: 100 * float(np.mean(_seeds(main, m))) for m in has}
    facts.update({f"acc_{m}": v for m, v in acc_of.items()})
    seeds = facts["seeds"]
    absent = results.not_measurable("a method it compares was not trained at this profile")
    if {"instaaug", "random_crop", "none"} <= has:
        _record(run, "table1/instaaug_random_none", f"{acc_of['instaaug']:.1f} vs {acc_of['random_crop']:.1f} vs "
                f"{acc_of['none']:.1f} % ({count(seeds, 'seed')})",
                {"InstaAug > random crop": gains_of(main, "instaaug", "random_crop"),
                 "random crop > none": gains_of(main, "random_crop", "none")}, evidence)
        facts.update(gain_random=acc_of["instaaug"] - acc_of["random_crop"],
                     gain_none=acc_of["random_crop"] - acc_of["none"])
    else:
        _record(run, "table1/instaaug_random_none", "not trained", absent, evidence)
    for cid, other in (("table1/instaaug_beats_no_input", "no_input"), ("table1/class_specific_below",
                                                                       "class_specific")):
        if {"instaaug", other} <= has:
            ia, them = acc_of["instaaug"], acc_of[other]
            ours = (f"{ia:.1f} vs {them:.1f} % ({ia - them:+.1f}, {count(seeds, 'seed')})" if other == "no_input" else
                    f"{them:.1f} vs {ia:.1f} % ({count(seeds, 'seed')})")
            _record(run, cid, ours, gains_of(main, "instaaug", other), evidence)
        else:
            _record(run, cid, "not trained", absent, evidence)


def _measure(crops: pd.DataFrame, variant: str, col: str) -> pd.Series:
    """``col`` of ``variant``'s crop measures, indexed by seed."""
    return crops[crops.variant == variant].set_index("seed")[col].sort_index().astype(float)


def _crop_claims(run, S: Cropping, crops: pd.DataFrame, facts: dict, evidence: dict) -> None:
    """Fig. 6's claims. Each is about what training produces, so a replicate is a seed's trained module and its
    number is that module's mean (or rank correlation) over the test scenes."""
    cids = ("fig6/input_dependent", "fig6/concentrates_on_object", "fig6/size_follows_object")
    if "instaaug" not in set(crops.variant):
        for cid in cids:
            _record(run, cid, "not trained", results.not_measurable("no trained InstaAug module at this profile"),
                    evidence)
        return
    kl, rho, box = (_measure(crops, "instaaug", c) for c in ("kl_to_mean", "side_rho", "centre_in_box"))
    first = crops[crops.variant == "instaaug"].sort_values("seed").iloc[0]
    facts.update(kl=float(first.kl_to_mean), side_rho=float(first.side_rho), in_box=100 * float(first.centre_in_box),
                 side=float(first.side), entropy=float(first.entropy))
    run.log("crops/instaaug/kl_to_mean", float(first.kl_to_mean))
    _record(run, cids[0], "mean KL to the average: " + _per_seed(kl, ".3f", " nats"), kl.to_numpy(), evidence)
    if "no_input" in set(crops.variant):
        free = _measure(crops, "no_input", "centre_in_box")
        facts.update(in_box_free=100 * float(free.iloc[0]))
        _record(run, cids[1], "crop mass centred in the object's box, InstaAug vs input-free: " + "; ".join(
            f"seed {s}: {100 * box[s]:.1f} vs {100 * free[s]:.1f} %" for s in box.index.intersection(free.index)),
            gains(box, free), evidence)  # in points
    else:
        _record(run, cids[1], "not trained", results.not_measurable("the input-free module was not trained"),
                evidence)
    _record(run, cids[2], f"Spearman rho over {S.n_test} test scenes: " + _per_seed(rho, "+.2f"), rho.to_numpy(),
            evidence)


def _per_seed(values: pd.Series, spec: str, unit: str = "") -> str:
    return "; ".join(f"seed {s}: {format(v, spec)}{unit}" for s, v in values.items())


def _diversity_claim(run, main: pd.DataFrame, crops: pd.DataFrame, facts: dict, evidence: dict) -> None:
    """The uniform parameterisations (InstaAug without LRP, Augerino) are stuck at low cropping diversity, with
    accuracy near no augmentation: per model two parts over seeds, the spread of its sampled crops below
    InstaAug's of the same seed (:func:`invlib.papers.d.cropping.crop_spread`, both measured on the same test
    scenes the same way) and its accuracy nearer none than the tuned random crop."""
    has, cid = set(main.method), "table1/uniform_low_diversity"
    stuck = [m for m in ("no_lrp", "augerino") if m in has and m in set(crops.variant)]
    if not stuck or not {"none", "random_crop"} <= has or "instaaug" not in set(crops.variant):
        _record(run, cid, "not trained", results.not_measurable("a model it compares was not trained"), evidence)
        return
    none, rc, ia = by_seed(main, "none"), by_seed(main, "random_crop"), _measure(crops, "instaaug", "spread")
    parts, said = {}, []
    for m in ("no_lrp", "augerino"):
        diverse, nearer = f"{LABELS[m]}: crops less diverse than InstaAug's", f"{LABELS[m]}: accuracy nearer none"
        if m not in stuck:
            parts[diverse] = parts[nearer] = results.not_measurable(f"{LABELS[m]} was not trained")
            continue
        acc, spread = by_seed(main, m), _measure(crops, m, "spread")
        seeds = acc.index.intersection(none.index).intersection(rc.index)
        parts[diverse] = gains(ia, spread, scale=1.0)
        parts[nearer] = [100 * (abs(rc[s] - acc[s]) - abs(acc[s] - none[s])) for s in seeds]
        said.append(f"{LABELS[m]}: spread " + _per_seed(spread, ".3f") + f", {100 * acc.mean():.1f} %")
        facts[f"spread_{m}"] = float(spread.iloc[0])
    facts["spread_instaaug"] = float(ia.iloc[0])
    _record(run, cid, "; ".join(said) + "; InstaAug spread " + _per_seed(ia, ".3f")
            + f"; none {100 * none.mean():.1f} %", parts, evidence)


def control_gains(ctrl: pd.DataFrame) -> pd.DataFrame:
    """Per seed and variation, InstaAug's test accuracy minus its input-free version's (points, with test-time
    crops), and per seed the difference of differences ``gain(variation 1) - gain(variation 0)`` (column
    ``drop``): how much of the per-input gain the data's per-instance variation accounts for. ``ctrl`` is
    :func:`invlib.papers.d.cropping.control`'s.

    Example
    -------
    >>> ctrl = pd.DataFrame(dict(method=["instaaug", "no_input"] * 2, variant=["instaaug", "no_input"] * 2,
    ...                          seed=[0] * 4, acc_tta=[0.56, 0.51, 0.752, 0.75], variation=[1.0, 1.0, 0.0, 0.0]))
    >>> control_gains(ctrl).round(2).to_dict("records")
    [{'seed': 0, 'gain_0': 0.2, 'gain_1': 5.0, 'drop': 4.8}]
    """
    arms = {v: (by_seed(rows, "instaaug"), by_seed(rows, "no_input")) for v, rows in ctrl.groupby("variation")}
    none = (pd.Series(dtype=float),) * 2
    gain_1, gain_0, drop = gain_shrink(*arms.get(1.0, none), *arms.get(0.0, none))
    out = pd.DataFrame(dict(gain_0=gain_0, gain_1=gain_1, drop=drop), dtype=float).dropna()
    return out.rename_axis("seed").reset_index()


def report_control(run, ctrl: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Record ``control/gain_needs_variation`` from :func:`invlib.papers.d.cropping.control`'s table; return the
    table of :func:`control_gains` (one row per seed) and the facts for the prose (``control_text`` and the mean
    gains at variation 0 and 1)."""
    table = control_gains(ctrl) if len(ctrl) else pd.DataFrame(columns=["seed", "gain_0", "gain_1", "drop"])
    table = table.dropna(subset=["drop"]) if "drop" in table else table
    cid, evidence = "control/gain_needs_variation", {}
    if not len(table):
        _record(run, cid, "not run", results.not_measurable("the data control was not run at this profile"), evidence)
        return table, dict(control_text=control_not_run())
    _record(run, cid, "InstaAug minus input-free, variation 1 vs 0: " + "; ".join(
        f"seed {int(r.seed)}: {r.gain_1:+.1f} vs {r.gain_0:+.1f} points" for r in table.itertuples()),
        table["drop"].to_numpy(float), evidence)
    record_replicates(run, "control_seeds", seed_seconds(ctrl), [cid], note="a seed: InstaAug and its input-free "
                      "version with their pre-training at variation 0 and 1 (those at 1 are the family's models of "
                      "the seed when it is one of seeds)")
    n = len(table)
    text = results.phrase(
        evidence[cid], reproduced=f"Over {n} seeds, the per-input gain shrinks when the data has no per-instance "
        "variation.", not_reproduced=f"Over {n} seeds, the per-input gain does not shrink without per-instance "
        "variation.", inconclusive=f"{n} seed{'s' if n != 1 else ''} cannot decide whether the per-input gain "
        "shrinks without per-instance variation" + (": the claim is about training and needs at least three." if n < 3
                                                    else "."))
    gain_1, gain_0 = float(table.gain_1.mean()), float(table.gain_0.mean())
    text += (f" The gain is {gain_1:+.1f} points at variation 1 and {gain_0:+.1f} at variation 0"
             + (f" (means over the {n} seeds)." if n > 1 else "."))
    return table, dict(control_text=text, control_gain_0=gain_0, control_gain_1=gain_1)


def _band_claims(run, S: Cropping, family: list[Trained], acc: pd.DataFrame, facts: dict, evidence: dict) -> None:
    main = [t for t in family if t.variant == "instaaug"]
    cid, ours, effects = "figE1/entropy_in_band", "not trained", results.not_measurable("InstaAug was not trained")
    if main:
        shares = pd.Series({t.seed: in_band_share(t, S.band) for t in main}).sort_index()
        facts.update(in_band=100 * float(shares.iloc[0]))
        ours = "checks in the band in the last 30 %: " + _per_seed(100 * shares, ".0f", " %")
        effects = (results.not_measurable("no band check fell in training at this profile") if shares.isna().all()
                   else shares.dropna().to_numpy())
    _record(run, cid, ours, effects, evidence)
    free = [t for t in family if t.variant == "no_lrp" and t.seed == S.seed]
    if free:  # the uniform module's own band: can it reach it, and does lambda come down again?
        tr = entropy_trace(free[0])
        facts.update(no_lrp_in_band=100 * in_band_share(free[0], S.no_lrp_band),
                     no_lrp_entropy=final_entropy(free[0]), no_lrp_start=free[0].start_entropy,
                     no_lrp_band=f"[{S.no_lrp_band[0]:g}, {S.no_lrp_band[1]:g}]",
                     no_lrp_lam_falls=bool((tr.lam.diff() < 0).any()) if len(tr) else False)
    fixed = [t for t in family if t.variant.startswith("fixed")]
    cid, ours, effects = ("figE1/small_fixed_lambda_collapses", "not run",
                          results.not_measurable("no fixed lambda was run at this profile"))
    if fixed:
        lam = min(float(t.variant.split()[-1]) for t in fixed)
        runs = [t for t in fixed if float(t.variant.split()[-1]) == lam]
        ends = pd.Series({t.seed: final_entropy(t) for t in runs}).sort_index()
        starts = pd.Series({t.seed: t.start_entropy for t in runs}).sort_index()
        ratios = (ends / starts).dropna()
        facts.update(fixed_entropy=float(ends.iloc[0]), fixed_lam=lam, fixed_start=float(starts.iloc[0]))
        effects = ratios.to_numpy() if len(ratios) else results.not_measurable("no starting entropy recorded")
        ours = (f"fixed lambda {lam:g}, last epoch's entropy against the module's start: " + "; ".join(
            f"seed {s}: {ends[s]:.2f} of {starts[s]:.2f} nats" for s in ends.index)
            + f" (band {S.band[0]:g}-{S.band[1]:g})")
    _record(run, cid, ours, effects, evidence)
    rc = by_seed(_main(acc, S), "random_crop")
    bands = acc[acc.variant.str.startswith("band")]
    inside = bands[bands.variant.map(_inside)] if len(bands) else bands
    cid, ours, effects = ("tableE1/bands_beat_random_crop", "not run",
                          results.not_measurable("no band inside [2, 4] was run at this profile"))
    if len(inside) and len(rc):
        effects = {v: gains(rows.set_index("seed").acc_tta, rc) for v, rows in inside.groupby("variant", sort=True)}
        ours = (", ".join(f"{v}: {100 * a:.1f} %" for v, a in zip(inside.variant, inside.acc_tta))
                + f" vs {100 * rc.mean():.1f} %")
    _record(run, cid, ours, effects, evidence)


def _inside(variant: str, lo: float = 2.0, hi: float = 4.0) -> bool:
    """Whether the band of a ``"band a-b"`` variant lies inside ``[lo, hi]``.

    Example
    -------
    >>> _inside("band 2-2.5"), _inside("band 4-4.5"), _inside("band 1-1.5")
    (True, False, False)
    """
    a, b = (float(v) for v in variant.split()[1].split("-"))
    return lo <= a and b <= hi


def _cost_claim(run, costs: pd.DataFrame | None, facts: dict, evidence: dict) -> None:
    """App. D.3's cost claim: per seed, InstaAug's CPU seconds per training step over the tuned random crop's, the
    two stepped in turn on the same batches (:func:`~invlib.papers.d.cropping.step_costs`): what runs beside the
    chapter falls on both arms alike (an epoch's CPU time, read before, moved with the chapters beside it: two
    builds at two and three chapters at once read 1.84 [1.59, 2.08] and 1.73 [1.52, 1.94])."""
    if costs is None or not len(costs):
        _record(run, "appD3/cost", "not timed", results.not_measurable(
            "no timing of InstaAug's and the random crop's training steps at this profile"), evidence)
        return
    ratios = costs.set_index("seed")["ratio"]
    facts.update(cost_ratio=float(costs.instaaug.mean() / costs.random_crop.mean()))
    _record(run, "appD3/cost", "CPU seconds per training step, InstaAug over the tuned random crop, timed in turn "
            "on the same batches on this machine: " + _per_seed(ratios, ".2f", "x"), ratios.to_numpy(float), evidence)


# ----------------------------------------------------------------------------- figures
def plot_accuracy(table: pd.DataFrame):
    """Table 1 as bars: this run (with test-time augmentation) beside the paper's accuracy."""
    fig, ax = plt.subplots(1, 2, figsize=(8.5, 3.2), sharey=True)
    y = np.arange(len(table))
    se = pd.to_numeric(table["± s.e."], errors="coerce").fillna(0)  # "—" where one seed has no s.e.
    ax[0].barh(y, table["this run (%)"], xerr=se, color="tab:blue")
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
    fig, axes = plt.subplots(len(models), 2 * n_images, figsize=(1.05 * n_images * 2, 1.3 * len(models)),
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
            a.set_title(label(name) if i == 0 else "", fontsize=9, loc="left")
    fig.tight_layout()
    return axes


def plot_sizes(family: list[Trained], test_set, variants=("no_input", "instaaug")):
    """Fig. 6 (c, f): the share of crop mass above each crop side, and the expected crop side against the
    object's side (one dot per test scene)."""
    fig, ax = plt.subplots(1, 2, figsize=(8.5, 3.2))
    obj = ((test_set.boxes[:, 2:] - test_set.boxes[:, :2]).mean(1) / test_set.images.shape[-1]).numpy()
    for t in family:
        if t.variant not in variants:
            continue
        with torch.inference_mode():
            p = t.model.augment.distribution(test_set.float()).exp()
        sides = t.model.augment.params.boxes[:, 2]
        grid = np.linspace(0.2, 1.0, 41)
        ax[0].plot(grid, [float(p[:, sides >= g].sum(1).mean()) for g in grid], label=label(t.variant))
        ax[1].scatter(obj, (p * sides).sum(1).numpy(), s=6, alpha=0.5, label=label(t.variant))
    ax[0].set_xlabel("crop side (fraction of the image)")
    ax[0].set_ylabel("share of crops at least this large")
    ax[1].set_xlabel("object's side (fraction of the image)")
    ax[1].set_ylabel("expected crop side")
    for a in ax:
        a.legend(fontsize=9)
    fig.tight_layout()
    return ax


def plot_control(ctrl: pd.DataFrame):
    """The data control: test accuracy (%, with test-time crops, mean over seeds) of each method of
    :func:`invlib.papers.d.cropping.control` at each variation of the scenes, one group of bars per variation."""
    fig, ax = plt.subplots(figsize=(6, 3))
    if not len(ctrl):
        return ax
    mean = ctrl[ctrl.variant == ctrl.method].groupby(["variation", "method"]).acc_tta.mean().unstack() * 100
    mean.rename(columns=LABELS).plot.bar(ax=ax, rot=0)
    ax.set_xticklabels([f"variation {v:g}" for v in mean.index])
    ax.set_xlabel("")
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(max(0, float(np.nanmin(mean.values)) - 10), None)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return ax


def plot_entropy(family: list[Trained], S: Cropping):
    """Fig. E.1's mechanism: the mean entropy and lambda at every band check, for InstaAug at each band and each
    fixed lambda."""
    fig, ax = plt.subplots(1, 2, figsize=(8.5, 3.2))
    for t in family:
        if t.method != "instaaug" or t.seed != S.seed:
            continue
        tr = entropy_trace(t)
        if tr.empty:
            continue
        ax[0].plot(tr.step, tr.entropy, label=label(t.variant))
        ax[1].plot(tr.step, tr.lam, label=label(t.variant))
    ax[0].axhspan(*S.band, color="tab:green", alpha=0.15, label="band")
    ax[0].set_ylabel("mean entropy (nats)")
    ax[1].set_ylabel("λ")
    ax[1].set_yscale("log")
    for a in ax:
        a.set_xlabel("training step")
        a.legend(fontsize=9)
    fig.tight_layout()
    return ax


def band_table(acc: pd.DataFrame, S: Cropping) -> pd.DataFrame:
    """Table E.1 and Fig. E.1, reduced: InstaAug's accuracy at each band and fixed lambda tried (the mean over
    seeds), beside the paper's where it has the same band."""
    rows = acc[acc.variant.str.startswith(("band", "fixed")) | (acc.variant == "instaaug")]
    rows = rows.groupby("variant", sort=False, as_index=False).acc_tta.mean()  # mean over seeds
    out = []
    for _, r in rows.iterrows():
        band = S.band if r.variant == "instaaug" else None
        if r.variant.startswith("band"):
            band = tuple(float(v) for v in r.variant.split()[1].split("-"))
        out.append({"variant": label(r.variant) if r.variant != "instaaug" else
                    f"InstaAug, band [{S.band[0]:g}, {S.band[1]:g}] (the chapter's)",
                    "this run (%)": round(100 * r.acc_tta, 2),
                    "paper (%)": PAPER_BANDS.get(band) if band else "64-65 (0.15-0.5); collapse at <= 0.1"})
    return pd.DataFrame(out)
