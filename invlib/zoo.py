"""The model zoo: trained models every notebook reuses, cached on disk by a hash of their config.

Entries (``available()``), each trained on the profile's default dataset (colourised Fashion-MNIST):

| entry                      | what                                             |
|----------------------------|--------------------------------------------------|
| ``<model>/untrained``      | the seeded random initialisation                 |
| ``<model>/none``           | trained without augmentation                     |
| ``<model>/standard``       | trained with RandomResizedCrop + horizontal flip |

for ``<model>`` in ``small_resnet18`` and ``small_vit``; ``small_resnet50`` (paper A's ResNet-50-like backbone)
has ``untrained`` and ``standard`` only (it trains ~3x slower than small_resnet18).
A checkpoint is keyed by the SHA-256 of its full
config (model, data, subset, training hyper-parameters, augmentation, zoo version), written atomically;
a corrupt file is retrained with a warning; an interrupted training resumes from its per-epoch checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import asdict
from pathlib import Path

from torch import nn

from . import data as datasets
from . import models
from .models import CheckpointError
from .profiles import Profile, get_profile
from .train import StandardAugment, TrainConfig, evaluate, fit
from .utils import atomic_save, cache_dir, check_choice, resolve_device, seed_everything

ZOO_VERSION = 1
# Per-architecture recipe; the profile sets data size, epochs, batch and device. The ViT is ~2x faster per
# image but learns more slowly from 28 px images, so it gets twice the epochs at half the batch, AdamW and
# a warm-up (measured: 12k images x 4 epochs at batch 128 gave 69 % test accuracy, x 8 at batch 64: 83 %;
# with RandomResizedCrop it still underfits: 71 % train / 75 % test accuracy at 8 epochs, 77 % at 12).
ARCHS = {
    "small_resnet18": dict(train=dict(optimizer="sgd", lr=0.1, weight_decay=5e-4), epochs=1, batch=1),
    "small_vit": dict(train=dict(optimizer="adamw", lr=1e-3, weight_decay=0.05, warmup_epochs=0.5),
                      epochs=2, batch=0.5),
    "small_resnet50": dict(train=dict(optimizer="sgd", lr=0.1, weight_decay=5e-4), epochs=1, batch=1,
                           variants=("untrained", "standard")),
}
AUGMENTS = {"none": None, "standard": StandardAugment}
VARIANTS = ("untrained", *AUGMENTS)


def available() -> list[str]:
    """Zoo entry names, ``"<model>/<variant>"``.

    Example
    -------
    >>> "small_resnet18/standard" in available()
    True
    """
    return [f"{arch}/{v}" for arch, recipe in ARCHS.items() for v in recipe.get("variants", VARIANTS)]


def config(name: str, profile: str | Profile = "cpu") -> dict:
    """The full config of a zoo entry under a profile (everything that changes the trained weights).

    Example
    -------
    >>> config("small_vit/none", "smoke")["train"]["optimizer"]
    'adamw'
    """
    check_choice(name, available(), "zoo entry")
    prof = get_profile(profile)
    arch, variant = name.split("/")
    recipe = ARCHS[arch]
    cfg = TrainConfig(epochs=int(prof.epochs * recipe["epochs"]), batch_size=int(prof.batch_size * recipe["batch"]),
                      device=prof.device, **recipe["train"])
    aug = AUGMENTS.get(variant)
    return dict(zoo_version=ZOO_VERSION, model=arch, variant=variant, dataset=prof.dataset,
                img_size=prof.img_size, n_train=prof.n_train, n_test=prof.n_test, seed=cfg.seed,
                train=None if variant == "untrained" else {k: v for k, v in asdict(cfg).items() if k != "device"},
                augment=repr(aug()) if aug else None)


def path(name: str, profile: str | Profile = "cpu") -> Path:
    """Where the entry's checkpoint lives: ``<cache>/zoo/<model>-<variant>-<profile>-<hash12>.pt``."""
    cfg = config(name, profile)
    digest = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:12]
    return cache_dir("zoo") / f"{name.replace('/', '-')}-{get_profile(profile).name}-{digest}.pt"


def _data(cfg: dict, split: str):
    n = cfg["n_train"] if split == "train" else cfg["n_test"]
    return datasets.load(cfg["dataset"], split, n=n, seed=cfg["seed"], size=cfg["img_size"])


