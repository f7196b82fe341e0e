"""Search strategies: cross-validation scoring shared by all CV-based methods, and optimisers."""
