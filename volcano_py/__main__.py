import sys

from volcano_py.cli.main import main

sys.exit(main())
