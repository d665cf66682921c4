"""What chapter Y1 shows of :func:`invlib.papers.s.yours.measure`'s table: the invariance fingerprint (each measure
against depth, one line per transformation, every panel oriented "up = more invariant"), the reader's model among the
book's models, the tables per measure, the measures left out and why, why a pooled early layer can look invariant
(:func:`pooling`, a small measurement of its own), the CSV files beside the chapter's JSON, the numbers its prose
quotes, and a page of the executed chapter that a browser opens without Jupyter Book (:func:`write_page`, what
``python -m invlib measure`` writes). The chapter has no claims: it states what this model does on these images,
with intervals over the images.

Example
-------
>>> t = demo_table()
>>> fingerprint(t, "b_invariance").round(2).values.tolist()  # zoom, rotation x layer4, pre_logits
[[0.4, 0.6], [0.2, 0.3]]
>>> wide(t, "b_invariance").loc["zoom", "B1/none"]
'0.50 [0.40, 0.60]'
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ... import models
from ...results import results_dir
from ...utils import cached, digest
from . import yours
from .yours import MEASURES, OUTPUT, TRANSFORMS

FORMATS = {"accuracy": ".1f", "c_inv_acc": ".1f", "c_eq_acc": ".1f"}  # percentages; the other measures: .2f


def _fmt(measure: str) -> str:
    return FORMATS.get(measure, ".2f")


def _cell(value, low, high, fmt: str) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if not (math.isfinite(low) and math.isfinite(high)):
        return format(value, fmt)
    return f"{value:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def _words(value, low, high) -> str:
    """A value and its interval for the prose: ``"0.47, 95 % interval 0.29 to 0.77"``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{value:.2f}"
    return f"{value:.2f}, 95 % interval {low:.2f} to {high:.2f}"


def _measured(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["value"].notna()]


def measures_of(table: pd.DataFrame) -> list[str]:
    """The measures the table has numbers for, in :data:`invlib.papers.s.yours.MEASURES` order.

    Example
    -------
    >>> measures_of(demo_table())
    ['accuracy', 'b_invariance']
    """
    have = set(_measured(table)["measure"])
    return [m for m in MEASURES if m in have]


def _order(values) -> list:
    return list(dict.fromkeys(values))


def fingerprint(table: pd.DataFrame, measure: str) -> pd.DataFrame:
    """The reader's model under one measure: a transformation per row, a layer per column (in the measured order;
    the accuracy's one column is ``output``), the values.

    Example
    -------
    >>> fingerprint(demo_table(), "accuracy").columns.tolist()
    ['output']
    """
    mine = _measured(table)
    mine = mine[(mine["role"] == "yours") & (mine["measure"] == measure) & (mine["transform"] != "none")]
    out = mine.pivot_table(index="transform", columns="layer", values="value", sort=False)
    return out.reindex(index=_order(mine["transform"]), columns=_order(mine["layer"]))


# measure -> (up: +1 where a larger value is more invariant, or more equivariant; -1 where a smaller one is, and the
# figures reverse its axis), the word for "up" and the axis label
ORIENT = {"accuracy": (1, "more robust", "accuracy (%)"),
          "a_probe": (-1, "more invariant", "probe accuracy (reversed)"),
          "b_invariance": (1, "more invariant", "relative invariance"),
          "b_alignment": (1, "more equivariant", "alignment"),
          "c_inv_acc": (1, "more invariant", "accuracy (%)"),
          "c_inv_l2": (-1, "more invariant", "L2 distance (reversed)"),
          "c_eq_acc": (1, "more equivariant", "accuracy (%)"),
          "c_eq_l2": (-1, "more equivariant", "L2 distance (reversed)")}
SAME_AT_EVERY_LAYER = ("c_inv_acc",)  # C's invariance accuracy: the features of the transformed image, passed as
# they are through the rest of the network, are the network's own prediction on the transformed image


def axis_label(measure: str) -> str:
    """A panel's y label: what is plotted and which way is up (every panel: up = more invariant, or for the
    equivariance measures more equivariant; the axis of a measure where lower is more invariant is reversed).

    Example
    -------
    >>> axis_label("c_inv_l2")
    'L2 distance (reversed)\\n↑ more invariant'
    """
    return f"{ORIENT[measure][2]}\n↑ {ORIENT[measure][1]}"


