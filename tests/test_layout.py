"""The library's layout: every paper is a package of invlib.papers with a method and a reports part, and no
paper imports another paper's package (what two papers share lives in the foundation). The synthesis
(``invlib.papers.s``) has the same shape; it is the one package above the papers: it calls their measures, and
no paper imports it."""

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "invlib"
SYNTHESIS = "s"
PARTS = sorted(p.name for p in (ROOT / "papers").iterdir() if p.is_dir() and (p / "__init__.py").exists())
PAPERS = [p for p in PARTS if p != SYNTHESIS]


@functools.cache  # every test of the layout reads the same files: each is parsed once
def _imports(path: Path) -> frozenset[str]:
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
    return frozenset(found)


def _paper_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["invlib", "papers"] and len(parts) > 2 else None


def test_the_checker_resolves_relative_imports():
    """A relative import inside a paper package resolves to that package, and ``...`` to the foundation."""
    found = _imports(ROOT / "papers" / "b" / "rrc_reports.py")
    assert "invlib.papers.b.rrc" in found
    assert "invlib.results" not in found or _paper_of("invlib.results") is None
    assert {_paper_of(m) for m in found} <= {None, "b"}
    assert "invlib.zoo" in _imports(ROOT / "papers" / "a" / "tables.py")


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
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


# ------------------------------------------------------------------------------ layers and the import graph
# The foundation's layers, lowest first: a module imports only modules of its own layer or lower ones, and the
# import graph of invlib (lazy imports included) has no circle. A new module must be placed here.
LAYERS = (
    ("utils", "streaming", "kernels"),
    ("verdicts", "profiles", "wordnet", "transforms", "crops", "data.dataset", "data.real", "data.scenes",
     "data.lighting"),
    ("data.generated", "data", "transform_types", "models", "metrics", "linear", "plots", "learned",
     "learned.augerino", "learned.augnet", "learned.instaaug", "protocol", "pages", "results", "authors", "plan"),
    ("train",),
    ("zoo",),
    ("papers",),  # every paper package (invlib.papers.<x>.*)
    ("chapters",),
    ("scoreboard",),
    ("book",),
    ("__main__",),
)


def _module_names() -> dict[str, Path]:
    out = {}
    for file in ROOT.glob("**/*.py"):
        parts = list(file.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = file
    return out


def _graph() -> dict[str, set[str]]:
    """``{module: modules it imports}``, names relative to invlib (``""`` is the package itself: dropped)."""
    modules = _module_names()

    def resolve(name):
        name = name.removeprefix("invlib").removeprefix(".")
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    return {m: {resolve(n) for n in _imports(f) if n and n.startswith("invlib")} - {m, ""}
            for m, f in modules.items() if m}


def _layer(module: str) -> int | None:
    if module.startswith("papers"):
        return next(i for i, names in enumerate(LAYERS) if "papers" in names)
    return next((i for i, names in enumerate(LAYERS) if module in names), None)


def test_every_module_has_a_layer_and_imports_none_above_it():
    graph = _graph()
    unplaced = sorted(m for m in graph if _layer(m) is None)
    assert not unplaced, f"modules without a layer in tests/test_layout.py's LAYERS: {unplaced}"
    upward = sorted(f"{m} -> {n}" for m, deps in graph.items() for n in deps if _layer(n) > _layer(m))
    assert not upward, f"imports from a lower layer to a higher one: {upward}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_import_graph_has_no_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the checker finds one
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert not _cycles(_graph()), f"circles in the import graph: {_cycles(_graph())}"


# ------------------------------------------------------------------------------ one verb per step
# Every paper names its steps alike (settings -> train -> measure -> report; the package docstring of
# invlib.papers): settings(profile, ...) first; a module that trains a chapter's models has a public train*; a public
# function that records claims (run.claim, directly or through the module's private helpers) is named report*.
OLD_VERBS = {"family", "train_family", "build", "train_encoders", "train_module", "train_sprites", "variation_family"}
TRAINS = {"fit", "train_many"}


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}


def _calls(fn: ast.FunctionDef) -> set[str]:
    """Names a function calls: ``f(...)`` gives ``f``, ``x.f(...)`` gives ``f``."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            out.add(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    return out


def _reaches(fns: dict[str, ast.FunctionDef], name: str, targets: set[str], seen=None) -> bool:
    """Whether ``name`` calls one of ``targets``, directly or through the module's private functions."""
    seen = seen or set()
    calls = _calls(fns[name])
    if calls & targets:
        return True
    return any(c.startswith("_") and c in fns and c not in seen and _reaches(fns, c, targets, seen | {c})
               for c in calls)


PAPER_FILES = sorted(f for f in (ROOT / "papers").glob("*/*.py") if f.stem != "__init__")


