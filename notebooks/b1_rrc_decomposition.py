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
# # B1. What RandomResizedCrop really does
#
# Section 2.1 and App. A, B, D.1, F of {cite}`bouchacourt2021grounding`. RandomResizedCrop (RRC) picks a crop of
# random area (8 % to 100 % of the image) and aspect ratio at a random place and resizes it: it zooms *and*
# translates. The paper splits it into its parts and retrains ResNet-18 with each: a random-size crop always at
# the centre (RandomSizeCenterCrop: scale only), a fixed-size crop anywhere (FixedSizeRandomCrop), a random
# translation of at most 30 % then the central crop (T.(30%)), translation then a random-size centred crop (with
# and without aspect-ratio change), and the central crop alone (FixedSizeCenterCrop, "no augmentation", also the
# evaluation pre-processing of every model). All seven are `invlib.crops.Crop` methods: one box per image and one
# `grid_sample` call per batch.
#
# Images are stored at 8/7 of the side the model sees (the paper's "resize to 256, crop 224"). On the `cpu`
# profile they are `scenes`, whose objects move and change size over a textured background, with a dimmer object
# of another class behind half of them (chapter 00): a crop can miss the object or show the wrong one, as on
# ImageNet. `-p dataset=fashion_mnist_color` runs the 28 px garments the book used before.

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | gpu | paper
dataset = None  # scenes, fashion_mnist_color, cifar10 or imagenet (the paper's); "folder" with root
root = None  # folder of your own images (<root>/<class>/<image>, or train/ and test/ inside)
arch = None  # any invlib.models.create name
size = None  # the side the models see (224 in the paper)
methods = None  # a subset of invlib.crops.METHODS
seeds = None  # seeds per method (5 in the paper)
helped_runs = None  # App. B's runs, each two seeds of its methods (the paper's 5 seeds hold two)
n_train = None
epochs = None
batch_size = None
executor = None  # None (train here), "local" or "slurm": one zoo job per model
device = None  # None: the profile's device; a torch device name (e.g. "cuda:1") overrides it
seed = 0

# %%
from invlib import pages, results
from invlib.papers.b import authors_code as AC
from invlib.papers.b import rrc as B
from invlib.papers.b import rrc_reports as R

S, run = results.open_chapter(B.settings, globals())

# %% [markdown]
# ## The seven methods on one image
#
# Each row is one method: first the stored image with the boxes it drew, then the crops the model sees.

# %%
ds = B.eval_images(S)
R.plot_methods(ds, S)
pages.show(f"Five draws of each of the {len(S.methods)} crop methods on one `{S.dataset}` test image, stored at "
           f"{ds.images.shape[-1]} px and cropped to {S.size} px. Left: the boxes on the stored image (one colour a "
           "draw); right: the crops, resized to what the model sees. RandomResizedCrop varies both size and place; "
           "the centred crops vary only size, the translations only place.")

# %% [markdown]
# ### Our crop samplers against the authors' code
#
# Where the authors published code, the book checks that its own implementation computes what theirs does on the
# same inputs. `benchmarks/authors/grounding_runs.py` drew {glue:text}`crops_draws:,` boxes with each of the
# authors' crop transforms (facebookresearch/grounding-inductive-biases) on a {glue:text}`crops_side` px image
# cropped to {glue:text}`crops_size` px, and stored the mean and spread of four statistics per method (area,
# aspect ratio, and the x and y offsets of the box's centre) in `invlib/papers/b/authors_grounding.json`;
# `invlib.crops` draws as many boxes here. The two sides use different random numbers, so a statistic counts as
# different only when the gap exceeds {glue:text}`crops_se` standard errors of the difference.

# %%
AC.report(run, "crops")  # records the check "same as the authors' code"
sampler = AC.compare("crops")
results.glue(AC.crops_numbers(sampler))
pages.table(AC.crops_table(sampler), "Per crop method, the statistics of our boxes that differ from the authors' "
            "beyond their tolerance, and the largest differences in area and in the position of the box's centre.")

