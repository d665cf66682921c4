"""Paper D beside the authors' code (github.com/NingMiao/InstaAug): our invariance module on the inputs theirs was
run on, number by number.

``benchmarks/authors/instaaug_runs.py all --repo <their checkout>`` runs their module on fixed inputs and writes
``authors_instaaug.json`` (kept in git, with their commit and the date of the run). This module computes the same
numbers with :mod:`invlib.learned.instaaug` and compares them (:func:`compare`); :func:`record` adds one
"same as the authors' code" claim per part to a chapter's run. What is compared:

- ``scheduler``: the entropy-band rule on their scripted entropy sequences: lambda after every check.
- ``crops``: the candidate crops of their Tiny-ImageNet config (64 px): count, side per layer, the set of
  centres (theirs mirrored across the anti-diagonal and pulled in by 63/64 by ``align_corners=True``; as a set the
  same up to that pull), and each layer's initial mass and the initial entropy when the heads give 0.
- ``top_n``: the ``n`` most likely crops of their fixed input's log-probabilities (their test-time choice).
- ``sampler``: our reading of their sampler (``method="exponential"``) against their measured frequencies, and our
  exact sampler against the probabilities; theirs differs from the probabilities by design of the bug, so this
  part records that we sample ``p`` where they do not.

Example
-------
>>> frame = compare("scheduler")
>>> bool(frame["same"].all()), len(frame) > 100
(True, True)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import torch

from ... import authors
from ...learned import instaaug
from ...utils import check_choice

PATH = Path(__file__).with_name("authors_instaaug.json")
PARTS = ("scheduler", "crops", "top_n", "sampler")
CENTRE_PULL = 1 / 128  # align_corners=True moves a centre c to 0.5 + (c - 0.5) * 63/64: at most 1/128 at 64 px


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
        items.append((f"layer {entry['layer']}: centres, largest distance to the nearest",
                      float(max(d.min(1).values.max(), d.min(0).values.max())), 0.0, CENTRE_PULL + 1e-4))
    with torch.no_grad():
        logp = lrp(torch.zeros(1, 3, lrp.size, lrp.size))
    p = logp.exp()[0]
    init = c["initial"]["bias_only"]
    for i, mass in enumerate(init["mass_per_layer"]):
        items.append((f"initial mass, layer {c['layers'][i]['layer']}", float(p[lrp.layer == i].sum()), mass, 1e-4))
    items.append(("initial entropy", float(instaaug.entropy(logp)[0]), init["entropy"], 1e-4))
    return _rows("crops", items)


def _top_n(rec: dict) -> pd.DataFrame:
    logp = torch.tensor(rec["sampler"]["fixed_input_logprobs"])
    items = []
    for n, entry in rec["sampler"]["top_n"].items():
        if not n.isdigit():
            continue
        ours = logp.topk(int(n)).indices.tolist()
        items.append((f"top {n}: indices equal", float(ours == entry["indices"]), 1.0, 0))
    return _rows("top_n", items)


def _sampler(rec: dict, draws: int = 200_000, seed: int = 0) -> pd.DataFrame:
    five = rec["sampler"]["five"]
    p = torch.tensor(five["p"])
    g = torch.Generator().manual_seed(seed)
    items = []
    for method, key in (("exponential", "freq_theirs"), ("gumbel", None)):
        idx = instaaug.sample_categorical(p.log()[None], draws, g, method)
        freq = (torch.bincount(idx.flatten(), minlength=len(p)) / draws).tolist()
        target = five[key] if key else five["p"]
        sd = [math.sqrt(max(t * (1 - t), 1e-12) / draws) for t in target]
        label = "their sampler as we read it vs theirs" if key else "our sampler vs p"
        items += [(f"{label}: item {k}", f, t, 5 * s + 5 * math.sqrt(max(t * (1 - t), 1e-12) / five["draws"]))
                  for k, (f, t, s) in enumerate(zip(freq, target, sd))]
    return _rows("sampler", items)


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
    if rec is None or ("sampler" if part in ("top_n", "sampler") else part) not in rec:
        return _rows(part, [])
    return {"scheduler": _scheduler, "crops": _crops, "top_n": _top_n, "sampler": _sampler}[part](rec)


CLAIMS = {
    "scheduler": "Our entropy-band rule gives the authors' lambda after every check of their scripted entropies.",
    "crops": "Our location-related parameterisation has the authors' candidate crops (as a set) and their initial "
             "masses per layer.",
    "top_n": "Our top-n test-time crops are the authors' on their module's output.",
    "sampler": "Our reading of the authors' sampler (argmax of log p plus Exp(1) noise) gives their measured "
               "frequencies, and our own sampler gives p.",
}


def record(run, parts=PARTS, path: str | Path = PATH) -> pd.DataFrame:
    """Record one "same as the authors' code" claim per part (``authors/<part>_same``) on ``run``; return every
    compared number.

    Example
    -------
    >>> from invlib.results import Run
    >>> run = Run("smoke", name="demo")
    >>> frame = record(run, ("scheduler", "top_n"))
    >>> run.claims["authors/scheduler_same"]["verdict"], run.claims["authors/top_n_same"]["verdict"]
    ('reproduced', 'reproduced')
    """
    rec = stored(path)
    frames = []
    for part in parts:
        frame = compare(part, path)
        authors.record_same_values(run, f"authors/{part}_same", CLAIMS[part], frame, rec,
                                   "every number within its tolerance (column 'tolerance')")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else _rows("", [])


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per part: numbers compared, how many agree, the largest difference."""
    return frame.groupby("part", sort=False).agg(compared=("same", "size"), same=("same", "sum"),
                                                 largest_difference=("difference", "max")).reset_index()
