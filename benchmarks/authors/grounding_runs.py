"""Run paper B's authors' code on the inputs of ``invlib.papers.b.authors_code`` and record what it computes.

Paper B (Bouchacourt, Ibrahim, Morcos, 2021) has public code: github.com/facebookresearch/grounding-inductive-biases.
This script imports *their* modules from a checkout of that repository (``--repo``), feeds them exactly the
inputs that :mod:`invlib.papers.b.authors_code` builds (our probe images, our untrained seeded model's
embedding, our search images, our WordNet synsets, B1's 64 px crop setting), and writes their numbers into
``invlib/papers/b/authors_grounding.json``: one record per experiment with ``theirs`` (their numbers, under the
keys of ``authors_code.ours``), ``ours_then`` (ours at the time of the run), ``direct`` (differences of their
outputs and ours image by image or pair by pair, where both exist), the commit of their code, the date, the
torch / torchvision / numpy / PIL versions and the wall seconds. Nothing of theirs is copied into ``invlib``;
chapters read the file through ``authors_code.compare`` and ``authors_code.report``.

Experiments (``authors_code.EXPERIMENTS``; ``all`` runs them in turn):

- ``sweep_transforms``: their ``equivariance_measure/transformations.Transformation`` at levels 0-9 (their
  translation range, pixels of a 224 px image, rescaled to our width: linspace(0, W, 10)).
- ``relative_invariance``: their ``EmbeddingDistanceModule.compute_relative_invariance`` and
  ``EmbeddingAlignmentModule.compute_alignments`` (the alignment of App. D) on our embeddings.
- ``aa_ops``: their AutoAugment operations (``auto_augment.best_policies`` via
  ``new_policies.ImageNetPlusGeometric().get_unique_single_transformations()``), ``random.choice`` -> +1.
- ``boosts``: their ``similarity_search.compute_class_similarity_boosts`` and ``boosts_to_dataframe`` with our
  embedding injected, then ``per_class_augmentation.augmentations.TopWeightedAugmentations``.
- ``wordnet``: their ``wordnet_analysis.wordnet_correlation`` (``WordNetSimilarity``, ``TransformSimlarity``) on
  the boosts experiment's table.
- ``crops``: the box parameters of the training pipelines their ``data_utils.functions.return_loader_and_sampler``
  builds for the Table 1a methods, drawn 100,000 times each.

Set-up and the shims it applies (none changes what their functions compute): see README.md here.

Run (from the repository root):
    python benchmarks/authors/grounding_runs.py all --repo ~/grounding-inductive-biases
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import math
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "invlib" / "papers" / "b" / "authors_grounding.json"
EXTRAS = Path("~/grounding-extras").expanduser()
EXPERIMENTS = ("sweep_transforms", "relative_invariance", "aa_ops", "boosts", "wordnet", "crops")
SHIMS = [
    "numpy.int = int: auto_augment/best_policies.py casts its posterize levels with np.int, an alias of the "
    "builtin int that NumPy 1.24 removed; int is what it meant",
    "torchvision.transforms.functional._get_image_size = get_image_size: utils/mytransforms.py calls the private "
    "name that torchvision 0.13 renamed; both return [width, height]",
    "their compute_similarity_boosts ends with DataFrame.append, removed in pandas 2: the script runs its loop "
    "body itself (compute_class_similarity_boosts then boosts_to_dataframe for each class) and joins the "
    "classes with pandas.concat",
    "image_similarity.similarity.get_embedding_model returns our untrained model's penultimate embedding "
    "(their Embedding would load an ImageNet checkpoint); their embedding_similarity still computes the cosines",
    "random.choice in auto_augment.best_policies returns +1 (the sign of shear, translate and the colour factors)",
    "wordnet_analysis.wordnet_correlation.wn is the NLTK WordNet 3.0 reader of invlib.wordnet.ensure() (the corpus "
    "their `from nltk.corpus import wordnet` loads, found offline); its LABELS_PATH and SIM_SEARCH_DIR point to "
    "a temporary folder holding the boosts experiment's table",
    "equivariance_measure.transformations.Transformation.RANGES translateX / translateY are linspace(0, W, 10) "
    "for our W-px images (theirs: linspace(0, 224, 10) px of a 224 px image), restored afterwards",
]
CROP_CODES = {  # our crop method -> their --augment code in data_utils/functions.py
    "rrc": "C", "random_size_center_crop": "CC", "fixed_size_random_crop": "R", "translate": "T",
    "translate_random_size_center_crop": "TS", "translate_random_size_center_crop_no_ar": "TSnoAR",
    "fixed_size_center_crop": "None"}
ALIGN_DRAWS = 2000  # their random pairings averaged per level for the alignment
# their readers look for <dir>/similarity_search_<type>/single_transform_boosts_train.csv; wordnet_correlation's
# load_df always with its default type, resnet18_no_aug: the folder takes that name (the numbers are our model's)
SIM_TYPE = "resnet18_no_aug"


# ----------------------------------------------------------------------------- set-up
def setup(repo: Path, extras: Path) -> None:
    """Their checkout first on sys.path, the extras (tdigest, more-itertools, plotly, pytorch-lightning) last, and
    the two version shims of SHIMS."""
    sys.path.insert(0, str(repo))
    if extras.is_dir():
        sys.path.append(str(extras))
    import numpy as np
    import torchvision.transforms.functional as F

    if not hasattr(np, "int"):
        setattr(np, "int", int)  # noqa: B010 (np.int itself reads as the deprecated alias to linters)
    if not hasattr(F, "_get_image_size"):
        F._get_image_size = F.get_image_size


def _commit(repo: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def _meta(repo: Path) -> dict:
    import numpy as np
    import PIL
    import torch
    import torchvision

    return dict(code="authors", repository="github.com/facebookresearch/grounding-inductive-biases",
                commit=_commit(repo), date=datetime.date.today().isoformat(), torch=torch.__version__,
                torchvision=torchvision.__version__, numpy=np.__version__, PIL=PIL.__version__,
                python=platform.python_version(), threads=torch.get_num_threads(), shims=SHIMS)


def _f(v) -> float | None:
    """A float for JSON (NaN -> None)."""
    v = float(v)
    return None if math.isnan(v) else v


def _clean(d: dict) -> dict:
    return {k: _f(v) for k, v in d.items()}


def _mean_abs(a, b) -> float:
    return float((a.double() - b.double()).abs().mean())


@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


# ----------------------------------------------------------------------------- B3: transforms, invariance
def sweep_transforms() -> dict:
    import numpy as np
    from equivariance_measure import transformations as TR

    from invlib import transforms as T
    from invlib.papers.b import authors_code as ac
    from invlib.papers.b import similarity

    x = ac.probe_images()
    w = x.shape[-1]
    ranges = dict(TR.Transformation.RANGES, translateX=np.linspace(0, w, 10), translateY=np.linspace(0, w, 10))
    theirs, direct, mirrored, zero_share = {}, {}, {}, {}
    with _patched(TR.Transformation, "RANGES", ranges):
        for grid, name in ac.GRID_NAMES.items():
            op, mags = similarity.grid(grid)
            for lv in range(10):
                key = f"{grid}/{lv}"
                t = TR.Transformation(name, lv)(x.clone())
                o = similarity.transform_level(grid, x, lv)
                theirs[key], direct[key] = _mean_abs(t, x), _mean_abs(o, t)
                if grid in ("rotate", "shear", "shear_y"):  # our op with the opposite sign of the magnitude
                    mirrored[key] = _mean_abs(T.apply(op, x, -float(mags[lv])), t)
                if grid == "posterize":
                    zero_share[key] = float((t == 0).double().mean())
    return dict(experiment="sweep_transforms", theirs=_clean(theirs), ours_then=_clean(ac.ours("sweep_transforms")),
                direct=dict(mean_abs_ours_minus_theirs=_clean(direct),
                            mean_abs_ours_mirrored_minus_theirs=_clean(mirrored)),
                diagnostics=dict(posterize_share_of_zero_pixels_theirs=zero_share,
                                 probe_zero_pixels=float((x == 0).double().mean()),
                                 translate_range_px=[float(v) for v in ranges["translateX"]]))


def relative_invariance() -> dict:
    import numpy as np
    import torch
    from equivariance_measure import embedding_distances as ED
    from equivariance_measure.embedding_alignments import EmbeddingAlignmentModule, compute_cos_distance

    from invlib import metrics
    from invlib.papers.b import authors_code as ac

    z, zt = ac.translated_embeddings()
    n = len(z)

    class Recorder(ED.TransformInvarianceDigest):
        """Their digest, also keeping the raw arrays it is fed."""

        raw: dict = {}

        def batch_update(self, magnitude, baseline, transformed_distance, invariance):
            self.raw[magnitude] = np.asarray(invariance)
            super().batch_update(magnitude, baseline, transformed_distance, invariance)

    holder = types.SimpleNamespace(cos_distance_digest=Recorder(ac.INVARIANCE_GRID, "cos_distance"))
    holder.get_distance_func = types.MethodType(ED.EmbeddingDistanceModule.get_distance_func, holder)
    theirs, digest, perms_equal, fixed, per_image = {}, {}, {}, {}, {}
    for lv in range(10):
        torch.manual_seed(ac.PERM_SEED + lv)  # their compute_relative_invariance draws torch.randperm(n)
        ED.EmbeddingDistanceModule.compute_relative_invariance(holder, z, {lv: zt[lv]}, distance_type="cos_distance")
        torch.manual_seed(ac.PERM_SEED + lv)
        perm = torch.randperm(n)
        perms_equal[lv] = bool(torch.equal(perm, ac.invariance_perm(lv, n)))
        fixed[lv] = int((perm == torch.arange(n)).sum())
        inv = holder.cos_distance_digest.raw[str(lv)]
        mine = metrics.relative_invariance(z, zt[lv], perm=ac.invariance_perm(lv, n)).double().numpy()
        per_image[f"invariance/{lv}"] = float(np.abs(mine - inv).max())
        for name, p in (("median", 50), ("q25", 25), ("q75", 75)):
            theirs[f"invariance/{lv}/{name}"] = float(np.percentile(inv, p))
            digest[f"invariance/{lv}/{name}"] = float(holder.cos_distance_digest.get_percentile(lv, p))

    # alignment: their compute_alignments with our baseline (drawn as metrics.equivariance_alignment draws it, from
    # the same generator) and their own random pairing, averaged over ALIGN_DRAWS seeded pairings
    se, excl_fixed, one_draw, all_pairs = {}, {}, {}, {}
    for lv in range(10):
        d = (z - zt[lv]).float()
        b = d.gather(0, torch.rand(d.shape, generator=ac.alignment_generator(lv)).argsort(0))
        # their formula, cos_dist(b_i, b_j) - cos_dist(d_i, d_j), over every ordered pair i != j exactly once (the
        # n - 1 cyclic shifts): with the same baseline this is what our alignment computes
        shifts = [(torch.arange(n) + k) % n for k in range(1, n)]
        all_pairs[f"alignment/{lv}"] = float(torch.stack([
            (compute_cos_distance(b, b[i]) - compute_cos_distance(d, d[i])).mean() for i in shifts]).mean())
        h = types.SimpleNamespace(magnitude_to_diff={lv: d}, magnitude_to_shuffled_diff={lv: b})
        means, kept = [], []
        for k in range(ALIGN_DRAWS):
            torch.manual_seed(10_000 * lv + k)
            a = EmbeddingAlignmentModule.compute_alignments(h)[lv]
            torch.manual_seed(10_000 * lv + k)
            moved = torch.randperm(n) != torch.arange(n)
            means.append(float(a.mean()))
            kept.append(float(a[moved].mean()))
            if k == 0:
                one_draw[lv] = dict(median=float(a.median()), q25=float(a.quantile(0.25)),
                                    q75=float(a.quantile(0.75)), mean=float(a.mean()))
        theirs[f"alignment/{lv}"] = float(np.mean(means))
        se[f"alignment/{lv}"] = float(np.std(means, ddof=1) / math.sqrt(ALIGN_DRAWS))
        excl_fixed[f"alignment/{lv}"] = float(np.nanmean(kept))
    direct = dict(max_abs_per_image_invariance=_clean(per_image),
                  abs_ours_minus_their_formula_over_all_pairs={
                      k: abs(v - ac.ours("relative_invariance")[k]) for k, v in all_pairs.items()})
    return dict(experiment="relative_invariance", theirs=_clean(theirs), theirs_se=_clean(se),
                ours_then=_clean(ac.ours("relative_invariance")), direct=direct,
                diagnostics=dict(their_tdigest_percentiles=_clean(digest), perms_equal_ours=perms_equal,
                                 fixed_points_of_their_perm=fixed, alignment_draws=ALIGN_DRAWS,
                                 alignment_their_rows_with_perm_i_ne_i=_clean(excl_fixed),
                                 alignment_their_formula_over_all_pairs=_clean(all_pairs),
                                 alignment_their_one_draw_per_row=one_draw, n_images=n))


# ----------------------------------------------------------------------------- B4: operations, boosts
class _PlusOne:
    """Their module's ``random``, with ``choice`` always +1 (the sign of their signed operations)."""

    def __getattr__(self, name):
        return getattr(random, name)

    @staticmethod
    def choice(seq):
        if list(seq) != [-1, 1]:
            raise AssertionError(f"random.choice on {seq!r}: only the sign draw [-1, 1] is expected")
        return 1


