"""What chapter D1 shows: Fig. 5 (each image's learned rotation range against its angle and the class boundary,
InstaAug vs Augerino), the claims of section 5.1 decided over seeds, and the sentences and numbers its prose quotes.

Every claim of the chapter is about what training produces, so its replicate is a seed (``n_min = 3``): the
effects are InstaAug's measures per seed (:func:`~invlib.papers.d.rotations.seed_slopes`), and Augerino's gap is
paired with InstaAug's of the same seed. The boundaries below are declared before the run.

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
>>> _, facts = report(run, settings("smoke"), per, {"instaaug": 1.0, "augerino": 1.0})
>>> run.claims["fig5/bounds_follow_angle"]["verdict"], round(facts["augerino_half"], 2)  # one seed
('inconclusive at this budget', 0.8)
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ... import results
from .rotations import BOUNDARY, Rotations, slopes

# The smallest effects that matter, (boundary, reason), declared before the run.
FOLLOW_SLOPE = (0.5, "half the boundary's slope of 1: a bound that moves at least half a radian per radian of the "
                     "image's angle follows it; a flatter one leaves most of the difference between images unused")
NEAR_SHARE = (0.5, "half the test images: 'always extend to very close to the boundary' holds for the typical image "
                   "only when more than half of them have both bounds within 0.2 rad (11 degrees) of it")
GAP_RATIO = (0.8, "InstaAug leaves at most four fifths of the gap Augerino leaves: a smaller difference is not the "
                  "contrast Fig. 5 (a) against (b) shows, arcs at the boundary against arcs short of it")
N_MIN = 3  # every claim here is about what training produces: three seeds before a verdict


def fig5_evidence(per_seed: pd.DataFrame) -> dict[str, results.Evidence]:
    """The evidence of D1's two InstaAug claims from its measures per seed (one row per seed with
    :func:`~invlib.papers.d.rotations.slopes`' columns): ``"fig5/bounds_follow_angle"``, two parts (the upper bound
    falls with the angle, the lower bound rises), each a 95 % t-interval over seeds of the slope toward the
    boundary against :data:`FOLLOW_SLOPE`; ``"fig5/reaches_boundary"``, the share of test images with both bounds
    within 0.2 rad of the boundary, over seeds, against :data:`NEAR_SHARE`.

    Example
    -------
    >>> rows = pd.DataFrame(dict(upper_slope=[-0.9, -0.8, -0.85], lower_slope=[0.9, 0.7, 0.8],
    ...                          near_boundary=[0.1, 0.2, 0.15]))
    >>> {k: ev.verdict for k, ev in fig5_evidence(rows).items()}
    {'fig5/bounds_follow_angle': 'reproduced', 'fig5/reaches_boundary': 'not reproduced'}
    """
    boundary, reason = FOLLOW_SLOPE
    follow = {name: results.decide(values, boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)
              for name, values in (("upper bound falls", -per_seed.upper_slope.to_numpy(float)),
                                   ("lower bound rises", per_seed.lower_slope.to_numpy(float)))}
    boundary, reason = NEAR_SHARE
    return {"fig5/bounds_follow_angle": results.decide_parts(follow, "both bounds must follow the angle"),
            "fig5/reaches_boundary": results.decide(per_seed.near_boundary.to_numpy(float), boundary=boundary,
                                                    reason=reason, unit="seed", n_min=N_MIN)}


def augerino_evidence(per_seed: pd.DataFrame, augerino_gaps: dict[int, float]) -> results.Evidence:
    """The evidence of ``fig5/augerino_covers_part``: per seed trained for both methods (the same trunk start and
    draws), InstaAug's mean gap to the boundary over Augerino's, a 95 % t-interval over those seeds below
    :data:`GAP_RATIO`. ``augerino_gaps`` maps a seed to Augerino's mean gap; seeds without an Augerino run do not
    count.

    Example
    -------
    >>> rows = pd.DataFrame(dict(seed=[0, 1, 2], mean_gap=[0.2, 0.25, 0.3]))
    >>> augerino_evidence(rows, {0: 0.8}).verdict, augerino_evidence(rows, {0: 0.8, 1: 0.9, 2: 0.85}).verdict
    ('inconclusive at this budget', 'reproduced')
    """
    ia = per_seed.set_index("seed").mean_gap
    ratios = [float(ia[s]) / gap for s, gap in sorted(augerino_gaps.items()) if s in ia.index and gap > 0]
    boundary, reason = GAP_RATIO
    return results.decide(ratios, direction="less", boundary=boundary, reason=reason, unit="seed", n_min=N_MIN)


def report(run, S: Rotations, per_image: dict[str, pd.DataFrame], acc: dict[str, float],
           seeds: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """Log D1's metrics and record its claims from the per-image bounds of each method
    (:func:`invlib.papers.d.rotations.bounds`, the first seed's models) and their test accuracies; return a summary
    table (one row per method) and the facts for the prose (numbers, and the sentences of :func:`prose`).
    ``seeds`` (:func:`~invlib.papers.d.rotations.seed_slopes`): InstaAug's measures per seed, the replicates of its
    claims; without it the first seed's model is the only one."""
    rows, facts = [], dict(boundary=BOUNDARY, max_angle=math.radians(S.max_angle), n_test=S.n_test)
    for method, df in per_image.items():
        s = slopes(df)
        rows.append(dict(method=method, **{k: round(v, 3) for k, v in s.items()}, test_acc=round(acc[method], 3)))
        for k, v in s.items():
            run.log(f"{method}/{k}", v)
        run.log(f"{method}/test_acc", acc[method])
        facts.update({f"{method}_{k}": v for k, v in s.items()}, **{f"{method}_acc": 100 * acc[method]})
    table = pd.DataFrame(rows).set_index("method")
    per_seed = seeds if seeds is not None and len(seeds) else pd.DataFrame([dict(seed=S.seed, **slopes(
        per_image["instaaug"]))])
    evidence = fig5_evidence(per_seed)
    n = len(per_seed)
    facts.update(seeds=n)
    slope_text = "; ".join(f"seed {int(r.seed)}: {r.upper_slope:+.2f} / {r.lower_slope:+.2f}"
                           for _, r in per_seed.iterrows())
    near_text = "; ".join(f"seed {int(r.seed)}: {100 * r.near_boundary:.0f} % (gap {r.mean_gap:.2f} rad)"
                          for _, r in per_seed.iterrows())
    run.claim("fig5/bounds_follow_angle", "InstaAug's learned range follows each image's angle: the further an "
              "image is rotated one way, the less it may be rotated further that way and the more the other.",
              paper="Fig. 5: arcs reach the class boundary for every image",
              ours=f"slopes of the upper / lower bound on the angle (boundary: -1 / +1), {slope_text}",
              criterion=f"two parts, each a seed's slope toward the boundary (minus the upper bound's slope; the "
              f"lower bound's), 95 % t-interval over seeds above {FOLLOW_SLOPE[0]:g}; >= {N_MIN} seeds",
              evidence=evidence["fig5/bounds_follow_angle"])
    run.claim("fig5/reaches_boundary", "InstaAug's ranges extend close to the class boundary.",
              paper="Fig. 5: arcs extend to very close to the boundary",
              ours=f"test images with both bounds within 0.2 rad of it, {near_text}",
              criterion=f"a seed's share of test images with both bounds within 0.2 rad of the boundary, 95 % "
              f"t-interval over seeds above {NEAR_SHARE[0]:g}; >= {N_MIN} seeds",
              evidence=evidence["fig5/reaches_boundary"])
    if "augerino" in table.index:
        au = slopes(per_image["augerino"])
        facts["augerino_half"] = float(per_image["augerino"].upper.iloc[0])
        evidence["fig5/augerino_covers_part"] = ev = augerino_evidence(per_seed, {S.seed: au["mean_gap"]})
        ia_gap = float(per_seed.set_index("seed").mean_gap.get(S.seed, math.nan))
        run.claim("fig5/augerino_covers_part", "Augerino learns one range for all images, which covers less of "
                  "what each image allows than InstaAug's.", paper="Fig. 5 (a): shared arcs, short of the boundary",
                  ours=f"mean gap to the boundary, seed {S.seed}: Augerino {au['mean_gap']:.2f} rad, InstaAug "
                  f"{ia_gap:.2f} rad (Augerino is trained from seed {S.seed} only)",
                  criterion=f"InstaAug's mean gap over Augerino's, paired by seed (the same trunk start), 95 % "
                  f"t-interval over seeds below {GAP_RATIO[0]:g}; >= {N_MIN} seeds", evidence=ev)
    facts.update(prose(evidence, per_seed))
    return table, facts


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
            f"(mean over {seeds}).", inconclusive=f"{undecided} they reach the boundary: both bounds are within "
            f"0.2 rad of it for {near} ({reach.text()})."),
        augerino_text="Augerino was not trained at this profile.")
    if "fig5/augerino_covers_part" in evidence:
        ev = evidence["fig5/augerino_covers_part"]
        out["augerino_text"] = results.phrase(
            ev, reproduced="InstaAug's ranges leave less of the gap to the boundary than Augerino's one range, "
            "seed for seed.", not_reproduced="InstaAug's ranges do not leave less of the gap to the boundary than "
            "Augerino's one range.", inconclusive="Whether InstaAug's ranges leave less of the gap than Augerino's "
            f"one range needs Augerino trained from more seeds: it is trained from one here ({ev.text()}).")
    return out


