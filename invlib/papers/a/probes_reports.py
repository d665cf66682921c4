"""Paper A's reports: the paper's Table 1 and layer claims beside this run, the prose readings and the figures.

The method (views, featurizers, probes, Table 1 runs, layer importance) is :mod:`invlib.papers.a.probes`;
this module turns its tables into claims (:func:`record_table1_claims`, :func:`record_layer_claims`), the
numbers the prose quotes (:func:`table1_readings`) and the figures (:func:`figure2`, :func:`figure3`,
:func:`table1_bars`, :func:`bar_panels`).
"""

from __future__ import annotations

import math

import torch

from ...utils import check_choice
from .probes import (
    COLOUR,
    GEOMETRIC,
    ORDER,
    PAPER_TABLE1,
    PAPER_TABLE2,
    TASKS,
    block_dct,
    crops_for,
    ladder,
    layer_depths,
    render,
    zigzag,
    zoom_out_slack,
)


# ----------------------------------------------------------------------------------------- tables and logs
def paper_accuracy(row, table: str = "table1") -> tuple[float, float] | None:
    """The paper's ``(train, val)`` accuracy in % for a row of :func:`run_table`'s table, or None.

    ``table="table1"`` looks up the featurizer and task; ``"table2"`` the layers and task (ResNet-18 only).

    Example
    -------
    >>> import pandas as pd
    >>> row = next(pd.DataFrame([dict(featurizer="ResNet-18", layers="first half", task="hue")]).itertuples())
    >>> paper_accuracy(row), paper_accuracy(row, "table2")
    ((87.6, 71.6), (78.9, 72.9))
    """
    if table == "table1":
        return PAPER_TABLE1.get(row.featurizer, {}).get(row.task)
    check_choice(table, ["table1", "table2"], "paper table")
    return PAPER_TABLE2.get(row.layers, {}).get(row.task) if row.featurizer == "ResNet-18" else None


def log_table(run, table, name: str = "table1") -> None:
    """Log each row's validation and training accuracy in % beside the paper's (:func:`paper_accuracy`).

    Keys: ``table1/<featurizer>/<task>/<val|train>``; ``table2/<featurizer>/<layers>/<task>/<val|train>``.
    An undefined task logs None, with the reason as the note.

    Example
    -------
    >>> from invlib.results import Run
    >>> import pandas as pd
    >>> run = Run("demo", "smoke")
    >>> log_table(run, pd.DataFrame([dict(featurizer="DCT", layers="all", task="zoom_in", train_acc=0.6,
    ...                                   val_acc=0.5, undefined="")]))
    >>> run.metrics["table1/DCT/zoom_in/val"], run.paper["table1/DCT/zoom_in/val"]
    (50.0, 46.6)
    """
    for r in table.itertuples():
        paper = paper_accuracy(r, name) or (None, None)
        key = f"{name}/{r.featurizer}/{r.task}" if name == "table1" else f"{name}/{r.featurizer}/{r.layers}/{r.task}"
        note = f"undefined: {r.undefined}" if r.undefined else ""
        run.log(f"{key}/val", 100 * r.val_acc, paper=paper[1], note=note)
        run.log(f"{key}/train", 100 * r.train_acc, paper=paper[0], note=note)


def side_by_side(table, column: str = "val_acc", name: str = "table1"):
    """This run's accuracy in % with the paper's in brackets: a DataFrame of featurizers (``"table2"``:
    featurizer and layers) x tasks; an undefined task reads "undefined".

    Example
    -------
    >>> import pandas as pd
    >>> side_by_side(pd.DataFrame([dict(featurizer="DCT", layers="all", task="zoom_in", train_acc=0.6,
    ...                                 val_acc=0.5, undefined="")])).loc["DCT", "zoom_in"]
    '50.0 (46.6)'
    """
    import pandas as pd

    which = 0 if column == "train_acc" else 1
    cells = {}
    for r in table.itertuples():
        paper = paper_accuracy(r, name)
        value = getattr(r, column)
        text = "undefined" if math.isnan(value) else f"{100 * value:.1f}"
        row = r.featurizer if name == "table1" else (r.featurizer, r.layers)
        cells.setdefault(row, {})[r.task] = text + (f" ({paper[which]:.1f})" if paper else "")
    return pd.DataFrame(cells).T[[t for t in TASKS if t in set(table.task)]]