# %% [markdown]
# {glue:md}`crops_verdict` This verdict is about our code against the authors' code: it tests no claim of the
# paper. The differences are small and systematic, at most {glue:text}`crops_area_pct:.2f` % of the image in area
# and {glue:text}`crops_centre_px:.2f` px in position, and all of them come from whole pixels. Their crops are
# torchvision's, which rounds a box's sides to whole pixels before it checks that the box fits the image, so a box
# up to half a pixel larger than the image is kept: their RandomResizedCrop's mean area is
# {glue:text}`rrc_area_theirs:.2f` % of the image, ours {glue:text}`rrc_area_ours:.2f` %. Their fixed-size random
# crop can take only {glue:text}`crops_offsets` whole-pixel offsets along each axis, which spreads its centre a
# little more than our continuous range (a standard deviation of {glue:text}`fsrc_sd_theirs:.2f` px against
# {glue:text}`fsrc_sd_ours:.2f` px). Their centred crops sit at `(side - w) // 2`, half a pixel off centre when
# the margin is odd; ours sit at the centre. Whether differences of this size change what a trained model learns
# is not tested here; every claim below rests on our samplers.

# %%
pages.table(AC.crops_full(sampler), "The whole comparison: every statistic of our boxes and of the authors', in "
            "percent of the image (area), pixels of the stored image (centre) or log ratio (aspect ratio).")

# %% [markdown]
# ## Training the family
#
# Every (method, seed) is one zoo model (`invlib.zoo.Spec`), trained once and cached; with `-p executor=slurm`
# each becomes a SLURM job. On `cpu`: the zoo's small ResNet-18, SGD with a cosine schedule for a few epochs;
# on `paper`: ResNet-18, 150 epochs, learning rate 0.01 divided by 10 every 30 epochs, weight decay 1e-3.

# %%
trained = B.train(S)
ev = B.evaluate(trained, S, ds)

# %% [markdown]
# ## Table 1a: top-1 per method
#
# Mean and standard error over seeds, evaluated on the central crop; the gain is over no augmentation. The paper
# gives top-1 for three methods in its text, and these are what the black ticks mark: {glue:text}`paper_none` %
# without augmentation and {glue:text}`paper_parts` % for both RandomSizeCenterCrop and FixedSizeRandomCrop.

# %%
t1a = R.table_1a(ev)
R.plot_table_1a(t1a)
pages.show(f"Top-1 on the central crop of each crop method: mean (bar) and standard error over {S.seeds} seeds, "
           f"{S.dataset} at {S.size} px. Black ticks: the paper's ImageNet top-1 where its text states it; compare "
           "the order of the methods, not the levels.")
pages.table(R.table_1a_page(t1a), f"Table 1a: top-1 per method over {S.seeds} seeds; the training top-1 is on "
            "each model's own augmented crops in its last epoch.")

# %% [markdown]
# ## Which images does translation fix? (App. B)
#
# For each pair (no-augmentation seed, method seed), the test images that the model without augmentation gets
# wrong and the method's model gets right. The matrix gives the mean intersection-over-union of these lists
# within a method (diagonal) and across methods. The claim's replicate is a run: two seeds of every method, whose
# lists are compared with each other, so App. B's methods and the model without augmentation train
# `2 x helped_runs` seeds where that is more than `seeds` (`invlib.papers.b.rrc.helped_specs`).

# %%
helped = B.evaluate(B.train_helped(S), S, ds)
iou = B.helped_iou(helped)
R.plot_iou(iou)
runs = max((len(p) for p in helped.preds.values()), default=0)  # seeds of each method (none: 0)
pages.show(f"Mean IoU of the lists of test images a method's model gets right and the model without augmentation "
           f"gets wrong, over {runs} seeds of each: within a method (diagonal) and across two "
           "methods (off the diagonal). A pattern would show as a diagonal well above the rest; the paper finds "
           "none. RSCC: RandomSizeCenterCrop.")

