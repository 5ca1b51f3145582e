"""The notebook layer: widgets with plain-text twins, and plots."""
