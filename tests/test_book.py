"""The book runner: parameters, errors, and a real smoke build of every chapter through the same runner as
``make book`` (into a copy of the book, so a developer's own build is left alone)."""

import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from invlib import book, zoo
from invlib.__main__ import main
from invlib.profiles import PROFILES

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = book.toc_notebooks(ROOT)


# --- the table of contents and the sources agree ---------------------------------------------------------

def test_every_notebook_is_a_chapter_and_every_chapter_has_a_source():
    sources = sorted(p.stem for p in (ROOT / "notebooks").glob("*.py"))
    assert sources and sorted(CHAPTERS) == sources
    assert CHAPTERS[0] == "00_data_and_transforms"


def test_toc_pages_exist_and_cited_keys_are_in_the_bib():
    toc = (ROOT / "_toc.yml").read_text()
    pages = [f for f in re.findall(r"file: (\S+)", toc) if not f.startswith(str(book.GENERATED))]
    for page in pages:
        assert (ROOT / f"{page}.md").exists(), page
    for key in "abcde":
        assert f"book/paper_{key}" in pages
    bib = (ROOT / "book/references.bib").read_text()
    keys = set(re.findall(r"@\w+\{(\w+),", bib))
    cited = {k for p in (ROOT / "book").glob("*.md") for k in re.findall(r"\{cite\}`([\w,]+)`", p.read_text())}
    cited = {k for group in cited for k in group.split(",")}
    assert len(keys) >= 6 and cited <= keys, f"cited but not in references.bib: {cited - keys}"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "off" and config["only_build_toc_files"] is True
    assert config["bibtex_bibfiles"] == ["book/references.bib"]


def test_intro_profiles_table_matches_the_profiles():
    intro = (ROOT / "book/intro.md").read_text()
    for name, prof in PROFILES.items():
        row = next(line for line in intro.splitlines() if line.startswith(f"| `{name}` |"))
        cells = [c.strip() for c in row.split("|")]
        assert cells[3] == f"{prof.n_train:,}", row
        assert cells[4] == str(prof.epochs), row
        assert cells[5] == ("CPU" if prof.device == "cpu" else "CUDA"), row


# --- parameters -------------------------------------------------------------------------------------------

def test_parse_overrides_reads_python_literals_and_text():
    assert book.parse_overrides(["a=2", "b=x y", "c=[1, 2]", "d=None", "e=True", "f='q'"]) == \
        {"a": 2, "b": "x y", "c": [1, 2], "d": None, "e": True, "f": "q"}
    with pytest.raises(ValueError, match="not key=value"):
        book.parse_overrides(["epochs"])
    with pytest.raises(ValueError, match="not key=value"):
        book.parse_overrides(["2x=1"])


def test_notebook_parameters_and_type_checks():
    declared = book.notebook_parameters(book.read_notebook("00_data_and_transforms", ROOT))
    assert declared["profile"] == "cpu" and "dataset" in declared and declared["seed"] == 0
    assert book.check_overrides("nb", declared, {"seed": 3, "dataset": "cifar10", "other": 1}) == \
        {"seed": 3, "dataset": "cifar10"}
    with pytest.raises(TypeError, match=r"parameter 'seed' \(default 0\) must be int, got str 'three'"):
        book.check_overrides("nb", declared, {"seed": "three"})
    with pytest.raises(TypeError, match="must be int"):
        book.check_overrides("nb", declared, {"seed": True})
    assert book.check_overrides("nb", {"lr": 0.1}, {"lr": 1}) == {"lr": 1.0}


@pytest.mark.parametrize("argv, message", [
    (["--profile", "fast"], "invalid choice: 'fast'"),
    (["--only", "00_data"], "Unknown chapter '00_data'. Valid chapters: 00_data_and_transforms"),
    (["-p", "colour=red"], "no selected notebook has a parameter 'colour'; their parameters: "),
    (["-p", "seed=three"], "parameter 'seed' (default 0) must be int, got str 'three'"),
    (["-p", "profile=gpu"], "give the profile with --profile"),
])
def test_cli_rejects_bad_input_before_running_anything(argv, message, capsys):
    try:
        code = main(["book", *argv, "--no-site"])
    except SystemExit as exit_:  # argparse's own choices check
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (ROOT / book.GENERATED / "00_data_and_transforms.failed.ipynb").exists()


