"""A spec's `tags`, read from either shape: the shape first, then the count, then each tag on its own."""

from __future__ import annotations

from typing import Any

from compiler.inputs.reader import Findings, Reader
from compiler.inputs.spec.values import PLATFORM_TAGS, read_tags
from compiler.sdk.limits import limits


def read(tags: Any) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The tags kept, and (field, message) of each problem in the order reported."""
    findings = Findings("demo.yaml")
    kept = read_tags(Reader({"tags": tags}, findings))
    return kept, [(p.field, p.message) for p in findings.problems]


def test_no_tags_and_both_shapes() -> None:
    assert read_tags(Reader({}, Findings("demo.yaml"))) == {}
    assert read({"team": "ml", "run": 7, "note": ""}) == ({"team": "ml", "run": "7", "note": ""}, [])
    assert read([{"Key": "team", "Value": "ml"}]) == ({"team": "ml"}, [])


def test_a_list_tag_is_checked_like_a_mapping_one() -> None:
    """The list shape keeps its values as written: a number there is refused, not turned into text."""
    kept, found = read([{"Key": "team", "Value": "ml"}, {"Key": "run", "Value": 7}])
    assert kept == {"team": "ml"}
    assert [field for field, _ in found] == ["tags.run"]


def test_a_tag_that_is_neither_shape_is_refused() -> None:
    assert read("team=ml") == ({}, [("tags", "must be a mapping of tag keys to values (or the SDK's [{Key, Value}] list)")])


def test_a_key_that_is_not_text_is_named() -> None:
    kept, [(field, message)] = read({7: "seven", "team": "ml"})
    assert kept == {"team": "ml"}
    assert (field, message.split(" letters")[0]) == ("tags.7", f"tag keys are 1-{limits().tag_key_max}")


def test_too_many_tags_comes_before_each_tags_own_problem() -> None:
    allowed = limits().tags_max - PLATFORM_TAGS
    tags: dict[str, Any] = {f"k{i}": "v" for i in range(allowed)}
    tags["aws:owner"] = "me"
    kept, found = read(tags)
    assert [field for field, _ in found] == ["tags", "tags.aws:owner"]
    assert len(kept) == allowed
