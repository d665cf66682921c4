"""One training loop for the whole book: ``fit`` / ``evaluate``.

SGD / Adam / AdamW; cosine or step schedules (per iteration); seeded and deterministic on CPU (the data
order and the augmentation draws of epoch ``e`` depend only on ``(seed, e)``, so a resumed run ends
with the same weights as an uninterrupted one); channels_last; bf16 autocast on CUDA; a checkpoint
after every epoch with resume; DDP when launched under ``torchrun`` (gloo on CPU, nccl on CUDA).

Data are ``(N, C, H, W)`` uint8 (or float in [0, 1]) images and ``(N,)`` labels, or an
:class:`invlib.data.Dataset`, whose images may stay on disk (:mod:`invlib.streaming`: each batch is decoded by
DataLoader workers while the previous one trains). Under ``torchrun`` each process takes its own 1/world share
of the epoch's seeded permutation, which is what ``DistributedSampler(shuffle=True, drop_last=True)`` does, but
the same for images in memory and on disk and the same on resume. Train-time augmentation is any callable
``augment(x: (B, C, H, W) float, generator) -> (B, C, H', W')`` applied to whole batches (the crop family of
:mod:`invlib.crops`, for instance).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from .models import EVAL_BATCH, batched, read_checkpoint
from .streaming import batches
from .utils import atomic_save, cached, check_choice, digest, resolve_device
from .utils import progress as progress_bar

OPTIMIZERS = ("sgd", "adam", "adamw")
SCHEDULES = ("cosine", "step", "none")
DECAY_ON = ("weights", "all")


@dataclass
class TrainConfig:
    """Hyper-parameters of :func:`fit`.

    Example
    -------
    >>> TrainConfig(epochs=2, optimizer="adam", lr=1e-3).schedule
    'cosine'
    """

    epochs: int = 4
    batch_size: int = 128
    optimizer: str = "sgd"
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 5e-4
    weight_decay_on: str = "weights"  # "weights": conv/linear weights only; "all": biases and norms too
    schedule: str = "cosine"
    step_size: int = 30  # epochs between decays for schedule="step"
    gamma: float = 0.1
    warmup_epochs: float = 0.0  # linear warm-up from ~0 to lr (transformers need it)
    label_smoothing: float = 0.0
    seed: int = 0
    device: str = "auto"
    channels_last: bool = True
    amp: bool = True  # bf16 autocast, CUDA only
    cpu_bf16: bool = False  # bf16 autocast on the CPU too: a family's choice where it is faster (zoo.Spec.precision)
    eval_batch_size: int | None = None  # None: evaluate()'s default (128 on CPU, 1024 on CUDA)
    aug_lr: float | None = None  # learning rate of a model's augmentation parameters (None: lr)
    aug_weight_decay: float = 0.0  # L2 penalty on them (AugNet: 1.0)
    aug_warmup_epochs: float = 0.0  # their learning rate alone rises linearly from ~0 over these epochs (InstaAug)

    def __post_init__(self):
        check_choice(self.optimizer, OPTIMIZERS, "optimizer")
        check_choice(self.schedule, SCHEDULES, "schedule")
        check_choice(self.weight_decay_on, DECAY_ON, "weight_decay_on")
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0:
            raise ValueError(f"epochs, batch_size and lr must be positive, got {self.epochs}, "
                             f"{self.batch_size}, {self.lr}.")


# ----------------------------------------------------------------------------- helpers
def _tensors(data) -> tuple[torch.Tensor, torch.Tensor]:
    if hasattr(data, "images") and hasattr(data, "labels"):
        return data.images, data.labels
    if isinstance(data, (tuple, list)) and len(data) == 2:
        images, labels = data
        if images.ndim not in (3, 4) or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"Expected images (N, C, H, W) or signals (N, C, T) and labels (N,), got "
                             f"{tuple(images.shape)} "
                             f"and {tuple(labels.shape)}.")
        return images, labels
    raise TypeError("Training data must be an invlib.data.Dataset or a tuple (images (N,C,H,W), labels (N,)).")


def _to_float(x: torch.Tensor) -> torch.Tensor:
    return x.float().div_(255) if x.dtype == torch.uint8 else x.float()


def _epoch_seed(seed: int, epoch: int) -> int:
    """The seed of one epoch's data order, augmentation draws and dropout: resume needs nothing else."""
    return seed * 100_003 + epoch


