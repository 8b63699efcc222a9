"""SQLite storage: schema, pure SQL functions, the writer thread and the reader pool."""