def _orient(ax, measure: str) -> None:
    ax.set_ylabel(axis_label(measure), fontsize=8)
    if ORIENT[measure][0] < 0:
        ax.invert_yaxis()
    ax.tick_params(labelsize=8)
    ax.grid(axis="y", alpha=0.3)


def _panels(ms: list[str]) -> list[str]:
    """The panels' order: the invariance measures, then the equivariance ones (each in :data:`MEASURES` order)."""
    return sorted(ms, key=lambda m: ORIENT[m][1] == "more equivariant")


def _colours(names) -> dict:
    cmap = plt.get_cmap("tab10")
    return {n: cmap(k % 10) for k, n in enumerate(names)}


def _errors(part: pd.DataFrame) -> np.ndarray:
    return np.nan_to_num(np.abs(np.vstack([part["value"] - part["low"], part["high"] - part["value"]])))


def plot_fingerprint(table: pd.DataFrame, columns: int = 4):
    """The invariance fingerprint of the reader's model: one panel per measure that has layers (the accuracy under
    a transformation has one, the output, and is drawn among the references), the layers from the input (left) to
    the embedding (right), one line per transformation with its 95 % interval over images; every panel oriented up =
    more invariant (more equivariant for the equivariance measures), reversed axes said so in their labels; a note
    on C's invariance accuracy, the same at every layer by construction.

    Example
    -------
    >>> fig = plot_fingerprint(demo_table())
    >>> [ax.get_title() for ax in fig.axes if ax.get_title()], fig.axes[0].get_ylabel().splitlines()[1]
    (['B: relative invariance'], '↑ more invariant')
    """
    mine = _measured(table)
    mine = mine[(mine["role"] == "yours") & (mine["transform"] != "none") & (mine["layer"] != OUTPUT)]
    ms, ts, layers = _panels(measures_of(mine)), _order(mine["transform"]), _order(mine["layer"])
    colours, cols = _colours(TRANSFORMS), min(columns, len(ms))
    rows = math.ceil(len(ms) / cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(2.0 * cols + 0.5, 2.3 * rows + 0.5))
    for ax, m in zip(axes.flat, ms):
        part = mine[mine["measure"] == m]
        here = [t for t in ts if t in set(part["transform"])]
        for k, t in enumerate(here):
            one = part[part["transform"] == t].set_index("layer").reindex(layers)
            x = np.arange(len(layers)) + (k - (len(here) - 1) / 2) * 0.06
            ax.errorbar(x, one["value"], yerr=_errors(one), fmt="o-", ms=4, lw=1.2, capsize=2, color=colours[t],
                        label=t)
        ax.set_xticks(range(len(layers)), layers, rotation=30, ha="right")
        ax.set_xlim(-0.5, len(layers) - 0.5)
        ax.set_title(MEASURES[m], fontsize=9)
        _orient(ax, m)
        if m in SAME_AT_EVERY_LAYER and len(layers) > 1:
            ax.set_title(f"{MEASURES[m]}\n(the same at every layer)", fontsize=9)
    for ax in list(axes.flat)[len(ms):]:
        ax.axis("off")
    shown = [t for t in ts if t in set(mine["transform"])]
    handles = [plt.Line2D([], [], marker="o", color=colours[t], lw=1.2, ms=4) for t in shown]
    fig.legend(handles, shown, loc="lower center", ncol=len(shown), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06 if rows > 1 else 0.1, 1, 1))
    return fig


def beside(table: pd.DataFrame) -> pd.DataFrame:
    """Every model at ``pre_logits`` (the accuracy at ``output``): the rows the comparison with the references reads.

    Example
    -------
    >>> sorted(beside(demo_table())["model"].unique())
    ['B1/none', 'mine']
    """
    t = _measured(table)
    return t[t["layer"].isin(["pre_logits", OUTPUT]) & (t["transform"] != "none")]


