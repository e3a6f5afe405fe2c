"""Analyses the passes share: memory access forms, CB liveness, command costs for CB sizing."""
