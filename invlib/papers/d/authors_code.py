"""Paper D beside the authors' code (github.com/NingMiao/InstaAug): our invariance module on the inputs theirs was
run on, number by number.

``benchmarks/authors/instaaug_runs.py all --repo <their checkout>`` runs their module on fixed inputs and writes
``authors_instaaug.json`` (kept in git, with their commit and the date of the run). This module computes the same
numbers with :mod:`invlib.learned.instaaug` and compares them (:func:`compare`); :func:`report` adds one
"same as the authors' code" claim per part to a chapter's run. What is compared:

- ``scheduler``: the entropy-band rule on their scripted entropy sequences: lambda after every check.
- ``crops``: the candidate crops of their Tiny-ImageNet config (64 px): count, side per layer, the centres (as a
  set, and their cell ``(r, c)`` against our cell ``(K-1-c, K-1-r)``: theirs are mirrored across the
  anti-diagonal, and pulled in by 63/64 by ``align_corners=True``), and each layer's initial mass and the initial
  entropy when the heads give 0.
- ``cells``: cell to cell, each of our cells against THEIR cell of the same layer, row and column (the centre of
  its crop), and the share of a bright blob captured by the crop of the cell it lies in and by the mirrored cell
  (their ``crops.mirror_test``). Ours follows the paper (a cell stands for the crop centred on it), theirs mirrors
  the cells: this part is expected to differ, and the difference is their defect (:data:`DEFECTS`).
- ``top_n``: the ``n`` most likely crops of their fixed input's log-probabilities (their test-time choice).
- ``sampler``: our reading of their sampler (``method="exponential"``) against their measured frequencies, and our
  exact sampler against the probabilities, on a five-item distribution and on the experiment's: their module's 321
  crops for one input (the share drawn from each layer; the global crop is the likeliest).
- ``draws``: what our sampler draws against what theirs drew on the same two distributions. Theirs adds Exp(1)
  noise where the Gumbel-max trick needs Gumbel noise and over-samples the likeliest crop, ours samples ``p``:
  this part is expected to differ, and the difference is their defect (:data:`DEFECTS`).

And two trained results, their training script at a chapter's cpu setting:

- chapter D1 (:func:`rotation_table`, :func:`report_rotation`): their rotation training (``instaaug_runs.py
  rotation_cpu``), its learned bounds measured with D1's own code, and whether it reaches D1's verdicts;
- chapter D2 (:func:`crop_comparison`, :func:`report_crop`): their crop training on our scenes written as
  Tiny-ImageNet folders (``crop_cpu``), none, random crop and InstaAug, its accuracies and its module's crops
  (measured with D2's measures), and whether it orders the three methods as ours.

Those two are trained results, so each side's verdict is decided over its own seeds by the chapter's test, and the
two verdicts are then compared exactly (:func:`verdicts_differ`); their code was run from one seed, which leaves the
comparison inconclusive at this budget until it has three.

Example
-------
>>> frame = compare("scheduler")
>>> bool(frame["same"].all()), len(frame) > 100
(True, True)
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ... import authors, results
from ...learned import instaaug
from ...pages import count
from ...protocol import decide
from ...utils import check_choice
from .cropping import Cropping
from .protocol import ORDER_TEST, PROTOCOL
from .rotations import BOUNDARY, Rotations, slopes
from .rotations_reports import declared, fig5_evidence

PATH = Path(__file__).with_name("authors_instaaug.json")
PARTS = ("scheduler", "crops", "cells", "top_n", "sampler", "draws")
DEFECTS = {"cells": "their cell (r, c) cuts the crop of cell (K-1-c, K-1-r), the mirror across the anti-diagonal",
           "draws": "their sampler adds Exp(1) noise where Gumbel-max needs Gumbel noise: it over-samples the "
                    "likeliest crop"}  # parts where ours follows the paper and theirs does not: expected to differ
CENTRE_PULL = 1 / 128  # align_corners=True moves a centre c to 0.5 + (c - 0.5) * 63/64: at most 1/128 at 64 px
BLOB_SHARE_TOLERANCE = 0.05  # the 1/128 pull moves their crop by half a pixel; a blob of sigma 1.5 px in a 24 px
# crop loses far less than 5 % of its mass to it (measured: |ours - theirs| <= 0.001 on the unmirrored cells)
DRAWS = 50_000  # our draws per sampler on the 321 crops: 0.3 s each (one thread); a share's sd <= 0.0023, so a
# tolerance of 5 sd a side is <= 0.016, against their bias of 0.068 on the global crop (0.919 vs p = 0.852)


def stored(path: str | Path = PATH) -> dict | None:
    """Their stored measurements (None when the file is missing)."""
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def _rows(part: str, items) -> pd.DataFrame:
    rows = [dict(part=part, key=k, ours=float(o), theirs=float(t), difference=abs(float(o) - float(t)),
                 tolerance=tol, same=abs(float(o) - float(t)) <= tol) for k, o, t, tol in items]
    return pd.DataFrame(rows, columns=["part", "key", "ours", "theirs", "difference", "tolerance", "same"])


def _scheduler(rec: dict) -> pd.DataFrame:
    s = rec["scheduler"]["settings"]
    items = []
    for name, seq in rec["scheduler"]["sequences"].items():
        band = instaaug.EntropyBand(s["band"][0], s["band"][1], s["lam0"], factor=s["alpha"], tol=s["tol"],
                                    max_steps=s["max_abs_status"])
        for k, (h, lam) in enumerate(zip(seq["entropy"], seq["lam"])):
            items.append((f"{name}[{k}]", band.step(h), lam, 1e-9 * max(1.0, abs(lam))))
    return _rows("scheduler", items)


def _our_lrp(rec: dict) -> instaaug.LRPCrops:
    layers = rec["crops"]["layers"]
    crop_layers = [entry for entry in layers if entry["cells"] > 1]
    lrp = instaaug.LRPCrops(rec["crops"]["settings"]["input"][-1], sides=tuple(e["side"] for e in crop_layers),
                            layer_bias=tuple(e["bias"] for e in layers))
    with torch.no_grad():  # the heads' outputs at 0: the initial masses are the biases' alone
        for h in [*lrp.heads, lrp.global_head]:
            h.weight.zero_()
            if getattr(h, "bias", None) is not None:
                h.bias.zero_()
    return lrp


def _crops(rec: dict) -> pd.DataFrame:
    c = rec["crops"]
    lrp = _our_lrp(rec)
    theirs = torch.tensor(c["boxes"], dtype=torch.float32)
    items = [("num_crops", lrp.num_crops, c["num_crops"], 0)]
    for i, entry in enumerate(c["layers"]):
        ours = lrp.boxes[lrp.layer == i]
        items.append((f"layer {entry['layer']}: count", len(ours), entry["count"], 0))
        items.append((f"layer {entry['layer']}: side", float(ours[:, 2].mean()), entry["side"], 1e-6))
        mine = ours[:, :2]
        first = entry["first_index"]
        theirs_centres = theirs[first:first + entry["count"], :2]
        # as sets: every one of their centres has one of ours within the align_corners pull, and back
        d = torch.cdist(theirs_centres, mine, p=float("inf"))
        items.append((f"layer {entry['layer']}: centres as a set, largest distance to the nearest",
                      float(max(d.min(1).values.max(), d.min(0).values.max())), 0.0, CENTRE_PULL + 1e-4))
        if entry["cells"] > 1:  # their cell (r, c) is our cell (K-1-c, K-1-r): the permutation, not only the set
            k = entry["cells"]
            mirrored = mine.reshape(k, k, 2).flip(0, 1).transpose(0, 1).reshape(-1, 2)
            items.append((f"layer {entry['layer']}: centres, their cell (r, c) vs our cell (K-1-c, K-1-r), largest "
                          "distance", float((theirs_centres - mirrored).abs().max()), 0.0, CENTRE_PULL + 1e-4))
    with torch.no_grad():
        logp = lrp(torch.zeros(1, 3, lrp.size, lrp.size))
    p = logp.exp()[0]
    init = c["initial"]["bias_only"]
    for i, mass in enumerate(init["mass_per_layer"]):
        items.append((f"initial mass, layer {c['layers'][i]['layer']}", float(p[lrp.layer == i].sum()), mass, 1e-4))
    items.append(("initial entropy", float(instaaug.entropy(logp)[0]), init["entropy"], 1e-4))
    return _rows("crops", items)


def _blob(text: str) -> tuple[float, int, int, int]:
    """The blob of their mirror test, read from its stored description: sigma (px), row, column, image size."""
    m = re.search(r"sigma ([0-9.]+) px.*row (\d+), col (\d+) of a (\d+) px", text)
    if m is None:
        raise ValueError(f"cannot read the blob's sigma, row, column and size from {text!r}")
    return float(m[1]), int(m[2]), int(m[3]), int(m[4])


def blob_shares(lrp: instaaug.LRPCrops, sigma: float, row: int, col: int, layer: int = 0) -> torch.Tensor:
    """The share of a bright blob (a Gaussian of ``sigma`` px, peak 1, at pixel ``row``, ``col`` of channel 0)
    that each crop of ``lrp``'s crop layer ``layer`` captures: ``(K * K,)``, row-major over the cells, the sum of
    the blob in the resampled crop times side squared over the blob's sum (their measure).

    Example
    -------
    >>> lrp = instaaug.LRPCrops(64)
    >>> share = blob_shares(lrp, 1.5, 10, 22)  # the blob lies in cell (2, 5) of the 16 x 16 layer
    >>> round(float(share[2 * 16 + 5]), 2), round(float(share[10 * 16 + 13]), 2)
    (1.0, 0.0)
    """
    size = lrp.size
    yy, xx = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                            indexing="ij")
    blob = torch.exp(-((yy - row) ** 2 + (xx - col) ** 2) / (2 * sigma ** 2))
    img = torch.zeros(1, 3, size, size)
    img[0, 0] = blob
    boxes = lrp.boxes[lrp.layer == layer]
    out = instaaug.crop(img.expand(len(boxes), -1, -1, -1), boxes)
    return out[:, 0].sum((1, 2)) * boxes[:, 2] ** 2 / blob.sum()


def _cells(rec: dict) -> pd.DataFrame:
    c = rec["crops"]
    lrp = _our_lrp(rec)
    theirs = torch.tensor(c["boxes"], dtype=torch.float32)
    items = []
    for i, entry in enumerate(c["layers"]):
        if entry["cells"] < 2:
            continue
        first = entry["first_index"]
        d = (theirs[first:first + entry["count"], :2] - lrp.boxes[lrp.layer == i, :2]).abs().amax(1)
        worst = int(d.argmax())
        items.append((f"layer {entry['layer']}: centre of cell (r, c) vs theirs of cell (r, c), largest distance "
                      f"(at cell ({worst // entry['cells']}, {worst % entry['cells']}))", float(d.max()), 0.0,
                      CENTRE_PULL + 1e-4))
    test = c.get("mirror_test")
    if test:
        share = blob_shares(lrp, *_blob(test["blob"])[:3])
        k = c["layers"][0]["cells"]
        cell = tuple(test["blob_cell"])
        for name, probe in (("blob's cell", "selecting_blob_cell"), ("mirrored cell", "selecting_mirrored_cell")):
            r, col = test[probe]["cell"]
            items.append((f"blob in cell {cell}: share captured by the crop of the {name} ({r}, {col})",
                          float(share[r * k + col]), test[probe]["blob_share_inside"], BLOB_SHARE_TOLERANCE))
    return _rows("cells", items)


def _top_n(rec: dict) -> pd.DataFrame:
    logp = torch.tensor(rec["sampler"]["fixed_input_logprobs"])
    items = []
    for n, entry in rec["sampler"]["top_n"].items():
        if not n.isdigit():
            continue
        ours = logp.topk(int(n)).indices.tolist()
        items.append((f"top {n}: indices equal", float(ours == entry["indices"]), 1.0, 0))
    return _rows("top_n", items)


@functools.lru_cache(maxsize=16)
def _frequencies(logp: tuple[float, ...], draws: int, seed: int, method: str) -> tuple[float, ...]:
    """Frequencies of ``draws`` draws of :func:`~invlib.learned.instaaug.sample_categorical` (``method``) from the
    log-probabilities ``logp``, in chunks of 10,000 (a 321-crop draw of 50,000 at once would hold 64 MB)."""
    lp = torch.tensor(logp)[None]
    g = torch.Generator().manual_seed(seed)
    counts = torch.zeros(len(logp))
    for start in range(0, draws, 10_000):
        n = min(10_000, draws - start)
        counts += torch.bincount(instaaug.sample_categorical(lp, n, g, method).flatten(), minlength=len(logp))
    return tuple((counts / draws).tolist())


def _sd(share: float, n: int) -> float:
    return math.sqrt(max(share * (1 - share), 1e-12) / n)


def _distributions(rec: dict, draws: int, seed: int):
    """The two distributions their sampler was run on, each as ``(name, groups, p, theirs, ours, our_draws,
    their_draws)`` (``ours``: our frequencies per sampler method; ``p`` and ``theirs`` per group): the five items
    (each item a group) and their module's 321 crops for one input (the share of each layer: index ranges)."""
    out = []
    five = rec["sampler"]["five"]
    p = five["p"]
    groups = [(f"item {k}", [k]) for k in range(len(p))]
    freq = {m: _frequencies(tuple(math.log(x) for x in p), 200_000, seed, m) for m in ("exponential", "gumbel")}
    out.append(("five items", groups, p, five["freq_theirs"], freq, 200_000, five["draws"]))
    crops = rec["sampler"].get("crops_321")
    if crops is not None:
        logp = tuple(float(x) for x in rec["sampler"]["fixed_input_logprobs"])
        layers = rec["crops"]["layers"]
        name = {2: "16x16 layer", 3: "8x8 layer", -1: "global crop"}
        groups = [(name.get(e["layer"], f"layer {e['layer']}"), range(e["first_index"], e["first_index"] + e["count"]))
                  for e in layers]
        freq = {m: _frequencies(logp, draws, seed, m) for m in ("exponential", "gumbel")}
        out.append((f"{len(logp)} crops", groups, crops["per_layer"]["p"], crops["per_layer"]["freq_theirs"], freq,
                    draws, crops["draws"]))
    return out


