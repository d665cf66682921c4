"""Fixtures shared by the book tests: a fresh copy of the book's sources per test, and one smoke build of the
whole book per test session. Both live in temporary folders: no test reads or writes the checkout's
``book/_generated/``, ``_build/`` or ``results/`` (results and caches go to the temporary ``$INVLIB_RESULTS`` and
``$INVLIB_CACHE`` that the root ``conftest.py`` sets). And ``one_thread``: torch on one thread for one test;
``fm_test``: Fashion-MNIST's test split."""

import shutil
from pathlib import Path

import pytest
import torch

from invlib import book

ROOT = Path(__file__).resolve().parent.parent


def copy_book(dest: Path, source: Path = ROOT) -> Path:
    """The book's sources (config, toc, pages, notebooks) from ``source`` in ``dest``; nothing generated
    (``book/_generated/``, ``_build/``, ``results/``) comes along."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(source / name, dest / name)
    shutil.copytree(source / "notebooks", dest / "notebooks", ignore=shutil.ignore_patterns("*.ipynb"))
    shutil.copytree(source / "book", dest / "book", ignore=shutil.ignore_patterns("_generated", "*.ipynb"))
    return dest


@pytest.fixture(name="copy_book")
def copy_book_fixture():
    """:func:`copy_book` itself, for tests that copy from a folder of their own."""
    return copy_book


@pytest.fixture
def book_copy(tmp_path):
    """A fresh copy of the book's sources in a temporary folder (its root)."""
    return copy_book(tmp_path / "book-copy")


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    """The whole book, every chapter executed in the smoke profile as ``make book`` runs it (chapters side by
    side, :func:`invlib.book.default_jobs`), site built:
    ``(root, {name: Chapter}, printed lines)``. Results go to the session's temporary ``$INVLIB_RESULTS``."""
    root = copy_book(tmp_path_factory.mktemp("book"))
    lines = []
    chapters = book.build("smoke", root=root, progress=False, echo=lambda *a, **k: lines.append(" ".join(a)),
                          jobs=book.default_jobs("smoke"))
    return root, {c.name: c for c in chapters}, lines


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that needs the smoke build of the whole book is slow, wherever it is (``-m "not slow"`` skips it)."""
    for item in items:
        if "smoke_book" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def one_thread():
    """Torch on one thread for the test: small tensors (many small SGD steps, forward passes of a few images) run
    faster on one thread than on two that contend with other work on the machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def fm_test():
    """Fashion-MNIST's test split (the data tests' real images); skips where the Debian package is missing."""
    from invlib.data import DataMissingError, load

    try:
        return load("fashion_mnist", "test")
    except DataMissingError as e:
        pytest.skip(f"Fashion-MNIST not installed: {e}")
