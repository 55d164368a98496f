"""Entry point of the standalone build: the same ``attention-lab`` command as the pip install."""

import sys

from app.main import main

if __name__ == "__main__":
    sys.exit(main())
