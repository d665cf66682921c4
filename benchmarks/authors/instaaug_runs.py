"""Run the InstaAug authors' invariance module on fixed inputs and record what it computes, as facts for paper D.

Paper D (Miao, Rainforth, Mathieu, Dubois, Teh, Foster, Kim, ICML 2023) has public code:
github.com/NingMiao/InstaAug. This script imports *their* ``InstaAug_module`` (and, for ``rotation``, their
``examples/mixmo-pytorch`` training code) from a checkout of that repository (``--repo``) and measures, on the CPU
with fixed seeds, what their code does. Nothing of theirs is copied into ``invlib``; the numbers go into
``invlib/papers/d/authors_instaaug.json`` (one key per experiment, plus the commit, the date, the machine and the
torch version), which our implementation's tests and chapters compare with.

Experiments (``all`` runs them in turn):

- ``crops``: their crop module as ``InstaAug_module/configs/config_crop_supervised.yaml`` builds it
  (``learnable_invariance`` -> ``augmentation.Augmentation`` with ``PreActResFeatureNet``, crop layers [2, 3, -1],
  layer biases [0, 1, 3], 64 px inputs): the candidate crops, the box each one cuts (measured by pushing a
  coordinate image through their crop path), the mirror test (a bright blob, one large logit), the initial
  probability mass per layer and entropy (random inputs, zeros), and their ``max_black_ratio`` filter.
- ``sampler``: their categorical sampler (``distribution.Cropping_Categorical_Dist_ConvFeature``,
  ``argmax(log p + Exp(1) noise)``) drawn 200,000 times on the initial distribution of one fixed input and on a
  hand-made 5-category distribution, against the probabilities, the exact law of that sampler and a Gumbel-max
  control; and their top-n selection for test-time augmentation.
- ``scheduler``: their lambda ``Scheduler`` (``InstaAug_module/scheduler.py``) on scripted entropy sequences
  (stored in the record, so a test can replay them).
- ``rotation``: their Mario-Iggy rotation set-up (``config_rotation_supervised.yaml`` and
  ``examples/mixmo-pytorch/config/marioiggy``): the initial bounds, then their training script for a few epochs
  with the patches that its released state needs to run at all (``PATCHES``; each is stored in the record).
- ``rotation_cpu``, ``crop_cpu``: their rotation and crop training at chapters D1's and D2's cpu settings.
- ``colour_cpu``: their colour module (``config_color_jittering_supervised.yaml``, after P1 and the colour patches
  ``COLOUR_PATCHES``) trained by their procedure (alternating classifier and module steps, the classifier in eval
  mode for the module's; their loss, entropy weights, Scheduler and per-epoch rate warm-up, re-expressed around
  their module) on chapter D3's cpu data and classifier, per module rate and seed (issue 58: is D3's instability
  across seeds the rate or our implementation?). ``hue_enabled`` runs give hue a maximum (their released
  distribution multiplies hue and saturation by 0); ``released`` runs keep their maxima. About 12 s a run.

Set-up (the packages their modules import that the book does not, none of them used on the measured paths):

    git clone https://github.com/NingMiao/InstaAug ~/instaaug-authors
    git -C ~/instaaug-authors checkout adee4961665a91c4d587543b37d9f0248fb5dcbd
    .venv/bin/python -m pip install --target ~/instaaug-extras --no-deps torchdiffeq e2cnn easydict \
        coloredlogs humanfriendly verboselogs

Run (from the repository root; about 12 minutes on 2 cores, 11 of them rotation; see README.md here):

    .venv/bin/python benchmarks/authors/instaaug_runs.py all --repo ~/instaaug-authors
    .venv/bin/python benchmarks/authors/instaaug_runs.py rotation --repo ~/instaaug-authors --epochs 3
    .venv/bin/python benchmarks/authors/instaaug_runs.py colour_cpu --repo ~/instaaug-authors \
        --colour-seeds 0 1 2 3 4                                 # 15 runs, about 3 minutes
    .venv/bin/python benchmarks/authors/instaaug_runs.py colour_cpu --repo ~/instaaug-authors --merge \
        --colour-variants released --colour-module-lrs 1e-5 0.2  # 6 runs
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
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "invlib" / "papers" / "d" / "authors_instaaug.json"
EXTRAS = Path("~/instaaug-extras").expanduser()
EXPERIMENTS = ("crops", "sampler", "scheduler", "rotation", "rotation_cpu", "crop_cpu", "colour_cpu")
CROP_CONFIG = "InstaAug_module/configs/config_crop_supervised.yaml"
ROT_CONFIG = "InstaAug_module/configs/config_rotation_supervised.yaml"
MARIO_CONFIG = "examples/mixmo-pytorch/config/marioiggy/exp_tinyimagenet_res18_1net_standard_bar1_test.yaml"
SIZE = 64  # the Tiny-ImageNet (and Mario-Iggy) input side of their configs
MODULE_SEEDS = (0, 1, 2, 3, 4)  # module initialisations averaged for the initial masses
BATCH = 100  # their batch size (config/tiny/*.yaml); their module's BatchNorm is always in train mode
FIXED_INPUT_SEED = 1  # the sampler's fixed input: torch.manual_seed(1); torch.randn(1, 3, 64, 64)
DRAWS = 200_000
FIVE = (0.4, 0.3, 0.15, 0.1, 0.05)
TOP_NS = (1, 4, 10, 50)  # 50: their test_copies
LAM0, BAND = 0.2, (3.0, 3.5)
SHIMS = [
    "sys.path: their checkout first, the extras folder (torchdiffeq, e2cnn, easydict, coloredlogs, humanfriendly, "
    "verboselogs; pip --target, --no-deps) last. InstaAug_module/utils.py imports torchdiffeq (for expm, unused "
    "here), architectures/e2_steerable.py imports e2cnn (unused), mixmo's utils import easydict and coloredlogs",
    "rotation only: torch.utils.tensorboard is replaced by a stub whose SummaryWriter does nothing when the "
    "tensorboard package is absent (mixmo/learners/abstract_learner.py:7 imports it; their only use, save_tb, is "
    "commented out at abstract_learner.py:280)",
    "rotation only: numpy.reshape accepts the keyword newshape= again (NumPy 2.4 removed it; their "
    "mixmo/core/metrics_wrapper.py:239 calls np.reshape(..., newshape=...)); it means shape=",
]
PATCHES = [  # what their released code needs for the rotation set-up to run at all; see _patch_rotation
    "P1 augmentation.py:245: Augmentation.__init__ reads self.get_param.centers_crop (and three more crop "
    "attributes) that Image2AugmentParam only sets when there are crop layers (augmentation.py:99-100), so a "
    "rotation-only (or colour-only) module cannot be built (AttributeError). Shim: those four names are class "
    "attributes of Image2AugmentParam equal to [], and augmentation.Cropping_Categorical_Dist_ConvFeature returns "
    "None for an empty list of crop layers (the crop distribution is never used without 'crop' in transform)",
    "P2 augmentation.py:440: the last line of Augmentation.forward_, reached by every mode without 'crop', calls "
    "x.device() (a torch.device is not callable: TypeError). Shim: when forward_ raises that TypeError in rotation "
    "mode, the script returns what the line means, with the rotated images recomputed from the rotation angles "
    "their code drew (self.dist_rotation.perturbation, through their Generators.r, F.affine_grid and "
    "F.grid_sample with align_corners=True, as augmentation.py:366-368)",
    "P3 augmentation.py:440 returns zeros as the entropy. Their loss subtracts entropy.mean(0) times the two "
    "entropy_weights of the rotation config (mixmo/core/loss.py:324) and their scheduler reads value[i] for "
    "i = 0, 1 (abstract_learner.py:339, which raises IndexError on the scalar mean of zeros at the end of epoch "
    "1). The shim returns self.dist_rotation.entropy_every, shape (B, 2): the two bounds (a, b) averaged over the "
    "cells (distribution.py:428), what the two weights and the two thresholds of the config are for",
]


# ----------------------------------------------------------------------------- set-up and records
def _commit(repo: Path) -> str:
    """Their checkout's commit (``augnet_runs._commit``: git, else the exported ``COMMIT`` file)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from augnet_runs import _commit as commit

    return commit(repo)


def _machine() -> dict:
    cpu = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import torch

    return dict(platform=platform.platform(), cpu=cpu, cores=os.cpu_count(), device="cpu",
                torch_threads=torch.get_num_threads(), python=platform.python_version())


def _meta(repo: Path) -> dict:
    import numpy as np
    import torch

    return dict(repository="github.com/NingMiao/InstaAug", commit=_commit(repo),
                date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), machine=_machine(),
                torch=torch.__version__, numpy=np.__version__, shims=SHIMS)


def setup(repo: Path, extras: Path) -> None:
    """Their checkout first on sys.path, the extras last (see SHIMS)."""
    sys.path.insert(0, str(repo))
    if extras.is_dir():
        sys.path.append(str(extras))


def _quiet():
    """Their constructors print (``Features dimension``, rotation bounds now and then): keep stdout clean."""
    return contextlib.redirect_stdout(io.StringIO())


def _r(v, nd: int = 6):
    """Round floats (nested lists too) for the JSON."""
    if isinstance(v, (list, tuple)):
        return [_r(u, nd) for u in v]
    return round(float(v), nd)


def _save(key: str, record: dict, meta: dict, out: Path) -> None:
    """Write ``record`` under ``key``, keeping the other experiments' records. Every record carries the date of its
    own run (one written before records had it takes the file's date from then); the file's top-level date and
    machine are the last run's."""
    doc = json.loads(out.read_text()) if out.exists() else {}
    for k in EXPERIMENTS:
        if isinstance(doc.get(k), dict) and "date" in doc:
            doc[k].setdefault("date", doc["date"])
    record = {**record, "date": record.get("date", meta["date"])}
    doc.update(about="Measurements of the InstaAug authors' code (github.com/NingMiao/InstaAug) on fixed inputs, "
                     "written by benchmarks/authors/instaaug_runs.py; numbers only (their code is not part of "
                     "invlib).", **meta)
    doc[key] = record
    ordered = {k: doc[k] for k in doc if k not in EXPERIMENTS}
    ordered.update({k: doc[k] for k in EXPERIMENTS if k in doc})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(ordered, indent=1, allow_nan=False) + "\n")


def _config(repo: Path, rel: str, **overrides) -> dict:
    import yaml

    cfg = yaml.safe_load((repo / rel).read_text())
    cfg.update(overrides)
    return cfg


def _their_crop_module(repo: Path, seed: int):
    """``learnable_invariance(config_crop_supervised.yaml)`` initialised under ``torch.manual_seed(seed)``."""
    import torch
    from InstaAug_module import learnable_invariance

    torch.manual_seed(seed)
    with _quiet():
        return learnable_invariance(_config(repo, CROP_CONFIG), device="cpu")


def _logits(li, x):
    """Their crop logits (B, 321): ``Image2AugmentParam.forward`` (head + layer bias - log #cells), flattened as
    ``Cropping_Categorical_Dist_ConvFeature.forward`` does (distribution.py:79-85)."""
    import torch

    params_crop = li.augmentation.get_param(x)[0]
    return torch.cat([p.reshape(p.shape[0], -1) for p in params_crop], 1)


def _index_of(dist, tparams):
    """The crop index of each row of their ``transformation_param`` (B, n, 4) = (centre, size): the nearest row of
    their table (their sampler returns boxes, not indices)."""
    import torch

    table = torch.cat([dist.centers, dist.sizes], 1)  # (321, 4)
    flat = tparams.reshape(-1, 4)
    return torch.cdist(flat.double(), table.double()).argmin(1).reshape(tparams.shape[:-1])