def plot_references(table: pd.DataFrame, columns: int = 4):
    """The reader's model among the references: one panel per measure, a transformation per column, each model a
    point with its 95 % interval over images (bars), at ``pre_logits`` (the accuracy: the prediction); the reader's
    model in black; every panel oriented up = more invariant (more equivariant, more robust), as
    :func:`plot_fingerprint`.

    Example
    -------
    >>> fig = plot_references(demo_table())
    >>> [ax.get_title() for ax in fig.axes]
    ['accuracy under T (%)', 'B: relative invariance']
    """
    t = beside(table)
    ms, names = _panels(measures_of(t)), _order(t["model"])
    cols = min(columns, len(ms))
    rows = math.ceil(len(ms) / cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(2.0 * cols + 0.5, 2.3 * rows + 0.5))
    colours = _colours([n for n in names if not (table.loc[table["model"] == n, "role"] == "yours").any()])
    for ax, m in zip(axes.flat, ms):
        part = t[t["measure"] == m]
        ts = _order(part["transform"])
        for k, name in enumerate(names):
            mine = part[part["model"] == name].set_index("transform").reindex(ts)
            x = np.arange(len(ts)) + (k - (len(names) - 1) / 2) * 0.7 / max(len(names), 1)
            yours_ = name not in colours
            ax.errorbar(x, mine["value"], yerr=_errors(mine), fmt="o" if yours_ else "s", ms=5 if yours_ else 4,
                        color="black" if yours_ else colours[name], capsize=2, lw=1, label=name)
        ax.set_xticks(range(len(ts)), ts, rotation=30, ha="right")
        ax.set_title(MEASURES[m], fontsize=9)
        _orient(ax, m)
    for ax in list(axes.flat)[len(ms):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(names), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06 if rows > 1 else 0.1, 1, 1))
    return fig