def world_rank() -> tuple[int, int]:
    """``(rank, world size)``: ``(0, 1)`` in a plain process; under ``torchrun`` the process group is initialised
    on first use (gloo on CPU, nccl on CUDA).

    Example
    -------
    >>> world_rank()
    (0, 1)
    """
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    if dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def steps_per_epoch(n: int, batch_size: int, world: int = 1) -> int:
    """Optimiser steps in one epoch of :func:`fit` on ``n`` examples: each of ``world`` processes takes
    ``n // world`` of them in full batches of ``min(batch_size, n // world)`` (the remainder is dropped).

    Example
    -------
    >>> steps_per_epoch(2000, 128), steps_per_epoch(100, 128)
    (15, 1)
    """
    per_rank = n // world
    if per_rank == 0:
        raise ValueError(f"Not enough training examples ({n}) for {world} process(es).")
    return per_rank // min(batch_size, per_rank)


def _lr_lambda(cfg: TrainConfig, steps_per_epoch: int, warmup_epochs: float | None = None):
    """The learning-rate factor of each step: the warm-up (``warmup_epochs``, default ``cfg.warmup_epochs``)
    times the schedule."""
    total = cfg.epochs * steps_per_epoch
    warmup = (cfg.warmup_epochs if warmup_epochs is None else warmup_epochs) * steps_per_epoch

    def factor(step: int) -> float:
        warm = min(1.0, (step + 1) / warmup) if warmup > 0 else 1.0
        if cfg.schedule == "cosine":
            return warm * 0.5 * (1 + math.cos(math.pi * min(step, total) / total))
        if cfg.schedule == "step":
            return warm * cfg.gamma ** ((step // steps_per_epoch) // cfg.step_size)
        return warm

    return factor


def _memory_format(x: torch.Tensor, channels_last: bool = True):
    """channels_last for image batches when asked; signals ``(N, C, T)`` have no such layout."""
    return torch.channels_last if channels_last and x.ndim == 4 else torch.contiguous_format


def autocast_dtype(cfg: TrainConfig, device: torch.device) -> torch.dtype | None:
    """The dtype a training step autocasts to: bf16 on a CUDA device when ``cfg.amp``, on the CPU when
    ``cfg.cpu_bf16``, else None (float32).

    Example
    -------
    >>> autocast_dtype(TrainConfig(), torch.device("cuda")), autocast_dtype(TrainConfig(), torch.device("cpu"))
    (torch.bfloat16, None)
    >>> autocast_dtype(TrainConfig(cpu_bf16=True), torch.device("cpu"))
    torch.bfloat16
    """
    if device.type == "cuda":
        return torch.bfloat16 if cfg.amp else None
    return torch.bfloat16 if cfg.cpu_bf16 else None


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX, as oneDNN sees it): there bf16 autocast trains
    the book's convolutional networks 1.3-2.8x faster than float32; without those instructions it is emulated and
    6-16x slower (``benchmarks/bench_precision.py``; ``ONEDNN_MAX_CPU_ISA=AVX2`` shows such a machine).

    Example
    -------
    >>> isinstance(cpu_has_bf16(), bool)
    True
    """
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """The optimizer named by ``cfg.optimizer``, with ``cfg.weight_decay`` on the weight matrices and kernels
    only (``cfg.weight_decay_on="weights"``, the default) or on every parameter, biases and norm weights
    included (``"all"``: what ``torch.optim.Adam(model.parameters(), weight_decay=...)`` does, as the AugNet
    authors' sprite code).

    A model with an ``augmentation_parameters()`` method (AugNet, Augerino in :mod:`invlib.learned`) gets
    them in a group of their own, with ``cfg.aug_lr`` and ``cfg.aug_weight_decay``. So weight decay on the
    augmentation alone is ``weight_decay=0, aug_weight_decay=w``; on every parameter, ``weight_decay=w,
    weight_decay_on="all", aug_weight_decay=w``.

    Example
    -------
    >>> make_optimizer(nn.Linear(2, 2), TrainConfig(optimizer="adam", lr=1e-3)).__class__.__name__
    'Adam'
    """
    aug = list(model.augmentation_parameters()) if hasattr(model, "augmentation_parameters") else []
    aug_ids = {id(p) for p in aug}
    rest = [p for p in model.parameters() if p.requires_grad and id(p) not in aug_ids]
    decay = [p for p in rest if p.ndim > 1 or cfg.weight_decay_on == "all"]
    no_decay = [p for p in rest if p.ndim <= 1 and cfg.weight_decay_on != "all"]
    groups = [dict(params=decay, weight_decay=cfg.weight_decay), dict(params=no_decay, weight_decay=0.0)]
    if aug:
        groups.append(dict(params=aug, weight_decay=cfg.aug_weight_decay, lr=cfg.aug_lr or cfg.lr))
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.momentum > 0)
    # foreach: one batched update over all tensors, as on CUDA, instead of a Python loop over them (faster on one
    # CPU thread, the same results: benchmarks/measurements/foundation.md)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(groups, lr=cfg.lr, foreach=True)
    return torch.optim.AdamW(groups, lr=cfg.lr, foreach=True)


# ----------------------------------------------------------------------------- the loop
def _unwrap(model: nn.Module) -> nn.Module:
    """The model inside a DistributedDataParallel wrapper (or the model itself)."""
    return getattr(model, "module", model)


def classification_loss(label_smoothing: float = 0.0):
    """The default loss of :func:`fit`: cross-entropy plus the model's own ``penalty()`` when it has one
    (AugNet's and Augerino's regularisers in :mod:`invlib.learned`).

    Returns ``loss(model, x, y) -> (scalar, logits (B, K))``, the signature every loss hook of :func:`fit` has.

    Example
    -------
    >>> loss = classification_loss()
    >>> value, logits = loss(nn.Linear(3, 2), torch.rand(4, 3), torch.tensor([0, 1, 0, 1]))
    >>> value.ndim, logits.shape
    (0, torch.Size([4, 2]))
    """

    def loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor):
        logits = model(x)
        value = F.cross_entropy(logits, y, label_smoothing=label_smoothing)
        inner = _unwrap(model)
        if hasattr(inner, "penalty"):
            value = value + inner.penalty()
        return value, logits

    return loss


def fit(model: nn.Module, train, cfg: TrainConfig | None = None, augment=None, test=None,
        checkpoint: str | os.PathLike | None = None, progress: bool = True, callback=None, loss=None,
        val=None, cache: bool = False) -> list[dict]:
    """Train ``model`` in place; return the history (one dict per epoch).

    Args:
        model: a classifier mapping ``(B, C, H, W)`` in [0, 1] to logits ``(B, K)``.
        train: ``Dataset`` or ``(images (N, C, H, W) uint8|float, labels (N,) int64)``.
        cfg: :class:`TrainConfig`.
        augment: ``augment(x, generator) -> x`` on float batches (e.g. :class:`invlib.crops.Crop`), or None.
        test: optional held-out data, evaluated after every epoch (``test_acc`` in the history).
        val: optional validation data, evaluated after every epoch (``val_acc``); with both, the history also
            holds ``test_at_best_val``, the test accuracy of the epoch with the best validation accuracy so far
            (early stopping without a second run).
        checkpoint: file written (atomically) after every epoch; if it exists, training resumes from it.
        progress: a tqdm bar per epoch (rank 0 only).
        callback: ``callback(epoch, record)`` after each epoch's checkpoint (logging, early stop by raising).
        loss: ``loss(model, x, y) -> (scalar, logits)`` on each (augmented) batch, for losses that need the
            batch (fine-tuning terms, score-function estimators); default :func:`classification_loss`
            (cross-entropy plus ``model.penalty()``). ``model`` is the module being trained (DDP-wrapped under
            torchrun), ``x`` the float batch, ``y`` its labels.
        cache: keep the trained weights, the history and the random state on disk (``.cache/fit/``), keyed by
            the model's starting weights and configuration (every submodule's class and plain attributes), the
            data, ``cfg``, ``augment`` and ``loss``; a second call with the same
            key loads them instead of training and returns the same history, leaving the model and the random
            state as training would. ``augment`` and ``loss`` are keyed by their qualified name and, for objects,
            their ``repr``: an object whose repr holds its memory address is never found again (nothing wrong
            is ever loaded, it just retrains).

    Returns:
        list of ``{"epoch", "loss", "train_acc", "lr" (of the epoch's last step), "seconds" (wall clock),
        "cpu_seconds" (the process's CPU time: not stretched by waiting for a core, but still slowed by what
        runs beside it through the shared caches)}``, plus
        ``"test_acc"``, ``"val_acc"``, ``"test_at_best_val"`` when that data is given, and ``"state"`` (what the
        model has learned: its ``state()``, e.g. an augmentation's ranges) when the model has a ``state``
        method.

    Example
    -------
    >>> m = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10))  # any classifier; models.create gives real ones
    >>> x, y = torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))
    >>> hist = fit(m, (x, y), TrainConfig(epochs=1, batch_size=32), progress=False)
    >>> len(hist)
    1
    >>> def l1_loss(model, x, y):  # any batch-aware loss
    ...     logits = model(x)
    ...     return F.cross_entropy(logits, y) + 1e-4 * sum(p.abs().sum() for p in model.parameters()), logits
    >>> len(fit(m, (x, y), TrainConfig(epochs=1, batch_size=32), progress=False, loss=l1_loss))
    1
    """
    cfg = cfg or TrainConfig()
    if cfg.cpu_bf16 and resolve_device(cfg.device).type == "cpu":  # measured later under the autocast it trains in
        from .models import mark_precision

        mark_precision(model, "bf16")
    if cache:
        return _fit_cached(model, train, cfg, augment=augment, test=test, progress=progress, loss=loss, val=val,
                           callback=callback, checkpoint=checkpoint)
    loss_fn = loss or classification_loss(cfg.label_smoothing)
    images, labels = _tensors(train)
    rank, world = world_rank()
    device = resolve_device(cfg.device)
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    memory_format = _memory_format(images, cfg.channels_last)
    model.to(device, memory_format=memory_format)
    net = nn.parallel.DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None) \
        if world > 1 else model
    steps = steps_per_epoch(len(images), cfg.batch_size, world)
    per_rank = len(images) // world
    batch = min(cfg.batch_size, per_rank)
    optimizer = make_optimizer(model, cfg)
    factors = [_lr_lambda(cfg, steps)] * len(optimizer.param_groups)
    if len(optimizer.param_groups) == 3:  # the augmentation's group: its own warm-up, the same schedule
        factors[2] = _lr_lambda(cfg, steps, cfg.aug_warmup_epochs or cfg.warmup_epochs)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factors)
    history, start = [], 0
    path = Path(checkpoint) if checkpoint else None
    if path and path.exists():
        state = read_checkpoint(path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        history, start = state["history"], state["epoch"] + 1
    amp = autocast_dtype(cfg, device)
    autocast = torch.autocast(device.type, dtype=amp, enabled=amp is not None)
    for epoch in range(start, cfg.epochs):
        t0, c0 = time.perf_counter(), time.process_time()
        gen = torch.Generator().manual_seed(_epoch_seed(cfg.seed, epoch))
        torch.manual_seed(_epoch_seed(cfg.seed, epoch) + 1)  # dropout / stochastic depth
        order = torch.randperm(len(images), generator=gen)[rank * per_rank:(rank + 1) * per_rank]
        net.train()
        loss_sum = torch.zeros((), device=device)
        correct = torch.zeros((), device=device, dtype=torch.long)
        bar = progress_bar(range(steps), progress and rank == 0, f"epoch {epoch + 1}/{cfg.epochs}", mininterval=1.0)
        order = order[:steps * batch]
        for i, xb in zip(bar, batches(images, batch, order, device)):  # decoded by workers when on disk
            x = _to_float(xb.to(device, non_blocking=True))
            y = labels[order[i * batch:(i + 1) * batch]].to(device, non_blocking=True)
            if augment is not None:
                x = augment(x, gen)
            value, logits = _step(net, x.contiguous(memory_format=memory_format), y, loss_fn, optimizer, autocast)
            lr = optimizer.param_groups[0]["lr"]  # the rate this step used
            scheduler.step()
            loss_sum += value.detach()
            correct += (logits.argmax(1) == y).sum()
        record = dict(epoch=epoch, loss=loss_sum.item() / steps, train_acc=correct.item() / (steps * batch),
                      lr=lr, seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
        _record_held_out(model, record, history, val, test, cfg.eval_batch_size)
        history.append(record)
        if path and rank == 0:
            atomic_save(dict(model=model.state_dict(), optimizer=optimizer.state_dict(),
                             scheduler=scheduler.state_dict(), epoch=epoch, history=history,
                             config=asdict(cfg)), path)
        if world > 1:
            dist.barrier()
        if callback is not None:
            callback(epoch, record)
    return history


def _step(net: nn.Module, x: torch.Tensor, y: torch.Tensor, loss_fn, optimizer, autocast):
    """One optimiser step of :func:`fit` (and of :func:`step_seconds`): the loss under ``autocast``, its gradients,
    the update. Returns ``(loss, logits)``."""
    with autocast:
        value, logits = loss_fn(net, x, y)
    optimizer.zero_grad(set_to_none=True)
    value.backward()
    optimizer.step()
    return value, logits


def step_seconds(arms: dict, train, cfg: TrainConfig, rounds: int = 6, warmup: int = 1) -> dict:
    """The seconds of one training step of each arm, the arms timed in turn on the same batches: a cost ratio
    that does not depend on what else the machine runs.

    ``arms`` maps a name to ``(model, augment, loss)`` (``augment`` and ``loss`` as :func:`fit` takes them, None
    for none and for :func:`classification_loss`). Each of ``warmup + rounds`` rounds draws one batch of
    ``cfg.batch_size`` training images (seeded by ``cfg.seed``) and takes one step of every arm on it, in the
    order of ``arms`` in even rounds and the reverse in odd ones, so that a slower or faster stretch of the
    machine falls on the arms alike. A step is timed by the process's CPU time on the CPU (what the step costs
    whatever runs beside it) and by the wall clock, synchronised, on CUDA; the ``warmup`` rounds are not kept.
    The models are trained by these steps: pass copies. Torch's random state is left as it was found.

    Returns ``{name: (rounds,) float array of seconds per step}``.

    Example
    -------
    >>> x, y = torch.rand(64, 3, 8, 8), torch.randint(0, 2, (64,))
    >>> small, big = nn.Sequential(nn.Flatten(), nn.Linear(192, 2)), nn.Sequential(nn.Flatten(), nn.Linear(192, 2))
    >>> t = step_seconds({"small": (small, None, None), "big": (big, None, None)}, (x, y), TrainConfig(batch_size=32))
    >>> sorted(t), t["small"].shape
    (['big', 'small'], (6,))
    """
    if rounds < 1 or warmup < 0:
        raise ValueError(f"rounds must be >= 1 and warmup >= 0, got {rounds} and {warmup}.")
    images, labels = _tensors(train)
    device = resolve_device(cfg.device)
    memory_format = _memory_format(images, cfg.channels_last)
    amp = autocast_dtype(cfg, device)
    state = {}
    for name, (model, augment, loss) in arms.items():
        model.to(device, memory_format=memory_format).train()
        state[name] = (model, augment, loss or classification_loss(cfg.label_smoothing), make_optimizer(model, cfg))
    names, out = list(arms), {name: [] for name in arms}
    cuda = device.type == "cuda"
    clock = time.perf_counter if cuda else time.process_time
    autocast = torch.autocast(device.type, dtype=amp, enabled=amp is not None)
    gen = torch.Generator().manual_seed(_epoch_seed(cfg.seed, 0))
    with torch.random.fork_rng(devices=[device] if cuda else []):
        for r in range(warmup + rounds):
            order = torch.randperm(len(images), generator=gen)[:min(cfg.batch_size, len(images))]
            x = _to_float(next(batches(images, len(order), order)).to(device))
            y = labels[order].to(device)
            for name in names if r % 2 == 0 else names[::-1]:
                model, augment, loss_fn, optimizer = state[name]
                draws = torch.Generator().manual_seed(_epoch_seed(cfg.seed, r))
                if cuda:
                    torch.cuda.synchronize(device)
                t0 = clock()
                xa = augment(x, draws) if augment is not None else x
                _step(model, xa.contiguous(memory_format=memory_format), y, loss_fn, optimizer, autocast)
                if cuda:
                    torch.cuda.synchronize(device)
                seconds = clock() - t0
                if r >= warmup:
                    out[name].append(seconds)
    return {name: np.asarray(v, dtype=float) for name, v in out.items()}


def _record_held_out(model: nn.Module, record: dict, history: list[dict], val, test, batch_size: int | None) -> None:
    """Add the learned state, ``val_acc``, ``test_acc`` and ``test_at_best_val`` to an epoch's record."""
    if hasattr(model, "state"):
        record["state"] = model.state()
    if val is not None:
        record["val_acc"] = evaluate(model, val, batch_size)["acc"]
    if test is not None:
        record["test_acc"] = evaluate(model, test, batch_size)["acc"]
    if val is not None and test is not None:
        best = max([*history, record], key=lambda r: r["val_acc"])  # the first of equals
        record["test_at_best_val"] = best["test_acc"]