def validation(table, layers: str = "all") -> dict:
    """``{(featurizer, task): validation accuracy in %}`` of the rows probing ``layers`` (NaN: undefined).

    Example
    -------
    >>> import pandas as pd
    >>> validation(pd.DataFrame([dict(featurizer="DCT", layers="all", task="hue", val_acc=0.5)]))
    {('DCT', 'hue'): 50.0}
    """
    return {(r.featurizer, r.task): 100 * r.val_acc for r in table[table.layers == layers].itertuples()}


def percent(value: float) -> str:
    """``"71.6%"``, or ``"undefined"`` for NaN (a task the images cannot pose).

    Example
    -------
    >>> percent(71.63), percent(math.nan)
    ('71.6%', 'undefined')
    """
    return "undefined" if math.isnan(value) else f"{value:.1f}%"


# ----------------------------------------------------------------------------------------- claims
def _claim(run, cid: str, claim: str, paper: list[float], ours: list[float], test, criterion: str,
           enough: float = 1.0) -> str:
    """Record a claim made of several comparisons ``test(x)``: reproduced when the share that pass is at least
    ``enough`` (default: all), partly when at least half pass, not measurable when a value is NaN (a task the
    images cannot pose) or there is none. Recorded numbers: the worst (smallest) value when all must pass,
    else "k of n" passing. ``claim/<claim>`` is logged as this run's yes/no beside the paper's."""
    def holds(values):
        return bool(values) and sum(bool(test(x)) for x in values) >= enough * len(values)

    def summary(values):
        return round(min(values), 1) if enough == 1 else f"{sum(bool(test(x)) for x in values)} of {len(values)}"

    run.log(f"claim/{claim}", holds(ours), paper=holds(paper))
    measurable = bool(ours) and not any(math.isnan(x) for x in ours)
    if not measurable:
        criterion += " [not measurable: " + ("a task it needs is undefined on these images]" if ours
                                             else "it needs two backbones]")
    half = sum(bool(test(x)) for x in ours) >= len(ours) / 2
    return run.claim(cid, claim, paper=summary(paper), ours=summary(ours) if measurable else None,
                     criterion=criterion, reproduced=measurable and holds(ours), partly=measurable and half,
                     measurable=measurable)


