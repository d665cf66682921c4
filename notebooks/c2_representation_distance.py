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
from invlib import pages, plots, results
from invlib.papers.c import equivariance as C
from invlib.papers.c import equivariance_reports as R

S, run = results.open_chapter(C.settings, globals())
fit_ds, eval_ds = C.images(S)
nets = C.train(S)
results.glue(R.scale_readings(S))

# %% [markdown]
# ## The distance matrix (Eq. 4)

# %%
dist = C.distances(nets, S, fit_ds, eval_ds)
plots.heatmap(dist.total, list(dist.names), fontsize=8, figsize=(9, 7.5), colorbar_label="Eq. 4 distance")
pages.show(f"The Eq. 4 distance between every two of the {len(dist.names)} networks of the family: the normalised "
           f"error of predicting one network's features from the other's, both ways, summed, on {S.n_eval:,} held-out "
           "images (0 on the diagonal). Dark cells are networks whose representations are close.")

# %% [markdown]
# ## Nearest neighbours, groups of types, t-SNE and asymmetry (Figs. 3, 11, 12)
#
# Top left: how often a network of the same type is among the K nearest neighbours, against the rate of a random
# ordering. Top right: the mean distance between the networks of two types (on the diagonal, between distinct
# networks of one type). Bottom left: a t-SNE embedding of the distance matrix (scikit-learn's, which takes a
# precomputed distance matrix). Bottom right: `|d(i, j) - d(j, i)|`, the asymmetry of Eq. 9.

# %%
knn = C.knn_rates(dist)
groups = C.group_distances(dist)
R.plot_distances(dist, knn, groups, seed=S.seed)
pages.show(f"The paper's Figs. 3, 11 and 12 on this run's {len(dist.names)} networks: same-type neighbours against "
           "chance (top left; above the dashed line is better than chance), the mean distance between types (top "
           "right; a dark diagonal means networks of one type are close), a t-SNE map of the distances (bottom left; "
           "one point per network, coloured by type) and how much the two one-way distances of each pair differ "
           "(bottom right).")
pages.table(groups, "Mean Eq. 4 distance between the networks of two types (on the diagonal, between distinct "
            "networks of one type; a dash where a type has one network).")

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
pages.show(f"The paper's Fig. 10 on this run: `1 - L_L2` (1: the features do not move) of the widest network of "
           f"{len(S.cross_types)} types against the first baseline on `{S.cross_dataset}`, which they never saw, "
           "under each test transform (x); colours as in chapter C1, one network each.")
pages.table(R.readable(R.cross_summary(cross)), "Mean `1 - L_L2` invariance and equivariance of the augmented network "
            "and of the baselines (their mean), per type, on the training data and on the unseen data set.")

# %% [markdown]
# ## Paper vs this run

# %%
results.glue(R.report_c2(run, dist, knn, cross, C.network_seconds(nets)))
results.glue({"open_questions": R.open_questions(run, S)})
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The paper compared 37 networks (34 augmented, 3 baselines) with four training ranges per type, so most networks
# had three same-type partners. This run's family has {glue:text}`c2_networks` networks ({glue:md}`family`), so
# the nearest-neighbour claim rests on the {glue:text}`c2_partners` networks that have a same-type partner, and it
# counts the {glue:text}`c2_k` nearest of the {glue:text}`c2_others` other networks, the paper's "5 of 36" scaled
# to the family. The median Eq. 4 distance is {glue:text}`c2_typical:.3f` here (the paper's typical distance: 0.5 on
# RVL-CDIP, 1.0 on ILSVRC). What it answers:
#
# - **Are networks trained with the same type each other's nearest neighbours?** {glue:md}`c2_nearest`.
# - **Are rotation, shear and perspective near each other, and so are the baseline, colour jitter and noise?**
#   {glue:md}`c2_groups`.
# - **Do the two one-way distances of some pair differ markedly?** {glue:md}`c2_asymmetry`.
# - **Does invariance carry over to a data set the networks never saw?** {glue:md}`c2_transfer`.
#
# {glue:md}`open_questions` A claim over networks or types has as many replicates as the family has networks or
# types, however many images each distance is measured on; only the asymmetry rests on the evaluation images.

# %%
run.close()
