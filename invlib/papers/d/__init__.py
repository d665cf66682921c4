"""Paper D, InstaAug (Miao et al., 2023): learning instance-specific augmentations."""