def evaluate(model: nn.Module, data, batch_size: int | None = None) -> dict:
    """Accuracy and mean cross-entropy of ``model`` on ``data`` (under ``torch.inference_mode``).

    Args:
        model: classifier; evaluated in eval mode (its previous mode is restored).
        data: ``Dataset`` or ``(images (N, C, H, W), labels (N,))``.
        batch_size: images per forward pass; default :data:`invlib.models.EVAL_BATCH` of the model's device: 128
            on CPU (the reason is beside it), 1024 on CUDA. The passes are :func:`invlib.models.batched`'s.

    Returns:
        ``{"acc": float in [0, 1], "loss": float, "n": int}``

    Example
    -------
    >>> from invlib import models
    >>> evaluate(models.create("small_resnet18", in_chans=1), (torch.rand(8, 1, 28, 28),
    ...          torch.zeros(8, dtype=torch.long)))["n"]
    8
    """
    images, labels = _tensors(data)
    device = next(model.parameters()).device
    batch_size = batch_size or EVAL_BATCH.get(device.type, 1024)
    was_training = model.training
    model.eval()
    try:
        logits = batched(model, images, batch_size, device, out_device=None)
    finally:
        model.train(was_training)
    labels = labels.to(device)
    correct = int((logits.argmax(1) == labels).sum())
    # the loss summed batch by batch, as the logits were computed (the same float as ever, bit for bit)
    loss = sum(F.cross_entropy(z, y, reduction="sum").item()
               for z, y in zip(logits.split(batch_size), labels.split(batch_size)))
    return dict(acc=correct / len(images), loss=loss / len(images), n=len(images))


