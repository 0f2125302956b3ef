"""Data helpers (filled below)."""
