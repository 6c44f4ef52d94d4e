"""Word sets and association tests: specification, registry, file loaders."""

from ._library import describe_test
from ._ngroup import NGroupTest, as_ngroup_tests, load_ngroup_tests
from ._registry import (
    as_test,
    as_tests,
    builtin_metadata,
    get_test,
    list_tests,
    load_tests_from_file,
    register_test,
    resolve_tests,
)
from ._spec import BIAS_TYPES, AssociationTest, WordSet

__all__ = [
    "AssociationTest",
    "WordSet",
    "BIAS_TYPES",
    "get_test",
    "list_tests",
    "register_test",
    "resolve_tests",
    "as_test",
    "as_tests",
    "load_tests_from_file",
    "builtin_metadata",
    "describe_test",
    "NGroupTest",
    "as_ngroup_tests",
    "load_ngroup_tests",
]
