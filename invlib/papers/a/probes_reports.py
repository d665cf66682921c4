"""Paper A's reports: the paper's Table 1 and layer claims beside this run, the prose readings and the figures.

The method (views, featurizers, probes) is :mod:`invlib.papers.a.probes`, the chapters' runs of it (Table 1 and 2
runs, layer importance) :mod:`invlib.papers.a.tables`; this module turns their tables into claims
(:func:`report_table1`, :func:`report_layers`), the
numbers the prose quotes (:func:`table1_readings`) and the figures (:func:`figure2`, :func:`figure3`,
:func:`table1_bars`, :func:`bar_panels`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from ... import pages
from ...protocol import decide
from ...results import (
    Interval,
    bootstrap_interval,
    not_measurable,
    phrase,
    rate_difference_interval,
    share_interval,
)
from ...utils import check_choice
from ...verdicts import NOT_REPRODUCED
from .probes import GEOMETRIC, TASKS, block_dct, crops_for, ladder, render, zigzag, zoom_out_slack
from .protocol import ITEMS_MIN, PROTOCOL
from .tables import COLOUR, ORDER, PAPER_TABLE1, PAPER_TABLE2, layer_depths


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
# Each claim is declared, with its smallest effect and the reason, in :mod:`invlib.papers.a.protocol`; this module
# computes the effects (intervals over the validation pairs, fold-probe depths, per-seed shares) and records them.
DEPTH_FOLDS = 5  # probes per backbone and task for the depth claims, each on a fifth of the training pairs
MISSING = "a task it needs is undefined on these images (greyscale: hue and saturation leave them unchanged)"


def _items(table, featurizer: str, task: str, layers: str = "all"):
    """The row's validation pairs as 0/1 floats (ranked right or not), or None: no such row, or an undefined task."""
    rows = table[(table.featurizer == featurizer) & (table.task == task) & (table.layers == layers)]
    right = rows.val_correct.iloc[0] if len(rows) else ()
    return np.asarray(right, dtype=float) if len(right) else None


def _percent(iv: Interval) -> Interval:
    return dataclasses.replace(iv, estimate=100 * iv.estimate, lo=100 * iv.lo, hi=100 * iv.hi)


def _difference(x, y, axis: int = -1):
    """Mean of ``x`` minus mean of ``y`` in points (every bootstrap resample at once along ``axis``)."""
    return 100 * (np.mean(x, axis=axis) - np.mean(y, axis=axis))


def accuracy_interval(right, level: float = 0.95) -> Interval:
    """Validation accuracy in % of one probe from its pairs ``right`` (1: ranked right), with its Wilson interval.

    Example
    -------
    >>> iv = accuracy_interval(np.r_[np.ones(95), np.zeros(5)])
    >>> round(iv.estimate, 1), round(iv.lo, 1), round(iv.hi, 1)
    (95.0, 88.8, 97.8)
    """
    return _percent(share_interval(int(np.sum(right)), len(right), level))


