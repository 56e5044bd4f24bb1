"""SQLite backends: the embedded default."""
