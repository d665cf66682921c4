"""What chapter D1 shows: Fig. 5 (each image's learned rotation range against its angle and the class boundary,
InstaAug vs Augerino), the claims of section 5.1 decided over seeds, and the sentences and numbers its prose quotes.

Every claim of the chapter is about what training produces, so its replicate is a seed: the effects are InstaAug's
measures per seed (:func:`~invlib.papers.d.rotations.seed_slopes`), and the controls' (Augerino; the input-free
model, one range learned with InstaAug's own recipe and band) are paired with InstaAug's of the same seed. The
claims, with their smallest effects and reasons, are declared in :mod:`invlib.papers.d.protocol` (D1); this module
computes the effects (:func:`fig5_effects`) and records them.

Example
-------
>>> import pandas as pd
>>> from invlib import results
>>> from invlib.papers.d.rotations import BOUNDARY, settings
>>> phi = pd.Series([-0.6, 0.0, 0.6])
>>> per = {"instaaug": pd.DataFrame(dict(phi=phi, upper=BOUNDARY - phi, lower=BOUNDARY + phi,
...                                      upper_true=BOUNDARY - phi, lower_true=BOUNDARY + phi)),
...        "augerino": pd.DataFrame(dict(phi=phi, upper=0.8, lower=0.8, upper_true=BOUNDARY - phi,
...                                      lower_true=BOUNDARY + phi))}
>>> run = results.Run("demo", "smoke")
>>> _, facts = report(run, settings("smoke", h_min=1.0, h_max=1.5), per, {"instaaug": 1.0, "augerino": 1.0})
>>> run.claims["fig5/bounds_follow_angle"]["verdict"], round(facts["augerino_half"], 2)  # one seed
('inconclusive at this budget', 0.8)
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ... import results
from ...protocol import Claim, decide
from .criteria import record_replicates
from .protocol import PROTOCOL
from .rotations import BOUNDARY, Rotations, slopes

CHAPTER = "d1_rotated_sprites"
# How the page names the methods and the measures (the JSON keeps the ids).
NAMES = {"instaaug": "InstaAug", "input_free": "input-free", "augerino": "Augerino"}
COLUMNS = {"upper_slope": "slope of a on φ", "lower_slope": "slope of b on φ",
           "near_boundary": "share near the boundary", "mean_gap": "gap to the boundary (rad)",
           "width": "mean width a + b (rad)", "centre_error": "centre's distance from -φ (rad)",
           "test_acc": "test accuracy", "seconds": "training (s)", "val_acc": "held-out accuracy (TTA)",
           "val_draw_acc": "held-out accuracy (one draw)", "module_lr": "module lr",
           "entropy_weight": "entropy weight", "who": "run"}


def declared(cid: str) -> Claim:
    """D1's declaration of claim ``cid`` (:mod:`invlib.papers.d.protocol`)."""
    return PROTOCOL.get(cid, CHAPTER)


