"""An out-of-tree compiler embedding mtia_xdsl through its public API only (see README.md here)."""
