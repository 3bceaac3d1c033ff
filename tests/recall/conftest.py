"""The memory-tree store of tests/maintenance, for recall's tests of summaries, profiles and topics."""

from tests.maintenance.conftest import built, tree_service  # noqa: F401  (fixtures)