def record_table1_claims(run, table, backbones: list[str]) -> dict:
    """Record the paper's Table 1 claims (sections 5 and 6), with verdicts computed from ``table``.

    ``table``: :func:`run_table`'s, with the baselines of :func:`baselines` and the ``backbones`` rows. Each
    claim compares validation accuracies in %, the paper's ResNet-18 and ResNet-50 against this run's
    ``backbones``; paper and this run are recorded as the worst case of the comparisons (see the criterion).
    Also logs, as before, ``claim/<claim>`` (yes/no) and ``claim/... and the DCT of magnitudes too`` (not a
    claim of the paper: the DCT of magnitudes is this book's second reading of its DCT baseline), and returns
    that reading for the prose: ``{"beat_magnitude": "yes" | "no"}``.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=acc[1] / 100)
    ...         for f, tasks in PAPER_TABLE1.items() for t, acc in tasks.items()]
    >>> rows += [dict(featurizer="DCT (magnitude)", layers="all", task=t, val_acc=0.5) for t in GEOMETRIC]
    >>> run = Run("demo", "smoke")
    >>> record_table1_claims(run, pd.DataFrame(rows), ["ResNet-18", "ResNet-50"])
    {'beat_magnitude': 'yes'}
    >>> {c["verdict"] for c in run.claims.values()}  # the paper's own numbers reproduce every claim
    {'reproduced'}
    """
    ours, mine = validation(table), list(backbones)
    paper = {(f, t): acc[1] for f, tasks in PAPER_TABLE1.items() for t, acc in tasks.items()}
    theirs = ["ResNet-18", "ResNet-50"]
    easy = ["saturation", "contrast", "brightness"]

    def both(values):  # the same comparison on the paper's numbers and on ours
        return values(paper, theirs), values(ours, mine)

    def beat(base):
        return lambda v, rows: [v[r, t] - v[base, t] for r in rows for t in GEOMETRIC]

    _claim(run, "table1/resnets_beat_dct", "ResNets beat the (signed) DCT on scale and aspect ratio",
           *both(beat("DCT")), lambda x: x > 0,
           "ResNet minus DCT validation accuracy > 0 points for every ResNet on zoom in, zoom out and aspect ratio; "
           "the numbers are the smallest difference (partly: half of the comparisons)")
    magnitude = [ours[r, t] > ours["DCT (magnitude)", t] for r in mine for t in GEOMETRIC]
    run.log("claim/... and the DCT of magnitudes too", all(magnitude))
    _claim(run, "table1/resnets_beat_pixels", "ResNets beat raw pixels on scale and aspect ratio",
           *both(beat("Passthrough")), lambda x: x > 0,
           "ResNet minus passthrough validation accuracy > 0 points for every ResNet on zoom in, zoom out and "
           "aspect ratio; the numbers are the smallest difference (partly: half of the comparisons)")
    _claim(run, "table1/colour_near_100", "Saturation, contrast, brightness near 100% (>= 90%) from ResNet features",
           *both(lambda v, rows: [v[r, t] for r in rows for t in easy]), lambda x: x >= 90,
           "validation accuracy >= 90 % for every ResNet on saturation, contrast and brightness; the numbers are "
           "the lowest (partly: half of them)")
    _claim(run, "table1/contrast_far_above_pixels", "Contrast: ResNets far above raw pixels (> 20 points)",
           *both(lambda v, rows: [v[r, "contrast"] - v["Passthrough", "contrast"] for r in rows]), lambda x: x > 20,
           "ResNet minus passthrough validation accuracy on contrast > 20 points for every ResNet; the numbers are "
           "the smallest difference (partly: for half of the ResNets)")
    _claim(run, "table1/zoom_out_harder", "Zoom-out is harder than zoom-in for the ResNets",
           *both(lambda v, rows: [v[r, "zoom_in"] - v[r, "zoom_out"] for r in rows]), lambda x: x > 0,
           "zoom-in minus zoom-out validation accuracy > 0 points for every ResNet; the numbers are the smallest "
           "difference (partly: for half of the ResNets)")
    _claim(run, "table1/hue_hardest_colour", "Hue is the hardest colour task for the ResNets",
           *both(lambda v, rows: [min(v[r, t] for t in easy) - v[r, "hue"] for r in rows]), lambda x: x > 0,
           "lowest of saturation, contrast, brightness minus hue validation accuracy > 0 points for every ResNet; "
           "the numbers are the smallest difference (partly: for half of the ResNets)")
    _claim(run, "table1/resnet18_at_least_resnet50", "ResNet-18 ranks at least as well as ResNet-50 on most tasks",
           *both(lambda v, rows: [v[rows[0], t] - v[rows[1], t] for t in TASKS] if len(rows) > 1 else []),
           lambda x: x >= 0, f"first ResNet's validation accuracy >= the second's on at least 4 of the {len(TASKS)} "
           "tasks; the numbers count the tasks where it is", enough=4 / len(TASKS))
    return {"beat_magnitude": "yes" if all(magnitude) else "no"}


