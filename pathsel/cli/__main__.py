"""``python -m pathsel.cli``: the ``pathsel`` command without its console script."""

import sys

from .entry import main

sys.exit(main())
