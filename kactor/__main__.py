import sys

from kactor.cli import main

sys.exit(main())
