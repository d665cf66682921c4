"""The book runner: parameters, errors, the chapter's name handed to its run, the timings, and a real smoke
build of every chapter through the same runner as ``make book`` (the scoreboard page it writes is tested in
``test_scoreboard.py``). Every test that runs or builds anything works on a temporary copy of
the book (the ``book_copy`` and ``smoke_book`` fixtures), so a developer's own build, results or a failed
chapter left in the checkout neither change the outcome nor get touched."""

import importlib.util
import json
import os
import re
import time
from pathlib import Path

import nbformat
import pytest
import yaml

from invlib import book, papers, results, utils, zoo
from invlib.__main__ import main
from invlib.profiles import PROFILES

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = book.toc_notebooks(ROOT)


# --- the table of contents and the sources agree ---------------------------------------------------------

def test_every_notebook_is_a_chapter_and_every_chapter_has_a_source():
    sources = sorted(p.stem for p in (ROOT / "notebooks").glob("*.py"))
    assert sources and sorted(CHAPTERS) == sources
    assert CHAPTERS[0] == "00_data_and_transforms"


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_every_chapter_keeps_to_the_code_line_limit():
    counts = {name: book.code_lines(book.read_notebook(name)) for name in book.toc_notebooks()}
    assert all(0 < n <= book.MAX_CODE_LINES for n in counts.values()), counts


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


def test_the_site_shows_repository_buttons_only_with_a_repository(book_copy, monkeypatch):
    text = (ROOT / "_config.yml").read_text()
    assert "your-org" not in text and "mybinder" not in text, "no placeholder or example repository in the config"
    monkeypatch.delenv(book.REPOSITORY_ENV, raising=False)
    config = book.site_config(book_copy)
    buttons = [k for k, v in config["html"].items() if k.startswith("use_") and v]
    assert config["repository"]["url"] == "" and not buttons and "launch_buttons" not in config
    monkeypatch.setenv(book.REPOSITORY_ENV, "https://github.com/example/book")
    config = book.site_config(book_copy)
    assert config["repository"]["url"] == "https://github.com/example/book"
    assert config["html"]["use_repository_button"] and config["html"]["use_issues_button"]
    assert config["launch_buttons"]["binderhub_url"] and config["html"]["favicon"] == "book/_static/favicon.svg"


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


BAD_INPUT = [
    (["--profile", "fast"], "invalid choice: 'fast'"),
    (["--only", "00_data"], "Unknown chapter '00_data'. Valid chapters: 00_data_and_transforms"),
    (["-p", "colour=red"], "no selected notebook has a parameter 'colour'; their parameters: "),
    (["-p", "seed=three"], "parameter 'seed' (default 0) must be int, got str 'three'"),
    (["-p", "profile=gpu"], "give the profile with --profile"),
]


def _rejects(root: Path, argv: list[str], message: str, capsys) -> None:
    """``python -m invlib book --book-dir <root> <argv>`` exits 2 with ``message`` and runs nothing."""
    try:
        code = main(["book", "--book-dir", str(root), *argv, "--no-site"])
    except SystemExit as exit_:  # argparse's own choices check
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert not (root / book.GENERATED).exists(), "nothing may run (or be written) before the input is checked"


@pytest.mark.parametrize("argv, message", BAD_INPUT)
def test_cli_rejects_bad_input_before_running_anything(book_copy, argv, message, capsys):
    _rejects(book_copy, argv, message, capsys)


@pytest.mark.slow  # over 0.45 s: make test runs it, make test-fast stays under 2 minutes
def test_book_tests_ignore_generated_files_of_the_checkout(tmp_path, capsys, copy_book):
    # a user's failed run leaves book/_generated/<name>.failed.ipynb (and results, a site) in the checkout: the
    # copies the tests work on do not carry them, so the tests' outcome does not depend on them
    checkout = copy_book(tmp_path / "checkout")
    stray = {checkout / book.GENERATED / "x.failed.ipynb": "{not a notebook",
             checkout / book.GENERATED / "00_data_and_transforms.failed.ipynb": "{}",
             checkout / book.GENERATED / "00_data_and_transforms.ipynb": "{}",
             checkout / "results/smoke/00_data_and_transforms.json": "{}"}
    for path, text in stray.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root = copy_book(tmp_path / "copy", source=checkout)
    assert sorted(p.name for p in root.iterdir()) == ["_config.yml", "_toc.yml", "book", "notebooks"]
    for argv, message in BAD_INPUT:
        _rejects(root, argv, message, capsys)
    assert all(path.read_text() == text for path, text in stray.items()), "the checkout is never written"