@pytest.mark.parametrize("file", PAPER_FILES, ids=lambda f: f"{f.parent.name}/{f.stem}")
def test_every_paper_names_its_steps_alike(file):
    fns = _functions(file)
    public = [n for n in fns if not n.startswith("_")]
    old = sorted(n for n in public if n in OLD_VERBS or (n.startswith("record_") and n.endswith("_claims"))
                 or n.endswith("_report"))
    assert not old, f"{file.relative_to(ROOT)}: old step names {old} (train*, report*: see invlib.papers)"
    claims = sorted(n for n in public if _reaches(fns, n, {"claim"}) and not n.startswith("report"))
    assert not claims, f"{file.relative_to(ROOT)}: {claims} record claims; name them report or report_<what>"
    if "settings" in fns:
        args = fns["settings"].args
        first = (args.posonlyargs + args.args)[0].arg if args.posonlyargs + args.args else None
        assert first == "profile", f"{file.relative_to(ROOT)}: settings' first argument is {first!r}, not profile"
    if not file.stem.endswith("_reports") and any(_reaches(fns, n, TRAINS) for n in public):
        assert any(n == "train" or n.startswith("train_") for n in public), \
            f"{file.relative_to(ROOT)} trains models but has no public train or train_<what>"


def test_the_step_checker_sees_old_names_and_unnamed_claims(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def family(S):\n    return fit(S)\n\ndef table(run):\n    _claims(run)\n\n"
                 "def _claims(run):\n    run.claim('a')\n")
    fns = _functions(f)
    assert _reaches(fns, "table", {"claim"}) and _reaches(fns, "family", TRAINS)
    assert not _reaches(fns, "family", {"claim"})


# ------------------------------------------------------------------------------ chapters
NOTEBOOKS = sorted((ROOT.parent / "notebooks").glob("*.py"))


def _parameter_comments(path: Path) -> list[tuple[str, str]]:
    lines, inside, out = path.read_text().splitlines(), False, []
    for line in lines:
        if line.startswith("# %%"):
            inside = 'tags=["parameters"]' in line
            continue
        if inside and "#" in line and not line.startswith("#"):
            name, comment = line.split("=", 1)[0].strip(), line.split("#", 1)[1]
            out.append((name, comment))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameter_comments_do_not_restate_our_profiles_values(path):
    """A parameter's comment says what it means (and the paper's value); what a profile sets lives in the
    settings, where it cannot drift from a copy (d2 once said 14 epochs on cpu where the settings said 10)."""
    found = _parameter_comments(path)
    assert found, f"{path.name}: no parameters cell found"
    bad = [f"{n}: #{c}" for n, c in found if n != "profile" and re.search(r"\b(smoke|cpu|gpu)\b", c)]
    assert not bad, f"{path.name}: comments that restate a profile's value: {bad}"


def test_every_slow_docstring_example_names_a_function_that_exists():
    """A renamed function would silently leave the slow marker behind (and lengthen ``make test-fast``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT.parent / "conftest.py")
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    SLOW_DOCTESTS = root_conftest.SLOW_DOCTESTS

    missing = []
    for name in sorted(SLOW_DOCTESTS):
        module, _, attr = name.rpartition(".")
        parent = importlib.import_module(module)
        if hasattr(parent, "__path__") and importlib.util.find_spec(name) is not None:
            continue  # a module of a package (its own docstring's example), imported or not by earlier tests
        if not hasattr(parent, attr):
            missing.append(name)
    assert not missing, f"conftest.SLOW_DOCTESTS names functions that do not exist: {missing}"


DECISIONS = {"decide", "decide_parts", "decide_any"}  # invlib.verdicts' deciders: only invlib.protocol.decide uses them


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
@pytest.mark.parametrize("part", PARTS)
def test_the_reports_compute_effects_and_one_function_decides(part):
    """No paper module calls a decider of invlib.verdicts (directly or through invlib.results): every verdict comes
    from a claim's declaration in the paper's protocol, through invlib.protocol.decide (Run.claim)."""
    for file in (ROOT / "papers" / part).glob("*.py"):
        tree = ast.parse(file.read_text())
        names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and (node.module or "").split(".")[-1] in ("verdicts", "results") for a in node.names}
        bad = sorted(names & DECISIONS)
        calls = sorted({f"{n.value.id}.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name) and n.value.id in ("verdicts", "results")
                        and n.attr in DECISIONS})
        assert not bad and not calls, f"{file.relative_to(ROOT)} decides claims itself: {bad + calls}"


def test_every_paper_declares_a_protocol():
    from invlib.papers import protocols

    assert sorted(protocols()) == sorted(p.upper() for p in PARTS)
