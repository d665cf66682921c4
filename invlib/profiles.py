"""Run profiles: one small dataclass per scale, read by the zoo, the CLI and every notebook.

| profile | where                         | budget                                         |
|---------|-------------------------------|------------------------------------------------|
| smoke   | CI, every notebook            | <= 60 s per notebook on 2 CPU cores            |
| cpu     | ``make book``, the default    | <= 2 min per notebook on 2 cores, cold cache   |
| gpu     | one GPU                       | the papers' architectures at small scale       |
| paper   | many GPUs (torchrun)          | the papers' settings                           |
"""

from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass

from .utils import check_choice, check_type


@dataclass(frozen=True)
class Profile:
    """Sizes and devices for one scale of the book.

    Attributes
    ----------
    name:        profile name
    device:      "cpu", "cuda" or "auto"
    n_train:     training images for zoo models (subset of the training split, fixed by seed)
    n_test:      test images for evaluation
    epochs:      zoo training epochs
    batch_size:  training batch size
    workers:     CPU threads torch may use (0 = torch default)
    dataset:     default dataset of the zoo and notebooks
    img_size:    image side in pixels
    progress:    show progress bars

    Example
    -------
    >>> get_profile("smoke").n_train
    2048
    """

    name: str
    device: str = "cpu"
    n_train: int = 20_000
    n_test: int = 10_000
    epochs: int = 4
    batch_size: int = 128
    workers: int = 0
    dataset: str = "fashion_mnist_color"
    img_size: int = 28
    progress: bool = True

    def replace(self, **overrides) -> Profile:
        """A copy with some fields changed; unknown fields list the valid ones, wrong types say the right one.

        Example
        -------
        >>> get_profile("cpu").replace(epochs=2, dataset="cifar10").epochs
        2
        """
        return replace_checked(self, overrides, "profile field")


def replace_checked(obj, overrides: dict, what: str | None = None):
    """``dataclasses.replace(obj, **overrides)`` after checking every name and type against ``obj``'s fields.

    The one place where the book merges overrides: :meth:`Profile.replace`, :func:`resolve` and :func:`settings`
    all come here. Unknown names raise ``ValueError`` listing the valid ones; a value of the wrong type raises
    ``TypeError`` naming the right one (lists become tuples where a field is a tuple).

    Example
    -------
    >>> replace_checked(get_profile("smoke"), {"epochs": 3}).epochs
    3
    >>> replace_checked(get_profile("smoke"), {"epoch": 3}, "profile field")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: Unknown profile field 'epoch'. Did you mean 'epochs'? Valid profile fields: batch_size, ...
    """
    hints = typing.get_type_hints(type(obj))
    names = [f.name for f in dataclasses.fields(obj)]
    checked = {}
    for key, value in overrides.items():
        check_choice(key, names, what or f"{type(obj).__name__} field")
        checked[key] = check_type(f"{what or type(obj).__name__ + ' field'} {key!r}", value, hints[key])
    return dataclasses.replace(obj, **checked)


# The main job's limit: ``make book`` on the cpu profile, cold, set-up included, in 40 minutes on 2 cores with the
# bare loop of benchmarks/bench_train.py at about 900 img/s (the machines the book is built on). The book's other
# budgets are stated at 500 img/s (invlib.book.REFERENCE_IMG_S); benchmarks/bench_book.py scales them all.
BOOK_LIMIT_S = 2400
BOOK_LIMIT_IMG_S = 900

PROFILES: dict[str, Profile] = {
    "smoke": Profile("smoke", n_train=2048, n_test=1000, epochs=1, batch_size=32),
    "cpu": Profile("cpu", n_train=6_000, n_test=10_000, epochs=3, batch_size=128),  # 00: none 85.7, std 74.2 %
    "gpu": Profile("gpu", device="cuda", n_train=60_000, n_test=10_000, epochs=15, batch_size=256),
    "paper": Profile("paper", device="cuda", n_train=60_000, n_test=10_000, epochs=30, batch_size=256),
}


def get_profile(name: str | Profile) -> Profile:
    """Return the named profile (a ``Profile`` passes through); unknown names list the valid ones.

    ``INVLIB_PROGRESS=0`` in the environment turns progress bars off (the book runner sets it, so executed
    notebooks hold results, not bars).

    Example
    -------
    >>> get_profile("cpu").epochs > get_profile("smoke").epochs
    True
    """
    if isinstance(name, Profile):
        return name
    if not isinstance(name, str):
        raise TypeError(f"profile must be a name ({', '.join(PROFILES)}) or a Profile, got {name!r}")
    prof = PROFILES[check_choice(name, PROFILES, "profile")]
    if os.environ.get("INVLIB_PROGRESS", "1") == "0":
        prof = prof.replace(progress=False)
    return prof


def resolve(profile: str | Profile, **overrides) -> Profile:
    """The profile a notebook runs with: ``get_profile(profile)`` with every override that is not ``None``.

    Notebooks pass their parameters here, so ``-p epochs 2`` on the papermill command line changes the run,
    and a wrong type fails at once with the field's expected type.

    Example
    -------
    >>> p = resolve("smoke", dataset=None, epochs=2)
    >>> p.name, p.epochs, p.dataset
    ('smoke', 2, 'fashion_mnist_color')
    >>> resolve("smoke", epochs="two")
    Traceback (most recent call last):
    TypeError: profile field 'epochs' must be int, got str 'two'
    """
    return replace_checked(get_profile(profile), _given(overrides), "profile field")


