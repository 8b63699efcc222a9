"""The team store's twin of `store/claim_key_schema.py` (docs/PROTOCOL-1.2.md section 5a)."""

from __future__ import annotations

CLAIM_KEY: tuple[str, ...] = ('ALTER TABLE tasks ADD COLUMN claim_key TEXT COLLATE "C"',)
