"""What chapters E1 to E4 show: the metrics they log, the paper's claims with computed verdicts, the
"paper vs this run" tables, the numbers their prose quotes and their figures.

Each ``report_*(run, S, ...)`` takes the :class:`invlib.results.Run` of a chapter, its settings (from
:func:`invlib.papers.e.experiments.settings`) and what its ``train_*`` function returned; it logs the metrics
(keys kept stable so that results of different runs compare), records each claim of the paper the chapter
tests with :meth:`invlib.results.Run.claim` (the verdict computed from the run's numbers by the criterion
stated beside it) and returns a table and ``facts``, ``{glue name: Markdown text}`` for the prose. The
``plot_*`` functions draw the paper's figures from the histories and return their axes.

Every verdict comes from :func:`invlib.results.decide` against a boundary or margin declared below with its
reason (:data:`MOST`, :data:`ANGLE_TOL`, ...). The paper's claims are about what training does, so a seed is the
replicate and :data:`N_MIN` seeds are needed before a verdict can be decisive: AugNet's selection of the right
operation is the share of seeds that meet it (a Wilson interval); Augerino, the ablations, E3's trunks and E4's
models are trained once and read "inconclusive at this budget".

Example
-------
>>> from invlib import results
>>> from invlib.papers.e.experiments import image_models, settings
>>> S = settings("cpu", experiment="images")
>>> hist = {name: [dict(epoch=0, test_at_best_val=0.5, train_acc=0.6)] for name in image_models(S)}
>>> run = results.Run("demo", "cpu")
>>> _ = report_images(run, S, hist)
>>> run.claims_table()["verdict"].unique().tolist()  # the paper's CIFAR-10 claims, on Fashion-MNIST
['not measurable at this profile']
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ... import authors
from ...learned import UNITS, augnet, max_rotation
from ...results import Evidence, decide, decide_parts, not_measurable, phrase, share_interval
from .experiments import TRUE_ANGLE, TRUE_HZ, Capacity, Images, Sinusoids, Sprites, _shift_hz

# ----------------------------------------------------------------------------- the declared tests
# Each claim's boundary or margin with its reason, stated before any run (never read off a run's numbers).
N_MIN = 3  # seeds before a claim about what training does can be decisive
SELECTED = 0.8  # an op's weight from which the layer has selected it (the softmax at T = 0.01 is near-hard)
MOST = (0.5, "the paper shows one run and presents the selection as what AugNet does: a method that meets it on "
             "no more than half of its seeds would not be described so ('most seeds', the rule stated before the run)")
ANGLE_TOL = (0.15, "0.15 rad (8.6 degrees), about a fifth of the data's pi/4: the paper reads its angle off a plot "
                   "(Figure 3) and gives no tolerance; the one stated for 'learns the data's range' before any run")
HZ_TOL = (0.15, "0.15 Hz, under a third of the true 0.5 Hz and under a sixth of the 1 Hz between two classes: the "
                "paper reads its range off a plot (Figure 5); the tolerance stated before any run")
COLLAPSED = (0.05, "0.05 rad moves a pixel at the edge of the 32 px canvas by under one pixel (16 px x 0.05): the "
                   "identity, against a start of pi/8 = 0.39 rad")
NEAR_ONE = (0.9, "'almost perfectly invariant' (Figure 6: medians near 1): a median invariance above 0.9 leaves a "
                 "tenth of the way to a trunk that ignores the shift entirely")
ORDER = (0.0, "the paper states an order (beats, grows, faster), not its size: a difference of any size, paired by "
              "seed")
TIED = (0.005, "Figure 7 calls AugNet, 3 layers and fixed augmentation tied: within half a point of the best "
               "early-stopped accuracy, the rule stated before the run")
FASTER = (5.0, "the paper's own factor: 80 % test accuracy in 5x fewer epochs")


# ----------------------------------------------------------------------------- helpers
def _key(name: str) -> str:
    """A model's name as a metric key: ``"AugNet, no regulariser"`` -> ``"augnet/no_regulariser"``."""
    return name.lower().replace(", ", "/").replace(" ", "_").replace("'", "")


def _met(state: dict, op: str, target: float, tol: float) -> bool:
    """The paper's result on one run: ``op`` selected (weight >= :data:`SELECTED`) with its range within ``tol`` of
    ``target``."""
    ops = state["layer0"]
    return op in ops and ops[op]["weight"] >= SELECTED and abs(ops[op]["max_value"] - target) <= tol


def selection_evidence(met: list[bool], direction: str = "greater") -> Evidence:
    """The verdict of a selection claim from whether each seed met it: the share of seeds, its 95 % Wilson interval
    against :data:`MOST` (``"greater"``: most seeds meet it; ``"less"``: most miss it), from :data:`N_MIN` seeds.

    Example
    -------
    >>> for k in (6, 5, 1, 0):
    ...     print(k, selection_evidence([True] * k + [False] * (6 - k)).verdict)
    6 reproduced
    5 inconclusive at this budget
    1 inconclusive at this budget
    0 not reproduced
    >>> selection_evidence([True, True]).text()
    '+1 [+0.342, +1], 2 seeds; > 0.5; needs >= 3 seeds'
    """
    return decide(share_interval(sum(map(bool, met)), len(met)), direction=direction, boundary=MOST[0],
                  reason=MOST[1] if direction == "greater" else "the mirror of the selective regulariser's claim: a "
                  "regulariser that misses the angle meets the criterion on fewer than half of its seeds",
                  unit="seed", n_min=N_MIN)


def _pick(state: dict) -> tuple[str, float, float | None]:
    """Layer 0's selected op ``(name, weight, max_value)``; a layer whose ops all apply (Augerino) names them all."""
    ops = state["layer0"]
    if len(ops) > 1 and all(o["weight"] == 1.0 for o in ops.values()):
        return ("affine (all six)" if len(ops) == 6 else "all of " + ", ".join(ops)), 1.0, None
    return augnet.selected(state)["layer0"]


def best_gain(cap: float, lam: float, decay: float = 1.0) -> tuple[float, float]:
    """The most an operation at full weight lowers ``-lam * mu + decay / 2 * mu^2`` (the selective regulariser
    and the weight decay on its magnitude), with ``mu`` at most ``cap``: ``(gain, mu)``.

    Example
    -------
    >>> best_gain(1.0, lam=0.5)  # an op the trunk ignores at any magnitude
    (0.125, 0.5)
    """
    mu = min(cap, lam / decay)
    return lam * mu - decay / 2 * mu**2, mu


# ----------------------------------------------------------------------------- the authors' code, run here
AUTHORS_FILE = Path(__file__).with_name("authors_augnet.json")


