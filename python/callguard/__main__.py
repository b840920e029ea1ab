"""python -m callguard ...: the callguard command (same as the console script)."""
import sys

from ._cli import main

sys.exit(main())
