"""Small helpers shared by every module: cache folders, name checks, atomic writes, seeds, devices."""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import random
import socket
import tempfile
import types
import typing
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent  # the repository (or install) folder holding invlib/


def cache_dir(*parts: str) -> Path:
    """The folder for generated files (zoo checkpoints, feature caches, NLTK data), created on demand.

    ``$INVLIB_CACHE`` if set, else ``.cache/`` in the repository (or the current folder).

    Example
    -------
    >>> cache_dir("zoo").name
    'zoo'
    """
    root = Path(os.environ.get("INVLIB_CACHE") or REPO / ".cache")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_choice(name: str, valid: Iterable[str], what: str) -> str:
    """Return ``name`` if it is in ``valid``; otherwise raise ``ValueError`` listing every valid name.

    Example
    -------
    >>> check_choice("sgd", ["sgd", "adam"], "optimizer")
    'sgd'
    """
    valid = sorted(valid)
    if name in valid:
        return name
    close = difflib.get_close_matches(str(name), valid, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"Unknown {what} {name!r}.{hint} Valid {what}s: {', '.join(valid)}.")


def check_type(what: str, value, kind):
    """Return ``value`` if it is a ``kind``; otherwise raise ``TypeError`` saying what was expected.

    ``kind`` is a class or a type hint: ``X | None``, ``tuple[int, ...]``, ``tuple[float, float]``,
    ``list[str]``, ``dict[str, str]``. An int passes for a float and becomes one; a bool is not an int; a list
    passes for a tuple and becomes one (papermill and JSON have no tuples).

    Example
    -------
    >>> check_type("lr", 1, float)
    1.0
    >>> check_type("widths", [8, 16], tuple[int, ...])
    (8, 16)
    >>> check_type("n", None, int | None) is None
    True
    >>> check_type("epochs", "2", int)
    Traceback (most recent call last):
    TypeError: epochs must be int, got str '2'
    """
    try:
        return _checked(value, kind)
    except TypeError:
        raise TypeError(f"{what} must be {_type_name(kind)}, got {type(value).__name__} {value!r}") from None


def _type_name(kind) -> str:
    return kind.__name__ if isinstance(kind, type) and not typing.get_args(kind) else str(kind).replace("typing.", "")


def _checked(value, kind):
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is typing.Any or kind is object:
        return value
    if kind is None or kind is type(None):
        if value is None:
            return None
        raise TypeError
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            try:
                return _checked(value, arg)
            except TypeError:
                pass
        raise TypeError
    if origin in (tuple, list):
        if not isinstance(value, (tuple, list)):
            raise TypeError
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            items = [_checked(v, args[0]) for v in value]
        elif origin is tuple and args:
            if len(args) != len(value):
                raise TypeError
            items = [_checked(v, a) for v, a in zip(value, args)]
        else:
            items = [_checked(v, args[0]) if args else v for v in value]
        return origin(items)
    if origin is dict:
        if not isinstance(value, dict):
            raise TypeError
        return {_checked(k, args[0]) if args else k: _checked(v, args[1]) if args else v for k, v in value.items()}
    if origin is not None:  # another generic (e.g. collections.abc.Callable): check the bare class
        kind = origin
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if kind is float and is_int:
        return float(value)
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return value
    raise TypeError