def wide(table: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One measure as text, ``value [low, high]``: a transformation per row; the reader's model at each layer, then
    each reference (at ``pre_logits``) per column.

    Example
    -------
    >>> wide(demo_table(), "accuracy").to_dict(orient="list")
    {'output': ['80.0 [70.0, 90.0]', '60.0 [50.0, 70.0]'], 'B1/none': ['—', '40.0 [30.0, 50.0]']}
    """
    part = _measured(table)
    part = part[part["measure"] == measure]
    part = part.assign(column=np.where(part["role"] == "yours", part["layer"], part["model"]),
                       text=[_cell(v, lo, hi, _fmt(measure)) for v, lo, hi in zip(part["value"], part["low"],
                                                                                 part["high"])])
    out = part.pivot_table(index="transform", columns="column", values="text", aggfunc="first", sort=False)
    out = out.reindex(index=_order(part["transform"]), columns=_order(part["column"])).fillna("—")
    out.index.name, out.columns.name = "transform", None
    return out


def skipped(table: pd.DataFrame) -> pd.DataFrame:
    """The measures left out and why: one row per (model, measure) with its reason.

    Example
    -------
    >>> t = demo_table()
    >>> t.loc[len(t)] = dict(model="mine", role="yours", layer="all", transform="all", measure="c_inv_acc",
    ...                      value=np.nan, low=np.nan, high=np.nan, n=8, unit="image", interval="", note="one class")
    >>> skipped(t).values.tolist()
    [['mine', 'C: invariance acc. (%)', 'one class']]
    """
    out = table[table["value"].isna()][["model", "measure", "note"]].drop_duplicates()
    out = out.assign(measure=out["measure"].map(MEASURES)).rename(columns={"note": "why"})
    return out.reset_index(drop=True)


def skipped_phrase(table: pd.DataFrame) -> str:
    """What was left out of the reader's model, in words: ``"nothing (every measure was taken)"``, or the measures
    and why (the reasons of :func:`skipped`).

    Example
    -------
    >>> skipped_phrase(demo_table())
    'nothing (every measure was taken)'
    """
    left = skipped(table[table["role"] == "yours"])
    if not len(left):
        return "nothing (every measure was taken)"
    return "; ".join(f"{', '.join(g['measure'])}, because {why}" for why, g in left.groupby("why", sort=False))


# ------------------------------------------------------------------------------ why a pooled early layer is invariant
POOLING_VERSION = 1
POOLED, KEPT, COLOUR = "averaged over positions", "every position kept", "the images' mean colour"


def pooling_layer(table: pd.DataFrame) -> str | None:
    """The layer :func:`pooling` measures: the first layer of the reader's model that has positions (None when only
    ``pre_logits`` was measured)."""
    return next((layer for layer in table.attrs.get("found", {}).get("layers", []) if layer != "pre_logits"), None)


def pooling(S, table: pd.DataFrame) -> pd.DataFrame | None:
    """Why a pooled early layer can look invariant, measured: B's relative invariance (mean over ``S.levels`` of the
    median over images, as in the table) to each transformation of the reader's model's first layer with positions
    (:func:`pooling_layer`), averaged over its positions (as A and B read every layer: the table's number) and with
    every position kept (the flattened feature map), and of the images' mean colour (the pixels averaged over
    positions, no network). A feature map averaged over all positions is unchanged by any rearrangement of them,
    so an early layer's average keeps mostly colour and texture statistics. On the table's images, B's sweep
    (:func:`invlib.papers.b.similarity.sweep`) with the same seed; cached like the measures. Returns a transformation
    per row and the three columns :data:`COLOUR`, :data:`POOLED`, :data:`KEPT` (with the layer in
    ``attrs["layer"]``), or None when no layer has positions.
    """
    from ..b import similarity
    from ..c import equivariance

    layer = pooling_layer(table)
    if layer is None:
        return None
    _, model, ds = yours._prepare(S)
    levels = [lv for lv in S.levels if lv > 0]
    grids = {TRANSFORMS[t]["b"]: t for t in S.transforms}

    def embed(b):
        f = models.features(model, b, [layer])[layer]
        return b.mean((2, 3)), f.mean((2, 3)) if f.ndim == 4 else f.mean(1) if f.ndim == 3 else f, f.flatten(1)

    def make():
        with torch.inference_mode():
            rows = similarity.sweep({(COLOUR, POOLED, KEPT): embed}, ds.images.float() / 255, list(grids), levels,
                                    seed=S.seed, device=next(model.parameters()).device)
        out = pd.DataFrame(rows).groupby(["transform", "model"], sort=False)["median"].mean().unstack("model")
        return out.rename(index=grids)[[COLOUR, POOLED, KEPT]]

    key = digest(equivariance.model_key(model), ds.images, S.transforms, S.levels, S.seed, layer,
                 torch.get_num_threads())
    out = cached("yours", f"pooling-{key}", make, version=POOLING_VERSION)
    out.index.name, out.columns.name = "transform", None
    out.attrs["layer"] = layer
    return out


def pooling_numbers(pooled: pd.DataFrame | None) -> dict:
    """What the prose quotes of :func:`pooling`: the layer, the transformation its pooled features are most
    invariant to, and the three numbers there, each as text (``"n/a"`` and a reason when nothing was measured).

    Example
    -------
    >>> p = pd.DataFrame({COLOUR: [0.95, 0.5], POOLED: [0.91, 0.4], KEPT: [0.35, 0.1]}, index=["rotation", "zoom"])
    >>> p.attrs["layer"] = "layer1"
    >>> f = pooling_numbers(p)
    >>> f["y1_pool_transform"], f["y1_pool_pooled"], f["y1_pool_kept"], f["y1_pool_change"]
    ('rotation', '0.91', '0.35', 'lower by 0.56')
    """
    if pooled is None or not len(pooled):
        return dict(y1_pool_layer="n/a", y1_pool_transform="n/a", y1_pool_pooled="n/a", y1_pool_kept="n/a",
                    y1_pool_colour="n/a", y1_pool_change="not measured: the only layer measured, `pre_logits`, "
                                                          "has no positions")
    t = pooled[POOLED].idxmax()
    row = pooled.loc[t]
    change = round(row[KEPT], 2) - round(row[POOLED], 2)  # as the prose shows them
    return dict(y1_pool_layer=f"`{pooled.attrs.get('layer', '?')}`", y1_pool_transform=str(t),
                y1_pool_pooled=f"{row[POOLED]:.2f}", y1_pool_kept=f"{row[KEPT]:.2f}",
                y1_pool_colour=f"{row[COLOUR]:.2f}",
                y1_pool_change=(f"lower by {-change:.2f}" if change <= -0.005 else f"higher by {change:.2f}"
                                if change >= 0.005 else "the same"))


def report_pooling(run, S, table: pd.DataFrame) -> tuple[pd.DataFrame | None, dict]:
    """:func:`pooling`, logged into the run's JSON (``pooling``: the layer and the numbers), and its
    :func:`pooling_numbers` for the prose."""
    pooled = pooling(S, table)
    if pooled is not None:
        run.log("pooling", dict(layer=pooled.attrs["layer"], b_invariance=pooled.round(6).to_dict(orient="index")))
    return pooled, pooling_numbers(pooled)


def write_csv(table: pd.DataFrame, run) -> list[Path]:
    """The table as CSV beside the run's JSON: ``results/<profile>/<chapter>.csv`` (every row: model, layer,
    transform, measure, value, interval, ...) and ``<chapter>_<measure>.csv`` (each measure as :func:`wide` shows it).
    Returns the paths."""
    folder = results_dir(run.profile.name)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{run.notebook}.csv"]
    table.to_csv(paths[0], index=False)
    for m in measures_of(table):
        paths.append(folder / f"{run.notebook}_{m}.csv")
        wide(table, m).to_csv(paths[-1])
    return paths


REFERENCE_WORDS = {"B1/none": "chapter B1's small ResNet on scenes, trained without augmentation",
                   "B1/rrc": "the same with RandomResizedCrop", "B1/translation": "the same with translation alone",
                   "B1/scale": "the same with zoom alone", "B3/resnet": "chapter B3's ResNet, without augmentation",
                   "B3/vit": "chapter B3's ViT, without augmentation"}


def numbers(table: pd.DataFrame, S) -> dict:
    """What the prose quotes, each as Markdown text (so a number left out reads "n/a" and never breaks a format):
    the model, the data, the layers and references (each in words), why accuracies are left out, what else was left
    out (:func:`skipped_phrase`), the transformation the model's
    embedding is most and least invariant to (B's relative invariance at ``pre_logits``) and the reference closest
    to it under that measure.

    Example
    -------
    >>> from invlib.papers.s import yours
    >>> facts = numbers(demo_table(), yours.settings("smoke", transforms=("zoom", "rotation")))
    >>> facts["y1_most_invariant"], facts["y1_closest"]
    ('zoom (0.60, 95 % interval 0.50 to 0.70)', 'B1/none (mean difference 0.10 over 1 transformation)')
    """
    found = table.attrs.get("found", {})
    t = _measured(table)
    mine = t[(t["role"] == "yours") & (t["measure"] == "b_invariance") & (t["layer"] == "pre_logits")]
    mine = mine.set_index("transform")
    say = lambda tr: f"{tr} ({_words(*mine.loc[tr, ['value', 'low', 'high']])})"  # noqa: E731
    refs_ = _order(t.loc[t["role"] == "reference", "model"])
    facts = dict(y1_model=f"`{found.get('model', table['model'].iloc[0])}`", y1_data=f"`{S.data}`",
                 y1_n_images=str(found.get("images", S.n_images)), y1_side=str(found.get("side", "n/a")),
                 y1_layers=", ".join(f"`{x}`" for x in found.get("layers", _order(mine.index))),
                 y1_references="; ".join(f"`{r}` ({REFERENCE_WORDS.get(r, 'a model of the book')})" for r in refs_)
                 or "no model of the book (`references` is empty)",
                 y1_levels=", ".join(str(lv) for lv in S.levels if lv),
                 y1_half=str(found.get("images", S.n_images) // 2), y1_skipped=skipped_phrase(table))
    reasons = skipped(table[table["role"] == "yours"])["why"]
    facts["y1_accuracy"] = (f"left out: {reasons.iloc[0]}" if len(reasons) else
                            "measured: the model's outputs are the data's classes")
    if len(mine):
        order = mine["value"].sort_values()
        facts.update(y1_most_invariant=say(order.index[-1]), y1_least_invariant=say(order.index[0]))
    refs = t[(t["role"] == "reference") & (t["measure"] == "b_invariance")].pivot_table(
        index="transform", columns="model", values="value")
    common = refs.index.intersection(mine.index)
    if len(common) and refs.shape[1]:
        gap = (refs.loc[common].sub(mine.loc[common, "value"], axis=0)).abs().mean()
        facts["y1_closest"] = (f"{gap.idxmin()} (mean difference {gap.min():.2f} over {len(common)} "
                               f"transformation{'s' * (len(common) > 1)})")
    facts.setdefault("y1_closest", "none: no model of the book was measured beside it")
    for key in ("y1_most_invariant", "y1_least_invariant"):
        facts.setdefault(key, "n/a (B's relative invariance was not measured at `pre_logits`)")
    return facts


def report(run, S, table: pd.DataFrame) -> dict:
    """Log the run's measures (every row), what was found and the seconds per paper into its JSON, write the CSV files
    (:func:`write_csv`), and return :func:`numbers` for the prose. No claims: the chapter has no protocol."""
    run.log("measures", table.to_dict(orient="records"))
    run.log("found", table.attrs.get("found", {}))
    run.log("seconds_per_paper", {k: round(v, 2) for k, v in table.attrs.get("seconds", {}).items()})
    run.log("csv", [p.name for p in write_csv(table, run)])
    return numbers(table, S)


def demo_table() -> pd.DataFrame:
    """A small table of :func:`invlib.papers.s.yours.measure`'s shape, for the examples."""
    rows = [("mine", "yours", "output", "none", "accuracy", 80.0),
            ("mine", "yours", "output", "zoom", "accuracy", 60.0),
            ("mine", "yours", "layer4", "zoom", "b_invariance", 0.4),
            ("mine", "yours", "layer4", "rotation", "b_invariance", 0.2),
            ("mine", "yours", "pre_logits", "zoom", "b_invariance", 0.6),
            ("mine", "yours", "pre_logits", "rotation", "b_invariance", 0.3),
            ("B1/none", "reference", "output", "zoom", "accuracy", 40.0),
            ("B1/none", "reference", "pre_logits", "zoom", "b_invariance", 0.5)]
    t = pd.DataFrame(rows, columns=["model", "role", "layer", "transform", "measure", "value"])
    half = np.where(t["measure"] == "accuracy", 10.0, 0.1)
    t = t.assign(low=t["value"] - half, high=t["value"] + half, n=8, unit="image", interval="wilson", note="")
    t.attrs["found"] = dict(model="mine", side=28, images=8, layers=["layer4", "pre_logits"])
    return t


# ------------------------------------------------------------------------------ a page of the executed chapter
_GLUE = re.compile(r"\{glue:(?:md|text)\}`([A-Za-z0-9_]+)(?::([^`]*))?`")
_ROLE = re.compile(r"\{[a-z:]+\}`([^`<]*?)\s*(?:<[^`>]*>)?`")  # a MyST role: {download}`label <path>` -> label
_FINDINGS = re.compile(r"<!-- findings -->.*?<!-- /findings -->", re.S)
_REPR = re.compile(r"^<[\w.]+ object( at 0x[0-9a-f]+)?>$|^<Figure size")
PAGE_STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.5}"
              "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;"
              "padding:2px 6px;text-align:left}pre{background:#f6f6f6;padding:0.5em;overflow-x:auto}"
              "figure{margin:1em 0 2em}figure img{max-width:100%;height:auto}figcaption{font-size:0.92em;"
              "color:#333;margin-top:0.4em}.table-caption{font-weight:bold;margin-bottom:0.2em}"
              "details>summary{cursor:pointer;color:#555}")


