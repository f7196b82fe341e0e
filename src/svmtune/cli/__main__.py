"""``python -m svmtune.cli``: the ``svmtune`` command."""

from svmtune.cli import main

main()
