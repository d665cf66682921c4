"""invlib.papers: the registry of each chapter's zoo specs, which the book's training phase trains."""

import ast
from pathlib import Path

import pytest

from invlib import book, papers, zoo

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = book.toc_notebooks(ROOT)


def test_every_registered_chapter_exists_and_names_a_function():
    assert set(papers.ZOO_SPECS) <= set(CHAPTERS)
    for name, target in papers.ZOO_SPECS.items():
        module, function = target.split(":")
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
        assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, f"{name}: {target}"


@pytest.mark.parametrize("name", sorted(papers.ZOO_SPECS))
def test_each_chapters_specs_are_zoo_specs_on_smoke(name):
    specs = papers.zoo_specs(name, "smoke")
    assert specs and all(isinstance(s, zoo.Spec) for s in specs), name


def test_a_chapter_outside_the_registry_loads_nothing_and_parameters_reach_the_function():
    assert papers.zoo_specs("e3_capacity", "smoke") == []
    seeded = papers.zoo_specs("00_data_and_transforms", "smoke", {"dataset": "fashion_mnist", "profile": "smoke"})
    assert {s.dataset for s in seeded} == {"fashion_mnist"}