def _build(cfg: dict, ds) -> nn.Module:
    seed_everything(cfg["seed"])
    return models.create(cfg["model"], num_classes=len(ds.classes), in_chans=ds.images.shape[1],
                         img_size=cfg["img_size"])


def get(name: str, profile: str | Profile = "cpu", progress: bool | None = None, retrain: bool = False) -> nn.Module:
    """A zoo model in eval mode on the profile's device, trained on first use and cached afterwards.

    ``model.zoo_info`` holds ``{"name", "profile", "config", "test_acc", "history", "seconds", "path"}``.

    Args:
        name: an entry of :func:`available`.
        profile: profile name or :class:`invlib.profiles.Profile` (sizes, epochs, device).
        progress: progress bars while training (default: the profile's setting).
        retrain: ignore a cached checkpoint.

    Example
    -------
    >>> m = get("small_resnet18/none", "smoke")       # trains ~20 s on 2 CPU cores the first time
    >>> m.zoo_info["test_acc"] > 0.5
    True
    """
    prof = get_profile(profile)
    progress = prof.progress if progress is None else progress
    cfg, file = config(name, prof), path(name, prof)
    test = _data(cfg, "test")
    model = _build(cfg, test)
    meta = None if retrain else _load(model, file)
    if meta is None:
        meta = _train(name, cfg, model, test, file, progress)
    model.zoo_info = dict(meta, name=name, profile=prof.name, path=str(file))
    return model.to(resolve_device(prof.device)).eval()


def _load(model: nn.Module, file: Path) -> dict | None:
    if not file.exists():
        return None
    try:
        state = models.read_checkpoint(file)
        model.load_state_dict(state["model"])
        return state["meta"]
    except Exception as err:  # corrupt or stale: retrain rather than fail a book build
        warnings.warn(f"Zoo checkpoint {file} is unreadable ({err.__class__.__name__}: {err}); retraining.",
                      stacklevel=3)
        file.unlink(missing_ok=True)
        return None


def _train(name: str, cfg: dict, model: nn.Module, test, file: Path, progress: bool) -> dict:
    t0 = time.perf_counter()
    history = []
    if cfg["train"] is not None:
        train = _data(cfg, "train")
        aug = AUGMENTS[cfg["variant"]]
        partial = file.with_suffix(".partial")
        run = lambda: fit(model, train, TrainConfig(**cfg["train"]), augment=aug() if aug else None,
                          checkpoint=partial, progress=progress)
        try:
            history = run()
        except CheckpointError:
            warnings.warn(f"Partial checkpoint {partial} is corrupt; training {name} from scratch.", stacklevel=3)
            partial.unlink()
            model.load_state_dict(_build(cfg, test).state_dict())
            history = run()
        partial.unlink(missing_ok=True)
    meta = dict(config=cfg, test_acc=evaluate(model, test)["acc"], history=history,
                seconds=time.perf_counter() - t0)
    atomic_save(dict(model={k: v.cpu() for k, v in model.state_dict().items()}, meta=meta), file)
    return meta


def train_all(profile: str | Profile = "cpu", names: list[str] | None = None, progress: bool = True) -> list[dict]:
    """Make sure every zoo entry (or ``names``) is trained; return one row per entry.

    Rows: ``{"name", "test_acc", "params" (count), "epochs", "train_seconds" (when it was trained),
    "seconds" (this call: training or loading), "cached" (bool), "path"}``.

    Example
    -------
    >>> rows = train_all("smoke", ["small_resnet18/untrained"])
    >>> rows[0]["test_acc"] < 0.3
    True
    """
    rows = []
    for name in names or available():
        existed = path(name, profile).exists()
        t0 = time.perf_counter()
        model = get(name, profile, progress=progress)
        info = model.zoo_info
        train_cfg = info["config"]["train"]
        rows.append(dict(name=name, test_acc=info["test_acc"], params=sum(p.numel() for p in model.parameters()),
                         epochs=train_cfg["epochs"] if train_cfg else 0, train_seconds=info["seconds"],
                         seconds=time.perf_counter() - t0, cached=existed, path=info["path"]))
    return rows
