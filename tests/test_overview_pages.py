"""The pages typed by hand state no number that a run's settings know, so none can go stale.

The five overview pages (``book/paper_a.md`` .. ``paper_e.md``) are plain Markdown, not notebooks: nothing glues
this run's numbers into them. Two checks keep them honest:

- a run size of the ``smoke`` or ``cpu`` profile (images, epochs, seeds, baselines, updates of a paper's settings)
  must not appear on its paper's page as "<value> <noun>", outside the sections that state the paper's own numbers
  ("Claims", "Method in brief") and unless it is also the paper's own value (the settings at the ``paper``
  profile);
- in the "Scale of this reproduction" section, which describes our run, a number in front of a run-size noun must
  be one the page's "Method in brief" section gives as the paper's (e.g. "150 epochs").

The introduction's and the README's profiles tables state the build's limit from :mod:`invlib.profiles`.
"""

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from invlib.profiles import BOOK_LIMIT_IMG_S, BOOK_LIMIT_S

ROOT = Path(__file__).resolve().parent.parent

# Each paper's settings, as its chapters open them (results.open_chapter(<module>.settings, ..., **kw)).
SETTINGS = {
    "a": [("invlib.papers.a.tables", {})],
    "b": [("invlib.papers.b.rrc", {}), ("invlib.papers.b.grounding", {})],
    "c": [("invlib.papers.c.equivariance", {})],
    "d": [("invlib.papers.d.rotations", {}), ("invlib.papers.d.cropping", {}), ("invlib.papers.d.colour", {}),
          ("invlib.papers.d.contrastive", {}), ("invlib.papers.d.fixed", {})],
    "e": [("invlib.papers.e.experiments", dict(experiment=x)) for x in ("sprites", "sinusoids", "capacity", "images")],
}
# A settings field that is a run size, by its name, and the nouns a page would count it in.
IMAGES = r"images|pairs|signals|scenes|sprites|samples"
SIZES = [
    (r"n_\w+|probe_train|pairs_per_class", IMAGES),
    (r"epochs|\w+_epochs", r"epochs?"),
    (r"seeds|\w+_seeds", r"seeds?|runs?"),
    (r"helped_runs", r"runs?"),
    (r"baselines", r"baselines?"),
    (r"\w*steps", r"updates|steps"),
]
RUN_NOUNS = r"epochs?|seeds?|images|signals|sprites|scenes|baselines?|updates|steps"
PAPERS_OWN = ("Claims", "Method in brief")  # the sections of a page that state the paper's settings and results
WORD = r"[A-Za-z(][\w()-]*"  # a word between a number and its noun ("training", "test"), never a number
WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def _settings(key: str, profile: str) -> list:
    return [importlib.import_module(module).settings(profile, **kw) for module, kw in SETTINGS[key]]


def _size(value) -> int | None:
    """A run size as a count: an int, or the number of seeds in a tuple of seeds."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return len(value)
    return None


def run_sizes(key: str, profile: str) -> set[tuple[int, str]]:
    """(value, nouns) of every run size of paper ``key``'s settings at ``profile`` above one that differs from the
    paper's ("one seed" is too common a phrase of the papers to mean the run)."""
    found = set()
    for S, P in zip(_settings(key, profile), _settings(key, "paper"), strict=True):
        for field in dataclasses.fields(S):
            nouns = next((n for pattern, n in SIZES if re.fullmatch(pattern, field.name)), None)
            value = _size(getattr(S, field.name))
            if nouns and value is not None and value > 1 and value != _size(getattr(P, field.name)):
                found.add((value, nouns))
    return found


def _number(value: int) -> str:
    """A regex for ``value`` as a page writes it: 3000, 3,000 or, up to twelve, three."""
    forms = {str(value), f"{value:,}"} | ({WORDS[value]} if value < len(WORDS) else set())
    return "(?:" + "|".join(re.escape(f) for f in sorted(forms)) + ")"


