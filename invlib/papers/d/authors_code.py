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

And two trained results, their training script at a chapter's cpu setting:

- chapter D1 (:func:`rotation_table`, :func:`record_rotation`): their rotation training (``instaaug_runs.py
  rotation_cpu``), its learned bounds measured with D1's own code, and whether it reaches D1's verdicts;
- chapter D2 (:func:`crop_comparison`, :func:`record_crop`): their crop training on our scenes written as
  Tiny-ImageNet folders (``crop_cpu``), none, random crop and InstaAug, its accuracies and its module's crops
  (measured with D2's measures), and whether it orders the three methods as ours.

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

import numpy as np
import pandas as pd
import torch

from ... import authors, results
from ...learned import instaaug
from ...utils import check_choice
from .cropping import Cropping
from .rotations import BOUNDARY, Rotations, slopes
from .rotations_reports import fig5_verdicts

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


# ----------------------------------------------------------------------------- their rotation training (D1)
SCORE = {"reproduced": 1.0, "partly": 0.5, "not reproduced": 0.0}


def _percent(text) -> float:
    """Their logs' accuracy text (``"51.40%"``) as a number of percent; NaN when missing."""
    return float(str(text).rstrip("%")) if text is not None else math.nan


def rotation_runs(path: str | Path = PATH) -> tuple[dict, dict[tuple[float, float], pd.DataFrame],
                                                    dict[tuple[float, float], float]] | None:
    """Their rotation training at chapter D1's cpu setting (``rotation_cpu`` in their file): its settings, and per
    ``(module learning rate, entropy weight)`` the per-test-image bounds in the format of
    :func:`invlib.papers.d.rotations.bounds` (``phi, upper, lower, upper_true, lower_true``; radians, D1's angle
    convention) and their test accuracy (a fraction). None when their file has no such run.

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
    """D1's measures (:func:`~invlib.papers.d.rotations.slopes`) and verdicts on our InstaAug's bounds ``ours`` and
    on every run of their code: one row each (``who``, ``module_lr``, slopes, share near the boundary, mean gap,
    width, test accuracy, the two Fig. 5 verdicts). Only ours when their run is missing.

    Example
    -------
    >>> phi = pd.Series([-0.6, 0.0, 0.6])
    >>> ours = pd.DataFrame(dict(phi=phi, upper=BOUNDARY - phi, lower=BOUNDARY + phi, upper_true=BOUNDARY - phi,
    ...                          lower_true=BOUNDARY + phi))
    >>> table = rotation_table(ours, 1.0)
    >>> table.loc[0, "who"], table.loc[0, "bounds follow the angle"], len(table) > 1
    ('ours', 'reproduced', True)
    """
    found = rotation_runs(path)
    entries = [("ours", (math.nan, math.nan), ours, ours_acc)]
    if found is not None:
        entries += [("authors' code", k, frame, found[2][k]) for k, frame in sorted(found[1].items(), reverse=True)]
    rows = []
    for who, (lr, weight), frame, acc in entries:
        s = slopes(frame)
        follow, reach = fig5_verdicts(s)
        rows.append(dict(who=who, module_lr=lr, entropy_weight=weight, **{k: round(v, 3) for k, v in s.items()},
                         test_acc=round(acc, 3),
                         **{"bounds follow the angle": follow, "bounds reach the boundary": reach}))
    return pd.DataFrame(rows)


def record_rotation(run, S: Rotations, table: pd.DataFrame, path: str | Path = PATH) -> str:
    """Record ``authors/rotation_same`` on ``run``: at ``S`` (when it is the setting of their run,
    :func:`same_setting`), their code's learned bounds get the same two Fig. 5 verdicts as ours: the verdicts of
    ``run``'s claims ``fig5/bounds_follow_angle`` and ``fig5/reaches_boundary`` where it has them (over D1's
    seeds), else those of ``table``'s row ``"ours"``. ``table`` is :func:`rotation_table`'s. Returns the verdict.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.papers.d.rotations import settings
    >>> phi = pd.Series([-0.6, 0.0, 0.6])
    >>> ours = pd.DataFrame(dict(phi=phi, upper=BOUNDARY - phi, lower=BOUNDARY + phi, upper_true=BOUNDARY - phi,
    ...                          lower_true=BOUNDARY + phi))
    >>> record_rotation(Run("demo", "smoke"), settings("smoke"), rotation_table(ours, 1.0))  # not their setting
    'not measurable at this profile'
    """
    found = rotation_runs(path)
    their = None if found is None else found[0]
    rows = []
    if their is not None and same_setting(S, their):
        mine, theirs = table[table.who == "ours"].iloc[0], _their_row(table, S.module_lr, their)
        for key, cid in (("bounds follow the angle", "fig5/bounds_follow_angle"),
                         ("bounds reach the boundary", "fig5/reaches_boundary")):
            o = SCORE[run.claims[cid]["verdict"] if cid in run.claims else mine[key]]
            t = SCORE[theirs[key]]
            rows.append((f"{key} (verdict: 1 reproduced, 0.5 partly, 0 not)", o, t, 0.0))
    rec = None if not rows else dict(commit=their["commit"], date=their["date"])
    return authors.record_same_values(
        run, "authors/rotation_same", "The authors' code, trained at this chapter's setting (their data, optimizer "
        "and classifier at our widths, our steps and module learning rate), learns bounds that reach the same Fig. 5 "
        "verdicts as ours.", _rows("rotation", rows), rec, "both verdicts equal")


def _their_row(table: pd.DataFrame, module_lr: float, their: dict | None = None):
    """Their run at ``module_lr`` with their config's entropy weight (None when there is none)."""
    weight = (their or {}).get("their_entropy_weight", 0.1)
    rows = table[(table.who != "ours") & np.isclose(table.module_lr.astype(float), module_lr)
                 & np.isclose(table.entropy_weight.astype(float), weight)]
    return None if rows.empty else rows.iloc[0]


