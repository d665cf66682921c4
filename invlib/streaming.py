"""Images that stay on disk: a lazy ``(N, C, H, W)`` uint8 image array and the one batch iterator of the book.

An image folder larger than :func:`memory_cap` is loaded by :func:`invlib.data.load` as a :class:`Dataset
<invlib.data.Dataset>` whose ``images`` is an :class:`ImageFiles`: the file list, decoded and resized to
``size x size`` only when rows are asked for. Everything that consumes a dataset reads its images through
:func:`batches` (the training loop, :func:`invlib.models.batched` and so every feature extraction and
prediction, the papers' measures), which slices a tensor in memory and, for :class:`ImageFiles`, decodes the
batches in ``DataLoader`` worker processes, pinned for a CUDA device. Indexing an :class:`ImageFiles` with
a slice, a list or an index tensor decodes those rows here; indexing a :class:`Dataset` keeps them on disk.

The decoded pixels are those of an in-memory load of the same folder (one decoder, :func:`decode`), so a
model trains to the same weights from either.

Example
-------
>>> from invlib import data
>>> ds = data.load("folder", root=demo_folder(tempfile.mkdtemp(), n=6), size=16, stream=True)
>>> type(ds.images).__name__, tuple(ds.images.shape), ds.images[:2].dtype
('ImageFiles', (6, 3, 16, 16), torch.uint8)
>>> [tuple(b.shape) for b in batches(ds.images, 4)]
[(4, 3, 16, 16), (2, 3, 16, 16)]
"""

from __future__ import annotations

import functools
import io
import os
import re
import tempfile  # noqa: F401 - used by the docstring examples
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch
from torch import Tensor

DECODERS = ("torchcodec", "pil", "torchvision")
DEFAULT_DECODER = "torchcodec"  # as fast as torchvision's deprecated decoder, the same pixels (bench_decode.py)
DEFAULT_MEMORY_CAP = 4 * 2**30  # bytes of uint8 images a folder may take in memory before it streams


def memory_cap() -> int:
    """Bytes of decoded uint8 images an image folder may take in memory; a larger split streams from disk.

    ``$INVLIB_MEMORY_CAP`` sets it (bytes, or with a unit: ``512M``, ``8G``); default 4 GiB.

    Example
    -------
    >>> os.environ["INVLIB_MEMORY_CAP"] = "2M"; memory_cap()
    2097152
    >>> del os.environ["INVLIB_MEMORY_CAP"]; memory_cap() == DEFAULT_MEMORY_CAP
    True
    """
    raw = os.environ.get("INVLIB_MEMORY_CAP", "").strip()
    if not raw:
        return DEFAULT_MEMORY_CAP
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?", raw)
    if not found:
        raise ValueError(f"INVLIB_MEMORY_CAP={raw!r} is not a size: write bytes or a number with K, M, G or T "
                         "(e.g. 512M, 8G).")
    unit = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[found[2].lower()]
    return int(float(found[1]) * unit)


def default_workers() -> int:
    """DataLoader worker processes that decode streamed images: ``$INVLIB_LOADER_WORKERS``, else the CPU cores
    (under ``torchrun``, a process's share of them) less two for the training process, at most 8, and none on a
    machine of 2 cores, where a worker only takes a core from training (``benchmarks/bench_streaming.py``).

    Example
    -------
    >>> default_workers() >= 0
    True
    """
    if os.environ.get("INVLIB_LOADER_WORKERS"):
        return int(os.environ["INVLIB_LOADER_WORKERS"])
    per_process = (os.cpu_count() or 2) // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))  # torchrun: cores shared
    return max(0, min(8, per_process - 2))


def resize(x: Tensor, size: int) -> Tensor:
    """``(B, C, h, w)`` uint8 -> ``(B, C, size, size)`` uint8, bilinear, antialiased (torch's fast uint8 path): the
    book's one resize of stored images, in memory and as they are decoded.

    Example
    -------
    >>> resize(torch.zeros(2, 3, 40, 30, dtype=torch.uint8), 16).shape
    torch.Size([2, 3, 16, 16])
    """
    return torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", antialias=True)