def gain_interval(a, b, level: float = 0.95) -> Interval:
    """Points of accuracy of probe ``a`` over probe ``b`` from their validation pairs (1: ranked right).

    Pairs of the same length are the same images in the same order (every featurizer of a task gets the same pairs;
    tasks differ only where zoom-out leaves out images it cannot zoom out of): a paired bootstrap over the pairs.
    Otherwise Newcombe's interval for the difference of two independent rates.

    Example
    -------
    >>> a, b = np.r_[np.ones(90), np.zeros(10)], np.r_[np.ones(60), np.zeros(40)]
    >>> iv = gain_interval(a, b)
    >>> round(iv.estimate, 1), iv.lo > 20, iv.method, gain_interval(a, b[:50]).method
    (30.0, True, 'bootstrap', 'newcombe')
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) == len(b):
        return bootstrap_interval((a, b), statistic=_difference, paired=True, level=level)
    return _percent(rate_difference_interval(int(a.sum()), len(a), int(b.sum()), len(b), level))


def _gain(table, first: tuple, second: tuple, level: float = 0.95) -> Interval | None:
    a, b = _items(table, *first), _items(table, *second)
    return None if a is None or b is None else gain_interval(a, b, level)


def _effects(intervals: dict, why: str = MISSING, each: bool = False):
    """``(effects, ours)`` of a claim whose comparisons are ``intervals`` (key -> Interval): the intervals and their
    smallest estimate (the worst case the claim rests on; ``each``: every estimate, by key); not measurable and None
    when one is None (a task these images cannot pose)."""
    if not intervals or any(iv is None for iv in intervals.values()):
        return not_measurable(why, unit="image"), None
    if each:
        return intervals, {k: round(iv.estimate, 1) for k, iv in intervals.items()}
    values = [iv.estimate for iv in intervals.values() if math.isfinite(iv.estimate)]
    return intervals, round(min(values), 1) if values else None


def pixels(table, tasks) -> dict:
    """The gate of the claims that set the features against raw pixels, or call a task hard
    (:data:`~invlib.papers.a.protocol.PIXELS_WHY`): per task, the passthrough probe's validation accuracy in % with
    its Wilson interval over the pairs (:func:`accuracy_interval`); not measurable where the task is undefined or the
    run has no passthrough probe.

    Example
    -------
    >>> import pandas as pd
    >>> t = pd.DataFrame([dict(featurizer="Passthrough", layers="all", task="zoom_out",
    ...                        val_correct=np.ones(500, bool))])
    >>> iv = pixels(t, ["zoom_out", "contrast"])
    >>> round(iv["zoom_out"].lo, 1), iv["contrast"].verdict
    (99.2, 'not measurable at this profile')
    """
    right = {t: _items(table, "Passthrough", t) for t in tasks}
    return {t: accuracy_interval(x) if x is not None else not_measurable(
        "the raw pixels were not probed on this task, or the images cannot pose it", unit="image")
        for t, x in right.items()}


def report_table1(run, table, backbones: list[str], seeds=None) -> dict:
    """Record the paper's Table 1 claims (sections 5 and 6, declared in :mod:`invlib.papers.a.protocol`) about these
    backbones, from intervals over this run's validation pairs, and return the prose's reading of the DCT of
    magnitudes (not a claim of the paper: this book's second reading of its DCT baseline, judged by the signed DCT's
    declaration): ``{"beat_magnitude": sentence}``.

    ``table``: :func:`run_table`'s (with ``val_correct``), with the baselines of :func:`baselines` and the
    ``backbones`` rows. A claim about "the ResNets" is a comparison per backbone (and task), each a 95 % interval
    over the validation pairs (paired bootstrap; Wilson for an accuracy). This run's value is the worst case of the
    comparisons (the smallest difference or accuracy). The claims against raw pixels, and zoom-out's, carry their
    premise as a gate: the pixels' own accuracy on the task (:func:`pixels`). ResNet-18 against ResNet-50 compares
    two architectures trained once per seed: one share per seed, ``table``'s (seed 0) and those of ``seeds``
    (:class:`~invlib.papers.a.tables.SeedRuns` of :func:`~invlib.papers.a.tables.run_seeds`: the other seeds'
    tables, and what each seed's training cost, recorded as the replicates of ``seeds``, :meth:`Run.replicates`).

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=acc[1] / 100,
    ...              val_correct=np.arange(1000) < 10 * acc[1])  # the paper's accuracy on 1,000 pairs
    ...         for f, tasks in PAPER_TABLE1.items() for t, acc in tasks.items()]
    >>> rows += [dict(featurizer="DCT (magnitude)", layers="all", task=t, val_acc=0.5,
    ...               val_correct=np.arange(1000) < 500) for t in GEOMETRIC]
    >>> run = Run("demo", "smoke")
    >>> report_table1(run, pd.DataFrame(rows), ["ResNet-18", "ResNet-50"])["beat_magnitude"][:4]
    'yes:'
    >>> sorted({c["verdict"] for c in run.claims.values()})  # the paper's numbers; one trained model per architecture
    ['inconclusive at this budget', 'reproduced']
    """
    names, easy = list(backbones), ("saturation", "contrast", "brightness")

    def beat(base):
        return {f"{r} {t}": _gain(table, (r, t), (base, t)) for r in names for t in GEOMETRIC}

    def record(cid, intervals, premise=None):
        """``premise``: the intervals of the claim's gate (raw pixels' accuracy), keyed like its declaration."""
        effects, ours = _effects(intervals)
        if premise is not None and isinstance(effects, dict):
            main, gate = PROTOCOL[cid].names  # the claim's comparison, then its gate
            effects = {main: effects, gate: premise}
        run.claim(PROTOCOL[cid], ours=ours, effects=effects)

    record("table1/resnets_beat_dct", beat("DCT"))
    record("table1/resnets_beat_pixels", beat("Passthrough"), pixels(table, GEOMETRIC))
    right = {f"{r} {t}": _items(table, r, t) for r in names for t in easy}
    record("table1/colour_near_100", {k: None if x is None else accuracy_interval(x) for k, x in right.items()})
    record("table1/contrast_far_above_pixels",
           {r: _gain(table, (r, "contrast"), ("Passthrough", "contrast")) for r in names},
           pixels(table, ["contrast"])["contrast"])
    record("table1/zoom_out_harder", {r: _gain(table, (r, "zoom_in"), (r, "zoom_out")) for r in names},
           pixels(table, ["zoom_out"])["zoom_out"])
    record("table1/hue_hardest_colour", {f"{r} {t}": _gain(table, (r, t), (r, "hue")) for r in names for t in easy})
    _report_resnet18_vs_50(run, table, names, seeds)
    declared = PROTOCOL["table1/resnets_beat_dct"]
    b = f"{declared.parts[''].boundary:g} points"
    return {"beat_magnitude": phrase(
        decide(declared, _effects(beat("DCT (magnitude)"))[0]),
        reproduced=f"yes: each of them beats it by more than {b} on every geometric task",
        not_reproduced=f"no: none of them beats it by {b} on any geometric task",
        partly=f"partly: by more than {b} on some of the geometric tasks only",
        inconclusive=f"undecided: for some backbone and task the 95 % interval of its lead includes {b}",
        not_measurable="unknown: a geometric task is undefined on these images")}


def _report_resnet18_vs_50(run, table, names: list[str], seeds=None) -> str:
    """ResNet-18 against ResNet-50: two architectures, trained once per seed; per seed (``table``'s, then each table
    of ``seeds.tables``), the share of tasks where the first backbone's validation accuracy is at least the second's.
    With ``seeds``, records what a seed of the two backbones cost to train (:meth:`Run.replicates`)."""
    cid = "table1/resnet18_at_least_resnet50"
    tables = [table, *(seeds.tables.values() if seeds is not None else ())]
    if len(names) < 2:
        effects, ours = not_measurable("it compares two backbones; this run has one", unit="seed"), None
    else:
        shares = []
        for t in tables:
            v = validation(t)
            wins = [v[names[0], k] >= v[names[1], k] for k in TASKS if not math.isnan(v[names[0], k] + v[names[1], k])]
            shares.append(sum(wins) / len(wins))
        effects, ours = shares, round(float(np.mean(shares)), 3)
    if seeds is not None:
        run.replicates("seeds", seeds.seconds, [cid], note="a seed: its " + " and ".join(names) + ", trained by "
                       "the zoo (their checkpoints' training seconds; their Table 1 probes are not counted)")
    return run.claim(PROTOCOL[cid], ours=ours, effects=effects)


def _folds(table, featurizer: str, task: str):
    """The depths of the fold probes (:func:`invlib.papers.a.probes.fold_depths`) of one backbone and task, or None
    for an undefined task."""
    rows = table[(table.featurizer == featurizer) & (table.task == task) & (table.layers == "all")]
    if rows.empty or rows.undefined.iloc[0]:
        return None
    if "fold_depth" not in rows or not len(rows.fold_depth.iloc[0]):
        raise ValueError("the depth claims need the fold probes: run_table(..., folds=probes_reports.DEPTH_FOLDS)")
    return np.asarray(rows.fold_depth.iloc[0], dtype=float)


def _depth_effects(table, comparisons: dict):
    """``comparisons``: ``{key: (backbone, later tasks, earlier tasks)}``. Per key, per fold probe, the mean depth of
    the later tasks minus that of the earlier ones; not measurable where a task is undefined."""
    effects = {}
    for key, (name, later, earlier) in comparisons.items():
        folds = {t: _folds(table, name, t) for t in later + earlier}
        if any(f is None for f in folds.values()):
            return not_measurable("a task it needs is undefined on these images", unit="draw")
        effects[key] = np.mean([folds[t] for t in later], axis=0) - np.mean([folds[t] for t in earlier], axis=0)
    return effects


def report_layers(run, depths, table) -> dict:
    """Record section 6.1's claims (Figures 5, 6 and Table 2, declared in :mod:`invlib.papers.a.protocol`) about
    these backbones, and return the sentences chapter A2's prose glues: ``depth_verdict`` (colour against geometric
    tasks), ``halves_verdict`` (Table 2's first against second half), and ``depth_colour``, ``depth_geo`` (mean
    depths, backbones averaged, as text: two decimals, or why they are not measured, e.g. on greyscale images).

    ``depths``: importance-weighted depth per task (rows) and backbone (columns) of the probes on all training
    pairs, from :func:`layer_depths` (shown as this run's numbers); ``table``: :func:`run_table`'s with
    ``layers=halves`` and ``folds=DEPTH_FOLDS``. The depth claims rest on the fold probes: per fold, the depth
    difference the claim names, per backbone. Table 2's claims use the ResNet-18 row (else the first backbone), on
    the paper's three tasks, with paired bootstrap intervals over the validation pairs.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> depths = pd.DataFrame({"ResNet-18": dict(zip(ORDER, [0.1, 0.1, 0.1, 0.5, 0.6, 0.6, 0.6]))})
    >>> def row(layers, task, acc):  # the paper's accuracy on 1,000 pairs; three fold probes around the depth
    ...     return dict(featurizer="ResNet-18", layers=layers, task=task, val_acc=acc / 100, undefined="",
    ...                 val_correct=np.arange(1000) < 10 * acc,
    ...                 fold_depth=depths.loc[task, "ResNet-18"] + np.r_[-0.1, 0, 0.1])
    >>> rows = [row(h, t, acc[1]) for h, tasks in PAPER_TABLE2.items() for t, acc in tasks.items()]
    >>> rows += [row("all", t, 90.0) for t in ("brightness", "saturation", "contrast", "zoom_out")]
    >>> run = Run("demo", "smoke")
    >>> report_layers(run, depths, pd.DataFrame(rows))["depth_verdict"][:58]
    "On these backbones the colour tasks' weight sits earlier t"
    >>> [c["verdict"] for c in run.claims.values()]
    ['reproduced', 'reproduced', 'reproduced', 'reproduced']
    """
    d = depths.reindex(list(ORDER))
    names = list(d.columns)
    colour, geo = d.loc[list(COLOUR)].mean(skipna=False), d.loc[list(GEOMETRIC)].mean(skipna=False)
    declared = PROTOCOL["fig5_6/colour_earlier"]
    effects = _depth_effects(table, {n: (n, GEOMETRIC, COLOUR) for n in names})
    earlier = decide(declared, effects)
    run.claim(declared, ours={n: f"{colour[n]:.2f} vs {geo[n]:.2f}" for n in names}, effects=effects)
    latest = d.loc[list(COLOUR)].max(skipna=False)
    run.claim(PROTOCOL["fig5_6/contrast_later"],
              ours={n: f"{d.loc['contrast', n]:.2f} vs {latest[n]:.2f}" for n in names},
              effects=_depth_effects(table, {f"{n} {t}": (n, ("contrast",), (t,)) for n in names for t in COLOUR}))
    acc = table.pivot_table(index=["featurizer", "task"], columns="layers", values="val_acc", dropna=False)
    shares = (acc["first half"] >= acc["second half"]).astype(float).where(acc["all"].notna()).groupby("featurizer")
    for name, share in shares.mean().items():
        run.log(f"first_half_at_least_second/{name}", float(share), paper=1.0,
                note="share of tasks (point estimates); paper: 3 of 3 ResNet-18 tasks")
    halves = _report_halves(run, table, "ResNet-18" if "ResNet-18" in names else names[0])
    b = f"{declared.parts[''].boundary:g}"
    return dict(depth_verdict=phrase(
        earlier, reproduced=f"On these backbones the colour tasks' weight sits earlier than that of the geometric "
        f"tasks, by more than {b} of the depth scale for every backbone.",
        not_reproduced=f"On these backbones the colour tasks' weight does not sit earlier than that of the geometric "
        f"tasks by {b} of the depth scale, for any backbone.",
        partly=f"On these backbones the colour tasks' weight sits earlier than that of the geometric tasks by more "
        f"than {b} of the depth scale for some backbones and not for others.",
        inconclusive="On these backbones this run cannot tell whether the colour tasks' weight sits earlier than that "
        f"of the geometric tasks by {b} of the depth scale: for some backbone the probes trained on different shares "
        "of the pairs disagree too much.",
        not_measurable="On these images a task the comparison needs is undefined."),
        halves_verdict=halves, depth_colour=_mean_depth(d, COLOUR), depth_geo=_mean_depth(d, GEOMETRIC))


def _mean_depth(depths, tasks) -> str:
    """The mean depth of ``tasks`` (each task's mean over its backbones, then over the tasks) as the prose quotes
    it, two decimals; or, where a task has no depth (the images cannot pose it), the text that says so.

    Example
    -------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"R": [0.1, 0.3, float("nan")]}, index=["contrast", "brightness", "hue"])
    >>> _mean_depth(d, ["contrast", "brightness"]), _mean_depth(d, ["contrast", "hue"])
    ('0.20', 'not measured (hue is undefined on these images)')
    """
    rows = depths.reindex(list(tasks))
    missing = [t for t in tasks if rows.loc[t].isna().any()]
    if missing:
        named = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1 else missing)
        return f"not measured ({named} {'are' if len(missing) > 1 else 'is'} undefined on these images)"
    return f"{float(rows.to_numpy().mean()):.2f}"


def _report_halves(run, table, row: str) -> str:
    """Table 2's two claims on backbone ``row`` and the paper's three tasks; returns the prose's sentence."""
    tasks = list(PAPER_TABLE2["all"])
    second, every = PROTOCOL["table2/first_half_beats_second"], PROTOCOL["table2/first_half_beats_all"]
    level = every.parts[tasks[0]].level()  # Bonferroni for "on some of the 3 tasks"
    effects, ours = _effects({t: _gain(table, (row, t, "first half"), (row, t, "second half")) for t in tasks},
                             "a task it needs is undefined on these images", each=True)
    ahead = decide(second, effects)
    run.claim(second, ours=ours, effects=effects)
    effects, ours = _effects({t: _gain(table, (row, t, "first half"), (row, t, "all"), level) for t in tasks},
                             "a task it needs is undefined on these images", each=True)
    run.claim(every, ours=ours, effects=effects)
    b = f"{second.parts[tasks[0]].boundary:g} points"
    return phrase(ahead, reproduced=f"In {row} the first half ranks better than the second half by more than {b} on "
                  "each of the paper's three tasks: accuracy drops when only the second half is used.",
                  not_reproduced=f"In {row} the first half does not rank better than the second half by {b} on any "
                  "of the paper's three tasks: no drop of that size when only the second half is used.",
                  partly=f"In {row} the first half ranks better than the second half by more than {b} on some of "
                  "the paper's three tasks and not on others.",
                  inconclusive=f"In {row} this run cannot tell, on some of the paper's three tasks, whether the "
                  f"first half ranks better than the second half by {b}: the validation pairs are too few to say.",
                  not_measurable="On these images a task the comparison needs is undefined.")


