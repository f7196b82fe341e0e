"""Leave-one-out estimates from one trained SVM, and the brute-force reference."""

from svmtune.loo.brute import brute_force_lgo, brute_force_loo

__all__ = ["brute_force_lgo", "brute_force_loo"]
