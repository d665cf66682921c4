"""invlib.papers.d.criteria: paper D's shared boundaries, declared once, each with its reason, and used by every
chapter that tests the same statement."""

import inspect

import pytest

from invlib.papers.d import contrastive_reports, criteria, cropping_reports, fixed_reports

SHARED = {"INPUT_DEPENDENT_KL": (cropping_reports, contrastive_reports, fixed_reports),
          "SIZE_FOLLOWS_OBJECT_RHO": (cropping_reports, contrastive_reports),
          "ENTROPY_IN_BAND_SHARE": (cropping_reports, contrastive_reports),
          "ON_OBJECT": (cropping_reports, contrastive_reports)}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_each_boundary_has_a_value_and_a_reason(name):
    boundary, reason = getattr(criteria, name)
    assert isinstance(boundary, float) and boundary > 0 and len(reason) > 20


@pytest.mark.parametrize("name", sorted(SHARED))
def test_every_chapter_that_tests_the_statement_uses_the_shared_boundary(name):
    for module in SHARED[name]:
        assert name in inspect.getsource(module), f"{module.__name__} judges this statement with a boundary of its own"
