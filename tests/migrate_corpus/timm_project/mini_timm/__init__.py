"""A package of helpers beside the training script, as timm's utils are."""