def fig5_effects(per_seed: pd.DataFrame, augerino: pd.DataFrame | None = None,
                 input_free: pd.DataFrame | None = None) -> dict[str, dict]:
    """The effects of D1's Fig. 5 claims, keyed by claim and part, from InstaAug's measures per seed and the
    controls' (each frame one row per seed with ``seed`` and :func:`~invlib.papers.d.rotations.slopes`' columns):
    ``"fig5/bounds_follow_angle"``, each bound's slope toward the boundary per seed; ``"fig5/reaches_boundary"``,
    the share of test images with both bounds within 0.2 rad of it, and that share minus the input-free model's,
    paired by seed (not measurable without that control); ``"fig5/augerino_covers_part"`` (not measurable
    without Augerino), InstaAug's mean gap over Augerino's and its ``centre_error`` over the input-free model's,
    paired by seed (alone, the first can be the band's doing: an input-free range held to width pi passes it
    against any Augerino half-width below ~1.08 rad). A seed without a control run does not count in a paired part.

    Example
    -------
    >>> ia = pd.DataFrame(dict(seed=[0, 1], upper_slope=[-0.9, -0.8], lower_slope=[0.9, 0.7],
    ...                        near_boundary=[0.75, 0.5], mean_gap=[0.2, 0.3], centre_error=[0.05, 0.06]))
    >>> e = fig5_effects(ia, ia.assign(mean_gap=[0.8, 0.6]), ia.assign(near_boundary=[0.25, 0.25]))
    >>> e["fig5/bounds_follow_angle"]["upper bound falls"].tolist(), e["fig5/augerino_covers_part"][
    ...     "closer to the boundary than Augerino"], e["fig5/reaches_boundary"]["more than one range"]
    ([0.9, 0.8], [0.25, 0.5], [0.5, 0.25])
    """
    free = (_paired(per_seed, input_free, "near_boundary", ratio=False) if input_free is not None and len(input_free)
            else results.not_measurable("the input-free control was not trained"))
    out = {"fig5/bounds_follow_angle": {"upper bound falls": -per_seed.upper_slope.to_numpy(float),
                                        "lower bound rises": per_seed.lower_slope.to_numpy(float)},
           "fig5/reaches_boundary": {"near the boundary": per_seed.near_boundary.to_numpy(float),
                                     "more than one range": free}}
    out["fig5/augerino_covers_part"] = results.not_measurable("Augerino was not trained") if augerino is None else {
        "closer to the boundary than Augerino": _paired(per_seed, augerino, "mean_gap"),
        "follows the angle better than one range": _paired(per_seed, input_free, "centre_error")}
    return out


def fig5_evidence(per_seed: pd.DataFrame, augerino: pd.DataFrame | None = None,
                  input_free: pd.DataFrame | None = None) -> dict[str, results.Evidence]:
    """Each claim of :func:`fig5_effects` decided from its declaration (:func:`invlib.protocol.decide`).

    Example
    -------
    >>> rows = pd.DataFrame(dict(upper_slope=[-0.9, -0.8, -0.85], lower_slope=[0.9, 0.7, 0.8],
    ...                          near_boundary=[0.1, 0.2, 0.15]))
    >>> {k: ev.verdict for k, ev in fig5_evidence(rows).items()}
    {'fig5/bounds_follow_angle': 'reproduced', 'fig5/reaches_boundary': 'not reproduced', \
'fig5/augerino_covers_part': 'not measurable at this profile'}
    """
    return {cid: decide(declared(cid), e) for cid, e in fig5_effects(per_seed, augerino, input_free).items()}


def _paired(per_seed: pd.DataFrame, control: pd.DataFrame | None, column: str, ratio: bool = True) -> list[float]:
    """Per seed trained for both (the same trunk start and draws): InstaAug's ``column`` over (or minus) the
    control's; seeds without a control run do not count."""
    if control is None or not len(control):
        return []
    ia, ctl = per_seed.set_index("seed")[column], control.set_index("seed")[column]
    seeds = sorted(set(ia.index) & set(ctl.index))
    if ratio:
        return [float(ia[s]) / float(ctl[s]) for s in seeds if ctl[s] > 0]
    return [float(ia[s]) - float(ctl[s]) for s in seeds]


def _per_seed_text(frame: pd.DataFrame, fmt) -> str:
    return "; ".join(f"seed {int(r.seed)}: {fmt(r)}" for _, r in frame.iterrows())


