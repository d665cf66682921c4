"""invlib: the library behind the invariance book.

Every heavy computation of the book lives here; notebooks only call it.

Modules
-------
data        datasets by name -> tensors in [0, 1], labels, boxes, class -> WordNet synsets
streaming   images that stay on disk (a folder larger than the memory cap) and the one batch iterator
wordnet     WordNet 3.0 through NLTK, offline; class-similarity matrices
models      one factory over timm / torchvision / our small nets; layer features
transforms  one registry of batched transformations with per-sample magnitudes
train       one training loop (fit / evaluate), checkpoints with resume, DDP under torchrun
zoo         trained models cached on disk by a hash of their config
profiles    smoke / cpu / gpu / paper sizes
results     numbers of a run beside the paper's, saved as JSON, with each claim's evidence
verdicts    the one decision function: a claim's interval over its replicates against a declared boundary
plots       image grids, magnitude grids, heatmaps
book        the papermill runner and the Jupyter Book build
metrics     invariance of a representation to a transformation (papers B and E); learned maps, distances (C)
transform_types  paper C's nine transformation types: training augmentations and measurement grids
equivariance     paper C: invariance/equivariance through learned maps, network distances, fine-tuning (C1-C3);
                 its figures and claims: equivariance_reports
probes      paper A: ranking probes of augmentations on frozen layers
learned     paper E: AugNet and Augerino (learned augmentation layers); experiments + reports drive chapters E1-E4
"""

import warnings

__version__ = "0.1.0"

# huggingface_hub (imported by timm) imports tqdm.auto, which warns in Jupyter kernels without ipywidgets;
# invlib's own progress bars are plain text bars, so the warning only clutters executed notebooks.
warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")
