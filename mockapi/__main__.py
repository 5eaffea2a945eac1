import sys

from mockapi.cli import main

sys.exit(main())
