"""``python -m dolb``: the ``dolb`` command."""

import sys

from dolb.cli import main

sys.exit(main())
