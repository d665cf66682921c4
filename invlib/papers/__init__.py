"""The five papers, one package each, all of the same shape.

``invlib/papers/<key>/`` (``a`` to ``e``, the chapters' first letter) holds, for every part of the paper:

- ``<method>.py``, the **method**: ``Settings`` (the paper's values, changed per profile by ``SETTINGS``) and
  its steps, named alike in every paper:

  1. ``settings(profile="cpu", **overrides)``: the profile first, then the changes (papermill's parameters);
  2. ``train(S, ...)`` (or ``train_<what>`` where a module trains several families): the chapter's models,
     through :mod:`invlib.zoo` or :func:`invlib.train.fit`, cached;
  3. the measures, named for what they measure (``accuracy_table``, ``invariance_table``, ...).

  This is the code a researcher reuses on their own models and data.
- ``protocol.py``, the **protocol**: every claim the paper's chapters test, declared before any run as data
  (:class:`invlib.protocol.Protocol`: statement, the paper's value, parts, and per part the quantity, the unit of
  replication, the direction, no effect, the smallest effect that matters with its reason, ``n_min``, the
  multiplicity). ``PROTOCOL`` is the paper's; :func:`protocols` gathers all of them.
- ``<method>_reports.py``, the **reports**: the paper's numbers, tables, figures, the numbers the prose quotes,
  and step 4, ``report(run, S, ...)`` (or ``report_<what>``): every function that records claims is named so.
  The reports compute each claim's effects and hand them with the claim's declaration to
  :meth:`invlib.results.Run.claim`; the verdict comes from :func:`invlib.protocol.decide` alone.

A chapter opens with ``S, run = results.open_chapter(<method>.settings, globals())`` and closes with
``run.close()``; in between, a few calls of these steps, figures and prose. ``tests/test_layout.py`` checks the
names (old ones such as ``family``, ``train_encoders`` or ``record_*_claims`` fail it).

| paper | method                          | reports                                  | chapters        |
|-------|---------------------------------|------------------------------------------|-----------------|
| A     | ``a/probes.py`` (+ ``a/tables.py``, the chapters' runs of it) | ``a/probes_reports.py`` | A1, A2 |
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
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ChapterFacts:
    """What the book runner needs to know of one chapter, declared beside its paper (:data:`CHAPTERS`).

    Attributes:
        zoo: ``"module:function"`` of the function listing the zoo models the chapter loads (it takes
            ``(profile, **params)``, the chapter's papermill parameters, and returns :class:`invlib.zoo.Spec`); it
            lives beside the family it lists, in the chapter's method module. None: the chapter loads no zoo model.
        trains: the chapter trains a model family itself, outside the zoo (its budget is a family chapter's).
        family: ``"module:function"`` of the function that trains (or loads from the cache) every model the chapter
            trains itself, outside the zoo, with nothing measured beyond what its training step caches with it
            (it takes ``(profile, **params)`` as ``zoo`` does and returns nothing). The book's training phase
            runs it before the chapters (:func:`train_family`), as it trains the zoo's models, so that the chapter
            loads its family from the cache; a chapter rerun alone (papermill) trains it on first use. None: the
            chapter's own models, if any, are trained in the chapter.
        budgets: ``{profile: seconds}`` where the chapter has a limit of its own (otherwise its class's,
            :data:`invlib.book.BUDGETS`).
        writes, reads: the cache namespaces (folders under the cache, :func:`invlib.utils.cached`) whose values the
            chapter makes, and those whose values an earlier chapter made and this one reuses. A parallel build
            starts a chapter after the earlier chapters that write what it reads (:func:`invlib.book.after`); the
            smoke build checks these against what each chapter did (``tests/test_book.py``). Trained zoo models
            are no namespace here: the training phase makes them before any chapter runs.
    """

    zoo: str | None = None
    trains: bool = False
    family: str | None = None
    budgets: dict = field(default_factory=dict)
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()


F = ChapterFacts
# Every chapter of the book (``_toc.yml``), in book order.
CHAPTERS = {
    "00_data_and_transforms": F(zoo="invlib.zoo:shared_specs"),
    "a1_ranking_tasks": F(zoo="invlib.papers.a.tables:a1_zoo_specs", writes=("probes",)),
    "a2_which_layers": F(zoo="invlib.papers.a.tables:a2_zoo_specs", writes=("probes",),
                         reads=("probes",)),  # A1's cached features
    # B1 trains paper B's crop family (14 models) in the regime where a crop can pay (the model without
    # augmentation overfits), which takes more than 5 minutes on 2 cores; its issue allows 8 minutes
    "b1_rrc_decomposition": F(zoo="invlib.papers.b.rrc:b1_zoo_specs", budgets={"cpu": 480}, writes=("rrc",)),
    "b2_scale_distribution": F(zoo="invlib.papers.b.rrc:b2_zoo_specs", writes=("rrc",),
                               reads=("rrc",)),  # B1's predictions of the models both load
    "b3_invariance_vs_magnitude": F(zoo="invlib.papers.b.grounding:b3_zoo_specs", writes=("grounding",)),
    "b4_factors_of_variation": F(zoo="invlib.papers.b.grounding:b4_zoo_specs", writes=("grounding",),
                                 reads=("grounding",)),  # B3's sweeps of the models both load
    "b5_wordnet": F(zoo="invlib.papers.b.grounding:b5_zoo_specs", reads=("grounding", "rrc")),  # B4's searches,
    # B1's predictions
    # B6 trains App. G's Augerino networks (no zoo models; the training phase trains them too) and reuses B1's
    # predictions of the baselines
    "b6_augerino_real_data": F(zoo="invlib.papers.b.rrc:b6_zoo_specs", trains=True,
                               family="invlib.papers.b.rrc:b6_family", writes=("rrc",), reads=("rrc",)),
    "b7_variation_in_the_data": F(zoo="invlib.papers.b.grounding:b7_zoo_specs", writes=("grounding", "rrc")),
    "c1_invariance_equivariance": F(zoo="invlib.papers.c.equivariance:c_zoo_specs", writes=("equivariance",)),
    "c2_representation_distance": F(zoo="invlib.papers.c.equivariance:c_zoo_specs", writes=("equivariance",),
                                    reads=("equivariance",)),  # C1's reference features
    # C3 fine-tunes 18 networks (Eq. 7 and its control for 9 types; ~60 % of its seconds, profiled)
    "c3_equivariance_finetuning": F(zoo="invlib.papers.c.equivariance:c_zoo_specs", trains=True,
                                    writes=("equivariance",), reads=("equivariance",)),
    # D1-D5 and E1 train their families outside the zoo (InstaAug and Augerino over seeds; the crop family and its
    # data control; the colour models; the contrastive encoders; the modules beside a frozen classifier; AugNet and
    # its ablations), in the book's training phase (``family``): in the chapter, D1-D3 took two or three times a
    # family chapter's budget, B6, D5 and E1 more than it, D4 all of it
    "d1_rotated_sprites": F(trains=True, family="invlib.papers.d.rotations:d1_family", writes=("d1", "fit")),
    "d2_instance_crops": F(trains=True, family="invlib.papers.d.cropping:d2_family", writes=("d2", "fit")),
    "d3_colour_jitter": F(trains=True, family="invlib.papers.d.colour:d3_family", writes=("d3", "fit")),
    "d4_contrastive_crops": F(trains=True, family="invlib.papers.d.contrastive:d4_family", writes=("d4",)),
    # D5 measures a frozen zoo classifier, and trains its own family of InstaAug modules (the module, its
    # input-free control and the data control's, over its seeds)
    "d5_fixed_classifier_tta": F(zoo="invlib.papers.d.fixed:d5_zoo_specs", trains=True,
                                 family="invlib.papers.d.fixed:d5_family", writes=("d5", "fit")),
    "e1_learning_the_right_invariance": F(trains=True, family="invlib.papers.e.experiments:e1_family",
                                          writes=("fit",)),
    "e2_beyond_vision": F(trains=True, writes=("fit",)),
    "e3_capacity": F(trains=True, writes=("fit",)),
    "e4_image_recognition": F(trains=True, writes=("fit",)),
    # S1 measures every model variant B1, B2, B3 and B7 train on scenes (zoo models; the training phase trains them),
    # B6's Augerino networks (B6's "rrc" cache) and D2's crop family (the fit cache: S1 waits for every chapter that
    # writes it, all of them among the first a parallel build starts), with paper C's measures among its own, and
    # trains only its rotation and brightness models; its issue allows 3 minutes
    "s1_measures_agree": F(zoo="invlib.papers.s.agreement:s1_zoo_specs", budgets={"cpu": 180},
                           writes=("equivariance", "synthesis"), reads=("rrc", "fit")),
    "y1_your_model": F(zoo="invlib.papers.s.yours:y1_zoo_specs", writes=("yours", "equivariance")),
}
del F


def facts(chapter: str) -> ChapterFacts:
    """The declared facts of ``chapter`` (:data:`CHAPTERS`); a chapter not listed (a test's) has none.

    Example
    -------
    >>> facts("b1_rrc_decomposition").budgets, facts("c2_representation_distance").reads
    ({'cpu': 480}, ('equivariance',))
    >>> facts("zz_new_chapter")
    ChapterFacts(zoo=None, trains=False, family=None, budgets={}, writes=(), reads=())
    """
    return CHAPTERS.get(chapter, ChapterFacts())


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
    target = facts(chapter).zoo
    return [] if target is None else list(_declared(target, profile, params))


def train_family(chapter: str, profile: str = "cpu", params: dict | None = None) -> bool:
    """Train (or load from the cache) the models chapter ``chapter`` trains itself (:attr:`ChapterFacts.family`),
    at ``profile`` with its papermill parameters ``params``; False for a chapter without one (nothing runs). What
    the book's training phase runs, one job per chapter beside the zoo's models (:func:`invlib.book.build`).

    Example
    -------
    >>> train_family("a2_which_layers", "smoke")
    False
    >>> train_family("d2_instance_crops", "smoke", {"n_train": 64})  # doctest: +SKIP
    True
    """
    target = facts(chapter).family
    if target is not None:
        _declared(target, profile, params)
    return target is not None


def _declared(target: str, profile: str, params: dict | None):
    """Call the ``"module:function"`` a chapter's facts name with ``(profile, **params)`` (``profile`` left out of
    ``params``)."""
    module, function = target.split(":")
    given = {k: v for k, v in (params or {}).items() if k != "profile"}
    return getattr(importlib.import_module(module), function)(profile, **given)


PROTOCOL_PAPERS = ("a", "b", "c", "d", "e", "s")  # the packages that declare a protocol (s: the synthesis)


def protocols() -> dict:
    """Every paper's declared claims: ``{"A": Protocol, ..., "E": ..., "S": ...}`` (each package's
    ``protocol.PROTOCOL``).

    Example
    -------
    >>> sorted(protocols())
    ['A', 'B', 'C', 'D', 'E', 'S']
    """
    out = {}
    for key in PROTOCOL_PAPERS:
        module = importlib.import_module(f"{__name__}.{key}.protocol")
        out[module.PROTOCOL.paper] = module.PROTOCOL
    return out
