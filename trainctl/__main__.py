"""`python -m trainctl ...`: see trainctl/cli.py."""

import sys

from trainctl.cli import main

sys.exit(main())
