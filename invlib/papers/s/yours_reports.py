"""What chapter Y1 shows of :func:`invlib.papers.s.yours.measure`'s table: the invariance fingerprint (transformation x
layer, one panel per measure), the reader's model among the book's models, the tables per measure, the measures left
out and why, the CSV files beside the chapter's JSON, the numbers its prose quotes, and a page of the executed
chapter that a browser opens without Jupyter Book (:func:`write_page`, what ``python -m invlib measure`` writes).
The chapter has no claims: it states what this model does on these images, with intervals over the images.

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

from ...plots import heatmap
from ...results import results_dir
from .yours import MEASURES, OUTPUT

FORMATS = {"accuracy": ".1f", "c_inv_acc": ".1f", "c_eq_acc": ".1f"}  # percentages; the other measures: .2f


def _fmt(measure: str) -> str:
    return FORMATS.get(measure, ".2f")


def _cell(value, low, high, fmt: str) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if not (math.isfinite(low) and math.isfinite(high)):
        return format(value, fmt)
    return f"{value:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


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


def plot_fingerprint(table: pd.DataFrame, columns: int = 4):
    """The invariance fingerprint: one heat map per measure (transformation x layer, the value in each cell, each
    panel on its own colour scale), the reader's model only.

    Example
    -------
    >>> fig = plot_fingerprint(demo_table())
    >>> [ax.get_title() for ax in fig.axes if ax.get_title()]
    ['accuracy under T (%)', 'B: relative invariance']
    """
    ms = measures_of(table[table["role"] == "yours"])
    rows = math.ceil(len(ms) / columns)
    fig, axes = plt.subplots(rows, min(columns, len(ms)), squeeze=False,
                             figsize=(3.6 * min(columns, len(ms)), 2.8 * rows))
    for ax, m in zip(axes.flat, ms):
        f = fingerprint(table, m)
        heatmap(f.values, list(f.index), title=MEASURES[m], fmt=_fmt(m), ax=ax, col_labels=list(f.columns))
    for ax in list(axes.flat)[len(ms):]:
        ax.axis("off")
    fig.suptitle(f"{table.loc[table['role'] == 'yours', 'model'].iloc[0]}: every measure, transformation x layer")
    fig.tight_layout()
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
    model in black.

    Example
    -------
    >>> fig = plot_references(demo_table())
    >>> [ax.get_title() for ax in fig.axes]
    ['accuracy under T (%)', 'B: relative invariance']
    """
    t = beside(table)
    ms, names = measures_of(t), _order(t["model"])
    rows = math.ceil(len(ms) / columns)
    fig, axes = plt.subplots(rows, min(columns, len(ms)), squeeze=False,
                             figsize=(3.6 * min(columns, len(ms)), 2.8 * rows + 0.6))
    colours = plt.get_cmap("tab10")
    for ax, m in zip(axes.flat, ms):
        part = t[t["measure"] == m]
        ts = _order(part["transform"])
        for k, name in enumerate(names):
            mine = part[part["model"] == name].set_index("transform").reindex(ts)
            x = np.arange(len(ts)) + (k - (len(names) - 1) / 2) * 0.8 / max(len(names), 1)
            yours = (table.loc[table["model"] == name, "role"] == "yours").any()
            err = np.abs(np.vstack([mine["value"] - mine["low"], mine["high"] - mine["value"]]))
            ax.errorbar(x, mine["value"], yerr=np.nan_to_num(err), fmt="o" if yours else "s", ms=5 if yours else 4,
                        color="black" if yours else colours(k % 10), capsize=2, lw=1, label=name)
        ax.set_xticks(range(len(ts)), ts, rotation=30, ha="right", fontsize=8)
        ax.set_title(MEASURES[m], fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(ms):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(names), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
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


def numbers(table: pd.DataFrame, S) -> dict:
    """What the prose quotes, each as Markdown text (so a number left out reads "n/a" and never breaks a format):
    the model, the data, the layers and references, why accuracies are left out, the transformation the model's
    embedding is most and least invariant to (B's relative invariance at ``pre_logits``) and the reference closest
    to it under that measure.

    Example
    -------
    >>> from invlib.papers.s import yours
    >>> facts = numbers(demo_table(), yours.settings("smoke", transforms=("zoom", "rotation")))
    >>> facts["y1_most_invariant"], facts["y1_closest"]
    ('zoom (0.60 [0.50, 0.70])', 'B1/none (mean difference 0.10 over 1 transformation)')
    """
    found = table.attrs.get("found", {})
    t = _measured(table)
    mine = t[(t["role"] == "yours") & (t["measure"] == "b_invariance") & (t["layer"] == "pre_logits")]
    mine = mine.set_index("transform")
    say = lambda tr: f"{tr} ({_cell(*mine.loc[tr, ['value', 'low', 'high']], '.2f')})"  # noqa: E731
    facts = dict(y1_model=f"`{found.get('model', table['model'].iloc[0])}`", y1_data=f"`{S.data}`",
                 y1_n_images=str(found.get("images", S.n_images)), y1_side=str(found.get("side", "n/a")),
                 y1_layers=", ".join(f"`{x}`" for x in found.get("layers", _order(mine.index))),
                 y1_references=", ".join(f"`{r}`" for r in _order(t.loc[t["role"] == "reference", "model"]))
                 or "none", y1_levels=", ".join(str(lv) for lv in S.levels if lv),
                 y1_half=str(found.get("images", S.n_images) // 2))
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
    for key in ("y1_most_invariant", "y1_least_invariant", "y1_closest"):
        facts.setdefault(key, "n/a")
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


def _glued(nb) -> dict:
    """``{name: text}`` of what the executed notebook glued (myst-nb keeps each as a display output named in its
    metadata): the Markdown text of a glued string, the plain text of a number."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                d = out.get("data", {})
                found[name] = d.get("text/markdown") or d.get("text/plain", "")
    return found


def write_page(notebook: str | Path, page: str | Path) -> Path:
    """An HTML page of an executed chapter (``.ipynb``) that any browser opens, without Jupyter Book: its Markdown
    (glued numbers filled in), each code cell's outputs (figures, tables, text) and, folded, its code.

    Example
    -------
    >>> import nbformat, tempfile
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T\\nIt is {glue:md}`x`."),
    ...                                      nbformat.v4.new_code_cell("1 + 1")])
    >>> nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1),
    ...     nbformat.v4.new_output("display_data", {"text/markdown": "**42**"}, metadata={"scrapbook": {"name": "x"}})]
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = nbformat.write(nb, folder / "t.ipynb")
    >>> text = write_page(folder / "t.ipynb", folder / "t.html").read_text()
    >>> "It is <strong>42</strong>." in text, "<pre>2</pre>" in text
    (True, True)
    """
    import nbformat
    from markdown_it import MarkdownIt

    nb = nbformat.read(str(notebook), as_version=4)
    glued, md = _glued(nb), MarkdownIt("commonmark").enable("table")
    fill = lambda m: glued.get(m.group(1), "n/a").strip().strip("'\"")  # noqa: E731
    parts = []
    for cell in nb.cells:
        if "remove-cell" in cell.metadata.get("tags", []) or "parameters" in cell.metadata.get("tags", []):
            continue
        if cell.cell_type == "markdown":
            parts.append(md.render(_GLUE.sub(fill, cell.source)))
            continue
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        parts.append(f"<details><summary>code</summary><pre>{html.escape(cell.source)}</pre></details>")
        for out in cell.get("outputs", []):
            if out.get("metadata", {}).get("scrapbook"):
                continue
            d = out.get("data", {})
            if "image/png" in d:
                parts.append(f'<img src="data:image/png;base64,{d["image/png"]}" style="max-width:100%">')
            elif "text/html" in d:
                parts.append(d["text/html"])
            elif out.get("output_type") == "stream" and out.get("name") == "stdout":
                parts.append(f"<pre>{html.escape(out['text'])}</pre>")
            elif "text/plain" in d:
                parts.append(f"<pre>{html.escape(d['text/plain'])}</pre>")
    title = next((line[2:] for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                  if line.startswith("# ")), Path(notebook).stem)
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.5}"
             "table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px}"
             "pre{background:#f6f6f6;padding:0.5em;overflow-x:auto}")
    page = Path(page)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                    f"<style>{style}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    return page