# %% [markdown]
# ## Classes that RRC hurts (App. D.1, Table A2)
#
# Every RRC seed against every no-augmentation seed, per class: the share of comparisons in which RRC is
# below, and the mean loss in points when it is. A class is *consistently hurt* above the settings'
# `hurt_share` ({glue:text}`hurt_share:.0f` %; the paper lists classes hurt in at least 72 % of 25 comparisons).
# Chapter B5 asks WordNet whether these classes are related. With {glue:text}`n_classes` classes, one of them
# reaches that share by chance alone in most runs where RRC changes nothing, so the claim is tested otherwise:
# per class, RRC's accuracy minus that of the model without augmentation of the same seed, with an interval over
# seeds widened for {glue:text}`n_classes` simultaneous tests (Bonferroni).

# %%
hurt = B.hurt_classes(ev, S)
pages.table(hurt, "Per class: the share (%) of RRC-against-no-augmentation comparisons in which RRC is below "
            "(hurt) or above (helped), and the mean loss in points when it is below; most hurt first.")

# %% [markdown]
# ## Is RRC's model invariant to zoom? (App. F, Fig. A7)
#
# The validation crops are zoomed by a random-size centred crop without aspect-ratio change (area fraction
# drawn in `(1/zoom², 1)`), averaged over `test_seeds` draws; the largest zoom, {glue:text}`zoom_max:.2f`, is
# RRC's own limit `1/√0.08`.

# %%
curve = B.zoom_curve(trained, S, ds)
R.plot_zoom(curve)
pages.show(f"Top-1 of RRC's models and of the models without augmentation (FixedSizeCenterCrop) as the validation "
           f"crops are zoomed in further: mean and standard error over {S.seeds} seeds, each averaged over "
           f"{S.test_seeds} draw{'s' * (S.test_seeds > 1)} of the zoom. Look at how far each curve falls from zoom 1 "
           "(the central crop) to the largest zoom.")

# %% [markdown]
# ## Paper vs this run

# %%
evidence = R.report_b1(run, S, ev, iou, hurt, curve, helped)
run.claims_table()

# %%
results.glue(R.b1_numbers(S, ev, evidence))

# %% [markdown]
# ## What the results say
#
# The paper's models see ImageNet photographs for 150 epochs. This run's see {glue:md}`dataset` at
# {glue:text}`size` px: {glue:text}`n_train:,` images for {glue:text}`epochs` epochs, {glue:text}`seeds` seeds a
# method. A crop can only help a model that overfits without it, so every crop claim carries that regime as its
# premise, a gate decided before the rest: the model without augmentation must score more than
# {glue:text}`overfit_gap:g` points higher on its training images than on the test images (the paper's crops gain
# that much over no augmentation); where it does not, the claim is not decided. Here it reaches
# {glue:text}`none_train:.1f` % on its training images and {glue:text}`none_test:.1f` % on the test images, a gap
# of {glue:text}`gap:.1f` points ({glue:md}`gap_span`). {glue:md}`regime_sentence` RRC's gain over no
# augmentation, seed by seed, is {glue:text}`rrc_gain:+.1f` points ({glue:md}`rrc_span`). {glue:md}`rrc_sentence`
# {glue:md}`open_sentence`
#
# The data decide what a crop can teach. On the 28 px Fashion-MNIST garments (`-p dataset=fashion_mnist_color`),
# centred and filling the frame, a random crop only shows positions and sizes that no test image has, and every
# crop method lowers top-1 there. Chapter B7 trains one network on scenes of growing variation and measures how
# RRC's gain grows with it. Table A2 with a few classes and seeds is a coarse version of the paper's 1,000
# classes and 25 comparisons. The `gpu` profile reruns this chapter on CIFAR-10, and `paper` on ImageNet
# (`-p root=/path/to/imagenet`, with `-p executor=slurm` on a cluster).

# %%
run.close()
