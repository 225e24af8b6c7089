"""`python -m mlab.cli`: the `mlab` command."""
import sys

from mlab.cli import main

sys.exit(main())