def record_layer_claims(run, depths, table) -> dict:
    """Record section 6.1's claims (Figures 5, 6 and Table 2), with verdicts computed from this run, and return
    the numbers chapter A2's prose quotes: ``depth_verdict`` ("earlier", "not earlier", ...), ``depth_colour``,
    ``depth_geo`` (mean depths, backbones averaged) and ``first_wins`` (per backbone, the share of tasks where
    the first half ranks at least as well as the second).

    ``depths``: importance-weighted depth per task (rows) and backbone (columns), from :func:`layer_depths`;
    ``table``: :func:`run_table`'s with ``layers=halves``. Table 2's claims use the ResNet-18 row (else the
    first backbone), on the paper's three tasks. Also logs, as before, ``colour_tasks_earlier_than_geometric``
    and ``first_half_at_least_second/<backbone>`` (share of all defined tasks).

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> depths = pd.DataFrame({"ResNet-18": dict(zip(ORDER, [0.1, 0.1, 0.1, 0.5, 0.6, 0.6, 0.6]))})
    >>> rows = [dict(featurizer="ResNet-18", layers=h, task=t, val_acc=acc[1] / 100, train_acc=acc[0] / 100)
    ...         for h, tasks in PAPER_TABLE2.items() for t, acc in tasks.items()]
    >>> run = Run("demo", "smoke")
    >>> record_layer_claims(run, depths, pd.DataFrame(rows))["first_wins"]
    'ResNet-18: 100% of the tasks'
    >>> {c["id"]: c["verdict"] for c in run.claims.values()}["table2/first_half_at_least_second"]
    'reproduced'
    """
    d = depths.reindex(list(ORDER))
    names = list(d.columns)
    colour, geo = d.loc[list(COLOUR)].mean(skipna=False), d.loc[list(GEOMETRIC)].mean(skipna=False)
    run.log("colour_tasks_earlier_than_geometric", bool((colour < geo).all()), paper=True)
    measurable = not (colour.isna().any() or geo.isna().any() or d.loc["contrast"].isna().any())
    why = "" if measurable else " [not measurable: a task it needs is undefined on these images]"
    gap = geo - colour
    run.claim("fig5_6/colour_earlier", "Colour tasks (brightness, saturation, hue) are read from earlier layers "
              "than scale and aspect ratio", paper="yes (Figures 5, 6)",
              ours={n: f"{colour[n]:.2f} vs {geo[n]:.2f}" for n in names},
              criterion="mean importance-weighted depth (0 = first layer, 1 = last) of the colour tasks < that "
              "of zoom in, zoom out, aspect ratio, for every backbone (partly: for one)" + why,
              reproduced=measurable and bool((gap > 0).all()), partly=measurable and bool((gap > 0).any()),
              measurable=measurable)
    latest = d.loc[list(COLOUR)].max(skipna=False)
    later = d.loc["contrast"] - latest
    run.claim("fig5_6/contrast_later", "Contrast depends more on later layers than the other colour tasks",
              paper="yes (section 5, Figures 5, 6)",
              ours={n: f"{d.loc['contrast', n]:.2f} vs {latest[n]:.2f}" for n in names},
              criterion="importance-weighted depth of contrast > the largest of brightness, saturation and hue, "
              "for every backbone (partly: for one)" + why, reproduced=measurable and bool((later > 0).all()),
              partly=measurable and bool((later > 0).any()), measurable=measurable)
    acc = table.pivot_table(index=["featurizer", "task"], columns="layers", values="val_acc", dropna=False)
    first_wins = (acc["first half"] >= acc["second half"]).astype(float).where(acc["all"].notna())
    shares = first_wins.groupby("featurizer").mean()
    for name, share in shares.items():
        run.log(f"first_half_at_least_second/{name}", float(share), paper=1.0,
                note="share of tasks; paper: 3 of 3 ResNet-18 tasks")
    row = "ResNet-18" if "ResNet-18" in names else names[0]
    tasks = list(PAPER_TABLE2["all"])
    v = {(h, t): 100 * acc.loc[(row, t), h] for h in PAPER_TABLE2 for t in tasks}
    p = {(h, t): PAPER_TABLE2[h][t][1] for h in PAPER_TABLE2 for t in tasks}
    ok = not any(math.isnan(x) for x in v.values())
    why = "" if ok else " [not measurable: a task it needs is undefined on these images]"
    for cid, claim, wins, enough, criterion in (
            ("table2/first_half_at_least_second", "The first half of the layers ranks at least as well as the "
             "second half", lambda a: sum(a["first half", t] >= a["second half", t] for t in tasks), 3,
             "first half >= second half validation accuracy on all 3 of the paper's tasks (zoom in, aspect ratio, "
             "hue; partly: on 2)"),
            ("table2/first_half_beats_all", "On some tasks the first half alone ranks better than all layers",
             lambda a: sum(a["first half", t] > a["all", t] for t in tasks), 1,
             "first half > all layers validation accuracy on at least 1 of the paper's 3 tasks (zoom in, aspect "
             "ratio, hue)")):
        run.claim(cid, claim, paper=f"{wins(p)} of 3 (ResNet-18)", ours=f"{wins(v)} of 3 ({row})" if ok else None,
                  criterion=criterion + why, reproduced=ok and wins(v) >= enough, partly=ok and wins(v) >= 2,
                  measurable=ok)
    earlier = int((colour < geo).sum())
    return dict(depth_verdict={len(names): "earlier", 0: "not earlier"}.get(earlier, "earlier for one backbone only"),
                depth_colour=float(colour.mean()), depth_geo=float(geo.mean()),
                first_wins=", ".join(f"{name}: {share:.0%} of the tasks" for name, share in shares.items()))


