"""`make bench`: coordd's benchmark suite (not tests; nothing here asserts a timing)."""
