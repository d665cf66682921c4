"""Figures shared by the notebooks: image grids with boxes, mosaics (rows = transforms, columns = draws),
transformation-by-magnitude grids, heatmaps; and the scoreboard's picture of every claim part's interval against its
boundary (:func:`scoreboard_figure`).

Each function returns a matplotlib ``Figure`` (the notebook shows it); nothing here computes results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from . import transforms as T
from .utils import check_images


def _as_float(images: torch.Tensor) -> torch.Tensor:
    return images.float().div(255) if images.dtype == torch.uint8 else images.float()


def _hwc(img: torch.Tensor) -> np.ndarray:
    """(C, H, W) in [0, 1] -> (H, W, C) or (H, W) array for imshow."""
    arr = img.clamp(0, 1).permute(1, 2, 0).cpu().numpy()
    return arr[..., 0] if arr.shape[-1] == 1 else arr


def image_grid(images: torch.Tensor, titles: list[str] | None = None, boxes: torch.Tensor | None = None,
               ncols: int = 8, size: float = 1.3, suptitle: str | None = None, fontsize: float = 7) -> Figure:
    """Images in a grid, each with an optional title and box.

    Args:
        images: ``(N, C, H, W)`` uint8, or float in [0, 1]; C is 1 or 3.
        titles: N strings (e.g. class names).
        boxes: ``(N, 4)`` ``x0, y0, x1, y1`` in pixels (x1, y1 exclusive), drawn in red.
        ncols: images per row.
        size: inches per image.
        fontsize: of the image titles (the suptitle is 3 points larger).

    Example
    -------
    >>> fig = image_grid(torch.rand(6, 3, 28, 28), titles=list("abcdef"), boxes=torch.tensor([[4, 4, 20, 24.]] * 6))
    >>> len(fig.axes)
    6
    """
    check_images(_as_float(images), "images")
    n = len(images)
    if titles is not None and len(titles) != n:
        raise ValueError(f"got {len(titles)} titles for {n} images")
    if boxes is not None and tuple(boxes.shape) != (n, 4):
        raise ValueError(f"boxes must be ({n}, 4) x0, y0, x1, y1, got {tuple(boxes.shape)}")
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, size * nrows + (0.3 if suptitle else 0)),
                             squeeze=False)
    x = _as_float(images)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= n:
            fig.delaxes(ax)
            continue
        ax.imshow(_hwc(x[i]), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
        if titles is not None:
            ax.set_title(titles[i], fontsize=fontsize)
        if boxes is not None:
            x0, y0, x1, y1 = boxes[i].tolist()
            ax.add_patch(Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, color="red", lw=1))
    if suptitle:
        fig.suptitle(suptitle, fontsize=fontsize + 3)
    fig.tight_layout()
    return fig


def mosaic(rows: Mapping[str, torch.Tensor | Sequence[torch.Tensor]], col_titles: Sequence[str] | None = None,
           overlay: Callable | None = None, size: tuple[float, float] = (1.3, 1.35), fontsize: float = 7,
           pad: float = 1.08) -> Figure:
    """Rows of images, one labelled row per transform (or method, or type), one column per draw or level.

    Args:
        rows: row label -> images ``(K, C, H, W)`` (or a list of K ``(C, H, W)`` images, which may differ in
            size, e.g. an original beside its crops); uint8, or float in [0, 1] (clipped); C is 1 or 3. Rows may
            hold different numbers of images: the mosaic is as wide as the longest.
        col_titles: titles over the first row's first ``len(col_titles)`` columns (e.g. the levels, "original").
        overlay: ``overlay(ax, label, column)``, called after each image is drawn (e.g. to draw crop boxes).
        size: inches per cell, ``(width, height)``.
        fontsize: of the row labels and the column titles.
        pad: ``tight_layout``'s padding.

    Example
    -------
    >>> fig = mosaic({"rotate": torch.rand(4, 3, 16, 16), "grey": [torch.rand(1, 20, 20), torch.rand(1, 16, 16)]},
    ...              col_titles=["original"], overlay=lambda ax, label, j: ax.axhline(8) if j == 0 else None)
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[4].get_ylabel()
    (6, 'original', 'grey')
    """
    if not rows:
        raise ValueError("mosaic() needs at least one row of images.")
    ncols = max(len(images) for images in rows.values())
    if col_titles is not None and len(col_titles) > ncols:
        raise ValueError(f"got {len(col_titles)} column titles for {ncols} columns")
    fig, axes = plt.subplots(len(rows), ncols, figsize=(size[0] * ncols, size[1] * len(rows)), squeeze=False)
    for r, (label, images) in enumerate(rows.items()):
        for j, ax in enumerate(axes[r]):
            if j >= len(images):
                fig.delaxes(ax)
                continue
            img = _as_float(images[j])
            if img.dim() != 3 or img.shape[0] not in (1, 3):
                raise ValueError(f"row {label!r}, column {j}: images must be (C, H, W) with C 1 or 3, "
                                 f"got {tuple(img.shape)}")
            ax.imshow(_hwc(img), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if overlay is not None:
                overlay(ax, label, j)
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=fontsize)
    for ax, title in zip(axes[0], col_titles or []):
        ax.set_title(title, fontsize=fontsize)
    fig.tight_layout(pad=pad)
    return fig


def magnitude_grid(image: torch.Tensor, names: list[str] | None = None, n_levels: int = 10, seed: int = 0,
                   size: float = 0.6) -> Figure:
    """One image under each registered transformation at ``n_levels`` magnitudes (identity -> far end).

    Rows are transformations (labelled with their magnitude range and unit), columns levels 0..n-1; each row
    is one batched call of :func:`invlib.transforms.apply` with the magnitudes of :func:`invlib.transforms.levels`.

    Args:
        image: ``(C, H, W)`` uint8 or float in [0, 1].
        names: transformations to show (default: all of :func:`invlib.transforms.available`).

    Example
    -------
    >>> fig = magnitude_grid(torch.rand(3, 28, 28), ["rotate", "brightness"], n_levels=4)
    >>> fig.axes[0].get_yticklabels()[0].get_text().splitlines()[0]
    'rotate'
    """
    x = _as_float(image)
    if x.dim() != 3:
        raise ValueError(f"image must be (C, H, W), got shape {tuple(image.shape)}")
    names = list(names or T.available())
    gen = torch.Generator().manual_seed(seed)
    rows, labels = [], []
    with torch.inference_mode():
        for name in names:
            op, mags = T.get(name), T.levels(name, n_levels)
            out = T.apply(name, x.expand(n_levels, *x.shape).contiguous(), mags, generator=gen)
            rows.append(torch.cat(list(out.clamp(0, 1)), dim=2))  # (C, H, n*W)
            labels.append(f"{name}\n{mags[0]:g} → {mags[-1]:g} {op.unit.split(' (')[0]}")
    mosaic = torch.cat(rows, dim=1)  # (C, rows*H, n*W)
    h, w = x.shape[1:]
    fig, ax = plt.subplots(figsize=(size * n_levels + 1.8, size * len(names) + 0.5))
    ax.imshow(_hwc(mosaic), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    ax.set_yticks([h * (i + 0.5) for i in range(len(names))], labels, fontsize=8)
    ax.set_xticks([w * (j + 0.5) for j in range(n_levels)], [str(j) for j in range(n_levels)], fontsize=8)
    ax.set_xlabel("level")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.tight_layout()
    return fig


def heatmap(matrix, labels: list[str], title: str | None = None, fmt: str = ".2f", cmap: str = "viridis",
            ax=None, col_labels: list[str] | None = None, annotate: bool | None = None,
            fontsize: float | None = None, figsize: tuple[float, float] | None = None,
            colorbar_label: str | None = None, xlabel: str | None = None, ylabel: str | None = None) -> Figure:
    """A labelled heatmap, square (``labels`` on both axes) or rectangular (``col_labels`` for the columns).

    Args:
        matrix: ``(K, K)`` or, with ``col_labels``, ``(K, M)`` array (NaN cells are left blank).
        labels: K row (and column) names.
        col_labels: M column names.
        annotate: write the values in the cells (default: when there are at most 24 columns).
        fontsize: of the tick labels and the values in the cells (default: 8 for the rows, 8 or 6 for the
            columns, 6 in the cells).
        figsize: the figure's size in inches (default: from the number of rows and columns).
        colorbar_label, xlabel, ylabel: labels of the colour bar and the axes (default: none).

    Example
    -------
    >>> fig = heatmap(np.eye(3), ["a", "b", "c"], title="identity")
    >>> fig.axes[0].get_title()
    'identity'
    >>> heatmap(np.ones((2, 3)), ["r1", "r2"], col_labels=["x", "y", "z"]).axes[0].get_xticklabels()[2].get_text()
    'z'
    """
    m = np.asarray(matrix, dtype=float)
    cols = labels if col_labels is None else col_labels
    if m.ndim != 2 or m.shape != (len(labels), len(cols)):
        raise ValueError(f"matrix must be ({len(labels)}, {len(cols)}) for {len(labels)} row and {len(cols)} "
                         f"column labels, got {m.shape}")
    annotate = m.shape[1] <= 24 if annotate is None else annotate
    if ax is None:
        width = 0.55 * len(cols) + 2 if annotate else min(0.22 * len(cols) + 3, 16)
        fig, ax = plt.subplots(figsize=figsize or (width, 0.5 * len(labels) + 1.2 + 0.06 * max(map(len, cols))))
    else:
        fig = ax.figure
    im = ax.imshow(m, cmap=cmap, aspect="auto" if col_labels is not None else "equal")
    ax.set_xticks(range(len(cols)), cols, rotation=60 if annotate else 90, ha="right" if annotate else "center",
                  fontsize=fontsize or (8 if annotate else 6))
    ax.set_yticks(range(len(labels)), labels, fontsize=fontsize or 8)
    lo, hi = np.nanmin(m), np.nanmax(m)
    for i, j in np.ndindex(m.shape) if annotate else ():
        if np.isfinite(m[i, j]):
            light = (m[i, j] - lo) < 0.6 * (hi - lo)
            ax.text(j, i, format(m[i, j], fmt), ha="center", va="center", fontsize=fontsize or 6,
                    color="white" if light else "black")
    bar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    if colorbar_label:
        bar.set_label(colorbar_label, fontsize=fontsize or 10)
    if xlabel:
        ax.set_xlabel(xlabel, fontsize=fontsize or 10)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=fontsize or 10)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


# Colours of the verdicts (matplotlib's tab10 green, red, orange, grey), looked up by the verdict's first word so
# that "inconclusive" finds "inconclusive at this budget".
VERDICT_COLOURS = {"reproduced": "#2ca02c", "not reproduced": "#d62728", "partly": "#ff7f0e",
                   "inconclusive": "#7f7f7f", "not measurable": "#c7c7c7"}
CLIP = 8.0  # |z| beyond this is drawn at the edge, with an arrow
SIDE = {"greater": 1, "not below": 1, "less": -1, "not above": -1}  # the paper's side of the boundary


def verdict_colour(verdict: str) -> str:
    """The colour of a verdict on the scoreboard's figure (:data:`VERDICT_COLOURS`; black for an unknown one).

    Example
    -------
    >>> verdict_colour("reproduced"), verdict_colour("inconclusive at this budget")
    ('#2ca02c', '#7f7f7f')
    """
    for name in sorted(VERDICT_COLOURS, key=len, reverse=True):  # "not reproduced" before "reproduced"
        if str(verdict).startswith(name):
            return VERDICT_COLOURS[name]
    return "#000000"


def standard_position(estimate: float | None, lo: float, hi: float, boundary: float, direction: str,
                      margin: float = 0.0) -> tuple[float, float]:
    """Where a part's interval lies against its boundary, in units of the interval's half-width ``hw``:
    ``(z, dot)``, ``z`` the interval's centre and ``dot`` the estimate (the centre when there is none), signed so
    that positive is the paper's side. The interval itself is ``[z - 1, z + 1]`` on this axis, so it excludes the
    boundary (the part is decided) exactly when ``|z| > 1``.

    - ``"greater"`` (and ``"not below"``): ``z = (centre - boundary) / hw``;
    - ``"less"`` (and ``"not above"``): ``z = (boundary - centre) / hw``;
    - ``"equivalent"`` (within ``boundary +- margin``): ``z = (margin - |centre - boundary|) / hw``, the distance
      from the centre to the nearer edge of the margin, positive inside it: ``z > 1`` when the interval lies inside
      the margin, ``z < -1`` when it lies wholly outside.

    A deterministic interval (``lo == hi``) is at ``+-inf`` on its side (0 on the boundary itself).

    Example
    -------
    >>> standard_position(2.0, 1.0, 3.0, 0.5, "greater")   # [1, 3] clears 0.5: centre 2 is 1.5 half-widths beyond
    (1.5, 1.5)
    >>> standard_position(None, 0.0, 1.0, 0.5, "less")      # straddles it
    (0.0, 0.0)
    >>> standard_position(0.01, 0.0, 0.02, 0.0, "equivalent", margin=0.05)   # 0.04 from the edge, hw 0.01
    (4.0, 4.0)
    >>> standard_position(17.0, 17.0, 17.0, 0.5, "less")    # deterministic, on the other side
    (-inf, -inf)
    """
    mid, hw = (lo + hi) / 2, (hi - lo) / 2
    est = mid if estimate is None or not math.isfinite(estimate) else estimate
    if direction == "equivalent":
        gaps = (margin - abs(mid - boundary), margin - abs(est - boundary))
    elif direction in SIDE:
        gaps = (SIDE[direction] * (mid - boundary), SIDE[direction] * (est - boundary))
    else:
        raise ValueError(f"direction must be one of {[*SIDE, 'equivalent']}, got {direction!r}")
    if hw > 0:
        return gaps[0] / hw + 0.0, gaps[1] / hw + 0.0  # + 0.0: no -0.0
    return tuple(math.copysign(math.inf, g) if g else 0.0 for g in gaps)


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def scoreboard_figure(parts: Sequence[Mapping], title: str | None = None, n_without_interval: int = 0) -> Figure:
    """Every claim part's interval against its boundary on one axis (:func:`standard_position`: the interval
    shifted by its boundary and divided by its half-width, positive on the paper's side), one row per part,
    coloured by verdict (:func:`verdict_colour`): a bar clear of the line at 0 (and of the shaded band, for its
    centre) is decided. Positions beyond ``+-CLIP`` (and deterministic checks) are drawn at the edge with an arrow.

    Args:
        parts: one dict per part, drawn top to bottom: ``label`` (e.g. ``"claim id: part"``, shortened to 60
            characters), ``estimate`` (None: the interval's centre), ``lo``, ``hi``, ``boundary`` (finite),
            ``direction`` (``"greater"``, ``"less"``, ``"equivalent"``, ``"not below"``, ``"not above"``),
            ``verdict`` and, for an equivalence, ``margin``.
        title: over the axes.
        n_without_interval: parts left out for want of an interval, said under the axis when > 0.

    The bar of part ``i`` is the line whose ``gid`` is ``"part <i>"`` (x data ``[z - 1, z + 1]``, clipped),
    its estimate the marker with ``gid`` ``"estimate <i>"``.

    Example
    -------
    >>> parts = [dict(label="t1", estimate=2.0, lo=1.0, hi=3.0, boundary=0.5, direction="greater",
    ...               verdict="reproduced"),
    ...          dict(label="t2: b", estimate=0.4, lo=-0.6, hi=1.4, boundary=0.5, direction="greater",
    ...               verdict="inconclusive at this budget")]
    >>> fig = scoreboard_figure(parts, title="Paper A", n_without_interval=1)
    >>> bar = next(line for line in fig.axes[0].lines if line.get_gid() == "part 0")
    >>> bar.get_xydata()[:, 0].tolist(), bar.get_color()
    ([0.5, 2.5], '#2ca02c')
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['t1', 't2: b']
    """
    if not parts:
        raise ValueError("scoreboard_figure() needs at least one part with an interval")
    n = len(parts)
    fig, ax = plt.subplots(figsize=(8, 0.26 * n + 1.6), layout="constrained")
    ax.axvspan(-1, 1, color="#eeeeee", zorder=0)
    ax.axvline(0, color="black", lw=1, zorder=1)
    for i, p in enumerate(parts):
        _draw_part(ax, i, p)
    ax.set_yticks(range(n), [_short(str(p["label"])) for p in parts], fontsize=8)
    ax.set_ylim(n - 0.5, -0.5)  # the first part on top
    ticks = [-CLIP, -4, -1, 0, 1, 4, CLIP]
    ax.set_xticks(ticks, [f"≤ {-CLIP:g}", "-4", "-1", "0", "1", "4", f"≥ {CLIP:g}"], fontsize=8)
    ax.set_xlim(-CLIP - 1.2, CLIP + 1.2)
    xlabel = "(interval − boundary) / half-width: > 0 on the paper's side (or inside the margin)"
    if n_without_interval:
        xlabel += f"\n{n_without_interval} part{'s' * (n_without_interval != 1)} without an interval not drawn"
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(axis="y", length=0)
    drawn = {verdict_colour(p["verdict"]) for p in parts}
    shown = {c: v for v, c in [*VERDICT_COLOURS.items(), ("other", "#000000")] if c in drawn}  # in verdict order
    ax.legend([Line2D([], [], color=c, lw=3) for c in shown], list(shown.values()),
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(shown), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def _draw_part(ax, i: int, p: Mapping) -> None:
    """Part ``i``'s bar, estimate and, beyond ``+-CLIP``, an arrow at the edge (see :func:`scoreboard_figure`)."""
    colour = verdict_colour(p["verdict"])
    z, dot = standard_position(p.get("estimate"), p["lo"], p["hi"], p["boundary"], p["direction"],
                               p.get("margin") or 0.0)
    clip = lambda x: min(max(x, -CLIP), CLIP)
    ax.plot([clip(z - 1), clip(z + 1)] if math.isfinite(z) else [clip(z)] * 2, [i, i], color=colour, lw=2.5,
            solid_capstyle="butt", gid=f"part {i}", zorder=2)
    ax.plot([clip(dot)], [i], "o", color=colour, ms=4, mec="black", mew=0.5, gid=f"estimate {i}", zorder=3)
    if abs(z) > CLIP:
        ax.plot([math.copysign(CLIP + 0.6, z)], [i], ">" if z > 0 else "<", color=colour, ms=6, zorder=3)