def variants_report(run, table, maps: dict, names: list[str]) -> tuple:
    """Chapter A2's "does training change what the layers encode?": validation accuracy in % and
    importance-weighted depth per task (rows) and variant (columns, in ``names`` order; ``maps`` from
    :func:`invlib.papers.a.probes.layer_importance`), logged as
    ``variants/<name>/<task>/val|depth``, and the numbers the prose quotes: ``train_gain`` (accuracy change per
    task from the first variant to the last, text) and ``depth_shift`` (mean depth change).

    Returns ``(accuracy %, depth, readings)``: two DataFrames and a dict.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> t = pd.DataFrame([dict(featurizer=f, task="hue", val_acc=a) for f, a in (("u", 0.5), ("t", 0.7))])
    >>> m = {(n, "mean"): pd.DataFrame({"stem.0": [1.0]}, index=["hue"]) for n in ("u", "t")}
    >>> acc, depth, readings = variants_report(Run("demo", "smoke"), t, m, ["u", "t"])
    >>> readings["train_gain"]
    'hue +20.0'
    """
    acc = 100 * table.pivot(index="task", columns="featurizer", values="val_acc").reindex(
        index=[t for t in ORDER if t in set(table.task)], columns=names)
    depth = layer_depths(maps, names)[0]
    for name in names:
        for task in depth.index:
            run.log(f"variants/{name}/{task}/val", acc.loc[task, name])
            run.log(f"variants/{name}/{task}/depth", depth.loc[task, name])
    gain = (acc[names[-1]] - acc[names[0]]).dropna().round(1)
    return acc, depth, dict(train_gain=", ".join(f"{t} {g:+.1f}" for t, g in gain.items()),
                            depth_shift=float((depth[names[-1]] - depth[names[0]]).mean()))