def log_variants(run, table, maps: dict, names: list[str]) -> tuple:
    """Chapter A2's "does training change what the layers encode?": validation accuracy in % and
    importance-weighted depth per task (rows) and variant (columns, in ``names`` order; ``maps`` from
    :func:`invlib.papers.a.tables.layer_importance`), logged as
    ``variants/<name>/<task>/val|depth``, and the numbers the prose quotes: ``train_gain`` (accuracy change per
    task from the first variant to the last, text) and ``depth_shift`` (mean depth change).

    Returns ``(accuracy %, depth, readings)``: two DataFrames and a dict.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> t = pd.DataFrame([dict(featurizer=f, task="hue", val_acc=a) for f, a in (("u", 0.5), ("t", 0.7))])
    >>> m = {(n, "mean"): pd.DataFrame({"stem.0": [1.0]}, index=["hue"]) for n in ("u", "t")}
    >>> acc, depth, readings = log_variants(Run("demo", "smoke"), t, m, ["u", "t"])
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
    return acc, depth, dict(train_gain=", ".join(f"{t.replace('_', ' ')} {g:+.1f}" for t, g in gain.items()),
                            depth_shift=float((depth[names[-1]] - depth[names[0]]).mean()))


def hue_level(table) -> float:
    """The level of :func:`hue_reading`'s intervals: ``1 - 0.05 / k`` (Bonferroni) for the k featurizers with a hue
    probe (NaN where none has one).

    Example
    -------
    >>> import pandas as pd
    >>> hue_level(pd.DataFrame([dict(featurizer=f, layers="all", task="hue", val_correct=np.ones(4)) for f in "PR"]))
    0.975
    """
    k = sum(_items(table, f, "hue") is not None for f in table.featurizer.unique())
    return 1 - 0.05 / k if k else math.nan


def hue_reading(table) -> str:
    """The prose's reading of hue, a short phrase: which featurizers rank it above chance, each by a Wilson interval
    over its validation pairs at the Bonferroni level of :func:`hue_level` that lies above 50 %.

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, layers="all", task="hue", val_correct=np.arange(500) < 255) for f in "PR"]
    >>> hue_reading(pd.DataFrame(rows))
    'no better than chance by any featurizer here'
    """
    right = {f: _items(table, f, "hue") for f in table.featurizer.unique()}
    right = {f: x for f, x in right.items() if x is not None}
    if not right:
        return "by no featurizer: it is undefined on these images"
    level = hue_level(table)
    above = {f: accuracy_interval(x, level) for f, x in right.items()}  # a reading, not a claim: lo above chance
    wins = [f for f, iv in above.items() if iv.n >= ITEMS_MIN and iv.lo > 50.0]
    if wins:
        return f"above chance by {', '.join(wins)} alone"
    return "no better than chance by any featurizer here"


def table1_readings(table, backbones: list[str]) -> dict[str, str]:
    """The numbers the prose of chapter A1 quotes, as text (:func:`percent`; "undefined" for a task the
    images cannot pose): the hue reading (:func:`hue_reading`, ``hue_verdict``), the level of its intervals in %
    (``hue_level``) and the best hue accuracy, passthrough on zoom-out, contrast and saturation (and the
    paper's, ``<name>_paper``, numbers in %), the first backbone on saturation; the first backbone's easiest and
    hardest tasks, here (``best``, ``worst``) and in the paper (``paper_best``, ``paper_worst``).

    Example
    -------
    >>> import pandas as pd
    >>> rows = [dict(featurizer=f, layers="all", task=t, val_acc=0.5, val_correct=np.arange(200) < 100)
    ...         for f in ("Passthrough", "R") for t in TASKS]
    >>> table1_readings(pd.DataFrame(rows), ["R"])["hue_verdict"][:30]
    'no better than chance by any f'
    """
    v = validation(table)
    hue = max((x for f in table.featurizer.unique() if not math.isnan(x := v.get((f, "hue"), math.nan))),
              default=math.nan)
    level = hue_level(table)
    return dict(hue_verdict=hue_reading(table), hue_level="n/a" if math.isnan(level) else f"{100 * level:.1f}",
                hue_best=percent(hue),
                zo_pass=percent(v["Passthrough", "zoom_out"]), con_pass=percent(v["Passthrough", "contrast"]),
                sat_pass=percent(v["Passthrough", "saturation"]),
                sat_r18=percent(v[backbones[0], "saturation"]),
                **{f"{k}_paper": PAPER_TABLE1["Passthrough"][t][1]
                   for k, t in (("zo_pass", "zoom_out"), ("con_pass", "contrast"), ("sat_pass", "saturation"))},
                **_extremes({t: v[backbones[0], t] for t in TASKS if (backbones[0], t) in v}),
                **_extremes({t: a[1] for t, a in PAPER_TABLE1.get(backbones[0], {}).items()}, "paper_"))


def _extremes(accuracy: dict, prefix: str = "") -> dict[str, str]:
    """``{prefix + "best": "contrast and brightness (100.0%)", prefix + "worst": ...}``: the tasks of the highest and
    the lowest accuracy (ties named together; undefined tasks left out; "n/a" for none)."""
    acc = {t: round(a, 1) for t, a in accuracy.items() if not math.isnan(a)}
    if not acc:
        return {prefix + "best": "n/a", prefix + "worst": "n/a"}

    def named(value):
        return _and([t.replace("_", " ") for t, a in acc.items() if a == value]) + f" ({percent(value)})"

    return {prefix + "best": named(max(acc.values())), prefix + "worst": named(min(acc.values()))}


# What each claim asks, in a few words for the prose, and what more of could settle it where this run cannot.
QUESTIONS = {
    "table1/resnets_beat_dct": ("whether the ResNets beat the DCT by the claimed margin on every geometric task",
                                "pairs"),
    "table1/resnets_beat_pixels": ("whether they beat the raw pixels by that margin", "pairs"),
    "table1/colour_near_100": ("whether they rank saturation, contrast and brightness near 100 %", "pairs"),
    "table1/contrast_far_above_pixels": ("whether they rank contrast far better than the pixels", "pairs"),
    "table1/zoom_out_harder": ("whether zoom-out is harder than zoom-in", "pairs"),
    "table1/hue_hardest_colour": ("whether hue is the hardest colour task", "pairs"),
    "table1/resnet18_at_least_resnet50": ("whether ResNet-18 ranks at least as well as ResNet-50", "seeds"),
    "fig5_6/colour_earlier": ("whether the colour tasks are read from earlier layers than the geometric ones",
                              "folds"),
    "fig5_6/contrast_later": ("whether contrast is read from later layers than the other colour tasks", "folds"),
    "table2/first_half_beats_second": ("whether the first half of the layers ranks better than the second", "pairs"),
    "table2/first_half_beats_all": ("whether the first half alone beats all the layers on some task", "pairs"),
}
MORE = {"pairs": "more validation pairs (`n_val`)", "seeds": "more training seeds (`seeds`)",
        "folds": "more training pairs for the probes (`n_train`)"}


def premises_not_met(claim) -> list[str]:
    """The gate leaves (:attr:`invlib.protocol.Claim.gate`) of a recorded claim (a value of
    :attr:`invlib.results.Run.claims`) that its evidence decided against: the premises this run's data do not meet.

    Example
    -------
    >>> c = dict(declaration=dict(gate=["premise: raw pixels do not solve the task"]), evidence=dict(parts={
    ...     "beat the pixels": dict(verdict="reproduced"),
    ...     "premise: raw pixels do not solve the task: zoom_out": dict(verdict="not reproduced"),
    ...     "premise: raw pixels do not solve the task: zoom_in": dict(verdict="reproduced")}))
    >>> premises_not_met(c)
    ['premise: raw pixels do not solve the task: zoom_out']
    """
    gates = claim.get("declaration", {}).get("gate", ())
    parts = claim.get("evidence", {}).get("parts") or {}
    return [leaf for leaf, ev in parts.items() if ev.get("verdict") == NOT_REPRODUCED
            and any(leaf == g or leaf.startswith(f"{g}: ") for g in gates)]


def open_questions(run) -> str:
    """One sentence for a chapter's prose: the claims ``run`` recorded and could not decide, grouped by what more of
    could settle them (:data:`QUESTIONS`), and those it does not test because the data do not meet their premise
    (:func:`premises_not_met`: raw pixels solve the task); or that it decided every claim it could measure.

    Example
    -------
    >>> from types import SimpleNamespace
    >>> run = SimpleNamespace(claims={"table1/zoom_out_harder": dict(verdict="inconclusive at this budget"),
    ...                               "table1/resnet18_at_least_resnet50": dict(verdict="inconclusive at this budget"),
    ...                               "table1/hue_hardest_colour": dict(verdict="reproduced")})
    >>> open_questions(run)
    'It leaves open whether zoom-out is harder than zoom-in, which more validation pairs (`n_val`) could settle; and \
whether ResNet-18 ranks at least as well as ResNet-50, which more training seeds (`seeds`) could settle.'
    >>> open_questions(SimpleNamespace(claims={"table1/hue_hardest_colour": dict(verdict="reproduced")}))
    'It decides every claim it can measure.'
    >>> unmet = dict(verdict="inconclusive at this budget", declaration=dict(gate=["premise: p"]),
    ...              evidence=dict(parts={"premise: p": dict(verdict="not reproduced")}))
    >>> open_questions(SimpleNamespace(claims={"table1/zoom_out_harder": unmet}))
    'It does not test whether zoom-out is harder than zoom-in: on these images raw pixels solve a task the claim \
needs them to fail (its premise is not met).'
    """
    unmet = {cid for cid, c in run.claims.items() if premises_not_met(c)}
    groups = pages.undecided_groups({cid: c for cid, c in run.claims.items() if cid not in unmet}, QUESTIONS)
    said = []
    if groups:
        said.append("It leaves open " + _and([f"{_and(questions)}, which {MORE[more]} could settle"
                                              for more, questions in groups.items()], "; and ", "; ") + ".")
    if unmet:
        asked = [QUESTIONS[cid][0] for cid in run.claims if cid in unmet and cid in QUESTIONS]
        said.append(f"It does not test {_and(asked)}: on these images raw pixels solve a task the "
                    f"claim{'s' * (len(asked) > 1)} need{'s' * (len(asked) == 1)} them to fail "
                    f"({'their premises are' if len(asked) > 1 else 'its premise is'} not met).")
    return " ".join(said) or "It decides every claim it can measure."


def _and(items: list[str], last: str = " and ", sep: str = ", ") -> str:
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1]


def feature_seconds(table) -> str:
    """What extracting each featurizer's features took in this run, summed over its tasks, as a phrase (0 s: read
    from the cache).

    Example
    -------
    >>> import pandas as pd
    >>> feature_seconds(pd.DataFrame(dict(featurizer=["DCT", "DCT", "R"], seconds=[0.1, 0.2, 5.55])))
    'DCT 0.3 s, R 5.5 s'
    """
    seconds = table.groupby("featurizer", sort=False).seconds.sum()
    return ", ".join(f"{name} {value:.1f} s" for name, value in seconds.items())


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
    return plots.image_grid(torch.cat(rows), titles, ncols=k, size=1.25, fontsize=8)


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
    fig = plt.figure(figsize=(8, 6.2), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1.15])
    axes = top.subplots(1, 3)
    curve = bottom.subplots()
    inverse = torch.argsort(zigzag(8))  # zig-zag position -> 8x8 cell
    vmax = max(float(v.log10().max()) for v in dct.values())
    for ax, (name, coef) in zip(axes, dct.items()):
        im = ax.imshow(coef[inverse].view(8, 8).log10().numpy(), vmin=vmax - 3, vmax=vmax, cmap="magma")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([]), ax.set_yticks([])
        curve.semilogy(coef.numpy(), label=name)
    top.colorbar(im, ax=axes, fraction=0.05, label="log10 mean |coefficient|")
    curve.set_xlabel("coefficient, zig-zag order (0 = mean of the block)")
    curve.set_ylabel("mean |coefficient|")
    curve.legend(fontsize=8)
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
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        x = np.arange(len(val)) + (k - len(names) / 2 + 0.5) * width
        ax.bar(x, 100 * val[name], width, label=name)
        paper = [PAPER_TABLE1.get(name, {}).get(t, (None, np.nan))[1] for t in val.index]
        ax.scatter(x, paper, marker="_", s=120, color="black", zorder=3, label="paper" if k == 0 else None)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(val)), [t.replace("_", " ") for t in val.index], fontsize=9)
    ax.set_xlabel("task")
    ax.set_ylabel("validation accuracy %")
    ax.set_ylim(30, 112)
    ax.legend(ncols=min(len(names) + 1, 6), fontsize=8, loc="upper center", frameon=False)
    fig.tight_layout()
    return fig


def log_layers(run, maps: dict, depths, first_block) -> None:
    """Log ``importance/<backbone>/<task>/<mean|max>`` (layer -> share), ``depth/<backbone>/<task>`` and
    ``first_block/<backbone>/<task>``.

    Example
    -------
    >>> import pandas as pd
    >>> from invlib.results import Run
    >>> from invlib.papers.a.tables import layer_depths
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


