"""``python -m ctxrelay``: the ``ctxrelay`` command without its console script."""

import sys

from ctxrelay.cli import main

if __name__ == "__main__":
    sys.exit(main())
