"""Helpers shared by several test suites (importable as ``testkit``: pytest puts ``tests/`` on the path)."""
