"""`python -m trainctl ...`: see trainctl/cli.py."""

from trainctl.cli import run

run()
