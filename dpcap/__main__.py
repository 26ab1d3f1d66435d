"""``python -m dpcap``: the command line (see :mod:`dpcap.cli`)."""

import sys

from dpcap.cli import main

sys.exit(main())