def authors_runs(experiment: str, path: str | Path | None = None, **match) -> pd.DataFrame:
    """Runs of the AugNet authors' own code on this project's machine, one row per run: what it selected, the
    weight, the largest value (in :data:`invlib.learned.UNITS`), its wall seconds, the commit and date.

    The runs were made by ``benchmarks/authors/augnet_runs.py`` (which needs their repository; see the
    README there) and are stored in ``invlib/papers/e/authors_augnet.json``. ``experiment`` is ``"sprites"``,
    ``"sinusoids"`` or ``"capacity"``; ``match`` keeps the rows whose column equals the value (e.g.
    ``n_train=2560, width=8, epochs=12, trunk="seed"``).

    Example
    -------
    >>> df = authors_runs("sprites", n_train=-1)  # no such runs: an empty table with the columns
    >>> len(df), {"seed", "selected", "weight", "max_value", "commit", "date"} <= set(df.columns)
    (0, True)
    """
    return authors.runs(path or AUTHORS_FILE, experiment, columns=("selected", "weight", "max_value", "seconds"),
                        **match)


def report_same_as_authors(run, cid: str, true_op: str, ours: pd.DataFrame, theirs: pd.DataFrame,
                           setting: str, truth: float | None = None, tol: float = ANGLE_TOL[0]) -> pd.DataFrame:
    """Record the claim ``cid``: our AugNet selects ``true_op`` as often as the authors' code does on the same
    setting and seeds (verdict: :func:`invlib.authors.record_same_rate`, an equivalence test: the 90 % Newcombe
    interval of the difference of the two rates within +-:data:`invlib.authors.SAME_RATE_MARGIN`, from 3 seeds a
    side). ``ours`` and ``theirs`` hold one row per seed with ``seed, selected, weight, max_value`` (the selected
    op's); the claim is not measurable when ``theirs`` is empty (their code was not run at this setting). With
    ``truth``, both sides also say on how many seeds the selected ``true_op``'s range lies within ``tol`` of it.
    Returns the seeds side by side.

    Example
    -------
    >>> from invlib import results
    >>> ours = pd.DataFrame(dict(seed=[0, 1], selected=["rotate", "shear_x"], weight=[0.9, 0.95],
    ...                          max_value=[0.8, 0.3]))
    >>> run = results.Run("demo", "smoke")
    >>> theirs = ours.assign(selected="rotate", commit="2c2ee6b8", date="2026-11-23")
    >>> table = report_same_as_authors(run, "e1/same_as_authors", "rotate", ours, theirs, "demo setting")
    >>> run.claims["e1/same_as_authors"]["verdict"]  # two seeds cannot show two rates the same
    'inconclusive at this budget'
    >>> list(table.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['authors: selected', 'authors: weight', 'authors: largest value', 'ours: selected', 'ours: weight',
     'ours: largest value']
    """
    theirs = theirs[theirs["seed"].isin(ours["seed"])]
    k_o, k_t = int((ours["selected"] == true_op).sum()), int((theirs["selected"] == true_op).sum())

    def close(df):  # seeds that selected true_op with its range within tol of the truth
        if truth is None:
            return ""
        n = int(((df["selected"] == true_op) & ((df["max_value"] - truth).abs() <= tol)).sum())
        return f", its range within {tol:g} of {truth:.3f} on {n}"

    commit, date = (theirs["commit"].iloc[0], theirs["date"].max()) if len(theirs) else ("", "")
    authors.record_same_rate(run, cid, f"Our AugNet selects {true_op} as often as the authors' code on the same "
                             f"setting and seeds ({setting}).", (k_o, len(ours)), (k_t, len(theirs)), commit, date,
                             ours_text=close(ours), theirs_text=close(theirs))
    run.log(f"{cid}/authors_selected", theirs["selected"].tolist(), note=f"seeds {theirs['seed'].tolist()}")
    table = authors.side_by_side(theirs, ours, {"selected": "selected", "weight": "weight",
                                                "max_value": "largest value"})
    return table.round(3)


def _authors_fact(claim: dict, seeds: pd.DataFrame) -> str:
    """One sentence for the prose: the authors' code's selections beside ours, and the verdict."""
    if claim["verdict"] == "not measurable at this profile":
        return "not measured: their code was not run at this profile's setting"
    theirs = seeds["authors: selected"].dropna().tolist()
    return (f"{claim['paper']} ({', '.join(f'`{t}`' for t in theirs)}); ours {claim['ours']}. "
            f"Verdict: {claim['verdict']} ({claim['criterion']})")


