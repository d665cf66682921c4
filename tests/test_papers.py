"""invlib.papers: the registry of each chapter's facts (its zoo specs, which the book's training phase trains, its
budget and the caches it writes and reads; what the runner derives from them is tested in test_book.py)."""

import ast
from pathlib import Path

import pytest

from invlib import chapters, papers, zoo

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = chapters.toc_notebooks(ROOT)


def test_every_chapter_is_declared_in_book_order():
    assert list(papers.CHAPTERS) == CHAPTERS


def test_every_zoo_target_names_a_function_and_facts_are_well_formed():
    for name, facts in papers.CHAPTERS.items():
        assert isinstance(facts.trains, bool) and all(isinstance(v, int) for v in facts.budgets.values()), name
        assert all(isinstance(n, str) and n and "/" not in n for n in facts.writes + facts.reads), name
        assert facts.family is None or facts.trains, f"{name}: a chapter with a family function trains a family"
        for target in (facts.zoo, facts.family):
            if target is None:
                continue
            module, function = target.split(":")
            tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
            assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, f"{name}: {target}"


@pytest.mark.parametrize("name", sorted(n for n, f in papers.CHAPTERS.items() if f.zoo))
def test_each_chapters_specs_are_zoo_specs_on_smoke(name):
    specs = papers.zoo_specs(name, "smoke")
    assert specs and all(isinstance(s, zoo.Spec) for s in specs), name


def test_a_chapter_without_zoo_models_loads_nothing_and_parameters_reach_the_function():
    assert papers.zoo_specs("e3_capacity", "smoke") == [] and papers.zoo_specs("zz_not_a_chapter", "smoke") == []
    seeded = papers.zoo_specs("00_data_and_transforms", "smoke", {"dataset": "fashion_mnist", "profile": "smoke"})
    assert {s.dataset for s in seeded} == {"fashion_mnist"}


def test_a_chapter_not_declared_has_no_facts():
    assert papers.facts("zz_new") == papers.ChapterFacts()
    assert papers.facts("zz_new").writes == papers.facts("zz_new").reads == () and not papers.facts("zz_new").trains


CALLS = []


def _family_demo(profile, **params):
    CALLS.append((profile, params))


def test_train_family_calls_the_declared_function_with_the_profile_and_the_chapters_parameters(monkeypatch):
    assert papers.train_family("a2_which_layers", "smoke") is False and papers.train_family("zz_none") is False
    monkeypatch.setitem(papers.CHAPTERS, "zz_family", papers.ChapterFacts(trains=True,
                                                                          family=f"{__name__}:_family_demo"))
    CALLS.clear()
    assert papers.train_family("zz_family", "smoke", {"profile": "smoke", "seeds": 2}) is True
    assert CALLS == [("smoke", {"seeds": 2})]
