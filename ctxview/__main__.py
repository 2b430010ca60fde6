from __future__ import annotations

from ctxview.cli import main

raise SystemExit(main())
