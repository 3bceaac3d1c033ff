"""`python -m mnemoflow.cli ...`: the `mnemoflow` command without the console script."""

from mnemoflow.cli import main

main()