def _their_pool():
    """Their single transformations, in the order of our POOL (their list comes from a set)."""
    from auto_augment.new_policies import ImageNetPlusGeometric

    from invlib.papers.b import similarity

    by = {(t.operation_name, t.magnitude_idx): t for t in ImageNetPlusGeometric().get_unique_single_transformations()}
    if set(by) != set(similarity.POOL):
        raise AssertionError(f"their pool differs from ours: only theirs {sorted(set(by) - set(similarity.POOL))}, "
                             f"only ours {sorted(set(similarity.POOL) - set(by))}")
    return [by[e] for e in similarity.POOL]


def aa_ops() -> dict:
    from auto_augment import best_policies as BP

    from invlib.papers.b import authors_code as ac
    from invlib.papers.b import similarity

    x = ac.probe_images()
    theirs, d_authors, d_ours, ours_style, worst = {}, {}, {}, {}, {}
    with _patched(BP, "random", _PlusOne()):
        for e, t in zip(similarity.POOL, _their_pool()):
            key = similarity.entry_name(e)
            out = t.apply(x)
            a = similarity.apply_entry(e, x, sign=1, style="authors")
            o = similarity.apply_entry(e, x, sign=1, style="ours")
            theirs[key], ours_style[key] = _mean_abs(out, x), _mean_abs(o, x)
            d_authors[key], d_ours[key] = _mean_abs(a, out), _mean_abs(o, out)
            worst[key] = float((a - out).abs().max())
    return dict(experiment="aa_ops", theirs=_clean(theirs), ours_then=_clean(ac.ours("aa_ops")),
                ours_style_then=_clean(ours_style),
                direct=dict(mean_abs_authors_style_minus_theirs=_clean(d_authors),
                            mean_abs_ours_style_minus_theirs=_clean(d_ours),
                            max_abs_authors_style_minus_theirs=_clean(worst)))


