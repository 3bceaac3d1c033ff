"""`python -m mnemoflow.cli ...` runs the command too."""

from mnemoflow.cli.app import main

main()
