"""A team memory: `recall serve` on PostgreSQL (``server``) and `recall sync` from a machine (``client``).

See adr/0024 (the PostgreSQL backend) and adr/0025 (sync and its conflict rule).
"""
