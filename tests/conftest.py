"""Test-wide settings: stay offline and quiet."""

import os

import pytest

from tests import moto_fixes

os.environ.setdefault("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")

# Property tests explore new random inputs on developers' machines; in CI (CI=true) they replay a fixed,
# derandomized set so a green or red run means the same thing on every retry.
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")

moto_fixes.install()  # where moto's Step Functions interpreter differs from Step Functions (tests/moto_fixes.py)


@pytest.fixture(scope="session")
def synthesized_app(tmp_path_factory: pytest.TempPathFactory):
    """The whole app synthesized once per session (see tests/synth.py)."""
    from tests.synth import synthesize

    return synthesize(tmp_path_factory.mktemp("cdk.out"))



# The longest test files first: pytest-xdist (scripts/test.sh: `-n auto --dist loadfile`) hands out whole files in
# collection order, so a long file collected last would run alone at the end while the other worker idles.
_LONGEST_FIRST = ("tests/trainer/test_training.py", "tests/platform/test_checks.py", "tests/trainer/test_local.py",
                  "tests/compiler/state_machine/test_execution.py", "tests/compiler/compilation/test_sdk_parity.py",
                  "tests/cli/review/test_review.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return _LONGEST_FIRST.index(path) if path in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within each file, and of the other files, is kept
