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
# only fits probes.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # None: from the profile (colourised Fashion-MNIST on smoke/cpu, ImageNet on gpu/paper)
root = None  # folder of the dataset, e.g. an ImageNet folder with ILSVRC box XML files
backbones = None  # {"ResNet-18": spec, "ResNet-50": spec}; None: from the profile (see probes.load_backbone)
variants = None  # {label: spec} for "does training change it?"; None: from the profile
n_train = None  # training pairs per task (one pair per image); None: from the profile
n_val = None  # validation pairs per task, from other images
canvas = None  # black margin around each image (1.5 on smoke/cpu)
weight_decay = None  # L2 penalty of the probe on standardised features; None: 1e-3
seed = 0

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown
from myst_nb import glue

from invlib import plots, probes, profiles, results

P = profiles.resolve(profile)
S = probes.settings(P, backbones=backbones, variants=variants, n_train=n_train, n_val=n_val, canvas=canvas,
                    weight_decay=weight_decay)
data_name = dataset or S.dataset or P.dataset
run = results.Run("a2_which_layers", P, params=dict(dataset=data_name, backbones=S.backbones, variants=S.variants,
                                                     n_train=S.n_train, n_val=S.n_val, canvas=S.canvas, seed=seed,
                                                     weight_decay=S.weight_decay))
(train_x, train_b), (val_x, val_b) = probes.load_images(data_name, S.n_train, S.n_val, seed=seed, root=root,
                                                        source_size=S.source_size, canvas=S.canvas)
tasks = list(probes.TASKS)
common = dict(seed=seed, weight_decay=S.weight_decay, batch_size=S.batch_size, device=P.device, progress=P.progress)


def probe(specs: dict, layers=None):
    """Probe every backbone of ``specs`` ({label: spec}) on every task: (table, fitted probes)."""
    feats, sizes = {}, {}
    for label, spec in specs.items():
        model, sizes[label] = probes.load_backbone(spec, P)
        feats[label] = probes.Backbone(model, name=label.lower().replace("-", ""))
    return probes.run_table(feats, (train_x, train_b), (val_x, val_b), sizes=sizes, layers=layers, **common)


table, fitted = probe(S.backbones, layers=probes.halves)
table[table.layers == "all"].pivot(index="featurizer", columns="task", values="val_acc")[tasks].round(3)

# %% [markdown]
# ## Layer importance (Figures 5 and 6)
#
# Rows are tasks, roughly from low-level (colour) to high-level (scale, aspect ratio) as in the paper;
# columns are the backbone's convolutions in the order the network defines them (for these ResNets also
# the order they run), shortcut convolutions included. Each row sums to 1. "Mean" averages `|w| x std`
# over a layer's channels, "max" takes its largest channel (wide late layers have more chances of one
# large weight).

# %%
order = ["brightness", "saturation", "hue", "contrast", "aspect_ratio", "zoom_in", "zoom_out"]
importance = {}
for name in S.backbones:
    per_task = {t: probes.importance(fitted[name, "all", t]) for t in order}
    for agg in ("mean", "max"):
        m = pd.DataFrame({t: imp[agg] for t, imp in per_task.items()}).T
        importance[name, agg] = m
        for t in order:
            run.log(f"importance/{name}/{t}/{agg}", m.loc[t].round(5).to_dict())
        plots.heatmap(m.values, order, col_labels=list(m.columns), cmap="viridis",
                      title=f"{name}: layer importance, {agg} over channels (each row sums to 1)")
        plt.show()

# %% [markdown]
# ### Where does the weight sit?
#
# One number per task: the importance-weighted mean position of the layers, 0 for the first convolution
# and 1 for the last (mean over channels). The paper's reading is that colour tasks sit early and contrast,
# aspect ratio and scale later.

# %%
depths = pd.DataFrame({name: {t: probes.depth(importance[name, "mean"].loc[t]) for t in order}
                       for name in S.backbones})
first_block = {}
for name in S.backbones:
    m = importance[name, "mean"]
    first = [c for c in m.columns if c.split(".")[0] in ("stem", "conv1", "bn1", "layer1")]
    first_block[name] = m[first].sum(axis=1)
    for t in order:
        run.log(f"depth/{name}/{t}", depths.loc[t, name])
        run.log(f"first_block/{name}/{t}", float(first_block[name][t]))
fig, axes = plt.subplots(1, 2, figsize=(11, 3.2))
depths.plot.barh(ax=axes[0], title="importance-weighted depth (0 = first layer)")
pd.DataFrame(first_block).plot.barh(ax=axes[1], title="Figure 1b: share of the stem + first stage")
for ax in axes:
    ax.invert_yaxis()
    ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