def report(run, S: Rotations, per_image: dict[str, pd.DataFrame], acc: dict[str, float],
           seeds: dict[str, pd.DataFrame] | pd.DataFrame | None = None,
           sweep: pd.DataFrame | None = None, items: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """Log D1's metrics and record its claims from the per-image bounds of each method
    (:func:`invlib.papers.d.rotations.bounds`, the first seed's models) and their test accuracies; return a summary
    table (one row per method) and the facts for the prose (numbers, and the sentences of :func:`prose`).
    ``seeds`` (:func:`~invlib.papers.d.rotations.seed_slopes`): each method's measures per seed (a frame alone:
    InstaAug's), the replicates of the claims; without it the first seed's models are the only ones. ``sweep``
    (:func:`~invlib.papers.d.rotations.band_sweep`): the bands tried, for the facts (``band_text``). ``items``
    (``seed_slopes``' ``items``): each test image's share of the measures per seed, for :func:`record_variance`."""
    rows, facts = [], dict(boundary=BOUNDARY, max_angle=math.radians(S.max_angle), n_test=S.n_test,
                           h_min=S.h_min, h_max=S.h_max, width_min=math.exp(S.h_min), width_max=math.exp(S.h_max))
    for method, df in per_image.items():
        s = slopes(df)
        rows.append(dict(method=method, **{k: round(v, 3) for k, v in s.items()}, test_acc=round(acc[method], 3)))
        for k, v in s.items():
            run.log(f"{method}/{k}", v)
        run.log(f"{method}/test_acc", acc[method])
        facts.update({f"{method}_{k}": v for k, v in s.items()}, **{f"{method}_acc": 100 * acc[method]})
    table = pd.DataFrame(rows).set_index("method")
    if isinstance(seeds, pd.DataFrame):
        seeds = {"instaaug": seeds}
    seeds = {m: f for m, f in (seeds or {}).items() if len(f)}
    one = {m: pd.DataFrame([dict(seed=S.seed, **slopes(df))]) for m, df in per_image.items()}
    per_seed = seeds.get("instaaug", one["instaaug"])
    au, free = (seeds.get(m, one.get(m)) for m in ("augerino", "input_free"))
    effects = fig5_effects(per_seed, au, free)
    evidence = {cid: decide(declared(cid), e) for cid, e in effects.items()}
    facts.update(seeds=len(per_seed))
    band = f"band [{S.h_min:g}, {S.h_max:g}] on log(a + b)"
    free_text = "" if free is None else "; input-free model: " + _per_seed_text(
        free, lambda r: f"{100 * r.near_boundary:.0f} %")
    ours = {"fig5/bounds_follow_angle": f"slopes of the upper / lower bound on the angle (boundary: -1 / +1), {band}, "
            + _per_seed_text(per_seed, lambda r: f"{r.upper_slope:+.2f} / {r.lower_slope:+.2f}"),
            "fig5/reaches_boundary": f"test images with both bounds within 0.2 rad of it, {band}, " + _per_seed_text(
                per_seed, lambda r: f"{100 * r.near_boundary:.0f} % (gap {r.mean_gap:.2f} rad)") + free_text}
    ours["fig5/augerino_covers_part"] = "not trained"
    if au is not None:
        facts["augerino_half"] = float(per_image["augerino"].upper.iloc[0])
        gaps = _per_seed_text(per_seed.merge(au, on="seed", suffixes=("", "_au")),
                              lambda r: f"InstaAug {r.mean_gap:.2f} vs Augerino {r.mean_gap_au:.2f}")
        centres = "not trained" if free is None else _per_seed_text(
            per_seed.merge(free, on="seed", suffixes=("", "_free")),
            lambda r: f"InstaAug {r.centre_error:.2f} vs input-free {r.centre_error_free:.2f}")
        ours["fig5/augerino_covers_part"] = (f"mean gap to the boundary (rad), {gaps}; range centre's distance from "
                                             f"-phi (rad), {centres}")
    for cid, e in effects.items():
        run.claim(declared(cid), ours=ours[cid], effects=e)
    record_replicates(run, "seeds", seed_seconds(seeds), list(effects), note="a seed: InstaAug, its input-free "
                      "control and Augerino trained from the seed's start (their fit's epoch seconds); the band "
                      "sweep runs once, from the first seed")
    record_variance(run, items)
    facts.update(prose(evidence, per_seed))
    facts.update(sweep_facts(S, sweep))
    return table, facts


# InstaAug's per-seed measures whose variance record_variance splits: (name, item_terms' key, sign as the claim reads)
VARIANCE_MEASURES = (("InstaAug: minus the upper bound's slope", "upper_slope", -1.0),
                     ("InstaAug: the lower bound's slope", "lower_slope", 1.0),
                     ("InstaAug: share near the boundary", "near_boundary", 1.0))


def record_variance(run, items: dict | None) -> dict:
    """Record how the spread over seeds of InstaAug's measures (:data:`VARIANCE_MEASURES`, as the claims read them)
    splits into evaluation (the test images) and training (:meth:`invlib.results.Run.variance`, parameter
    ``seeds``), from each test image's share of them (:func:`~invlib.papers.d.rotations.item_terms`, by seed).
    Nothing below two seeds. Returns ``{name: split}``.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> items = {"instaaug": {s: dict(upper_slope=rng.normal(-1, 3, 500), lower_slope=rng.normal(1, 3, 500),
    ...                                near_boundary=(rng.random(500) < 0.4).astype(float)) for s in range(4)}}
    >>> run = results.Run("smoke", name="demo")
    >>> split = record_variance(run, items)["InstaAug: share near the boundary"]
    >>> split["seeds"], split["items"], split["evaluation_share"] > 0.5  # independent images: evaluation
    (4, 500, True)
    """
    per_seed = (items or {}).get("instaaug") or {}
    if len(per_seed) < 2:
        return {}
    seeds = sorted(per_seed)
    return {name: run.variance("seeds", name, np.stack([sign * per_seed[s][key] for s in seeds]))
            for name, key, sign in VARIANCE_MEASURES}


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the page's names for D1's methods (index and a ``method`` level) and measures (columns).

    Example
    -------
    >>> readable(pd.DataFrame(dict(upper_slope=[-0.9]), index=pd.Index(["instaaug"], name="method"))).columns[0]
    'slope of a on φ'
    """
    out = frame.rename(columns=COLUMNS)
    if out.index.nlevels > 1:
        return out.rename(index=NAMES, level=0)
    return out.rename(index=NAMES)


def sweep_table(sweep: pd.DataFrame, chosen: tuple[float, float]) -> pd.DataFrame:
    """The band sweep (:func:`~invlib.papers.d.rotations.band_sweep`) for the page: one row per band tried (the
    chosen one marked), its held-out accuracies and what the module learned in it, with the page's names.

    Example
    -------
    >>> t = pd.DataFrame(dict(h_min=[0.5, 1.0], h_max=[1.0, 1.5], val_acc=[0.9, 0.91]))
    >>> sweep_table(t, (1.0, 1.5)).index.tolist()
    ['[0.5, 1]', '[1, 1.5] (chosen)']
    """
    bands = [f"[{r.h_min:g}, {r.h_max:g}]" + (" (chosen)" if (r.h_min, r.h_max) == tuple(chosen) else "")
             for _, r in sweep.iterrows()]
    return readable(sweep.drop(columns=["h_min", "h_max"]).set_axis(pd.Index(bands, name="band on log(a + b)")))


def seed_table(per_seed: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every model's measures per seed (:func:`~invlib.papers.d.rotations.seed_slopes`), one row per method and
    seed, with the page's names (:func:`readable`).

    Example
    -------
    >>> seed_table({"instaaug": pd.DataFrame(dict(seed=[0, 1], upper_slope=[-0.9, -0.8]))}).index.tolist()
    [('InstaAug', 0), ('InstaAug', 1)]
    """
    frame = pd.concat({m: f.set_index("seed") for m, f in per_seed.items()}, names=["method", "seed"])
    return readable(frame)


def seed_facts(per_seed: dict[str, pd.DataFrame]) -> dict:
    """The means over seeds the prose quotes: InstaAug's slopes (``mean_upper_slope``, ``mean_lower_slope``), each
    method's share of test images with both bounds within 0.2 rad of the boundary, in % (``near_<method>``), and
    its mean gap to the boundary in radians (``gap_<method>``); ``seeds_text``, how many seeds ("3 seeds").

    Example
    -------
    >>> f = seed_facts({"instaaug": pd.DataFrame(dict(upper_slope=[-0.9, -0.7], lower_slope=[0.8, 0.6],
    ...                                                near_boundary=[0.5, 0.3], mean_gap=[0.2, 0.4]))})
    >>> round(f["mean_upper_slope"], 2), round(f["near_instaaug"], 1), round(f["gap_instaaug"], 2)
    (-0.8, 40.0, 0.3)
    """
    ia = per_seed["instaaug"]
    out = dict(mean_upper_slope=float(ia.upper_slope.mean()), mean_lower_slope=float(ia.lower_slope.mean()),
               seeds_text=f"{len(ia)} seed{'s' * (len(ia) != 1)}")
    for m, f in per_seed.items():
        if len(f):
            out[f"near_{m}"] = 100 * float(f.near_boundary.mean())
            out[f"gap_{m}"] = float(f.mean_gap.mean())
    return out


def seed_seconds(seeds: dict[str, pd.DataFrame]) -> list[float]:
    """Per seed, in seed order, what its training took: the ``seconds`` of every method's model of that seed
    (:func:`~invlib.papers.d.rotations.seed_slopes`' column) summed; empty where the frames have no seconds.

    Example
    -------
    >>> seeds = {m: pd.DataFrame(dict(seed=[0, 1], seconds=[2.0, 3.0])) for m in ("instaaug", "augerino")}
    >>> seed_seconds(seeds)
    [4.0, 6.0]
    """
    frames = [f[["seed", "seconds"]] for f in seeds.values() if "seconds" in f]
    if not frames:
        return []
    return [float(v) for v in pd.concat(frames).groupby("seed").seconds.sum().sort_index()]


def sweep_facts(S: Rotations, sweep: pd.DataFrame | None) -> dict[str, str]:
    """``band_text``: the sentence on how the band was chosen (by the sweep, with its numbers, or given).

    Example
    -------
    >>> from invlib.papers.d.rotations import settings
    >>> t = pd.DataFrame(dict(h_min=[0.0, 1.0, 1.5], h_max=[0.5, 1.5, 2.0], val_acc=[1.0, 0.995, 0.9],
    ...                       width=[1.5, 2.9, 4.6]))
    >>> sweep_facts(settings("smoke", h_min=1.0, h_max=1.5), t)["band_text"][:33]
    'The sweep chose the band [1, 1.5]'
    """
    from .rotations import SELECT_TOLERANCE

    if sweep is None or not len(sweep):
        return dict(band_text=f"The band [{S.h_min:g}, {S.h_max:g}] was given (no sweep).")
    tried = ", ".join(f"[{r.h_min:g}, {r.h_max:g}]: {100 * r.val_acc:.1f} % (width {r.width:.2f} rad)"
                      for _, r in sweep.iterrows())
    return dict(band_text=f"The sweep chose the band [{S.h_min:g}, {S.h_max:g}] (widths {math.exp(S.h_min):.2f} to "
                f"{math.exp(S.h_max):.2f} rad): the widest band whose held-out accuracy (one draw per validation "
                f"image) is within {100 * SELECT_TOLERANCE[0]:g} points of the best; bands tried, held-out accuracy "
                f"and learned mean width: {tried}.")


def prose(evidence: dict[str, results.Evidence], per_seed: pd.DataFrame) -> dict[str, str]:
    """The sentences D1's prose says about its claims, chosen by their verdicts (:func:`invlib.results.phrase`),
    with the run's numbers: ``follow_text``, ``reach_text``, ``augerino_text`` (Markdown, for ``{glue:md}``).

    Example
    -------
    >>> rows = pd.DataFrame(dict(seed=[0], upper_slope=[-0.9], lower_slope=[0.8], near_boundary=[0.6],
    ...                          mean_gap=[0.1]))
    >>> prose(fig5_evidence(rows), rows)["follow_text"][:54]
    'One seed cannot decide whether the bounds follow each '
    """
    n = len(per_seed)
    seeds = f"{n} seed{'s' if n != 1 else ''}"
    u, lo = per_seed.upper_slope.mean(), per_seed.lower_slope.mean()
    slopes_said = f"the upper and lower bounds have slopes {u:+.2f} and {lo:+.2f} on the angle (the boundary's: -1, +1)"
    follow, reach = evidence["fig5/bounds_follow_angle"], evidence["fig5/reaches_boundary"]
    parts = "; ".join(f"{name}: {ev.text()}" for name, ev in follow.parts)
    near = f"{100 * per_seed.near_boundary.mean():.0f} % of the test images"
    undecided = ("One seed cannot" if n == 1 else f"{n} seeds cannot") + " decide whether"
    out = dict(
        follow_text=results.phrase(
            follow, reproduced=f"Over {seeds} the bounds follow each image's angle: {slopes_said}, mean over seeds.",
            not_reproduced=f"Over {seeds} neither bound follows the angle as the paper's arcs do: {slopes_said}.",
            partly=f"Over {seeds} one bound follows the angle and the other does not: {slopes_said}.",
            inconclusive=f"{undecided} the bounds follow each image's angle: {slopes_said}, mean over seeds "
            f"({parts})."),
        reach_text=results.phrase(
            reach, reproduced=f"Both bounds end within 0.2 rad of the boundary for {near} (mean over {seeds}).",
            not_reproduced=f"They stop short of it: both bounds are within 0.2 rad of the boundary for only {near} "
            f"(mean over {seeds}).", partly=f"Both bounds end within 0.2 rad of the boundary for {near} (mean over "
            f"{seeds}), but only one part holds: {reach.text()}.", inconclusive=f"{undecided} they reach the "
            f"boundary: both bounds are within 0.2 rad of it for {near} ({reach.text()})."),
        augerino_text="Augerino was not trained at this profile.")
    if "fig5/augerino_covers_part" in evidence:
        ev = evidence["fig5/augerino_covers_part"]
        out["augerino_text"] = results.phrase(
            ev, reproduced="InstaAug's ranges leave less of the gap to the boundary than Augerino's one range, "
            "seed for seed, and their centres follow the angles better than the input-free model's one range "
            "(same recipe and band).", not_reproduced="InstaAug's ranges neither leave less of the gap to the "
            "boundary than Augerino's one range nor follow the angles better than the input-free model's.",
            partly=f"Only part of the contrast holds ({ev.text()}).",
            inconclusive=f"Whether InstaAug's ranges beat one range needs more seeds ({ev.text()}).",
            not_measurable="Augerino was not trained at this profile.")
    return out


def plot_bounds(per_image: dict[str, pd.DataFrame], max_angle: float):
    """Fig. 5 as a scatter: each test image's upper bound (rotate further the positive way) and lower bound
    against its angle within its class, with the class boundary (the largest label-preserving bounds, dashed)."""
    fig, axes = plt.subplots(1, len(per_image), figsize=(2.9 * len(per_image), 3.2), sharey=True, squeeze=False)
    phi = np.linspace(-max_angle, max_angle, 50)
    for ax, (method, df) in zip(axes[0], per_image.items()):
        ax.scatter(df.phi, df.upper, s=6, color="tab:green", label="upper bound a")
        ax.scatter(df.phi, df.lower, s=6, color="tab:purple", label="lower bound b")
        ax.plot(phi, BOUNDARY - phi, "--", color="tab:green", lw=1, label="boundary: π/2 - φ")
        ax.plot(phi, BOUNDARY + phi, "--", color="tab:purple", lw=1, label="boundary: π/2 + φ")
        ax.set_title(NAMES.get(method, method))
        ax.set_xlabel("image's angle in its class, φ (rad)")
    axes[0, 0].set_ylabel("learned bound (rad)")
    axes[0, -1].legend(fontsize=8, loc="upper center", markerscale=2)
    fig.tight_layout()
    return axes


def plot_arcs(per_image: dict[str, pd.DataFrame], n: int = 5):
    """Fig. 5 as the paper draws it: for ``n`` test images (angles spread over the data's range), the data's
    range (blue, the class's upright range) and the learned rotation range (green) on the unit circle, with the
    class boundary (red)."""
    fig, axes = plt.subplots(1, len(per_image), subplot_kw=dict(projection="polar"),
                             figsize=(2.8 * len(per_image), 3.0), squeeze=False)
    for ax, (method, df) in zip(axes[0], per_image.items()):
        picks = df.iloc[np.argsort(df.phi.values)[np.linspace(0, len(df) - 1, n).astype(int)]]
        ax.plot(np.linspace(-math.pi / 4, math.pi / 4, 50), np.ones(50), color="tab:blue", lw=3)
        for k, (_, r) in enumerate(picks.iterrows()):
            radius = 1.15 + 0.12 * k
            arc = np.linspace(r.phi - r.lower, r.phi + r.upper, 60)
            ax.plot(arc, np.full_like(arc, radius), color="tab:green", lw=2)
            ax.plot([r.phi], [radius], "o", color="black", ms=3)
        for b in (BOUNDARY, -BOUNDARY):
            ax.plot([b, b], [0, 1.9], color="tab:red", lw=1)
        ax.set_ylim(0, 1.9)
        ax.set_yticks([])
        ax.set_title(NAMES.get(method, method))
    fig.tight_layout()
    return axes


def plot_sweep(sweep: pd.DataFrame, chosen: tuple[float, float]):
    """The band sweep (:func:`~invlib.papers.d.rotations.band_sweep`): per band tried, the held-out accuracy (with
    the test-time augmentation, the selection's measure, and with one draw) and the learned mean width ``a + b``
    against the widths the band allows (grey), with the slopes of the bounds on the angle; the chosen band in bold.
    Nothing to draw when the band was given."""
    if not len(sweep):
        return None
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.2))
    labels = [f"[{r.h_min:g}, {r.h_max:g}]" + (" *" if (r.h_min, r.h_max) == tuple(chosen) else "")
              for _, r in sweep.iterrows()]
    x = np.arange(len(sweep))
    axes[0].plot(x, 100 * sweep.val_acc, "o-", label="held-out accuracy (test-time augmentation)")
    axes[0].plot(x, 100 * sweep.val_draw_acc, "s--", label="one augmented draw")
    axes[0].set_ylabel("accuracy (%)")
    axes[0].legend(fontsize=8)
    axes[1].bar(x, np.exp(sweep.h_max) - np.exp(sweep.h_min), bottom=np.exp(sweep.h_min), color="0.85",
                label="widths the band allows")
    axes[1].plot(x, sweep.width, "o", color="tab:green", label="learned mean width a + b")
    for i, r in sweep.reset_index().iterrows():
        axes[1].annotate(f"{r.upper_slope:+.2f} / {r.lower_slope:+.2f}", (i, r.width), fontsize=8,
                         textcoords="offset points", xytext=(4, 4))
    axes[1].set_ylabel("width a + b (rad)")
    axes[1].legend(fontsize=8, loc="upper left")
    for ax in axes:
        ax.set_xticks(x, labels)
        ax.set_xlabel("band on log(a + b)")
    fig.tight_layout()
    return axes
