"""What chapters E1 to E4 show: the metrics they log, the paper's claims with computed verdicts, the
"paper vs this run" tables, the numbers their prose quotes and their figures.

Each ``report_*(run, S, ...)`` takes the :class:`invlib.results.Run` of a chapter, its settings (from
:func:`invlib.papers.e.experiments.settings`) and what its ``train_*`` function returned; it logs the metrics
(keys kept stable so that results of different runs compare), computes the effects of each claim of the paper
the chapter tests and records them with :meth:`invlib.results.Run.claim` against the claim's declaration in
:mod:`invlib.papers.e.protocol` (which decides it), and returns a table and ``facts``, ``{glue name: Markdown
text}`` for the prose. The ``plot_*`` functions draw the paper's figures from the histories and return their axes.

AugNet's selection of the right operation is the share of seeds that meet the paper's result (a Wilson interval,
:func:`selection_share`); Augerino, the ablations, E3's trunks and E4's models are trained once and read
"inconclusive at this budget".

Example
-------
>>> from invlib import results
>>> from invlib.papers.e.experiments import image_models, settings
>>> S = settings("cpu", experiment="images")
>>> hist = {name: [dict(epoch=0, test_at_best_val=0.5, train_acc=0.6)] for name in image_models(S)}
>>> run = results.Run("demo", "cpu")
>>> _ = report_images(run, S, hist)
>>> run.claims_table().frame["verdict"].unique().tolist()  # the paper's CIFAR-10 claims, on Fashion-MNIST
['not measurable at this profile']
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ... import authors
from ...learned import UNITS, augnet, max_rotation
from ...pages import count
from ...protocol import decide
from ...results import exact, not_measurable, phrase, share_interval
from .experiments import (
    ABLATIONS,
    TRUE_ANGLE,
    TRUE_HZ,
    Capacity,
    Images,
    Sinusoids,
    Sprites,
    _shift_hz,
    history_seconds,
)
from .protocol import ANGLE_TOL, BUDGET, HZ_TOL, N_MIN, PROTOCOL, SELECTED

COLLAPSED_HZ = 0.05  # E3: a learned shift range below it has collapsed (AugNet then trains without augmentation)


# ----------------------------------------------------------------------------- helpers
def _key(name: str) -> str:
    """A model's name as a metric key: ``"AugNet, no regulariser"`` -> ``"augnet/no_regulariser"``."""
    return name.lower().replace(", ", "/").replace(" ", "_").replace("'", "")


def quietly():
    """A context in which the training loops' progress lines are not printed: on a chapter's page, the figures and
    tables that follow show what those lines said.

    Example
    -------
    >>> with quietly():
    ...     print("epoch 1")
    """
    return contextlib.redirect_stdout(io.StringIO())


def _label(op: str) -> str:
    """An operation's name for a figure's axis: ``"translate_x"`` -> ``"translate x"``."""
    return op.replace("_", " ")