def _sampler(rec: dict, draws: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    items = []
    for dist, groups, p, theirs, freq, ours_n, their_n in _distributions(rec, draws, seed):
        for method, target, label in (("exponential", theirs, "their sampler as we read it vs theirs"),
                                      ("gumbel", p, "our sampler vs p")):
            for (group, idx), t in zip(groups, target):
                f = sum(freq[method][j] for j in idx)
                tol = 5 * _sd(f, ours_n) + (5 * _sd(t, their_n) if method == "exponential" else 0.0)
                items.append((f"{dist}: {label}: {group}", f, t, tol))
    return _rows("sampler", items)


def _draws(rec: dict, draws: int = DRAWS, seed: int = 0) -> pd.DataFrame:
    items = []
    for dist, groups, _, theirs, freq, ours_n, their_n in _distributions(rec, draws, seed):
        for (group, idx), t in zip(groups, theirs):
            f = sum(freq["gumbel"][j] for j in idx)
            items.append((f"{dist}: share drawn, our sampler vs theirs: {group}", f, t,
                          5 * _sd(f, ours_n) + 5 * _sd(t, their_n)))
    return _rows("draws", items)


def compare(part: str, path: str | Path = PATH) -> pd.DataFrame:
    """Our numbers beside theirs for one of :data:`PARTS`: ``part, key, ours, theirs, difference, tolerance,
    same``; an empty table when their file is missing.

    Example
    -------
    >>> compare("top_n")[["key", "same"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['top 1: indices equal', True], ['top 4: indices equal', True], ['top 10: indices equal', True],
     ['top 50: indices equal', True]]
    """
    check_choice(part, PARTS, "part")
    rec = stored(path)
    needs = {"top_n": "sampler", "sampler": "sampler", "draws": "sampler", "cells": "crops"}.get(part, part)
    if rec is None or needs not in rec:
        return _rows(part, [])
    return {"scheduler": _scheduler, "crops": _crops, "cells": _cells, "top_n": _top_n, "sampler": _sampler,
            "draws": _draws}[part](rec)


def report(run, parts=PARTS, path: str | Path = PATH) -> pd.DataFrame:
    """Record one "same as the authors' code" claim per part (``authors/<part>_same``, declared in
    :mod:`invlib.papers.d.protocol`) on ``run``; return every compared number.

    Example
    -------
    >>> from invlib.results import Run
    >>> run = Run("smoke", name="demo")
    >>> frame = report(run, ("scheduler", "top_n"))
    >>> run.claims["authors/scheduler_same"]["verdict"], run.claims["authors/top_n_same"]["verdict"]
    ('reproduced', 'reproduced')
    """
    rec = stored(path)
    frames = []
    for part in parts:
        frame = compare(part, path)
        authors.record_same_values(run, PROTOCOL.get(f"authors/{part}_same", "d2_instance_crops"), frame, rec)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else _rows("", [])


def sampler_facts(path: str | Path = PATH, draws: int = DRAWS, seed: int = 0) -> dict | None:
    """The likeliest of their module's 321 crops for their fixed input (the experiment's distribution): its
    ``index``, ``name``, probability ``p`` and the share their sampler drew (``theirs``), both stored, and the share
    our sampler draws (``ours``; the same draws as :func:`compare`'s ``sampler`` and ``draws`` rows). None when
    their file has no such measurement.

    Example
    -------
    >>> f = sampler_facts()
    >>> f["name"], f["theirs"] > f["p"] + 0.05, abs(f["ours"] - f["p"]) < 0.005
    ('the global crop', True, True)
    """
    rec = stored(path)
    crops = None if rec is None else rec.get("sampler", {}).get("crops_321")
    if crops is None:
        return None
    top = crops["most_likely"]
    logp = tuple(float(x) for x in rec["sampler"]["fixed_input_logprobs"])
    layer = next((e for e in rec["crops"]["layers"] if e["first_index"] <= top["index"] < e["first_index"]
                  + e["count"]), None)
    name = "the global crop" if layer is not None and layer["cells"] == 1 else f"crop {top['index']}"
    return dict(index=top["index"], name=name, p=top["p"], theirs=top["freq_theirs"], num_crops=len(logp),
                ours=_frequencies(logp, draws, seed, "gumbel")[top["index"]])


def sampler_text(verdict: str, path: str | Path = PATH) -> str:
    """What D2's prose says about the samplers: on the experiment's distribution (their module's 321 crops for
    one input, :func:`sampler_facts`) how often their sampler and ours draw the likeliest crop against its
    probability (numbers from the stored run and our draws), then a sentence chosen by the verdict of
    ``authors/sampler_same``.

    Example
    -------
    >>> sampler_text("reproduced")[:60]
    "On the experiment's distribution, their module's 321 crops f"
    >>> sampler_text("reproduced", "/nonexistent.json")[:38]
    'Ours samples p, and our reading of the'
    """
    f = sampler_facts(path)
    head = "" if f is None else (
        f"On the experiment's distribution, their module's {f['num_crops']} crops for one input, their sampler draws "
        f"{f['name']} {f['theirs']:.3f} of the time where its probability is {f['p']:.3f}; ours draws it "
        f"{f['ours']:.3f}. ")
    return head + {"reproduced": "Ours samples p, and our reading of theirs gives their measured frequencies within "
                                 "sampling error.",
                   "not reproduced": "Our sampler or our reading of theirs misses a measured frequency by more than "
                                     "its tolerance (the table below says which).",
                   results.NOT_MEASURABLE: "Their sampler's frequencies are not stored, so this is not compared."}.get(
        verdict, f"The comparison of the samplers is {verdict}.")


def mirror_text(path: str | Path = PATH) -> str:
    """What D2's prose says about their mirrored cells, from their stored mirror test and our crops of the same
    blob (:func:`blob_shares`): which share of the blob the crop of its own cell and of the mirrored cell capture,
    theirs and ours.

    Example
    -------
    >>> mirror_text()[:58]
    'A bright blob in cell (2, 5) of the 16 x 16 layer: the cro'
    >>> mirror_text("/nonexistent.json")
    'Their mirror test is not stored, so it is not compared.'
    """
    rec = stored(path)
    test = None if rec is None else rec.get("crops", {}).get("mirror_test")
    if not test:
        return "Their mirror test is not stored, so it is not compared."
    frame = _cells(rec)
    own, mirrored = (row for _, row in frame[frame.key.str.startswith("blob")].iterrows())  # as _cells orders them
    k = rec["crops"]["layers"][0]["cells"]
    return (f"A bright blob in cell {tuple(test['blob_cell'])} of the {k} x {k} layer: the crop their code cuts "
            f"for that cell captures {100 * own.theirs:.0f} % of it, the crop of the mirrored cell "
            f"{tuple(test['mirrored_cell'])} {100 * mirrored.theirs:.0f} %; ours capture {100 * min(own.ours, 1):.0f} "
            f"% and {100 * min(mirrored.ours, 1):.0f} %.")


def defects(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` (:func:`report`'s) of the parts where ours follows the paper and theirs does not
    (:data:`DEFECTS`): ``part, key, ours, theirs, tolerance, same``.

    Example
    -------
    >>> defects(compare("cells"))["same"].tolist()
    [False, False, False, False]
    """
    return frame.loc[frame["part"].isin(list(DEFECTS)), ["part", "key", "ours", "theirs", "tolerance", "same"]]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per part: numbers compared, how many agree, the largest difference, and ``expected``: "same", or
    for the parts where ours follows the paper and theirs does not (:data:`DEFECTS`) "differs: " and their defect.

    Example
    -------
    >>> summary(compare("cells"))[["part", "same", "expected"]].values.tolist()[0][:2]
    ['cells', 0]
    """
    out = frame.groupby("part", sort=False).agg(compared=("same", "size"), same=("same", "sum"),
                                                largest_difference=("difference", "max")).reset_index()
    out["expected"] = [f"differs: {DEFECTS[p]}" if p in DEFECTS else "same" for p in out["part"]]
    return out


# ----------------------------------------------------------------------------- their rotation training (D1)
def verdicts_differ(ours: results.Evidence, theirs: results.Evidence, n: int) -> results.Interval:
    """The effect of one part of a "same verdict as the authors' code" claim
    (:func:`invlib.papers.d.protocol.same_verdict_part`): two implementations' verdicts on one test, each decided by
    its declaration on that side's own replicates (``n``: the seeds of the side with fewer). Once both are decided
    (reproduced, not reproduced, or partly with every part decisive): 1 where they differ, 0 where they agree,
    exactly; while a side is not: [0, 1], which leaves the claim inconclusive at this budget.

    Example
    -------
    >>> up, down, one = (decide(ORDER_TEST, g) for g in ([3.0, 3.2, 3.1], [-3.0, -3.2, -3.1], [3.0]))
    >>> [(iv.estimate, iv.lo, iv.hi) for iv in (verdicts_differ(up, up, 3), verdicts_differ(up, down, 3))]
    [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)]
    >>> iv = verdicts_differ(up, one, 1)
    >>> iv.lo, iv.hi, iv.n
    (0.0, 1.0, 1)
    """
    decided = (results.REPRODUCED, results.NOT_REPRODUCED, results.PARTLY)  # partly: every part decisive
    if ours.verdict in decided and theirs.verdict in decided:
        differ = float(ours.verdict != theirs.verdict)
        return results.Interval(differ, differ, differ, n, 1.0, "verdicts")
    return results.Interval(math.nan, 0.0, 1.0, n, 1.0, "verdicts")


def _percent(text) -> float:
    """Their logs' accuracy text (``"51.40%"``) as a number of percent; NaN when missing."""
    return float(str(text).rstrip("%")) if text is not None else math.nan


def rotation_runs(path: str | Path = PATH) -> tuple[dict, dict[tuple[float, float], pd.DataFrame],
                                                    dict[tuple[float, float], float]] | None:
    """Their rotation training at chapter D1's cpu setting (``rotation_cpu`` in their file): its settings, and per
    ``(module learning rate, entropy weight)`` the per-test-image bounds in the format of
    :func:`invlib.papers.d.rotations.bounds` (``phi, upper, lower, upper_true, lower_true``; radians, D1's angle
    convention) and their test accuracy (a fraction). None when their file has no such run. Each is one run of
    their code, from one seed (``settings["seed"]``).

    Example
    -------
    >>> settings, frames, acc = rotation_runs()
    >>> settings["steps"], (0.01, 0.1) in frames, list(frames[0.01, 0.1].columns)
    (320, True, ['phi', 'upper', 'lower', 'upper_true', 'lower_true'])
    """
    rec = stored(path)
    if rec is None or "rotation_cpu" not in rec:
        return None
    r = rec["rotation_cpu"]
    phi = pd.Series(r["phi"], dtype=float)

    def key(run):
        return run["module_lr"], run.get("entropy_weight", r["settings"].get("their_entropy_weight", 0.1))

    frames = {key(run): pd.DataFrame(dict(phi=phi, upper=run["upper"], lower=run["lower"],
                                          upper_true=BOUNDARY - phi, lower_true=BOUNDARY + phi)) for run in r["runs"]}
    acc = {key(run): _percent(run["test_accuracy"]) / 100 for run in r["runs"]}
    return dict(r["settings"], date=r["date"], commit=rec.get("commit")), frames, acc


def same_setting(S: Rotations, their: dict) -> bool:
    """Whether ``S`` is the setting their runs were made at: the same number of training steps, and the same
    module learning rate as one of their runs (their data, optimizer and classifier are theirs)."""
    steps = S.epochs * math.ceil(S.n_train / S.batch_size)
    return steps == their["steps"] and any(math.isclose(S.module_lr, lr) for lr in their["module_lrs"])


def rotation_table(ours: pd.DataFrame, ours_acc: float, path: str | Path = PATH) -> pd.DataFrame:
    """D1's measures (:func:`~invlib.papers.d.rotations.slopes`) on our InstaAug's bounds ``ours`` (the first
    seed's model) and on every run of their code: one row each (``who``, ``module_lr``, ``entropy_weight``,
    slopes, share near the boundary, mean gap, width, test accuracy). One run has no verdict: the claims are
    decided over seeds (:func:`report_rotation`). Only ours when their run is missing.

    Example
    -------
    >>> phi = pd.Series([-0.6, 0.0, 0.6])
    >>> ours = pd.DataFrame(dict(phi=phi, upper=BOUNDARY - phi, lower=BOUNDARY + phi, upper_true=BOUNDARY - phi,
    ...                          lower_true=BOUNDARY + phi))
    >>> table = rotation_table(ours, 1.0)
    >>> table.loc[0, "who"], float(table.loc[0, "upper_slope"]), len(table) > 1
    ('ours', -1.0, True)
    """
    found = rotation_runs(path)
    entries = [("ours", (math.nan, math.nan), ours, ours_acc)]
    if found is not None:
        entries += [("authors' code", k, frame, found[2][k]) for k, frame in sorted(found[1].items(), reverse=True)]
    rows = [dict(who=who, module_lr=lr, entropy_weight=weight, **{k: round(v, 3) for k, v in slopes(frame).items()},
                 test_acc=round(acc, 3)) for who, (lr, weight), frame, acc in entries]
    return pd.DataFrame(rows)


def report_rotation(run, S: Rotations, table: pd.DataFrame, per_seed: pd.DataFrame,
                    path: str | Path = PATH) -> results.Evidence:
    """Record ``authors/rotation_same`` on ``run``: at ``S`` (when it is the setting of their run,
    :func:`same_setting`), their code's learned bounds reach the same two Fig. 5 verdicts as ours. Each verdict is
    decided by D1's own test (:func:`~invlib.papers.d.rotations_reports.fig5_evidence`: seeds, ``n_min`` 3): ours
    on ``per_seed`` (:func:`~invlib.papers.d.rotations.seed_slopes`), theirs on their runs at our module learning
    rate and their entropy weight (``table``'s rows of theirs, one per seed, :func:`rotation_table`); the verdicts
    are compared by :func:`verdicts_differ`, both parts must agree. Their code was run from one seed, so while a side
    has fewer than 3 the claim is inconclusive at this budget. Not measurable where their code has no run at this
    setting. Returns the evidence.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.papers.d.rotations import settings
    >>> phi = pd.Series([-0.6, 0.0, 0.6])
    >>> ours = pd.DataFrame(dict(phi=phi, upper=BOUNDARY - phi, lower=BOUNDARY + phi, upper_true=BOUNDARY - phi,
    ...                          lower_true=BOUNDARY + phi))
    >>> seeds = pd.DataFrame([dict(seed=0, **slopes(ours))])
    >>> report_rotation(Run("demo", "smoke"), settings("smoke"), rotation_table(ours, 1.0), seeds).verdict
    'not measurable at this profile'
    """
    found = rotation_runs(path)
    their = None if found is None else found[0]
    theirs = None if their is None or not same_setting(S, their) else _their_rows(table, S.module_lr, their)
    claim = declared("authors/rotation_same")
    if theirs is None or theirs.empty:
        effects = results.not_measurable("the authors' code has no run at this chapter's setting")
        run.claim(claim, ours="not compared", paper="their code not run at this setting", effects=effects)
        return run.evidence[claim.id]
    mine, other = fig5_evidence(per_seed), fig5_evidence(theirs)
    tests = {"bounds follow angle": "fig5/bounds_follow_angle", "reaches boundary": "fig5/reaches_boundary"}
    effects = {name: verdicts_differ(mine[cid], other[cid], min(len(per_seed), len(theirs)))
               for name, cid in tests.items()}
    said = "; ".join(f"{cid.split('/')[1]}: ours {mine[cid].verdict} ({count(len(per_seed), 'seed')}), theirs "
                     f"{other[cid].verdict} ({len(theirs)} run(s))" for cid in tests.values())
    run.claim(claim, ours=said, effects=effects,
              paper=f"authors' code (commit {str(their.get('commit'))[:7]}, run here {their['date']}), module lr "
              f"{S.module_lr:g}, entropy weight {their.get('their_entropy_weight', 0.1):g}: slopes "
              f"{theirs.upper_slope.mean():+.2f} / {theirs.lower_slope.mean():+.2f}, "
              f"{100 * theirs.near_boundary.mean():.0f} % near")
    return run.evidence[claim.id]


def _their_rows(table: pd.DataFrame, module_lr: float, their: dict | None = None) -> pd.DataFrame:
    """Their runs at ``module_lr`` with their config's entropy weight (one per seed they were run from)."""
    weight = (their or {}).get("their_entropy_weight", 0.1)
    return table[(table.who != "ours") & np.isclose(table.module_lr.astype(float), module_lr)
                 & np.isclose(table.entropy_weight.astype(float), weight)]


def _their_row(table: pd.DataFrame, module_lr: float, their: dict | None = None):
    """Their first run at ``module_lr`` with their config's entropy weight (None when there is none)."""
    rows = _their_rows(table, module_lr, their)
    return None if rows.empty else rows.iloc[0]


def rotation_facts(table: pd.DataFrame, module_lr: float, same: results.Evidence | None = None) -> dict:
    """What D1's prose says about their run at ``module_lr`` (text; ``"n/a"`` when there is none): ``their_width``
    (mean a + b, radians), ``their_slopes``, ``their_acc``, ``their_reading`` (one sentence about that one run,
    chosen by its numbers) and ``rotation_same_text`` (chosen by the verdict ``same`` of :func:`report_rotation`).

    Example
    -------
    >>> t = pd.DataFrame([dict(who="authors' code", module_lr=0.01, entropy_weight=0.1, upper_slope=0.0,
    ...                        lower_slope=0.0, width=6.28, test_acc=0.51)])
    >>> rotation_facts(t, 0.01)["their_reading"][:45]
    'in this one run their ranges cover nearly the'
    """
    r = _their_row(table, module_lr)
    out = dict(rotation_same_text=_same_text(same))
    if r is None:
        return dict(out, their_width="n/a", their_slopes="n/a", their_acc="n/a",
                    their_reading="their code has no run at this learning rate in `authors_instaaug.json`.")
    least, asked = min(-r.upper_slope, r.lower_slope), declared("fig5/bounds_follow_angle").parts["upper bound falls"]
    if r.width >= 0.9 * 2 * math.pi:
        reading = ("in this one run their ranges cover nearly the whole turn (mean width at least 90 % of 2π), so an "
                   "upright sprite and its upside-down class become the same to the classifier, and nothing in their "
                   "objective pulls the bounds back (the band on a and b is never left).")
    elif least > asked.boundary:
        reading = (f"in this one run both bounds move with the angle by more than {asked.boundary:g} rad per "
                   "radian, the slope D1's first claim asks of every seed.")
    else:
        reading = (f"in this one run a bound moves with the angle by less than {asked.boundary:g} rad per radian, "
                   "the slope D1's first claim asks of every seed.")
    return dict(out, their_width=f"{r.width:.2f}", their_slopes=f"{r.upper_slope:+.2f} and {r.lower_slope:+.2f}",
                their_acc=f"{100 * r.test_acc:.1f} %", their_reading=reading)


def _same_text(same: results.Evidence | None) -> str:
    """The sentence about ``authors/rotation_same``, chosen by its verdict."""
    if same is None:
        return "The comparison with their verdicts was not made."
    return results.phrase(
        same, reproduced="Decided each on its own seeds, their code and ours reach the same two Fig. 5 verdicts.",
        not_reproduced="Decided each on its own seeds, their code and ours reach different Fig. 5 verdicts.",
        partly="Decided each on its own seeds, their code and ours agree on one Fig. 5 verdict and differ on the "
        "other.", inconclusive="Whether their code reaches our Fig. 5 verdicts cannot be decided at this budget: "
        f"a verdict needs three seeds of each, and their code was run from one ({same.text()}).",
        not_measurable="Their code was not run at this chapter's setting, so the verdicts are not compared.")


# ----------------------------------------------------------------------------- their crop training on scenes (D2)
CROP_METHODS = {"none": "none", "random_crop": "random crop", "instaaug": "InstaAug"}  # ours -> their run's name
CROP_SETTING = ("n_train", "epochs", "pretrain_epochs", "batch_size", "lr", "weight_decay", "module_lr",
                "warmup_epochs")  # their training's; our test scenes must include theirs (crop_same_setting)
CROP_MEASURES = ("side", "centre_in_box", "kl_to_mean", "entropy", "side_rho")
# How D2's page names the rows of :func:`crop_comparison` (the keys stay as they are recorded).
CROP_ROWS = {**{f"accuracy: {m} (%)": f"test accuracy, {name if m != 'none' else 'no augmentation'} (%)"
                for m, name in CROP_METHODS.items()},
             "InstaAug crops: side": "InstaAug: expected crop side",
             "InstaAug crops: centre_in_box": "InstaAug: crop mass centred in the object's box",
             "InstaAug crops: kl_to_mean": "InstaAug: KL of a scene's crops to their mean (nats)",
             "InstaAug crops: entropy": "InstaAug: entropy (nats)",
             "InstaAug crops: side_rho": "InstaAug: Spearman ρ, crop side vs object side"}


def crop_run(path: str | Path = PATH) -> dict | None:
    """Their crop training on ``scenes`` at chapter D2's cpu setting (``crop_cpu`` in their file), with its
    ``commit``; None when absent.

    Example
    -------
    >>> sorted(crop_run()["test_accuracy"])
    ['InstaAug', 'none', 'random crop']
    """
    rec = stored(path)
    if rec is None or "crop_cpu" not in rec:
        return None
    return dict(rec["crop_cpu"], commit=rec.get("commit"))


def crop_same_setting(S: Cropping, their: dict) -> bool:
    """Whether ``S`` has the numbers of their run's training setting (:data:`CROP_SETTING`) and scores on at
    least their test scenes (the test set's first ``n_test`` scenes are the same at any larger ``n_test``: a larger
    one only measures the same models more precisely); size, classifier and the band's check interval are theirs
    there (64 px and 321 crops, their ResNet-18 at our widths, once per epoch).

    Example
    -------
    >>> from invlib.papers.d.cropping import settings
    >>> crop_same_setting(settings("cpu"), crop_run()["settings"]), crop_same_setting(settings("smoke"),
    ...                                                                                crop_run()["settings"])
    (True, False)
    """
    return (all(math.isclose(float(getattr(S, k)), float(their[k])) for k in CROP_SETTING)
            and S.n_test >= int(their["n_test"]))


def crop_comparison(facts: dict, crops: pd.DataFrame, path: str | Path = PATH) -> pd.DataFrame:
    """Chapter D2's numbers beside their run's: test accuracy (%) of none, random crop and InstaAug (ours with
    D2's test-time crops, theirs with their own evaluation: top-n crops for InstaAug, the whole image otherwise),
    and the learned module's crop measures (:func:`invlib.learned.instaaug.crop_measures`, the means over the test
    scenes; D2's ``side_rho``). ``facts`` are D2's report's (``acc_<method>``), ``crops`` its crop table. Empty when
    their run is missing.

    Example
    -------
    >>> t = crop_comparison(dict(acc_none=50.0, acc_random_crop=55.0, acc_instaaug=56.0), pd.DataFrame())
    >>> t.index[:3].tolist()
    ['accuracy: none (%)', 'accuracy: random_crop (%)', 'accuracy: instaaug (%)']
    """
    their = crop_run(path)
    if their is None:
        return pd.DataFrame(columns=["ours", "authors' code"])
    rows = {f"accuracy: {m} (%)": (facts.get(f"acc_{m}", math.nan), _percent(their["test_accuracy"].get(name)))
            for m, name in CROP_METHODS.items()}
    theirs_m = their.get("crop_measures") or {}
    for k in CROP_MEASURES:
        mine = float(crops.loc["instaaug", k]) if "instaaug" in crops.index and k in crops.columns else math.nan
        rows[f"InstaAug crops: {k}"] = (mine, theirs_m.get(k, math.nan))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["ours", "authors' code"])


def report_crop(run, S: Cropping, table: pd.DataFrame, acc: pd.DataFrame,
                path: str | Path = PATH) -> results.Evidence:
    """Record ``authors/crop_order_same`` on ``run``: at ``S`` (their run's setting, :func:`crop_same_setting`),
    their code orders none, random crop and InstaAug by test accuracy as ours does. Each of the three pairwise
    orders is decided by D2's test of an order (:data:`~invlib.papers.d.protocol.ORDER_TEST`: the paired gain over
    seeds, :func:`~invlib.papers.d.cropping_reports.gains_of`, ``n_min`` 3) on each side: ours on ``acc``
    (:func:`~invlib.papers.d.cropping.accuracy_table`), theirs on their one run per method (``table``,
    :func:`crop_comparison`); the verdicts are compared by :func:`verdicts_differ`, all three must agree. One seed
    a side is inconclusive at this budget. Returns the evidence.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.papers.d.cropping import settings
    >>> t = crop_comparison(dict(acc_none=50.0, acc_random_crop=55.0, acc_instaaug=56.0), pd.DataFrame())
    >>> report_crop(Run("demo", "smoke"), settings("smoke"), t, pd.DataFrame()).verdict
    'not measurable at this profile'
    """
    from .cropping_reports import gains_of

    their = crop_run(path)
    claim = PROTOCOL.get("authors/crop_order_same", "d2_instance_crops")
    if their is None or not crop_same_setting(S, their["settings"]) or not len(table):
        effects = results.not_measurable("the authors' code has no run at this chapter's setting")
        run.claim(claim, ours="not compared", paper="their code not run at this setting", effects=effects)
        return run.evidence[claim.id]
    theirs = table["authors' code"]
    effects, said = {}, []
    for hi, lo in (("instaaug", "random_crop"), ("random_crop", "none"), ("instaaug", "none")):
        gain = float(theirs[f"accuracy: {hi} (%)"] - theirs[f"accuracy: {lo} (%)"])
        other, mine = decide(ORDER_TEST, [gain]), decide(ORDER_TEST, gains_of(acc, hi, lo))
        effects[f"{hi} > {lo}"] = verdicts_differ(mine, other, min(mine.n, other.n))
        said.append(f"{hi} > {lo}: ours {mine.verdict} ({count(mine.n, 'seed')}), theirs {other.verdict} ({gain:+.1f} "
                    "points, 1 run)")
    run.claim(claim, ours="; ".join(said), effects=effects,
              paper=f"authors' code (commit {str(their.get('commit'))[:7]}, run here {their['date']}): "
              + ", ".join(f"{name} {theirs[f'accuracy: {m} (%)']:.1f} %" for m, name in CROP_METHODS.items()))
    return run.evidence[claim.id]


def crop_facts(table: pd.DataFrame, order: results.Evidence | None = None) -> dict:
    """Their run's numbers for D2's prose, as text (``"n/a"`` when missing): ``their_acc_<method>`` and
    ``their_in_box``, ``their_side_rho``; and ``crop_order_text``, chosen by the verdict ``order`` of
    :func:`report_crop`.

    Example
    -------
    >>> crop_facts(pd.DataFrame(columns=["ours", "authors' code"]))["their_acc_instaaug"]
    'n/a'
    """
    def text(key, spec):
        return results.text(float(table.loc[key, "authors' code"]) if key in table.index else None, spec)

    out = {f"their_acc_{m}": text(f"accuracy: {m} (%)", ".1f") for m in CROP_METHODS}
    out.update(their_in_box=text("InstaAug crops: centre_in_box", ".2f"),
               their_side_rho=text("InstaAug crops: side_rho", "+.2f"),
               crop_order_text="The orders were not compared." if order is None else results.phrase(
                   order, reproduced="Decided each on its own seeds, their code and ours order the three methods "
                   "alike.", not_reproduced="Decided each on its own seeds, their code and ours order the three "
                   "methods differently.", partly="Decided each on its own seeds, their code and ours agree on some "
                   "of the three orders and differ on others.", inconclusive="Whether their code orders the three "
                   "methods as ours cannot be decided at this budget: an order needs three seeds on each side, and "
                   f"their code was run from one ({order.text()}).", not_measurable="Their code was not run at this "
                   "chapter's setting, so the orders are not compared."))
    return out


# ----------------------------------------------------------------------------- their crop run, for D2's page
def _number(text) -> float:
    """A number from their logs' text (``"0.7473"``, ``"[5.28]"``, ``"20.80%"``); NaN when missing."""
    if text is None:
        return math.nan
    m = re.search(r"-?\d+(\.\d+)?(e-?\d+)?", str(text))
    return float(m.group(0)) if m else math.nan


def crop_curves(path: str | Path = PATH) -> pd.DataFrame:
    """Their crop training at D2's cpu setting, epoch by epoch (their logs, stored in ``crop_cpu``): ``method``
    (our ids: none, random_crop, instaaug), ``epoch`` counted from the start of training (InstaAug's run starts
    from their no-augmentation network after its ``pretrain_epochs``, so its first epoch is the one after those),
    ``test_acc`` (%), ``train_ce`` (the classifier's training loss on the views it was trained on), and for
    InstaAug the module's mean ``entropy`` (nats, on their test pass) and the entropy weight ``lam``. Empty when
    their run is missing.

    Example
    -------
    >>> c = crop_curves()
    >>> c.groupby("method").epoch.max().to_dict()
    {'instaaug': 10, 'none': 10, 'random_crop': 10}
    """
    their = crop_run(path)
    columns = ["method", "epoch", "test_acc", "train_ce", "entropy", "lam"]
    if their is None:
        return pd.DataFrame(columns=columns)
    ours = {v: k for k, v in CROP_METHODS.items()}
    rows = []
    for r in their["runs"]:
        start = their["settings"]["pretrain_epochs"] if r["method"] == "InstaAug" else 0
        rows += [dict(method=ours[r["method"]], epoch=start + e["epoch"], test_acc=_percent(e["test_accuracy"]),
                      train_ce=_number(e["train_ce"]), entropy=_number(e["entropy"]),
                      lam=_number(e["entropy_weight"])) for e in r["per_epoch"]]
    return pd.DataFrame(rows, columns=columns)


def crop_gap_facts(path: str | Path = PATH, n_classes: int = 10) -> dict:
    """The numbers D2's page quotes on why their InstaAug ends far below ours, all from their stored run (NaN when
    missing): the accuracy of the network it starts from (``their_start_acc``, %: their no-augmentation run after
    its ``pretrain_epochs``), its best test accuracy over its epochs (``their_best_acc``, %), each method's last
    training loss (``their_ce_<method>``) against chance, the module's entropy at the first and last check
    (``their_h_first``, ``their_h_last``) against the most 321 crops allow (``their_h_max``) and at the start
    (``their_h_start``, its heads giving 0: ``their_whole_start`` of the mass on the whole image), the weight at
    the first and last check (``their_lam_first``, ``their_lam_last``), the epochs it trained (``their_epochs``), the
    trained module's expected crop side (``their_side``) against the side of their 16 x 16 layer's crops
    (``their_small_side``; ``their_small_count`` of them), the share of its crops that contain the object's centre
    (``their_covers``, %) and their sampler's over-sampling of the likeliest crop at the start (``their_top_p``,
    ``their_top_freq``); their setting's ``their_pretrain`` epochs, ``their_test_copies``, ``their_num_crops``,
    their band (``their_band_lo``, ``their_band_hi``) and the factor ``their_alpha`` of a band check; and the
    range of their no-augmentation run's test accuracy over its last five epochs
    (``their_none_lo``, ``their_none_hi``, %: how much one epoch moves it); ``chance``, the cross-entropy of a
    uniform guess over ``n_classes`` (the scenes': 10).

    Example
    -------
    >>> f = crop_gap_facts()
    >>> f["their_h_last"] > f["their_h_first"] > 3.5 > f["their_h_start"], f["their_small_count"]
    (True, 256)
    """
    nan = math.nan
    rec, their, curves = stored(path), crop_run(path), crop_curves(path)
    names = ("pretrain", "test_copies", "num_crops", "band_lo", "band_hi", "alpha", "start_acc", "best_acc",
             "h_first", "h_last", "lam_first", "lam_last", "epochs", "side", "covers",
             "h_max", "h_start", "whole_start", "small_side", "small_count", "top_p", "top_freq", "none_lo", "none_hi",
             *(f"ce_{m}" for m in CROP_METHODS))
    out = dict(chance=math.log(n_classes), **{f"their_{k}": nan for k in names})
    if their is None or not len(curves):
        return out
    ia = curves[curves.method == "instaaug"].sort_values("epoch")
    setting, scheduler = their["settings"], rec.get("scheduler", {}).get("settings", {})
    out.update(their_pretrain=setting["pretrain_epochs"], their_test_copies=setting["test_copies"],
               their_band_lo=scheduler.get("band", [nan])[0], their_band_hi=scheduler.get("band", [nan, nan])[1],
               their_alpha=scheduler.get("alpha", nan))
    pre = curves[(curves.method == "none") & (curves.epoch == their["settings"]["pretrain_epochs"])]
    out.update(their_start_acc=float(pre.test_acc.iloc[0]) if len(pre) else nan,
               their_best_acc=float(ia.test_acc.max()), their_h_first=float(ia.entropy.iloc[0]),
               their_h_last=float(ia.entropy.iloc[-1]),
               their_lam_first=float(ia.lam.iloc[0]), their_lam_last=float(ia.lam.iloc[-1]), their_epochs=len(ia),
               **{f"their_ce_{m}": float(rows.sort_values("epoch").train_ce.iloc[-1])
                  for m, rows in curves.groupby("method")})
    late = curves[curves.method == "none"].sort_values("epoch").test_acc.iloc[-5:]
    out.update(their_none_lo=float(late.min()), their_none_hi=float(late.max()))
    measures = their.get("crop_measures") or {}
    out.update(their_side=measures.get("side", nan), their_covers=100 * measures.get("covers_object", nan))
    crops = rec.get("crops", {})
    if crops:
        small, initial = crops["layers"][0], crops["initial"]["bias_only"]
        out.update(their_num_crops=crops["num_crops"], their_h_max=math.log(crops["num_crops"]),
                   their_h_start=initial["entropy"],
                   their_whole_start=100 * initial["mass_per_layer"][-1], their_small_side=small["side"],
                   their_small_count=small["count"])
    top = (rec.get("sampler", {}).get("crops_321") or {}).get("most_likely")
    if top:
        out.update(their_top_p=top["p"], their_top_freq=top["freq_theirs"])
    return out


def plot_crop_run(curves: pd.DataFrame, path: str | Path = PATH):
    """Their crop training (:func:`crop_curves`): left, each method's test accuracy per epoch; right, their
    InstaAug module's mean entropy per epoch (and at its start, its heads giving 0) against their config's band
    (shaded) and the most their 321 crops allow (dotted), with the entropy weight on a second axis. Nothing drawn
    without their run."""
    import matplotlib.pyplot as plt

    rec = stored(path)
    if not len(curves) or rec is None:
        return None
    band = rec["scheduler"]["settings"]["band"]
    max_entropy = math.log(rec["crops"]["num_crops"]) if "crops" in rec else None
    fig, ax = plt.subplots(1, 2, figsize=(8.5, 3.2))
    names = {"none": "no augmentation", "random_crop": "random crop", "instaaug": "InstaAug"}
    for (m, rows), style in zip(curves.groupby("method", sort=False), ("o-", "s--", "^-")):
        ax[0].plot(rows.epoch, rows.test_acc, style, label=names.get(m, m))
    ax[0].set_xlabel("epoch")
    ax[0].set_ylabel("test accuracy (%)")
    ax[0].legend(fontsize=9)
    ia = curves[curves.method == "instaaug"]
    ax[1].axhspan(*band, color="tab:green", alpha=0.2, label="band")
    start = rec.get("crops", {}).get("initial", {}).get("bias_only", {}).get("entropy")
    if start is not None:
        ax[1].plot([rec["crop_cpu"]["settings"]["pretrain_epochs"]], [start], "o", mfc="none", color="tab:green",
                   label="at the start")
    if max_entropy is not None:
        ax[1].axhline(max_entropy, ls=":", color="0.3", label="most possible")
    ax[1].plot(ia.epoch, ia.entropy, "^-", color="tab:green", label="entropy")
    ax[1].set_ylim(0, None)
    ax[1].set_xlabel("epoch")
    ax[1].set_ylabel("InstaAug's entropy (nats)")
    lam = ax[1].twinx()
    lam.plot(ia.epoch, ia.lam, "k.--", label="λ (right)")
    lam.set_ylim(0, None)
    lam.set_ylabel("λ")
    handles = ax[1].get_legend_handles_labels()[0] + lam.get_legend_handles_labels()[0]
    ax[1].legend(handles, [h.get_label() for h in handles], fontsize=9, loc="lower right")
    fig.tight_layout()
    return ax


# ----------------------------------------------------------------------------- D3: their colour module
# The settings of chapter D3 that their colour_cpu runs were made at: a chapter at other values has no run of theirs.
COLOUR_SETTING = ("n_train", "n_test", "size", "epochs", "batch_size", "trunk", "train_condition")


def colour_runs(path: str | Path = PATH, variant: str = "hue_enabled") -> tuple[dict, pd.DataFrame] | None:
    """Their colour module trained their way at chapter D3's cpu setting (``colour_cpu`` in their file,
    ``benchmarks/authors/instaaug_runs.py``): its settings (with ``date`` and ``commit``) and one row per run of
    ``variant`` (``"hue_enabled"``: hue given D3's maximum, 0.5 turn; ``"released"``: their maxima, hue 0):
    ``module_lr``, ``seed``, ``hue_width`` (turns: the mean upper minus the mean lower hue bound over D3's general
    test images), ``hue_collapsed`` (one hue bound at 0 on most test images, the other not), ``acc`` and ``acc_tta``
    (fractions). None when their file has no such record.

    Example
    -------
    >>> settings, runs = colour_runs()
    >>> settings["chapter"], sorted(runs.module_lr.unique().tolist()), runs.seed.nunique()
    ('d3_colour_jitter cpu', [1e-05, 0.005, 0.2], 5)
    >>> list(runs.columns)
    ['module_lr', 'seed', 'hue_width', 'hue_collapsed', 'acc', 'acc_tta']
    """
    check_choice(variant, ("hue_enabled", "released"), "variant")
    rec = stored(path)
    if rec is None or "colour_cpu" not in rec:
        return None
    r = rec["colour_cpu"]
    rows = [dict(module_lr=run["module_lr"], seed=run["seed"],
                 hue_width=run["bounds"]["hue_high"]["mean"] - run["bounds"]["hue_low"]["mean"],
                 hue_collapsed=bool(run["hue_collapsed_one_sided"]), acc=run["test_accuracy"],
                 acc_tta=run["test_accuracy_tta"]) for run in r["runs"] if run["variant"] == variant]
    return dict(r["settings"], date=r["date"], commit=rec.get("commit")), pd.DataFrame(rows)


def _same_colour_setting(S, their: dict) -> bool:
    """Whether chapter D3's settings ``S`` are the ones their colour runs were made at (:data:`COLOUR_SETTING`)."""
    return all(getattr(S, k) == (tuple(their[k]) if isinstance(their[k], list) else their[k]) for k in COLOUR_SETTING
               if k in their)


def report_colour(run, S, ranges: pd.DataFrame, path: str | Path = PATH) -> dict:
    """Record ``authors/colour_hue_width_same`` on ``run``: per seed, our InstaAug's mean hue-range width over the
    general test images (``ranges``: :attr:`~invlib.papers.d.colour.ColourRun.ranges`, one row per test image,
    model and seed) minus their code's at the same module rate and seed (:func:`colour_runs`, hue given D3's
    maximum), decided as the declared equivalence. Not measurable where their code has no run at ``S``'s setting
    and per-input rate. Returns what the chapter's prose quotes: ``authors_colour_text`` (Markdown) and the widths.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.papers.d.colour import settings
    >>> ranges = pd.DataFrame(dict(model="InstaAug", seed=[0, 0, 1, 1, 2, 2], hue_width=0.2))
    >>> r = Run("demo", "smoke")
    >>> facts = report_colour(r, settings("cpu"), ranges)
    >>> r.claims["authors/colour_hue_width_same"]["verdict"], round(facts["authors_hue_width"], 3)
    ('not reproduced', 0.014)
    """
    from .colour import INSTAAUG

    cid, rate = "authors/colour_hue_width_same", S.module_lr if S.instaaug_module_lr is None else S.instaaug_module_lr
    found = colour_runs(path)
    theirs = pd.Series(dtype=float)
    if found is not None and _same_colour_setting(S, found[0]):
        at = found[1][np.isclose(found[1].module_lr, rate)].set_index("seed")
        theirs = at.hue_width
    ours = ranges[ranges["model"] == INSTAAUG].groupby("seed").hue_width.mean()
    seeds = ours.index.intersection(theirs.index)
    nan = dict(authors_hue_width=math.nan, ours_hue_width=math.nan, authors_collapsed=math.nan)
    if not len(seeds):
        run.claim(PROTOCOL[cid], ours="not compared", paper="their code not run at this setting and rate",
                  effects=results.not_measurable(f"the authors' code has no colour run at this chapter's setting and "
                                                 f"per-input module rate ({rate:g})"))
        return dict(nan, authors_colour_text=f"Their colour code was not run at this setting and rate ({rate:g}).")
    their, collapsed = found[0], at.hue_collapsed.loc[seeds]
    diffs = (ours.loc[seeds] - theirs.loc[seeds]).to_numpy(float)
    facts = dict(authors_hue_width=float(theirs.loc[seeds].mean()), ours_hue_width=float(ours.loc[seeds].mean()),
                 authors_collapsed=int(collapsed.sum()))
    run.claim(PROTOCOL[cid], effects=list(diffs),
              ours=f"mean hue width {facts['ours_hue_width']:.3f} turn over {len(seeds)} seeds (theirs "
                   f"{facts['authors_hue_width']:.3f}); difference {diffs.mean():+.3f}",
              paper=f"authors' code (commit {str(their.get('commit'))[:7]}, run here {their['date']}), module rate "
                    f"{rate:g}, hue maximum {their['hue_max']:g} turn: mean hue width "
                    f"{facts['authors_hue_width']:.3f} turn, hue collapsed one-sided on {facts['authors_collapsed']} "
                    f"of {len(seeds)} seeds")
    ev = run.evidence[cid]
    facts["authors_colour_text"] = results.phrase(
        ev, reproduced=f"Their code learns hue ranges as wide as ours ({ev.text()}).",
        not_reproduced=f"Their code does not learn the hue ranges ours learns ({ev.text()}): their mean width is "
                       f"{facts['authors_hue_width']:.3f} turn against our {facts['ours_hue_width']:.3f}, and their "
                       f"hue range collapsed to one side on {facts['authors_collapsed']} of {len(seeds)} seeds.")
    return facts
