"""Fixtures shared by the book tests: one smoke build of the whole book per test session."""

import shutil
from pathlib import Path

import pytest

from invlib import book

ROOT = Path(__file__).resolve().parent.parent


def copy_book(dest: Path) -> Path:
    """The book's sources (config, toc, pages, notebooks) in a fresh folder."""
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(ROOT / "notebooks", dest / "notebooks")
    shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("_generated"))
    return dest


@pytest.fixture
def book_copy(tmp_path):
    """A fresh copy of the book's sources in a temporary folder (its root)."""
    return copy_book(tmp_path)


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    """The whole book, every chapter executed in the smoke profile, site built:
    ``(root, {name: Chapter}, printed lines)``."""
    root = copy_book(tmp_path_factory.mktemp("book"))
    lines = []
    chapters = book.build("smoke", root=root, progress=False, echo=lambda *a, **k: lines.append(" ".join(a)))
    return root, {c.name: c for c in chapters}, lines