class UnreadableImageError(ValueError):
    """Image files that cannot be decoded (not an image, truncated, a format no decoder reads); ``paths`` names
    them (empty when the error crossed a process boundary: the message still names them).

    Example
    -------
    >>> bad = Path(tempfile.mkdtemp()) / "broken.jpg"; _ = bad.write_bytes(b"not a JPEG")
    >>> try:
    ...     decode(bad, 8)
    ... except UnreadableImageError as err:
    ...     print(Path(err.paths[0]).name, str(err).startswith("Cannot decode the image"))
    broken.jpg True
    """

    def __init__(self, message: str, paths: Sequence[str | os.PathLike] = ()):
        super().__init__(message)
        self.paths = [str(p) for p in paths]


@functools.cache
def _torchcodec_decoder():
    """TorchCodec's ``decode_image``, tried once per process on a tiny PNG; None (with a warning saying why) when
    it is not installed or its libraries do not load with this torch."""
    try:
        from PIL import Image
        from torchcodec.decoders import decode_image

        png = io.BytesIO()
        Image.new("RGB", (2, 1)).save(png, format="PNG")
        decode_image(png.getvalue(), mode="RGB")
        return decode_image
    except Exception as err:  # noqa: BLE001 - any failure to load means: decode with Pillow instead
        warnings.warn(f"TorchCodec cannot decode images here ({type(err).__name__}: {err}); decoding with Pillow "
                      "instead (the same pixels, slower). `pip install torchcodec` in the version that matches torch "
                      "brings it back.", RuntimeWarning, stacklevel=4)
        return None