def table1_readings(table, backbones: list[str], dataset: str = "fashion_mnist_color") -> dict[str, str]:
    """The numbers the prose of chapter A1 quotes, as text (:func:`percent`; "undefined" for a task the
    images cannot pose): the best hue accuracy and its reading, passthrough on zoom-out, contrast and
    saturation, the first backbone on saturation; ``data_note``, the sentence that introduces them for
    ``dataset``.

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=0.5) for f in ("Passthrough", "R") for t in TASKS]
    >>> table1_readings(pd.DataFrame(rows), ["R"])["hue_verdict"]
    'at chance'
    """
    v = validation(table)
    hue = max((v[f, "hue"] for f in table.featurizer.unique()), default=math.nan)
    verdict = "undefined on these images" if math.isnan(hue) else "at chance" if hue < 60 else "above chance"
    note = ("This run's data are colourised Fashion-MNIST garments on black, not photographs, and three of the "
            "differences from the paper follow from that rather than from the method:"
            if dataset.startswith("fashion_mnist") else
            f"This run's data are `{dataset}`. The notes below explain what happens on the `cpu` profile's "
            "colourised Fashion-MNIST; compare them with the table above:")
    return dict(data_note=note, hue_verdict=verdict, hue_best=percent(hue),
                zo_pass=percent(v["Passthrough", "zoom_out"]), con_pass=percent(v["Passthrough", "contrast"]),
                sat_pass=percent(v["Passthrough", "saturation"]),
                sat_r18=percent(v[backbones[0], "saturation"]))


# ----------------------------------------------------------------------------------------- figures and layers
def task_table():
    """The seven tasks: sampled range and what is ranked, a DataFrame indexed by task.

    Example
    -------
    >>> task_table().loc["zoom_out", "range"]
    '[0.1, s]'
    """
    import pandas as pd

    return pd.DataFrame([dict(task=t.name, range=f"[{t.low:g}, {'s' if math.isnan(t.high) else f'{t.high:g}'}]",
                              ranked=t.value) for t in TASKS.values()]).set_index("task")


def figure2(images: torch.Tensor, boxes: torch.Tensor, size: int, seed: int = 0, k: int = 6):
    """The paper's Figure 2: one image under every task, ``k`` views each sorted by the ranked value.

    The image is the one of the first 64 of ``images`` ``(N, C, H, W)`` with most room to zoom out.

    Example
    -------
    >>> x, b = torch.randint(0, 255, (2, 3, 32, 32), dtype=torch.uint8), torch.tensor([[8.0, 8, 24, 24]] * 2)
    >>> len(figure2(x, b, 16, k=3).axes)
    21
    """
    from ... import plots

    example = int(torch.argmax(zoom_out_slack(boxes[:64], images.shape[-2:])))
    rows, titles = [], []
    for task in TASKS:
        views, values = ladder(images[example], boxes[example], task, size, k=k, seed=seed)
        rows.append(views)
        titles += [f"{task} {v:.2f}" for v in values.tolist()]
    return plots.image_grid(torch.cat(rows), titles, ncols=k, suptitle="Figure 2: views ordered by the ranked value")


def figure3(images: torch.Tensor, boxes: torch.Tensor, size: int):
    """The paper's Figure 3: mean 8x8 block-DCT magnitudes of the objects at three scales (zoomed out as far as
    the image allows, at the box, zoomed in by half), as maps and as curves in zig-zag order.

    Returns ``(figure, {scale: share})``: per scale, the mean magnitude of the upper 32 AC coefficients over
    that of all 63.

    Example
    -------
    >>> x, b = torch.randint(0, 255, (4, 3, 32, 32), dtype=torch.uint8), torch.tensor([[8.0, 8, 24, 24]] * 4)
    >>> fig, high = figure3(x, b, 16)
    >>> list(high)
    ['small (zoom-out, m = s)', 'box', 'large (zoom-in, t = 0.5)']
    """
    import matplotlib.pyplot as plt

    hw = images.shape[-2:]
    scales = {"small (zoom-out, m = s)": crops_for("zoom_out", boxes, hw, zoom_out_slack(boxes, hw))[0],
              "box": crops_for("zoom_in", boxes, hw, torch.zeros(len(boxes)))[0],
              "large (zoom-in, t = 0.5)": crops_for("zoom_in", boxes, hw, torch.full((len(boxes),), 0.5))[0]}
    dct = {name: block_dct(render(images, crops[:, None], size, "zoom_in")).mean((0, 1))
           for name, crops in scales.items()}
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.4), gridspec_kw=dict(width_ratios=[1, 1, 1, 1.8]),
                             layout="constrained")
    inverse = torch.argsort(zigzag(8))  # zig-zag position -> 8x8 cell
    vmax = max(float(v.log10().max()) for v in dct.values())
    for ax, (name, coef) in zip(axes, dct.items()):
        im = ax.imshow(coef[inverse].view(8, 8).log10().numpy(), vmin=vmax - 3, vmax=vmax, cmap="magma")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
        axes[-1].semilogy(coef.numpy(), label=name)
    fig.colorbar(im, ax=axes[2], fraction=0.05, label="log10 mean |coefficient|")
    axes[-1].set_xlabel("coefficient, zig-zag order")
    axes[-1].legend(fontsize=8)
    fig.suptitle("Figure 3: 8x8 block DCT magnitude at three object scales")
    return fig, {name: float(coef[32:].mean() / coef[1:].mean()) for name, coef in dct.items()}


