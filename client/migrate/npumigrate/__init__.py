"""The migration report of `npu migrate` (see npu_migrate.py)."""
