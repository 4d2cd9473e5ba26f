import sys

from kforge_core.cli import main

sys.exit(main())
