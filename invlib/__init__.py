"""invlib: the library behind the invariance book.

Every heavy computation of the book lives here; a chapter (``notebooks/<chapter>.py``) is its parameters, a few
calls, figures and prose. The library has two parts.

The foundation, written once and used by every paper (roughly lowest first: a module imports only modules beside
or below it, and the import graph has no circle; ``tests/test_layout.py`` checks both):

utils            cache folders, name checks, atomic writes, seeds, devices
streaming        images that stay on disk (a folder larger than the memory cap) and the one batch iterator
verdicts         the one decision function: a claim's interval over its replicates against a declared boundary
profiles         smoke / cpu / gpu / paper sizes; ``settings``: a paper's values, changed per profile, then by the
                 chapter's parameters, as one frozen dataclass
wordnet          WordNet 3.0 through NLTK, offline; class-similarity matrices
transforms       one registry of batched transformations with per-sample magnitudes
crops            paper B's crop family as boxes per image, and the book's one box crop
data             datasets by name (``data.load``, the registry) -> uint8 image tensors, labels, boxes, class ->
                 WordNet synsets; a package: the dataset core, real data (Fashion-MNIST, CIFAR-10, image folders,
                 ImageNet), generated data (sprites, sinusoids), scenes, lighting
transform_types  paper C's nine transformation types: training augmentations and measurement grids
models           one factory over timm / torchvision / our small nets; layer features; inference copies
metrics          measures shared by the papers: relative invariance (B, E), learned maps and distances between
                 networks (C)
linear           linear read-outs of frozen features: L2-penalised logistic regression by L-BFGS (papers A, D)
learned          augmentation learned end to end in front of a trunk: AugNet and Augerino (papers E, B), InstaAug (D)
results          a chapter's run (``open_chapter`` ... ``close``): numbers beside the paper's, claims with their
                 evidence, saved as JSON; ``glue`` hands numbers to the prose
authors          the authors' code beside ours: their measured runs and the "same as the authors' code" verdict
plots            image grids, magnitude grids, heatmaps
train            one training loop (fit / evaluate), checkpoints with resume, DDP under torchrun
zoo              trained models by spec, cached on disk by a hash of it; train_many here or as SLURM jobs
chapters         the book's chapter list and where its sources, executed notebooks and results live
scoreboard       the "Reproduction scoreboard" page, from every chapter's results
book             the runner: every chapter executed with papermill, then the Jupyter Book build

The papers, :mod:`invlib.papers` (one package per paper, ``a`` to ``e``, and ``s``, the synthesis): each part of a
paper is a method module and its reports module, with the same steps in every paper: ``settings(profile,
**overrides)`` -> ``train`` (the chapter's models, through the zoo) -> the measures -> ``report`` (the claims and
their verdicts). :data:`invlib.papers.CHAPTERS` declares what the runner needs to know of each chapter (its zoo
models, the cached results it writes and reads). ``python -m invlib`` is the command line (``book``, ``zoo``,
``family``, ``compare``, ...).
"""

import warnings

__version__ = "0.1.0"

# huggingface_hub (imported by timm) imports tqdm.auto, which warns in Jupyter kernels without ipywidgets;
# invlib's own progress bars are plain text bars, so the warning only clutters executed notebooks.
warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")