def _epochs(*axes) -> None:
    """Whole epochs on the x axis of each of ``axes``."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _met(state: dict, op: str, target: float, tol: float) -> bool:
    """The paper's result on one run: ``op`` selected (weight >= :data:`SELECTED`) with its range within ``tol`` of
    ``target``."""
    ops = state["layer0"]
    return op in ops and ops[op]["weight"] >= SELECTED and abs(ops[op]["max_value"] - target) <= tol


def selection_share(met: list[bool]):
    """The effect of a selection claim from whether each seed met it: the share of seeds with its Wilson interval,
    made at the level the claim's declaration needs (a function ``level -> Interval``).

    Example
    -------
    >>> share = PROTOCOL["fig3/augnet_selects_rotate"].part("on most seeds")  # its premise aside
    >>> for k in (6, 5, 1, 0):
    ...     print(k, decide(share, selection_share([True] * k + [False] * (6 - k))).verdict)
    6 reproduced
    5 inconclusive at this budget
    1 inconclusive at this budget
    0 not reproduced
    >>> decide(share, selection_share([True, True])).text()
    '+1 [+0.342, +1], 2 seeds; > 0.5; needs >= 3 seeds'
    """
    k, n = sum(map(bool, met)), len(met)
    return lambda level: share_interval(k, n, level)


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
                           setting: str, truth: float | None = None, tol: float = ANGLE_TOL) -> pd.DataFrame:
    """Record the claim ``cid`` (declared in :mod:`invlib.papers.e.protocol`): our AugNet selects ``true_op`` as often
    as the authors' code does on the same ``setting`` (named in our side's text) and seeds (verdict:
    :func:`invlib.authors.record_same_rate`, an equivalence test: the 90 % Newcombe interval of the difference of the
    two rates within +-:data:`invlib.authors.SAME_RATE_MARGIN`, from 3 seeds a side). ``ours`` and ``theirs`` hold
    one row per seed with ``seed, selected, weight, max_value`` (the selected op's); the claim is not measurable when
    ``theirs`` is empty (their code was not run at this setting). With ``truth``, both sides also say on how many
    seeds the selected ``true_op``'s range lies within ``tol`` of it. Returns the seeds side by side.

    Example
    -------
    >>> from invlib import results
    >>> ours = pd.DataFrame(dict(seed=[0, 1], selected=["rotate", "shear_x"], weight=[0.9, 0.95],
    ...                          max_value=[0.8, 0.3]))
    >>> run = results.Run("demo", "smoke")
    >>> theirs = ours.assign(selected="rotate", commit="2c2ee6b8", date="2026-11-23")
    >>> table = report_same_as_authors(run, "fig3/same_as_authors", "rotate", ours, theirs, "demo setting")
    >>> run.claims["fig3/same_as_authors"]["verdict"]  # two seeds cannot show two rates the same
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
    authors.record_same_rate(run, PROTOCOL[cid], (k_o, len(ours)), (k_t, len(theirs)), commit, date,
                             ours_text=f"{close(ours)} ({setting})", theirs_text=close(theirs))
    run.log(f"{cid}/authors_selected", theirs["selected"].tolist(), note=f"seeds {theirs['seed'].tolist()}")
    table = authors.side_by_side(theirs, ours, {"selected": "selected", "weight": "weight",
                                                "max_value": "largest value"})
    return table.round(3)


def _authors_fact(claim: dict, seeds: pd.DataFrame, true_op: str) -> str:
    """A short phrase for the prose: how often the authors' code and ours selected ``true_op`` on the same seeds
    (the verdict and its criterion are in the claims table).

    Example
    -------
    >>> seeds = pd.DataFrame({"authors: selected": ["rotate", "shear_x"], "ours: selected": ["rotate", "rotate"]})
    >>> _authors_fact({"verdict": "inconclusive at this budget"}, seeds, "rotate")
    'their code selected `rotate` on 1 of 2 seeds (`rotate`, `shear_x`), ours on 2 of 2'
    """
    if claim["verdict"] == "not measurable at this profile":
        return "their code was not run at this profile's setting, so there is nothing to compare"
    theirs, ours = seeds["authors: selected"].dropna().tolist(), seeds["ours: selected"].dropna().tolist()
    return (f"their code selected `{true_op}` on {theirs.count(true_op)} of {len(theirs)} seeds "
            f"({', '.join(f'`{t}`' for t in theirs)}), ours on {ours.count(true_op)} of {len(ours)}")


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
    met = [_met(final[n], "rotate", true_angle, ANGLE_TOL) for n in seed_runs]
    rot_ranges = [max_rotation(final[n]) for n, p in zip(seed_runs, picks) if p == "rotate"]
    a = final["AugNet"]
    rot_w, rot_rad = a["layer0"]["rotate"]["weight"], max_rotation(a)
    sel_name, sel_w, _ = _pick(a)
    none_rad, aug_rad = max_rotation(final["AugNet, no regulariser"]), max_rotation(final["Augerino"])
    start_rad = S.init_magnitude * math.pi
    run.log("augnet/selected_over_seeds", picks, note=f"seeds {seeds}")
    run.log("augnet/criterion_met_over_seeds", sum(met), note=f"of {len(met)} seeds")
    run.log("augnet_criterion_met", met[0], note=f"seed {S.seed}: rotate weight >= {SELECTED:g} and range within "
                                                 f"{ANGLE_TOL:g} rad of the data's {true_angle:.3f} rad")
    room = exact(budget_room(S))  # the premise of the claims on AugNet's range: a number of the settings
    share = selection_share(met)
    effects = {"on most seeds": share, BUDGET: room}
    ev = decide(PROTOCOL["fig3/augnet_selects_rotate"], effects)
    run.claim(PROTOCOL["fig3/augnet_selects_rotate"], effects=effects,
              ours=f"met on {sum(met)} of {len(met)} seeds (seed {S.seed}: {sel_name}, weight {sel_w:.2f}; "
              f"rotation {rot_rad:.3f} rad)")
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
    abl_seeds = [S.seed, *S.ablation_seeds]
    runs_of = {name: [name] + [f"{name}, seed {s}" for s in abl_seeds[1:]] for name in ABLATIONS}
    aug_rads, none_rads, ar_states = ([max_rotation(final[n]) for n in runs_of["Augerino"]],
                                      [max_rotation(final[n]) for n in runs_of["AugNet, no regulariser"]],
                                      [final[n] for n in runs_of["AugNet, Augerino's regulariser"]])
    effects = {"fig3/augerino_rotation": aug_rads if S.max_angle == 45 else not_measurable(  # one run per seed
                   f"the paper's claim is about sprites within π/4; this run's lie within {S.max_angle:g} degrees"),
               "fig3/no_regulariser_collapses": {"shrinks": none_rads, BUDGET: room},
               "fig4/augerino_regulariser_misses": {"on most seeds": selection_share(
                   [_met(st, "rotate", true_angle, ANGLE_TOL) for st in ar_states]), BUDGET: room}}
    over = f" (seeds {', '.join(map(str, abl_seeds))})" if len(abl_seeds) > 1 else ""
    rads = lambda v: ", ".join(f"{r:.3f}" for r in v) + " rad" + over  # noqa: E731
    texts = dict(zip(effects, (rads(aug_rads) if over else aug_rad, rads(none_rads) if over else none_rad,
                               "selects " + ", ".join(_pick(st)[0] for st in ar_states) + "; largest rotation "
                               + rads([max_rotation(st) for st in ar_states]))))
    ev_aug, ev_none, ev_miss = (decide(PROTOCOL[cid], effect) for cid, effect in effects.items())
    for cid, effect in effects.items():
        run.claim(PROTOCOL[cid], ours=texts[cid], effects=effect)
    run.replicates("extra_seeds", [history_seconds(hist[n]) for n in seed_runs],
                   ["fig3/augnet_selects_rotate", "fig3/same_as_authors"],
                   note="a seed: one run of the paper's AugNet (its epochs' training seconds); extra_seeds are the "
                        "seeds besides seed")
    run.replicates("ablation_seeds", [sum(history_seconds(hist[runs_of[name][k]]) for name in ABLATIONS)
                                      for k in range(len(abl_seeds))],
                   ["fig3/augerino_rotation", "fig3/no_regulariser_collapses", "fig4/augerino_regulariser_misses"],
                   note="a seed: one run each of Augerino and of AugNet without a regulariser and with Augerino's "
                        "(their epochs' training seconds); ablation_seeds are the seeds besides seed")
    when = ", ".join(f"{r:.2f}" for r in rot_ranges)
    facts = {
        "e1_seeds": ", ".join(f"`{p}`" for p in picks), "e1_count": f"{sum(met)} of {len(met)}",
        "e1_rot_when": f"Where rotate was selected, its range ended at {when} rad." if rot_ranges
        else "No seed selected rotate.",
        "e1_sel": f"`{sel_name}` (weight {sel_w:.2f})",
        "e1_w0": rot_w, "e1_rad0": rot_rad, "e1_moved": rot_rad - start_rad,
        "e1_where": (f"short of the {true_angle - ANGLE_TOL:.2f} rad the criterion needs"
                     if rot_rad < true_angle - ANGLE_TOL else
                     f"above the {true_angle + ANGLE_TOL:.2f} rad the criterion allows"
                     if rot_rad > true_angle + ANGLE_TOL else
                     f"within the criterion's {true_angle - ANGLE_TOL:.2f} to {true_angle + ANGLE_TOL:.2f} rad"),
        "e1_verdict": ("inconclusive: its premise is not met" if dict(ev.parts).get(BUDGET) is not None
                       and dict(ev.parts)[BUDGET].verdict == "not reproduced" else ev.verdict),
        "e1_selects": phrase(ev, reproduced="The paper's result holds on most seeds: the share's interval lies above "
                             "one half.", not_reproduced="The paper's result fails on most seeds: the share's interval "
                             "lies below one half."),
        "e1_authors": _authors_fact(run.claims["fig3/same_as_authors"], seeds_table, "rotate"),
        "e1_none": f"{_rads(none_rads, abl_seeds)}, starting from {start_rad:.2f}. " + phrase(
            ev_none, reproduced="This is the collapse toward the identity that both papers report.",
            not_reproduced="It stays above the identity: no collapse here."),
        "e1_none_rads": _rads(none_rads, abl_seeds),
        "e1_ns": _no_shear_fact(final.get("AugNet, no shear ops"), true_angle),
        "e1_aug": f"{_rads(aug_rads, abl_seeds)}. " + phrase(ev_aug, reproduced="Within the tolerance of π/4, as "
                                                            "the paper "
                                                  "reports.", not_reproduced="Outside the tolerance of π/4, unlike "
                                                  "the paper."),
        "e1_aug_rads": _rads(aug_rads, abl_seeds),
        "e1_miss": "selects " + ", ".join(f"`{_pick(st)[0]}`" for st in ar_states) + ", its rotation range "
                   f"{_rads([max_rotation(st) for st in ar_states], abl_seeds)}. " + phrase(
            ev_miss, reproduced="It misses the angle on most seeds, as the paper reports.",
            not_reproduced="It finds the angle on most seeds, unlike the paper."),
        "e1_miss_sel": ", ".join(f"`{_pick(st)[0]}`" for st in ar_states),
        "e1_miss_rads": _rads([max_rotation(st) for st in ar_states], abl_seeds),
    }
    return pd.DataFrame(rows).set_index("model"), seeds_table, facts


def _rads(values: list[float], seeds: list[int]) -> str:
    """Ranges in radians for the prose, with their seeds where there are several.

    Example
    -------
    >>> _rads([0.8], [0]), _rads([0.8, 0.751], [0, 1])
    ('0.80 rad', '0.80, 0.75 rad (seeds 0, 1)')
    """
    out = ", ".join(f"{v:.2f}" for v in values) + " rad"
    return out + (f" (seeds {', '.join(map(str, seeds))})" if len(values) > 1 else "")


def _no_shear_fact(ns: dict | None, true_angle: float) -> str:
    """What AugNet without its two shears learned (``ns``: its final state; None when not run).

    Example
    -------
    >>> _no_shear_fact(None, 0.785)
    'not run at this profile (`shear_ablation=True` adds it: one more AugNet run)'
    """
    if ns is None:
        return "not run at this profile (`shear_ablation=True` adds it: one more AugNet run)"
    near = "within" if _met(ns, "rotate", true_angle, ANGLE_TOL) else "not within"
    return (f"the same layer learns a rotation range of {max_rotation(ns):.2f} rad with weight "
            f"{ns['layer0']['rotate']['weight']:.2f}, {near} {ANGLE_TOL:g} rad of the data's range")


def budget_room(S: Sprites) -> float:
    """How far AugNet's rotation range can move in this run's steps, in radians (:func:`_reach`): the effect of the
    premise :data:`~invlib.papers.e.protocol.BUDGET` of the claims on the range, a number of the settings.

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> round(budget_room(settings("cpu", experiment="sprites")), 3), round(budget_room(settings("paper",
    ...                                                                                   experiment="sprites")), 2)
    (0.377, 2.48)
    """
    steps, start, top = _reach(S)
    return top - start


def _reach(S: Sprites) -> tuple[int, float, float]:
    """How far AugNet's rotation range can travel in this run: Adam moves a parameter by about its learning
    rate per step at most, so ``steps * lr`` of magnitude, times rotate's scale of pi. Returns ``(steps, the range
    at the start, the most it can reach)`` in radians.

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> steps, start, top = _reach(settings("cpu", experiment="sprites"))
    >>> steps, round(start, 3), round(top, 3)
    (240, 0.393, 0.77)
    """
    steps = S.epochs * math.ceil(S.n_train / S.batch_size)
    scale = augnet.OPS["rotate"].scale
    return steps, S.init_magnitude * scale, (S.init_magnitude + steps * (S.aug_lr or S.lr)) * scale


def sprites_numbers(S: Sprites) -> dict:
    """The numbers chapter E1's prose quotes that the settings and the protocol know (glue names ``e1_*``): the run's
    sizes and optimiser, the starting ranges, the criterion's thresholds, how far the rotation range can move in the
    steps run (:func:`_reach`), and what the selective regulariser and the weight decay make of an operation
    (:func:`best_gain`).

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> n = sprites_numbers(settings("cpu", experiment="sprites"))
    >>> n["e1_steps"], round(n["e1_floor"], 3), n["e1_seeds_n"], n["e1_paper_n_train"]
    (240, 0.635, '4 seeds', 10000)
    """
    from torch import nn

    from ...learned import augerino

    paper = type(S)()
    true_angle = math.radians(S.max_angle)
    steps, start, top = _reach(S)
    floor = true_angle - ANGLE_TOL  # the least range that meets the criterion
    free_gain, free_mu = best_gain(1.0, S.reg)  # an operation the trained trunk ignores at any magnitude
    rot_gain, rot_mu = best_gain(true_angle / augnet.OPS["rotate"].scale, S.reg)  # rotate, held to the data's
    return {
        "e1_n_train": S.n_train, "e1_n_test": S.n_test, "e1_size": S.size, "e1_epochs": S.epochs,
        "e1_width": S.widths[0], "e1_lr": S.aug_lr or S.lr, "e1_wd": S.weight_decay,
        "e1_logit": S.init_logit, "e1_translate": S.translate_scale, "e1_augerino_lr": S.augerino_lr,
        "e1_reg": S.reg, "e1_temperature": augnet.AugLayer(["rotate"]).temperature,
        "e1_mu0": S.init_magnitude, "e1_start": start,
        "e1_augerino_start": max_rotation(augerino.augerino(nn.Identity()).state()),
        "e1_copies": inspect.signature(augnet.augnet).parameters["copies"].default,
        "e1_shear": augnet.OPS["shear_x"].scale, "e1_true": true_angle,
        "e1_selected": SELECTED, "e1_tol": ANGLE_TOL, "e1_floor": floor,
        "e1_steps": steps, "e1_top": top, "e1_room": top - start,
        "e1_reachable": (f"That is less than the {start:.2f} rad between the start and the paper's π/4 (or its 0 "
                         "without a regulariser): this run cannot carry the range to the paper's value, so the "
                         "premise of the three claims on AugNet's range is not met, and they are not decided, "
                         "whatever the ranges show. More steps (`epochs`, `n_train`) or a larger learning rate for "
                         "the augmentation (`aug_lr`) give the room the premise asks for." if top - start < start else
                         f"That covers the {start:.2f} rad between the start and the paper's π/4 (or its 0 without "
                         "a regulariser), so the premise of the three claims on AugNet's range is met: a range that "
                         "falls short is the method's, not the budget's."),
        "e1_free_mu": free_mu, "e1_free_gain": free_gain, "e1_rot_mu": rot_mu, "e1_rot_gain": rot_gain,
        "e1_seed": S.seed, "e1_seeds_n": count(1 + len(S.extra_seeds), "seed"),
        "e1_abl_n": count(1 + len(S.ablation_seeds), "seed"),
        "e1_n_min": N_MIN,
        "e1_paper_n_train": paper.n_train, "e1_paper_width": paper.widths[0], "e1_paper_epochs": paper.epochs,
    }


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
    facts = {"e1_ranges": "; ".join(_range_words(r) for r in rows) or "not run at this profile"}
    return table, facts


def _range_words(row: dict) -> str:
    """One data range of :func:`report_angle_ranges` in words: the learned range and which reference it is nearer.

    Example
    -------
    >>> _range_words({"data range (degrees)": 30.0, "data range (rad)": 0.524, "label-preserving (rad)": 1.047,
    ...               "learned (rad)": 1.071, "nearer to": "label-preserving range"})
    "within 30°, 1.07 rad, nearer to the label-preserving range (1.05 rad) than to the data's (0.52 rad)"
    """
    a, learned, data, safe = (row[k] for k in ("data range (degrees)", "learned (rad)", "data range (rad)",
                                               "label-preserving (rad)"))
    if a == 45:
        return f"within {a:g}°, {learned:.2f} rad (both references are {data:.2f} rad)"
    near, far = ((f"data's range ({data:.2f} rad)", f"label-preserving range ({safe:.2f} rad)")
                 if row["nearer to"] == "data range" else
                 (f"label-preserving range ({safe:.2f} rad)", f"data's ({data:.2f} rad)"))
    far = far.replace("label-preserving range", "label-preserving one")
    return f"within {a:g}°, {learned:.2f} rad, nearer to the {near} than to the {far}"


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
    colours, labelled = {}, set()
    for name, h in hist.items():  # a model's other seeds ("<model>, seed k"): thin lines of its colour
        base = name.rsplit(", seed ", 1)[0]
        other = base != name
        colour = colours.setdefault(base, f"C{len(colours)}")
        label = None if other and base in labelled else f"{base}, other seeds" if other else name
        labelled |= {base} if other else set()
        ax.plot([r["epoch"] + 1 for r in h], [max_rotation(r["state"]) for r in h], marker=None if other else "o",
                ms=3, label=label, color=colour, lw=0.8 if other else 1.5, alpha=0.5 if other else 1.0,
                ls=":" if "no shear" in name else "-")
    for i, (label, rad) in enumerate((lines or {"π/4 (true)": TRUE_ANGLE}).items()):
        ax.axhline(rad, color="k" if i == 0 else f"C{len(colours) + i}", ls="--", lw=1, label=label)
    ax.set(xlabel="epoch", ylabel="largest rotation (rad)", title="Learned rotation range")
    ax.legend(fontsize=9)
    _epochs(ax)
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

    fig, axes = plt.subplots(1, len(states), figsize=(min(3.3 * len(states), 10), 3.6), sharey=True, squeeze=False)
    for ax, (name, st) in zip(axes[0], states.items()):
        ops = st["layer0"]
        pos = np.arange(len(ops))
        ax.bar(pos - 0.2, [o["weight"] for o in ops.values()], 0.4, label="weight", color="C0")
        ax.bar(pos + 0.2, [o["magnitude"] for o in ops.values()], 0.4, label="magnitude", color="C1")
        ax.set_xticks(pos, [_label(o) for o in ops], rotation=45, ha="right")
        ax.set_title(name, fontsize=10)
    axes[0, 0].set_ylabel("weight, magnitude (0 to 1)")
    axes[0, 0].legend(fontsize=9)
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
            ax.plot(ep, [r["state"]["layer0"][o][what] for r in h], label=label or _label(o), **style)
    axes[0].set(xlabel="epoch", ylabel="weight")
    axes[1].set(xlabel="epoch", ylabel="magnitude")
    _epochs(*axes)
    if op is None:
        axes[1].legend(fontsize=9)
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
    alone_ok = sum(abs(_shift_hz(h[-1]) - TRUE_HZ) <= HZ_TOL for h in alone.values())
    run.log("alone/median_shift_hz", alone_hz, paper=TRUE_HZ, note="beyond the paper: frequency shift as the only op")
    run.log("alone/seeds_within_0.15_hz", alone_ok, note=f"of {len(alone)}")  # the key of earlier results
    table = pd.DataFrame(rows).set_index("seed")
    shift_hz, shift_w = float(np.median(table["shift range (Hz)"])), float(np.median(table["shift weight"]))
    met = [_met(h[-1]["state"], "frequency_shift", TRUE_HZ, HZ_TOL) for h in hist.values()]
    n_ok, share = sum(met), selection_share(met)
    ev = decide(PROTOCOL["fig5/frequency_shift_selected"], share)
    n_sel = int((table["selected"] == "frequency_shift").sum())
    run.log("median_shift_hz", shift_hz, paper=TRUE_HZ, note="median over seeds")
    run.log("median_shift_weight", shift_w, note="median over seeds")
    run.log("criterion_met", ev.verdict == "reproduced",
            note=f"most seeds: frequency shift's weight >= {SELECTED:g}, range within {HZ_TOL:g} Hz of 0.5 (the "
                 "share's 95 % Wilson interval above one half)")
    run.log("seeds_selecting_frequency_shift", n_sel, note=f"of {len(table)}")
    run.claim(PROTOCOL["fig5/frequency_shift_selected"], effects=share, ours=f"met on {n_ok} of {len(table)} seeds "
              f"(median weight {shift_w:.2f}, median range {shift_hz:.3f} Hz)")
    ours = table.reset_index()[["seed", "selected", "weight"]].assign(
        max_value=[augnet.selected(h[-1]["state"])["layer0"][2] for h in hist.values()])
    theirs = authors_runs("sinusoids", epochs=S.epochs) if (S.n_train, S.n_test, S.batch_size, S.widths) == (
        400, 200, 32, (2, 2)) else authors_runs("sinusoids", epochs=-1)
    seeds_table = report_same_as_authors(run, "fig5/same_as_authors", "frequency_shift", ours, theirs,
                                       f"the paper's sinusoids and CNN trunk, {S.epochs} epochs", truth=TRUE_HZ,
                                       tol=HZ_TOL)
    run.replicates("seeds", [history_seconds(h) + history_seconds(alone.get(s, [])) for s, h in hist.items()],
                   ["fig5/frequency_shift_selected", "fig5/same_as_authors"],
                   note="a seed: one run of AugNet with the three signal ops and, beyond the paper, one with frequency "
                        "shift alone (their epochs' training seconds)")
    facts = {
        "e2_alone": f"{alone_hz:.2f} Hz, within {HZ_TOL:g} Hz of the true {TRUE_HZ:g} Hz on {alone_ok} of "
                    f"{len(alone)} seeds",
        "e2_hz": f"{shift_hz:.2f} Hz (median weight {shift_w:.2f})",
        "e2_verdict": phrase(ev, reproduced="The paper's claim holds here: the share's interval lies above one "
                             "half.", not_reproduced="The paper's claim fails here: the share's interval lies below "
                             "one half."),
        "e2_nok": f"{n_ok} of {len(table)}",
        "e2_nsel": f"{n_sel} of {len(table)}",
        "e2_authors": _authors_fact(run.claims["fig5/same_as_authors"], seeds_table, "frequency_shift"),
    }
    return table.round(3), seeds_table, facts


def sinusoids_numbers(S: Sinusoids) -> dict:
    """The numbers chapter E2's prose quotes that the settings, the protocol and the code know (glue names
    ``e2_*``): the data, the trunk, the optimiser, the operations' scales, the criterion's thresholds, and what the
    selective regulariser and the weight decay make of an operation at full weight.

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> n = sinusoids_numbers(settings("cpu", experiment="sinusoids"))
    >>> n["e2_seeds_n"], n["e2_paper_seeds_n"], n["e2_kernel"], n["e2_freqs"]
    ('4 seeds', '6 seeds', 100, '2, 4, 6 and 8 Hz')
    """
    from ... import models
    from ...data import generated

    paper, data = type(S)(), inspect.signature(generated.sinusoids).parameters
    freqs = [f"{f:g}" for f in data["freqs"].default]
    mu_true = TRUE_HZ / augnet.OPS["frequency_shift"].scale
    return {
        "e2_freqs": ", ".join(freqs[:-1]) + f" and {freqs[-1]} Hz", "e2_jitter": data["jitter"].default,
        "e2_seconds": data["seconds"].default, "e2_fs": data["fs"].default, "e2_noise": data["noise"].default,
        "e2_true": TRUE_HZ, "e2_n_train": S.n_train, "e2_n_test": S.n_test, "e2_epochs": S.epochs,
        "e2_alone_epochs": S.alone_epochs or S.epochs, "e2_seeds_n": count(len(S.seeds), "seed"), "e2_lr": S.lr,
        "e2_wd": S.weight_decay, "e2_batch": S.batch_size, "e2_copies": S.copies, "e2_reg": S.reg,
        "e2_mu0": S.init_magnitude, "e2_width": S.widths[0],
        "e2_kernel": inspect.signature(models.signal_cnn).parameters["first_kernel"].default,
        "e2_shift_scale": augnet.OPS["frequency_shift"].scale, "e2_ft_scale": augnet.OPS["ft_surrogate"].scale,
        "e2_noise_scale": augnet.OPS["gaussian_noise"].scale, "e2_selected": SELECTED, "e2_tol": HZ_TOL,
        "e2_free_gain": S.reg * 1.0 - S.weight_decay / 2,  # an operation harmless at magnitude 1, at full weight
        "e2_shift_mu": mu_true,
        "e2_shift_gain": S.reg * mu_true - S.weight_decay / 2 * mu_true**2,  # frequency shift held to the truth
        "e2_n_min": N_MIN, "e2_paper_seeds_n": count(len(paper.seeds), "seed"), "e2_paper_epochs": paper.epochs,
    }


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

    fig = plt.figure(figsize=(10, 6.4))
    grid = fig.add_gridspec(2, 2)
    axes = [fig.add_subplot(grid[0, :]), fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])]
    for s, h in hist.items():
        axes[0].plot([r["epoch"] + 1 for r in h], [_shift_hz(r) for r in h], color=f"C{s}", label=f"seed {s}")
        for op, ls in zip(h[0]["state"]["layer0"], ["-", "--", ":"]):
            plot_ops_over_training(h, op, axes[1:], ls=ls, color=f"C{s}", label=f"{_label(op)}, seed {s}")
    for s, h in alone.items():
        axes[0].plot([r["epoch"] + 1 for r in h], [_shift_hz(r) for r in h], ls=":", color=f"C{s}",
                     label=f"shift alone, seed {s}")
    axes[0].axhline(TRUE_HZ, color="k", ls="--", lw=1, label=f"{TRUE_HZ:g} Hz (true)")
    axes[0].set(xlabel="epoch", ylabel="largest shift (Hz)", title="frequency shift range")
    axes[1].set_title("weights (solid: shift, dashed: FT surrogate, dotted: noise)", fontsize=10)
    axes[2].set_title("magnitudes (same line styles)", fontsize=10)
    axes[0].legend(fontsize=9, ncol=2)
    _epochs(axes[0])
    fig.tight_layout()
    return axes


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

    axes = plt.subplots(1, 2, figsize=(10, 3.8))[1]
    for i, (name, h) in enumerate(hist.items()):
        ep = [r["epoch"] + 1 for r in h]
        axes[0].plot(ep, [r["loss"] for r in h], color=f"C{i}", label=name)
        axes[1].plot(ep, [r["train_acc"] for r in h], color=f"C{i}", label=f"train, {name}")
        tested = [r for r in h if test_key in r]
        axes[1].plot([r["epoch"] + 1 for r in tested], [r[test_key] for r in tested], color=f"C{i}", ls="--",
                     marker="o" if len(tested) == 1 else None, label=f"test, {name}")
    axes[0].set(xlabel="epoch", ylabel="loss (cross-entropy + penalty)")
    axes[1].set(xlabel="epoch", ylabel="accuracy")
    axes[1].legend(fontsize=8.5, ncol=2)
    _epochs(*axes)
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
    res = res if "seed" in res else res.assign(seed=S.seeds[0])
    first = res["seed"].iloc[0]
    for r in res.to_dict("records"):  # seed 0's under the keys of earlier results, other seeds' under their seed
        key = f"{r['method'].split()[0].lower()}/d{r['depth']}_w{r['width']}"
        key += "" if r["seed"] == first else f"/seed{r['seed']}"
        run.log(f"{key}/invariance_median", r["median"])
        run.log(f"{key}/invariance_q25_q75", [r["q25"], r["q75"]])
        run.log(f"{key}/test_acc", r["acc"])
        if r["method"] == "AugNet":
            run.log(f"{key}/shift_hz", r["shift_hz"], paper=TRUE_HZ)
    seeds = list(dict.fromkeys(res["seed"]))
    mean = res.groupby(["method", "depth", "width", "params"], sort=False).mean(numeric_only=True).reset_index()
    by, by_seed = mean.groupby("method", sort=False), res.groupby("method", sort=False)
    aug, orc = by.get_group("AugNet"), by.get_group("oracle augmentation").sort_values("params", kind="stable")
    aug_min, flat = aug["median"].min(), aug["median"].max() - aug["median"].min()
    run.log("augnet_min_invariance", aug_min, note="paper: close to 1 for every trunk")
    run.log("oracle_min_invariance", orc["median"].min(), note="paper: lower for the smallest trunks")
    run.log("augnet_spread", flat)
    any_c, grow_c = PROTOCOL["fig6/augnet_invariance_any_capacity"], PROTOCOL["fig6/oracle_invariance_grows"]
    per_trunk = {f"depth {d}, width {w}": g.set_index("seed")["median"].reindex(seeds).tolist()
                 for (d, w), g in by_seed.get_group("AugNet").groupby(["depth", "width"], sort=False)}
    each = "one model each" if len(seeds) == 1 else f"{len(seeds)} seeds each, their mean"
    run.claim(any_c, effects=per_trunk,
              ours=f"median invariance {aug_min:.3f}–{aug_min + flat:.3f} over {len(aug)} trunks ({each})")
    smallest, largest = orc.iloc[0], orc.iloc[-1]
    per_seed = by_seed.get_group("oracle augmentation").set_index(["seed", "params"])["median"]
    big, small = int(largest["params"]), int(smallest["params"])
    grow = ([float(per_seed[s, big] - per_seed[s, small]) for s in seeds]
            if orc["params"].nunique() > 1 else not_measurable("the run has one trunk size"))
    ev_grow = decide(grow_c, grow)
    run.claim(grow_c, effects=grow,
              ours=f"{smallest['median']:.3f} (smallest) vs {largest['median']:.3f} (largest)"
              + ("" if len(seeds) == 1 else f", means over {len(seeds)} seeds"))
    if "seconds" in res:
        run.replicates("seeds", [float(res.loc[res["seed"] == s, "seconds"].sum()) for s in seeds],
                       [any_c.id, grow_c.id], note="a seed: every trunk of the grid trained three ways (the trunk "
                       "alone, with the oracle augmentation, with AugNet; their epochs' training seconds)")
    shifts = by_seed.get_group("AugNet")["shift_hz"]
    n_zero = int((shifts < COLLAPSED_HZ).sum())
    run.log("augnet_trunks_with_collapsed_range", n_zero, note=f"of {len(shifts)} (trunks x seeds): learned shift "
                                                               f"below {COLLAPSED_HZ:g} Hz")
    facts = {
        "e3_aug": f"{aug_min:.2f}–{aug_min + flat:.2f}",
        "e3_orc": f"{orc['median'].iloc[0]:.2f} for the smallest trunk and {orc['median'].iloc[-1]:.2f} for the "
                  "largest",
        "e3_grow": phrase(ev_grow, reproduced="It grows with capacity, as the paper reports.",
                          not_reproduced="It does not grow with capacity here, unlike the paper."),
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
                     "ours: shift range (Hz)": ", ".join(f"{v:.2f}" for v in mine["shift_hz"]) or None,
                     "ours: invariance": ", ".join(f"{v:.2f}" for v in mine["median"]) or None})
        collapsed = int((g["shift_hz"] < COLLAPSED_HZ).sum())
        run.log(f"authors/d{d}_w{w}/collapsed_seeds", collapsed,
                note=f"of {len(g)}: their AugNet's shift < {COLLAPSED_HZ:g} Hz")
    authors = pd.DataFrame(side)
    facts["e3_authors"] = ("At this profile's number of epochs, their AugNet learned shift ranges of "
                           + "; ".join(f"{r['authors: shift range (Hz)']} Hz on the trunk of {r['trunk']}"
                                       for r in side)
                           if side else "Their code was not run at this profile's number of epochs")
    return table.round(3), authors, facts