def _pil_rgb(path) -> Tensor:
    """Pillow: ``(3, h, w)`` uint8 RGB (channels-last in memory). Grey, palette, RGBA (alpha dropped) and CMYK
    images are converted as TorchCodec converts them; 16-bit grey is scaled to 8 bits as TorchCodec rounds it."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        if im.mode.startswith("I"):  # 16- or 32-bit grey
            grey = (np.asarray(im, dtype=np.float32) / 257).round().clip(0, 255).astype(np.uint8)
            return torch.from_numpy(grey).expand(3, *grey.shape)
        rgb = im if im.mode == "RGB" else im.convert("RGB")
        return torch.from_numpy(np.array(rgb)).permute(2, 0, 1)


def _torchcodec_rgb(path) -> Tensor:
    decode_image = _torchcodec_decoder()
    if decode_image is None:
        return _pil_rgb(path)
    img = decode_image(str(path), mode="RGB")
    return img[0] if img.ndim == 4 else img  # an animated GIF: its first frame


def _torchvision_rgb(path) -> Tensor:
    from torchvision.io import ImageReadMode, decode_image  # deprecated since torchvision 0.29: it says so

    img = decode_image(str(path), mode=ImageReadMode.RGB)
    if img.dtype == torch.uint16:  # a 16-bit PNG: to 8 bits, rounded as TorchCodec rounds
        img = ((img.to(torch.int32) * 255 + 32767) // 65535).to(torch.uint8)
    return img[0] if img.ndim == 4 else img


_DECODE = {"torchcodec": _torchcodec_rgb, "pil": _pil_rgb, "torchvision": _torchvision_rgb}


def check_decoder(decoder: str) -> str:
    """``decoder`` if it is one of :data:`DECODERS`, else a ``ValueError`` listing them.

    Example
    -------
    >>> check_decoder("pil")
    'pil'
    >>> check_decoder("cv2")
    Traceback (most recent call last):
    ValueError: Unknown decoder 'cv2'. Valid decoders: torchcodec, pil, torchvision.
    """
    if decoder not in DECODERS:
        raise ValueError(f"Unknown decoder {decoder!r}. Valid decoders: {', '.join(DECODERS)}.")
    return decoder


def decode(path: str | os.PathLike, size: int, decoder: str = DEFAULT_DECODER) -> tuple[Tensor, int, int]:
    """One image file -> ``(3, size, size)`` uint8 RGB (square, the aspect ratio not kept; grey repeated to three
    channels, alpha dropped, an animated GIF's first frame) and its original ``(width, height)``. The book's one
    decoder, for in-memory loads and streamed batches alike; :func:`resize` makes it square.

    ``decoder``: ``"torchcodec"`` (the default: TorchCodec's ``decode_image``, the decoder torchvision 0.29 names
    as the successor of its own; Pillow takes over, with a warning, where TorchCodec does not load), ``"pil"``
    (Pillow: the same pixels, slower on JPEGs) or ``"torchvision"`` (``torchvision.io.decode_image``, deprecated
    since torchvision 0.29, which warns on every call; the same pixels). ``benchmarks/bench_decode.py`` measures
    them (``benchmarks/measurements/foundation.md``). A file that cannot be decoded raises
    :class:`UnreadableImageError` naming it.

    Example
    -------
    >>> folder = demo_folder(tempfile.mkdtemp(), n=1)
    >>> img, w, h = decode(next(Path(folder).rglob("*.jpg")), 32)
    >>> tuple(img.shape), img.dtype, w > 0 and h > 0
    ((3, 32, 32), torch.uint8, True)
    """
    fn = _DECODE[check_decoder(decoder)]
    try:
        img = fn(path)
    except Exception as err:  # noqa: BLE001 - whatever the library raises, the reader needs the file's name
        reason = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        raise UnreadableImageError(f"Cannot decode the image {path}: {reason}", [path]) from err
    h, w = img.shape[-2:]
    return resize(img[None], size)[0].contiguous(), w, h


class ImageFiles:
    """A lazy ``(N, 3, size, size)`` uint8 image array: image files decoded (:func:`decode`) only when indexed.

    It answers ``len``, ``shape``, ``dtype``, ``ndim`` and ``device`` as a tensor does; ``files[i]`` (an int)
    is one decoded image ``(3, size, size)``, ``files[rows]`` (a slice, a list or an index tensor) the decoded
    ``(B, 3, size, size)`` batch, and :meth:`take` the same rows still on disk. :func:`batches` decodes in
    worker processes. Its cache key (:func:`invlib.utils.digest`) is the file list, the size and the decoder:
    an image changed in place under the same name is not noticed.

    Example
    -------
    >>> folder = demo_folder(tempfile.mkdtemp(), n=5)
    >>> files = ImageFiles(sorted(Path(folder).rglob("*.jpg")), 24)
    >>> len(files), files.shape, files[1:3].shape, len(files.take([0, 4]))
    (5, torch.Size([5, 3, 24, 24]), torch.Size([2, 3, 24, 24]), 2)
    """

    dtype = torch.uint8
    ndim = 4
    device = torch.device("cpu")

    def __init__(self, paths: Sequence[str | os.PathLike], size: int, decoder: str = DEFAULT_DECODER,
                 margin: float = 1.0):
        check_decoder(decoder)
        if margin < 1:
            raise ValueError(f"margin is the side of the black canvas over the image's, >= 1; got {margin!r}.")
        self.paths = [str(p) for p in paths]
        self.size, self.decoder, self.margin = int(size), decoder, float(margin)

    @property
    def side(self) -> int:
        """The stored side: ``size``, or the canvas ``round(size * margin)`` the image is centred on."""
        return round(self.size * self.margin)

    def with_margin(self, factor: float) -> ImageFiles:
        """The same files, each centred on a black canvas ``factor`` times its side when decoded (paper A's
        ``add_margin``, applied as the images are read): the image's top-left corner moves by
        ``(side - size) // 2`` on both axes."""
        return ImageFiles(self.paths, self.size, self.decoder, self.margin * factor)

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def shape(self) -> torch.Size:
        return torch.Size((len(self.paths), 3, self.side, self.side))

    @property
    def nbytes(self) -> int:
        """Bytes the whole array would take in memory."""
        return len(self.paths) * 3 * self.side * self.side

    def __repr__(self) -> str:
        return f"ImageFiles({len(self)} files, 3x{self.side}x{self.side} uint8, decoder={self.decoder!r})"

    def digest_key(self) -> tuple:
        """What :func:`invlib.utils.digest` hashes for these images."""
        return ("ImageFiles", self.size, self.decoder, self.paths) + ((self.margin,) if self.margin != 1 else ())

    def _rows(self, index) -> list[int]:
        if isinstance(index, slice):
            return list(range(len(self.paths)))[index]
        if isinstance(index, Tensor):
            if index.dtype == torch.bool:
                index = index.nonzero().flatten()
            return index.flatten().tolist()
        return [int(i) for i in index]

    def take(self, index) -> ImageFiles:
        """The rows at ``index`` (a slice, list or index tensor), still on disk."""
        return ImageFiles([self.paths[i] for i in self._rows(index)], self.size, self.decoder, self.margin)

    def __getitem__(self, index) -> Tensor:
        if isinstance(index, int) or (isinstance(index, Tensor) and index.ndim == 0):
            image = decode(self.paths[int(index)], self.size, self.decoder)[0]
            if self.side == self.size:
                return image
            top = (self.side - self.size) // 2
            return torch.nn.functional.pad(image, (top, self.side - self.size - top) * 2)
        if isinstance(index, tuple):
            raise TypeError("ImageFiles is indexed by rows only (an int, a slice, a list or an index tensor); "
                            "load the rows first: files[rows][..., y0:y1, x0:x1].")
        rows = self._rows(index)
        out = torch.empty((len(rows), 3, self.side, self.side), dtype=torch.uint8)
        for k, i in enumerate(rows):
            out[k] = self[i]
        return out

    def load(self) -> Tensor:
        """Every image, decoded into one ``(N, 3, size, size)`` tensor (mind :attr:`nbytes`)."""
        return self[:]

    def float(self) -> Tensor:
        """``load().float()`` (for a tensor-like caller that needs all of them at once)."""
        return self.load().float()


class _Decoded(torch.utils.data.Dataset):
    """One decoded image per index: what DataLoader workers run."""

    def __init__(self, files: ImageFiles):
        self.files = files

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> Tensor:
        return self.files[i]


def is_lazy(images) -> bool:
    """Whether ``images`` stay on disk (an :class:`ImageFiles`) rather than in a tensor.

    Example
    -------
    >>> is_lazy(torch.zeros(2, 3, 4, 4)), is_lazy(ImageFiles([], 8))
    (False, True)
    """
    return isinstance(images, ImageFiles)


def rows(images, index):
    """``images[index]`` (a slice, list or index tensor) that stays on disk for an :class:`ImageFiles` (its
    :meth:`ImageFiles.take`) and indexes a tensor as usual: how the library cuts an image array into parts.

    Example
    -------
    >>> rows(torch.arange(5), slice(1, 3)).tolist(), type(rows(ImageFiles(["a.jpg", "b.jpg"], 8), [1])).__name__
    ([1, 2], 'ImageFiles')
    """
    return images.take(index) if is_lazy(images) else images[index]


def loader_options(device: str | torch.device = "cpu", workers: int | None = None) -> dict:
    """The DataLoader options of a streamed batch bound for ``device``: ``num_workers`` (default
    :func:`default_workers`), ``pin_memory`` on CUDA (page-locked batches copy to the GPU asynchronously), and
    two batches prefetched per worker.

    Example
    -------
    >>> loader_options("cuda", workers=4)
    {'num_workers': 4, 'pin_memory': True, 'prefetch_factor': 2, 'persistent_workers': False}
    >>> loader_options("cpu", workers=0)
    {'num_workers': 0, 'pin_memory': False}
    """
    workers = default_workers() if workers is None else int(workers)
    opts = dict(num_workers=workers, pin_memory=torch.device(device).type == "cuda")
    if workers > 0:
        opts.update(prefetch_factor=2, persistent_workers=False)
    return opts


def batches(images, batch_size: int, order: Tensor | Sequence[int] | None = None,
            device: str | torch.device = "cpu", workers: int | None = None) -> Iterator[Tensor]:
    """The rows of ``images`` in batches of ``batch_size``: ``images[order[i:i + batch_size]]`` for each ``i``
    (``order`` default: ``0 .. N - 1``), the last batch possibly smaller. The book's one way through a
    dataset's images.

    ``images`` is a tensor ``(N, ...)`` (sliced, nothing copied when ``order`` is None) or an
    :class:`ImageFiles`, whose batches are decoded by :func:`loader_options`' DataLoader workers (pinned when
    ``device`` is CUDA) while the caller computes. The batches stay on the CPU: the caller moves them.

    Example
    -------
    >>> x = torch.arange(10).view(10, 1)
    >>> [b.flatten().tolist() for b in batches(x, 4, order=torch.tensor([9, 8, 7, 0, 1]))]
    [[9, 8, 7, 0], [1]]
    """
    n = len(images) if order is None else len(order)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    if not is_lazy(images):
        for i in range(0, n, batch_size):
            yield images[i:i + batch_size] if order is None else images[order[i:i + batch_size]]
        return
    rows = list(range(len(images))) if order is None else (
        order.tolist() if isinstance(order, Tensor) else [int(i) for i in order])
    chunks = [rows[i:i + batch_size] for i in range(0, n, batch_size)]
    opts = loader_options(device, min(default_workers() if workers is None else workers, len(chunks)))
    # a generator of its own: the loader draws its workers' seed from it, not from the global RNG that dropout and
    # learned augmentations draw from (reading from disk must not change a single draw of training)
    loader = torch.utils.data.DataLoader(_Decoded(images), batch_sampler=chunks, generator=torch.Generator(), **opts)
    batches_of = iter(loader)
    try:
        yield from batches_of
    finally:  # a worker's error (an unreadable image) or a consumer that stops early: end the workers now; left to
        # the garbage collector, torch 2.14's loader waits 5 s for each of them
        end = getattr(batches_of, "_shutdown_workers", None)
        if end is not None:
            end()


def demo_folder(root: str | os.PathLike, n: int = 8, classes: int = 2, seed: int = 0, sizes: tuple = (24, 48),
                shapes: bool = False) -> str:
    """Write ``n`` images of varied, non-square shapes (each side drawn from ``sizes``, inclusive) into
    ``root/c<k>/`` (image ``i`` in class ``i % classes``): data for examples, tests and benchmarks.

    ``shapes=False``: random pixels, JPEG. ``shapes=True``: images that carry their class, a shape of the class's
    own kind and colour (a rectangle or an ellipse, a third of the image's sides) at a drawn place on a dark
    background, as PNG and JPEG in turn.

    Example
    -------
    >>> sorted(p.name for p in Path(demo_folder(tempfile.mkdtemp(), n=4)).iterdir())
    ['c0', 'c1']
    >>> root = Path(demo_folder(tempfile.mkdtemp(), n=6, classes=3, sizes=(40, 90), shapes=True))
    >>> sorted(p.name for p in root.glob("c1/*"))
    ['img0001.png', 'img0004.jpg']
    """
    from PIL import Image, ImageDraw

    gen = torch.Generator().manual_seed(seed)
    draw = lambda lo, hi, n=2: [int(v) for v in torch.randint(lo, hi, (n,), generator=gen)]  # noqa: E731
    for i in range(n):
        c, folder = i % classes, Path(root) / f"c{i % classes}"
        folder.mkdir(parents=True, exist_ok=True)
        w, h = draw(sizes[0], sizes[1] + 1)
        if not shapes:
            pixels = torch.randint(0, 256, (h, w, 3), generator=gen, dtype=torch.uint8).numpy()
            Image.fromarray(pixels).save(folder / f"img{i:04d}.jpg", quality=90)
            continue
        img = Image.new("RGB", (w, h), tuple(draw(0, 60, 3)))
        (x0,), (y0,) = draw(0, w // 2, 1), draw(0, h // 2, 1)
        shape = ImageDraw.Draw(img).ellipse if c % 2 else ImageDraw.Draw(img).rectangle
        shape([x0, y0, x0 + w // 3, y0 + h // 3], fill=(80 * c % 256, 200, (255 - 60 * c) % 256))
        img.save(folder / f"img{i:04d}.{'png' if i % 2 else 'jpg'}")
    return str(root)
