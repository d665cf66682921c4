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
