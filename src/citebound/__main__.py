"""`python -m citebound` runs the CLI."""

from citebound.cli import main

main()