def settings(cls: type, table: dict[str, dict], profile: str | Profile, presets: dict | None = None, **overrides):
    """One paper's settings for one run: ``cls``'s defaults, then ``table[profile]``, then
    ``presets[profile][dataset]`` when the overrides name a dataset that has one, then the overrides that are not
    ``None``; a frozen dataclass instance, every field type-checked.

    A preset holds what goes with a dataset on a profile: paper B's cpu profile runs ``scenes`` with models built
    for 56 px, and ``-p dataset=fashion_mnist_color`` brings back the 28 px models and the regime measured there.

    The defaults of ``cls`` are the paper's own settings; ``table`` maps a profile name to the fields that
    profile changes (a profile missing from it runs the paper's settings). A chapter passes its papermill
    parameters as ``overrides`` (``None`` = keep the profile's value), so ``-p n_train=500`` changes one run
    and ``-p n_train=lots`` fails at once with the field's type. Every settings class also has the field
    ``profile`` (the profile's name), filled in here, and a class with fields ``device`` and ``progress`` gets
    the profile's (so no module looks the profile up again; an override still wins).

    Example
    -------
    >>> @dataclasses.dataclass(frozen=True)
    ... class Demo:
    ...     profile: str = "paper"
    ...     epochs: int = 200
    ...     widths: tuple[int, ...] = (64, 128)
    ...     dataset: str = "cifar10"
    >>> S = settings(Demo, {"cpu": dict(epochs=4, dataset="fashion_mnist")}, "cpu", widths=[8, 16], dataset=None)
    >>> S
    Demo(profile='cpu', epochs=4, widths=(8, 16), dataset='fashion_mnist')
    >>> settings(Demo, {}, "cpu", {"cpu": {"mnist": dict(epochs=9)}}, dataset="mnist").epochs
    9
    >>> settings(Demo, {}, "cpu", epoch=3)
    Traceback (most recent call last):
    ValueError: Unknown Demo field 'epoch'. Did you mean 'epochs'? Valid Demo fields: dataset, epochs, profile, widths.
    """
    prof = get_profile(profile)
    name = prof.name
    unknown = sorted(set(table) - set(PROFILES))
    if unknown:
        raise ValueError(f"settings table of {cls.__name__} names unknown profile(s) {unknown}; "
                         f"valid: {sorted(PROFILES)}")
    # the device and progress bars of the run come from the profile, once, for settings that have those fields
    run = {k: getattr(prof, k) for k in ("device", "progress") if k in {f.name for f in dataclasses.fields(cls)}}
    preset = (presets or {}).get(name, {}).get(overrides.get("dataset"), {})
    base = replace_checked(cls(), {**run, **table.get(name, {}), **preset, "profile": name})
    return replace_checked(base, _given(overrides))


def _given(overrides: dict) -> dict:
    """The overrides a caller actually gave (``None`` means "keep the default")."""
    return {k: v for k, v in overrides.items() if v is not None}


_NOT_PARAMETERS = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def cell(namespace: dict) -> dict:
    """A chapter's parameters, read from its namespace (what :func:`invlib.results.open_chapter` passes to the
    paper's ``settings``).

    A chapter's ``parameters`` cell holds only plain values (``None``, numbers, text, lists, dicts), which
    papermill may replace; this returns every such name of ``namespace`` (a notebook's ``globals()``) that
    does not start with ``_``, so a chapter names each parameter once, in its parameters cell. Modules,
    functions and IPython's own names (``In``, ``Out``) are left out. Call it before the chapter defines any
    plain value of its own; the paper's ``settings`` then rejects a name it does not know, listing the valid
    ones.

    Example
    -------
    >>> import math
    >>> cell({"profile": "smoke", "seeds": 2, "dataset": None, "math": math, "In": [""], "_i": ""})
    {'profile': 'smoke', 'seeds': 2, 'dataset': None}
    """
    plain = (type(None), bool, int, float, str, list, tuple, dict)
    return {k: v for k, v in namespace.items()
            if not k.startswith("_") and k not in _NOT_PARAMETERS and isinstance(v, plain)}


@dataclass(frozen=True)
class Foundations:
    """Chapter 00's settings: the profile, the data it shows (and trains the zoo's book entries on), and what it
    shows. Make one with :func:`foundations`.

    Attributes
    ----------
    profile:  the profile's name
    dataset:  a name of :func:`invlib.data.available` (None: the profile's)
    root:     the dataset's folder (your own images: ``<root>/<class>/<image>``)
    seed:     which images are shown
    n_show:   images per grid
    """

    profile: str = "cpu"
    dataset: str | None = None
    root: str | None = None
    seed: int = 0
    n_show: int = 16

    @property
    def run_profile(self) -> Profile:
        """The profile with this chapter's dataset: what the zoo trains on."""
        return resolve(self.profile, dataset=self.dataset)


def foundations(profile: str | Profile = "cpu", **overrides) -> Foundations:
    """Chapter 00's settings (:class:`Foundations`), the overrides that are not None applied and type-checked.

    Example
    -------
    >>> S = foundations("smoke", n_show=4)
    >>> S.n_show, S.run_profile.dataset
    (4, 'fashion_mnist_color')
    """
    return settings(Foundations, {}, profile, **overrides)