def table1_bars(table):
    """Table 1 as bars: validation accuracy per task and featurizer, the paper's as black ticks.

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, task=t, val_acc=0.7) for f in ("DCT", "R") for t in TASKS]
    >>> len(table1_bars(pd.DataFrame(rows)).axes[0].patches)
    14
    """
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(table.featurizer.unique())
    val = table.pivot_table(index="task", columns="featurizer", values="val_acc", dropna=False).reindex(
        index=list(TASKS), columns=names)
    fig, ax = plt.subplots(figsize=(11, 3.6))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        x = np.arange(len(val)) + (k - len(names) / 2 + 0.5) * width
        ax.bar(x, 100 * val[name], width, label=name)
        paper = [PAPER_TABLE1.get(name, {}).get(t, (None, np.nan))[1] for t in val.index]
        ax.scatter(x, paper, marker="_", s=120, color="black", zorder=3, label="paper" if k == 0 else None)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(val)), val.index)
    ax.set_ylabel("validation accuracy %")
    ax.set_ylim(30, 102)
    ax.legend(ncols=len(names) + 1, fontsize=8, loc="lower left")
    ax.set_title("Table 1 as bars: this run (bars) and the paper (black ticks)")
    return fig


def log_layers(run, maps: dict, depths, first_block) -> None:
    """Log ``importance/<backbone>/<task>/<mean|max>`` (layer -> share), ``depth/<backbone>/<task>`` and
    ``first_block/<backbone>/<task>``.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> from invlib.papers.a.probes import layer_depths
    >>> m = pd.DataFrame({"stem.0": [0.5], "layer2.0": [0.5]}, index=["hue"])
    >>> run = Run("demo", "smoke")
    >>> log_layers(run, {("R", "mean"): m}, *layer_depths({("R", "mean"): m}, ["R"]))
    >>> run.metrics["depth/R/hue"], run.metrics["importance/R/hue/mean"]
    (0.5, {'stem.0': 0.5, 'layer2.0': 0.5})
    """
    for (name, agg), m in maps.items():
        for t in m.index:
            run.log(f"importance/{name}/{t}/{agg}", m.loc[t].round(5).to_dict())
    for name in depths.columns:
        for t in depths.index:
            run.log(f"depth/{name}/{t}", depths.loc[t, name])
            run.log(f"first_block/{name}/{t}", float(first_block.loc[t, name]))


def bar_panels(frames: dict, xlim: dict | None = None, figsize=(11, 3.2)):
    """One horizontal bar chart per ``{title: DataFrame}``, side by side (rows top-down, a bar per column);
    ``xlim``: ``{title: (low, high)}``.

    Example
    -------
    >>> import pandas as pd
    >>> len(bar_panels({"a": pd.DataFrame({"x": [1, 2]}), "b": pd.DataFrame({"y": [3, 4]})}).axes)
    2
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(frames), figsize=figsize)
    for ax, (title, frame) in zip(axes, frames.items()):
        frame.plot.barh(ax=ax, title=title, xlim=(xlim or {}).get(title))
        ax.invert_yaxis()
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