def plot_bounds(per_image: dict[str, pd.DataFrame], max_angle: float):
    """Fig. 5 as a scatter: each test image's upper bound (rotate further the positive way) and lower bound
    against its angle within its class, with the class boundary (the largest label-preserving bounds, dashed)."""
    fig, axes = plt.subplots(1, len(per_image), figsize=(5.2 * len(per_image), 3.6), sharey=True, squeeze=False)
    phi = np.linspace(-max_angle, max_angle, 50)
    for ax, (method, df) in zip(axes[0], per_image.items()):
        ax.scatter(df.phi, df.upper, s=6, color="tab:green", label="upper bound a")
        ax.scatter(df.phi, df.lower, s=6, color="tab:purple", label="lower bound b")
        ax.plot(phi, BOUNDARY - phi, "--", color="tab:green", lw=1, label="boundary: pi/2 - phi")
        ax.plot(phi, BOUNDARY + phi, "--", color="tab:purple", lw=1, label="boundary: pi/2 + phi")
        ax.set_title(method)
        ax.set_xlabel("image's angle within its class, phi (rad)")
    axes[0, 0].set_ylabel("learned bound (rad)")
    axes[0, -1].legend(fontsize=8, loc="upper center")
    fig.tight_layout()
    return axes


def plot_arcs(per_image: dict[str, pd.DataFrame], n: int = 5):
    """Fig. 5 as the paper draws it: for ``n`` test images (angles spread over the data's range), the data's
    range (blue, the class's upright range) and the learned rotation range (green) on the unit circle, with the
    class boundary (red)."""
    fig, axes = plt.subplots(1, len(per_image), subplot_kw=dict(projection="polar"),
                             figsize=(4 * len(per_image), 4), squeeze=False)
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
        ax.set_title(method)
    fig.tight_layout()
    return axes
