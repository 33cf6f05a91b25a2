"""The games."""