def check_images(x: torch.Tensor, what: str = "images", channels: int | None = None) -> None:
    """Raise a clear error unless ``x`` is a float tensor of shape ``(B, C, H, W)``.

    Example
    -------
    >>> check_images(torch.rand(2, 3, 8, 8))
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what} must be a torch.Tensor of shape (B, C, H, W), got {type(x).__name__}.")
    if x.ndim != 4:
        raise ValueError(f"{what} must have shape (B, C, H, W), got shape {tuple(x.shape)}.")
    if not x.is_floating_point():
        raise TypeError(f"{what} must be floating point in [0, 1], got dtype {x.dtype}; use x.float() / 255.")
    if channels is not None and x.shape[1] != channels:
        raise ValueError(f"{what} must have {channels} channels, got shape {tuple(x.shape)}.")


def atomic_save(obj, path: str | os.PathLike) -> Path:
    """Write to a temporary file in the same folder, then rename: readers never see half a file.

    ``str``/``bytes`` are written as they are (UTF-8 text); anything else goes through ``torch.save``.

    Example
    -------
    >>> p = atomic_save({"a": 1}, Path(tempfile.mkdtemp()) / "x.pt")
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        if isinstance(obj, (str, bytes)):
            Path(tmp).write_bytes(obj.encode() if isinstance(obj, str) else obj)
        else:
            torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def digest(*parts) -> str:
    """A short hash of tensors (their bytes), objects with a ``digest_key()`` (what it returns: images on disk
    are keyed by their files) and other values (their ``repr``): the key of a disk cache.

    Example
    -------
    >>> x = torch.zeros(2, 3)
    >>> digest(x, "rotate", 0) == digest(x.clone(), "rotate", 0) != digest(x + 1, "rotate", 0)
    True
    """
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, torch.Tensor):
            h.update(p.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
        elif hasattr(p, "digest_key"):  # images on disk (invlib.streaming.ImageFiles): their files, not their pixels
            h.update(repr(p.digest_key()).encode())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()[:16]


_MEMORY: dict = {}  # cached(..., memory=True): values kept in this process, at most _MEMORY_MAX of them
_MEMORY_MAX = 64


def cache_path(folder: str, name: str, version: int | None = None) -> Path:
    """The file of one cached value: ``cache_dir(folder) / "<name>[-v<version>].pt"``. Bumping a cache's
    ``version`` (when the code that makes its values changes) gives every value a new file.

    Example
    -------
    >>> cache_path("probes", "abc", version=2).name
    'abc-v2.pt'
    """
    return cache_dir(folder) / (f"{name}-v{version}.pt" if version is not None else f"{name}.pt")


CACHE_LOG_ENV = "INVLIB_CACHE_LOG"  # a file that every read and write of a cached value is appended to (the runner's)


def _log_cache(event: str, path: Path) -> None:
    """Append ``"<event>\t<path>"`` (``read`` or ``write``) to ``$INVLIB_CACHE_LOG`` when it is set: the book runner
    records which caches each chapter used (:func:`invlib.book.execute`)."""
    log = os.environ.get(CACHE_LOG_ENV)
    if log:
        with open(log, "a") as f:
            f.write(f"{event}\t{path}\n")


def load_cached(path: Path, weights_only: bool = False):
    """The value stored at ``path``, or None when there is none or it is unreadable (a corrupt file is deleted,
    with a warning, so that it is made again).

    Example
    -------
    >>> load_cached(cache_path("doctest", "never-written")) is None
    True
    """
    if not path.exists():
        return None
    try:
        value = torch.load(path, weights_only=weights_only)
        _log_cache("read", path)
        return value
    except Exception as err:  # a torn or stale file: make it again rather than fail a build
        warnings.warn(f"cache file {path} is unreadable ({type(err).__name__}: {err}); recomputing.", stacklevel=2)
        path.unlink(missing_ok=True)
        return None


def cached(folder: str, name: str, make, version: int | None = None, memory: bool = False, disk: bool = True):
    """``make()``'s value, computed once: the one cache of the library (:func:`cached_many` for one value).

    Args:
        folder, name: where the value lives (:func:`cache_path`); ``name`` is usually a :func:`digest` of
            everything the value depends on.
        version: part of the file name; bump it when the code that makes the values changes.
        memory: also keep the value in this process (the last 64), for values read many times in one run.
        disk: keep it on disk (written atomically; an unreadable file is made again); ``disk=False`` with
            ``memory=True`` for values too large to write, such as the features of a whole evaluation set at
            paper scale.

    Example
    -------
    >>> cached("doctest", digest("demo", 1), lambda: {"answer": 42}, version=1)
    {'answer': 42}
    """
    return cached_many(folder, {name: name}, lambda missing: {name: make()}, version, memory, disk)[name]


def cached_many(folder: str, names: dict, make, version: int | None = None, memory: bool = False,
                disk: bool = True, weights_only: bool = False) -> dict:
    """Several values of one cache, ``{key: value}``, with one call ``make(missing)`` for all those not cached
    yet (none when every value is): ``names`` is ``{key: name}``, ``make`` gets the list of missing keys and
    returns ``{key: value}`` for them (e.g. one pass over the images for several featurizers). ``version``,
    ``memory`` and ``disk`` as in :func:`cached`; ``weights_only`` reads the files with
    ``torch.load(weights_only=True)`` (values of tensors and plain containers only).

    Example
    -------
    >>> run, asked = os.urandom(4).hex(), []
    >>> square = lambda keys: asked.append(keys) or {k: k * k for k in keys}
    >>> cached_many("doctest", {k: digest(run, k) for k in (2, 3)}, square, version=1)
    {2: 4, 3: 9}
    >>> cached_many("doctest", {k: digest(run, k) for k in (2, 3, 4)}, square, version=1), asked
    ({2: 4, 3: 9, 4: 16}, [[2, 3], [4]])
    """
    paths = {key: cache_path(folder, name, version) for key, name in names.items()}
    out = {}
    for key, path in paths.items():
        value = _MEMORY.get(path) if memory else None
        if value is None and disk:
            value = load_cached(path, weights_only)
        if value is not None:
            out[key] = value
    missing = [key for key in names if key not in out]
    if missing:
        made = make(missing)
        for key in missing:
            out[key] = made[key]
            if disk:
                atomic_save(made[key], paths[key])
                _log_cache("write", paths[key])
    if memory:
        for key, path in paths.items():
            if path not in _MEMORY:
                if len(_MEMORY) >= _MEMORY_MAX:
                    _MEMORY.pop(next(iter(_MEMORY)))
                _MEMORY[path] = out[key]
    return {key: out[key] for key in names}


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA).

    Example
    -------
    >>> seed_everything(0); a = torch.rand(2); seed_everything(0)
    >>> torch.equal(a, torch.rand(2))
    True
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (seeding the legacy global RNG is the point)
    torch.manual_seed(seed)