colour, geo = ["brightness", "saturation", "hue"], list(probes.GEOMETRIC)
early = {name: depths.loc[colour, name].mean() < depths.loc[geo, name].mean() for name in S.backbones}
glue("depth_verdict", Markdown("earlier" if all(early.values()) else
                               "not earlier" if not any(early.values()) else "earlier for one backbone only"),
     display=False)
glue("depth_colour", float(depths.loc[colour].values.mean()), display=False)
glue("depth_geo", float(depths.loc[geo].values.mean()), display=False)
run.log("colour_tasks_earlier_than_geometric", all(early.values()), paper=True)
depths.round(3)

# %% [markdown]
# On this run the colour tasks' weight sits {glue:md}`depth_verdict` than that of the geometric tasks
# (mean depth {glue:text}`depth_colour:.2f` against {glue:text}`depth_geo:.2f`, both backbones averaged).

# %% [markdown]
# ## Table 2: half the layers
#
# The probe refitted on the first half of the convolutions (in the order above), on the second half, and
# on all of them. The paper shows ResNet-18 on three tasks; all tasks and both backbones are here, with the
# paper's validation accuracy in brackets where it has one.

# %%
cells = {}
for r in table.itertuples():
    paper = probes.PAPER_TABLE2.get(r.layers, {}).get(r.task) if r.featurizer == "ResNet-18" else None
    cells.setdefault((r.featurizer, r.layers), {})[r.task] = (f"{100 * r.val_acc:.1f}"
                                                              + (f" ({paper[1]:.1f})" if paper else ""))
    run.log(f"table2/{r.featurizer}/{r.layers}/{r.task}/val", 100 * r.val_acc, paper=paper[1] if paper else None)
    run.log(f"table2/{r.featurizer}/{r.layers}/{r.task}/train", 100 * r.train_acc,
            paper=paper[0] if paper else None)
print("Validation accuracy %, this run (paper)")
pd.DataFrame(cells).T[tasks]

# %%
acc = table.pivot_table(index=["featurizer", "task"], columns="layers", values="val_acc")
first_ok = (acc["first half"] >= acc["second half"]).groupby("featurizer").mean()
glue("first_wins", Markdown(", ".join(f"{name}: {share:.0%} of the tasks" for name, share in first_ok.items())),
     display=False)
for name, share in first_ok.items():
    run.log(f"first_half_at_least_second/{name}", float(share), paper=1.0,
            note="share of tasks; paper: 3 of 3 ResNet-18 tasks")

# %% [markdown]
# The first half ranks at least as well as the second half for {glue:md}`first_wins`. The paper finds the
# first half better on all three tasks it shows, and even better than all layers together.

# %% [markdown]
# ## Beyond the paper: does training, or augmentation, change what the layers encode?
#
# The same probes on the same backbone architecture in three states: its random initialisation, trained
# without augmentation, and trained with RandomResizedCrop + flip (on `gpu`/`paper`: random and ImageNet
# weights). Random convolutions already compute local statistics of colour and edges, so a probe on an
# untrained network is the fair floor for "the network learned to encode this".

# %%
vtable, vfitted = probe(S.variants)
vacc = vtable.pivot(index="task", columns="featurizer", values="val_acc").loc[order, list(S.variants)]
vdepth = pd.DataFrame({name: {t: probes.depth(probes.importance(vfitted[name, "all", t])["mean"]) for t in order}
                       for name in S.variants})
for name in S.variants:
    for t in order:
        run.log(f"variants/{name}/{t}/val", 100 * vacc.loc[t, name])
        run.log(f"variants/{name}/{t}/depth", vdepth.loc[t, name])
both = pd.concat({"validation accuracy %": 100 * vacc, "importance-weighted depth": vdepth}, axis=1)
both.round(2)

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.2))
(100 * vacc).plot.barh(ax=axes[0], title="validation accuracy %", xlim=(40, 101))
vdepth.plot.barh(ax=axes[1], title="importance-weighted depth")
for ax in axes:
    ax.invert_yaxis()
    ax.legend(fontsize=7)
plt.tight_layout()
plt.show()
labels = list(S.variants)
gain = (100 * (vacc[labels[-1]] - vacc[labels[0]])).round(1)
glue("train_gain", Markdown(", ".join(f"{t} {g:+.1f}" for t, g in gain.items())), display=False)
shift = (vdepth[labels[-1]] - vdepth[labels[0]]).mean()
glue("depth_shift", float(shift), display=False)

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

# %% [markdown]
# ## This run

# %%
path = run.save()
print(f"results: {path}")
run.table()
