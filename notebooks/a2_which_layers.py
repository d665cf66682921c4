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
# # A2. Which layers encode the augmentations?
#
# Section 6.1 of {cite}`yan2021encode`. The ranking probe of chapter A1 is one linear layer over the pooled
# channels of every convolution, so its weights say where the answer comes from: a channel matters by its
# weight times the spread of its activation. Summed up per layer (mean or max over the channels) and
# normalised per task, this gives the paper's Figures 5 and 6. Refitting the probe on the first or the
# second half of the layers only gives Table 2. Beyond the paper, the same probes on an untrained network
# and on networks trained with and without augmentation ask whether training, or augmentation, moves the
# encoding.
#
# The features are the ones chapter A1 cached (same images, seeds and backbones), so after A1 this chapter
# only trains probes.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # None: the profile's (the paper: ImageNet; the small profiles: colourised Fashion-MNIST); or "folder"
root = None  # folder of the dataset: an ImageNet folder with ILSVRC box XML files, or root/<class>/<image>
backbones = None  # {"ResNet-18": spec, "ResNet-50": spec}; None: from the profile (see zoo.load)
variants = None  # {label: spec} for "does training change it?"; None: from the profile
n_train = None  # training pairs per task (one pair per image; the paper: 65,000); None: from the profile
n_val = None  # validation pairs per task, from other images (the paper: 21,000)
canvas = None  # black margin around each image, a factor of its side (the paper: none): room to zoom out
background = None  # "texture": a random texture behind the objects; "as_is"; None: texture for garments on black
weight_decay = None  # L2 penalty of the probe on standardised features (the paper states none)
seed = 0

# %%
import pandas as pd

from invlib import pages, results
from invlib.papers.a import probes
from invlib.papers.a import probes_reports as R
from invlib.papers.a import tables as A

S, run = results.open_chapter(A.settings, globals())
train, val = A.chapter_images(S, quiet=True)
features, sizes = A.featurizers(S.backbones, S.profile)
table, trained = A.run_table(features, train, val, sizes=sizes, layers=probes.halves, folds=R.DEPTH_FOLDS,
                             **A.run_options(S))
pages.table(100 * table[table.layers == "all"].pivot(index="featurizer", columns="task", values="val_acc")[
    list(probes.TASKS)], f"Chapter A1's probes again (every layer, the same {len(train[0]):,} training and "
    f"{len(val[0]):,} validation images): validation accuracy in %, chance 50.")

# %% [markdown]
# ## Layer importance (Figures 5 and 6)
#
# Rows are tasks, roughly from low-level (colour) to high-level (scale, aspect ratio) as in the paper;
# columns are the backbone's convolutions in the order the network defines them (for these ResNets also
# the order they run), shortcut convolutions included. Each row sums to 1. "Mean" averages `|w| x std`
# over a layer's channels, "max" takes its largest channel (wide late layers have more chances of one
# large weight). A task the images cannot pose has no probe and no row.

# %%
maps = A.layer_importance(trained, list(S.backbones))
for agg, number in (("mean", 5), ("max", 6)):
    R.importance_figure(maps, list(S.backbones), agg)
    pages.show(f"The paper's Figure {number} on this run: how much each convolution (columns, first to last) "
               f"contributes to each task's probe (rows), the {agg} of `|weight| x std` over the layer's channels, "
               "each row summing to 1; one probe per backbone and task. Bright cells on the left mean the task is read "
               "from early layers, on the right from late ones.")

# %% [markdown]
# ### Where does the weight sit?
#
# One number per task: the importance-weighted mean position of the layers, 0 for the first convolution
# and 1 for the last (mean over channels). The paper's reading is that colour tasks sit early and contrast,
# aspect ratio and scale later. The validation pairs do not enter the probe's weights, so the depths get
# their spread from the training pairs: for each backbone and task, {glue:text}`folds` more probes are trained,
# each on a disjoint share of the training pairs, and a claim about depths is decided by a 95 % t-interval over
# them.

# %%
depths, first_block = A.layer_depths(maps, list(S.backbones))
R.log_layers(run, maps, depths, first_block)
R.bar_panels({"importance-weighted depth (0 = first layer, 1 = last)": depths,
              "share of the stem and first stage (the paper's Figure 1b)": first_block})
pages.show("Left: the importance-weighted depth of each task's probe (0: all its weight on the first convolution, "
           "1: all on the last); right: the share of its weight on the stem and the first stage. One probe per "
           "backbone (colour) and task, trained on all the training pairs.")
