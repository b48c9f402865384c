"""Bot bundles and launchers: bwrap (default on Linux), docker, and local (unsafe, dev only)."""
