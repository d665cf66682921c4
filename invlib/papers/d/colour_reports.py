"""What chapter D3 shows: Tables 3 and 4 beside the paper's, the claims with computed verdicts, the numbers its
prose quotes, and the figures (Fig. 7's in- vs out-of-distribution scatter, Fig. D.1's per-image ranges).

:func:`report` takes the chapter's :class:`invlib.results.Run`, its settings and the
:class:`~invlib.papers.d.colour.ColourRun` of :func:`~invlib.papers.d.colour.train`; it logs the metrics (in
percent, as the paper), records the claims and returns the tables and ``facts`` ``{glue name: text}``.

Every claim of this chapter is about what training produces, so its replicate is the **seed** (every model of a
seed starts from that seed's classifier weights, so the comparisons are paired by seed). The claims are declared in
paper D's protocol (:mod:`invlib.papers.d.protocol`, the list ``D3``: each part's smallest effect that matters and
its reason); this module computes their effects, one value per seed, and :meth:`invlib.results.Run.claim` decides
them (the 95 % t-interval over seeds, decisive from the declared ``n_min`` seeds). Fig. D.1's hue widths are
measured on the test images of each seed's trained module; the images are not replicates of training, so the
per-image spread does not enter the verdict.

Example
-------
>>> from invlib import results
>>> res = demo_run()
>>> run = results.Run("smoke", name="demo")
>>> t3, sweep, t4, facts = report(run, _demo_settings(), res)
>>> run.claims["table3/instaaug_vs_random"]["verdict"], list(t4.columns)[:2]
('inconclusive at this budget', ['1 condition: paper', '1 condition: ours'])
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import results
from ...learned.instaaug import UNIFORM_OPS
from ...protocol import decide
from .colour import (
    CONDITIONS,
    GLOBAL,
    GROUP_OF,
    HUE_IDENTIFIED,
    INSTAAUG,
    NO_AUG,
    OPS,
    PAPER_BEST,
    RANDOM_HUE,
    Colour,
    ColourRun,
)
from .criteria import gain_shrink, record_replicates
from .protocol import PROTOCOL

# Table 3 (D45): method -> (accuracy, its +-, with test-time augmentation, its +-), in %
PAPER_TABLE3 = {
    "no augmentation": (72.87, 0.10, None, None),
    "random jitter (best of the sweep)": (79.99, 0.13, 80.55, 0.16),
    "Augerino": (78.97, 0.10, 79.34, 0.14),
    "AdaAug": (75.27, 0.30, 76.43, 0.15),
    "InstaAug": (81.11, 0.20, 81.35, 0.19),
}
# Table 4: general accuracy (%) +- over 10 runs at 1, 2, 4, 8 training conditions; TTA for random and InstaAug
TABLE4_K = (1, 2, 4, 8)
PAPER_TABLE4 = {
    "no augmentation": ((68.5, 2.6), (78.1, 1.8), (84.8, 0.7), (87.8, 0.5)),
    "random jitter": ((72.7, 2.7), (80.8, 1.3), (85.9, 0.6), (87.3, 0.3)),
    "InstaAug": ((76.0, 2.5), (83.6, 1.1), (88.2, 0.5), (89.6, 0.3)),
}
_ROW = {"none": "no augmentation", "random": "random jitter", "instaaug": "InstaAug"}

CHAPTER = "d3_colour_jitter"  # its claims' declarations: PROTOCOL.of_chapter(CHAPTER)
INPUT_FREE_ROW = "input-free InstaAug (ours; not in the paper)"


# ----------------------------------------------------------------------------- helpers
def _acc(res: ColourRun, model: str, col: str, tta: bool, experiment: str = "table3", k: int = 1) -> pd.Series:
    """Accuracy ``col`` (fraction) of ``model`` per seed (index: seed)."""
    a = res.accuracy
    sel = a[(a["experiment"] == experiment) & (a["k"] == k) & (a["model"] == model) & (a["tta"] == tta)]
    return sel.set_index("seed")[col]


def _randoms(res: ColourRun) -> list[str]:
    a = res.accuracy
    return list(dict.fromkeys(a[(a["experiment"] == "table3") & (a["kind"] == "random")]["model"]))


def _best(res: ColourRun, col: str, tta: bool) -> str:
    """The random jitter with the best mean ``col`` over seeds (with or without TTA)."""
    return max(_randoms(res), key=lambda m: _acc(res, m, col, tta).mean())


def points(diffs) -> np.ndarray:
    """The effect of "ours above theirs" from per-seed differences ``ours - theirs`` (fractions, paired by seed): the
    gain in points, one value per seed, a seed missing on one side (NaN) left out.

    Example
    -------
    >>> points([0.02, 0.03, np.nan]).round(6).tolist()
    [2.0, 3.0]
    """
    d = 100 * np.asarray(list(diffs), dtype=float)
    return d[~np.isnan(d)]


def _declared(cid: str):
    """The declaration of this chapter's claim ``cid`` (paper D's protocol)."""
    return PROTOCOL.get(cid, CHAPTER)


def _evidence(cid: str, effects) -> results.Evidence:
    """What the one decision function makes of claim ``cid``'s ``effects`` (for the prose; :meth:`Run.claim`
    records the same)."""
    return decide(_declared(cid), effects)


N_MIN = _declared("table3/instaaug_vs_random").parts[""].n_min  # seeds before a claim about training is decisive


def _pct(x: float) -> float:
    return round(100 * float(x), 2)


def _pm(mean: float, se: float) -> str:
    return f"{100 * mean:.2f}" + ("" if math.isnan(se) else f" ± {100 * se:.2f}")


def _seeds_note(res: ColourRun) -> str:
    n = res.accuracy.loc[res.accuracy["experiment"] == "table3", "seed"].nunique()  # Table 3's (the control's: more)
    return f"{n} seed{'s' if n > 1 else ''}" + (f" (a claim about training needs {N_MIN}: below that it is "
                                                "inconclusive at this budget)" if n < N_MIN else "")


# ----------------------------------------------------------------------------- tables
def table3(res: ColourRun) -> pd.DataFrame:
    """Table 3 beside ours: general accuracy (%) without and with test-time augmentation, and our in-distribution
    (easy) and out-of-distribution (hard) accuracy; ours is the mean over seeds. Augerino and AdaAug are not run;
    our global range (InstaAug's module on ``0 * x``: one learned range for all images) is a row of its own, with
    no paper number (:data:`INPUT_FREE_ROW`): it is InstaAug's input-free version, not the paper's Augerino.

    Example
    -------
    >>> t = table3(demo_run())
    >>> list(t.index)  # doctest: +NORMALIZE_WHITESPACE
    ['no augmentation', 'random jitter (best of the sweep)', 'Augerino', 'AdaAug',
     'input-free InstaAug (ours; not in the paper)', 'InstaAug']
    >>> t.loc["Augerino", "ours: model"], bool(pd.isna(t.loc[INPUT_FREE_ROW, "paper"]))
    ('not run', True)
    """
    best = _best(res, "general", False)
    ours = {"no augmentation": NO_AUG, "random jitter (best of the sweep)": best, INPUT_FREE_ROW: GLOBAL,
            "InstaAug": INSTAAUG}
    paper = dict(list(PAPER_TABLE3.items())[:4]) | {INPUT_FREE_ROW: (None,) * 4, "InstaAug": PAPER_TABLE3["InstaAug"]}
    rows = []
    for row, (p, _, p_tta, _) in paper.items():
        m = ours.get(row)
        r = {"ours: model": m or "not run", "paper": p, "ours": None, "paper (TTA)": p_tta, "ours (TTA)": None,
             "ours: easy": None, "ours: hard": None, "ours: easy (TTA)": None, "ours: hard (TTA)": None}
        if m is not None:
            r["ours"], r["ours: easy"], r["ours: hard"] = (_pct(_acc(res, m, c, False).mean())
                                                          for c in ("general", "easy", "hard"))
            if len(_acc(res, m, "general", True)):
                r["ours (TTA)"], r["ours: easy (TTA)"], r["ours: hard (TTA)"] = (
                    _pct(_acc(res, m, c, True).mean()) for c in ("general", "easy", "hard"))
        rows.append(dict(method=row, **r))
    return pd.DataFrame(rows).set_index("method")


def sweep_table(res: ColourRun) -> pd.DataFrame:
    """Every model of Table 3 with its general, easy and hard accuracy (%), mean over seeds, without and with TTA:
    the points of Fig. 7.

    Example
    -------
    >>> sweep_table(demo_run()).columns.tolist()
    ['h', 's', 'v', 'general', 'easy', 'hard', 'general (TTA)', 'easy (TTA)', 'hard (TTA)']
    """
    a = res.accuracy[res.accuracy["experiment"] == "table3"]
    rows = []
    for model, g in a.groupby("model", sort=False):
        r = dict(model=model, h=g["h"].iloc[0], s=g["s"].iloc[0], v=g["v"].iloc[0])
        for tta, suffix in ((False, ""), (True, " (TTA)")):
            t = g[g["tta"] == tta]
            for c in ("general", "easy", "hard"):
                r[c + suffix] = _pct(t[c].mean()) if len(t) else None
        rows.append(r)
    return pd.DataFrame(rows).set_index("model")


def table4(res: ColourRun) -> pd.DataFrame:
    """Table 4 beside ours: general accuracy (%) per number of training conditions, no augmentation (plain), the
    best random jitter of Table 3 and InstaAug (both with TTA, as the paper); ours the mean over seeds, empty
    where the profile did not train that many conditions.

    Example
    -------
    >>> float(table4(demo_run()).loc["InstaAug", "1 condition: paper"])
    76.0
    """
    a = res.accuracy[res.accuracy["experiment"] == "table4"]
    out = {}
    for kind, paper in (("none", PAPER_TABLE4["no augmentation"]), ("random", PAPER_TABLE4["random jitter"]),
                        ("instaaug", PAPER_TABLE4["InstaAug"])):
        row = {}
        for k, (p, _) in zip(TABLE4_K, paper):
            name = f"{k} condition{'s' if k > 1 else ''}"
            sel = a[(a["k"] == k) & (a["kind"] == kind) & (a["tta"] == (kind != "none"))]
            row[f"{name}: paper"] = p
            row[f"{name}: ours"] = _pct(sel["general"].mean()) if len(sel) else None
        out[_ROW[kind]] = row
    return pd.DataFrame(out).T


def hue_gap(res: ColourRun, op: str = "hue") -> dict:
    """InstaAug's learned range width of ``op`` on the random-hue classes minus that on the hue-identified ones, per
    seed (each seed's trained module, mean over its test images): ``gaps`` (one per seed, the claim's replicates)
    and ``gap`` their mean; also each type's mean width and the global range's (one width for all).

    Example
    -------
    >>> g = hue_gap(demo_run())
    >>> [round(v, 3) for v in g["gaps"]], g["seeds"]
    ([0.1], 1)
    """
    r = res.ranges[res.ranges["model"] == INSTAAUG]
    col = f"{op}_width"
    gaps = [float(g[g["class_type"] == RANDOM_HUE][col].mean() - g[g["class_type"] == HUE_IDENTIFIED][col].mean())
            for _, g in r.groupby("seed")]
    glob = res.ranges[res.ranges["model"] == GLOBAL][col]
    return dict(gaps=gaps, gap=float(np.mean(gaps)) if gaps else float("nan"), seeds=len(gaps),
                random_hue=float(r[r["class_type"] == RANDOM_HUE][col].mean()),
                hue_identified=float(r[r["class_type"] == HUE_IDENTIFIED][col].mean()),
                global_width=float(glob.mean()) if len(glob) else float("nan"))


# ----------------------------------------------------------------------------- the report
def report(run, S: Colour, res: ColourRun) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Log chapter D3's metrics (percent), record its claims; return Table 3, the sweep (Fig. 7's points), Table 4
    and the facts the prose quotes.

    Example
    -------
    >>> from invlib import results
    >>> run = results.Run("smoke", name="demo")
    >>> _ = report(run, _demo_settings(), demo_run())
    >>> sorted(run.claims)[:3]
    ['control/gain_shrinks_without_hue_classes', 'fig7/in_distribution_above_most', 'fig7/ood_above_every_random']
    """
    t3, sweep, t4 = table3(res), sweep_table(res), table4(res)
    paper_key = {"no augmentation": "no_augmentation", "random jitter (best of the sweep)": "best_random",
                 INPUT_FREE_ROW: "global_range", "InstaAug": "instaaug"}
    for row, key in paper_key.items():
        p, p_tta = (None if pd.isna(v) else float(v) for v in t3.loc[row, ["paper", "paper (TTA)"]])
        note = "InstaAug's input-free version; the paper has none (its Augerino is another model)" if (
            row == INPUT_FREE_ROW) else ""
        run.log(f"table3/{key}/general", t3.loc[row, "ours"], paper=p, note=note)
        if pd.notna(t3.loc[row, "ours (TTA)"]):
            run.log(f"table3/{key}/general_tta", t3.loc[row, "ours (TTA)"], paper=p_tta, note=note)
        for c in ("easy", "hard"):
            run.log(f"table3/{key}/{c}", t3.loc[row, f"ours: {c}"])
    for model, r in sweep.iterrows():
        run.log(f"sweep/{model}", {k: v for k, v in r.items() if v is not None and not pd.isna(v)})
    for kind, r in t4.iterrows():
        for k in TABLE4_K:
            name = f"{k} condition{'s' if k > 1 else ''}"
            if r[f"{name}: ours"] is not None and not pd.isna(r[f"{name}: ours"]):
                run.log(f"table4/{kind.lower().replace(' ', '_')}/k{k}", r[f"{name}: ours"], paper=r[f"{name}: paper"])
    run.log("table4/conditions", {str(k): list(v) for k, v in res.sets.items()})
    run.log("best_random", res.best_random, paper="random jitter h=0 s=0.2 v=0.8")
    if not res.selection.empty:  # each random jitter's held-out accuracy, what chose the best
        run.log("best_random/held_out", res.selection.groupby("model", sort=False)["general"].mean().to_dict())
    for (k, model, seed), states in res.states.items():
        run.log(f"band/{model}/k{k}/seed{seed}", [dict(entropy=s.get("entropy"), lam=s.get("lambda"))
                                                  for s in states])
    facts = _table3_claims(run, res)
    facts |= _figd1_claim(run, res)
    facts |= _table4_claims(run, res)
    facts |= _control_claim(run, S, res)
    record_variance(run, res)
    n = res.accuracy.loc[res.accuracy["experiment"] == "table3", "seed"].nunique()
    n4 = res.accuracy.loc[res.accuracy["experiment"] == "table4", "seed"].nunique()
    facts |= {"d3_best_random": res.best_random, "d3_n_select": f"{S.n_select:,}", "d3_seeds": _seeds_note(res),
              "d3_seed_count": f"{n} seed{'s' * (n != 1)}", "d3_table4_seed_count": f"{n4} seed{'s' * (n4 != 1)}",
              **paper_facts()}
    control = "control/gain_shrinks_without_hue_classes"
    on_table4 = [c.id for c in PROTOCOL.of_chapter(CHAPTER) if c.id.startswith("table4/")]
    record_replicates(run, "seeds", seed_seconds(res, ("table3",)),
                      [c.id for c in PROTOCOL.of_chapter(CHAPTER) if c.id != control and c.id not in on_table4],
                      note="a seed: every model of Table 3 (their fit's epoch seconds)")
    record_replicates(run, "table4_seeds", seed_seconds(res, ("table4",), larger_only=True), on_table4,
                      note="a seed: the models of Table 4's larger training sets (their fit's epoch seconds); its one "
                           "light is Table 3's models")
    record_replicates(run, "control_seeds", seed_seconds(res, ("control",)), [control],
                      note="a seed: the global range and InstaAug at both hue shares (those at the chapter's share are "
                           "Table 3's models of the seed when it is one of seeds)")
    return t3, sweep, t4, facts


def variance_pairs(res: ColourRun) -> list[tuple[str, str, str, bool]]:
    """Table 3's paired effects whose variance :func:`record_variance` splits: ``(name, above, below, tta)``,
    with this run's best random jitter."""
    best = res.best_random
    return [("InstaAug - best random jitter", INSTAAUG, best, False),
            ("InstaAug - best random jitter (TTA)", INSTAAUG, best, True),
            ("InstaAug - global range", INSTAAUG, GLOBAL, False),
            ("best random jitter - no augmentation", best, NO_AUG, False)]


def record_variance(run, res: ColourRun) -> dict:
    """Record, for each of :func:`variance_pairs`, how the spread over seeds of its paired effect on the general
    accuracy (points) splits into evaluation (the test images) and training (:meth:`invlib.results.Run.variance`,
    parameter ``seeds``): each test image's effect is its outcome's difference weighted by
    :func:`~invlib.papers.d.colour.general_weights`, so that a seed's mean is its effect. Pairs with fewer than two
    seeds are left out. Returns ``{name: split}``.

    Example
    -------
    >>> from invlib.papers.d.colour import INSTAAUG, NO_AUG
    >>> rng = np.random.default_rng(0)
    >>> best = "random jitter h=0 s=0.2 v=0.8"
    >>> res = ColourRun(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), best_random=best, weights=np.ones(400),
    ...                 correct={(m, s, t): rng.random(400) < 0.8 for m in (INSTAAUG, best, NO_AUG)
    ...                          for s in range(12) for t in (False, True)})
    >>> run = results.Run("smoke", name="demo")
    >>> splits = record_variance(run, res)  # no global range here: its pair is left out
    >>> len(splits), splits["InstaAug - best random jitter"]["items"], splits["InstaAug - best random jitter"]["seeds"]
    (3, 400, 12)
    >>> splits["InstaAug - best random jitter"]["evaluation_share"] > 0.5  # independent outcomes: evaluation
    True
    """
    out = {}
    if res.weights is None or not res.correct:
        return out
    for name, above, below, tta in variance_pairs(res):
        seeds = sorted(s for (m, s, t) in res.correct if m == above and t == tta
                       and (below, s, tta) in res.correct)
        if len(seeds) < 2:
            continue
        per_item = [100 * res.weights * (res.correct[above, s, tta].astype(float)
                                         - res.correct[below, s, tta].astype(float)) for s in seeds]
        out[name] = run.variance("seeds", name, np.stack(per_item))
    return out


def paper_facts() -> dict:
    """The paper's numbers D3's prose quotes (Tables 3 and 4), as text: ``d3_paper_instaaug``,
    ``d3_paper_random`` (general accuracy, %, without and with test-time augmentation), its best random jitter
    ``d3_paper_best``, ``d3_paper_augerino``
    and ``d3_paper_table4`` (InstaAug minus random jitter, points, per number of lights).

    Example
    -------
    >>> paper_facts()["d3_paper_table4"]
    '+3.3, +2.8, +2.3, +2.3'
    """
    ia, rnd = PAPER_TABLE3["InstaAug"], PAPER_TABLE3["random jitter (best of the sweep)"]
    gains = [a[0] - b[0] for a, b in zip(PAPER_TABLE4["InstaAug"], PAPER_TABLE4["random jitter"])]
    h, sat, v = PAPER_BEST
    return {"d3_paper_instaaug": f"{ia[0]:.2f} and {ia[2]:.2f} %",
            "d3_paper_random": f"{rnd[0]:.2f} and {rnd[2]:.2f} %", "d3_paper_best": f"h={h:g} s={sat:g} v={v:g}",
            "d3_paper_augerino": f"{PAPER_TABLE3['Augerino'][0]:.2f} %",
            "d3_paper_table4": ", ".join(f"{g:+.1f}" for g in gains)}


def seed_seconds(res: ColourRun, experiments: tuple[str, ...], larger_only: bool = False) -> list[float]:
    """Per seed, in seed order, what training the models of ``experiments`` took (``train_seconds`` of
    :attr:`~invlib.papers.d.colour.ColourRun.accuracy`, each model once: its rows with and without TTA, and Table
    4's copies of Table 3's models, are one model); empty without that column. ``larger_only``: Table 4's larger
    training sets only (not its copies of Table 3's models, trained once for Table 3).

    Example
    -------
    >>> seed_seconds(demo_run(), ("table3",))  # made-up rows have no training seconds
    []
    >>> a = pd.DataFrame(dict(experiment=["table3", "table3", "table4", "table4"], k=[1, 1, 1, 2], model="InstaAug",
    ...                       hue_share=1.0, seed=0, tta=[False, True, False, False],
    ...                       train_seconds=[4.0, 4.0, 4.0, 5.0]))
    >>> seed_seconds(ColourRun(a, pd.DataFrame(), pd.DataFrame()), ("table3", "table4"))
    [9.0]
    >>> seed_seconds(ColourRun(a, pd.DataFrame(), pd.DataFrame()), ("table4",), larger_only=True)
    [5.0]
    """
    a = res.accuracy
    if "train_seconds" not in a:
        return []
    a = a[a["experiment"].isin(experiments)].drop_duplicates(["k", "model", "hue_share", "seed"])
    if larger_only:
        a = a[a["k"] > 1]
    return [float(v) for v in a.groupby("seed")["train_seconds"].sum().sort_index()]


def _order(ev: results.Evidence, ours: str, theirs: str) -> str:
    """The sentence the prose says for "``ours`` above ``theirs``", from the verdict."""
    return results.phrase(ev, reproduced=f"{ours} is above {theirs} by more than the smallest gain that matters, "
                                         f"beyond the spread of the seeds ({ev.text()}).",
                          not_reproduced=f"{ours} is not above {theirs} by the smallest gain that matters, beyond "
                                         f"the spread of the seeds ({ev.text()}).")


def _table3_claims(run, res: ColourRun) -> dict:
    """Table 3 and Fig. 7: InstaAug against the best random jitter (Table 3: the one chosen on held-out images,
    ``res.best_random``; Fig. 7: every setting, the best of each seed on each measure), without and with TTA; in
    distribution against most settings; against the global range; augmentation against none."""
    facts = {}
    for col, tta, cid in (("general", False, "table3/instaaug_vs_random"),
                          ("general", True, "table3/instaaug_vs_random_tta"),
                          ("hard", False, "fig7/ood_above_every_random"),
                          ("hard", True, "fig7/ood_above_every_random_tta")):
        insta = _acc(res, INSTAAUG, col, tta)
        if cid.startswith("table3"):  # one setting, chosen on images apart from the test set
            best = res.best_random
            per_seed = _acc(res, best, col, tta)
        else:  # "above every setting": the best of them on this very measure, seed by seed
            per_seed = pd.concat([_acc(res, m, col, tta) for m in _randoms(res)], axis=1).max(axis=1)
            best = _best(res, col, tta)
        d = points((insta - per_seed).tolist())
        ev = _evidence(cid, d)
        run.claim(_declared(cid), effects=d,
                  ours=f"InstaAug {_pm(insta.mean(), math.nan)}, best random ({best}) "
                       f"{_pm(_acc(res, best, col, tta).mean(), math.nan)}; difference {ev.estimate:+.2f} points")
        key = f"d3_{cid.split('/')[1]}"
        facts[key] = (f"{100 * insta.mean():.1f} % against {100 * per_seed.mean():.1f} % for the best random jitter "
                      f"({best})")
        facts[key + "_verdict"] = _order(ev, "InstaAug", "the best random jitter")

    # Fig. 7: in distribution, above most random settings (the share below InstaAug, per seed)
    easy = _acc(res, INSTAAUG, "easy", False)
    below = pd.concat([(easy > _acc(res, m, "easy", False)) for m in _randoms(res)], axis=1)
    share = below.mean(axis=1).to_numpy(float)
    ev = _evidence("fig7/in_distribution_above_most", share)
    count = f"{below.sum(axis=1).mean():.1f} of {below.shape[1]}"
    run.claim(_declared("fig7/in_distribution_above_most"), ours=f"above {count} settings ({100 * easy.mean():.1f} %)",
              effects=share)
    facts["d3_easy_share"] = count
    facts["d3_easy_share_verdict"] = results.phrase(
        ev, reproduced=f"More than half of them lie below it on every reading of the seeds ({ev.text()}).",
        not_reproduced=f"Fewer than half of them lie below it beyond the spread of the seeds ({ev.text()}).")

    # InstaAug against its own input-free version (not in the paper) and augmentation against none (Table 3)
    insta, glob = _acc(res, INSTAAUG, "general", False), _acc(res, GLOBAL, "general", False)
    tta = (_acc(res, INSTAAUG, "general", True).mean(), _acc(res, GLOBAL, "general", True).mean())
    d = points((insta - glob).tolist())
    ev = _evidence("table3/instaaug_vs_global", d)
    run.claim(_declared("table3/instaaug_vs_global"), effects=d,
              ours=f"InstaAug {_pm(insta.mean(), math.nan)}, input-free InstaAug {_pm(glob.mean(), math.nan)}; with "
                   f"TTA {100 * tta[0]:.2f} vs {100 * tta[1]:.2f}")
    facts["d3_global_vs_instaaug"] = (f"{100 * glob.mean():.1f} % for the global range (input-free InstaAug) against "
                                      f"{100 * insta.mean():.1f} % for InstaAug ({100 * tta[1]:.1f} against "
                                      f"{100 * tta[0]:.1f} % with test-time augmentation)")
    why = (" On these data the random-hue classes already show every hue in training, so a wider hue range for "
           "them adds little the classifier has not seen: the stand-in may give per-image ranges less to gain over "
           "one learned range than RawFooT's textures.")
    facts["d3_global_verdict"] = results.phrase(
        ev, reproduced=f"Per-image ranges beat the one global range beyond the spread of the seeds ({ev.text()}).",
        not_reproduced=f"Per-image ranges do not beat the one global range by the smallest gain that matters, "
                       f"beyond the spread of the seeds ({ev.text()}).{why}",
        inconclusive=f"This run cannot order them at its budget ({ev.text()}).{why}")
    none = _acc(res, NO_AUG, "general", False)
    gains = {m: (_acc(res, m, "general", False) - none) for m in (res.best_random, GLOBAL, INSTAAUG)}
    parts = dict(zip(_declared("table3/augmentation_beats_none").parts, gains.values()))  # best random, global, ours
    run.claim(_declared("table3/augmentation_beats_none"), effects={k: points(g.tolist()) for k, g in parts.items()},
              ours=", ".join(f"{m} {100 * g.mean():+.1f}" for m, g in gains.items()) + " points over none")
    return facts


def _figd1_claim(run, res: ColourRun) -> dict:
    """Fig. D.1: the hue range is narrower where the hue is the label (per seed: each seed's trained module)."""
    gap = hue_gap(res)
    cid = "figD1/hue_narrower_on_hue_identified"
    if not np.isfinite(gap["gaps"]).all() or not gap["gaps"]:  # a hue share of 0: no hue-identified class
        run.claim(_declared(cid), ours="not measurable", effects=results.not_measurable(
            "no hue-identified class at this hue share (or no trained module)", unit="seed"))
        return {k: "not measurable" for k in ("d3_hue_bounds", "d3_sv_widths", "d3_hue_identified", "d3_random_hue",
                                              "d3_hue_gap", "d3_global_hue", "d3_hue_verdict")}
    run.log("figD1/hue_width/hue_identified", gap["hue_identified"], note="turns, InstaAug, mean over test images")
    run.log("figD1/hue_width/random_hue", gap["random_hue"], note="turns")
    run.log("figD1/hue_width/global", gap["global_width"], note="turns, one range for all images")
    ins = res.ranges[res.ranges["model"] == INSTAAUG]
    for op in OPS:
        run.log(f"figD1/{op}_width", ins.groupby("class_type")[f"{op}_width"].mean().round(4).to_dict())
    ev = _evidence(cid, gap["gaps"])
    run.claim(_declared(cid), effects=gap["gaps"],
              ours=f"{gap['hue_identified']:.3f} vs {gap['random_hue']:.3f} turn; difference {gap['gap']:.3f}")
    bounds = ins.groupby("class_type")[["hue_low", "hue_high"]].mean()
    return {"d3_hue_bounds": "; ".join(f"{kind} [{r['hue_low']:+.3f}, {r['hue_high']:+.3f}]"
                                       for kind, r in bounds.iterrows()),
            "d3_sv_widths": f"{ins['saturation_width'].mean():.2f} (saturation) and {ins['value_width'].mean():.2f} "
                            f"(value) log-factor units wide, of at most {2 * UNIFORM_OPS['value'][0]:.2f} (2 ln 2: "
                            "the factor is clamped to [0, 2])",
            "d3_hue_identified": f"{gap['hue_identified']:.3f}", "d3_random_hue": f"{gap['random_hue']:.3f}",
            "d3_hue_gap": f"{gap['gap']:.3f} turn", "d3_global_hue": f"{gap['global_width']:.3f}",
            "d3_hue_verdict": results.phrase(
                ev, reproduced=f"Across the seeds the hue-identified classes get the narrower hue range ({ev.text()}): "
                               "the module reads from the image whether its hue may move.",
                not_reproduced=f"Across the seeds the hue-identified classes' hue range is not narrower by the "
                               f"smallest difference that matters ({ev.text()}): the module does not read from the "
                               "image whether its hue may move.")}


def _table4_claims(run, res: ColourRun) -> dict:
    """Table 4: the gain of InstaAug over the best random jitter (both with TTA) at each number of conditions."""
    a = res.accuracy[res.accuracy["experiment"] == "table4"]
    texts, points_ = [], []
    for k in TABLE4_K:
        ins = a[(a["k"] == k) & (a["kind"] == "instaaug") & a["tta"]].set_index("seed")["general"]
        rnd = a[(a["k"] == k) & (a["kind"] == "random") & a["tta"]].set_index("seed")["general"]
        measurable = len(ins) > 0 and len(rnd) > 0
        effects = points((ins - rnd).tolist()) if measurable else results.not_measurable(
            f"{k} training conditions are not trained at this profile (its n_conditions)", unit="seed")
        ev = _evidence(f"table4/gain_k{k}", effects)
        run.claim(_declared(f"table4/gain_k{k}"), effects=effects,
                  ours=f"{_pm(ins.mean(), math.nan)} vs {_pm(rnd.mean(), math.nan)} ({ev.estimate:+.1f} points)"
                  if measurable else "not run at this profile")
        if measurable:
            texts.append(f"{k}: {ev.estimate:+.1f} ({ev.verdict})")
            points_.append(f"{ev.estimate:+.1f} with {k} light{'s' * (k > 1)}")
    return {"d3_table4_gains": ", ".join(texts) if texts else "not run",
            "d3_table4_points": ", ".join(points_) if points_ else "not run",
            "d3_left_out": ", ".join(str(k) for k in TABLE4_K if k not in res.sets) or "none"}


def control_gains(res: ColourRun, tta: bool = False) -> pd.DataFrame:
    """The data control's per-seed gains: InstaAug minus its input-free version, general accuracy (fractions),
    one row per control seed, one column per hue share (empty if the control was not run).

    Example
    -------
    >>> control_gains(demo_run()).round(3).to_dict()
    {1.0: {0: 0.01}, 0.0: {0: 0.0}}
    """
    wide, shares = _control_accuracy(res, tta)
    return pd.DataFrame({sh: wide[sh, INSTAAUG] - wide[sh, GLOBAL] for sh in shares}, index=wide.index)


def _control_accuracy(res: ColourRun, tta: bool = False) -> tuple[pd.DataFrame, list]:
    """The data control's general accuracy, one row per control seed, columns ``(hue_share, model)``; the shares in
    the order they were run."""
    a = res.accuracy
    c = a[(a["experiment"] == "control") & (a["tta"] == tta)] if "hue_share" in a else a.iloc[:0]
    wide = c.pivot_table(index="seed", columns=["hue_share", "model"], values="general")
    return wide, list(dict.fromkeys(c["hue_share"]))


def control_table(res: ColourRun) -> pd.DataFrame:
    """The data control as a table: per hue share (rows), the input-free InstaAug's and InstaAug's general
    accuracy (%, mean over the control seeds), InstaAug's gain (points; without and with TTA) and the seeds.

    Example
    -------
    >>> control_table(demo_run())["gain (points)"].to_dict()
    {1.0: 1.0, 0.0: 0.0}
    """
    a = res.accuracy
    c = a[(a["experiment"] == "control") & ~a["tta"]] if "hue_share" in a else a.iloc[:0]
    plain, tta = control_gains(res), control_gains(res, tta=True)
    rows = {}
    for share, g in c.groupby("hue_share", sort=False):
        means = g.groupby("model")["general"].mean()
        rows[share] = {"hue-defined share of the pairs": share, INPUT_FREE_ROW: _pct(means[GLOBAL]),
                       "InstaAug": _pct(means[INSTAAUG]), "gain (points)": _pct(plain[share].mean()),
                       "gain with TTA (points)": _pct(tta[share].mean()), "seeds": int(g["seed"].nunique())}
    return pd.DataFrame.from_dict(rows, orient="index")


def _control_claim(run, S: Colour, res: ColourRun) -> dict:
    """The data control: InstaAug's gain over its input-free version shrinks without hue-defined classes."""
    gains = control_gains(res)
    cid = "control/gain_shrinks_without_hue_classes"
    if S.control_share is None or gains.shape[1] < 2:
        run.claim(_declared(cid), ours="not run", effects=results.not_measurable(
            "the data control is not run at this profile (control_share None)", unit="seed"))
        return {"d3_control": "Not run at this profile", "d3_control_seeds": "no seeds", "d3_control_verdict": ""}
    wide, _ = _control_accuracy(res)
    full, none, shrink = gain_shrink(wide[S.hue_share, INSTAAUG], wide[S.hue_share, GLOBAL],
                                     wide[S.control_share, INSTAAUG], wide[S.control_share, GLOBAL], scale=1.0)
    d = (100 * shrink).to_numpy(float)  # points
    ev = _evidence(cid, d)
    seeds = f"{len(d)} seed{'s' if len(d) > 1 else ''}"
    ours = (f"gain {100 * full.mean():+.2f} points at share {S.hue_share:g}, {100 * none.mean():+.2f} at share "
            f"{S.control_share:g}; the gain smaller by {ev.estimate:+.2f} points")
    run.claim(_declared(cid), ours=ours, effects=d)
    for share in gains:
        run.log(f"control/share{share:g}/gain", _pct(gains[share].mean()), note="InstaAug minus input-free, points")
    tta = control_gains(res, tta=True)
    text = (f"InstaAug's gain over its input-free version, general accuracy without test-time augmentation, is "
            f"{100 * full.mean():+.1f} points at hue share {S.hue_share:g} and {100 * none.mean():+.1f} at share "
            f"{S.control_share:g} (with it: {100 * tta[S.hue_share].mean():+.1f} and "
            f"{100 * tta[S.control_share].mean():+.1f})")
    return {"d3_control": text, "d3_control_seeds": seeds, "d3_control_verdict": results.phrase(
        ev, reproduced=f"The gain shrinks beyond the spread of the seeds ({ev.text()}).",
        not_reproduced=f"The gain does not shrink by the smallest change that matters, beyond the spread of the "
                       f"seeds ({ev.text()}): the per-image ranges do not gain from the hue-defined classes here.")}


def departures(S: Colour) -> str:
    """A Markdown table of the settings where this run departs from the paper's (``Colour()``'s defaults), the
    paper's value beside this run's (long values shortened).

    Example
    -------
    >>> from .colour import settings
    >>> print(departures(settings("paper")))
    This run uses the paper's settings.
    >>> departures(settings("cpu")).splitlines()[2].startswith("| `n_test` | 6,000 | 2,300 |")
    True
    """
    import dataclasses

    paper = Colour()

    from ...pages import number

    def short(v):
        if isinstance(v, tuple) and v and isinstance(v[0], tuple):
            return f"{len(v)} settings"
        if isinstance(v, tuple):
            return ", ".join(short(x) for x in v) if len(v) <= 6 else f"{len(v)} ({short(v[0])} to {short(v[-1])})"
        if isinstance(v, float) and 0 < abs(v) < 0.001:  # the paper's module step: 0.00001, not "< 0.001"
            return f"{v:.12f}".rstrip("0")
        return "—" if v is None else number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    ours = ("profile", "device", "progress", "control_share", "control_seeds")  # not the paper's: its control is ours
    rows = [(f.name, short(getattr(paper, f.name)), short(getattr(S, f.name))) for f in dataclasses.fields(S)
            if f.name not in ours and getattr(S, f.name) != getattr(paper, f.name)]
    if not rows:
        return "This run uses the paper's settings."
    return "\n".join(["| setting | paper | this run |", "|---|---|---|"]
                     + [f"| `{n}` | {p} | {o} |" for n, p, o in rows])


# ----------------------------------------------------------------------------- figures
def plot_control(res: ColourRun, ax=None):
    """The data control: InstaAug's gain over its input-free version (general accuracy, points) at each hue share,
    one dot per seed, a line joining the two shares of a seed.

    Example
    -------
    >>> plot_control(demo_run()).get_ylabel()
    'InstaAug minus input-free (points)'
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(4.5, 3.4))[1]
    g = 100 * control_gains(res)
    x = np.arange(g.shape[1])
    for seed, r in g.iterrows():
        ax.plot(x, r.to_numpy(float), "o-", color="tab:green", alpha=0.7, label=f"seed {seed}" if seed == g.index[0]
                else None)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, [f"share {s:g}" for s in g.columns])
    ax.set(xlim=(-0.5, len(x) - 0.5), ylabel="InstaAug minus input-free (points)",
           title="hue-defined classes: the per-input gain")
    return ax


def plot_fig7(res: ColourRun, tta: bool = False, ax=None):
    """Fig. 7: in-distribution (easy group) against out-of-distribution (hard group) accuracy of every model of
    Table 3 (means over seeds). Random jitter: colour from yellow to red with the hue jitter, size with the
    brightness jitter, opacity with the saturation jitter, as the paper's dots.

    Example
    -------
    >>> plot_fig7(demo_run()).get_xlabel()
    'in-distribution accuracy (easy group, %)'
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(6.5, 5))[1]
    sw = sweep_table(res)
    sfx = " (TTA)" if tta else ""
    rnd = sw[sw["h"].notna()]
    cmap = plt.get_cmap("autumn_r")
    for _, r in rnd.iterrows():
        ax.scatter(r["easy" + sfx], r["hard" + sfx], s=40 + 200 * r["v"], color=cmap(r["h"] / 0.5),
                   alpha=0.35 + 0.65 * r["s"], edgecolor="k", linewidth=0.5)
        ax.annotate(f"h={r['h']:g} s={r['s']:g} v={r['v']:g}", (r["easy" + sfx], r["hard" + sfx]), fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    marks = {NO_AUG: ("s", "grey"), GLOBAL: ("D", "tab:blue"), INSTAAUG: ("*", "tab:green")}
    for name, (marker, colour) in marks.items():
        if name not in sw.index:
            continue
        own = sfx if pd.notna(sw.loc[name, "easy" + sfx]) else ""  # no augmentation has no TTA: its plain point
        label = name + (" (no TTA)" if own != sfx else "")
        ax.scatter(sw.loc[name, "easy" + own], sw.loc[name, "hard" + own], marker=marker, s=180, color=colour,
                   edgecolor="k", label=label, zorder=3)
    ax.set(xlabel="in-distribution accuracy (easy group, %)", ylabel="out-of-distribution accuracy (hard group, %)",
           title="Fig. 7" + (" with test-time augmentation" if tta else ""))
    ax.legend(fontsize=8, loc="best")
    return ax


def plot_conditions(res: ColourRun, tta: bool = False, ax=None):
    """Accuracy per lighting condition (first seed, Table 3's models: no augmentation, the best random jitter, the
    global range, InstaAug), the conditions grouped easy / neither / hard.

    Example
    -------
    >>> plot_conditions(demo_run()).get_ylabel()
    'accuracy (%)'
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(9, 3.4))[1]
    p = res.per_condition
    seed = p["seed"].min()
    order = [c for g in ("easy", "neither", "hard") for c in CONDITIONS if GROUP_OF[c] == g and c in p.columns]
    for name in (NO_AUG, res.best_random, GLOBAL, INSTAAUG):
        sel = p[(p["experiment"] == "table3") & (p["model"] == name) & (p["seed"] == seed)
                & (p["tta"] == (tta and name != NO_AUG))]
        if len(sel):
            ax.plot(range(len(order)), 100 * sel[order].iloc[0].to_numpy(float), "o-", ms=4, label=name)
    ax.set_xticks(range(len(order)), order, rotation=60, fontsize=8)
    for i, c in enumerate(order):
        if GROUP_OF[c] == "hard":
            ax.axvspan(i - 0.5, i + 0.5, color="0.92", zorder=0)
    ax.set(ylabel="accuracy (%)", title="per lighting condition (shaded: the hard group)")
    ax.legend(fontsize=8)
    return ax


def plot_ranges(res: ColourRun):
    """Fig. D.1's content as distributions: every test image's learned range width per op (InstaAug, first seed),
    split by class type, with the global range's width (one value for all images) as a dashed line.

    Example
    -------
    >>> [a.get_xlabel() for a in plot_ranges(demo_run())]
    ['hue range (turns)', 'saturation range (log-factor)', 'value range (log-factor)']
    """
    import matplotlib.pyplot as plt

    axes = plt.subplots(1, 3, figsize=(9.5, 3.1))[1]
    r = res.ranges
    seed = r["seed"].min()
    ins, glob = r[(r["model"] == INSTAAUG) & (r["seed"] == seed)], r[(r["model"] == GLOBAL) & (r["seed"] == seed)]
    for ax, op in zip(axes, OPS):
        col = f"{op}_width"
        lo, hi = float(ins[col].min()), float(ins[col].max())
        bins = np.linspace(lo - 1e-3, hi + 1e-3, 30)
        for kind, colour in ((HUE_IDENTIFIED, "tab:red"), (RANDOM_HUE, "tab:blue")):
            ax.hist(ins[ins["class_type"] == kind][col], bins=bins, alpha=0.6, color=colour, label=kind)
        if len(glob):
            ax.axvline(float(glob[col].iloc[0]), color="k", ls="--", label="global range")
        unit = "turns" if op == "hue" else "log-factor"
        ax.set(xlabel=f"{op} range ({unit})", ylabel="test images")
    axes[0].legend(fontsize=8)
    return list(axes)


def plot_examples(res: ColourRun, test, n: int = 3):
    """Fig. D.1's examples: for ``n`` test images of each class type (first seed, easy-group lights), the image,
    then the image at the two ends of InstaAug's learned hue range and at the two ends of its value range.

    Example
    -------
    >>> from invlib.papers.d import colour as C
    >>> S = _demo_settings()
    >>> axes = plot_examples(demo_run(C.general_test_set(S)), C.general_test_set(S), n=1)
    >>> len(axes)
    2
    """
    import matplotlib.pyplot as plt
    import torch

    from ...learned.instaaug import apply_uniform

    r = res.ranges
    seed = r["seed"].min()
    ins = r[(r["model"] == INSTAAUG) & (r["seed"] == seed)].reset_index(drop=True)
    picks = [i for kind in (HUE_IDENTIFIED, RANDOM_HUE)
             for i in ins.index[(ins["class_type"] == kind) & (ins["group"] == "easy")][:n]]
    cols = ["image", "hue: low end", "hue: high end", "value: low end", "value: high end"]
    fig, axes = plt.subplots(len(picks), len(cols), figsize=(1.6 * len(cols), 1.75 * len(picks)), squeeze=False)
    for row, i in zip(axes, picks):
        x = test.images[i:i + 1].float() / 255
        e = ins.loc[i]
        thetas = [None, (e["hue_low"], 0, 0), (e["hue_high"], 0, 0), (0, 0, e["value_low"]), (0, 0, e["value_high"])]
        for ax, theta, title in zip(row, thetas, cols):
            img = x if theta is None else apply_uniform(x, OPS, torch.tensor([theta], dtype=torch.float32))
            ax.imshow(img[0].permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(title if theta is None else f"{title}\n{theta[0] or theta[2]:+.2f}", fontsize=8)
        row[0].set_ylabel(f"{test.classes[int(e['label'])]}\n{e['condition']}, hue [{e['hue_low']:.2f}, "
                          f"{e['hue_high']:.2f}]", fontsize=8)
    fig.tight_layout()
    return [row[0] for row in axes]


# ----------------------------------------------------------------------------- examples
def _demo_settings() -> Colour:
    from .colour import settings

    return settings("smoke", n_test=46, jitter=[PAPER_BEST, (0.5, 0.2, 0.8)], n_conditions=[1])


def demo_run(test=None) -> ColourRun:
    """A made-up :class:`~invlib.papers.d.colour.ColourRun` with the shape of a real one (one seed, two random
    jitters, Table 4 at one condition; ranges on 46 images, hue 0.1 turn wider on the random-hue classes): for the
    examples and tests of this module. ``test``: the images whose ranges it invents (default: 46 made-up rows).

    Example
    -------
    >>> demo_run().accuracy["model"].nunique()
    5
    """
    rows = []
    acc = {NO_AUG: (0.70, 0.80, 0.60), "random jitter h=0 s=0.2 v=0.8": (0.78, 0.88, 0.68),
           "random jitter h=0.5 s=0.2 v=0.8": (0.60, 0.65, 0.55), GLOBAL: (0.79, 0.88, 0.70),
           INSTAAUG: (0.80, 0.89, 0.72)}
    kinds = {NO_AUG: "none", GLOBAL: "global", INSTAAUG: "instaaug"}
    for model, (g, e, h) in acc.items():
        kind = kinds.get(model, "random")
        hsv = tuple(float(t.split("=")[1]) for t in model.split()[2:]) if kind == "random" else (None,) * 3
        for tta in (False, True) if kind != "none" else (False,):
            r = dict(experiment="table3", k=1, model=model, kind=kind, h=hsv[0], s=hsv[1], v=hsv[2], seed=0, tta=tta,
                     general=g + 0.005 * tta, easy=e, hard=h, seconds=0.0)
            rows.append(r)
            if model in (NO_AUG, "random jitter h=0 s=0.2 v=0.8", INSTAAUG):
                rows.append(dict(r, experiment="table4"))
    for share, gain in ((1.0, 0.01), (0.0, 0.0)):  # the data control: InstaAug's gain vanishes at share 0
        for model, g in ((GLOBAL, 0.79), (INSTAAUG, 0.79 + gain)):
            kind = kinds[model]
            rows += [dict(experiment="control", k=1, model=model, kind=kind, h=None, s=None, v=None, seed=0, tta=tta,
                          general=g, easy=g, hard=g, seconds=0.0, hue_share=share) for tta in (False, True)]
    accuracy = pd.DataFrame(rows)
    accuracy["hue_share"] = accuracy["hue_share"].fillna(1.0)
    per = pd.DataFrame([{c: 0.7 for c in CONDITIONS}] * len(accuracy))
    per_condition = pd.concat([accuracy[["experiment", "k", "model", "seed", "tta"]], per], axis=1)
    n = 46 if test is None else len(test)
    labels = np.arange(n) % 12 if test is None else test.labels.numpy()
    kind = np.where(labels >= 8, RANDOM_HUE, HUE_IDENTIFIED)
    cond = np.array(CONDITIONS)[np.arange(n) % len(CONDITIONS)] if test is None else \
        np.array(CONDITIONS)[test.factors["condition"].long().numpy()]
    frames = []
    for model in (GLOBAL, INSTAAUG):
        width = np.full(n, 0.2) + (0.1 * (kind == RANDOM_HUE) + 0.01 * (np.arange(n) % 2 - 0.5) if model == INSTAAUG
                                   else 0)
        d = dict(label=labels, class_type=kind, condition=cond, group=np.array([GROUP_OF[c] for c in cond]))
        for op in OPS:
            w = width if op == "hue" else np.full(n, 1.0)
            d |= {f"{op}_low": -w / 2, f"{op}_high": w / 2, f"{op}_width": w}
        frames.append(pd.DataFrame(d).assign(model=model, seed=0))
    states = {(1, INSTAAUG, 0): [dict(entropy=-1.0, **{"lambda": 0.2})]}
    return ColourRun(accuracy, per_condition, pd.concat(frames, ignore_index=True), states, {1: ("D45",)},
                     "random jitter h=0 s=0.2 v=0.8")
