"""Helpers with more than one user across the package's layers."""
