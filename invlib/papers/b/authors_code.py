"""Paper B's authors' code beside ours: the fixed inputs, our numbers on them, and the verdict "same as theirs".

Bouchacourt et al. published their code (github.com/facebookresearch/grounding-inductive-biases). The script
``benchmarks/authors/grounding_runs.py`` feeds *their* functions the inputs built here, on this machine, and
writes their numbers (with their commit, the date and the versions) into ``authors_grounding.json`` beside
this module. Here we compute *our* numbers on the same inputs, live (:func:`ours`), and put the two side by side
(:func:`compare`, :func:`report`). Nothing of theirs is imported here.

Experiments (:data:`EXPERIMENTS`), each a dict of named numbers:

- ``sweep_transforms`` (chapter B3): every grid of :data:`GRID_NAMES` at levels 0-9 on the probe images
  (:func:`probe_images`); key ``"<grid>/<level>"`` = mean ``|T(x) - x|`` over images, channels and pixels.
- ``relative_invariance`` (B3): the relative invariance and the equivariance alignment of the untrained model's
  penultimate embedding (:func:`embedding`) to ``translate`` at each level; keys ``"invariance/<level>/<median|
  q25|q75>"`` (the pairing :func:`invariance_perm`) and ``"alignment/<level>"`` (the baseline drawn from
  :func:`alignment_generator`).
- ``aa_ops`` (B4): every entry of the similarity-search pool with the sign fixed to +1, in the authors' style;
  key = the entry's name, value = mean ``|T(x) - x|``.
- ``boosts`` (B4): the similarity search of :func:`search_images` (4 classes x 64 images, 32 pairs a class);
  keys ``"mean/<class>/<entry>"`` (mean percent change), ``"share/<class>/<entry>"`` (share of pairs boosted),
  ``"weighted/<class>/<entry>"`` (weighted boost, percent).
- ``wordnet`` (B5): per pair of the search's classes, the WordNet similarities and the similarity of the two
  classes' transformation rankings; keys ``"<wup|lch|path|spearman|iou_top5|iou_top25>/<a>|<b>"``.
- ``crops`` (B1, B2): :data:`CROP_DRAWS` boxes of every crop method on the stored 64 px image; keys
  ``"<method>/<area|log_aspect|cx|cy>/<mean|std>"`` (area fraction, log aspect ratio, centre offset from the
  image centre as a fraction of the side).

Example
-------
>>> EXPERIMENTS
('sweep_transforms', 'relative_invariance', 'aa_ops', 'boosts', 'wordnet', 'crops')
>>> frame = compare("sweep_transforms", path="/nonexistent.json")  # their code not run: an empty table
>>> list(frame.columns), len(frame)
(['key', 'ours', 'theirs', 'difference', 'tolerance', 'same'], 0)
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ... import authors, crops, data, metrics, models, wordnet
from ...utils import check_choice
from . import similarity
from .protocol import AUTHORS_TOLERANCE as TOLERANCE  # per experiment: abs + se x standard errors, and why
from .protocol import PROTOCOL

PATH = Path(__file__).with_name("authors_grounding.json")
REPOSITORY = "github.com/facebookresearch/grounding-inductive-biases"
EXPERIMENTS = ("sweep_transforms", "relative_invariance", "aa_ops", "boosts", "wordnet", "crops")
COLUMNS = ["key", "ours", "theirs", "difference", "tolerance", "same"]

# our grid -> their section-3 transformation (equivariance_measure/transformations.py, TRANSFORMATION_NAMES)
GRID_NAMES = {"translate": "translateX", "translate_y": "translateY", "rotate": "rotate", "shear": "shearX",
              "shear_y": "shearY", "zoom_in": "scale_zoom_in", "zoom_out": "scale_zoom_out",
              "posterize": "posterize", "contrast_down": "decrease_contrast", "contrast_up": "increase_contrast",
              "solarize": "solarize", "brightness_down": "decrease_brightness",
              "brightness_up": "increase_brightness"}

PROBE = dict(name="scenes", split="test", n=16, seed=0, size=56)  # the probe images
ARCH, MODEL_SEED = "small_resnet18_s4", 0  # the untrained model, initialised under torch.manual_seed(0)
INVARIANCE_GRID = "translate"
PERM_SEED, ALIGN_SEED = 100, 200  # + level: the invariance pairing and the alignment baseline of each level
# the similarity search: four scenes classes whose WordNet synsets are sense 1 (their WordNet code builds
# "<name>.n.01"), 64 training images each in load order, 32 same-class pairs a class
SEARCH_LOAD = dict(name="scenes", split="train", n=1000, seed=0, size=56)
SEARCH_CLASSES = ("Trouser", "Pullover", "Sandal", "Sneaker")
PER_CLASS, SEARCH_SEED, TOP_K = 64, 0, 5
# the crops: B1's setting, images stored at 64 px ("resized to 256") and cropped to 56 ("224")
CROP_SIDE, CROP_SIZE, CROP_DRAWS, CROP_SEED, TRANSLATE = 64, 56, 100_000, 0, 0.3
CROP_STATS = ("area", "log_aspect", "cx", "cy")


def tolerance(experiment: str, key: str) -> float:
    """The fixed part of a key's tolerance (:data:`TOLERANCE`, ``abs``; per key prefix where it is a dict).

    Example
    -------
    >>> tolerance("boosts", "share/Trouser/rotate/3"), tolerance("aa_ops", "rotate/3") == 1 / 255
    (0.0625, True)
    """
    tol = TOLERANCE[experiment]["abs"]
    return float(tol[key.split("/")[0]] if isinstance(tol, dict) else tol)


# ------------------------------------------------------------------------------ the fixed inputs
@functools.lru_cache(maxsize=1)
def probe_images() -> torch.Tensor:
    """The probe images ``(16, 3, 56, 56)`` float32 in [0, 1] (multiples of 1/255): :data:`PROBE`, 16 scenes
    test images.

    Example
    -------
    >>> x = probe_images()
    >>> x.shape, bool((x * 255 == (x * 255).round()).all())
    (torch.Size([16, 3, 56, 56]), True)
    """
    return data.load(**PROBE).float()


@functools.lru_cache(maxsize=1)
def untrained_model() -> torch.nn.Module:
    """:data:`ARCH`, untrained, its weights drawn under ``torch.manual_seed(MODEL_SEED)`` (the caller's global
    generator is left as it was), in eval mode.

    Example
    -------
    >>> untrained_model().training
    False
    """
    model = models.create(ARCH, seed=MODEL_SEED)
    return model.eval()


def embedding(layer: str = "penultimate"):
    """The untrained model's embedding ``(B, 3, H, W)`` in [0, 1] -> ``(B, 128)`` (the penultimate layer,
    :func:`invlib.papers.b.similarity.embedding`), without gradients.

    Example
    -------
    >>> embedding()(probe_images()[:2]).shape
    torch.Size([2, 128])
    """
    f = similarity.embedding(untrained_model(), layer)

    def embed(x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return f(x).float()

    return embed


@functools.lru_cache(maxsize=1)
def translated_embeddings() -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """``(z, {level: z_t})``: the embeddings ``(16, 128)`` of the probe images and of their versions under grid
    :data:`INVARIANCE_GRID` at each level 0-9 (our transform; both sides measure these same embeddings).

    Example
    -------
    >>> z, zt = translated_embeddings()
    >>> z.shape, sorted(zt)[:3], torch.equal(zt[0], z)
    (torch.Size([16, 128]), [0, 1, 2], True)
    """
    x, f = probe_images(), embedding()
    z = f(x)
    return z, {lv: f(similarity.transform_level(INVARIANCE_GRID, x, lv)) if lv else z.clone() for lv in range(10)}


def invariance_perm(level: int, n: int = PROBE["n"]) -> torch.Tensor:
    """The pairing ``(n,)`` of the relative invariance at ``level``: ``torch.randperm(n)`` from seed
    ``PERM_SEED + level``, the permutation their code draws from torch's global generator seeded alike (it may
    have fixed points, as theirs).

    Example
    -------
    >>> torch.equal(invariance_perm(3), torch.randperm(16, generator=torch.Generator().manual_seed(103)))
    True
    """
    return torch.randperm(n, generator=torch.Generator().manual_seed(PERM_SEED + level))


def alignment_generator(level: int) -> torch.Generator:
    """The generator of our alignment baseline at ``level`` (seed ``ALIGN_SEED + level``).

    Example
    -------
    >>> alignment_generator(0).initial_seed()
    200
    """
    return torch.Generator().manual_seed(ALIGN_SEED + level)


@functools.lru_cache(maxsize=1)
def search_images() -> tuple[torch.Tensor, torch.Tensor, list[str], list[str]]:
    """The similarity search's images: the first :data:`PER_CLASS` images of each class of
    :data:`SEARCH_CLASSES` in :data:`SEARCH_LOAD`'s order, class by class.

    Returns ``(x (256, 3, 56, 56) float32, labels (256,) in 0..3, class names, WordNet synsets)``.

    Example
    -------
    >>> x, y, classes, synsets = search_images()
    >>> x.shape, torch.bincount(y).tolist(), synsets
    (torch.Size([256, 3, 56, 56]), [64, 64, 64, 64], ['trouser.n.01', 'sweater.n.01', 'sandal.n.01', 'gym_shoe.n.01'])
    """
    ds = data.load(**SEARCH_LOAD)
    xs, ys, synsets = [], [], []
    for k, name in enumerate(SEARCH_CLASSES):
        c = ds.classes.index(name)
        idx = (ds.labels == c).nonzero().flatten()[:PER_CLASS]
        if len(idx) < PER_CLASS:
            raise ValueError(f"class {name!r} has {len(idx)} images in {SEARCH_LOAD}, fewer than {PER_CLASS}.")
        xs.append(ds.images[idx])
        ys.append(torch.full((PER_CLASS,), k))
        synsets.append(ds.synsets[c])
    return torch.cat(xs).float().div_(255), torch.cat(ys), list(SEARCH_CLASSES), synsets


@functools.lru_cache(maxsize=1)
def search() -> similarity.Search:
    """Our similarity search on :func:`search_images` with the untrained model's embedding, every entry of
    :data:`invlib.papers.b.similarity.POOL`, signs fixed to +1, the authors' style (the default), seed
    :data:`SEARCH_SEED`.

    Example
    -------
    >>> s = search()
    >>> s.changes.shape, s.meta["pairs"]  # (entries, pairs): 32 pairs of each of the 4 classes
    (torch.Size([63, 128]), 128)
    """
    x, labels, classes, _ = search_images()
    return similarity.search(embedding(), x, labels, similarity.POOL, classes, seed=SEARCH_SEED, sign=1)


def loader_order(labels: torch.Tensor, n_classes: int, seed: int = SEARCH_SEED, batch: int = 32) -> list[torch.Tensor]:
    """Per class, the order of its images that makes the authors' loader (batches of ``batch`` in order, the
    first half of a batch paired with the second) draw the pairs of :func:`invlib.papers.b.similarity.pairs`.
    Every class must hold a multiple of ``batch`` images (their loader drops a last, smaller batch).

    Example
    -------
    >>> y = torch.tensor([0] * 32 + [1] * 32)
    >>> order = loader_order(y, 2)
    >>> a, b = similarity.pairs(y, 2)
    >>> torch.equal(order[0][:16], a[:16]) and torch.equal(order[0][16:], b[:16])
    True
    """
    first, second = similarity.pairs(labels, n_classes, None, seed, batch)
    out, h, start = [], batch // 2, 0
    for c in range(n_classes):
        n = int((labels == c).sum())
        if n % batch:
            raise ValueError(f"class {c} has {n} images, not a multiple of {batch}: their loader would drop some.")
        a, b = first[start:start + n // 2], second[start:start + n // 2]
        out.append(torch.cat([torch.cat([a[k:k + h], b[k:k + h]]) for k in range(0, n // 2, h)]))
        start += n // 2
    return out


def crop_boxes(method: str, n: int = CROP_DRAWS, seed: int = CROP_SEED) -> torch.Tensor:
    """Our ``(n, 4)`` boxes of crop ``method`` on the stored ``CROP_SIDE`` px image (B1's setting: translation
    :data:`TRANSLATE`, torchvision's scale and ratio ranges, the fixed crops 224/256 of the side).

    Example
    -------
    >>> crop_boxes("fixed_size_center_crop", 2).tolist()[0]
    [4.0, 4.0, 60.0, 60.0]
    """
    return crops.sample_boxes(method, n, CROP_SIDE, CROP_SIDE, torch.Generator().manual_seed(seed),
                              translate=TRANSLATE)


def box_stats(boxes, side: int = CROP_SIDE) -> dict[str, np.ndarray]:
    """Per box ``(N, 4)`` ``(x0, y0, x1, y1)`` on a ``side`` px square: ``area`` (fraction of the image),
    ``log_aspect`` (log width / height), ``cx``, ``cy`` (centre offset from the image centre, fraction of the side).

    Example
    -------
    >>> {k: v.tolist() for k, v in box_stats(np.array([[0.0, 0.0, 32.0, 16.0]])).items()}
    {'area': [0.125], 'log_aspect': [0.6931471805599453], 'cx': [-0.25], 'cy': [-0.375]}
    """
    b = np.asarray(boxes, dtype=np.float64)
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    return dict(area=w * h / side**2, log_aspect=np.log(w / h), cx=((b[:, 0] + b[:, 2]) / 2 - side / 2) / side,
                cy=((b[:, 1] + b[:, 3]) / 2 - side / 2) / side)


def moments(values) -> dict[str, float]:
    """``mean``, ``std`` (n - 1) of a sample and their standard errors ``mean_se`` (std / sqrt n) and ``std_se``
    (from the sample's fourth central moment, ``sqrt((m4 - s^4) / (4 n s^2))``; 0 for a constant sample).

    Example
    -------
    >>> m = moments(np.arange(4.0))
    >>> round(m["mean"], 3), round(m["std"], 3), round(m["mean_se"], 3)
    (1.5, 1.291, 0.645)
    """
    v = np.asarray(values, dtype=np.float64)
    n, mean = len(v), float(v.mean())
    std = float(v.std(ddof=1))
    m4 = float(((v - mean) ** 4).mean())
    std_se = math.sqrt(max(m4 - std**4, 0.0) / (4 * n * std**2)) if std > 0 else 0.0
    return dict(mean=mean, std=std, mean_se=std / math.sqrt(n), std_se=std_se)


def crop_summary(boxes, side: int = CROP_SIDE, prefix: str = "") -> tuple[dict[str, float], dict[str, float]]:
    """``(values, standard errors)`` of :func:`box_stats`: keys ``"<prefix><stat>/mean"`` and ``".../std"``.

    Example
    -------
    >>> values, se = crop_summary(crop_boxes("rrc", 2000), prefix="rrc/")
    >>> 0.45 < values["rrc/area/mean"] < 0.51, se["rrc/area/mean"] < 0.01  # 0.54 less the large boxes that do not fit
    (True, True)
    """
    values, se = {}, {}
    for stat, v in box_stats(boxes, side).items():
        m = moments(v)
        for what in ("mean", "std"):
            values[f"{prefix}{stat}/{what}"] = m[what]
            se[f"{prefix}{stat}/{what}"] = m[f"{what}_se"]
    return values, se


# ------------------------------------------------------------------------------ our numbers
def _mean_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().mean())


def _pair_keys(classes) -> list[tuple[int, int, str]]:
    return [(i, j, f"{classes[i]}|{classes[j]}") for i in range(len(classes)) for j in range(i + 1, len(classes))]


@functools.cache
def _ours(experiment: str) -> tuple[dict[str, float], dict[str, float]]:
    """``(values, standard errors)`` of :func:`ours` (standard errors only for crops; cached per process)."""
    se: dict[str, float] = {}
    if experiment == "sweep_transforms":
        x = probe_images()
        values = {f"{g}/{lv}": _mean_abs(similarity.transform_level(g, x, lv), x) for g in GRID_NAMES
                  for lv in range(10)}
    elif experiment == "relative_invariance":
        z, zt = translated_embeddings()
        values = {}
        for lv in range(10):
            inv = metrics.relative_invariance(z, zt[lv], perm=invariance_perm(lv, len(z)))
            q = metrics.summary(inv)
            values.update({f"invariance/{lv}/{k}": q[k] for k in ("median", "q25", "q75")})
            values[f"alignment/{lv}"] = metrics.equivariance_alignment(z, zt[lv], alignment_generator(lv))
    elif experiment == "aa_ops":
        x = probe_images()
        values = {similarity.entry_name(e): _mean_abs(similarity.apply_entry(e, x, sign=1), x)
                  for e in similarity.POOL}
    elif experiment == "boosts":
        s = search()
        values = {}
        for what, table in (("mean", s.class_means()), ("share", s.boosted_share()), ("weighted", s.weighted_boost())):
            for c, name in enumerate(s.classes):
                values.update({f"{what}/{name}/{e}": float(table[c, j]) for j, e in enumerate(s.entries)})
    elif experiment == "wordnet":
        s = _their_means() or search()
        synsets = search_images()[3]
        ranks = torch.as_tensor(s.op_type_ranks())
        tops = {k: s.top_types(k) for k in (5, 25)}
        values = {}
        for metric in wordnet.METRICS:
            m = wordnet.similarity_matrix(synsets, metric)
            values.update({f"{metric}/{key}": float(m[i, j]) for i, j, key in _pair_keys(s.classes)})
        for i, j, key in _pair_keys(s.classes):
            values[f"spearman/{key}"] = float(metrics.spearman(ranks[i], ranks[j]))
            for k, top in tops.items():
                values[f"iou_top{k}/{key}"] = metrics.iou(top[i], top[j])
    elif experiment == "crops":
        values = {}
        for method in crops.METHODS:
            v, e = crop_summary(crop_boxes(method), prefix=f"{method}/")
            values.update(v)
            se.update(e)
    else:
        check_choice(experiment, EXPERIMENTS, "experiment")
    return values, se


def _their_means(path: str | Path = PATH) -> similarity.Search | None:
    """A :class:`~invlib.papers.b.similarity.Search` whose class means are those their code stored for the boosts
    experiment (one pseudo-pair per class), so that the wordnet experiment runs our ranking functions on their
    numbers: it then tests the functions, not the search's float noise (near-ties among the 63 entries reorder a
    ranking). None when their code has not been run for ``boosts``."""
    rec = theirs("boosts", path)
    if rec is None:
        return None
    stored = rec.get("theirs") or {}
    classes, entries = list(SEARCH_CLASSES), [similarity.entry_name(e) for e in similarity.POOL]
    means = [[_num(stored.get(f"mean/{c}/{e}")) for c in classes] for e in entries]
    return similarity.Search(entries, torch.tensor(means, dtype=torch.float64), torch.arange(len(classes)), classes)


def ours(experiment: str) -> dict[str, float]:
    """Our numbers of ``experiment`` (:data:`EXPERIMENTS`) on the fixed inputs, computed live with invlib (once
    per process; from about 0.1 s for ``aa_ops`` to a few seconds for ``boosts`` on 2 CPU cores).

    Example
    -------
    >>> v = ours("aa_ops")
    >>> len(v), v["rescale/0"], round(v["invert/3"], 3)
    (63, 0.0, 0.62)
    """
    return dict(_ours(check_choice(experiment, EXPERIMENTS, "experiment"))[0])


# ------------------------------------------------------------------------------ theirs beside ours
def theirs(experiment: str, path: str | Path = PATH) -> dict | None:
    """The latest record of ``experiment`` in ``path`` (written by ``benchmarks/authors/grounding_runs.py``), or
    None when their code has not been run for it.

    Example
    -------
    >>> theirs("crops", path="/nonexistent.json") is None
    True
    """
    return authors.latest(path, check_choice(experiment, EXPERIMENTS, "experiment"))


def _num(v) -> float:
    return float("nan") if v is None else float(v)


def compare(experiment: str, path: str | Path = PATH) -> pd.DataFrame:
    """Our numbers (live) beside theirs (stored in ``path``), one row per key of either: ``key``, ``ours``,
    ``theirs``, ``difference`` (absolute), ``tolerance`` (:data:`TOLERANCE`) and ``same`` (difference within
    the tolerance; two NaNs are the same, one NaN is not). Empty when ``path`` has no record of ``experiment``.

    For ``boosts`` it also has one row per class and ranking (``top5_weighted/<class>``, ``top5_mean/<class>``):
    the IoU of our top-5 entries with theirs (ours) against 1 (theirs); the same when the lists differ only by
    near-ties, entries whose value (ours) is within the key tolerance of our 5th-best (the tolerance is then the
    difference, else 0).

    Example
    -------
    >>> import json, tempfile
    >>> f = Path(tempfile.mkdtemp()) / "b.json"
    >>> theirs_ = {k: v + 1e-6 for k, v in ours("aa_ops").items()}
    >>> _ = f.write_text(json.dumps({"runs": [dict(experiment="aa_ops", commit="a4facc0", date="2026-11-25",
    ...                                             theirs=theirs_)]}))
    >>> frame = compare("aa_ops", f)
    >>> len(frame), bool(frame.same.all())
    (63, True)
    """
    return _compare(experiment, theirs(experiment, path))


def _compare(experiment: str, rec: dict | None) -> pd.DataFrame:
    """:func:`compare` against their record ``rec`` (None: an empty table)."""
    if rec is None:
        return pd.DataFrame(columns=COLUMNS)
    values, se_ours = _ours(experiment)
    stored = {k: _num(v) for k, v in (rec.get("theirs") or {}).items()}
    se_theirs = {k: _num(v) for k, v in (rec.get("theirs_se") or {}).items()}
    rows = []
    for key in list(dict.fromkeys([*values, *stored])):
        o, t = values.get(key, float("nan")), stored.get(key, float("nan"))
        se = math.hypot(se_ours.get(key, 0.0), se_theirs.get(key, 0.0))
        limit = tolerance(experiment, key) + TOLERANCE[experiment]["se"] * se
        both_nan = math.isnan(o) and math.isnan(t)
        diff = 0.0 if both_nan else abs(o - t)
        rows.append(dict(key=key, ours=o, theirs=t, difference=diff, tolerance=limit,
                         same=bool(both_nan or diff <= limit)))
    if experiment == "boosts":
        rows += _top_rows(rec)
    return pd.DataFrame(rows, columns=COLUMNS)


def _top_rows(rec: dict) -> list[dict]:
    """IoU of our top-5 lists with their stored ones (``rec["theirs_top"][ranking][class]``), near-ties allowed."""
    s, rows = search(), []
    for ranking in ("weighted", "mean"):
        stored = (rec.get("theirs_top") or {}).get(ranking, {})
        table = s.weighted_boost() if ranking == "weighted" else s.class_means()
        tops = s.top(TOP_K, score=ranking)
        for c, name in enumerate(s.classes):
            if name not in stored:
                continue
            mine = tops[c]
            iou = metrics.iou(mine, stored[name])
            value = {e: float(table[c, s.entries.index(e)]) for e in s.entries}
            kth = value[mine[-1]]
            band = tolerance("boosts", ranking)
            tie = all(abs(value.get(e, float("inf")) - kth) <= band for e in set(mine) ^ set(stored[name]))
            rows.append(dict(key=f"top{TOP_K}_{ranking}/{name}", ours=iou, theirs=1.0, difference=1 - iou,
                             tolerance=1 - iou if tie else 0.0, same=bool(iou == 1.0 or tie)))
    return rows


def report(run, *experiments: str, top: int | None = 8, path: str | Path = PATH) -> pd.DataFrame:
    """Record, for each of ``experiments``, the claim ``authors/<experiment>_same`` on ``run``
    (:class:`invlib.results.Run`): our implementation gives the authors' code's numbers on the same inputs.
    Reproduced when every key of :func:`compare` is within its tolerance; not measurable when ``path`` has no
    record of the experiment. Also logs ``authors/<experiment>_same/keys_differing`` and ``.../largest_difference``.

    Returns the comparisons, one frame: ``experiment`` and :func:`compare`'s columns, each experiment's ``top``
    largest differences first (``top=None``: every row, in :func:`compare`'s order).

    Example
    -------
    >>> from invlib.results import Run
    >>> run = Run("smoke", name="demo")
    >>> len(report(run, "aa_ops", path="/nonexistent.json")), run.claims["authors/aa_ops_same"]["verdict"]
    (0, 'not measurable at this profile')
    """
    frames = []
    for experiment in experiments:
        rec = theirs(experiment, path)
        frame = _compare(experiment, rec)
        authors.record_same_values(run, PROTOCOL[f"authors/{experiment}_same"], frame, rec)
        if top is not None:
            frame = frame.sort_values("difference", ascending=False).head(top)
        if len(frame):
            frames.append(frame.assign(experiment=experiment))
    columns = ["experiment", *COLUMNS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)



# ------------------------------------------------------------------------------ the crop samplers on the page (B1)
_CROP_WORDS = {"area": "area", "log_aspect": "aspect ratio", "cx": "centre", "cy": "centre"}
_CROP_UNITS = {"area": ("% of the image", 100.0), "log_aspect": ("log ratio", 1.0), "cx": ("px", CROP_SIDE),
               "cy": ("px", CROP_SIDE)}


def _crop_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """The crops rows of ``frame`` (:func:`compare` or :func:`report`) with their key split: ``method``, ``stat``
    (area, log_aspect, cx, cy) and ``what`` (mean, std)."""
    if "experiment" in frame:
        frame = frame[frame.experiment == "crops"]
    frame = frame[frame.key.str.count("/") == 2]
    parts = frame.key.str.split("/", expand=True) if len(frame) else pd.DataFrame(columns=[0, 1, 2])
    return frame.assign(method=parts[0], stat=parts[1], what=parts[2])


def crops_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Chapter B1's short table of the crop samplers against the authors' code: per crop method, how many of its
    statistics differ beyond their tolerance and which, and the largest differences in area (percent of the image)
    and in the box's centre (pixels of the :data:`CROP_SIDE` px image). ``frame``: :func:`compare` ("crops").

    Example
    -------
    >>> f = pd.DataFrame(dict(key=["rrc/area/mean", "rrc/cx/std", "rrc/cy/std"], ours=[0.478, 0.110, 0.110],
    ...                       theirs=[0.484, 0.113, 0.110], difference=[0.006, 0.003, 0.0], tolerance=[0.004] * 3,
    ...                       same=[False, True, True]))
    >>> [v if isinstance(v, str) else round(float(v), 3) for v in crops_table(f).iloc[0]]
    ['1 of 3: area mean', 0.6, 0.192]
    """
    rows = {}
    for method, g in _crop_keys(frame).groupby("method", sort=False):
        differ = g[~g.same.astype(bool)]
        named = list(dict.fromkeys(f"{_CROP_WORDS[s]} {'sd' if w == 'std' else w}" for s, w in zip(differ.stat,
                                                                                                   differ.what)))
        largest = {s: float(g.difference[g.stat.isin(stats)].max() * _CROP_UNITS[stats[0]][1])
                   if g.stat.isin(stats).any() else math.nan
                   for s, stats in (("area", ["area"]), ("centre", ["cx", "cy"]))}
        rows[crops.METHODS.get(method, method)] = {
            "statistics that differ": f"{len(differ)} of {len(g)}" + (f": {', '.join(named)}" if named else ""),
            "largest difference in area (% of the image)": largest["area"],
            "largest difference in the centre (px)": largest["centre"]}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "method"
    return table


def crops_full(frame: pd.DataFrame) -> pd.DataFrame:
    """Every statistic of the crops comparison in a reader's units (area in percent of the image, the centre in
    pixels of the :data:`CROP_SIDE` px image, the aspect ratio as a log ratio): method, statistic, unit, ours,
    theirs, difference, tolerance, same.

    Example
    -------
    >>> f = pd.DataFrame(dict(key=["rrc/cx/std"], ours=[0.11], theirs=[0.113], difference=[0.003],
    ...                       tolerance=[0.0015], same=[False]))
    >>> row = crops_full(f).iloc[0]
    >>> row["statistic"], row["unit"], round(float(row["theirs"]), 3), row["same"]
    ('centre x sd', 'px', 7.232, 'no')
    """
    f = _crop_keys(frame)
    scale = f.stat.map(lambda s: _CROP_UNITS[s][1])
    return pd.DataFrame({"method": f.method.map(lambda m: crops.METHODS.get(m, m)),
                         "statistic": [f"{ {'cx': 'centre x', 'cy': 'centre y'}.get(s, _CROP_WORDS[s])} "
                                       f"{'sd' if w == 'std' else w}" for s, w in zip(f.stat, f.what)],
                         "unit": f.stat.map(lambda s: _CROP_UNITS[s][0]),
                         **{c: f[c].astype(float) * scale for c in ("ours", "theirs", "difference", "tolerance")},
                         "same": np.where(f.same.astype(bool), "yes", "no")}).reset_index(drop=True)


def crops_numbers(frame: pd.DataFrame) -> dict:
    """The numbers chapter B1's prose quotes about the crop samplers against the authors' code
    (:func:`invlib.results.glue`): the setting (``crops_draws``, ``crops_side``, ``crops_size``, ``crops_se``,
    ``crops_offsets``: the whole-pixel offsets of a fixed-size crop per axis), the count of statistics
    (``crops_keys``) and of those that differ (``crops_differ``), the largest differences (``crops_area_pct``,
    ``crops_centre_px``), RRC's mean area on each side (``rrc_area_ours``, ``rrc_area_theirs``, percent of the
    image), the spread of FixedSizeRandomCrop's centre on each side (``fsrc_sd_ours``, ``fsrc_sd_theirs``, px) and
    ``crops_verdict``, one sentence.

    Example
    -------
    >>> crops_numbers(pd.DataFrame(columns=COLUMNS))["crops_verdict"]
    "The authors' code has no stored run on these inputs, so this check is not measurable."
    """
    f = _crop_keys(frame)
    at = f.set_index("key")

    def value(key, column, unit):
        return float(at.loc[key, column]) * unit if key in at.index else math.nan

    differ, keys = int((~f.same.astype(bool)).sum()), len(f)
    if not keys:
        verdict = "The authors' code has no stored run on these inputs, so this check is not measurable."
    elif differ:
        verdict = (f"Our samplers do not draw the same boxes as theirs: {differ} of the {keys} statistics differ "
                   "by more than sampling allows, so the check reads *not reproduced*.")
    else:
        verdict = (f"Our samplers draw the same boxes as theirs: all {keys} statistics agree within sampling, so "
                   "the check reads *reproduced*.")
    fsrc = "fixed_size_random_crop/cx/std"
    return dict(crops_draws=CROP_DRAWS, crops_side=CROP_SIDE, crops_size=CROP_SIZE, crops_se=TOLERANCE["crops"]["se"],
                crops_offsets=CROP_SIDE - CROP_SIZE + 1, crops_keys=keys, crops_differ=differ,
                crops_area_pct=float(f.difference[f.stat == "area"].max() * 100) if keys else math.nan,
                crops_centre_px=float(f.difference[f.stat.isin(["cx", "cy"])].max() * CROP_SIDE) if keys else math.nan,
                rrc_area_ours=value("rrc/area/mean", "ours", 100),
                rrc_area_theirs=value("rrc/area/mean", "theirs", 100),
                fsrc_sd_ours=value(fsrc, "ours", CROP_SIDE), fsrc_sd_theirs=value(fsrc, "theirs", CROP_SIDE),
                crops_verdict=verdict)