def _glued(nb) -> dict:
    """``{name: text}`` of what the executed notebook glued: myst-nb keeps each as a display output named in its
    metadata (``scrapbook``), its MIME types prefixed by ``mime_prefix`` when it is not displayed; the Markdown of a
    glued string, the plain text of a number (never a repr such as ``<IPython.core.display.Markdown object>``)."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            book = out.get("metadata", {}).get("scrapbook", {})
            if not book.get("name"):
                continue
            prefix = book.get("mime_prefix", "")
            d = {k[len(prefix):] if prefix and k.startswith(prefix) else k: v for k, v in out.get("data", {}).items()}
            plain = d.get("text/plain", "")
            text = d.get("text/markdown") or ("" if _REPR.match(plain.strip()) else plain)
            found[book["name"]] = text.strip().strip("'\"")
    return found


def _fill(glued: dict):
    def fill(m) -> str:
        text = glued.get(m.group(1), "n/a") or "n/a"
        if m.group(2):
            try:
                return format(float(text), m.group(2))
            except ValueError:
                pass
        return text

    return fill


def _parameters(nb) -> dict:
    """The parameters papermill injected (``injected-parameters`` cell), as Python values."""
    import ast

    out = {}
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    try:
                        out[node.targets[0].id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
    return out


def rerun_command(params: dict) -> str:
    """The ``python -m invlib measure`` command that runs the chapter with ``params`` again.

    Example
    -------
    >>> rerun_command(dict(profile="smoke", model="resnet18@/w/r18.pt", data="/d/imgs", side=32, layers=["a", "b"]))
    'python -m invlib measure resnet18@/w/r18.pt --data /d/imgs --profile smoke -p side=32 -p layers=a,b'
    """
    import shlex

    p = dict(params)
    words = ["python -m invlib measure", shlex.quote(str(p.pop("model", None) or "book:B1/scale")),
             "--data", shlex.quote(str(p.pop("data", None) or "scenes")), "--profile", str(p.pop("profile", "cpu"))]
    for k, v in p.items():
        if v is not None:
            v = ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v
            words.append(f"-p {shlex.quote(f'{k}={v}')}")
    return " ".join(words)


def _files_section(notebook: Path, page: Path, params: dict) -> str:
    """The page's last section: the command that measures again and the files of this run beside the page."""
    stem = Path(notebook).stem
    files = sorted(f for f in page.parent.glob(f"{stem}*") if f.suffix in (".json", ".csv"))
    links = ", ".join(f'<a href="{html.escape(f.name)}">{html.escape(f.name)}</a>' for f in files)
    return ("<h2>Measure again</h2><p>The same measures, with the same settings:</p>"
            f"<pre><code>{html.escape(rerun_command(params))}</code></pre>"
            + (f"<p>The numbers of this run, beside this page: {links}.</p>" if links else ""))


