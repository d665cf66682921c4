"""The book's chapters and where their files live: the list ``_toc.yml`` gives, the folders of the sources, the
executed notebooks and the results, and the record of one chapter in a build.

Both the runner (:mod:`invlib.book`) and the scoreboard (:mod:`invlib.scoreboard`) read these; neither imports the
other for them. What a chapter *is* (its zoo models, whether it trains a family, its budget, the cached results it
writes and reads) is declared beside its paper, in :data:`invlib.papers.CHAPTERS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .utils import REPO

GENERATED = Path("book/_generated")  # the executed notebooks and the pages the runner writes
SOURCES = Path("notebooks")  # the chapters' Jupytext sources, notebooks/<name>.py
SCOREBOARD = "scoreboard"
PROTOCOL = "protocol"
PAGES = (SCOREBOARD, PROTOCOL)  # pages under book/_generated/ that the runner writes itself; not notebooks


@dataclass
class Chapter:
    """One executed (or reused) notebook of a build: its name, what happened, and how long it took."""

    name: str
    status: str  # "ok", "reused", "stub"
    seconds: float = 0.0
    profile: str = ""
    families: dict = field(default_factory=dict)  # the training phase's row: {chapter: seconds of its own family}


def toc_notebooks(root: str | Path = REPO) -> list[str]:
    """Names of the notebook chapters in ``_toc.yml`` (entries under ``book/_generated/``), in book order.

    Example
    -------
    >>> "00_data_and_transforms" in toc_notebooks()
    True
    """
    import yaml

    file = Path(root) / "_toc.yml"
    if not file.exists():
        raise FileNotFoundError(f"{file} does not exist: the book's root folder holds _toc.yml and _config.yml")
    toc = yaml.safe_load(file.read_text())
    names: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            file = node.get("file") or node.get("root")
            if isinstance(file, str) and Path(file).parent == GENERATED:
                names.append(Path(file).stem)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return [n for n in names if n not in PAGES]


def results_root(root: str | Path = REPO) -> Path:
    """The folder the chapters write their results into: ``$INVLIB_RESULTS``, else ``<root>/results``.

    Example
    -------
    >>> results_root("/tmp/book") == Path(os.environ.get("INVLIB_RESULTS") or "/tmp/book/results")
    True
    """
    return Path(os.environ.get("INVLIB_RESULTS") or Path(root) / "results")
