"""Test-suite settings: every compile verifies its lowered module (mtia_xdsl.pipeline.verify_ir)."""

import os

os.environ.setdefault("MTIA_VERIFY_IR", "1")
