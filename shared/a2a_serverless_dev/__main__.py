"""``python -m a2a_serverless_dev dev``: the same as the ``a2a-serverless`` console script."""

from .cli import main

raise SystemExit(main())
