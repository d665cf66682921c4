"""The five papers, one package each, all of the same shape.

``invlib/papers/<key>/`` (``a`` to ``e``, the chapters' first letter) holds, for every part of the paper:

- ``<method>.py``, the **method**: ``Settings`` (the paper's values, changed per profile by ``SETTINGS``) and
  ``settings(profile, **overrides)`` -> the family of models (zoo specs, trained through :mod:`invlib.zoo`) ->
  the measure. This is the code a researcher reuses on their own models and data.
- ``<method>_reports.py``, the **reports**: the paper's numbers, the claims with their verdicts
  (:meth:`invlib.results.Run.claim`), tables, figures and the numbers the prose quotes.

| paper | method                          | reports                                  | chapters        |
|-------|---------------------------------|------------------------------------------|-----------------|
| A     | ``a/probes.py``                 | ``a/probes_reports.py``                  | A1, A2          |
| B     | ``b/grounding.py`` (+ ``b/similarity.py``, its measures) | ``b/grounding_reports.py`` | B3, B4, B5 |
| B     | ``b/rrc.py`` (App. G's Augerino too) | ``b/rrc_reports.py``                | B1, B2, B5 (D.1), B6 |
| B     | ``b/authors_code.py`` (ours on the inputs their code was run on) | the same module | B1, B3, B4, B5 |
| C     | ``c/equivariance.py``           | ``c/equivariance_reports.py``            | C1, C2, C3      |
| D     | ``d/rotations.py``              | ``d/rotations_reports.py``               | D1              |
| D     | ``d/cropping.py``               | ``d/cropping_reports.py``                | D2              |
| D     | ``d/colour.py``                 | ``d/colour_reports.py``                  | D3              |
| D     | ``d/contrastive.py``            | ``d/contrastive_reports.py``             | D4              |
| D     | ``d/fixed.py``                  | ``d/fixed_reports.py``                   | D5              |
| D     | ``d/authors_code.py`` (ours on the inputs their code was run on) | the same module | D2      |
| E     | ``e/experiments.py``            | ``e/experiments_reports.py``             | E1 to E4        |

A paper module imports the foundation (``invlib.data``, ``models``, ``zoo``, ``train``, ``metrics``,
``learned``, ``results``, ...) and its own package, never another paper's package: what two papers share lives
in the foundation (``tests/test_layout.py`` checks this from the import graph). A comparison with the authors'
code goes through :mod:`invlib.authors`.
"""

import importlib

# The zoo models each chapter loads: chapter -> "module:function", the function taking ``(profile, **params)`` (the
# chapter's papermill parameters) and returning the chapter's list of :class:`invlib.zoo.Spec`. The book runner
# trains their union before any chapter runs (:func:`invlib.zoo.train_phase`); a chapter absent here loads no zoo
# model. Each function lives beside the family it lists, in the chapter's method module.
ZOO_SPECS = {
    "00_data_and_transforms": "invlib.zoo:shared_specs",
    "a1_ranking_tasks": "invlib.papers.a.probes:a1_zoo_specs",
    "a2_which_layers": "invlib.papers.a.probes:a2_zoo_specs",
    "b1_rrc_decomposition": "invlib.papers.b.rrc:b1_zoo_specs",
    "b2_scale_distribution": "invlib.papers.b.rrc:b2_zoo_specs",
    "b3_invariance_vs_magnitude": "invlib.papers.b.grounding:b3_zoo_specs",
    "b4_factors_of_variation": "invlib.papers.b.grounding:b4_zoo_specs",
    "b5_wordnet": "invlib.papers.b.grounding:b5_zoo_specs",
    "b6_augerino_real_data": "invlib.papers.b.rrc:b6_zoo_specs",
    "b7_variation_in_the_data": "invlib.papers.b.grounding:b7_zoo_specs",
    "c1_invariance_equivariance": "invlib.papers.c.equivariance:c_zoo_specs",
    "c2_representation_distance": "invlib.papers.c.equivariance:c_zoo_specs",
    "c3_equivariance_finetuning": "invlib.papers.c.equivariance:c_zoo_specs",
    "d5_fixed_classifier_tta": "invlib.papers.d.fixed:d5_zoo_specs",
    "s1_measures_agree": "invlib.papers.s.agreement:s1_zoo_specs",
}


def zoo_specs(chapter: str, profile: str = "cpu", params: dict | None = None) -> list:
    """The zoo specs chapter ``chapter`` loads when run at ``profile`` with the papermill parameters ``params``
    (those its parameters cell declares); ``[]`` for a chapter that loads none.

    Example
    -------
    >>> [s.name for s in zoo_specs("00_data_and_transforms", "smoke")][:2]
    ['small_resnet18/untrained', 'small_resnet18/none']
    >>> zoo_specs("e3_capacity", "smoke")
    []
    """
    target = ZOO_SPECS.get(chapter)
    if target is None:
        return []
    module, function = target.split(":")
    given = {k: v for k, v in (params or {}).items() if k != "profile"}
    return list(getattr(importlib.import_module(module), function)(profile, **given))
