"""invlib.chapters: the chapter list and the paths that the runner and the scoreboard share."""

import ast
from pathlib import Path

import pytest

from invlib import chapters

ROOT = Path(__file__).resolve().parent.parent


def test_toc_lists_the_notebook_chapters_in_book_order_without_the_runners_pages(tmp_path):
    names = chapters.toc_notebooks(ROOT)
    assert names[0] == "00_data_and_transforms" and chapters.SCOREBOARD not in names
    assert sorted(names) == sorted(p.stem for p in (ROOT / chapters.SOURCES).glob("*.py"))
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n  - chapters:\n"
                                       "    - file: book/_generated/zz_b\n    - file: book/paper_a\n"
                                       "    - file: book/_generated/scoreboard\n    - file: book/_generated/zz_a\n")
    assert chapters.toc_notebooks(tmp_path) == ["zz_b", "zz_a"]
    with pytest.raises(FileNotFoundError, match="_toc.yml"):
        chapters.toc_notebooks(tmp_path / "nothing")


def test_results_root_is_the_environments_or_the_books(tmp_path, monkeypatch):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "r"))
    assert chapters.results_root(tmp_path) == tmp_path / "r"
    monkeypatch.delenv("INVLIB_RESULTS")
    assert chapters.results_root(tmp_path) == tmp_path / "results"


def test_a_chapter_record_defaults():
    assert chapters.Chapter("x", "stub") == chapters.Chapter("x", "stub", 0.0, "")


def _imports(module: str) -> set[str]:
    tree = ast.parse((ROOT / "invlib" / f"{module}.py").read_text())
    return {("." * n.level) + (n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}


def test_the_runner_and_the_scoreboard_share_this_module_and_the_scoreboard_imports_no_runner():
    assert ".chapters" in _imports("book") and ".chapters" in _imports("scoreboard")
    assert ".book" not in _imports("scoreboard") and ".scoreboard" not in _imports("chapters")
