"""The management API (`Arena` in arena.proto) over gRPC: bots, results, live watching, challenges
and the organiser's calls. The operations themselves are plain functions (`ops_*` modules) that the
web app calls too, so that both transports enforce one set of rules (docs/security.md)."""
