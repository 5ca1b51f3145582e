"""The notebook layer: widgets with plain-text twins, plots, and the exercises' checks (one module per lesson)."""