_BOOSTS: dict = {}  # their boosts table, kept for the wordnet experiment


def _their_boosts(tmp: Path):
    """Their per-class boosts on our search images, our embedding injected (computed once), written where their
    readers look under ``tmp``; returns (table, {class: their Boost list})."""
    from similarity_search_experiments import similarity_search as SS

    if "df" not in _BOOSTS:
        _BOOSTS.update(zip(("df", "boosts"), _compute_their_boosts()))
    SS.save_boosts(_BOOSTS["df"], tmp / f"similarity_search_{SIM_TYPE}", "single_transform_boosts_train")
    return _BOOSTS["df"], _BOOSTS["boosts"]


def _compute_their_boosts():
    import image_similarity.similarity as IS
    import pandas as pd
    import torch
    from auto_augment import best_policies as BP
    from similarity_search_experiments import similarity_search as SS

    from invlib.papers.b import authors_code as ac

    x, labels, classes, _ = ac.search_images()
    f = ac.embedding()
    ours_model = types.SimpleNamespace(embed=lambda images: f(images))
    frames, boosts = [], {}
    with (_patched(BP, "random", _PlusOne()), _patched(IS, "get_embedding_model", lambda model_type: ours_model),
          warnings.catch_warnings()):
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)  # their np.mean of no boost: NaN
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "Degrees of freedom", RuntimeWarning)
        pool = _their_pool()
        for c, order in enumerate(ac.loader_order(labels, len(classes))):
            ds = torch.utils.data.TensorDataset(x[order], labels[order])
            loader = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=False, drop_last=True)
            b = SS.compute_class_similarity_boosts(loader, pool, max_n_image_pairs=10**9, similarity_type=SIM_TYPE)
            boosts[classes[c]] = b
            frames.append(SS.boosts_to_dataframe(b, classes[c]))
    return pd.concat(frames), boosts