def test_cli_lists_chapters_with_their_parameters(capsys):
    assert main(["book", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == CHAPTERS[0] and "    profile = 'cpu'" in out and "    seed = 0" in out


# --- execution --------------------------------------------------------------------------------------------

FAILING = """# %% [markdown]
# # A chapter that fails

# %% tags=["parameters"]
profile = "cpu"

# %%
x = 1

# %%
raise ValueError(f"broken on {profile}")
"""


@pytest.mark.slow
def test_a_failing_cell_stops_the_build_naming_notebook_and_cell(tmp_path):
    (tmp_path / "notebooks").mkdir()
    src = tmp_path / "notebooks" / "zz_fails.py"
    src.write_text(FAILING)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: book/_generated/zz_fails\n")
    lines = []
    with pytest.raises(book.NotebookError) as err:
        book.build("smoke", root=tmp_path, echo=lambda *a, **k: lines.append(a))
    msg = str(err.value)
    assert "notebook zz_fails (smoke) failed in cell" in msg and "raise ValueError" in msg
    assert "ValueError: broken on smoke" in msg
    assert (tmp_path / "book/_generated/zz_fails.failed.ipynb").exists()
    assert not (tmp_path / "book/_generated/zz_fails.ipynb").exists()
    assert src.read_text() == FAILING, "the runner must never write back into the .py"
    assert not (tmp_path / "_build").exists(), "no site is built after a failing notebook"


@pytest.mark.slow
@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_runs_in_the_smoke_profile(smoke_book, name):
    root, chapters, _ = smoke_book
    ch = chapters[name]
    assert ch.status == "ok" and ch.profile == "smoke"
    assert ch.seconds < 90, f"{name} took {ch.seconds:.0f} s in the smoke profile (budget 60 s)"
    nb = nbformat.read(root / book.GENERATED / f"{name}.ipynb", as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata.tags
    assert 'profile = "smoke"' in injected[0].source
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    html = (root / "_build/html" / book.GENERATED / f"{name}.html").read_text()
    assert 'profile = "smoke"' not in html, "the injected parameters cell must be hidden"
    assert (root / "notebooks" / f"{name}.py").read_text() == (ROOT / "notebooks" / f"{name}.py").read_text()


@pytest.mark.slow
def test_smoke_build_writes_results_and_a_site_without_warnings(smoke_book):
    from invlib import results

    root, chapters, lines = smoke_book
    assert (root / "_build/html/index.html").exists()
    log = (root / "_build/jupyter-book.log").read_text()
    assert "WARNING" not in log and "build succeeded" in log
    assert any(line.startswith("chapter") for line in lines), "the summary table is printed"
    rec = results.load("00_data_and_transforms", "smoke")
    assert rec["profile"] == "smoke" and rec["env"]["torch"] and rec["seconds"] > 0
    assert rec["metrics"]["transforms"] >= 20 and rec["metrics"]["classes"] == 10
    accs = {k: v for k, v in rec["metrics"].items() if k.startswith("zoo/")}
    assert len(accs) == len(zoo.available()) and accs["zoo/small_resnet18/none/test_acc"] > 0.3
    json.dumps(rec)


@pytest.mark.slow
def test_only_reuses_other_chapters_or_writes_a_stub(book_copy):
    root = book_copy
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    toc["parts"][0]["chapters"].append({"file": "book/_generated/zz_second"})
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    (root / "notebooks/zz_second.py").write_text('# %% [markdown]\n# # Second\n\n# %% tags=["parameters"]\n'
                                                 'profile = "cpu"\n\n# %%\nprint(profile)\n')
    chapters = book.build("smoke", only=["zz_second"], root=root, echo=lambda *a, **k: None)
    status = {c.name: c.status for c in chapters}
    assert status["zz_second"] == "ok" and status["00_data_and_transforms"] == "stub"
    stub = re.sub(r"<[^>]+>", "", (root / "_build/html/book/_generated/00_data_and_transforms.html").read_text())
    assert "was not executed in this build" in stub and "book --only 00_data_and_transforms" in stub
    chapters = book.build("smoke", only=["zz_second"], root=root, site=False, echo=lambda *a, **k: None)
    others = dict.fromkeys(book.toc_notebooks(root), "stub")
    assert {c.name: c.status for c in chapters} == {**others, "zz_second": "ok"}
    assert book.summary(chapters, root).splitlines()[0].split() == ["chapter", "status", "profile", "seconds"]


def test_root_page_redirects_and_names_the_icon(smoke_book):
    # without an icon link a browser still on the redirect asks for /favicon.ico, which the site lacks (a 404)
    html = smoke_book[0] / "_build" / "html"
    text = (html / "index.html").read_text()
    assert 'url=book/intro.html"' in text
    icon = re.search(r'rel="icon" href="([^"]+)"', text)
    assert icon and (html / icon.group(1)).is_file(), text
