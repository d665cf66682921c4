"""Paper D, section 5.1 (chapter D1): per-image rotation ranges on the rotated sprites, InstaAug vs Augerino.

Four classes: two sprites, upright or upside down, each rotated by an angle in ``[-pi/4, pi/4]`` (plus ``pi``
upside down): :func:`invlib.data.load` ``("sprites", ...)``, the data of paper E's chapter E1, which returns each
image's angle in ``factors``. An image at angle ``phi`` (within its class, ``|phi| <= pi/4``) can be rotated
further by ``delta`` and keep its label while ``|phi + delta| < pi/2``, the **class boundary** half-way between
the upright and the upside-down ranges: the largest label-preserving range is ``[-(pi/2 + phi), pi/2 - phi]``,
different for every image. InstaAug (:class:`invlib.learned.instaaug.UniformRanges` on ``rotate``) can learn it;
Augerino (:mod:`invlib.learned.augerino`, rotation only) learns one symmetric range for all.

The measure (:func:`bounds`): every test image's learned upper and lower bounds against its own angle, and the
regression of each bound on the angle (the boundary has slopes -1 and +1).

Example
-------
>>> S = settings("smoke", n_train=64, n_test=32, epochs=1)
>>> S.size, S.h_min, S.module_lr
(32, 1.0, 0.01)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ... import data, models, profiles
from ... import train as _train
from ...learned import augerino, instaaug
from ...utils import check_choice, seeded

BOUNDARY = math.pi / 2  # the class boundary: half-way between the upright and the upside-down ranges


@dataclass(frozen=True)
class Rotations:
    """Section 5.1. Defaults: the paper's and, where it is silent, the authors' code
    (``configs/config_rotation_supervised.yaml`` and their Mario-Iggy data: 1,000 training and 500 test images,
    sprites drawn at 32 px and upsampled to 64, module lr 1e-5 with a 10-epoch warm-up).

    - ``h_min``, ``h_max``, ``lam0``: the entropy band and the starting weight. The entropy of
      ``U[-b, a]`` is ``log(a + b)``; the band [1.0, 1.2] asks for a width between e = 2.7 and 3.3 rad around
      the label-preserving pi (log pi = 1.14), so the ranges must bend with each image's angle to avoid the other
      class. The authors' code uses the bounds a and b themselves as the "entropy" (weight 0.1 each) in a band
      [0, pi] that is never left, so lambda never changes there. ``check_every``: steps between band checks.
    - ``lr``, ``module_lr``, ``warmup_epochs``: Adam for the classifier, SGD-like step size for the module
      (Adam here; the authors: SGD at 1e-5, which barely moves the bounds in a short run).
    - ``augerino_reg``, ``augerino_lr``: Augerino on ``rotate`` alone (Benton et al.: reg 0.01 to 0.1, lr 0.01).
    - ``trunk_widths``: the 4-conv classifier of paper E's sprite chapter (``conv4``).
    """

    profile: str = "paper"
    n_train: int = 1000
    n_test: int = 500
    size: int = 64
    max_angle: float = 45.0
    color: bool = True
    epochs: int = 100
    batch_size: int = 100
    trunk_widths: tuple[int, ...] = (32, 64, 128, 256)
    lr: float = 1e-3
    module_lr: float = 1e-5
    warmup_epochs: int = 10
    h_min: float = 1.0
    h_max: float = 1.2
    lam0: float = 0.1
    check_every: int = 10
    augerino_reg: float = 0.05
    augerino_lr: float = 0.01
    copies: int = 10
    seeds: int = 1
    seed: int = 0
    device: str = "auto"
    progress: bool = True

    def __post_init__(self):
        if not 0 < self.max_angle < 90:
            raise ValueError(f"max_angle is the data's rotation range in degrees, in (0, 90); got {self.max_angle}.")
        if self.seeds < 1:
            raise ValueError(f"seeds is how many InstaAug models seed_slopes trains, at least 1; got {self.seeds}.")


SETTINGS = {
    "smoke": dict(n_train=512, n_test=200, size=32, epochs=2, batch_size=64, trunk_widths=(8, 16, 32, 64),
                  module_lr=0.01, warmup_epochs=0, check_every=4, copies=4),
    # three InstaAug seeds: one seed's verdict flips with the module's start; the chapter took 77-81 s cold on
    # 2 cores (bare loop 505 img/s), about 15 s per InstaAug model. Rejected: 8 epochs (one measured run; the
    # chapter's calls 53 s of process time against 61 s). Every seed's bounds still follow the angle (upper slopes
    # -1.05 / -0.77 / -0.89, lower +0.65 / +0.85 / +1.00), but the authors' stored run is at 10 epochs
    # (authors/rotation_same becomes not measurable) and fig5/reaches_boundary moves from inconclusive to not
    # reproduced (share near the boundary 0.19, interval to 0.43, against 0.10 and 0.51).
    "cpu": dict(n_train=2000, n_test=500, size=32, epochs=10, batch_size=64, trunk_widths=(8, 16, 32, 64),
                module_lr=0.01, warmup_epochs=1, check_every=8, copies=10, seeds=3),
    "gpu": dict(module_lr=1e-3, warmup_epochs=10),
}


def settings(profile: str | profiles.Profile = "cpu", **overrides) -> Rotations:
    """Chapter D1's settings: the paper's, the profile's changes, then the overrides that are not None.

    Example
    -------
    >>> settings("cpu").epochs, settings("cpu", epochs=3).epochs
    (10, 3)
    """
    return profiles.settings(Rotations, SETTINGS, profile, **overrides)


def sprite_data(S: Rotations) -> tuple[data.Dataset, data.Dataset]:
    """Train and test sprites ``(N, 3, size, size)`` uint8 with each image's angle in ``factors["angle"]``.

    Example
    -------
    >>> train, test = sprite_data(settings("smoke", n_train=8, n_test=4))
    >>> train.images.shape, sorted(test.factors)
    (torch.Size([8, 3, 32, 32]), ['angle', 'upside_down'])
    """
    return tuple(data.load("sprites", split, n=n, size=S.size, seed=S.seed, max_angle=S.max_angle, color=S.color)
                 for split, n in (("train", S.n_train), ("test", S.n_test)))


def _trunk(S: Rotations, seed: int):
    return models.create("conv4", num_classes=4, in_chans=3, widths=S.trunk_widths, seed=seed)


def _config(S: Rotations, lr: float, aug_lr: float, seed: int) -> _train.TrainConfig:
    return _train.TrainConfig(epochs=S.epochs, batch_size=S.batch_size, optimizer="adam", lr=lr, aug_lr=aug_lr,
                              weight_decay=0.0, schedule="none", seed=seed, device=S.device)


def make(S: Rotations, method: str, seed: int | None = None):
    """``(model, TrainConfig, loss)`` of one method of the chapter: ``"instaaug"`` (per-image ranges) or
    ``"augerino"`` (one range). Both start from the trunk weights of ``seed`` (default ``S.seed``), InstaAug's
    module from ``instaaug.MODULE_SEED + seed``; training draws from ``seed`` too.

    Example
    -------
    >>> net, cfg, loss = make(settings("smoke"), "instaaug")
    >>> type(net).__name__, cfg.aug_lr, type(loss).__name__
    ('InstaAug', 0.01, 'Objective')
    """
    check_choice(method, METHODS, "method")
    seed = S.seed if seed is None else seed
    if method == "augerino":
        net = augerino.augerino(_trunk(S, seed), reg=S.augerino_reg, copies=S.copies, generators=("rotate",))
        return net, _config(S, S.lr, S.augerino_lr, seed), None
    with seeded(instaaug.MODULE_SEED + seed):  # the module's start depends on the seed alone, not on what ran before
        ranges = instaaug.UniformRanges(("rotate",), channels=(8, 8, 16, 32))
    net = instaaug.instaaug(_trunk(S, seed), ranges, copies=S.copies)
    band = instaaug.EntropyBand(S.h_min, S.h_max, S.lam0)
    steps = S.n_train // S.batch_size
    return net, _config(S, S.lr, S.module_lr, seed), instaaug.objective(band, S.check_every, S.warmup_epochs * steps)


METHODS = ("instaaug", "augerino")


def train(S: Rotations, train_set, test_set) -> dict:
    """Train both methods (cached); returns ``{method: (model in eval mode, history)}``; the last record holds
    ``test_acc`` (the paper's test-time augmentation: ``S.copies`` draws, mean logits for InstaAug, mean
    log-probabilities for Augerino).

    Example
    -------
    >>> S = settings("smoke", n_train=64, n_test=16, epochs=1, progress=False)
    >>> out = train(S, *sprite_data(S))
    >>> sorted(out)
    ['augerino', 'instaaug']
    """
    out = {}
    for method in METHODS:
        net, cfg, loss = make(S, method)
        hist = _train.fit(net, train_set, cfg, loss=loss, cache=True, progress=S.progress)
        net.eval()
        torch.manual_seed(S.seed)
        hist[-1]["test_acc"] = _train.evaluate(net, test_set)["acc"]
        if S.progress:
            print(f"{method:10s} test acc {hist[-1]['test_acc']:.3f}")
        out[method] = (net, hist)
    return out


def seed_slopes(S: Rotations, train_set, test_set, trained: dict | None = None) -> pd.DataFrame:
    """InstaAug trained from ``S.seeds`` seeds (``S.seed`` first: :func:`train`'s model, taken from ``trained``
    when given, else from the cache) on the same data: one row per seed with :func:`slopes` of its learned bounds
    on ``test_set`` and its test accuracy. How much the Fig. 5 picture depends on where the module and the
    classifier start.

    Example
    -------
    >>> S = settings("smoke", n_train=64, n_test=16, epochs=1, seeds=2, progress=False)
    >>> t = seed_slopes(S, *sprite_data(S))
    >>> t.seed.tolist(), "upper_slope" in t
    ([0, 1], True)
    """
    rows = []
    for seed in range(S.seed, S.seed + S.seeds):
        if seed == S.seed and trained is not None:  # train()'s model, already evaluated with this seed
            net, hist = trained["instaaug"]
            acc = hist[-1]["test_acc"]
        else:
            net, cfg, loss = make(S, "instaaug", seed)
            _train.fit(net, train_set, cfg, loss=loss, cache=True, progress=S.progress)
            net.eval()
            torch.manual_seed(seed)
            acc = _train.evaluate(net, test_set)["acc"]
        rows.append(dict(seed=seed, **slopes(bounds(net, test_set)), test_acc=acc))
    return pd.DataFrame(rows)


def class_angle(ds: data.Dataset) -> torch.Tensor:
    """``(N,)`` each image's angle within its class (radians, ``|phi| <= max_angle``): the angle the data applied,
    minus ``pi`` for the upside-down classes, wrapped to ``(-pi, pi]``.

    Example
    -------
    >>> ds = sprite_data(settings("smoke", n_train=8, n_test=64))[1]
    >>> bool((class_angle(ds).abs() <= math.pi / 4 + 1e-5).all())
    True
    """
    a = ds.factors["angle"] - math.pi * ds.factors["upside_down"]
    return torch.remainder(a + math.pi, 2 * math.pi) - math.pi


def bounds(net, ds: data.Dataset, batch: int = 256) -> pd.DataFrame:
    """Per test image: its angle within its class ``phi``, the learned ``upper`` (``a``) and ``lower`` (``b``)
    bounds of the rotation ``U[-b, a]`` (radians), and the label-preserving ones ``upper_true = pi/2 - phi``,
    ``lower_true = pi/2 + phi``. An Augerino model gives its one half-width for every image.

    Example
    -------
    >>> S = settings("smoke", n_train=8, n_test=16)
    >>> net, _, _ = make(S, "instaaug")
    >>> df = bounds(net.eval(), sprite_data(S)[1])
    >>> list(df.columns), len(df)
    (['phi', 'upper', 'lower', 'upper_true', 'lower_true'], 16)
    """
    phi = class_angle(ds)
    if isinstance(net, instaaug.InstaAug):
        with torch.inference_mode():
            parts = [net.augment.distribution(ds.float()[i:i + batch]) for i in range(0, len(ds), batch)]
        low, high = torch.cat([p[0] for p in parts])[:, 0], torch.cat([p[1] for p in parts])[:, 0]
    else:
        half = net.state()["layer0"]["rotate"]["max_value"]
        low, high = torch.full_like(phi, -half), torch.full_like(phi, half)
    return pd.DataFrame(dict(phi=phi.numpy(), upper=high.numpy(), lower=(-low).numpy(),
                             upper_true=(BOUNDARY - phi).numpy(), lower_true=(BOUNDARY + phi).numpy()))


def slopes(df: pd.DataFrame) -> dict:
    """Least-squares slope of each bound on the angle (the boundary: -1 for the upper, +1 for the lower), the
    share of images whose bounds are both within 0.2 rad of the boundary, and the mean gap to it.

    Example
    -------
    >>> phi = np.linspace(-0.7, 0.7, 9)
    >>> df = pd.DataFrame(dict(phi=phi, upper=1.5 - phi, lower=1.5 + phi, upper_true=BOUNDARY - phi,
    ...                        lower_true=BOUNDARY + phi))
    >>> s = slopes(df)
    >>> round(s["upper_slope"], 3), round(s["lower_slope"], 3), s["near_boundary"]
    (-1.0, 1.0, 1.0)
    """
    gap = np.maximum((df.upper - df.upper_true).abs(), (df.lower - df.lower_true).abs())
    return dict(upper_slope=float(np.polyfit(df.phi, df.upper, 1)[0]),
                lower_slope=float(np.polyfit(df.phi, df.lower, 1)[0]),
                near_boundary=float((gap <= 0.2).mean()),
                mean_gap=float(((df.upper_true - df.upper).abs() + (df.lower_true - df.lower).abs()).mean() / 2),
                width=float((df.upper + df.lower).mean()))
