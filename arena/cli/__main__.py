"""`python -m arena.cli` runs the `arena` command."""

import sys

from arena.cli import main

sys.exit(main())