def capacity_numbers(S: Capacity) -> dict:
    """The numbers chapter E3's prose quotes that the settings and the protocol know (glue names ``e3_*``): the data,
    the grid, the optimiser, AugNet's layer, the seeds, the claims' boundaries and the paper's (and the authors'
    script's) AugNet settings.

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> n = capacity_numbers(settings("cpu", experiment="capacity"))
    >>> n["e3_trunks"], n["e3_widths"], n["e3_boundary"], n["e3_seeds_n"]
    (6, '4, 16 and 64', 0.9, '6 seeds')
    """
    paper = type(S)()

    def words(values):
        values = [f"{v:g}" for v in values]
        return values[0] if len(values) == 1 else ", ".join(values[:-1]) + f" and {values[-1]}"

    return {
        "e3_n_train": S.n_train, "e3_n_test": S.n_test, "e3_epochs": S.epochs, "e3_lr": S.lr,
        "e3_wd": S.weight_decay, "e3_batch": S.batch_size, "e3_reg": S.reg, "e3_mu0": S.init_magnitude,
        "e3_copies": S.copies, "e3_true": TRUE_HZ, "e3_widths": words(S.widths), "e3_depths": words(S.depths),
        "e3_trunks": len(S.widths) * len(S.depths), "e3_seeds_n": count(len(S.seeds), "seed"), "e3_n_min": N_MIN,
        "e3_boundary": PROTOCOL["fig6/augnet_invariance_any_capacity"].parts[""].boundary,
        "e3_grow_smallest": PROTOCOL["fig6/oracle_invariance_grows"].parts[""].smallest,
        "e3_collapsed": COLLAPSED_HZ, "e3_paper_reg": paper.reg, "e3_paper_mu0": paper.init_magnitude,
        "e3_paper_copies": paper.copies,
    }