def test_cli_book_dir_must_be_a_book(tmp_path, capsys):
    assert main(["book", "--book-dir", str(tmp_path), "--no-site"]) == 2
    assert f"{tmp_path / '_toc.yml'} does not exist" in capsys.readouterr().err


def test_cli_lists_chapters_with_their_parameters(capsys):
    assert main(["book", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == CHAPTERS[0] and "    profile = 'cpu'" in out and "    seed = 0" in out


# --- what the runner derives from the chapters' declared facts ---------------------------------------------

# What the runner listed by hand before the facts were declared beside the papers (issue 42): the derivation keeps
# every one of them.
HAND_AFTER = {"a2_which_layers": ("a1_ranking_tasks",),
              "b5_wordnet": ("b1_rrc_decomposition", "b4_factors_of_variation"),
              "b6_augerino_real_data": ("b1_rrc_decomposition",),
              "c2_representation_distance": ("c1_invariance_equivariance",),
              "c3_equivariance_finetuning": ("c1_invariance_equivariance",),
              "s1_measures_agree": ("b6_augerino_real_data",)}
HAND_FAMILIES = {"00_data_and_transforms", "b1_rrc_decomposition", "e1_learning_the_right_invariance",
                 "e2_beyond_vision", "e3_capacity", "e4_image_recognition", "c1_invariance_equivariance",
                 "a1_ranking_tasks", "b3_invariance_vs_magnitude", "b2_scale_distribution", "b6_augerino_real_data",
                 "b7_variation_in_the_data", "d1_rotated_sprites", "d3_colour_jitter", "d4_contrastive_crops",
                 "c3_equivariance_finetuning"}


def test_the_order_of_a_parallel_build_comes_from_what_chapters_read_and_write():
    order = book.after(CHAPTERS)
    for name, before in HAND_AFTER.items():
        assert set(before) <= set(order[name]), (name, order.get(name))
    position = {n: i for i, n in enumerate(CHAPTERS)}
    assert all(position[b] < position[n] for n, deps in order.items() for b in deps), "only earlier chapters"
    assert all(set(papers.facts(n).reads) & set(papers.facts(b).writes) for n, deps in order.items() for b in deps)
    assert "d1_rotated_sprites" not in order and "e3_capacity" not in order, "nothing to wait for"


def test_budget_classes_come_from_the_declared_facts():
    families = {n for n in CHAPTERS if book.trains_a_family(n, "cpu")}
    # D2 now trains 12 models and its data control; D5 its InstaAug modules over seeds; S1 trains four zoo models of
    # its own (its own budget wins)
    assert families == HAND_FAMILIES | {"d2_instance_crops", "d5_fixed_classifier_tta", "s1_measures_agree"}
    assert {n: book.budget(n, "cpu") for n in CHAPTERS if papers.facts(n).budgets} == \
        {"b1_rrc_decomposition": 480, "s1_measures_agree": 180}
    assert book.budget("d2_instance_crops", "cpu") == 300 and book.budget("d2_instance_crops", "smoke") == 60
    assert book.budget("zz_not_declared", "cpu") == 120 and book.budget("e3_capacity", "paper") is None


# --- the timings ----------------------------------------------------------------------------------------

def test_summary_puts_each_chapter_beside_its_budget():
    ran = [book.Chapter("c2_representation_distance", "ok", 130.0, "cpu"),
                book.Chapter("e3_capacity", "ok", 130.0, "cpu"), book.Chapter("a2_which_layers", "ok", 30.0, "smoke"),
                book.Chapter("e1_x", "ok", 9.0, "gpu"),
                book.Chapter("e2_beyond_vision", "stub"), book.Chapter(book.ZOO_PHASE, "ok", 400.0, "cpu")]
    lines = book.summary(ran).splitlines()
    assert lines[6].split()[-1] == "400.0", "the training phase has no chapter budget (the whole build's is its)"
    assert lines[1].split()[-3:] == ["130.0", "120", "over"]
    assert lines[2].split()[-2:] == ["130.0", "300"] and lines[3].split()[-2:] == ["30.0", "60"]
    assert lines[4].split()[-1] == "9.0" and lines[5].split()[-1] == "0.0"


def _bench_book():
    spec = importlib.util.spec_from_file_location("bench_book", ROOT / "benchmarks/bench_book.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_book_compares_the_last_runs_seconds_with_the_budgets(book_copy, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INVLIB_CACHE", str(tmp_path / "cache"))
    res = tmp_path / "results"
    for name, seconds in [("c2_representation_distance", 150.0), ("e3_capacity", 150.0)]:
        (res / "cpu").mkdir(parents=True, exist_ok=True)
        (res / "cpu" / f"{name}.json").write_text(json.dumps(dict(book_seconds=seconds, finished="2026-01-02T03:04")))
    nb = nbformat.v4.new_notebook()
    nb.metadata["invlib"] = dict(profile="smoke", seconds=42.0)
    (book_copy / book.GENERATED).mkdir(parents=True)
    nbformat.write(nb, book_copy / book.GENERATED / "a2_which_layers.ipynb")
    (res / "build-cpu.json").write_text(json.dumps(dict(wall=3000.0, zoo_phase=400.0, jobs=2,
                                                        families={"d2_instance_crops": 310.5},
                                                        finished="2026-01-02 03:04:05")))
    bench = _bench_book()
    argv = ["--results", str(res), "--book-dir", str(book_copy), "--img-s", "500"]  # the reference speed
    assert bench.main([*argv, "--profile", "cpu", "smoke"]) == 0
    out = capsys.readouterr().out.splitlines()
    c2 = next(line for line in out if "c2_representation_distance" in line).split()
    assert c2 == ["cpu", "c2_representation_distance", "150.0", "120", "120", "1.25", "2026-01-02", "over"]
    assert next(line for line in out if "e3_capacity" in line).split()[2:6] == ["150.0", "300", "300", "0.50"]
    assert next(line for line in out if "a2_which_layers" in line).split() == \
        ["smoke", "a2_which_layers", "42.0", "60", "60", "0.70", "notebook"]
    assert next(line for line in out if "whole build" in line).split()[-5:] == \
        ["3000.0", "4320", "4320", "0.69", "2026-01-02"]
    assert "whole build without its set-up" in out[[i for i, line in enumerate(out) if "whole build" in line][0]]
    assert next(line for line in out if book.ZOO_PHASE in line).split()[-3:] == ["400.0", "—", "2026-01-02"]
    family = next(line for line in out if "of which" in line)  # within the phase: listed, with no budget of its own
    assert "d2_instance_crops's family" in family and family.split()[-6:] == ["310.5", "—", "trained", "in",
                                                                               "the", "phase"]
    assert "1 over budget" in out[-1] and "bare loop here: 500 img/s" in out[-1]
    # a machine twice as fast gets half the seconds: the build is then over, e3 exactly at its budget
    assert bench.main([*argv[:-1], "1000", "--profile", "cpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    build = next(line for line in out if "whole build" in line).split()
    assert build[-6:] == ["3000.0", "4320", "2160", "1.39", "2026-01-02", "over"]
    assert next(line for line in out if "e3_capacity" in line).split()[2:6] == ["150.0", "300", "150", "1.00"]
    assert "2 over budget" in out[-1]
    assert bench.main([*argv, "--profile", "cpu", "--strict"]) == 1
    assert bench.main([*argv, "--profile", "gpu", "--strict"]) == 0
    assert "no chapter timings" in capsys.readouterr().out
    # a build `make book` ran records its set-up, which the limit counts: 3,000 s + 60 s of it
    (res / "build-cpu.json").write_text(json.dumps(dict(wall=3000.0, setup=60.0, zoo_phase=400.0, jobs=2,
                                                        finished="2026-01-02 03:04:05")))
    assert bench.main([*argv, "--profile", "cpu"]) == 0
    build = next(line for line in capsys.readouterr().out.splitlines() if "whole build" in line)
    assert "with set-up" in build and build.split()[-5:-3] == ["3060.0", "4320"]


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


NAMED = """# %% [markdown]
# # A chapter whose run is named by the runner

# %% tags=["parameters"]
profile = "cpu"
seeds = 2

# %%
import dataclasses
import os

from invlib import results


@dataclasses.dataclass(frozen=True)
class Settings:
    profile: str
    seeds: int


run = results.Run(Settings(profile, seeds))
run.log("chapter", os.environ["INVLIB_CHAPTER"])
run.save()

# %%
import warnings

from invlib import utils

assert utils.cached("zz_named", "x", lambda: 1) == utils.cached("zz_named", "x", lambda: 2) == 1
warnings.warn("few seeds", UserWarning)
"""


def test_the_kernel_gets_the_chapters_name_and_the_environment_is_restored(tmp_path, monkeypatch):
    monkeypatch.delenv(results.CHAPTER_ENV, raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    with book._kernel_env(tmp_path, "b1_rrc_decomposition", threads=1):
        assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
        assert os.environ[results.CHAPTER_ENV] == "b1_rrc_decomposition"
        assert os.environ["INVLIB_PROGRESS"] == "0"
        assert results.Run("smoke").notebook == "b1_rrc_decomposition"
    assert results.CHAPTER_ENV not in os.environ and "OMP_WAIT_POLICY" not in os.environ
    # a chapter with two threads: waiting threads spin briefly, then sleep; a policy the user set is kept
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    with book._kernel_env(tmp_path, "b1_rrc_decomposition", threads=2):
        assert os.environ["GOMP_SPINCOUNT"] == "10000" and "OMP_WAIT_POLICY" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    with book._kernel_env(tmp_path, "b1_rrc_decomposition", threads=2):
        assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE" and "GOMP_SPINCOUNT" not in os.environ
    with pytest.raises(ValueError, match="pass name="):
        results.Run("smoke")


def test_a_chapters_kernel_starts_under_the_allocator_installed_here(tmp_path, monkeypatch):
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.delenv(utils.ALLOCATOR_ENV, raising=False)
    with book._kernel_env(tmp_path, "b1_rrc_decomposition", threads=1):
        assert os.environ.get("LD_PRELOAD") == utils.allocator_env().get("LD_PRELOAD")
    assert "LD_PRELOAD" not in os.environ
    monkeypatch.setenv(utils.ALLOCATOR_ENV, "system")
    with book._kernel_env(tmp_path, "b1_rrc_decomposition", threads=1):
        assert "LD_PRELOAD" not in os.environ


def test_shutting_a_chapters_kernel_down_sends_it_no_interrupt():
    # jupyter_client interrupts (SIGINT) a kernel before asking it to shut down; a kernel busy with a message then
    # printed "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." at the end of a successful build
    import asyncio

    manager = book._kernel_manager()()
    manager.shutting_down = True
    assert asyncio.run(manager._async_interrupt_kernel()) is None
    manager.shutting_down = False
    with pytest.raises(RuntimeError, match="No kernel is running"):  # an interrupt asked for goes through
        asyncio.run(manager._async_interrupt_kernel())


def test_a_kernel_that_dies_before_it_answers_is_started_again_and_other_errors_are_not_retried(monkeypatch):
    # two chapters starting at once can draw the same free port (CI: "ZMQError: Address already in use")
    import papermill as pm

    calls = []

    def flaky(nb, *args, **kwargs):
        calls.append(nb)
        if len(calls) < book.KERNEL_START_TRIES:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "executed"

    monkeypatch.setattr(book.time, "sleep", lambda s: None)
    monkeypatch.setattr(pm, "execute_notebook", flaky)
    assert book._papermill("nb", Path("x.ipynb"), {}, Path(".")) == "executed"
    assert calls == ["nb"] * book.KERNEL_START_TRIES

    calls.clear()
    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(
        RuntimeError("Kernel died before replying to kernel_info")))
    with pytest.raises(RuntimeError, match="kernel_info"):
        book._papermill("nb", Path("x.ipynb"), {}, Path("."))
    assert len(calls) == book.KERNEL_START_TRIES

    calls.clear()
    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(
        RuntimeError("something else")))
    with pytest.raises(RuntimeError, match="something else"):
        book._papermill("nb", Path("x.ipynb"), {}, Path("."))
    assert len(calls) == 1


@pytest.mark.slow
def test_the_runner_names_the_chapters_results_file(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv(results.CHAPTER_ENV, raising=False)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "zz_named.py").write_text(NAMED)
    ch = book.execute("zz_named", "smoke", {"seeds": 3}, root=tmp_path)
    assert ch.status == "ok" and results.CHAPTER_ENV not in os.environ
    rec = json.loads((tmp_path / "results" / "smoke" / "zz_named.json").read_text())
    assert rec["notebook"] == "zz_named" and rec["metrics"]["chapter"] == "zz_named"
    assert rec["profile"] == "smoke" and rec["params"] == {"profile": "smoke", "seeds": 3}
    assert rec["book_seconds"] == round(ch.seconds, 2)
    # what it did with the caches is kept with the executed notebook, its own value read back not counted as read
    nb = nbformat.read(tmp_path / book.GENERATED / "zz_named.ipynb", as_version=4)
    assert nb.metadata["invlib"]["caches"] == {"wrote": ["zz_named"], "read": [],
                                               "files": {"wrote": ["zz_named/x.pt"], "read": []}}
    # a warning shows its category and message, not the build machine's paths
    shown = [o["text"] for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert shown == ["UserWarning: few seeds\n"], shown
    # shutting the kernel down sends no interrupt, which the kernel reported as an error
    assert "KeyboardInterrupt" not in capfd.readouterr().err


ORDERED = """# %% tags=["parameters"]
profile = "cpu"

# %%
import os
import pathlib
import time

from invlib import results

marks = pathlib.Path(os.environ["INVLIB_RESULTS"]).parent / "marks"
marks.mkdir(exist_ok=True)
name = os.environ["INVLIB_CHAPTER"]
if name == "zz_b":
    assert (marks / "zz_a").exists(), "zz_b started before zz_a had finished"
time.sleep(1.0 if name == "zz_a" else 0.0)
import torch

(marks / name).write_text(f"{os.environ.get('OMP_NUM_THREADS', '')}/{torch.get_num_threads()}")
results.Run(profile).save()
"""


@pytest.mark.slow
def test_a_parallel_build_runs_chapters_side_by_side_after_what_they_reuse(tmp_path, monkeypatch):
    """With jobs=2, zz_b (which reads a cache zz_a writes) starts only when zz_a is done, zz_c runs beside zz_a, each
    kernel computes on one thread as a chapter run alone does, and the chapters come back in the table of contents'
    order."""
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setitem(papers.CHAPTERS, "zz_a", papers.ChapterFacts(writes=("zz",)))
    monkeypatch.setitem(papers.CHAPTERS, "zz_b", papers.ChapterFacts(reads=("zz",)))
    (tmp_path / "notebooks").mkdir()
    for name in ("zz_a", "zz_b", "zz_c"):
        (tmp_path / "notebooks" / f"{name}.py").write_text(ORDERED)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n" + "".join(
        f"  - file: book/_generated/{n}\n" for n in ("zz_a", "zz_b", "zz_c")))
    lines = []
    monkeypatch.setenv(book.MAKE_START_ENV, f"{time.time() - 30:.3f}")  # `make book` started 30 s ago: its set-up
    chapters = book.build("smoke", root=tmp_path, site=False, jobs=2, echo=lambda *a, **k: lines.append(a[0]))
    record = json.loads(book.build_record("smoke", tmp_path).read_text())
    assert 30 <= record["setup"] < 60 and record["wall"] > 0, "a whole build started by make records its set-up"
    assert any("with the set-up before it" in line for line in lines)
    assert [c.name for c in chapters] == [book.ZOO_PHASE, "zz_a", "zz_b", "zz_c"]  # the phase first: no models here
    assert {c.status for c in chapters} == {"ok"}
    assert all((tmp_path / "marks" / n).read_text() == "1/1" for n in ("zz_a", "zz_b", "zz_c"))
    done = [line.split()[1] for line in lines if line.startswith("[")]
    assert done.index("zz_a") < done.index("zz_b")
    assert any("wall time with 2 at once" in line for line in lines)
    book.build("smoke", only=["zz_c"], root=tmp_path, site=False, jobs=1, echo=lambda *a, **k: None)
    assert (tmp_path / "marks" / "zz_c").read_text() == "1/1", "alone, a chapter computes on the same one thread"
    monkeypatch.setenv(book.THREADS_ENV, "2")
    book.build("smoke", only=["zz_c"], root=tmp_path, site=False, jobs=1, echo=lambda *a, **k: None)
    assert (tmp_path / "marks" / "zz_c").read_text() == "2/2", "INVLIB_THREADS sets every chapter's threads"


def test_every_chapter_computes_on_one_thread_and_the_runner_runs_one_per_core(monkeypatch):
    monkeypatch.delenv(book.THREADS_ENV, raising=False)
    assert book.chapter_threads() == 1
    assert book.default_jobs("cpu") == book.default_jobs("smoke") == (os.cpu_count() or 1)
    assert book.default_jobs("gpu") == 1
    monkeypatch.setenv(book.THREADS_ENV, "2")
    assert book.default_jobs("cpu") == max(1, (os.cpu_count() or 1) // 2)
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(book.THREADS_ENV, bad)
        with pytest.raises(ValueError, match="INVLIB_THREADS is the CPU threads of each chapter"):
            book.chapter_threads()


@pytest.mark.slow
def test_a_failing_chapter_stops_a_parallel_build(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "zz_fails.py").write_text(FAILING)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: book/_generated/zz_fails\n")
    with pytest.raises(book.NotebookError, match="notebook zz_fails"):
        book.build("smoke", root=tmp_path, site=False, jobs=2, echo=lambda *a, **k: None)


def test_jobs_must_be_a_positive_number(book_copy):
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        book.build("smoke", root=book_copy, jobs=0, echo=lambda *a, **k: None)


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
    nb = nbformat.read(root / book.GENERATED / f"{name}.ipynb", as_version=4)
    # the seconds are kept for benchmarks/bench_book.py (which compares them with the budgets; no test does)
    assert nb.metadata["invlib"]["seconds"] == round(ch.seconds, 2) > 0
    assert results.load(name, "smoke")["book_seconds"] == round(ch.seconds, 2)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata.tags
    assert 'profile = "smoke"' in injected[0].source
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    trained_here = [o for c in nb.cells for o in c.get("outputs", []) if "ZooPhaseWarning" in str(o.get("text", ""))]
    assert not trained_here, f"{name} trained a zoo model its zoo specs function misses (invlib.papers.CHAPTERS)"
    own = [o for c in nb.cells for o in c.get("outputs", []) if "FamilyPhaseWarning" in str(o.get("text", ""))]
    assert not own, f"{name} trained a model of its own family that its family function misses: {own[:1]}"
    html = (root / "_build/html" / book.GENERATED / f"{name}.html").read_text()
    assert 'profile = "smoke"' not in html, "the injected parameters cell must be hidden"
    assert (root / "notebooks" / f"{name}.py").read_text() == (ROOT / "notebooks" / f"{name}.py").read_text()


@pytest.mark.slow
def test_every_chapter_uses_the_caches_it_declares(smoke_book):
    """The cache namespaces each chapter wrote and read in the smoke build (recorded by the runner) are those
    :data:`invlib.papers.CHAPTERS` declares, and a file one chapter wrote and another read (or wrote too) comes
    with an order between them in a parallel build (:func:`invlib.book.after`), so the order cannot drift."""
    root, _, _ = smoke_book
    used = {n: nbformat.read(root / book.GENERATED / f"{n}.ipynb", as_version=4).metadata["invlib"]["caches"]
            for n in CHAPTERS}
    order = book.after(CHAPTERS)

    def waits(name, other):  # name starts after other has finished, directly or through others
        return other in order.get(name, ()) or any(waits(b, other) for b in order.get(name, ()))

    wrong = []
    for name, use in used.items():
        facts = papers.facts(name)
        if set(use["wrote"]) - set(facts.writes):
            wrong.append(f"{name} wrote {sorted(set(use['wrote']) - set(facts.writes))}, not declared in writes")
        if set(use["read"]) - set(facts.reads) - set(facts.writes):
            wrong.append(f"{name} read {sorted(set(use['read']) - set(facts.reads) - set(facts.writes))}, "
                         "not declared")
        stale = (set(facts.writes) - set(use["wrote"]) - set(use["read"])) | (set(facts.reads) - set(use["read"]))
        if stale:
            wrong.append(f"{name} declares {sorted(stale)} but did not use them")
    writers = {}
    for name, use in used.items():
        for file in use["files"]["wrote"]:
            writers.setdefault(file, []).append(name)
    for name, use in used.items():
        for kind in ("read", "wrote"):
            for file in use["files"][kind]:
                for other in writers.get(file, []):
                    if other != name and not waits(name, other) and not (kind == "wrote" and waits(other, name)):
                        wrong.append(f"{name} {kind} {file}, which {other} wrote, without waiting for it")
    did = {n: f"wrote {u['wrote']}, read {u['read']}" for n, u in used.items()}
    assert not wrong, "\n".join(wrong[:40]) + f"\nwhat each chapter did: {did}"


EVIDENCE_KEYS = {"verdict", "estimate", "lo", "hi", "n", "unit", "direction", "boundary", "margin", "reason", "n_min",
                 "level", "method", "n_needed"}


@pytest.mark.slow
def test_every_recorded_claim_carries_the_evidence_its_verdict_was_decided_from(smoke_book):
    """Every claim of every chapter went through the one decision function: its evidence is stored, its verdict is
    the evidence's, a decisive verdict rests on at least n_min replicates and on an interval on one side of its
    boundary (or inside its margin), and a claim of several parts stores each part's evidence."""
    root, chapters, _ = smoke_book
    claims = [(name, c) for name in chapters if name in CHAPTERS
              for c in results.load(name, "smoke").get("claims", [])]
    assert len(claims) > 100, "the chapters record the papers' claims"

    def check(name, cid, ev):
        assert EVIDENCE_KEYS <= set(ev), f"{name} {cid}: evidence lacks {EVIDENCE_KEYS - set(ev)}"
        assert ev["verdict"] in results.VERDICTS and ev["reason"], (name, cid, ev)
        if ev["verdict"] in (results.REPRODUCED, results.NOT_REPRODUCED) and ev["method"] != "parts":
            assert ev["n"] >= ev["n_min"] and ev["lo"] is not None and ev["hi"] is not None, (name, cid, ev)
            lo, hi, b, m = ev["lo"], ev["hi"], ev["boundary"], ev["margin"]
            inside = {"greater": lo > b, "less": hi < b, "equivalent": b - m < lo and hi < b + m}[ev["direction"]]
            assert inside == (ev["verdict"] == results.REPRODUCED), (name, cid, ev)
        for part, sub in (ev.get("parts") or {}).items():
            check(name, f"{cid}:{part}", sub)

    for name, c in claims:
        assert "evidence" in c and c["evidence"]["verdict"] == c["verdict"], (name, c["id"])
        check(name, c["id"], c["evidence"])


@pytest.mark.slow
def test_smoke_build_writes_results_and_a_site_without_warnings(smoke_book):
    root, chapters, lines = smoke_book
    assert (root / "_build/html/index.html").exists()
    log = (root / "_build/jupyter-book.log").read_text()
    assert "WARNING" not in log and "build succeeded" in log
    assert any(line.startswith("chapter") for line in lines), "the summary table is printed"
    assert chapters[book.ZOO_PHASE].status == "ok", "the zoo's models are trained in a phase of their own"
    assert any(line.startswith(f"{book.ZOO_PHASE}: ") and " models and " in line for line in lines)
    record = json.loads(book.build_record("smoke", root).read_text())
    assert sorted(record["families"]) == sorted(n for n in CHAPTERS if papers.facts(n).family), \
        "the chapters' own families are trained in the phase too, each timed"
    assert record["wall"] >= record["chapters_wall"] > 0 and record["zoo_phase"] >= 0 and record["jobs"] >= 1
    rec = results.load("00_data_and_transforms", "smoke")
    assert rec["profile"] == "smoke" and rec["env"]["torch"] and rec["seconds"] > 0
    assert rec["metrics"]["transforms"] >= 20 and rec["metrics"]["classes"] == 10
    accs = {k: v for k, v in rec["metrics"].items() if k.startswith("zoo/")}
    assert sorted(accs) == sorted(f"zoo/{name}/test_acc" for name in zoo.SHARED)  # the models two papers use
    assert accs["zoo/small_resnet18/none/test_acc"] > 0.3
    page = (root / "_build/html" / book.GENERATED / "c1_invariance_equivariance.html").read_text()
    links = re.findall(r'href="([^"]+)"', page)
    for other in ("your-org", "mybinder.org", "colab.research", "binder-examples", "launch"):
        assert not [a for a in links if other in a], f"no repository is configured, yet the page links to {other}"
    assert "repository-button" not in page and "issues" not in " ".join(links)
    board = (root / book.GENERATED / "scoreboard.md").read_text()
    for key in "ABCE":  # the chapters of papers A, B, C and E record their claims
        assert f"No claims of paper {key}" not in board and f"\n## Paper {key}: " in board


SECOND = """# %% [markdown]
# # Second

# %% tags=["parameters"]
profile = "cpu"

# %%
from invlib import results
from invlib.protocol import Claim, Part

run = results.Run(profile)  # the runner names the run after the chapter
gain = Part("gain, points", "seed", smallest=0.5, reason="half a point")
c1 = Claim("c1", "e9_second", "Accuracy | above 0.9 with *care*.", "0.93", "Fig. 1", {"a": gain, "b": gain})
run.claim(c1, ours=0.5, effects={"a": [1.0, 1.1, 0.9], "b": [-1.0, -1.1, -0.9]})
run.save()
"""


def _text(html: Path) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html.read_text()).split())


@pytest.mark.slow
def test_only_reuses_other_chapters_or_writes_a_stub_and_the_scoreboard_shows_the_claims(book_copy, tmp_path,
                                                                                         monkeypatch):
    root = book_copy
    monkeypatch.setenv("INVLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv(book.REPOSITORY_ENV, "https://github.com/example/book")  # a repository: its buttons shown
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    part_e = next(p for p in toc["parts"] if p["caption"].startswith("Paper E"))
    part_e["chapters"].append({"file": "book/_generated/e9_second"})
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    (root / "notebooks/e9_second.py").write_text(SECOND)
    chapters = book.build("smoke", only=["e9_second"], root=root, echo=lambda *a, **k: None)
    status = {c.name: c.status for c in chapters}
    assert status["e9_second"] == "ok" and status["00_data_and_transforms"] == "stub"
    html = root / "_build/html/book"
    stub = _text(html / "_generated/00_data_and_transforms.html")
    assert "was not executed in this build" in stub and "book --only 00_data_and_transforms" in stub
    # the scoreboard and paper E's overview show the claim the run recorded (the build has no warnings)
    board, paper_e = _text(html / "_generated/scoreboard.html"), _text(html / "paper_e.html")
    row = "Accuracy | above 0.9 with care . (Fig. 1) 0.93 0.5 2 parts: 1 reproduced, 1 not reproduced partly"
    criterion = ("every part must hold: a: gain, points &gt; 0.5 (no effect 0; smallest effect that matters 0.5: half "
                 "a point)")
    assert row in board and row in paper_e and criterion in board and criterion in paper_e
    assert re.search(r"E: AugNet and Augerino 1 of 5 1 partly (&nbsp;)?1 1 of 1 \(100 %\)", board)
    assert re.search(r"The papers. claims: 1 tested, 1 partly\.", paper_e) and "not run in this build" in paper_e
    assert "No claims of paper B are recorded yet" in _text(html / "paper_b.html")
    page = (html / "_generated/e9_second.html").read_text()
    assert "https://github.com/example/book" in page and "mybinder.org" in page
    seconds = {c.name: c.seconds for c in chapters}["e9_second"]
    assert results.load("e9_second", "smoke")["book_seconds"] == round(seconds, 2) > 0
    chapters = book.build("smoke", only=["e9_second"], root=root, site=False, echo=lambda *a, **k: None)
    others = dict.fromkeys(book.toc_notebooks(root), "stub")
    assert {c.name: c.status for c in chapters} == {**others, "e9_second": "ok", book.ZOO_PHASE: "ok"}
    assert book.summary(chapters, root).splitlines()[0].split() == ["chapter", "status", "profile", "seconds",
                                                                     "budget"]


@pytest.mark.slow
def test_root_page_redirects_and_names_the_icon(smoke_book):
    # without an icon link a browser still on the redirect asks for /favicon.ico, which the site lacks (a 404)
    html = smoke_book[0] / "_build" / "html"
    text = (html / "index.html").read_text()
    assert 'url=book/intro.html"' in text
    icon = re.search(r'rel="icon" href="([^"]+)"', text)
    assert icon and (html / icon.group(1)).is_file(), text


def test_a_parallel_build_offers_the_long_chapters_first_and_loses_none():
    order = book.start_order(list(CHAPTERS))
    assert sorted(order) == sorted(CHAPTERS)
    waits = book.after(list(CHAPTERS))
    # first: the chapters that train in the chapter (the phase trains the others' families) and those any waits for
    early = {n for n in CHAPTERS if papers.facts(n).trains and not papers.facts(n).family}
    early |= {d for n in CHAPTERS for d in waits.get(n, ())}
    assert set(order[:len(early)]) == early and "s1_measures_agree" not in early
    assert {"b7_variation_in_the_data", "d2_instance_crops"} <= early, "S1 waits for them: they start early"
    for n in order:  # every chapter comes after those it waits for
        assert all(order.index(d) < order.index(n) for d in waits.get(n, ()))
    # within the first group, the head of the longest chain (B3 -> B4 -> B5) before a chapter nobody waits for
    assert order.index("b3_invariance_vs_magnitude") < order.index("c3_equivariance_finetuning")
    rest = order[len(early):]
    assert rest.index("00_data_and_transforms") < rest.index("s1_measures_agree")