FIT_CACHE_VERSION = 2  # of fit(cache=True)'s files (utils.cached's version): bump when training changes
# Set by the book runner in a chapter whose own family its training phase trained (invlib.papers.train_family): a
# model the chapter still has to train is one its family function misses, and fit says so
FAMILY_PHASE_ENV = "INVLIB_FAMILY_PHASE"


class FamilyPhaseWarning(UserWarning):
    """A chapter trained a model that the book's training phase should have trained for it (its family function,
    :attr:`invlib.papers.ChapterFacts.family`, misses it): the chapter is right, only slower."""


def check_family_phase(what: str) -> None:
    """Warn (:class:`FamilyPhaseWarning`) when a chapter whose family the book's training phase trained is about to
    train a model, ``what``, itself: called where a cached training misses (:func:`fit` with ``cache=True``, and a
    paper's own training cache). Nothing happens outside such a chapter (``$INVLIB_FAMILY_PHASE`` unset).

    Example
    -------
    >>> check_family_phase("InstaAug, seed 0")  # outside a book build: no warning
    """
    if os.environ.get(FAMILY_PHASE_ENV):
        warnings.warn(f"chapter {os.environ.get('INVLIB_CHAPTER', '?')} trains a model ({what}) that the book's "
                      "training phase did not: its family function (invlib.papers.CHAPTERS) misses it",
                      FamilyPhaseWarning, stacklevel=3)


