"""Canonicalizations per dialect (folding and cleanup run by passes and by the frontend)."""
