"""One module per benchmark suite, each exposing ``SUITE``."""
