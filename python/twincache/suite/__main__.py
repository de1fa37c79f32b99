"""python -m twincache.suite: the twincache-suite command line (cli.main)."""
import sys

from .cli import main

sys.exit(main())