def _entry(their_name: str) -> str:
    op, _, level = their_name.partition(" with magnitude ")
    return f"{op}/{int(level)}"


def boosts() -> dict:
    import numpy as np
    import pandas as pd
    import torch
    from per_class_augmentation.augmentations import TopWeightedAugmentations

    from invlib import metrics
    from invlib.papers.b import authors_code as ac
    from invlib.papers.b import similarity

    tmp = Path(tempfile.mkdtemp(prefix="grounding-boosts-"))
    df, their = _their_boosts(tmp)
    tops, weighted = {}, None
    for ranking, label in (("weighted_boost", "weighted"), ("avg_percent_similarity_change", "mean"),
                           ("proportion_boosted", "proportion")):
        twa = TopWeightedAugmentations(num_transforms=ac.TOP_K, transform_dir=str(tmp), similarity_type=SIM_TYPE,
                                       top_per_class=True, top_transform_ranking=ranking)
        weighted = twa.df
        top = twa.top_transforms_df.reset_index(level=0)
        tops[label] = {cls: [_entry(n) for n in top[top.iloc[:, 0] == cls]["transform_name"]]
                       for cls in ac.SEARCH_CLASSES}
    theirs, nan_weighted = {}, 0
    for _, r in weighted.iterrows():
        cls, e = r["class_label"], _entry(r["transform_name"])
        theirs[f"mean/{cls}/{e}"] = 100 * r["avg_percent_similarity_change"]
        theirs[f"share/{cls}/{e}"] = r["proportion_boosted"]
        wb = r["weighted_boost"]
        nan_weighted += int(pd.isna(wb))
        theirs[f"weighted/{cls}/{e}"] = 0.0 if pd.isna(wb) else 100 * wb  # NaN: no pair boosted (mean of nothing)

    # direct: their per-pair percent changes against ours, pair by pair (the same pairs, in the same order)
    s = ac.search()
    direct, sims = {}, []
    for c, cls in enumerate(s.classes):
        mine = s.changes[:, s.labels == c].double().numpy()
        for b in their[cls]:
            e = _entry(b.transform_name)
            pct = 100 * np.asarray(b.percent_change)
            direct[f"{cls}/{e}"] = float(np.abs(mine[s.entries.index(e)] - pct).mean())
        sims.append(their[cls][0].original_similarities)
    x, labels, _, _ = ac.search_images()
    a, b2 = similarity.pairs(labels, len(s.classes), None, ac.SEARCH_SEED)
    f = ac.embedding()
    ours_sim = torch.nn.functional.cosine_similarity(f(x[a]), f(x[b2]), dim=1).double().numpy()
    ious = {f"top{ac.TOP_K}_{label}/{cls}": metrics.iou(s.top(ac.TOP_K, score=label)[c], tops[label][cls])
            for label in ("weighted", "mean") for c, cls in enumerate(s.classes)}
    ours_tops = {label: {cls: s.top(ac.TOP_K, score=label)[c] for c, cls in enumerate(s.classes)}
                 for label in ("weighted", "mean")}
    return dict(experiment="boosts", theirs=_clean(theirs), ours_then=_clean(ac.ours("boosts")), theirs_top=tops,
                ours_top_then=ours_tops,
                direct=dict(mean_abs_pair_percent_change=_clean(direct),
                            max_abs_original_similarity=float(np.abs(np.concatenate(sims) - ours_sim).max()),
                            top_iou=ious),
                diagnostics=dict(weighted_boost_nan_cells=nan_weighted, pairs_per_class=int(len(a) // len(s.classes)),
                                 classes=list(s.classes)))


def wordnet() -> dict:
    import numpy as np
    from wordnet_analysis import wordnet_correlation as WC

    import invlib.wordnet
    from invlib.papers.b import authors_code as ac

    tmp = Path(tempfile.mkdtemp(prefix="grounding-wordnet-"))
    _their_boosts(tmp)
    _, _, classes, synsets = ac.search_images()
    lemma = {c: s.split(".")[0] for c, s in zip(classes, synsets)}
    if any(not s.endswith(".n.01") for s in synsets):
        raise AssertionError(f"their WordNetSimilarity builds '<name>.n.01'; synsets {synsets} are not all sense 1")
    labels = tmp / "labels.txt"
    labels.write_text("".join(f"{c} {k} {lemma[c]}\n" for k, c in enumerate(classes)))
    with (_patched(WC, "wn", invlib.wordnet.ensure()), _patched(WC, "LABELS_PATH", labels),
          _patched(WC, "SIM_SEARCH_DIR", tmp)):
        corr = WC.WordNetTransformCorrelations(max_class_pairs=0, results_dir=str(tmp))
        df = corr.df  # their load_df: the boosts table merged with the labels file, op types in "transform"
        theirs = {}
        for i in range(len(classes)):
            for j in range(i + 1, len(classes)):
                a, b = lemma[classes[i]], lemma[classes[j]]
                key = f"{classes[i]}|{classes[j]}"
                for metric in ("wup", "lch", "path"):
                    theirs[f"{metric}/{key}"] = WC.WordNetSimilarity(f"{metric}_similarity")(a, b)
                theirs[f"spearman/{key}"] = WC.TransformSimlarity("spearman_rank")(a, b, df)
                for k in (5, 25):
                    theirs[f"iou_top{k}/{key}"] = WC.TransformSimlarity("intersection_over_union", k)(a, b, df)

    # what their two transformation similarities are, written on our search (for the report): the IoU of the
    # operation *types* of the top-n entries, identities included, and the Spearman of first-occurrence positions
    import torch

    from invlib import metrics

    s = ac.search()
    m = s.class_means()
    types = [[s.entries[q].split("/")[0] for q in np.argsort(-m[c], kind="stable")] for c in range(len(classes))]
    diag = {}
    for i in range(len(classes)):
        for j in range(i + 1, len(classes)):
            key = f"{classes[i]}|{classes[j]}"
            for k in (5, 25):
                ti, tj = set(types[i][:k]), set(types[j][:k])
                diag[f"iou_top{k}_op_types_with_identities/{key}"] = len(ti & tj) / len(ti | tj)
            seen = list(dict.fromkeys(types[i]))  # first-occurrence positions, identities (rescale/0, color/0) kept
            ri = torch.tensor([types[i].index(t) for t in seen], dtype=torch.float64)
            rj = torch.tensor([types[j].index(t) for t in seen], dtype=torch.float64)
            diag[f"spearman_first_positions_with_identities/{key}"] = float(metrics.spearman(ri, rj))
    return dict(experiment="wordnet", theirs=_clean(theirs), ours_then=_clean(ac.ours("wordnet")),
                diagnostics=dict(ours_with_their_iou_definition=diag, their_class_names=lemma))


# ----------------------------------------------------------------------------- B1, B2: crops
def _their_pipeline(code: str, folder: Path):
    """The training transforms their return_loader_and_sampler builds for --augment ``code``."""
    from data_utils.functions import return_loader_and_sampler

    args = types.SimpleNamespace(augment=code, tvalues=[0.3, 0.3], cropsize=224, distributed=False, batch_size=1,
                                 workers=0, scale_exp=0)
    with contextlib.redirect_stdout(io.StringIO()):
        loader, _, _ = return_loader_and_sampler(args, str(folder), str(folder))
    return loader.dataset.transform.transforms


def _their_box(pipeline, side: int, ref: int = 256) -> tuple[float, float, float, float]:
    """One box ``(x0, y0, x1, y1)`` on the stored ``side`` px image from their pipeline's own parameter draws.

    The stored image plays their "resized to 256" image (as in invlib.crops), so Resize(256) keeps it and their
    fixed 224 px crops are 224 * side / 256 px. A translation moves the content by (tx, ty), so the box by -t."""
    import torch
    import torchvision.transforms as T
    from utils.mytransforms import RandomSizeResizedCenterCrop

    x0 = y0 = 0.0
    w = h = side
    for t in pipeline:
        if isinstance(t, (T.ToTensor, T.Normalize, T.Resize)):
            continue  # Resize(256) keeps the stored image; Resize((224, 224)) after a crop sets the output size
        img = torch.empty(3, h, w)
        if isinstance(t, T.CenterCrop):
            cs = round(t.size[0] * side / ref)
            i, j, hh, ww = int(round((h - cs) / 2.0)), int(round((w - cs) / 2.0)), cs, cs
        elif isinstance(t, T.RandomCrop):
            cs = round(t.size[0] * side / ref)
            i, j, hh, ww = t.get_params(img, (cs, cs))
        elif isinstance(t, (T.RandomResizedCrop, RandomSizeResizedCenterCrop)):
            i, j, hh, ww = t.get_params(img, t.scale, t.ratio)
        elif isinstance(t, T.RandomAffine):
            _, (tx, ty), _, _ = t.get_params(t.degrees, t.translate, t.scale, t.shear, [w, h])
            x0, y0 = x0 - tx, y0 - ty
            continue
        else:
            raise AssertionError(f"no box rule for their transform {t!r}")
        x0, y0, w, h = x0 + j, y0 + i, ww, hh
    return x0, y0, x0 + w, y0 + h


def crops_experiment() -> dict:
    import numpy as np
    import torch
    from PIL import Image

    from invlib.papers.b import authors_code as ac

    folder = Path(tempfile.mkdtemp(prefix="grounding-crops-"))
    (folder / "c").mkdir()
    Image.new("RGB", (ac.CROP_SIDE, ac.CROP_SIDE)).save(folder / "c" / "x.png")
    theirs, se, pipelines, off_centre = {}, {}, {}, {}
    for method, code in CROP_CODES.items():
        pipeline = _their_pipeline(code, folder)
        pipelines[method] = f"--augment {code}: " + ", ".join(type(t).__name__ for t in pipeline)
        torch.manual_seed(ac.CROP_SEED)
        boxes = np.array([_their_box(pipeline, ac.CROP_SIDE) for _ in range(ac.CROP_DRAWS)])
        v, e = ac.crop_summary(boxes, ac.CROP_SIDE, prefix=f"{method}/")
        theirs.update(v)
        se.update(e)
        c = ac.box_stats(boxes)
        off_centre[method] = float(np.mean((np.abs(c["cx"]) > 1e-9) | (np.abs(c["cy"]) > 1e-9)))
    ours_se = ac._ours("crops")[1]
    return dict(experiment="crops", theirs=_clean(theirs), theirs_se=_clean(se), ours_then=_clean(ac.ours("crops")),
                ours_se_then=_clean(ours_se),
                diagnostics=dict(pipelines=pipelines, draws=ac.CROP_DRAWS, side=ac.CROP_SIDE,
                                 share_of_boxes_off_centre_theirs=off_centre))


RUNNERS = dict(sweep_transforms=sweep_transforms, relative_invariance=relative_invariance, aa_ops=aa_ops,
               boosts=boosts, wordnet=wordnet, crops=crops_experiment)


# ----------------------------------------------------------------------------- main
def _save(records: list[dict], out: Path) -> None:
    """Add ``records`` to ``out``, replacing the earlier record of each experiment."""
    old = json.loads(out.read_text())["runs"] if out.exists() else []
    new = {r["experiment"] for r in records}
    runs = [r for r in old if r["experiment"] not in new] + records
    runs.sort(key=lambda r: EXPERIMENTS.index(r["experiment"]))
    doc = dict(about="Runs of the code of Bouchacourt et al. 2021 (paper B) on the inputs of "
                     "invlib.papers.b.authors_code, on this project's machine, written by "
                     "benchmarks/authors/grounding_runs.py; numbers only (their code is not part of invlib).",
               runs=runs)
    out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {len(records)} record(s) to {out}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("experiments", nargs="+", choices=["all", *EXPERIMENTS])
    p.add_argument("--repo", type=Path, required=True, help="a checkout of their repository (see README.md here)")
    p.add_argument("--extras", type=Path, default=EXTRAS,
                   help="a folder of the packages their modules import that the book does not (pip --target)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    repo = args.repo.expanduser().resolve()
    if not (repo / "equivariance_measure" / "transformations.py").exists():
        p.error(f"{repo} is not a checkout of grounding-inductive-biases (git clone it; see README.md here)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    setup(repo, args.extras.expanduser())
    meta = _meta(repo)
    todo = list(EXPERIMENTS) if "all" in args.experiments else list(dict.fromkeys(args.experiments))
    t_all = time.perf_counter()
    for name in todo:
        t0 = time.perf_counter()
        rec = RUNNERS[name]()
        rec = dict(rec, **meta, seconds=round(time.perf_counter() - t0, 1))
        print(f"{name}: {len(rec['theirs'])} numbers in {rec['seconds']} s", flush=True)
        _save([rec], args.out)
    print(f"all done in {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