def write_page(notebook: str | Path, page: str | Path) -> Path:
    """An HTML page of an executed chapter (``.ipynb``) that any browser opens, without Jupyter Book: its Markdown
    (glued numbers filled in, MyST roles as their text), each code cell's outputs (figures with their captions,
    tables, text; never a repr) and, folded, its code; the book runner's additions for the book (its "Reproduce this
    chapter", and a findings box of a chapter without claims) give way to the command that measures again and links
    to the run's JSON and CSV files beside the page.

    Example
    -------
    >>> import nbformat, tempfile
    >>> cells = [nbformat.v4.new_markdown_cell("# T\\nIt is {glue:md}`x`, {glue:text}`n:.1f`."),
    ...          nbformat.v4.new_code_cell("1 + 1")]
    >>> nb, pre = nbformat.v4.new_notebook(cells=cells), "application/papermill.record/"
    >>> glue = lambda name, d: nbformat.v4.new_output("display_data", {pre + k: v for k, v in d.items()},
    ...                                               metadata={"scrapbook": {"name": name, "mime_prefix": pre}})
    >>> nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1),
    ...     glue("x", {"text/markdown": "**42**", "text/plain": "<IPython.core.display.Markdown object>"}),
    ...     glue("n", {"text/plain": "3.14159"})]
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = nbformat.write(nb, folder / "t.ipynb")
    >>> text = write_page(folder / "t.ipynb", folder / "t.html").read_text()
    >>> "It is <strong>42</strong>, 3.1." in text, "<pre>2</pre>" in text
    (True, True)
    """
    import nbformat
    from markdown_it import MarkdownIt

    from ...pages import DRESSED

    nb = nbformat.read(str(notebook), as_version=4)
    page = Path(page)
    fill, md = _fill(_glued(nb)), MarkdownIt("commonmark", {"html": True}).enable("table")
    parts = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if {"remove-cell", "parameters", "injected-parameters"} & set(tags) or cell.metadata.get(DRESSED):
            continue
        if cell.cell_type == "markdown":
            text = _FINDINGS.sub(lambda m: m.group(0) if "findings-list" in m.group(0) else "", cell.source)
            parts.append(md.render(_ROLE.sub(r"\1", _GLUE.sub(fill, text))))
            continue
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        parts.append(f"<details><summary>code</summary><pre>{html.escape(cell.source)}</pre></details>")
        for out in cell.get("outputs", []):
            if out.get("metadata", {}).get("scrapbook"):
                continue
            d = out.get("data", {})
            if "text/html" in d:
                parts.append(d["text/html"])
            elif "image/png" in d:
                parts.append(f'<img src="data:image/png;base64,{d["image/png"]}" style="max-width:100%">')
            elif out.get("output_type") == "stream" and out.get("name") == "stdout":
                parts.append(f"<pre>{html.escape(out['text'])}</pre>")
            elif "text/plain" in d and not _REPR.match(d["text/plain"].strip()):
                parts.append(f"<pre>{html.escape(d['text/plain'])}</pre>")
    parts.append(_files_section(Path(notebook), page, _parameters(nb)))
    title = next((line[2:] for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                  if line.startswith("# ")), Path(notebook).stem)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                    f"<style>{PAGE_STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    return page
