"""`python -m trainctl ...`: see training/cli.py."""

import sys

from trainctl.cli import main

sys.exit(main())
