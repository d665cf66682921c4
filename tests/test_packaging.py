"""The repository's set-up files agree with each other."""

import re
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _norm(req: str) -> str:
    return re.sub(r"\s+", "", req).lower()


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["book"] + \
        project["optional-dependencies"]["test"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    have = [p for p in pip if p != "-e ."]
    assert sorted(map(_norm, have)) == sorted(map(_norm, wanted)), "environment.yml and pyproject.toml drifted"
    assert "-e ." in pip


def test_torch_pins_agree_everywhere():
    makefile = (ROOT / "Makefile").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    for pin in ("torch==2.14.1", "torchvision==0.29.1"):
        assert pin in makefile and pin in pyproject


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^\s*(make \w+)\s*(?:#.*)?$", readme, flags=re.M)
    assert "make test" in commands and "make book" in commands
    ci = [line for line in (ROOT / ".ci/run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == "make test"


def test_generated_files_are_ignored():
    paths = ["x.ipynb", "notebooks/a1_probe.ipynb", "_build/html/index.html", "results/cpu/a.json",
             ".cache/zoo/m.pt", "book/_generated/a.ipynb", ".venv/bin/python", "model.pt"]
    proc = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True)
    assert sorted(proc.stdout.split()) == sorted(paths)


def test_design_card_top_level_exists():
    for name in ("book", "notebooks", "invlib", "tests", "_config.yml", "_toc.yml", "environment.yml",
                 "README.md", "pyproject.toml", "Makefile", ".ci/run", "benchmarks"):
        assert (ROOT / name).exists(), name