def plot_capacity(res: pd.DataFrame):
    """Figure 6: median invariance (with quartiles) and test accuracy against the trunk's parameter count (the mean
    over the seeds where ``res`` has several).

    Example
    -------
    >>> res = pd.DataFrame([dict(params=10, method="AugNet", median=0.9, q25=0.8, q75=1.0, acc=0.7)])
    >>> [ax.get_xscale() for ax in plot_capacity(res)]
    ['log', 'log']
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axes = plt.subplots(1, 2, figsize=(10, 4))[1]
    for i, (method, g) in enumerate(res.groupby("method", sort=False)):
        g = g.groupby("params")[["median", "q25", "q75", "acc"]].mean().reset_index()
        label = {"baseline": "trunk alone"}.get(method, method)
        axes[0].errorbar(g["params"], g["median"], yerr=[g["median"] - g["q25"], g["q75"] - g["median"]],
                         fmt="o-", capsize=3, label=label, color=f"C{i}")
        axes[1].plot(g["params"], g["acc"], "o-", label=label, color=f"C{i}")
    axes[0].set(xscale="log", xlabel="trunk parameters", ylabel="invariance (Eq. 4), median, quartiles")
    axes[1].set(xscale="log", xlabel="trunk parameters", ylabel="test accuracy")
    for ax in axes:  # plain numbers at 1, 2 and 5 times a power of ten
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0].legend(fontsize=9)
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
    pair = ("Augerino", "AugNet, 1 layer")
    others = max(v for m, v in final.items() if m != "AugNet, 3 layers")
    first = {m: next((r["epoch"] + 1 for r in h if r["test_at_best_val"] >= 0.8), None) for m, h in hist.items()}
    aug = min((e for m, e in first.items() if m.startswith("AugNet") and e), default=None)
    rest = min((e for m, e in first.items() if not m.startswith("AugNet") and e), default=None)
    effects = {"fig7/augerino_and_augnet1_beat_baseline": {m: [final[m] - base] for m in pair},  # one seed each
               "fig7/augnet3_top": [final["AugNet, 3 layers"] - others],
               "fig7/augnet_faster": [rest / aug if aug and rest else math.nan]}
    ours = {"fig7/augerino_and_augnet1_beat_baseline": {m: round(final[m], 4) for m in final},
            "fig7/augnet3_top": f"{best} best ({final[best]:.4f}); AugNet, 3 layers {final['AugNet, 3 layers']:.4f}",
            "fig7/augnet_faster": "first epoch at 80 %: " + "; ".join(
                f"{m} {f'epoch {e}' if e else 'never'}" for m, e in first.items())}
    off = not_measurable(f"the paper's claims are about CIFAR-10; this run trains on {S.dataset}")
    for cid, effect in effects.items():
        run.claim(PROTOCOL[cid], ours=ours[cid], effects=effect if S.dataset == "cifar10" else off)
    facts = {"e4_best": f"{best} ({final[best]:.3f})",
             "e4_beats": f"reached {final[pair[0]]:.3f} and {final[pair[1]]:.3f} against {base:.3f} for"}
    return pd.Series(final, name="early-stopped test accuracy").round(3).to_frame(), facts


def images_numbers(S: Images, train=None, val=None, test=None) -> dict:
    """The numbers chapter E4's prose quotes that the settings, the protocol and the models' recipes know (glue names
    ``e4_*``): the data (with the sizes of ``train``, ``val`` and ``test`` where given), the optimisers, the layers,
    the fixed augmentation's smallest crop, the paper's epochs, and one sentence on what this run's data let the
    paper's claims say.

    Example
    -------
    >>> from invlib.papers.e.experiments import settings
    >>> n = images_numbers(settings("cpu", experiment="images"))
    >>> n["e4_epochs"], n["e4_paper_epochs"], n["e4_crop"], n["e4_aug_wd"]
    (3, 200, 0.64, 1.0)
    >>> n["e4_scope"].startswith("This run trains on `fashion_mnist`")
    True
    """
    from .experiments import image_models

    paper, specs = type(S)(), image_models(S)
    learned = specs["AugNet, 1 layer"][1]
    scope = (f"This run trains on `{S.dataset}`, so their verdicts read \"not measurable at this profile\", whatever "
             "the numbers; the `gpu` and `paper` profiles train on CIFAR-10." if S.dataset != "cifar10" else
             "This run trains each model once, from one seed, so each claim reads \"inconclusive at this budget\": a "
             f"claim about what training does needs {N_MIN} seeds.")
    sizes = {f"e4_n_{k}": len(d) for k, d in (("train", train), ("val", val), ("test", test)) if d is not None}
    return {
        "e4_dataset": f"`{S.dataset}`", "e4_trunk": f"`{S.trunk}`", "e4_epochs": S.epochs, "e4_val": S.val_fraction,
        "e4_lr": S.lr, "e4_augnet_lr": S.augnet_lr, "e4_wd": S.weight_decay, "e4_augerino_reg": S.augerino_reg,
        "e4_aug_wd": learned.aug_weight_decay, "e4_mu0": S.init_magnitude, "e4_reg1": S.reg[0], "e4_reg2": S.reg[1],
        "e4_reg3": S.reg[2],
        "e4_copies": S.copies, "e4_crop": specs["fixed augmentation"][2].scale[0],
        "e4_paper_epochs": paper.epochs, "e4_paper_augnet_lr": paper.augnet_lr, "e4_n_min": N_MIN, "e4_scope": scope,
        **sizes,
    }


def plot_accuracy(hist: dict):
    """Figures 7 and B.4: early-stopped test accuracy and training accuracy per epoch, per model.

    Example
    -------
    >>> h = [dict(epoch=0, test_at_best_val=0.5, train_acc=0.6)]
    >>> [ax.get_xlabel() for ax in plot_accuracy({"trunk": h})]
    ['epoch', 'epoch']
    """
    import matplotlib.pyplot as plt

    axes = plt.subplots(1, 2, figsize=(10, 4))[1]
    for name, h in hist.items():
        ep = [r["epoch"] + 1 for r in h]
        axes[0].plot(ep, [r["test_at_best_val"] for r in h], "o-", ms=3, label=name)
        axes[1].plot(ep, [r["train_acc"] for r in h], "o-", ms=3, label=name)
    axes[0].set(xlabel="epoch", ylabel="test accuracy at best validation so far")
    axes[1].set(xlabel="epoch", ylabel="training accuracy (augmented inputs)")
    axes[0].legend(fontsize=9)
    _epochs(*axes)
    return list(axes)