def rotation_facts(table: pd.DataFrame, module_lr: float) -> dict:
    """The numbers D1's prose quotes about their run at ``module_lr`` (text; ``"n/a"`` when there is none):
    ``their_width`` (mean a + b, radians), ``their_slopes``, ``their_acc`` and ``their_reading``, one sentence
    chosen by the numbers.

    Example
    -------
    >>> t = pd.DataFrame([dict(who="authors' code", module_lr=0.01, entropy_weight=0.1, upper_slope=0.0,
    ...                        lower_slope=0.0, width=6.28, test_acc=0.51,
    ...                        **{"bounds follow the angle": "not reproduced"})])
    >>> rotation_facts(t, 0.01)["their_reading"][:40]
    'their ranges cover the whole turn for ev'
    """
    r = _their_row(table, module_lr)
    if r is None:
        return dict(their_width="n/a", their_slopes="n/a", their_acc="n/a",
                    their_reading="their code has no run at this learning rate in `authors_instaaug.json`.")
    if r.width >= 0.9 * 2 * math.pi:
        reading = ("their ranges cover the whole turn for every image, so an upright sprite and its upside-down "
                   "class become the same to the classifier, and nothing in their objective pulls the bounds back "
                   "(the band on a and b is never left).")
    elif r["bounds follow the angle"] == "reproduced":
        reading = "their ranges follow each image's angle, as ours do."
    else:
        reading = "their ranges do not follow each image's angle."
    return dict(their_width=f"{r.width:.2f}", their_slopes=f"{r.upper_slope:+.2f} and {r.lower_slope:+.2f}",
                their_acc=f"{100 * r.test_acc:.1f} %", their_reading=reading)


# ----------------------------------------------------------------------------- their crop training on scenes (D2)
CROP_METHODS = {"none": "none", "random_crop": "random crop", "instaaug": "InstaAug"}  # ours -> their run's name
CROP_SETTING = ("n_train", "n_test", "epochs", "pretrain_epochs", "batch_size", "lr", "weight_decay", "module_lr",
                "warmup_epochs")
CROP_MEASURES = ("side", "centre_in_box", "kl_to_mean", "entropy", "side_rho")


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
    """Whether ``S`` has the numbers of their run's setting (:data:`CROP_SETTING`); size, classifier and the
    band's check interval are theirs there (64 px and 321 crops, their ResNet-18 at our widths, once per epoch).

    Example
    -------
    >>> from invlib.papers.d.cropping import settings
    >>> crop_same_setting(settings("cpu"), crop_run()["settings"]), crop_same_setting(settings("smoke"),
    ...                                                                                crop_run()["settings"])
    (True, False)
    """
    return all(math.isclose(float(getattr(S, k)), float(their[k])) for k in CROP_SETTING)


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


def record_crop(run, S: Cropping, table: pd.DataFrame, path: str | Path = PATH) -> str:
    """Record ``authors/crop_order_same`` on ``run``: at ``S`` (their run's setting, :func:`crop_same_setting`),
    their code orders none, random crop and InstaAug by test accuracy as ours does (each of the three pairwise
    orders equal). ``table`` is :func:`crop_comparison`'s. Returns the verdict.

    Example
    -------
    >>> from invlib.results import Run
    >>> from invlib.papers.d.cropping import settings
    >>> t = crop_comparison(dict(acc_none=50.0, acc_random_crop=55.0, acc_instaaug=56.0), pd.DataFrame())
    >>> record_crop(Run("demo", "smoke"), settings("smoke"), t)
    'not measurable at this profile'
    """
    their = crop_run(path)
    rows = []
    if their is not None and crop_same_setting(S, their["settings"]) and len(table):
        acc = {m: table.loc[f"accuracy: {m} (%)"] for m in CROP_METHODS}
        for hi, lo in (("instaaug", "random_crop"), ("random_crop", "none"), ("instaaug", "none")):
            o, t = (float(acc[hi][c] > acc[lo][c]) for c in ("ours", "authors' code"))
            rows.append((f"{hi} > {lo} (1 yes, 0 no)", o, t, 0.0))
    rec = None if not rows else dict(commit=their["commit"], date=their["date"])
    return authors.record_same_values(
        run, "authors/crop_order_same", "The authors' code, trained on the same scenes at this chapter's setting "
        "(their ResNet-18 at our widths, 64 px, their band check and test-time crops), orders no augmentation, "
        "random crop and InstaAug by test accuracy as ours does.", _rows("crop order", rows), rec,
        "each of the three pairwise orders equal (one seed each)")


def crop_facts(table: pd.DataFrame) -> dict:
    """Their run's numbers for D2's prose, as text (``"n/a"`` when missing): ``their_acc_<method>`` and
    ``their_in_box``, ``their_side_rho``.

    Example
    -------
    >>> crop_facts(pd.DataFrame(columns=["ours", "authors' code"]))["their_acc_instaaug"]
    'n/a'
    """
    def text(key, spec):
        return results.text(float(table.loc[key, "authors' code"]) if key in table.index else None, spec)

    out = {f"their_acc_{m}": text(f"accuracy: {m} (%)", ".1f") for m in CROP_METHODS}
    out.update(their_in_box=text("InstaAug crops: centre_in_box", ".2f"),
               their_side_rho=text("InstaAug crops: side_rho", "+.2f"))
    return out
