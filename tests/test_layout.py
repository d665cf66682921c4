"""The library's layout: every paper is a package of invlib.papers with a method and a reports part, and no
paper imports another paper's package (what two papers share lives in the foundation). The synthesis
(``invlib.papers.s``) has the same shape; it is the one package above the papers: it calls their measures, and
no paper imports it."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "invlib"
SYNTHESIS = "s"
PARTS = sorted(p.name for p in (ROOT / "papers").iterdir() if p.is_dir() and (p / "__init__.py").exists())
PAPERS = [p for p in PARTS if p != SYNTHESIS]


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports, at any depth of the file (lazy imports too)."""
    package = path.relative_to(ROOT.parent).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.add(name)
            found |= {f"{name}.{a.name}" for a in node.names}
    return found


def _paper_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["invlib", "papers"] and len(parts) > 2 else None


def test_the_checker_resolves_relative_imports():
    """A relative import inside a paper package resolves to that package, and ``...`` to the foundation."""
    found = _imports(ROOT / "papers" / "b" / "rrc_reports.py")
    assert "invlib.papers.b.rrc" in found
    assert "invlib.results" not in found or _paper_of("invlib.results") is None
    assert {_paper_of(m) for m in found} <= {None, "b"}
    assert "invlib.zoo" in _imports(ROOT / "papers" / "a" / "probes.py")


@pytest.mark.parametrize("paper", PAPERS)
def test_no_paper_imports_another_papers_package(paper):
    for file in (ROOT / "papers" / paper).glob("*.py"):
        others = {m for m in _imports(file) if _paper_of(m) not in (None, paper)}
        assert not others, f"{file.relative_to(ROOT)} imports another paper: {sorted(others)}"


def test_the_synthesis_calls_the_papers_measures():
    assert SYNTHESIS in PARTS and len(PAPERS) == 5
    used = {_paper_of(m) for f in (ROOT / "papers" / SYNTHESIS).glob("*.py") for m in _imports(f)}
    assert {"a", "b", "c"} <= used, "the synthesis measures through the papers' own functions"


def test_the_foundation_imports_no_paper():
    for file in ROOT.glob("**/*.py"):
        if "papers" in file.relative_to(ROOT).parts:
            continue
        papers = {m for m in _imports(file) if _paper_of(m)}
        assert not papers, f"{file.relative_to(ROOT)} (foundation) imports a paper module: {sorted(papers)}"


@pytest.mark.parametrize("paper", PARTS)
def test_every_paper_has_a_method_and_a_reports_part(paper):
    names = {p.stem for p in (ROOT / "papers" / paper).glob("*.py")} - {"__init__"}
    reports = {n for n in names if n.endswith("_reports")}
    assert reports, f"paper {paper} has no <method>_reports.py"
    for r in reports:
        assert r.removesuffix("_reports") in names, f"{r}.py has no method module {r.removesuffix('_reports')}.py"


def test_every_module_has_its_test_file():
    """Tests mirror invlib/: ``tests/test_<module>.py`` for every module (a paper's ``<method>_reports.py`` may be
    tested in its own file or with its method in ``test_<method>.py``)."""
    tests = {p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")}
    missing = []
    for file in ROOT.glob("**/*.py"):
        name = file.stem
        if name.startswith("__"):
            continue
        if name not in tests and name.removesuffix("_reports") not in tests:
            missing.append(str(file.relative_to(ROOT)))
    assert not missing, f"modules without tests/test_<module>.py: {sorted(missing)}"