@contextlib.contextmanager
def seeded(seed: int):
    """Run a block on torch's CPU generator seeded with ``seed`` and give the caller's state back afterwards: what
    the block initialises (weights) depends on ``seed`` alone, whatever ran before, and draws after it are the
    ones they would have been without it.

    Example
    -------
    >>> with seeded(3):
    ...     a = torch.rand(2)
    >>> with seeded(3):
    ...     torch.equal(a, torch.rand(2))
    True
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """``None`` or ``"auto"`` -> CUDA when available, else CPU; other values pass through ``torch.device``, and a
    CUDA device on a machine without one is a ``RuntimeError`` that says how to run on the CPU.

    Example
    -------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {str(device)!r} was asked for (the gpu and paper profiles' default), but CUDA is "
                           "not available here: pass device='cpu' or 'auto' (in a chapter: -p device=cpu).")
    return device


# The memory allocators a worker process of the book may run under (LD_PRELOAD), best first, each as
# (the ctypes.util.find_library name, the Debian package): PyTorch on a CPU allocates and frees a tensor per operation,
# and glibc's malloc returns large blocks to the system each time. Under tcmalloc three of the book's models train
# 1.12-1.13x as fast here, with the same weights to the bit (benchmarks/bench_allocator.py;
# benchmarks/measurements/foundation.md).
ALLOCATORS = {"tcmalloc": ("tcmalloc_minimal", "libtcmalloc-minimal4"), "jemalloc": ("jemalloc", "libjemalloc2")}
ALLOCATOR_ENV = "INVLIB_ALLOCATOR"  # auto (default), tcmalloc, jemalloc or system


