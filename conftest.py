"""Test-wide settings (unit tests and the docstring examples in invlib/): no hub access, generated files in a
temporary cache, a deterministic CPU."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("INVLIB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _test_cache(tmp_path_factory):
    """Every test session writes caches (zoo, NLTK data, features) and results into temporary folders."""
    old = {k: os.environ.get(k) for k in ("INVLIB_CACHE", "INVLIB_RESULTS")}
    os.environ["INVLIB_CACHE"] = str(tmp_path_factory.mktemp("invlib-cache"))
    os.environ["INVLIB_RESULTS"] = str(tmp_path_factory.mktemp("invlib-results"))
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    yield
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


# docstring examples that train or search for seconds: still run by `make test`, left out of `make test-fast`
SLOW_DOCTESTS = {
    "invlib.papers.d.contrastive.probe",
    "invlib.papers.d.contrastive.untrained_probe",
    "invlib.papers.d.contrastive.data_control",
    "invlib.papers.d.contrastive.train",
    "invlib.papers.b.authors_code.search",
    "invlib.papers.b.grounding.invariance_table",
    "invlib.papers.a.probes_reports.figure2",
    # the slowest of the rest (1-2 s each, 2026-11-30; make test-fast read 2 min 5-22 s on 2 cores with them)
    "invlib.papers.s.agreement_reports",
    "invlib.papers.s.agreement_reports.plot_pair",
    "invlib.papers.s.agreement_reports.answers",
    "invlib.papers.d.cropping.control",
    "invlib.papers.d.colour.train",
    "invlib.papers.b.grounding.search_gap",
    "invlib.metrics.representation_distances",
    "invlib.zoo.splits",
    "invlib.papers.a.probes_reports.report_table1",
    "invlib.papers.d.fixed.control",
    # the next slowest (1-3 s each under the build's load, 2026-11-30; a fresh clone's make test-fast read 133 s)
    "invlib.papers.d.cropping.step_costs",
    "invlib.papers.d.cropping.accuracy_table",
    "invlib.papers.b.grounding.untrained_table",
    "invlib.papers.d.rotations.seed_slopes",
    "invlib.papers.d.contrastive.train_one",
    "invlib.crops.beta_stats",
}


def pytest_collection_modifyitems(config, items):
    """Mark the docstring examples of :data:`SLOW_DOCTESTS` slow (``-m "not slow"`` skips them)."""
    for item in items:
        if item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
