"""The service model's Java patterns, translated for `regex`: each kind of escape and character, as text.

tests/compiler/sdk/test_service_model.py checks what the translated patterns match; these pin the translation of each
case `java_pattern_to_python` tells apart (surrogate pairs and lone halves, POSIX and Unicode properties,
characters inside and outside classes, escapes cut short), so a rewrite of it cannot drift.
"""

from __future__ import annotations

import pytest

from compiler.sdk.service_model import compiled_pattern, java_pattern_to_python

JAVA_DOT = "[^\\n\\r\\x85\\u2028\\u2029]"


@pytest.mark.parametrize(("java", "python"), [
    ("\\uD83D\\uDE00", "\\U0001F600"),  # a surrogate pair is one code point
    ("\\ud83d\\ude00", "\\U0001F600"),
    ("\\uD83D", "\\uD83D"),  # a lone half stays a code unit
    ("\\uD83D\\u0041", "\\uD83D\\u0041"),  # a high half before something that is not a low half
    ("\\uDE00\\uD83D", "\\uDE00\\uD83D"),  # low then high is no pair
    ("\\uD83D\\uDE0", "\\uD83D\\uDE0"),  # the low half cut short
    ("\\u00e9", "\\u00E9"),
    ("\\u12", "\\u12"),  # too few digits: left for regex to refuse
    ("\\uGGGG", "\\uGGGG"),
    ("\\p{Alnum}", "[a-zA-Z0-9]"),
    ("\\P{Alnum}", "[^a-zA-Z0-9]"),
    ("\\p{XDigit}+", "[0-9a-fA-F]+"),
    ("\\p{L}\\P{Lu}", "\\p{L}\\P{Lu}"),  # Unicode properties mean the same to regex
    ("\\pL", "\\pL"),
    ("\\d\\D\\w\\W", "[0-9][^0-9][a-zA-Z0-9_][^a-zA-Z0-9_]"),
    ("[\\s]", "[[ \\t\\n\\x0B\\f\\r]]"),
    ("\\.\\-", "\\.\\-"),
    ("a\\", "a\\"),  # a trailing backslash is kept as it is
    (".", JAVA_DOT),
    ("[.]", "[.]"),
    ("]", "]"),  # a stray ] outside a class
    ("a--b|c~~d", "a--b|c~~d"),  # only inside a class are these escaped
    ("[a--b]", "[a-\\-b]"),
    ("[a|~]", "[a\\|\\~]"),
    ("[[a]~]", "[[a]\\~]"),  # still inside the outer class after the inner one closes
    ("[\\]~]", "[\\]\\~]"),  # an escaped ] does not close the class
])
def test_translation(java: str, python: str) -> None:
    assert java_pattern_to_python(java) == python


def test_a_property_without_its_closing_brace_is_refused() -> None:
    with pytest.raises(ValueError):
        java_pattern_to_python("\\p{Alnum")


@pytest.mark.parametrize(("java", "text", "java_matches"), [
    ("\\uD83D\\uDE00", "\U0001F600", True),
    ("[\\uD83D\\uDE00-\\uD83D\\uDE4F]+", "\U0001F600\U0001F64F", True),
    ("\\P{Alnum}+", "-_ é", True),
    ("\\P{Alnum}+", "a", False),
])
def test_translated_patterns_match_as_java_does(java: str, text: str, java_matches: bool) -> None:
    assert bool(compiled_pattern(java).fullmatch(text)) is java_matches