def allocator_env(choice: str | None = None) -> dict[str, str]:
    """The environment that starts a process under a faster memory allocator: ``{"LD_PRELOAD": ...}`` (added to
    any ``LD_PRELOAD`` already set), or ``{}`` where none is wanted or found. The book's training phase and its chapter
    kernels start under it (:func:`invlib.zoo.train_phase`, :func:`invlib.book.execute`); it changes how fast
    memory is handed out, never what is computed.

    ``choice`` (default ``$INVLIB_ALLOCATOR``, else ``"auto"``): ``"auto"`` takes the first of :data:`ALLOCATORS`
    installed (``make data`` installs tcmalloc as root on Debian), ``"tcmalloc"`` or ``"jemalloc"`` that one (an
    error when it is missing), ``"system"`` none. Only on Linux: elsewhere ``{}``.

    Example
    -------
    >>> allocator_env("system")
    {}
    >>> sorted(allocator_env("auto"))[:1] in ([], ["LD_PRELOAD"])
    True
    """
    import ctypes.util
    import sys

    choice = choice or os.environ.get(ALLOCATOR_ENV) or "auto"
    check_choice(choice, ["auto", *ALLOCATORS, "system"], "allocator")
    if choice == "system" or not sys.platform.startswith("linux"):
        return {}
    for name in ALLOCATORS if choice == "auto" else [choice]:
        found = ctypes.util.find_library(ALLOCATORS[name][0])
        if found:
            loaded = [p for p in os.environ.get("LD_PRELOAD", "").split() if p]
            env = {"LD_PRELOAD": " ".join(loaded + [found]) if found not in loaded else " ".join(loaded)}
            if name == "tcmalloc":  # it reports every allocation above 1 GiB on stderr: a chapter's output
                env["TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD"] = str(1 << 40)
            return env
        if choice != "auto":
            raise RuntimeError(f"${ALLOCATOR_ENV}={choice}, but lib{ALLOCATORS[name][0]} is not installed: install "
                               f"the Debian package {ALLOCATORS[name][1]}, or set {ALLOCATOR_ENV}=auto or system.")
    return {}


def allocator_name(env: dict | None = None) -> str:
    """Which allocator a process started with ``env`` (default: :func:`allocator_env`'s) runs under: a name of
    :data:`ALLOCATORS`, or ``"system"`` (what the book's build record keeps beside its seconds).

    Example
    -------
    >>> allocator_name({}), allocator_name({"LD_PRELOAD": "libjemalloc.so.2"})
    ('system', 'jemalloc')
    """
    preload = (allocator_env() if env is None else env).get("LD_PRELOAD", "")
    return next((name for name, (lib, _) in ALLOCATORS.items() if f"lib{lib}." in preload), "system")


def is_online(host: str = "huggingface.co", port: int = 443, timeout: float = 3.0) -> bool:
    """True when ``host`` answers a TCP connection within ``timeout`` seconds and
    ``HF_HUB_OFFLINE`` (or ``INVLIB_OFFLINE``) is not set. Used to fail fast (not hang) before any download.

    Example
    -------
    >>> os.environ["HF_HUB_OFFLINE"] = "1"; is_online()
    False
    """
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0") or os.environ.get("INVLIB_OFFLINE"):
        return False
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def progress(items, enabled: bool = True, desc: str = "", total: int | None = None, leave: bool = False, **kw):
    """``items`` with a text progress bar when ``enabled`` (the library's one bar: plain tqdm, since tqdm.auto
    needs ipywidgets in notebooks); ``items`` itself when not. ``kw`` goes to tqdm (e.g. ``unit``).

    Example
    -------
    >>> list(progress(range(3), enabled=False))
    [0, 1, 2]
    """
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, total=total, leave=leave, **kw)