def bar_panels(frames: dict, xlim: dict | None = None, figsize=(9, 3.8)):
    """One horizontal bar chart per ``{title: DataFrame}``, side by side (rows top-down, a bar per column, the
    title as the x-axis label); ``xlim``: ``{title: (low, high)}``.

    Example
    -------
    >>> import pandas as pd
    >>> len(bar_panels({"a": pd.DataFrame({"x": [1, 2]}), "b": pd.DataFrame({"y": [3, 4]})}).axes)
    2
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(frames), figsize=figsize, sharey=True, layout="constrained")
    for ax, (title, frame) in zip(axes, frames.items()):
        frame.plot.barh(ax=ax, xlim=(xlim or {}).get(title), fontsize=8, legend=False)
        ax.set_xlabel(title, fontsize=9)
        ax.set_ylabel("")
        ax.set_yticks(range(len(frame)), [str(t).replace("_", " ") for t in frame.index])
    axes[0].invert_yaxis()  # the panels share their rows: every one reads top-down
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=len(labels), fontsize=8, frameon=False)
    return fig


def importance_figure(maps: dict, names: list[str], agg: str = "mean"):
    """The paper's Figure 5 (``agg="mean"``) or 6 (``"max"``): per backbone of ``names``, the layer importance of
    :func:`invlib.papers.a.tables.layer_importance` as a map of tasks (rows) by convolutions (columns, in the order
    the network defines them), one panel per backbone; each stage is named on the axis and its start marked by a
    white line, so a map of fifty convolutions stays readable at page width.

    Example
    -------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"stem.0": [0.5], "layer1.0.body.0": [0.25], "layer1.0.body.3": [0.25]}, index=["hue"])
    >>> [t.get_text() for t in importance_figure({("R", "mean"): m}, ["R"]).axes[0].get_xticklabels()]
    ['stem', 'layer1']
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.3 * len(names) + 0.3), squeeze=False, layout="constrained")
    for ax, name in zip(axes[:, 0], names):
        m = maps[name, agg]
        im = ax.imshow(m.to_numpy(dtype=float), aspect="auto", cmap="viridis", interpolation="nearest")
        stages = [str(c).split(".")[0] for c in m.columns]
        starts = [i for i, stage in enumerate(stages) if i == 0 or stage != stages[i - 1]]
        centres = [(a + b - 1) / 2 for a, b in zip(starts, [*starts[1:], len(stages)])]
        ax.set_xticks(centres, [stages[i] for i in starts], fontsize=8)
        for i in starts[1:]:
            ax.axvline(i - 0.5, color="white", lw=1.2)
        ax.set_yticks(range(len(m)), [str(t).replace("_", " ") for t in m.index], fontsize=8)
        ax.set_title(f"{name}: {len(m.columns)} convolutions, first to last", fontsize=9)
        bar = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.01)
        bar.set_label("share of the row", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    axes[-1, 0].set_xlabel("convolutions, stage by stage (white lines: where a stage starts)", fontsize=8)
    return fig
