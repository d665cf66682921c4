# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # C2. How far apart are the representations?
#
# Section 6.2, Fig. 3, Fig. 11, Fig. 12 and App. B.2 (Fig. 10) of {cite}`tensmeyer2016invariance`. For every
# ordered pair of networks of chapter C1's family, a map `E(r) = ReLU(W r + b)` learns to predict the features
# of one network from those of the other (features rescaled per dimension by their RMS); its normalised L2
# error on held-out images is a one-way distance, and the sum of both directions is the distance of Eq. 4. If
# a network's representation is shaped by the transformation it was trained with, networks of the same type
# should be near each other.
#
# The family is chapter C1's (the same settings reuse its cached networks); nothing is trained here.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # as in chapter C1 (the family must be the same to reuse its networks)
root = None
arch = None
types = None
magnitudes = None
n_train = None
epochs = None
layer = None
cross_dataset = None  # App. B.2's second data set (the paper: ANDOC): an invlib.data.available() name, or "folder"
cross_root = None  # the folder of a "folder" cross_dataset (<root>/<class>/<image>, or train/ and test/)
executor = None
seed = 0

# %%
import matplotlib.pyplot as plt

from invlib import results
from invlib.papers.c import equivariance as C
from invlib.papers.c import equivariance_reports as R

S, run = results.open_chapter(C.settings, globals())
fit_ds, eval_ds = C.images(S)
nets = C.train(S)
S

# %% [markdown]
# ## The distance matrix (Eq. 4)

# %%
dist = C.distances(nets, S, fit_ds, eval_ds)
dist.frame("total")

# %% [markdown]
# ## Nearest neighbours, groups of types, t-SNE and asymmetry (Figs. 3, 11, 12)
#
# Left: how often a network of the same type is among the K nearest neighbours, against the rate of a random
# ordering. Second: the mean distance between the networks of two types (on the diagonal, between distinct
# networks of one type). Third: a t-SNE embedding of the distance matrix (scikit-learn's, which takes a
# precomputed distance matrix with no extra dependency beyond scikit-learn; openTSNE would add scikit-learn
# anyway). Right: `|d(i, j) - d(j, i)|`, the asymmetry of Eq. 9.

# %%
knn = C.knn_rates(dist)
groups = C.group_distances(dist)
R.plot_distances(dist, knn, groups, seed=S.seed)
plt.show()
groups

# %% [markdown]
# ## Another data set (App. B.2, Fig. 10)
#
# The paper measured its document networks on historical documents (ANDOC) that they never saw. Offline, the
# second data set is the greyscale Fashion-MNIST for networks trained on its colourised version (any image
# folder with `-p cross_dataset=folder -p cross_root=/path`). With other images the classifier has no
# meaning, so the measure is `1 - L_L2` of the features, for the strongest network of a few types and the
# baseline.

# %%
cross = C.cross_dataset(nets, S, fit_ds, eval_ds)
R.plot_curves(cross[cross.domain == S.cross_dataset], what="l2")
plt.show()
R.cross_summary(cross)

# %% [markdown]
# ## Paper vs this run

# %%
facts = R.report_c2(run, dist, knn, cross, C.network_seconds(nets))
results.glue(facts)
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The paper compared 37 networks (34 augmented, 3 baselines) with four training ranges per type, so most
# networks had three same-type partners; the `cpu` family has two magnitudes for rotation, shear and crop
# only and two baselines, so the K-NN claim rests on {glue:md}`c2_partners` networks with a same-type partner
# and its K is the paper's "5 of 36" scaled to the family. The median distance of Eq. 4 is
# {glue:md}`c2_typical` here (the paper's typical: 0.5 on RVL-CDIP, 1.0 on ILSVRC). {glue:md}`c2_reading`

# %%
run.close()