# ----------------------------------------------------------------------------- crops
def _coordinate_image():
    """Channel 0: the x (column) coordinate of each pixel centre in pixels (k + 0.5), channel 1: y (row), 2: ones."""
    import torch

    k = torch.arange(SIZE, dtype=torch.float32) + 0.5
    yy, xx = torch.meshgrid(k, k, indexing="ij")
    return torch.stack([xx, yy, torch.ones_like(xx)])[None]


def _one_hot_params(li, cells, big: float = 1e4):
    """Their ``params`` argument (a list of per-layer logit maps) with logit ``big`` at crop ``cells[i]`` for row i."""
    import torch

    ap = li.augmentation.get_param
    shapes = [c.shape[:2] for c in ap.centers_crop]
    sizes = [a * b for a, b in shapes]
    flat = torch.zeros(len(cells), sum(sizes))
    flat[torch.arange(len(cells)), torch.as_tensor(cells)] = big
    out, start = [], 0
    for (a, b), n in zip(shapes, sizes, strict=True):
        out.append(flat[:, start:start + n].reshape(-1, 1, a, b))
        start += n
    return out


def _their_crop(li, x, cells):
    """Push ``x`` (1 or len(cells) images) through their ``Augmentation.forward`` with one dominant logit per row:
    their sampler picks that crop, their crop path cuts it. Returns (crops, chosen indices)."""
    import torch

    if x.shape[0] == 1:
        x = x.expand(len(cells), -1, -1, -1).contiguous()
    params = _one_hot_params(li, cells)
    with torch.no_grad():
        out, logprob, _, _ = li(x, n_copies=1, params=params)  # learnable_invariance.forward (__init__.py:48-61)
    return out, logprob


def _ours_equivalent_crop(x, boxes):
    """An align_corners=False crop of (centre x, centre y, side) in fractions of the image (0 = left/top edge,
    1 = right/bottom edge), bilinear with zero fill: the convention of the boxes stored here."""
    import torch
    import torch.nn.functional as F

    s = boxes[:, 2]
    z = torch.zeros_like(s)
    theta = torch.stack([torch.stack([s, z, 2 * boxes[:, 0] - 1], -1), torch.stack([z, s, 2 * boxes[:, 1] - 1], -1)],
                        -2)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def _entropy(logp):
    import torch

    return -(torch.exp(logp) * logp).sum(-1)


def _layer_masses(logp, slices):
    import torch

    p = torch.exp(logp)
    return torch.stack([p[:, a:b].sum(1) for a, b in slices], 1)


