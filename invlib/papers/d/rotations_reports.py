"""What chapter D1 shows: Fig. 5 (each image's learned rotation range against its angle and the class boundary,
InstaAug vs Augerino), the claims of section 5.1 with computed verdicts, and the numbers its prose quotes.

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
>>> run.claims["fig5/bounds_follow_angle"]["verdict"], round(facts["augerino_half"], 2)
('reproduced', 0.8)
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .rotations import BOUNDARY, Rotations, slopes


def report(run, S: Rotations, per_image: dict[str, pd.DataFrame], acc: dict[str, float],
           seeds: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """Log D1's metrics and record its claims from the per-image bounds of each method
    (:func:`invlib.papers.d.rotations.bounds`) and their test accuracies; return a summary table (one row per
    method) and the facts for the prose. ``seeds`` (:func:`~invlib.papers.d.rotations.seed_slopes`): InstaAug's
    measures per seed; with it, InstaAug's two claims are judged on every seed (:func:`seed_verdict`)."""
    rows, facts = [], dict(boundary=BOUNDARY, max_angle=math.radians(S.max_angle), n_test=S.n_test)
    for method, df in per_image.items():
        s = slopes(df)
        rows.append(dict(method=method, **{k: round(v, 3) for k, v in s.items()}, test_acc=round(acc[method], 3)))
        for k, v in s.items():
            run.log(f"{method}/{k}", v)
        run.log(f"{method}/test_acc", acc[method])
        facts.update({f"{method}_{k}": v for k, v in s.items()}, **{f"{method}_acc": 100 * acc[method]})
    table = pd.DataFrame(rows).set_index("method")
    ia = table.loc["instaaug"]
    per_seed = seeds if seeds is not None and len(seeds) else pd.DataFrame([dict(seed=S.seed, **ia.to_dict())])
    verdicts = [fig5_verdicts(r) for _, r in per_seed.iterrows()]
    follow, reach = (seed_verdict([v[i] for v in verdicts]) for i in (0, 1))
    n = len(per_seed)
    facts.update(seeds=n, seeds_following=sum(v[0] == "reproduced" for v in verdicts),
                 seeds_reaching=sum(v[1] == "reproduced" for v in verdicts))
    slope_text = "; ".join(f"seed {int(r.seed)}: {r.upper_slope:+.2f} / {r.lower_slope:+.2f}"
                           for _, r in per_seed.iterrows())
    near_text = "; ".join(f"seed {int(r.seed)}: {100 * r.near_boundary:.0f} % (gap {r.mean_gap:.2f} rad)"
                          for _, r in per_seed.iterrows())
    rule = (" on a majority of the seeds; partly: on at least one seed (or partly on a majority)" if n > 1 else "")
    run.claim("fig5/bounds_follow_angle", "InstaAug's learned range follows each image's angle: the further an "
              "image is rotated one way, the less it may be rotated further that way and the more the other.",
              paper="Fig. 5: arcs reach the class boundary for every image",
              ours=f"slopes of the upper / lower bound on the angle (boundary: -1 / +1), {slope_text}",
              criterion="upper slope < 0 < lower slope, both of magnitude >= 0.5 (reproduced); opposite signs with "
              f"magnitudes >= 0.2 (partly){rule}",
              reproduced=follow == "reproduced", partly=follow == "partly")
    run.claim("fig5/reaches_boundary", "InstaAug's ranges extend close to the class boundary.",
              paper="Fig. 5: arcs extend to very close to the boundary",
              ours=f"test images with both bounds within 0.2 rad of it, {near_text}",
              criterion="at least half the images within 0.2 rad on both sides (reproduced); a quarter (partly)"
              f"{rule}", reproduced=reach == "reproduced", partly=reach == "partly")
    if "augerino" in table.index:
        au = table.loc["augerino"]
        facts["augerino_half"] = float(per_image["augerino"].upper.iloc[0])
        gap = float(per_seed.mean_gap.median())
        which = f"InstaAug (median of {n} seeds)" if n > 1 else "InstaAug"
        run.claim("fig5/augerino_covers_part", "Augerino learns one range for all images, which covers less of "
                  "what each image allows than InstaAug's.", paper="Fig. 5 (a): shared arcs, short of the boundary",
                  ours=f"mean gap to the boundary: Augerino {au.mean_gap:.2f} rad, {which} {gap:.2f} rad",
                  criterion="InstaAug's mean gap at most 0.8 x Augerino's (reproduced); smaller (partly)",
                  reproduced=bool(gap <= 0.8 * au.mean_gap), partly=bool(gap < au.mean_gap))
    return table, facts


def seed_verdict(verdicts: list[str]) -> str:
    """One verdict from per-seed verdicts: ``"reproduced"`` on a majority of the seeds; ``"partly"`` when at least
    one seed is reproduced or a majority is partly or better; else ``"not reproduced"``.

    Example
    -------
    >>> seed_verdict(["reproduced", "not reproduced", "reproduced"]), seed_verdict(["reproduced", "not reproduced"])
    ('reproduced', 'partly')
    >>> seed_verdict(["not reproduced"] * 3)
    'not reproduced'
    """
    n = len(verdicts)
    full, some = verdicts.count("reproduced"), sum(v in ("reproduced", "partly") for v in verdicts)
    return "reproduced" if full > n / 2 else "partly" if full or some > n / 2 else "not reproduced"


def fig5_verdicts(s) -> tuple[str, str]:
    """The verdicts of D1's two InstaAug claims from one method's :func:`~invlib.papers.d.rotations.slopes`
    (a dict or a row): ``(bounds follow the angle, bounds reach the boundary)``, each ``"reproduced"``,
    ``"partly"`` or ``"not reproduced"``. The criteria: upper slope < 0 < lower slope with both magnitudes >= 0.5
    (0.2: partly); at least half the images within 0.2 rad of the boundary on both sides (a quarter: partly).

    Example
    -------
    >>> fig5_verdicts(dict(upper_slope=-0.9, lower_slope=0.3, near_boundary=0.6))
    ('partly', 'reproduced')
    """
    opposite = s["upper_slope"] < 0 < s["lower_slope"]
    least = min(-s["upper_slope"], s["lower_slope"])
    follow = ("reproduced" if opposite and least >= 0.5 else "partly" if opposite and least >= 0.2
              else "not reproduced")
    near = s["near_boundary"]
    reach = "reproduced" if near >= 0.5 else "partly" if near >= 0.25 else "not reproduced"
    return follow, reach


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