def authors_table(experiment: str, true_op: str) -> pd.DataFrame:
    """Every setting the authors' code was run at here (:func:`authors_runs`): how many seeds selected
    ``true_op``, the median largest value of ``true_op`` where it was selected, the median wall seconds.

    Example
    -------
    >>> list(authors_table("sprites", "rotate").columns)
    ['setting', 'seeds', 'selected true op', 'its range (median, when selected)', 'seconds per run', 'run here']
    """
    df = authors_runs(experiment)
    cols = ["setting", "seeds", "selected true op", "its range (median, when selected)", "seconds per run",
            "run here"]
    rows = []
    for variant, g in (df.groupby("variant", sort=False) if len(df) else []):
        sel = g[g["selected"] == true_op]
        rows.append({cols[0]: variant, cols[1]: ", ".join(map(str, sorted(g["seed"]))),
                     cols[2]: f"{len(sel)} of {len(g)}",
                     cols[3]: round(float(sel["max_value"].median()), 3) if len(sel) else None,
                     cols[4]: round(float(g["seconds"].median()), 1), cols[5]: g["date"].max()})
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------------------- E1: sprites
def report_sprites(run, S: Sprites, hist: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log chapter E1's metrics, record its claims; return the "paper vs this run" table (one row per model),
    the seeds of AugNet beside the authors' code's on the same seeds (:func:`report_same_as_authors`) and the
    facts its prose quotes ``{glue name: Markdown text}``.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.e.experiments import settings, sprite_models
    >>> S = settings("smoke", experiment="sprites", extra_seeds=[])
    >>> untrained = {n: [dict(epoch=0, state=make().state(), test_acc=0.25)] for n, (make, _) in
    ...              sprite_models(S).items()}
    >>> run = results.Run("demo", "smoke")
    >>> table, seeds, facts = report_sprites(run, S, untrained)
    >>> list(table.columns), list(run.claims)  # doctest: +NORMALIZE_WHITESPACE
    (['selected op', 'its weight', 'rotation range (rad)', 'test acc'], ['fig3/augnet_selects_rotate',
     'fig3/same_as_authors', 'fig3/augerino_rotation', 'fig3/no_regulariser_collapses',
     'fig4/augerino_regulariser_misses'])
    """
    true_angle = math.radians(S.max_angle)
    rows = []
    for name, h in hist.items():
        st, key = h[-1]["state"], _key(name)
        angle, sel = max_rotation(st), _pick(st)
        rows.append({"model": name, "selected op": sel[0], "its weight": round(sel[1], 3),
                     "rotation range (rad)": round(angle, 3), "test acc": round(h[-1]["test_acc"], 3)})
        paper = {"AugNet": TRUE_ANGLE, "Augerino": TRUE_ANGLE, "AugNet, no regulariser": 0.0}.get(name)
        paper = paper if S.max_angle == 45 else None  # the paper's numbers are for sprites within pi/4
        run.log(f"{key}/rotation_rad", angle, paper=paper)
        run.log(f"{key}/test_acc", h[-1]["test_acc"])
        run.log(f"{key}/selected", sel[0], paper="rotate" if name == "AugNet" else None)
        run.log(f"{key}/selected_weight", sel[1])
        run.log(f"{key}/rotation_by_epoch", [max_rotation(r["state"]) for r in h])
        run.log(f"{key}/final_state", st)
    final = {name: h[-1]["state"] for name, h in hist.items()}
    seeds = [S.seed, *S.extra_seeds]
    seed_runs = ["AugNet"] + [f"AugNet, seed {s}" for s in S.extra_seeds]
    picks = [_pick(final[n])[0] for n in seed_runs]
    met = [_met(final[n], "rotate", true_angle, ANGLE_TOL[0]) for n in seed_runs]
    rot_ranges = [max_rotation(final[n]) for n, p in zip(seed_runs, picks) if p == "rotate"]
    a = final["AugNet"]
    rot_w, rot_rad = a["layer0"]["rotate"]["weight"], max_rotation(a)
    sel_name, sel_w, _ = _pick(a)
    none_rad, aug_rad = max_rotation(final["AugNet, no regulariser"]), max_rotation(final["Augerino"])
    start_rad = S.init_magnitude * math.pi
    run.log("augnet/selected_over_seeds", picks, note=f"seeds {seeds}")
    run.log("augnet/criterion_met_over_seeds", sum(met), note=f"of {len(met)} seeds")
    run.log("augnet_criterion_met", met[0], note=f"seed {S.seed}: rotate weight >= {SELECTED:g} and range within "
                                                 f"{ANGLE_TOL[0]:g} rad of the data's {true_angle:.3f} rad")
    crit = (f"rotate's weight >= {SELECTED:g} and its range within {ANGLE_TOL[0]:g} rad of the data's "
            f"{true_angle:.3f} rad")
    ev = selection_evidence(met)
    run.claim("fig3/augnet_selects_rotate", "AugNet (one layer of five affine ops) selects rotate and learns the "
              "data's rotation range (π/4 in the paper).", paper="rotate, π/4 = 0.785 rad",
              ours=f"met on {sum(met)} of {len(met)} seeds (seed {S.seed}: {sel_name}, weight {sel_w:.2f}; "
              f"rotation {rot_rad:.3f} rad)", criterion=f"share of seeds on which {crit}: 95 % Wilson interval "
              f"over seeds above {MOST[0]:g} (most seeds); from {N_MIN} seeds", evidence=ev)
    ours = pd.DataFrame([dict(seed=sd, selected=_pick(final[n])[0], weight=_pick(final[n])[1],
                              max_value=_pick(final[n])[2]) for sd, n in zip(seeds, seed_runs)])
    # their code was run on our colour sprites (benchmarks/authors/our_sprites.py) and on their own Mario/Iggy
    match = dict(sprites="ours", n_train=S.n_train, width=S.widths[0], epochs=S.epochs, trunk="seed")
    comparable = (S.sprite_files is None and S.color and S.fill == 1 and S.max_angle == 45 and S.size == 32
                  and S.batch_size == 128 and tuple(S.widths) == tuple(S.widths[0] * 2**i for i in range(4)))
    theirs = authors_runs("sprites", **match) if comparable else authors_runs("sprites", n_train=-1)
    seeds_table = report_same_as_authors(
        run, "fig3/same_as_authors", "rotate", ours, theirs,
        f"our {S.n_train} colour sprites of 32 px, trunk width {S.widths[0]}, {S.epochs} epochs, one trunk "
        "initialisation per seed", truth=true_angle)
    one_run = f"per seed (one run here: seed {S.seed})"
    ev_aug = decide([aug_rad], direction="equivalent", boundary=true_angle, margin=ANGLE_TOL[0], reason=ANGLE_TOL[1],
                    unit="seed", n_min=N_MIN)
    run.claim("fig3/augerino_rotation", "Augerino learns a rotation range of about π/4.", paper=TRUE_ANGLE,
              ours=aug_rad, criterion=f"Augerino's learned rotation range {one_run}: 90 % t-interval over seeds "
              f"within {true_angle:.3f} ± {ANGLE_TOL[0]:g} rad (equivalence); from {N_MIN} seeds", evidence=ev_aug)
    ev_none = decide([none_rad], direction="less", boundary=COLLAPSED[0], reason=COLLAPSED[1], unit="seed",
                     n_min=N_MIN)
    run.claim("fig3/no_regulariser_collapses", "Without a regulariser, AugNet's rotation range shrinks to 0.",
              paper=0.0, ours=none_rad, criterion=f"the learned rotation range without a regulariser {one_run}: 95 % "
              f"t-interval over seeds below {COLLAPSED[0]:g} rad; from {N_MIN} seeds", evidence=ev_none)
    ar = final["AugNet, Augerino's regulariser"]
    ev_miss = selection_evidence([_met(ar, "rotate", true_angle, ANGLE_TOL[0])], direction="less")
    run.claim("fig4/augerino_regulariser_misses", "With Augerino's regulariser -||μ||₂ instead of the selective one, "
              "AugNet misses the angle.", paper="misses π/4",
              ours=f"selects {_pick(ar)[0]}; largest rotation {max_rotation(ar):.3f} rad",
              criterion=f"share of seeds on which {crit} (one run here: seed {S.seed}): 95 % Wilson interval over "
              f"seeds below {MOST[0]:g} (it misses on most seeds); from {N_MIN} seeds", evidence=ev_miss)
    free_gain, free_mu = best_gain(1.0, S.reg)  # an operation the trained trunk ignores at any magnitude
    rot_gain, rot_mu = best_gain(true_angle / augnet.OPS["rotate"].scale, S.reg)  # rotate, held to the data's
    when = ", ".join(f"{r:.2f}" for r in rot_ranges)
    facts = {
        "e1_seeds": ", ".join(f"`{p}`" for p in picks), "e1_count": f"{sum(met)} of {len(met)}",
        "e1_rot_when": f"Where rotate was selected, its range ended at {when} rad." if rot_ranges
        else "No seed selected rotate.",
        "e1_obj": f"an operation that costs the trunk nothing settles at μ = {free_mu:.2f} and lowers the loss by "
                  f"{free_gain:.3f}; rotate, held to μ = {rot_mu:.2f} (π/4) by the labels, lowers it by {rot_gain:.3f}",
        "e1_sel": f"`{sel_name}` (weight {sel_w:.2f})", "e1_rot": f"{rot_rad:.2f} rad (rotate's weight {rot_w:.2f})",
        "e1_selects": phrase(ev, reproduced="The paper's result holds on most seeds: the share's interval lies above "
                             "one half.", not_reproduced="The paper's result fails on most seeds: the share's interval "
                             "lies below one half."),
        "e1_authors": _authors_fact(run.claims["fig3/same_as_authors"], seeds_table),
        "e1_none": f"{none_rad:.2f} rad, starting from {start_rad:.2f}. " + phrase(
            ev_none, reproduced="This is the collapse toward the identity that both papers report.",
            not_reproduced="It stays above the identity: no collapse here."),
        "e1_ns": _no_shear_fact(final.get("AugNet, no shear ops"), true_angle),
        "e1_aug": f"{aug_rad:.2f} rad. " + phrase(ev_aug, reproduced="Within the tolerance of π/4, as the paper "
                                                  "reports.", not_reproduced="Outside the tolerance of π/4, unlike "
                                                  "the paper."),
        "e1_miss": f"selects `{_pick(ar)[0]}`, its rotation range {max_rotation(ar):.2f} rad. " + phrase(
            ev_miss, reproduced="It misses the angle on most seeds, as the paper reports.",
            not_reproduced="It finds the angle on most seeds, unlike the paper."),
        "e1_reach": _reach(S),
    }
    return pd.DataFrame(rows).set_index("model"), seeds_table, facts


def _no_shear_fact(ns: dict | None, true_angle: float) -> str:
    """What AugNet without its two shears learned (``ns``: its final state; None when not run).

    Example
    -------
    >>> _no_shear_fact(None, 0.785)
    'not run at this profile (`shear_ablation=True` adds it: one more AugNet run)'
    """
    if ns is None:
        return "not run at this profile (`shear_ablation=True` adds it: one more AugNet run)"
    near = "within" if _met(ns, "rotate", true_angle, ANGLE_TOL[0]) else "not within"
    return (f"the same layer learns a rotation range of {max_rotation(ns):.2f} rad with weight "
            f"{ns['layer0']['rotate']['weight']:.2f}, {near} {ANGLE_TOL[0]:g} rad of the data's range")


def _reach(S: Sprites) -> str:
    """How far AugNet's rotation range can travel in this run: Adam moves a parameter by about its learning
    rate per step at most, so ``steps * lr`` of magnitude, times rotate's scale of pi."""
    steps = S.epochs * math.ceil(S.n_train / S.batch_size)
    top = (S.init_magnitude + steps * (S.aug_lr or S.lr)) * augnet.OPS["rotate"].scale
    return (f"{steps} steps at a learning rate of {S.aug_lr or S.lr:g} take the range from "
            f"{S.init_magnitude * augnet.OPS['rotate'].scale:.2f} rad to at most about {top:.2f} rad")


def report_angle_ranges(run, S: Sprites, ranges: dict) -> tuple[pd.DataFrame, dict]:
    """Beyond the paper (chapter E1): the rotation a layer offering rotate alone learned on sprites of each
    data range (:func:`invlib.papers.e.experiments.train_angle_ranges`), beside the data's own range and the
    largest label-preserving rotation, ``90 - range`` degrees. Logs them; returns the table and the facts.

    Example
    -------
    >>> from invlib import results
    >>> st = lambda rad: {"layer0": {"rotate": dict(weight=1.0, magnitude=rad / math.pi, max_value=rad)}}
    >>> run = results.Run("demo", "smoke")
    >>> table, facts = report_angle_ranges(run, None, {45.0: [dict(state=st(0.8))], 30.0: [dict(state=st(1.0))]})
    >>> table["nearer to"].tolist()
    ['both (equal at 45 degrees)', 'label-preserving range']
    """
    rows = []
    for angle, h in ranges.items():
        learned, data_rad, safe = max_rotation(h[-1]["state"]), math.radians(angle), math.radians(90 - angle)
        nearer = ("both (equal at 45 degrees)" if angle == 45 else
                  "data range" if abs(learned - data_rad) < abs(learned - safe) else "label-preserving range")
        rows.append({"data range (degrees)": angle, "data range (rad)": round(data_rad, 3),
                     "label-preserving (rad)": round(safe, 3), "learned (rad)": round(learned, 3),
                     "nearer to": nearer})
        run.log(f"rotate_alone/data{angle:g}deg/rotation_rad", learned,
                note=f"data range {data_rad:.3f} rad, label-preserving {safe:.3f} rad")
        run.log(f"rotate_alone/data{angle:g}deg/rotation_by_epoch", [max_rotation(r["state"]) for r in h])
    table = pd.DataFrame(rows)
    facts = {"e1_ranges": "; ".join(f"data within {r['data range (degrees)']:g}°: learned {r['learned (rad)']:.2f} "
                                    f"rad (data {r['data range (rad)']:.2f}, label-preserving "
                                    f"{r['label-preserving (rad)']:.2f}); nearer to: {r['nearer to']}"
                                    for r in rows) or "not run at this profile"}
    return table, facts


def plot_rotation(hist: dict, lines: dict[str, float] | None = None):
    """Figure 3: the largest rotation of every model after each epoch, against the true π/4 (or the dashed
    reference ``lines``, ``{label: radians}``).

    Example
    -------
    >>> st = {"layer0": {"rotate": dict(weight=1.0, magnitude=0.25, max_value=0.785)}}
    >>> plot_rotation({"AugNet": [dict(epoch=0, state=st)]}).get_ylabel()
    'largest rotation (rad)'
    """
    import matplotlib.pyplot as plt

    ax = plt.subplots(figsize=(7, 4))[1]
    for name, h in hist.items():
        ax.plot([r["epoch"] + 1 for r in h], [max_rotation(r["state"]) for r in h], marker="o", ms=3, label=name,
                ls=":" if "no shear" in name else "-")
    for i, (label, rad) in enumerate((lines or {"π/4 (true)": TRUE_ANGLE}).items()):
        ax.axhline(rad, color="k" if i == 0 else f"C{len(hist) + i}", ls="--", lw=1, label=label)
    ax.set(xlabel="epoch", ylabel="largest rotation (rad)", title="Learned rotation range")
    ax.legend(fontsize=8)
    return ax


def plot_layers(states: dict):
    """Figure 4: weight and magnitude of every op of layer 0, one panel per ``{title: state}``.

    Example
    -------
    >>> st = {"layer0": {"rotate": dict(weight=0.9, magnitude=0.25, max_value=0.785)}}
    >>> len(plot_layers({"AugNet": st, "other": st}))
    2
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(states), figsize=(4.2 * len(states), 3.4), sharey=True, squeeze=False)
    for ax, (name, st) in zip(axes[0], states.items()):
        ops = st["layer0"]
        pos = np.arange(len(ops))
        ax.bar(pos - 0.2, [o["weight"] for o in ops.values()], 0.4, label="weight")
        ax.bar(pos + 0.2, [o["magnitude"] for o in ops.values()], 0.4, label="magnitude")
        ax.set_xticks(pos, list(ops), rotation=45, ha="right")
        ax.set_title(name, fontsize=9)
    axes[0, 0].legend()
    fig.tight_layout()
    return list(axes[0])


def plot_ops_over_training(h: list[dict], op: str | None = None, axes=None, label: str | None = None, **style):
    """Weights and magnitudes of layer 0's ops (or of ``op`` alone) over the epochs of one history.

    Example
    -------
    >>> st = {"layer0": {"rotate": dict(weight=0.9, magnitude=0.25, max_value=0.785)}}
    >>> [ax.get_ylabel() for ax in plot_ops_over_training([dict(epoch=0, state=st)])]
    ['weight', 'magnitude']
    """
    import matplotlib.pyplot as plt

    axes = axes if axes is not None else plt.subplots(1, 2, figsize=(10, 3.4))[1]
    ep = [r["epoch"] + 1 for r in h]
    for o in [op] if op else h[0]["state"]["layer0"]:
        for ax, what in zip(axes, ("weight", "magnitude")):
            ax.plot(ep, [r["state"]["layer0"][o][what] for r in h], label=label or o, **style)
    axes[0].set(xlabel="epoch", ylabel="weight")
    axes[1].set(xlabel="epoch", ylabel="magnitude")
    if op is None:
        axes[1].legend(fontsize=8)
    return list(axes)


# ----------------------------------------------------------------------------- E2: sinusoids
def report_sinusoids(run, S: Sinusoids, hist: dict, alone: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log chapter E2's metrics, record its claim; return the per-seed table and the facts its prose quotes.

    Example
    -------
    >>> from torch import nn
    >>> from invlib import results
    >>> from invlib.papers.e.experiments import settings
    >>> three, alone = (augnet.augnet(nn.Identity(), ops=o, fs=100) for o in ("signal", ["frequency_shift"]))
    >>> run = results.Run("demo", "smoke")
    >>> table, seeds, facts = report_sinusoids(run, settings("smoke", experiment="sinusoids"),
    ...                                        {0: [dict(epoch=0, state=three.state(), test_acc=0.5)]},
    ...                                        {0: [dict(epoch=0, state=alone.state())]})
    >>> table.loc[0, "selected"], run.claims["fig5/frequency_shift_selected"]["verdict"]  # untrained; one seed
    ('frequency_shift', 'inconclusive at this budget')
    """
    rows = []
    for s, h in hist.items():
        st, sel = h[-1]["state"]["layer0"], augnet.selected(h[-1]["state"])["layer0"]
        hz, w = st["frequency_shift"]["max_value"], st["frequency_shift"]["weight"]
        rows.append({"seed": s, "selected": sel[0], "weight": sel[1], "shift range (Hz)": hz, "shift weight": w,
                     "test acc": h[-1]["test_acc"]})
        run.log(f"seed{s}/selected", sel[0], paper="frequency_shift")
        run.log(f"seed{s}/shift_hz", hz, paper=TRUE_HZ)
        run.log(f"seed{s}/shift_weight", w)
        run.log(f"seed{s}/test_acc", h[-1]["test_acc"])
        run.log(f"seed{s}/shift_hz_by_epoch", [_shift_hz(r) for r in h])
        run.log(f"seed{s}/final_state", st)
    for s, h in alone.items():
        run.log(f"alone/seed{s}/shift_hz", _shift_hz(h[-1]), paper=TRUE_HZ)
        run.log(f"alone/seed{s}/shift_hz_by_epoch", [_shift_hz(r) for r in h])
    alone_hz = float(np.median([_shift_hz(h[-1]) for h in alone.values()]))
    alone_ok = sum(abs(_shift_hz(h[-1]) - TRUE_HZ) <= HZ_TOL[0] for h in alone.values())
    run.log("alone/median_shift_hz", alone_hz, paper=TRUE_HZ, note="beyond the paper: frequency shift as the only op")
    run.log("alone/seeds_within_0.15_hz", alone_ok, note=f"of {len(alone)}")  # the key of earlier results
    table = pd.DataFrame(rows).set_index("seed")
    shift_hz, shift_w = float(np.median(table["shift range (Hz)"])), float(np.median(table["shift weight"]))
    met = [_met(h[-1]["state"], "frequency_shift", TRUE_HZ, HZ_TOL[0]) for h in hist.values()]
    n_ok, ev = sum(met), selection_evidence(met)
    n_sel = int((table["selected"] == "frequency_shift").sum())
    run.log("median_shift_hz", shift_hz, paper=TRUE_HZ, note="median over seeds")
    run.log("median_shift_weight", shift_w, note="median over seeds")
    run.log("criterion_met", ev.verdict == "reproduced",
            note=f"most seeds: frequency shift's weight >= {SELECTED:g}, range within {HZ_TOL[0]:g} Hz of 0.5 (the "
                 "share's 95 % Wilson interval above one half)")
    run.log("seeds_selecting_frequency_shift", n_sel, note=f"of {len(table)}")
    run.claim("fig5/frequency_shift_selected", "One AugNet layer of frequency shift, FT surrogate and noise selects "
              "frequency shift and learns a range of about ±0.5 Hz.", paper="frequency_shift, 0.5 Hz",
              ours=f"met on {n_ok} of {len(table)} seeds (median weight {shift_w:.2f}, median range "
              f"{shift_hz:.3f} Hz)", criterion=f"share of seeds on which frequency shift's weight >= {SELECTED:g} and "
              f"its range within {HZ_TOL[0]:g} Hz of 0.5 Hz: 95 % Wilson interval over seeds above {MOST[0]:g} (most "
              f"seeds); from {N_MIN} seeds", evidence=ev)
    ours = table.reset_index()[["seed", "selected", "weight"]].assign(
        max_value=[augnet.selected(h[-1]["state"])["layer0"][2] for h in hist.values()])
    theirs = authors_runs("sinusoids", epochs=S.epochs) if (S.n_train, S.n_test, S.batch_size, S.widths) == (
        400, 200, 32, (2, 2)) else authors_runs("sinusoids", epochs=-1)
    seeds_table = report_same_as_authors(run, "fig5/same_as_authors", "frequency_shift", ours, theirs,
                                       f"the paper's sinusoids and CNN trunk, {S.epochs} epochs", truth=TRUE_HZ,
                                       tol=HZ_TOL[0])
    free_gain = S.reg * 1.0 - S.weight_decay / 2  # an operation harmless at magnitude 1, at full weight
    mu_true = TRUE_HZ / augnet.OPS["frequency_shift"].scale
    shift_gain = S.reg * mu_true - S.weight_decay / 2 * mu_true**2  # frequency shift held to 0.5 Hz
    facts = {
        "e2_alone": f"{alone_hz:.2f} Hz, within {HZ_TOL[0]:g} Hz of the true 0.5 Hz on {alone_ok} of {len(alone)} "
                    "seeds",
        "e2_hz": f"{shift_hz:.2f} Hz (median weight {shift_w:.2f})",
        "e2_verdict": phrase(ev, reproduced="The paper's claim holds here: the share's interval lies above one "
                             "half.", not_reproduced="The paper's claim fails here: the share's interval lies below "
                             "one half."),
        "e2_nok": f"{n_ok} of {len(table)}",
        "e2_nsel": f"{n_sel} of {len(table)}",
        "e2_authors": _authors_fact(run.claims["fig5/same_as_authors"], seeds_table),
        "e2_obj": f"an operation that costs nothing at magnitude 1 lowers the loss by {free_gain:.3f}, frequency "
                  f"shift held to 0.5 Hz (μ = {mu_true:.2f}) by {shift_gain:.3f}",
    }
    return table.round(3), seeds_table, facts


def plot_shift(hist: dict, alone: dict):
    """Figures 5 and B.1: the learned frequency-shift range (solid: three ops; dotted: shift alone), and the
    weights and magnitudes of the three ops (solid: shift, dashed: FT surrogate, dotted: noise), per seed.

    Example
    -------
    >>> ops = {o: dict(weight=1 / 3, magnitude=0.1, max_value=0.2) for o in augnet.GROUPS["signal"]}
    >>> h = [dict(epoch=0, state={"layer0": ops})]
    >>> len(plot_shift({0: h}, {0: h}))
    3
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    for s, h in hist.items():
        axes[0].plot([r["epoch"] + 1 for r in h], [_shift_hz(r) for r in h], label=f"seed {s}")
        for op, ls in zip(h[0]["state"]["layer0"], ["-", "--", ":"]):
            plot_ops_over_training(h, op, axes[1:], ls=ls, color=f"C{s}", label=f"{op}, seed {s}")
    for s, h in alone.items():
        axes[0].plot([r["epoch"] + 1 for r in h], [_shift_hz(r) for r in h], ls=":", color=f"C{s}",
                     label=f"shift alone, seed {s}")
    axes[0].axhline(TRUE_HZ, color="k", ls="--", lw=1, label="0.5 Hz (true)")
    axes[0].set(xlabel="epoch", ylabel="largest shift (Hz)", title="frequency shift range")
    axes[1].set_title("weights (solid: shift, dashed: FT surrogate, dotted: noise)", fontsize=9)
    axes[2].set_title("magnitudes", fontsize=9)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return list(axes)


def plot_curves(hist: dict, test_key: str = "test_acc"):
    """Figures B.2 and B.4: training loss and training / test accuracy (``test_key``) per epoch, per run; the test
    accuracy at the epochs whose record holds it (a marker where that is one epoch, e.g. the last).

    Example
    -------
    >>> h = [dict(epoch=0, loss=1.0, train_acc=0.5), dict(epoch=1, loss=0.8, train_acc=0.6, test_acc=0.4)]
    >>> [ax.get_ylabel() for ax in plot_curves({"seed 0": h})]
    ['loss (cross-entropy + penalty)', 'accuracy']
    """
    import matplotlib.pyplot as plt

    axes = plt.subplots(1, 2, figsize=(12, 3.6))[1]
    for i, (name, h) in enumerate(hist.items()):
        ep = [r["epoch"] + 1 for r in h]
        axes[0].plot(ep, [r["loss"] for r in h], color=f"C{i}", label=name)
        axes[1].plot(ep, [r["train_acc"] for r in h], color=f"C{i}", label=f"train, {name}")
        tested = [r for r in h if test_key in r]
        axes[1].plot([r["epoch"] + 1 for r in tested], [r[test_key] for r in tested], color=f"C{i}", ls="--",
                     marker="o" if len(tested) == 1 else None, label=f"test, {name}")
    axes[0].set(xlabel="epoch", ylabel="loss (cross-entropy + penalty)")
    axes[1].set(xlabel="epoch", ylabel="accuracy")
    axes[1].legend(fontsize=7)
    return list(axes)


# ----------------------------------------------------------------------------- E3: capacity
def report_capacity(run, S: Capacity, res: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Log chapter E3's metrics, record its claims; return the (trunk x method) table of median invariance and
    accuracy, the trunks the authors' code was also run on (their AugNet's range and invariance per seed
    beside ours, :func:`authors_runs`) and the facts its prose quotes.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.e.experiments import settings
    >>> res = pd.DataFrame([dict(depth=1, width=w, params=p, method=m, acc=0.9, median=v, q25=v - 0.1, q75=v,
    ...                          mean=v, shift_hz=0.4 if m == "AugNet" else None)
    ...                     for w, p, m, v in [(4, 4024, "baseline", 0.1), (4, 4024, "oracle augmentation", 0.5),
    ...                                        (4, 4024, "AugNet", 0.95), (64, 64324, "baseline", 0.7),
    ...                                        (64, 64324, "oracle augmentation", 0.9), (64, 64324, "AugNet", 0.97)]])
    >>> run = results.Run("demo", "smoke")
    >>> table, authors, facts = report_capacity(run, settings("smoke", experiment="capacity"), res)
    >>> [c["verdict"] for c in run.claims.values()], facts["e3_aug"]  # one model per trunk: a single seed
    (['inconclusive at this budget', 'inconclusive at this budget'], '0.95–0.97')
    """
    for r in res.to_dict("records"):
        key = f"{r['method'].split()[0].lower()}/d{r['depth']}_w{r['width']}"
        run.log(f"{key}/invariance_median", r["median"])
        run.log(f"{key}/invariance_q25_q75", [r["q25"], r["q75"]])
        run.log(f"{key}/test_acc", r["acc"])
        if r["method"] == "AugNet":
            run.log(f"{key}/shift_hz", r["shift_hz"], paper=TRUE_HZ)
    by = res.groupby("method", sort=False)
    aug, orc = by.get_group("AugNet"), by.get_group("oracle augmentation").sort_values("params")
    aug_min, flat = aug["median"].min(), aug["median"].max() - aug["median"].min()
    run.log("augnet_min_invariance", aug_min, note="paper: close to 1 for every trunk")
    run.log("oracle_min_invariance", orc["median"].min(), note="paper: lower for the smallest trunks")
    run.log("augnet_spread", flat)
    trunks = [f"depth {d}, width {w}" for d, w in zip(aug["depth"], aug["width"])]
    ev_any = decide_parts({t: decide([m], boundary=NEAR_ONE[0], reason=NEAR_ONE[1], unit="seed", n_min=N_MIN)
                           for t, m in zip(trunks, aug["median"])},
                          reason="every trunk (a conjunction: reproduced only if every trunk's part is)")
    run.claim("fig6/augnet_invariance_any_capacity", "AugNet makes every trunk almost perfectly invariant to the "
              "true shift, whatever its capacity.", paper="≈ 1 for every trunk",
              ours=f"median invariance {aug_min:.3f}–{aug_min + flat:.3f} over {len(aug)} trunks (one model each)",
              criterion=f"per trunk, AugNet's median invariance over the test signals, one value per seed (one "
              f"seed here): 95 % t-interval over seeds above {NEAR_ONE[0]:g}, from {N_MIN} seeds; every trunk must "
              "hold (parts)", evidence=ev_any)
    sizes = orc["params"].nunique() > 1
    ev_grow = (decide([orc["median"].iloc[-1] - orc["median"].iloc[0]], boundary=ORDER[0], reason=ORDER[1],
                      unit="seed", n_min=N_MIN) if sizes else not_measurable("the run has one trunk size"))
    run.claim("fig6/oracle_invariance_grows", "With the oracle augmentation, smaller trunks are less invariant than "
              "larger ones.", paper="grows with capacity",
              ours=f"{orc['median'].iloc[0]:.3f} (smallest) vs {orc['median'].iloc[-1]:.3f} (largest)",
              criterion="the largest trunk's median invariance minus the smallest's, paired by seed (one seed here): "
                        f"95 % t-interval over seeds above {ORDER[0]:g}; from {N_MIN} seeds (needs two trunk sizes)",
              evidence=ev_grow)
    shifts = aug["shift_hz"]
    n_zero = int((shifts < 0.05).sum())
    run.log("augnet_trunks_with_collapsed_range", n_zero, note=f"of {len(shifts)}: learned shift below 0.05 Hz")
    facts = {
        "e3_aug": f"{aug_min:.2f}–{aug_min + flat:.2f}",
        "e3_orc": f"{orc['median'].iloc[0]:.2f} for the smallest trunk and {orc['median'].iloc[-1]:.2f} for the "
                  "largest",
        "e3_grow": phrase(ev_grow, reproduced="It grows with capacity, as the paper reports.",
                          not_reproduced="It does not grow with capacity here, unlike the paper."),
        "e3_any": phrase(ev_any, reproduced="The paper's claim holds: every trunk's median invariance clears "
                         f"{NEAR_ONE[0]:g}.", partly=f"Some trunks clear {NEAR_ONE[0]:g} and some do not.",
                         not_reproduced=f"No trunk's median invariance clears {NEAR_ONE[0]:g}.",
                         inconclusive=f"One model per trunk cannot decide it: a claim about what training does needs "
                                      f"{N_MIN} seeds per trunk." if ev_any.n < N_MIN else
                                      f"This run cannot decide it at its budget ({ev_any.text()})."),
        "e3_shift": f"{shifts.min():.2f}–{shifts.max():.2f} Hz", "e3_zero": f"{n_zero} of {len(shifts)}",
    }
    table = res.pivot_table(index=["depth", "width", "params"], columns="method", values=["median", "acc"])
    theirs = authors_runs("capacity", method="AugNet", epochs=S.epochs)
    side = []
    for (d, w), g in (theirs.groupby(["depth", "width"]) if len(theirs) else []):
        mine = res[(res["depth"] == d) & (res["width"] == w) & (res["method"] == "AugNet")]
        side.append({"trunk": f"depth {d}, width {w}", "seeds": ", ".join(map(str, sorted(g["seed"]))),
                     "authors: shift range (Hz)": ", ".join(f"{v:.2f}" for v in g.sort_values("seed")["shift_hz"]),
                     "authors: invariance": ", ".join(f"{v:.2f}" for v in g.sort_values("seed")["invariance_median"]),
                     "ours: shift range (Hz)": round(float(mine["shift_hz"].iloc[0]), 2) if len(mine) else None,
                     "ours: invariance": round(float(mine["median"].iloc[0]), 2) if len(mine) else None})
        collapsed = int((g["shift_hz"] < 0.05).sum())
        run.log(f"authors/d{d}_w{w}/collapsed_seeds", collapsed, note=f"of {len(g)}: their AugNet's shift < 0.05 Hz")
    authors = pd.DataFrame(side)
    facts["e3_authors"] = ("; ".join(f"{r['trunk']}: {r['authors: shift range (Hz)']} Hz" for r in side)
                           if side else "not run at this profile's epochs")
    return table.round(3), authors, facts


def plot_capacity(res: pd.DataFrame):
    """Figure 6: median invariance (with quartiles) and test accuracy against the trunk's parameter count.

    Example
    -------
    >>> res = pd.DataFrame([dict(params=10, method="AugNet", median=0.9, q25=0.8, q75=1.0, acc=0.7)])
    >>> [ax.get_xscale() for ax in plot_capacity(res)]
    ['log', 'log']
    """
    import matplotlib.pyplot as plt

    axes = plt.subplots(1, 2, figsize=(12, 4))[1]
    for i, (method, g) in enumerate(res.groupby("method", sort=False)):
        g = g.sort_values("params")
        axes[0].errorbar(g["params"], g["median"], yerr=[g["median"] - g["q25"], g["q75"] - g["median"]],
                         fmt="o-", capsize=3, label=method, color=f"C{i}")
        axes[1].plot(g["params"], g["acc"], "o-", label=method, color=f"C{i}")
    axes[0].set(xscale="log", xlabel="trunk parameters", ylabel="invariance (Eq. 4), median and quartiles")
    axes[1].set(xscale="log", xlabel="trunk parameters", ylabel="test accuracy")
    axes[0].legend()
    return list(axes)


# ----------------------------------------------------------------------------- E4: images
def learned_table(hist: dict) -> pd.DataFrame:
    """What the augmentation layers learned, one row per (model, layer, op): the selected op of an AugNet
    layer, every generator of Augerino's; ``max_value`` in the op's ``unit`` (:data:`invlib.learned.UNITS`).

    Example
    -------
    >>> st = {"layer0": {"rotate": dict(weight=0.9, magnitude=0.25, max_value=0.785),
    ...                  "shear_x": dict(weight=0.1, magnitude=0.5, max_value=0.15)}}
    >>> learned_table({"AugNet": [dict(state=st)], "trunk": [dict()]})[["op", "unit"]].values.tolist()
    [['rotate', 'radians']]
    """
    out = []
    for name, h in hist.items():
        for layer, ops in (h[-1].get("state") or {}).items():
            every = len(ops) > 1 and all(o["weight"] == 1.0 for o in ops.values())
            for op in ops if every else [max(ops, key=lambda n: ops[n]["weight"])]:
                out.append(dict(model=name, layer=layer, op=op, weight=round(ops[op]["weight"], 3),
                                magnitude=round(ops[op]["magnitude"], 3), max_value=round(ops[op]["max_value"], 3),
                                unit=UNITS[op]))
    return pd.DataFrame(out)


def report_images(run, S: Images, hist: dict) -> tuple[pd.DataFrame, dict]:
    """Log chapter E4's metrics, record its claims (measurable on CIFAR-10 only: the paper's claims are about
    it); return the early-stopped test accuracy per model and the facts the prose quotes.

    Example
    -------
    >>> from invlib import results
    >>> from invlib.papers.e.experiments import image_models, settings
    >>> S = settings("smoke", experiment="images")
    >>> hist = {name: [dict(epoch=0, test_at_best_val=0.5, train_acc=0.6)] for name in image_models(S)}
    >>> run = results.Run("demo", "smoke")
    >>> table, facts = report_images(run, S, hist)
    >>> {c["verdict"] for c in run.claims.values()}, len(run.claims)
    ({'not measurable at this profile'}, 3)
    """
    for name, h in hist.items():
        key = _key(name)
        run.log(f"{key}/test_acc_early_stopped", h[-1]["test_at_best_val"])
        run.log(f"{key}/test_acc_by_epoch", [r["test_at_best_val"] for r in h])
        run.log(f"{key}/train_acc_by_epoch", [r["train_acc"] for r in h])
        if h[-1].get("state"):
            run.log(f"{key}/final_state", h[-1]["state"])
    final = {name: h[-1]["test_at_best_val"] for name, h in hist.items()}
    best = max(final, key=final.get)
    base = final["no augmentation"]
    run.log("best_model", best, paper="AugNet, 3 layers (tied with fixed augmentation)")
    why = f" (the paper's claims are about CIFAR-10; measurable on it only, this run: {S.dataset})"
    one = f"; one seed here (seed {S.seed}), from {N_MIN} seeds"

    def gain(effect: float, boundary=ORDER) -> Evidence:  # one seed's paired difference, or not measurable
        if S.dataset != "cifar10":
            return not_measurable(f"the paper's claims are about CIFAR-10; this run trains on {S.dataset}")
        return decide([effect], boundary=boundary[0], reason=boundary[1], unit="seed", n_min=N_MIN)

    pair = ("Augerino", "AugNet, 1 layer")
    ev_beat = gain(0.0) if S.dataset != "cifar10" else decide_parts({m: gain(final[m] - base) for m in pair})
    run.claim("fig7/augerino_and_augnet1_beat_baseline", "Augerino and one-layer AugNet both beat the trunk "
              "without augmentation.", paper="both beat it", ours={m: round(final[m], 4) for m in final},
              criterion="each one's early-stopped test accuracy minus no augmentation's, paired by seed: 95 % "
                        f"t-interval over seeds above {ORDER[0]:g}, both must hold{one}" + why, evidence=ev_beat)
    others = max(v for m, v in final.items() if m != "AugNet, 3 layers")
    run.claim("fig7/augnet3_top", "Three-layer AugNet reaches the top accuracy (tied with fixed augmentation).",
              paper="AugNet, 3 layers ≈ fixed augmentation, the best", ours=f"{best} best ({final[best]:.4f}); "
              f"AugNet, 3 layers {final['AugNet, 3 layers']:.4f}",
              criterion="AugNet, 3 layers' early-stopped test accuracy minus the best of the other models, paired by "
                        f"seed: 95 % t-interval over seeds above -{TIED[0]:g}{one}" + why,
              evidence=gain(final["AugNet, 3 layers"] - others, (-TIED[0], TIED[1])))
    first = {m: next((r["epoch"] + 1 for r in h if r["test_at_best_val"] >= 0.8), None) for m, h in hist.items()}
    aug = min((e for m, e in first.items() if m.startswith("AugNet") and e), default=None)
    rest = min((e for m, e in first.items() if not m.startswith("AugNet") and e), default=None)
    run.claim("fig7/augnet_faster", "AugNet passes 80% test accuracy in 5x fewer epochs than the baselines.",
              paper="5x fewer epochs", ours=f"first epoch at 80%: {first}",
              criterion="the first baseline's epochs to 80 % over the first AugNet's (NaN unless both pass it): 95 % "
                        f"t-interval over seeds above {FASTER[0]:g}{one}" + why,
              evidence=gain(rest / aug if aug and rest else math.nan, FASTER))
    facts = {"e4_best": f"{best} ({final[best]:.3f})",
             "e4_beats": f"reached {final[pair[0]]:.3f} and {final[pair[1]]:.3f} against {base:.3f} for"}
    return pd.Series(final, name="early-stopped test accuracy").round(3).to_frame(), facts


def plot_accuracy(hist: dict):
    """Figures 7 and B.4: early-stopped test accuracy and training accuracy per epoch, per model.

    Example
    -------
    >>> h = [dict(epoch=0, test_at_best_val=0.5, train_acc=0.6)]
    >>> [ax.get_xlabel() for ax in plot_accuracy({"trunk": h})]
    ['epoch', 'epoch']
    """
    import matplotlib.pyplot as plt

    axes = plt.subplots(1, 2, figsize=(12, 4))[1]
    for name, h in hist.items():
        ep = [r["epoch"] + 1 for r in h]
        axes[0].plot(ep, [r["test_at_best_val"] for r in h], "o-", ms=3, label=name)
        axes[1].plot(ep, [r["train_acc"] for r in h], "o-", ms=3, label=name)
    axes[0].set(xlabel="epoch", ylabel="test accuracy at best validation so far")
    axes[1].set(xlabel="epoch", ylabel="training accuracy (augmented inputs)")
    axes[0].legend(fontsize=8)
    return list(axes)
