"""Advanced indexing and the functions built on it (owner routing, take/put/nonzero, where)."""