def _callable_key(fn) -> str:
    """A stable name for an augmentation or loss: module and qualified name, plus the repr of an object's state."""
    if fn is None:
        return "None"
    kind = fn if isinstance(fn, type) or callable(fn) and hasattr(fn, "__qualname__") else type(fn)
    name = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', repr(kind))}"
    return name if kind is fn else f"{name}:{fn!r}"


def _module_config(model: nn.Module) -> list:
    """What a model is besides its weights: each submodule's class and its plain attributes (a regulariser's
    kind and weight, a temperature, the number of copies), which change training without changing a tensor."""
    plain = (bool, int, float, str, tuple, type(None))
    return [(type(m).__qualname__, sorted((k, v) for k, v in vars(m).items()
                                          if not k.startswith("_") and k != "training" and isinstance(v, plain)))
            for m in model.modules()]


def _data_key(data) -> str:
    if data is None:
        return "None"
    images, labels = _tensors(data)
    return digest(images, labels)


def _fit_cached(model: nn.Module, train, cfg: TrainConfig, *, augment, test, val, loss, callback, checkpoint,
                progress) -> list[dict]:
    """:func:`fit` with ``cache=True``: see there."""
    from .models import weights_key

    if callback is not None or checkpoint is not None:
        raise ValueError("fit(cache=True) cannot replay a callback or resume a checkpoint; pass cache=False")
    key = digest(weights_key(model), _module_config(model), _data_key(train),
                 _data_key(test), _data_key(val), asdict(cfg), _callable_key(augment),
                 _callable_key(loss))

    def run():
        check_family_phase(f"{type(model).__name__}, {cfg.epochs} epochs, seed {cfg.seed}")
        history = fit(model, train, cfg, augment=augment, test=test, val=val, loss=loss, progress=progress)
        return dict(model={k: v.detach().cpu() for k, v in model.state_dict().items()}, history=history,
                    rng=torch.get_rng_state())

    found = cached("fit", key, run, version=FIT_CACHE_VERSION)
    model.load_state_dict(found["model"])
    # the layout fit leaves (channels_last for images), loaded from the cache too: a warm rerun measures the model
    # as the cold run that trained it did (float sums in another order differ in their last bits)
    model.to(resolve_device(cfg.device), memory_format=_memory_format(_tensors(train)[0], cfg.channels_last))
    torch.set_rng_state(found["rng"])
    return found["history"]