def stated_sizes(text: str, sizes: set[tuple[int, str]]) -> list[str]:
    """The phrases of ``text`` that state one of ``sizes``: "<value> [up to two words] <noun>"."""
    hits = []
    for value, nouns in sorted(sizes):
        pattern = rf"(?<![\w.,]){_number(value)}(?![\d,]\d)[\s-]+(?:{WORD}[\s-]+){{0,2}}?(?:{nouns})\b"
        hits += [m.group(0).replace("\n", " ") for m in re.finditer(pattern, text, flags=re.I)]
    return hits


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return match.group(1) if match else ""


def _counts(text: str) -> set[tuple[int, str]]:
    """(number, noun stem) of every "<number> [up to two words] <run noun>" in ``text``."""
    number = r"(\d{1,3}(?:,\d{3})+|\d+|" + "|".join(WORDS) + r")"
    found = set()
    for m in re.finditer(rf"(?<![\w.,-]){number}[\s-]+(?:{WORD}[\s-]+){{0,2}}?({RUN_NOUNS})\b", text, flags=re.I):
        word, noun = m.group(1).lower(), m.group(2).lower()
        found.add((WORDS.index(word) if word in WORDS else int(word.replace(",", "")), noun.rstrip("s")))
    return found


def unattributed_scale_numbers(text: str) -> set[tuple[int, str]]:
    """Run sizes the "Scale of this reproduction" section states that "Method in brief" does not give as the
    paper's."""
    return _counts(_section(text, "Scale of this reproduction")) - _counts(_section(text, "Method in brief"))


def ours(text: str) -> str:
    """The page without its "Claims" and "Method in brief" sections, which state the paper's numbers (a paper's
    "10 epochs of pre-training" may equal a run size of ours by chance)."""
    for title in PAPERS_OWN:
        text = text.replace(_section(text, title), "\n")
    return text


def _page(key: str) -> str:
    return (ROOT / f"book/paper_{key}.md").read_text()


@pytest.mark.parametrize("key", list(SETTINGS))
@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_overview_pages_state_no_run_size_of_a_profile(key, profile):
    hits = stated_sizes(ours(_page(key)), run_sizes(key, profile))
    assert not hits, (f"book/paper_{key}.md states run sizes of the {profile} profile, which go stale when the "
                      f"settings change: {hits}; describe them without the number and point to the chapter's settings")


@pytest.mark.parametrize("key", list(SETTINGS))
def test_the_scale_section_gives_only_the_papers_numbers(key):
    stray = unattributed_scale_numbers(_page(key))
    assert not stray, (f"book/paper_{key}.md's 'Scale of this reproduction' states {sorted(stray)}, numbers its "
                       "'Method in brief' does not give as the paper's: a run's sizes belong to the chapter's settings")


def test_the_checks_catch_a_page_that_states_the_runs_sizes():
    c = _settings("c", "cpu")[0]
    stale = (f"## Method in brief\n\n150,000 updates.\n\n## Scale of this reproduction\n\n{c.baselines} baselines; "
             f"{c.n_train:,} training images and {WORDS[c.epochs]} epochs per network; maps fitted on {c.n_fit} "
             "images.\n")
    assert len(stated_sizes(stale, run_sizes("c", "cpu"))) >= 3
    assert {(c.n_train, "image"), (c.epochs, "epoch")} <= unattributed_scale_numbers(stale)
    e = _settings("e", "cpu")[3]
    assert stated_sizes(f"{e.n_train:,} training images and {e.epochs} epochs", run_sizes("e", "cpu"))


def test_the_profiles_tables_state_the_builds_limit_from_the_code():
    minutes = f"{BOOK_LIMIT_S // 60} min"
    speed = f"{BOOK_LIMIT_IMG_S} img/s"
    for path in ("book/intro.md", "README.md"):
        row = next(line for line in (ROOT / path).read_text().splitlines() if line.startswith("| `cpu` |"))
        assert minutes in row and speed in row, f"{path}: the cpu profile's row must state {minutes} at {speed}: {row}"


def test_every_reference_links_to_the_work():
    bib = (ROOT / "book/references.bib").read_text()
    entries = re.findall(r"@\w+\{(\w+),(.*?)\n\}", bib, flags=re.S)
    unlinked = {key for key, body in entries if not re.search(r"^\s*(doi|eprint|url)\s*=", body, flags=re.M)}
    assert entries and unlinked <= {"tensmeyer2016invariance"}, f"references without a DOI, arXiv id or URL: {unlinked}"