def crops(repo: Path) -> dict:
    import torch

    li = _their_crop_module(repo, 0)
    aug, ap = li.augmentation, li.augmentation.get_param
    dist = aug.distC_crop
    cfg = _config(repo, CROP_CONFIG)
    n = dist.centers.shape[0]
    layers, slices, start = [], [], 0
    for i, layer in enumerate(cfg["crop_layer"]):
        k = ap.centers_crop[i].shape[0]
        layers.append(dict(layer=layer, cells=k, count=k * k, first_index=start, side=float(ap.scopes_crop[i]),
                           bias=float(ap.bias[i]), log_cells=float(ap.log_nums_crop[i])))
        slices.append((start, start + k * k))
        start += k * k
    assert start == n

    # the box each crop cuts: a coordinate image through their sampler + crop path, one dominant logit per row
    out, logprob = _their_crop(li, _coordinate_image(), list(range(n)))
    chosen_ok = bool((logprob.abs() < 1e-3).all())  # log p of the sampled crop ~ 0: the intended crop was drawn
    mid = slice(SIZE // 2 - 1, SIZE // 2 + 1)
    cx = out[:, 0, mid, mid].mean((1, 2)) / SIZE
    cy = out[:, 1, mid, mid].mean((1, 2)) / SIZE
    side_x = out[:, 0, SIZE // 2, SIZE // 2] - out[:, 0, SIZE // 2, SIZE // 2 - 1]  # output pitch in input pixels
    side_y = out[:, 1, SIZE // 2, SIZE // 2] - out[:, 1, SIZE // 2 - 1, SIZE // 2]
    inside = out[:, 2].mean((1, 2))  # share of the crop's samples inside the image (zero fill outside)
    boxes = torch.stack([cx, cy, side_x], 1)

    # the formula: cell (row r, col c) of a K x K layer -> their centre table (n_row, n_col) = (-1 + (2r+1)/K,
    # -1 + (2c+1)/K) (mixmo_resnet_feature.py:277-293) -> affine [[s, 0, -n_row], [0, s, -n_col]]
    # (math_op.py:67-74): the crop centre is x = -n_row, y = -n_col (normalised, align_corners=True)
    def frac(nrm):  # normalised coordinate (align_corners=True) -> fraction of the image (align_corners=False)
        return ((nrm + 1) / 2 * (SIZE - 1) + 0.5) / SIZE

    n_row, n_col = dist.centers[:, 0].double(), dist.centers[:, 1].double()
    side = dist.sizes[:, 0].double()
    mirrored = torch.stack([frac(-n_row), frac(-n_col), side], 1)  # the boxes stored (exact; float64)
    unmirrored = torch.stack([frac(n_col), frac(n_row), side], 1)
    nominal = torch.stack([(1 + n_col) / 2, (1 + n_row) / 2], 1)  # the cell's own centre, (x, y) fractions
    x_rand = torch.randn(4, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(5))
    theirs = torch.cat([_their_crop(li, x_rand[j:j + 1], list(range(n)))[0] for j in range(4)])
    ours = torch.cat([_ours_equivalent_crop(x_rand[j:j + 1].expand(n, -1, -1, -1), mirrored.float())
                      for j in range(4)])

    # the mirror test: a bright blob at pixel (row 10, col 22), in layer-2 cell (2, 5); the mirrored cell is (10, 13)
    k2 = layers[0]["cells"]
    blob_rc = (10, 22)
    yy, xx = torch.meshgrid(torch.arange(SIZE, dtype=torch.float32), torch.arange(SIZE, dtype=torch.float32),
                            indexing="ij")
    blob = torch.exp(-((yy - blob_rc[0]) ** 2 + (xx - blob_rc[1]) ** 2) / (2 * 1.5 ** 2))
    img = torch.zeros(1, 3, SIZE, SIZE)
    img[0, 0] = blob
    cell = (blob_rc[0] * k2 // SIZE, blob_rc[1] * k2 // SIZE)
    mirror = (k2 - 1 - cell[1], k2 - 1 - cell[0])
    scan, _ = _their_crop(li, img, list(range(k2 * k2)))
    s2 = layers[0]["side"]
    captured = scan[:, 0].sum((1, 2)) * (s2 ** 2) / blob.sum()  # share of the blob inside each layer-2 crop
    peak_at = scan[:, 0].flatten(1).argmax(1)
    centre_dist = torch.hypot(peak_at // SIZE - (SIZE - 1) / 2, peak_at % SIZE - (SIZE - 1) / 2)
    centred = torch.where(captured > 0.5, centre_dist, torch.full_like(centre_dist, 1e9)).argmin().item()

    def probe(rc):
        i = rc[0] * k2 + rc[1]
        pk = int(peak_at[i])
        return dict(cell=list(rc), index=i, box=_r(mirrored[i].tolist()), blob_share_inside=_r(captured[i].item(), 4),
                    blob_peak_in_output=_r(scan[i, 0].max().item(), 4),
                    blob_peak_at_output_row_col=[pk // SIZE, pk % SIZE] if scan[i, 0].max() > 0.05 else None)

    mirror_test = dict(
        blob=f"Gaussian (sigma 1.5 px, peak 1) at pixel row {blob_rc[0]}, col {blob_rc[1]} of a 64 px image "
             f"(box fractions x {_r((blob_rc[1] + 0.5) / SIZE, 4)}, y {_r((blob_rc[0] + 0.5) / SIZE, 4)}), channel 0",
        blob_cell=list(cell), mirrored_cell=list(mirror),
        selecting_blob_cell=probe(cell), selecting_mirrored_cell=probe(mirror),
        cell_whose_crop_centres_the_blob=[centred // k2, centred % k2],
        cells_with_over_half_the_blob=[[i // k2, i % k2] for i in (captured > 0.5).nonzero().flatten().tolist()])

    # the initial distribution: masses per layer and entropy, random inputs and zeros, module in train mode
    rand_m, rand_h, zero_m, zero_h, eval_m, eval_h = [], [], [], [], [], []
    for seed in MODULE_SEEDS:
        mod = _their_crop_module(repo, seed)
        x = torch.randn(BATCH, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(1000 + seed))
        with torch.no_grad():
            lp = torch.log_softmax(_logits(mod, x), -1)
            rand_m.append(_layer_masses(lp, slices))
            rand_h.append(_entropy(lp))
            lz = torch.log_softmax(_logits(mod, torch.zeros_like(x)), -1)
            zero_m.append(_layer_masses(lz, slices))
            zero_h.append(_entropy(lz))
            mod.augmentation.get_param.eval()  # not their use: their module is never put in eval mode
            le = torch.log_softmax(_logits(mod, x), -1)
            eval_m.append(_layer_masses(le, slices))
            eval_h.append(_entropy(le))
    cat = torch.cat
    rand_m, rand_h, zero_m, zero_h = cat(rand_m), cat(rand_h), cat(zero_m), cat(zero_h)
    eval_m, eval_h = cat(eval_m), cat(eval_h)
    w = torch.tensor([math.exp(b - lc) for b, lc in zip(ap.bias, ap.log_nums_crop, strict=True)])
    per_crop = torch.cat([torch.full((e - s,), float(v)) for (s, e), v in zip(slices, w, strict=True)])
    p_theory = per_crop / per_crop.sum()
    theory_m = [float(p_theory[s:e].sum()) for s, e in slices]
    theory_h = float(-(p_theory * p_theory.log()).sum())

    def stats(v):
        return dict(mean=_r(v.mean().item()), sd=_r(v.std().item()), min=_r(v.min().item()), max=_r(v.max().item()))

    initial = dict(
        layer_order=[lay["layer"] for lay in layers],
        bias_only=dict(mass_per_layer=_r(theory_m), entropy=_r(theory_h),
                       about="logits = layer bias - log(#cells): what the module outputs when its heads give 0"),
        zeros=dict(mass_per_layer=_r(zero_m.mean(0).tolist()), entropy=stats(zero_h)),
        random=dict(mass_per_layer=_r(rand_m.mean(0).tolist()), mass_per_layer_sd=_r(rand_m.std(0).tolist()),
                    entropy=stats(rand_h), inputs="torch.randn(100, 3, 64, 64) per module seed, train mode"),
        random_eval_mode=dict(mass_per_layer=_r(eval_m.mean(0).tolist()), entropy=stats(eval_h)),
        max_entropy=_r(math.log(n)), module_seeds=list(MODULE_SEEDS), batch=BATCH)

    # max_black_ratio: their filter of border crops (absent from the supervised config: 1.0, no filter)
    from InstaAug_module import learnable_invariance

    black = {}
    for ratio in (1.0, 0.5, 0.2, 0.0):
        torch.manual_seed(0)
        with _quiet():
            m = learnable_invariance(_config(repo, CROP_CONFIG, max_black_ratio=ratio), device="cpu")
        g = m.augmentation.get_param
        black[str(ratio)] = dict(margin_cells_dropped_per_side=[int(v) for v in g.mask],
                                 cells_per_layer=[int(c.shape[0]) for c in g.centers_crop],
                                 num_crops=int(m.augmentation.distC_crop.centers.shape[0]))
    return dict(
        settings=dict(config=CROP_CONFIG, crop_layer=cfg["crop_layer"], crop_layer_bias=cfg["crop_layer_bias"],
                      input=[3, SIZE, SIZE], module_seed=0,
                      classes="InstaAug_module.learnable_invariance -> augmentation.Augmentation(PreActResFeatureNet "
                              "of architectures/mixmo_resnet_feature.py) -> Image2AugmentParam (logits) + "
                              "distribution.Cropping_Categorical_Dist_ConvFeature (sampler)"),
        module=dict(parameters=int(sum(p.numel() for p in li.parameters())),
                    about="conv3x3 stride 2 (3->8), pre-act blocks 8 (stride 1), 16 (stride 2), 32 (stride 2); "
                          "crop heads: 1x1 conv (16->1) on the 16x16 map, 1x1 conv (32->1) on the 8x8 map, 8x8 conv "
                          "(32->1) for the global crop, head weights /10, plus a zero-initialised per-position "
                          "bias (AddBias)"),
        num_crops=n, layers=layers,
        index_order="layer by layer in crop_layer order; inside a layer row-major over the feature map: index "
                    "first_index + r * cells + c is the cell at row r, column c",
        convention="boxes are [cx, cy, side]: the centre's x (column, 0 = left edge, 1 = right edge) and y (row, "
                   "0 = top edge) and the side, as fractions of the image, in the align_corners=False sense: "
                   "_ours_equivalent_crop (affine [[s, 0, 2cx-1], [0, s, 2cy-1]], bilinear, zero fill, "
                   "align_corners=False, output 64 px) with these boxes gives their crops "
                   "up to float32 rounding of the two sampling grids (crops_reproduced_with_boxes_max_abs_diff, on "
                   "randn images). "
                   "Their code: affine [[s, 0, -n_row], [0, s, -n_col]] with align_corners=True "
                   "(augmentation.py:420-436, math_op.py:67-74), where (n_row, n_col) = (-1 + (2r+1)/K, "
                   "-1 + (2c+1)/K) is their table of centres for cell (r, c) of a K x K layer "
                   "(mixmo_resnet_feature.py:277-293). The row coordinate drives x and the column drives y, both "
                   "negated: cell (r, c) cuts the crop centred at the cell (K-1-c, K-1-r), the mirror across the "
                   "anti-diagonal. align_corners=True also pulls the centres toward the middle by a factor 63/64: "
                   "cx = ((1 - n_row) / 2 * 63 + 0.5) / 64",
        boxes=_r(mirrored.tolist(), 8),
        boxes_about="the mirror formula of `convention`, checked against the boxes measured by pushing a coordinate "
                    "image (pixel centres k + 0.5) through their sampler and crop path with one dominant logit per "
                    "crop: the centre is the mean of the 2x2 middle outputs, the side the step between two middle "
                    "outputs (float32 measurement)",
        measured_vs_mirror_formula_max_error=_r((boxes.double() - mirrored).abs().max().item(), 8),
        measured_vs_unmirrored_formula_max_error=_r((boxes.double() - unmirrored).abs().max().item(), 8),
        measured_side_y_equals_x=bool(torch.allclose(side_x, side_y, atol=1e-4)),
        intended_sampler_drew_the_one_hot_crop=chosen_ok,
        cell_centres_nominal=dict(about="the cell's own centre (x, y) = ((2c+1)/2K, (2r+1)/2K), what a crop 'centred "
                                        "on its cell' would use", first_and_last=_r(nominal[[0, n - 1]].tolist())),
        crops_reproduced_with_boxes_max_abs_diff=_r((theirs - ours).abs().max().item(), 8),
        inside_fraction=_r(inside.tolist(), 4),
        inside_fraction_about="mean of a ones channel over each 64 px crop: the share of its samples inside the "
                              "image (the rest is zero fill; bilinear at the border)",
        crops_crossing_the_border=int((inside < 0.999).sum()),
        mirror_test=mirror_test, initial=initial,
        max_black_ratio=dict(config_value=cfg.get("max_black_ratio"), default=1.0, variants=black,
                             about="config_crop_supervised.yaml has no max_black_ratio: Augmentation uses 1.0 "
                                   "(augmentation.py:229-232), mask_for_no_padding(1.0) drops nothing, all "
                                   "321 crops stay. A ratio < 1 drops the m outermost rows and columns of cells of "
                                   "each layer, m the first j with 1 - (n_row[j,j] + 1 + s)^2 / (2s)^2 <= ratio "
                                   "(mixmo_resnet_feature.py:340-354; the centres are those before the mirror)"),
        centre_interval_and_size_range=dict(center_intervals=[float(v) for v in ap.center_intervals_crop],
                                            size_ranges=[[float(a) for a in r] for r in ap.scope_ranges_crop],
                                            about="their forward calls the sampler with smooth=True (jitter of the "
                                                  "centre by U[-interval, interval], side drawn in the size "
                                                  "range), but conv.center(interval=False) and "
                                                  "conv.scope(ranges=False) make both degenerate: no jitter"))


# ----------------------------------------------------------------------------- sampler
def _exp_noise_law(p):
    """The exact law of argmax_i(log p_i + E_i), E_i ~ Exp(1) i.i.d.:
    P(k) = p_k * int_0^{1/max_{i != k} p_i} prod_{i != k} (1 - p_i u) du  (u = exp(-t); the integrand is a
    polynomial on that interval, so Gauss-Legendre with 600 nodes is exact to rounding)."""
    import numpy as np

    p = np.asarray(p, dtype=np.float64)
    nodes, weights = np.polynomial.legendre.leggauss(600)
    out = np.empty_like(p)
    for k in range(len(p)):
        others = np.delete(p, k)
        upper = min(1 / p[k], 1 / others.max())
        u = (nodes + 1) / 2 * upper
        logprod = np.log1p(-np.outer(u, others)).sum(1)
        out[k] = p[k] * (weights * np.exp(logprod)).sum() * upper / 2
    return out


def _their_draws(dist, logits_row, draws, seed, chunk=20_000):
    """``draws`` samples from their ``Cropping_Categorical_Dist_ConvFeature.forward`` (n_copies=1, as their
    training), the logits repeated over the rows; returns the counts per category."""
    import torch

    torch.manual_seed(seed)
    counts = torch.zeros(logits_row.shape[-1], dtype=torch.long)
    done = 0
    with torch.no_grad():
        while done < draws:
            b = min(chunk, draws - done)
            tparams, _, _, _ = dist(logits_row.expand(b, -1).contiguous(), n_copies=1, avoid_black_margin=False)
            counts += torch.bincount(_index_of(dist, tparams).flatten(), minlength=counts.numel())
            done += b
    return counts


def _gumbel_draws(logp, draws, seed):
    import torch

    g = torch.Generator().manual_seed(seed)
    u = torch.rand(draws, logp.numel(), generator=g).clamp_min(1e-20)
    return torch.bincount((logp - torch.log(-torch.log(u))).argmax(1), minlength=logp.numel())


def _compare(p, counts, gumbel_counts, law, draws):
    import numpy as np

    f = counts.double().numpy() / draws
    fg = gumbel_counts.double().numpy() / draws
    p = np.asarray(p, dtype=np.float64)
    k = int(p.argmax())
    return dict(draws=draws, tv_theirs_vs_p=_r(0.5 * np.abs(f - p).sum()),
                tv_gumbel_control_vs_p=_r(0.5 * np.abs(fg - p).sum()),
                tv_theirs_vs_exp_noise_law=_r(0.5 * np.abs(f - law).sum()),
                tv_exp_noise_law_vs_p=_r(0.5 * np.abs(law - p).sum()),
                exp_noise_law_sums_to=_r(law.sum(), 8),
                most_likely=dict(index=k, p=_r(p[k]), freq_theirs=_r(f[k]), exp_noise_law=_r(law[k]),
                                 freq_gumbel=_r(fg[k]), sd_of_freq=_r(math.sqrt(p[k] * (1 - p[k]) / draws)))), f, fg


def sampler(repo: Path) -> dict:
    import numpy as np
    import torch
    from InstaAug_module.distribution import Cropping_Categorical_Dist_ConvFeature

    li = _their_crop_module(repo, 0)
    dist = li.augmentation.distC_crop
    torch.manual_seed(FIXED_INPUT_SEED)
    x = torch.randn(1, 3, SIZE, SIZE)
    with torch.no_grad():
        logits = _logits(li, x)
    logp = torch.log_softmax(logits, -1)[0]
    p = logp.exp().double().numpy()
    counts = _their_draws(dist, logits, DRAWS, seed=0)
    law = _exp_noise_law(p)
    summary, f, fg = _compare(p, counts, _gumbel_draws(logp, DRAWS, seed=0), law, DRAWS)
    top = np.argsort(-p)[:20]
    slices = [(0, 256), (256, 320), (320, 321)]
    crop321 = dict(**summary,
                   per_layer=dict(p=_r([p[a:b].sum() for a, b in slices]),
                                  freq_theirs=_r([f[a:b].sum() for a, b in slices]),
                                  exp_noise_law=_r([law[a:b].sum() for a, b in slices]),
                                  freq_gumbel=_r([fg[a:b].sum() for a, b in slices])),
                   top20=[dict(index=int(i), p=_r(p[i]), freq_theirs=_r(f[i]), exp_noise_law=_r(law[i]),
                               freq_gumbel=_r(fg[i])) for i in top],
                   entropy=_r(float(-(p * np.log(p)).sum())),
                   entropy_of_freq_theirs=_r(float(-(f[f > 0] * np.log(f[f > 0])).sum())))

    # the hand-made 5-category distribution, through the same class of theirs (5 dummy crops)
    five = torch.tensor(FIVE, dtype=torch.float64)
    d5 = Cropping_Categorical_Dist_ConvFeature([torch.tensor([[0.1 * i, 0.0] for i in range(5)]).reshape(5, 1, 2)],
                                               [0.0], [0.5], [[0.5, 0.5]])
    lp5 = five.log().float()[None]
    c5 = _their_draws(d5, lp5, DRAWS, seed=0)
    law5 = _exp_noise_law(FIVE)
    s5, f5, fg5 = _compare(FIVE, c5, _gumbel_draws(lp5[0], DRAWS, seed=0), law5, DRAWS)
    five_rec = dict(p=list(FIVE), freq_theirs=_r(f5.tolist()), exp_noise_law=_r(law5.tolist()),
                    freq_gumbel=_r(fg5.tolist()), **s5)

    # top-n for test-time augmentation: the sampler with output_max = n (what their eval path passes)
    top_n = {}
    with torch.no_grad():
        params_crop = li.augmentation.get_param(x)[0]
        for k in TOP_NS:
            tp, _, _, _ = dist(params_crop, n_copies=k, avoid_black_margin=False, output_max=k)
            idx = _index_of(dist, tp)[0].tolist()
            top_n[str(k)] = dict(indices=idx, p=_r(p[idx].tolist()),
                                 equals_top_k_by_probability=idx == np.argsort(-p, kind="stable")[:k].tolist())
    return dict(
        settings=dict(draws=DRAWS, seed="torch.manual_seed(0) before the draws (their sampler uses the global "
                                        "generator); Gumbel control: torch.Generator().manual_seed(0)",
                      fixed_input=f"module of config_crop_supervised.yaml under torch.manual_seed(0); input: "
                                  f"torch.manual_seed({FIXED_INPUT_SEED}); torch.randn(1, 3, 64, 64); module in "
                                  "train mode (as theirs), batch of 1"),
        rule="their sampler (distribution.py:93-95): rand = U(0,1) of prob's shape; samples = (-log(rand) + "
             "logprob).topk(n_copies): argmax(log p + E), E ~ Exp(1), without replacement for n_copies > 1. "
             "The Gumbel-max trick needs -log(-log U). Exact law of theirs: P(k) = p_k int_0^{1/max_{i!=k} p_i} "
             "prod_{i!=k} (1 - p_i u) du (exp_noise_law)",
        fixed_input_logprobs=_r(logp.tolist()),
        crops_321=crop321, five=five_rec,
        top_n=dict(**top_n, about="eval path: model_wrapper.py:321 calls Li(x, n_copies=test_copies, "
                                  "output_max=test_copies); distribution.py:98-100 then takes logprob.topk(n) "
                                  "(deterministic, sorted by probability), and smooth is switched off"))


# ----------------------------------------------------------------------------- scheduler
def _sequences() -> dict:
    below_rising = ([2.0 + 0.003 * i for i in range(10)] + [2.03 + 0.01 * i for i in range(1, 11)]
                    + [2.2, 2.5, 2.9, 3.1, 3.2])
    above = [4.0] * 10 + [4.0 - 0.003 * i for i in range(1, 11)] + [3.97 - 0.01 * i for i in range(1, 11)] + [3.4]
    inside = [3.0, 3.1, 3.25, 3.4, 3.5, 3.2, 3.3, 3.0, 3.5]
    oscillating = [2.95, 3.05] * 5 + [2.99, 2.98] * 5 + [2.99, 2.992, 2.994, 2.996, 2.998] + [3.01, 2.99, 2.99]
    long_below = [2.0] * 80 + [4.0] * 120
    return dict(
        a_below_then_rising=dict(entropy=below_rising, about="below the band: rising by 0.003 per check (not "
                                 "more than 0.005: lambda still rises), then by 0.01 (lambda holds), then into the "
                                 "band"),
        b_above=dict(entropy=above, about="above the band: flat, then falling by 0.003 (lambda still falls), then "
                                          "by 0.01 (lambda holds), then inside"),
        c_inside=dict(entropy=inside, about="inside the band, both ends included (3.0 and 3.5: strict comparisons)"),
        d_oscillating=dict(entropy=oscillating, about="across H_min each check, then below with alternating "
                                                      "rises of 0.01 and falls, then slow rises of 0.002, then "
                                                      "out and back"),
        e_long_below=dict(entropy=[round(v, 6) for v in long_below],
                          about="80 checks far below (the net cap of 50 steps up), then 120 far above (the cap "
                                "is on the net count: 100 steps down, to 50 below lambda0)"))


def scheduler(repo: Path) -> dict:
    from InstaAug_module.scheduler import Scheduler

    seqs = _sequences()
    for rec in seqs.values():
        s = Scheduler(BAND[0], BAND[1])
        lam, factors, lams, status, side = LAM0, [], [], [], []
        for h in rec["entropy"]:
            f = s.step(h)
            lam *= f
            factors.append(_r(f, 10))
            lams.append(_r(lam, 10))
            status.append(s.status)
            side.append(s.small_or_large)
        rec["entropy"] = _r(rec["entropy"], 6)
        rec.update(factor=factors, lam=lams, status=status, small_or_large=side,
                   increases=sum(f > 1 for f in factors), decreases=sum(f < 1 for f in factors),
                   final_lam=lams[-1])
    s = Scheduler(BAND[0], BAND[1])
    return dict(
        settings=dict(lam0=LAM0, band=list(BAND), alpha=s.alpha, max_abs_status=s.max_abs_status, tol=0.005,
                      initial_last_value=s.last_value, initial_small_or_large=s.small_or_large),
        rule="step(h) (scheduler.py:12-46): if h < H_min: if small_or_large != -1: small_or_large = -1 (no action) "
             "elif not h > last + 0.005: action = up. elif h > H_max: mirror (small_or_large = +1 first; then down "
             "unless h < last - 0.005). else (H_min <= h <= H_max): small_or_large = 0. Always last = h. up and "
             "status < 50: status += 1, return 1.2; down and status > -50: status -= 1, return 1/1.2; else return 1. "
             "The caller multiplies lambda by the return (abstract_learner.py:339-342), once per epoch on the "
             "test set's mean entropy. status (the net count) is never reset; only small_or_large is",
        sequences=seqs)


# ----------------------------------------------------------------------------- rotation
def _tensorboard_stub() -> None:
    try:
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        stub = types.ModuleType("torch.utils.tensorboard")

        class SummaryWriter:  # their only use, save_tb, is commented out
            def __init__(self, *args, **kwargs):
                pass

            def add_scalar(self, *args, **kwargs):
                pass

        stub.SummaryWriter = SummaryWriter
        sys.modules["torch.utils.tensorboard"] = stub


def _numpy_newshape() -> None:
    import inspect

    import numpy as np

    if "newshape" in inspect.signature(np.reshape).parameters:
        return
    reshape = np.reshape

    def reshape_newshape(a, shape=None, *args, newshape=None, **kwargs):
        return reshape(a, newshape if shape is None else shape, *args, **kwargs)

    np.reshape = reshape_newshape


def _patch_rotation() -> None:
    """PATCHES P1-P3, applied around their classes (their files are untouched)."""
    import torch.nn.functional as F
    from InstaAug_module import augmentation as A

    if getattr(A, "_instaaug_runs_patched", False):
        return
    for name in ("centers_crop", "center_intervals_crop", "scopes_crop", "scope_ranges_crop"):  # P1
        setattr(A.Image2AugmentParam, name, [])
    their_dist = A.Cropping_Categorical_Dist_ConvFeature

    def crop_dist(centers, *args, **kwargs):
        return None if len(centers) == 0 else their_dist(centers, *args, **kwargs)

    A.Cropping_Categorical_Dist_ConvFeature = crop_dist
    their_forward = A.Augmentation.forward_

    def forward_(self, x, n_copies=1, **kwargs):  # P2, P3
        try:
            return their_forward(self, x, n_copies=n_copies, **kwargs)
        except TypeError as err:
            if "not callable" not in str(err) or not self.transform_rotation or "crop" in self.transform:
                raise
        theta = self.dist_rotation.perturbation[..., 0, 0]  # the angles their forward_ drew before failing
        xt = x.repeat(n_copies, 1, 1, 1)
        mats = A.Generators.r(theta)
        grid = F.affine_grid(mats[:, :2, :], size=xt.size(), align_corners=True)
        zeros = xt.new_zeros(xt.shape[0])
        return F.grid_sample(xt, grid, align_corners=True), zeros, self.dist_rotation.entropy_every, zeros

    A.Augmentation.forward_ = forward_
    A._instaaug_runs_patched = True


def _mario_data(repo: Path):
    from importlib import util

    spec = util.spec_from_file_location("their_mario_iggy", repo / "examples/mixmo-pytorch/mixmo/loaders/mario_iggy.py")
    mod = util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    folder = str(repo / "examples/mixmo-pytorch/mixmo/loaders") + "/"
    # their MarioIggyLoader (loader.py:239-240): 1000 train (data seed 88), 500 test (89), max_rot_angle pi/2
    train = mod.MarioIggy.generate_mario_data(folder, n_train=1000, n_test=500, max_rot_angle=math.pi / 2, dataseed=88)
    test = mod.MarioIggy.generate_mario_data(folder, n_train=1000, n_test=500, max_rot_angle=math.pi / 2, dataseed=89)
    return train[0], test[1]


def _bounds(li, x):
    """Their per-input rotation bounds (a, b) = sigmoid(p - 2) * pi (distribution.py:418), radians."""
    import torch

    with torch.no_grad():
        p = torch.cat([li.augmentation.get_param(x[i:i + 100])[3] for i in range(0, len(x), 100)])
    return (torch.sigmoid(p - 2) * math.pi)[:, :, 0, 0]


def _bound_stats(b) -> dict:
    return dict(upper_a=dict(mean=_r(b[:, 0].mean().item()), sd=_r(b[:, 0].std().item()),
                             min=_r(b[:, 0].min().item()), max=_r(b[:, 0].max().item())),
                lower_b=dict(mean=_r(b[:, 1].mean().item()), sd=_r(b[:, 1].std().item()),
                             min=_r(b[:, 1].min().item()), max=_r(b[:, 1].max().item())),
                width_mean=_r((b[:, 0] + b[:, 1]).mean().item()))


def _unpatched_errors(repo: Path) -> dict:
    """What their released code does when asked for a rotation or a colour module (before any patch)."""
    import traceback

    import torch
    from InstaAug_module import learnable_invariance

    out = {}
    for name, rel in (("rotation", ROT_CONFIG), ("color", "InstaAug_module/configs/config_color_jittering_supervised"
                                                         ".yaml")):
        try:
            with _quiet():
                torch.manual_seed(0)
                learnable_invariance(_config(repo, rel), device="cpu")
            out[name] = "built"
        except Exception as err:  # noqa: BLE001 (recording their failure is the point)
            tb = traceback.extract_tb(err.__traceback__)[-1]
            out[name] = f"{type(err).__name__} at {Path(tb.filename).name}:{tb.lineno}: {err}"
    return out


def _color_after_p1(repo: Path) -> str:
    """Their colour module (config_color_jittering_supervised.yaml) once P1 lets it be built: one forward on
    200 px inputs (its RawFooT feature net ends in a 25 x 25 conv, mixmo_resnet_feature_rawfoot.py:153)."""
    import traceback

    import torch
    from InstaAug_module import learnable_invariance

    try:
        with _quiet():
            torch.manual_seed(0)
            li = learnable_invariance(_config(repo, "InstaAug_module/configs/config_color_jittering_supervised.yaml"),
                                      device="cpu")
            li(torch.rand(2, 3, 200, 200) * 2 - 1)
        return "ran"
    except Exception as err:  # noqa: BLE001
        tb = traceback.extract_tb(err.__traceback__)[-1]
        return f"{type(err).__name__} at {Path(tb.filename).name}:{tb.lineno}: {err}"


@contextlib.contextmanager
def _their_script(repo: Path, config_rel: str, li_cfg: dict | None, seed: int, edit=None, dataplace="data"):
    """Their scripts/train.py set-up, as their ``train()`` does it (parse_args, transform_args, get_loader,
    learnable_invariance, Learner), in a temporary working folder that links their ``mixmo``, ``scripts`` and
    ``config``; ``edit(config_args)`` sets this run's numbers; ``li_cfg`` None: no module (their
    ``{'li_flag': False}``). Yields ``(learner, work folder, their captured output)``."""
    import yaml

    work = Path(tempfile.mkdtemp(prefix="instaaug_run_"))
    mixmo = repo / "examples" / "mixmo-pytorch"
    for name in ("mixmo", "scripts", "config"):
        (work / name).symlink_to(mixmo / name)
    argv_li = []
    if li_cfg is not None:
        (work / "li.yaml").write_text(yaml.safe_dump(li_cfg))
        argv_li = ["--Li_config_path", "li.yaml"]
    here, argv = os.getcwd(), sys.argv
    os.chdir(work)  # their Mario-Iggy loader reads "mixmo/loaders/mario_iggy.npz" relative to the working directory
    sys.path.insert(0, str(work))
    try:
        from InstaAug_module import learnable_invariance
        from mixmo.learners.learner import Learner
        from mixmo.loaders import get_loader
        from scripts import train as T

        sys.argv = ["train", "--config_path", config_rel, "--dataplace", str(dataplace), "--saveplace", "runs",
                    "--info", "run", "--from_scratch", "--debug", "1", "--seed", str(seed), *argv_li]
        log = io.StringIO()
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            args = T.parse_args()
            config_args, device, _ = T.transform_args(args)
            if edit is not None:
                edit(config_args)
            li_configs = yaml.safe_load(open(args.Li_config_path)) if li_cfg is not None else {"li_flag": False}
            dloader = get_loader(config_args, dataplace=args.dataplace, train_name=args.train_name)
            li = learnable_invariance(li_configs) if li_configs["li_flag"] else None  # cuda if there is one
            learner = Learner(config_args=config_args, Li_configs=li_configs, dloader=dloader, device=device, Li=li)
        yield learner, work, log
    finally:
        sys.argv = argv
        os.chdir(here)
        sys.path.remove(str(work))
        shutil.rmtree(work, ignore_errors=True)


def _their_log(work: Path) -> list[dict]:
    """Their per-epoch CSV log (accuracy, losses, entropy, the module's lr), rows as dicts."""
    import csv

    logs = sorted((work / "runs").rglob("*.csv"))
    return list(csv.DictReader(logs[0].open())) if logs else []


def _train_theirs(repo: Path, epochs: int, module_lr: float, seed: int, data, warmup: int | None = None,
                  keep_bounds: bool = False, entropy_weight: float | None = None) -> dict:
    """Their training script on their Mario-Iggy config with their rotation module config; only nb_epochs, the
    module's lr (and, if given, its warm-up epochs) are set here. Records the bounds after every epoch (and, with
    ``keep_bounds``, every test image's final bounds)."""
    li_cfg = _config(repo, ROT_CONFIG, lr=module_lr, **({} if warmup is None else dict(warmup_period=warmup)),
                     **({} if entropy_weight is None else dict(entropy_weights=[entropy_weight] * 2)))

    def edit(cfg):
        cfg["training"]["nb_epochs"] = epochs

    with _their_script(repo, f"config/marioiggy/{Path(MARIO_CONFIG).name}", li_cfg, seed, edit) as (learner, work,
                                                                                                   log):
        li = learner.model_wrapper.Li
        x_train, (x_test, _) = data[0][0], data[1]
        per_epoch, t0 = [dict(epoch=0, test=_bound_stats(_bounds(li, x_test)),
                              train=_bound_stats(_bounds(li, x_train)))], time.perf_counter()
        for epoch in range(1, epochs + 1):  # their train() loop (train.py:175-180)
            te = time.perf_counter()
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                learner.dloader.traindatasetwrapper.set_ratio_epoch(ratioepoch=epoch / epochs)
                learner.train(epoch)
            sec = time.perf_counter() - te
            per_epoch.append(dict(epoch=epoch, seconds=_r(sec, 1), entropy_weights=_r(li_cfg["entropy_weights"]),
                                  test=_bound_stats(_bounds(li, x_test)), train=_bound_stats(_bounds(li, x_train))))
        for row in _their_log(work):  # their own log: the module lr used in the epoch, their scheduler's input
            rec = per_epoch[int(row["epoch"])]
            rec.update(module_lr_used=float(row["general/augmentation_lr"]), their_test_entropy=row["test/entropy"],
                       their_test_accuracy=row["test/accuracy"], their_train_ce=float(row["train/ce0"]))
        final = _bounds(li, x_test) if keep_bounds else None
        return dict(epochs=epochs, module_lr=module_lr, seed=seed, seconds=_r(time.perf_counter() - t0, 1),
                    device=str(learner.device), per_epoch=per_epoch, warmup_epochs=li_cfg["warmup_period"],
                    **({} if final is None else dict(test_bounds=dict(upper_a=[_r(v, 5) for v in final[:, 0]],
                                                                      lower_b=[_r(v, 5) for v in final[:, 1]]))),
                    moved_test_mean=dict(upper_a=_r(per_epoch[-1]["test"]["upper_a"]["mean"]
                                                    - per_epoch[0]["test"]["upper_a"]["mean"]),
                                         lower_b=_r(per_epoch[-1]["test"]["lower_b"]["mean"]
                                                    - per_epoch[0]["test"]["lower_b"]["mean"])))


def rotation(repo: Path, epochs: int = 1, module_lrs=(1e-5, 1e-3), seed: int = 0) -> dict:
    import torch

    unpatched = _unpatched_errors(repo)
    _patch_rotation()
    from InstaAug_module import learnable_invariance

    color_after_p1 = _color_after_p1(repo)
    data = _mario_data(repo)
    (x_train, _), (x_test, _) = data
    torch.manual_seed(seed)
    with _quiet():
        li = learnable_invariance(_config(repo, ROT_CONFIG), device="cpu")
    initial = dict(mario_iggy_train=_bound_stats(_bounds(li, x_train)),
                   mario_iggy_test=_bound_stats(_bounds(li, x_test)),
                   random=_bound_stats(_bounds(li, torch.randn(100, 3, SIZE, SIZE,
                                                               generator=torch.Generator().manual_seed(7)))),
                   bias_only=_r(math.pi / (1 + math.exp(2))),
                   about="module of config_rotation_supervised.yaml under torch.manual_seed(0), train mode, batches "
                         "of 100; radians; bias_only = sigmoid(-2) * pi")
    torch.manual_seed(0)
    with _quiet():
        x_out, logprob, ent, _ = li(x_test[:8])
    sample = dict(output_shape=list(x_out.shape), entropy_shape=list(ent.shape),
                  entropy_equals_mean_bounds=bool(torch.allclose(ent, _bounds(li, x_test[:8]), atol=1e-6)))
    _tensorboard_stub()
    _numpy_newshape()
    runs = [_train_theirs(repo, epochs, lr, seed, data) for lr in module_lrs]
    steps_per_epoch = 1000 // 100
    per_epoch_s = [e["seconds"] for r in runs for e in r["per_epoch"] if e["epoch"] > 0]
    # their module lr per epoch: lr * e / 10 for e < 10, then lr (abstract_learner.py:316-322); sum of lr x steps
    their_lr_steps = steps_per_epoch * (sum(e / 10 for e in range(1, 10)) + 141) * _config(repo, ROT_CONFIG)["lr"]
    for r in runs:
        used = sum(steps_per_epoch * e.get("module_lr_used", 0.0) for e in r["per_epoch"])
        r["lr_steps"] = used
        if used > 0:
            r["drift_per_lr_step"] = {k: _r(v / used, 3) for k, v in r["moved_test_mean"].items()}
            r["linear_extrapolation_to_their_schedule"] = {k: _r(v / used * their_lr_steps, 3)
                                                          for k, v in r["moved_test_mean"].items()}
    return dict(
        settings=dict(config=ROT_CONFIG, classifier_config=MARIO_CONFIG, their_epochs=150,
                      their_module_lr=_config(repo, ROT_CONFIG)["lr"], steps_per_epoch=steps_per_epoch,
                      data="their bundled examples/mixmo-pytorch/mixmo/loaders/mario_iggy.npz (two 32 px sprites, "
                           "pixel-doubled to 64 px), 1000 train (data seed 88) / 500 test (89), angles "
                           "U[-pi/4, pi/4] (+pi for the upside-down classes 1 and 3)"),
        unpatched=unpatched, color_after_P1=color_after_p1, patches=PATCHES, initial_bounds=initial,
        forward_after_patches=sample,
        formulas=dict(
            bounds="distribution.py:418: perturbation_range = sigmoid(param - 2) * pi, param = the (B, 2, 1, 1) "
                   "output of the global head (layer -1, 8x8 conv, weights / 10, zero bias): channel 0 is a (upper "
                   "bound), channel 1 is b (lower bound's magnitude)",
            sample="distribution.py:420-423: r ~ U(0, 1) (torch.rand, one per input); theta = r * a - (1 - r) * b, "
                   "so theta ~ U[-b, a], differentiable in a and b (reparameterised); augmentation.py:362-368: "
                   "rotation matrix [[cos, -sin], [sin, cos]] (math_op.py:47-55), F.affine_grid / F.grid_sample, "
                   "bilinear, zero fill, align_corners=True, same size",
            entropy="distribution.py:428: entropy_every = perturbation_range.mean(dim=[2, 3]) = (a, b) per input: "
                    "the bounds themselves, not log(a + b); loss.py:324 subtracts sum_i weight_i * mean(entropy_i), "
                    "weights [0.1, 0.1] (config), scheduler band [0.0, 3.14] for each, which a, b < pi never "
                    "leave (so lambda stays 0.1)"),
        runs=runs,
        their_schedule_lr_steps=_r(their_lr_steps, 8),
        extrapolation_about="moved_test_mean: change of the mean bounds over the test images after the epochs "
                            "run (radians); drift_per_lr_step: that change over the sum of the module lr over the "
                            "steps; linear_extrapolation_to_their_schedule: that drift times the sum of lr over "
                            "their 150 epochs (1,500 steps, warm-up included), as if the gradient held; it need not",
        full_run_estimate=dict(seconds_per_epoch=per_epoch_s,
                               their_150_epochs_hours_at_fastest=_r(150 * min(per_epoch_s) / 3600, 2),
                               about="their classifier is mixmo's PreActResNet-18 (64-512 channels, 32x32 after a "
                                     "stride-2 stem) at batch 100; each step is a classifier step plus a module step "
                                     "through the classifier (the pathwise gradient), and each epoch ends with a "
                                     "pass over the 500 test images"))


# ----------------------------------------------------------------------------- rotation at the book's cpu setting
# Chapter D1's cpu profile (invlib/papers/d/rotations.py SETTINGS["cpu"]): 10 epochs of 2,000 sprites at batch 64
# (320 steps), module lr 0.01 with a one-epoch (32-step) warm-up, a classifier of widths 8-64. Their script on their
# data (1,000 sprites, batch 100: 10 steps an epoch) with the same number of steps, the same module lr (in their
# optimizer: the module's parameter group of their SGD; also 1e-3 and 1e-4, since SGD is not Adam) and the same
# warm-up in steps, and their ResNet-18 at 1/8 of its widths (8-64 channels after their 64-channel stem conv, where
# our cpu classifier has 8-64).
CPU_SETTING = dict(epochs=32, module_lrs=(0.01, 1e-3, 1e-4), warmup_epochs=3, width=0.125)
WIDTH_PATCH = ("setting, not a fix: their PreActResNet._init_block asserts widen_factor in [1, 2, 3] "
               "(mixmo/networks/resnet.py:83); the script builds it with 1 and then multiplies the four block "
               "widths (64, 128, 256, 512) by `width`, the stem conv keeping its 64 channels")


def _narrow_resnet(repo: Path, width: float) -> None:
    mixmo = str(repo / "examples" / "mixmo-pytorch")
    if mixmo not in sys.path:
        sys.path.append(mixmo)
    from mixmo.networks import resnet as R

    if getattr(R.PreActResNet, "_instaaug_runs_width", None) == width:
        return
    their = getattr(R.PreActResNet, "_instaaug_runs_their_init_block", R.PreActResNet._init_block)

    def _init_block(self, widen_factor):
        their(self, widen_factor)
        self._nChannels = [self._nChannels[0]] + [max(1, round(c * width)) for c in self._nChannels[1:]]

    R.PreActResNet._instaaug_runs_their_init_block = their
    R.PreActResNet._init_block = _init_block
    R.PreActResNet._instaaug_runs_width = width


def _mario_test_angles(n_test: int = 500) -> list[float]:
    """Each test image's angle within its class: their loader draws the test angles on a grid (mario_iggy.py:78-92),
    r * pi/2 - pi/4 with r = k / 125, k = 0..124, for each of the four classes in turn (+pi for classes 1, 3)."""
    k = n_test // 4
    return [i / k * math.pi / 2 - math.pi / 4 for _ in range(4) for i in range(k)]


def _rotation_sign(repo: Path) -> int:
    """Which way their augmentation turns an image in their data's angle: an image their loader rotates to phi,
    turned by their augmentation's theta (Generators.r, affine_grid, align_corners=True; augmentation.py:362-368),
    matches their loader's image at phi + s * theta; returns s (measured on their Mario sprite)."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from InstaAug_module import augmentation as A

    sprite = torch.tensor(np.load(repo / "examples/mixmo-pytorch/mixmo/loaders/mario_iggy.npz")["mario"]).float()
    sprite = sprite.repeat_interleave(2, -1).repeat_interleave(2, -2)  # their pixel-doubling to 64 px

    def loader(phi):  # their loader's matrix (mario_iggy.py:140-150)
        c, s = math.cos(phi), math.sin(phi)
        m = torch.tensor([[[c, s, 0.0], [-s, c, 0.0]]])
        return F.grid_sample(sprite, F.affine_grid(m, list(sprite.shape), align_corners=True), align_corners=True)

    phi, theta = 0.3, 0.4
    mats = A.Generators.r(torch.tensor([[theta]]))
    x = loader(phi)
    turned = F.grid_sample(x, F.affine_grid(mats[:, :2, :], list(x.shape), align_corners=True), align_corners=True)
    err = {s: (turned - loader(phi + s * theta)).abs().mean().item() for s in (1, -1)}
    return min(err, key=err.get)


def rotation_cpu(repo: Path, epochs: int = CPU_SETTING["epochs"], module_lrs=CPU_SETTING["module_lrs"],
                 entropy_weights=(0.1,), warmup: int = CPU_SETTING["warmup_epochs"],
                 width: float = CPU_SETTING["width"], seed: int = 0, merge: dict | None = None) -> dict:
    """Their rotation training at the book's cpu setting, once per module lr and entropy weight (the chapter's lr
    and their config's weight 0.1 first): every test image's final bounds (a, b) and its angle, in chapter D1's
    convention, so that the chapter measures their run with its own code (``invlib.papers.d.rotations.slopes``).
    ``merge``: a stored record whose runs at other (lr, weight) pairs are kept."""
    _patch_rotation()
    _tensorboard_stub()
    _numpy_newshape()
    data = _mario_data(repo)
    _narrow_resnet(repo, width)
    sign = _rotation_sign(repo)
    # their augmentation turns an image at their angle phi to phi + sign * theta; chapter D1's angle is the one
    # that theta ~ U[-b, a] turns to phi + theta (so the label holds while |phi + theta| < pi/2): sign * phi
    phi = [_r(sign * p, 5) for p in _mario_test_angles(len(data[1][0]))]
    runs = []
    for lr in module_lrs:
        for w in entropy_weights:
            run = _train_theirs(repo, epochs, lr, seed, data, warmup=warmup, keep_bounds=True, entropy_weight=w)
            bounds = run.pop("test_bounds")
            runs.append(dict(module_lr=lr, entropy_weight=w, upper=bounds["upper_a"], lower=bounds["lower_b"],
                             test_accuracy=run["per_epoch"][-1].get("their_test_accuracy"), run=run))
    if merge is not None:
        done = {(r["module_lr"], r.get("entropy_weight", 0.1)) for r in runs}
        runs = [r for r in merge["runs"] if (r["module_lr"], r.get("entropy_weight", 0.1)) not in done] + runs
    return dict(
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        settings=dict(epochs=epochs, module_lrs=list(dict.fromkeys(r["module_lr"] for r in runs)),
                      warmup_epochs=warmup, width=width, seed=seed, steps=epochs * 10, batch_size=100,
                      their_entropy_weight=0.1, classifier="their mixmo PreActResNet-18 at `width` of its block "
                      "widths", data="their Mario-Iggy (1,000 train, 500 test, 64 px)",
                      chapter="d1_rotated_sprites cpu: 10 epochs x 32 steps (2,000 sprites, batch 64), module lr "
                      "0.01 (Adam there), 1-epoch warm-up, conv4 widths 8-64"),
        width_patch=WIDTH_PATCH, rotation_sign=sign,
        about="phi: each test image's angle within its class in chapter D1's convention (their loader's angle "
              "times rotation_sign); runs[i].upper, .lower: their module's final a, b (radians) per test image; "
              "entropy_weight: both weights of their config (theirs: 0.1)",
        phi=phi, runs=runs)


# ----------------------------------------------------------------------------- crops on scenes at the cpu setting
# Chapter D2's cpu profile (invlib/papers/d/cropping.py SETTINGS["cpu"]): 2,000 train and 500 test scenes, 10 epochs
# at batch 128 (the first 2 the classifier alone), SGD lr 0.1, weight decay 5e-4, module lr 0.05 with a one-epoch
# warm-up, band [3.0, 3.5] from lambda 0.2, 8 test-time crops, small_resnet18_s4 (widths 16-128) at 56 px. Their
# script on the same scenes written as Tiny-ImageNet folders at 64 px (their crop module's input: 321 crops), with
# those numbers, their ResNet-18 at 1/4 of its block widths (16-128), and the rest theirs: their band check once per
# epoch, their top-n test-time crops, their classifier lr schedule and warm-up, their loader (flip, [-1, 1]).
CROP_CPU = dict(n_train=2000, n_test=500, size=64, epochs=10, pretrain_epochs=2, batch_size=128, lr=0.1,
                weight_decay=5e-4, module_lr=0.05, warmup_epochs=1, width=0.25, test_copies=8, seed=0)
TINY_CONFIG = "config/tiny/exp_tinyimagenet_res18_1net_standard_bar1_test.yaml"


def _scenes_as_tiny_imagenet(root: Path, s: dict):
    """Our ``scenes`` (invlib.data.load) written as their loader reads Tiny-ImageNet (loader.py:130-160, an
    ImageFolder each): ``root/tinyimagenet200-data/train/<class>/<i>.png`` and ``.../val/images/<class>/<i>.png``,
    class folders ``c00``, ``c01``, ... so that ImageFolder's sorted order is our label order. Returns the test
    Dataset (its boxes and labels, in the order written)."""
    from PIL import Image

    from invlib import data as invdata

    out = {}
    for split, n, sub in (("train", s["n_train"], "train"), ("test", s["n_test"], "val/images")):
        ds = invdata.load("scenes", split, n=n, size=s["size"], seed=s["seed"])
        for k in range(len(ds.classes)):
            (root / "tinyimagenet200-data" / sub / f"c{k:02d}").mkdir(parents=True, exist_ok=True)
        for i, (img, y) in enumerate(zip(ds.images, ds.labels)):
            path = root / "tinyimagenet200-data" / sub / f"c{int(y):02d}" / f"{i:05d}.png"
            Image.fromarray(img.permute(1, 2, 0).numpy()).save(path)
        out[split] = ds
    return out["test"]


class _TheirCrops:
    """What ``invlib.learned.instaaug.crop_measures`` reads of an InstaAugment, for their trained crop module: the
    log-probabilities of their 321 crops (their BatchNorm in train mode, batches of 100) and the boxes their code
    cuts (measured by ``crops``: the mirror included)."""

    categorical = True

    def __init__(self, li, boxes):
        import torch

        self.li, self.params = li, types.SimpleNamespace(boxes=torch.tensor(boxes, dtype=torch.float32))

    def distribution(self, x, y=None):
        import torch

        z = x.float() / 255 * 2 - 1  # their loader: ToTensor, Normalize(0.5, 0.5)
        with torch.no_grad():
            return torch.cat([torch.log_softmax(_logits(self.li, z[i:i + 100]), 1) for i in range(0, len(z), 100)])


def _their_crop_run(repo: Path, dataplace: Path, method: str, s: dict, num_classes: int, pretrained=None) -> dict:
    """One run of their training script on the scenes folders: ``none`` (no module), ``random crop`` (their data
    config's crop: RandomResizedCrop(64, scale=(0.08, 1))) or ``InstaAug`` (their crop module, started from
    ``pretrained``: their ``resume_classifier_only`` load of a network state). Returns their per-epoch log and,
    for ``none``, the network state after ``s["pretrain_epochs"]`` epochs."""
    import torch

    li_cfg = None
    if method == "InstaAug":
        li_cfg = _config(repo, CROP_CONFIG, lr=s["module_lr"], warmup_period=s["warmup_epochs"], load_li=False,
                         test_copies=s["test_copies"])
    epochs = s["epochs"] - (s["pretrain_epochs"] if method == "InstaAug" else 0)

    def edit(cfg):
        cfg["data"].update(num_classes=num_classes, crop=method == "random crop")
        cfg["training"].update(nb_epochs=epochs, batch_size=s["batch_size"])
        cfg["model_wrapper"]["optimizer"]["params"].update(lr=s["lr"], weight_decay=s["weight_decay"])

    with _their_script(repo, TINY_CONFIG, li_cfg, s["seed"], edit, dataplace) as (learner, work, log):
        t0, state = time.perf_counter(), None
        if pretrained is not None:  # their train(): learner.load_checkpoint(checkpoint, include_optimizer=False)
            ckpt = work / "pretrained.pt"
            torch.save({learner.model_wrapper.name + "_state_dict": pretrained}, ckpt)
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                learner.load_checkpoint(str(ckpt), include_optimizer=False, return_epoch=False)
        for epoch in range(1, epochs + 1):
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                learner.dloader.traindatasetwrapper.set_ratio_epoch(ratioepoch=epoch / epochs)
                learner.train(epoch)
            if method == "none" and epoch == s["pretrain_epochs"]:
                state = {k: v.detach().clone() for k, v in learner.model_wrapper.network.state_dict().items()}
        rows = _their_log(work)
        li = learner.model_wrapper.Li if method == "InstaAug" else None
        out = dict(method=method, epochs=epochs, seconds=_r(time.perf_counter() - t0, 1),
                   per_epoch=[dict(epoch=int(r["epoch"]), test_accuracy=r.get("test/accuracy"),
                                   train_ce=r.get("train/ce0"), entropy=r.get("test/entropy"),
                                   entropy_weight=r.get("general/entropy_weight"),
                                   module_lr=r.get("general/augmentation_lr")) for r in rows])
        return out, state, li


def crop_cpu(repo: Path, s: dict | None = None) -> dict:
    """Their crop training on ``scenes`` at chapter D2's cpu setting (``CROP_CPU``): none, random crop and InstaAug
    (after the classifier's first epochs alone, as D2), each test accuracy from their own evaluation (top-n crops
    for InstaAug), and their trained module's crops measured on the test scenes with our
    ``invlib.learned.instaaug.crop_measures`` (expected side, mass centred in the object's box, KL to the mean,
    entropy; Spearman of the expected side with the object's side: D2's ``side_rho``)."""

    from invlib.learned import instaaug as ours
    from invlib.papers.d.cropping import side_rho

    s = dict(CROP_CPU, **(s or {}))
    _tensorboard_stub()
    _numpy_newshape()
    _narrow_resnet(repo, s["width"])
    root = Path(tempfile.mkdtemp(prefix="instaaug_scenes_"))
    try:
        test = _scenes_as_tiny_imagenet(root, s)
        k = len(test.classes)
        none, pretrained, _ = _their_crop_run(repo, root, "none", s, k)
        rand, _, _ = _their_crop_run(repo, root, "random crop", s, k)
        insta, _, li = _their_crop_run(repo, root, "InstaAug", s, k, pretrained=pretrained)
        boxes = json.loads(OUT.read_text())["crops"]["boxes"] if OUT.exists() else None
        measures = None
        if boxes is not None:  # as chapter D2's crop_table measures ours
            m = ours.crop_measures(_TheirCrops(li, boxes), test.images, test.boxes)
            measures = {key: _r(v.float().mean().item(), 4) for key, v in m.items()}
            measures["side_rho"] = _r(side_rho(m["side"], test), 4)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return dict(date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), settings=s,
                about="test_accuracy: their evaluation after the last epoch (InstaAug: their top-n crops, "
                      "test_copies of them); crop_measures: their module on the 500 test scenes, means over them",
                width_patch=WIDTH_PATCH, runs=[none, rand, insta],
                test_accuracy={r["method"]: r["per_epoch"][-1]["test_accuracy"] for r in (none, rand, insta)},
                crop_measures=measures)


# ----------------------------------------------------------------------------- colour jitter at D3's cpu setting
# Chapter D3's cpu profile (invlib/papers/d/colour.py SETTINGS["cpu"]): the `lighting` stand-in at 16 px, 2,400
# training images under D45 and 2,300 general test images, the conv4 classifier (widths 8-64) from the weights of
# its seed, SGD 0.05 (momentum 0.9, weight decay 1e-4, cosine per step), 8 epochs at batch 64, 4 test-time draws.
# Their colour module (config_color_jittering_supervised.yaml) and their way of training it, around that classifier:
# one SGD over two parameter groups (the module's at its own rate, with the classifier's momentum and weight decay,
# learner.py:56-78 and model_wrapper.py:95-103); per batch a classifier step on the augmented batch (train_copies 1,
# the trunk in train mode), then a module step with the trunk in eval mode on the loss of their loss.py:323-324
# (the cross-entropy of a fresh augmented batch minus sum_i w_i mean(entropy_i), logprob 0 for colour); the module's
# rate warmed up per epoch, lr * e / W in epoch e < W (abstract_learner.py:316-322), and their six entropy weights
# stepped once per epoch by their Scheduler on what their evaluation logs as "test/entropy" (the last training
# batch's six bounds: their eval path leaves entropy_every as the last training step set it). W = 2: epoch 1 at
# half the rate, the module's total rate over it that of D3's linear one-epoch warm-up.
COLOUR_CONFIG = "InstaAug_module/configs/config_color_jittering_supervised.yaml"
COLOUR_RELEASED = [0.0, 0.0, 0.0, 0.0, 0.8, 0.8]  # distribution.py:377-385: the maximum of each bound, as released
# collapse_below: a bound "at 0" is below 0.1 % of its maximum (hue: 0.0005 turn, "0.000" in d.md's table of ours;
# their module starts each hue bound at 0.007-0.085 turn on average over the test images), "at its maximum" above
# 99.9 % of it
COLOUR_CPU = dict(module_lrs=(1e-5, 0.2, 0.005), seeds=(0, 1, 2), warmup_period=2, hue_max=0.5, sat_max=0.8,
                  collapse_below=0.001)
COLOUR_PATCHES = [
    "P1 (as rotation's): Image2AugmentParam has no crop attributes without crop layers",
    "P2, P3 for colour: augmentation.py:440 calls x.device() on every mode without 'crop' (TypeError) and returns "
    "zeros as the entropy. Shim: the jittered batch is the value their forward_ computed at augmentation.py:359 "
    "(x*0 + normalize(x_rgb), recorded through their `normalize`), the entropy their "
    "self.dist_color.entropy_every (B, 6), the six bounds (distribution.py:396), what the six weights and thresholds "
    "of the colour config are for; logprob zeros (their colour distribution has none)",
    "P4 augmentation.py:145-147: Image2AugmentParam.forward computes the colour centre into a local and then "
    "overwrites it with self.center_color, which is None (augmentation.py:101), so augmentation.py:311 fails "
    "(AttributeError: 'NoneType' object has no attribute 'reshape'). Shim: self.center_color is set to what line "
    "146 computes, their conv.center(-1) (one centre: every pixel gets the image's perturbation)",
]
COLOUR_SETTINGS_NOT_FIXES = [
    "input size: their colour feature net (PreActResFeatureNet_Rawfoot) ends in a 25 x 25 conv over its last map, "
    "the whole map of a 200 px RawFooT patch (200 / 8); D3's images are 16 px (a 2 x 2 map), so that head is built "
    "with a 2 x 2 kernel (still the whole map; their initialisation)",
    "maxima: as released, distribution.py:379-383 multiplies the hue and saturation bounds by 0.0 and the value "
    "bounds by 0.8, so their module learns no hue or saturation jitter at all (the lines are marked '#!', edited "
    "by hand). The runs `hue_enabled` give the hue bounds D3's maximum, 0.5 turn per side, and the saturation "
    "bounds 0.8 (their value's; their comment asks '0.8 or 1.0?'), their other numbers unchanged; the runs "
    "`released` keep their numbers",
    "data scale: their module reads and writes images normalised by (0.5, 0.5, 0.5) (augmentation.py:276, 359); "
    "D3's classifier reads [0, 1]: the script maps x -> 2x - 1 into their module and back out",
]


def _patch_colour(repo: Path, size: int) -> dict:
    """P1-P4 for colour and the 2 x 2 head (COLOUR_PATCHES, COLOUR_SETTINGS_NOT_FIXES). Returns a dict whose
    ``maxima`` entry their colour distribution reads in place of its released maxima (set it per run)."""
    import torch
    from InstaAug_module import augmentation as A
    from InstaAug_module import distribution as Dist
    from InstaAug_module.architectures import mixmo_resnet_feature_rawfoot as R

    _patch_rotation()  # P1 (and rotation's P2, P3, which leave other modes alone)
    state = getattr(A, "_instaaug_runs_colour", None)
    if state is not None:
        state["size"] = size
        return state
    state = dict(maxima=list(COLOUR_RELEASED), size=size, last=None)

    their_normalize = A.normalize

    def normalize(x, *args, **kwargs):  # P2: keep what their colour path computed
        out = their_normalize(x, *args, **kwargs)
        state["last"] = out
        return out

    A.normalize = normalize
    inner = A.Augmentation.forward_

    def forward_(self, x, n_copies=1, **kwargs):  # P2, P3
        state["last"] = None
        try:
            return inner(self, x, n_copies=n_copies, **kwargs)
        except TypeError as err:
            if "not callable" not in str(err) or not self.transform_color or state["last"] is None:
                raise
        zeros = x.new_zeros(x.shape[0] * n_copies)
        return x.repeat(n_copies, 1, 1, 1) * 0 + state["last"], zeros, self.dist_color.entropy_every, zeros

    A.Augmentation.forward_ = forward_
    their_param_forward = A.Image2AugmentParam.forward

    def param_forward(self, x, *args, **kwargs):  # P4
        if self.color_layer and self.center_color is None:
            self.center_color = self.conv.center(self.color_layer[0])
        return their_param_forward(self, x, *args, **kwargs)

    A.Image2AugmentParam.forward = param_forward
    their_head = R.PreActResFeatureNet_Rawfoot._init_output_network

    def init_output_network(self):  # the global head over the whole last map of a `size` px input
        their_head(self)
        for i, conv in enumerate(self.output_conv_list):
            if conv.kernel_size == (25, 25):
                k = state["size"] // 8
                new = torch.nn.Conv2d(conv.in_channels, conv.out_channels, kernel_size=k, bias=True)
                self.output_conv_list[i] = new
                setattr(self, f"conv_feature{i}", new)

    R.PreActResFeatureNet_Rawfoot._init_output_network = init_output_network

    class _Torch:  # their distribution module's `torch`, with the colour maxima of this run
        def __getattr__(self, name):
            return getattr(torch, name)

        @staticmethod
        def tensor(data, *args, **kwargs):
            if isinstance(data, list) and data == COLOUR_RELEASED:
                data = state["maxima"]
            return torch.tensor(data, *args, **kwargs)

    Dist.torch = _Torch()
    A._instaaug_runs_colour = state
    return state


def _colour_bounds(li, z, batch: int = 100):
    """Their six bounds per image (B, 6): (hue a, hue b, sat a, sat b, value a, value b), sigmoid(param - 4) times
    the maxima (distribution.py:374-396), read through their forward in batches of 100 (their module's BatchNorm
    is never in eval mode)."""
    import torch

    with torch.no_grad():
        out = []
        for i in range(0, len(z), batch):
            li(z[i:i + batch])
            out.append(li.augmentation.dist_color.entropy_every.detach().clone())
    return torch.cat(out)


def _colour_run(repo: Path, S, train, test, module_lr: float, seed: int, maxima: list, c: dict) -> dict:
    import torch
    import torch.nn.functional as F
    from InstaAug_module import learnable_invariance

    from invlib.papers.d import colour as D

    t0 = time.perf_counter()
    trunk = D._trunk(S, seed, len(train.classes))  # D3's classifier from the weights of its seed
    torch.manual_seed(seed)  # their script: one seed for the module and the draws
    cfg = _config(repo, COLOUR_CONFIG, lr=module_lr, warmup_period=c["warmup_period"])
    with _quiet():
        li = learnable_invariance(cfg, device="cpu")
    x_test, y_test = test.images.float() / 255, test.labels.long()
    rng = torch.get_rng_state()  # the start's bounds, without moving the draws of the run (their BatchNorm's
    start = _colour_bounds(li, x_test * 2 - 1)  # running statistics are never read: always in train mode)
    torch.set_rng_state(rng)
    opt = torch.optim.SGD([dict(params=list(trunk.parameters())), dict(params=list(li.parameters()), lr=module_lr)],
                          lr=S.lr, momentum=S.momentum, weight_decay=S.weight_decay)
    group_net, group_aug = opt.param_groups
    x_train, y_train = train.images.float() / 255, train.labels.long()
    steps = math.ceil(len(x_train) / S.batch_size)
    total = S.epochs * steps
    gen = torch.Generator().manual_seed(seed)
    weights = list(cfg["entropy_weights"])
    W = cfg["warmup_period"]
    trace, step = [], 0
    for epoch in range(1, S.epochs + 1):
        group_aug["lr"] = module_lr / W * epoch if epoch < W else module_lr
        order = torch.randperm(len(x_train), generator=gen)
        for b in range(steps):
            idx = order[b * S.batch_size:(b + 1) * S.batch_size]
            z, y = x_train[idx] * 2 - 1, y_train[idx]
            group_net["lr"] = S.lr * 0.5 * (1 + math.cos(math.pi * step / total))  # D3's cosine, per step
            # the classifier step (their module's gradient from it is zeroed before the module step: no_grad)
            trunk.train()
            with torch.no_grad():
                aug, _, _, _ = li(z)
            opt.param_groups = [group_net]
            opt.zero_grad()
            F.cross_entropy(trunk((aug + 1) / 2), y).backward()
            opt.step()
            # the module step, the classifier in eval mode
            trunk.eval()
            opt.param_groups = [group_aug]
            opt.zero_grad()
            aug, _, ent, _ = li(z)
            loss = F.cross_entropy(trunk((aug + 1) / 2), y) - (ent.mean(0) * torch.tensor(weights)).sum()
            loss.backward()
            opt.step()
            opt.param_groups = [group_net, group_aug]
            step += 1
        last = ent.detach().mean(0)  # their "test/entropy": the last training batch's bounds
        for i, sch in enumerate(li.schedulers):
            weights[i] *= sch.step(float(last[i]))
        trace.append(dict(epoch=epoch, module_lr=_r(group_aug["lr"], 8), entropy_weights=_r(weights),
                          last_batch_bounds=_r(last.tolist())))
    seconds = time.perf_counter() - t0
    trunk.eval()
    with torch.no_grad():
        plain = torch.cat([trunk(x_test[i:i + 500]).argmax(1) for i in range(0, len(x_test), 500)])
        tta_logits = []
        for i in range(0, len(x_test), 100):
            zb = x_test[i:i + 100] * 2 - 1
            tta_logits.append(torch.stack([trunk((li(zb)[0] + 1) / 2) for _ in range(S.tta)]).mean(0))
        tta = torch.cat(tta_logits).argmax(1)
        bounds = _colour_bounds(li, x_test * 2 - 1)

    def stat(v):
        return dict(mean=_r(v.mean().item()), sd=_r(v.std().item()))

    names = ("hue_high", "hue_low", "sat_high", "sat_low", "value_high", "value_low")
    b = {n: stat(bounds[:, i] * (1 if i % 2 == 0 else -1)) for i, n in enumerate(names)}
    below, at_max, collapsed, state = {}, {}, {}, {}
    for j, op in enumerate(("hue", "sat", "value")):
        m = maxima[2 * j]
        dead = [(bounds[:, i] < c["collapse_below"] * m).float().mean().item() for i in (2 * j, 2 * j + 1)]
        full = [(bounds[:, i] > (1 - c["collapse_below"]) * m).float().mean().item() for i in (2 * j, 2 * j + 1)]
        below[op] = dict(high=_r(dead[0], 4), low=_r(dead[1], 4))
        at_max[op] = dict(high=_r(full[0], 4), low=_r(full[1], 4))
        collapsed[op] = bool(m > 0 and (dead[0] > 0.5) != (dead[1] > 0.5))
        state[op] = ("no range (maximum 0)" if m == 0 else "one-sided (one bound at 0)" if collapsed[op]
                     else "both at 0" if min(dead) > 0.5 else "both at the maximum" if min(full) > 0.5
                     else "one at the maximum" if max(full) > 0.5 else "inside")
    return dict(module_lr=module_lr, seed=seed, maxima=list(maxima), seconds=_r(seconds, 1),
                test_accuracy=_r((plain == y_test).float().mean().item(), 4),
                test_accuracy_tta=_r((tta == y_test).float().mean().item(), 4),
                bounds=b, start_bounds={n: stat(start[:, i] * (1 - 2 * (i % 2))) for i, n in enumerate(names)},
                share_below=below, share_at_max=at_max, collapsed_one_sided=collapsed, state=state,
                hue_collapsed_one_sided=collapsed["hue"], per_epoch=trace)


def colour_cpu(repo: Path, module_lrs=COLOUR_CPU["module_lrs"], seeds=COLOUR_CPU["seeds"],
               variants=("hue_enabled",), merge: dict | None = None) -> dict:
    """Their colour module trained by their procedure on chapter D3's cpu data and classifier (see above), per
    variant (``hue_enabled``: hue max 0.5 turn, saturation 0.8; ``released``: their maxima), module lr and seed:
    plain and test-time-augmented accuracy, the six bounds over the test images, whether the hue range collapsed
    one-sided, the seconds. ``merge``: a stored record whose runs at other (variant, lr, seed) are kept."""
    from invlib.papers.d import colour as D

    c = dict(COLOUR_CPU)
    S = D.settings("cpu")
    state = _patch_colour(repo, S.size)
    train, test = D.lighting_data(S, "train", (S.train_condition,)), D.general_test_set(S)
    enabled = [c["hue_max"], c["hue_max"], c["sat_max"], c["sat_max"], COLOUR_RELEASED[4], COLOUR_RELEASED[5]]
    runs = []
    for variant in variants:
        maxima = enabled if variant == "hue_enabled" else list(COLOUR_RELEASED)
        state["maxima"] = maxima
        for lr in module_lrs:
            for seed in seeds:
                with _quiet():  # their colour path prints timings (utils.py:114-122)
                    run = _colour_run(repo, S, train, test, lr, seed, maxima, c)
                run["variant"] = variant
                runs.append(run)
                print(f"colour_cpu {variant} lr {lr} seed {seed}: {run['test_accuracy']} / "
                      f"{run['test_accuracy_tta']}, hue {run['bounds']['hue_low']['mean']} "
                      f"{run['bounds']['hue_high']['mean']}, collapsed {run['hue_collapsed_one_sided']}, "
                      f"{run['seconds']} s", flush=True)
    if merge is not None:
        done = {(r["variant"], r["module_lr"], r["seed"]) for r in runs}
        runs = [r for r in merge["runs"] if (r["variant"], r["module_lr"], r["seed"]) not in done] + runs
    theirs = _config(repo, COLOUR_CONFIG)
    return dict(
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        settings=dict(config=COLOUR_CONFIG, their_module_lr=theirs["lr"], their_warmup_period=theirs["warmup_period"],
                      warmup_period=c["warmup_period"], hue_max=c["hue_max"], sat_max=c["sat_max"],
                      released_maxima=COLOUR_RELEASED, collapse_below=c["collapse_below"],
                      chapter="d3_colour_jitter cpu", n_train=S.n_train, n_test=S.n_test, size=S.size,
                      epochs=S.epochs, batch_size=S.batch_size, trunk=S.trunk, widths=list(S.widths), lr=S.lr,
                      momentum=S.momentum, weight_decay=S.weight_decay, schedule=S.schedule, tta=S.tta,
                      train_condition=S.train_condition, torch_threads=__import__("torch").get_num_threads()),
        patches=COLOUR_PATCHES, settings_not_fixes=COLOUR_SETTINGS_NOT_FIXES,
        about="bounds: over the general test images, in their units (hue: turns; saturation, value: the additive "
              "change of the factor, (1 + p) * s); *_low are -b (the lower end of the range), *_high a. "
              "share_below[op]: share of test images whose bound (a: high, b: low) is below collapse_below times "
              "its maximum (hue: 0.0005 turn); share_at_max: above (1 - collapse_below) times it; state[op]: "
              "which of those holds on most test images; "
              "collapsed_one_sided[op]: exactly one of the two share_below above 0.5 (a bound at 0 on most test "
              "images, the other not; D3's definition), False when the maximum is 0 (released: hue, "
              "saturation); hue_collapsed_one_sided = collapsed_one_sided['hue']. test_accuracy: D3's "
              "classifier plain; test_accuracy_tta: the mean logits over `tta` draws of their trained module "
              "(their colour config has test_time_aug False, so their own evaluation is plain only; the TTA "
              "is D3's measure applied to their module). start_bounds: as bounds, before training. per_epoch: "
              "the module's lr used, their entropy weights after their scheduler's check, the bounds it checked. "
              "Their loop is re-expressed here around their module (learner.py:43-80, "
              "abstract_learner.py:298-345, loss.py:323-324); their mixmo script itself is not run (D3's "
              "classifier and data instead)",
        runs=runs)


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("experiments", nargs="+", choices=["all", *EXPERIMENTS])
    p.add_argument("--repo", type=Path, required=True, help="a checkout of github.com/NingMiao/InstaAug")
    p.add_argument("--extras", type=Path, default=EXTRAS,
                   help="a folder of the packages their modules import that the book does not (pip --target)")
    p.add_argument("--epochs", type=int, default=1, help="rotation: epochs of their training script (theirs: 150)")
    p.add_argument("--module-lrs", type=float, nargs="+", default=[1e-5, 1e-3],
                   help="rotation: the module's learning rate(s) (theirs: 1e-5)")
    p.add_argument("--cpu-epochs", type=int, default=CPU_SETTING["epochs"],
                   help="rotation_cpu: epochs of their script (10 steps each; default: chapter D1's cpu steps)")
    p.add_argument("--cpu-module-lrs", type=float, nargs="+", default=list(CPU_SETTING["module_lrs"]),
                   help="rotation_cpu: the module's learning rates (the first is chapter D1's cpu value)")
    p.add_argument("--cpu-entropy-weights", type=float, nargs="+", default=[0.1],
                   help="rotation_cpu: their config's entropy weights to run (theirs: 0.1)")
    p.add_argument("--merge", action="store_true",
                   help="rotation_cpu, colour_cpu: keep the stored runs at other (lr, entropy weight) pairs, "
                        "(variant, lr, seed) triples")
    p.add_argument("--crop-epochs", type=int, default=None,
                   help="crop_cpu: epochs (default: chapter D2's cpu, 10; a smaller number pretrains 1)")
    p.add_argument("--colour-module-lrs", type=float, nargs="+", default=list(COLOUR_CPU["module_lrs"]),
                   help="colour_cpu: the module's learning rates (theirs 1e-5; D3's former 0.2, current 0.005)")
    p.add_argument("--colour-seeds", type=int, nargs="+", default=list(COLOUR_CPU["seeds"]),
                   help="colour_cpu: seeds (classifier weights, module, data order and draws)")
    p.add_argument("--colour-variants", nargs="+", default=["hue_enabled"], choices=["hue_enabled", "released"],
                   help="colour_cpu: hue_enabled (hue max 0.5 turn, saturation 0.8) and/or released (their maxima)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    repo = args.repo.expanduser().resolve()
    if not (repo / "InstaAug_module" / "scheduler.py").exists():
        p.error(f"{repo} is not a checkout of github.com/NingMiao/InstaAug (see the docstring)")
    setup(repo, args.extras.expanduser())
    import torch

    torch.set_grad_enabled(True)
    meta = _meta(repo)
    todo = list(EXPERIMENTS) if "all" in args.experiments else list(dict.fromkeys(args.experiments))
    runners = dict(crops=lambda: crops(repo), sampler=lambda: sampler(repo), scheduler=lambda: scheduler(repo),
                   rotation=lambda: rotation(repo, args.epochs, tuple(args.module_lrs)),
                   rotation_cpu=lambda: rotation_cpu(
                       repo, epochs=args.cpu_epochs, module_lrs=tuple(args.cpu_module_lrs),
                       entropy_weights=tuple(args.cpu_entropy_weights),
                       merge=(json.loads(args.out.read_text()).get("rotation_cpu") if args.merge and args.out.exists()
                              else None)),
                   crop_cpu=lambda: crop_cpu(repo, None if args.crop_epochs is None else
                                             dict(epochs=args.crop_epochs, pretrain_epochs=1)),
                   colour_cpu=lambda: colour_cpu(
                       repo, module_lrs=tuple(args.colour_module_lrs), seeds=tuple(args.colour_seeds),
                       variants=tuple(args.colour_variants),
                       merge=(json.loads(args.out.read_text()).get("colour_cpu") if args.merge and args.out.exists()
                              else None)))
    t_all = time.perf_counter()
    for name in todo:
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        rec = runners[name]()
        rec["seconds"] = round(time.perf_counter() - t0, 1)
        rec["load_average_1min"] = [round(load0, 2), round(os.getloadavg()[0], 2)]  # at start, at end: wall
        # seconds stretch when other jobs share the cores
        _save(name, rec, meta, args.out)
        print(f"{name}: {rec['seconds']} s -> {args.out}", flush=True)
    print(f"all done in {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