results.glue(R.report_layers(run, depths, table))
pages.table(depths, "Importance-weighted depth per task and backbone (0 = first convolution, 1 = last).")

# %% [markdown]
# {glue:md}`depth_verdict` On the probes trained on all pairs, the mean depth (backbones averaged) is
# {glue:md}`depth_colour` for the colour tasks against {glue:md}`depth_geo` for the geometric ones.

# %% [markdown]
# ## Table 2: half the layers
#
# The probe retrained on the first half of the convolutions (in the order above), on the second half, and
# on all of them. The paper shows ResNet-18 on three tasks; all tasks and both backbones are here.

# %%
R.log_table(run, table, "table2")
pages.table(R.side_by_side(table, "val_acc", "table2"), "Table 2: validation accuracy in % of the probe on the first "
            "half of the convolutions, the second half and all of them, with the paper's in brackets where it has "
            "one (ResNet-18, three tasks). Chance is 50.")

# %% [markdown]
# {glue:md}`halves_verdict` The paper finds the first half better on all three tasks it shows, and on
# some of them even better than all layers together.
#
# ## Which of the paper's claims hold here?
#
# Section 6.1's claims about these backbones: where the weight sits (Figures 5 and 6), decided over the fold probes
# for every backbone, and what the half-layer probes rank (Table 2, ResNet-18 on the paper's three tasks), decided
# by paired bootstrap intervals over the validation pairs, with a Bonferroni correction for "on some tasks".

# %%
results.glue({"open_questions": R.open_questions(run), "folds": R.DEPTH_FOLDS})
run.claims_table()

# %% [markdown]
# ## Reading the results
#
# The maps say where a linear probe finds each attribute, and the verdicts above say whether the paper's order of
# the tasks in depth, and its Table 2, hold on these backbones. {glue:md}`open_questions` A depth is a weighted mean
# over the whole network, so two tasks can share a depth while drawing on different layers; the maps above show
# where the weight actually sits.
#
# ## Beyond the paper: does training, or augmentation, change what the layers encode?
#
# The same probes on the same backbone architecture in three states: its random initialisation, trained
# without augmentation, and trained with RandomResizedCrop + flip (on `gpu`/`paper`: random and ImageNet
# weights). Random convolutions already compute local statistics of colour and edges, so a probe on an
# untrained network is the fair floor for "the network learned to encode this".

# %%
features, sizes = A.featurizers(S.variants, S.profile)
vtable, vtrained = A.run_table(features, train, val, sizes=sizes, **A.run_options(S))
vmaps = A.layer_importance(vtrained, list(S.variants))
vacc, vdepth, readings = R.log_variants(run, vtable, vmaps, list(S.variants))
results.glue(readings)
pages.table(pd.concat({"validation accuracy %": vacc, "importance-weighted depth": vdepth}, axis=1),
            "The same probes on one architecture in each state (columns): validation accuracy in % and the "
            "importance-weighted depth, per task.")

# %%
R.bar_panels({"validation accuracy %": vacc, "importance-weighted depth (0 = first layer, 1 = last)": vdepth},
             xlim={"validation accuracy %": (40, 101)})
pages.show(f"Validation accuracy (left) and importance-weighted depth (right) of each task's probe on the "
           f"{len(S.variants)} states of one architecture (colour), one probe each on the same pairs. The untrained "
           "network is the floor: an accuracy no higher than its own is what any random convolution already gives.")

# %% [markdown]
# From the untrained network to the last variant, validation accuracy changes by {glue:md}`train_gain`
# points per task, and the importance-weighted depth moves by {glue:text}`depth_shift:+.2f` on average.
#
# ## Specialisation or normalisation?
#
# The paper closes with a reading of these results (section 7): an attribute that the probe finds mostly in
# the early layers has been *normalised away* by the network, which registers it at the input and then
# stops carrying it; an attribute still present in the late layers has made the network *specialise*, the
# way the last layer specialises to classes. Two cautions apply to reading our figures that way. First,
# importance is about where a linear probe finds it *easiest* to read an attribute, not where the attribute
# is absent: Table 2's second-half probe shows how much is still recoverable from the late layers alone,
# and a high number there argues against "normalised away". Second, the comparison with the untrained
# network matters: where random convolutions already rank an attribute as well as trained ones, early-layer
# importance reflects what any convolution computes, not something the network learned to encode.

# %%
run.close()
