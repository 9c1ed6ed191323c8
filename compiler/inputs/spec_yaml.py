"""Strict YAML for workload specs (and acknowledged-changes.yaml): what a reader sees is what the compiler gets.

PyYAML's safe loader reads YAML 1.1, where `NO` is false, `010` is 8 and `1:00:00` is 3600; it keeps the last
of two equal keys without a word; it expands aliases (a few lines can expand to gigabytes) and accepts tags such
as `!!binary` and dates. A spec is reviewed by people, so this loader reads only the plain JSON-like subset:

- scalars by the YAML 1.2 core schema: `true`/`false`, `null`/`~`, decimal, `0o` and `0x` integers, floats
  (`.inf`/`.nan` are read, then refused by the spec checks that need finite numbers); anything else is a string;
- mappings with string keys, each key once;
- no anchors, aliases or explicit tags, and a size limit, so nothing expands;
- numbers of at most `MAX_NUMBER_CHARS` characters, and text without the characters YAML refuses written as is
  (control characters, lone UTF-16 surrogates), even when an escape such as `"\\0"` spells them.

Every refusal names the line and column and says what to write instead.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_SPEC_BYTES = 256 * 1024  # a workload spec is a page of settings; anything larger is a mistake or an attack
MAX_DEPTH = 32
# A number literal longer than this is a mistake (no setting takes one), and converting one of thousands of digits
# fails in Python itself (sys.get_int_max_str_digits): refuse it with the place instead.
MAX_NUMBER_CHARS = 100

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_STR = "tag:yaml.org,2002:str"


class SpecYamlError(ValueError):
    """A spec file that is not the plain YAML workload specs are written in; the message says where and why."""


def _where(node: Node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, and refusals instead of aliases, tags and duplicate keys."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # replaced below: no YAML 1.1 resolution at all

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.AliasEvent):
            raise SpecYamlError(f"line {line}: aliases (*{event.anchor}) are not allowed; write the "
                                "value out")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise SpecYamlError(f"line {line}: anchors (&{anchor}) are not allowed; write each value "
                                "out")
        tag = getattr(event, "tag", None)
        implicit = getattr(event, "implicit", True)
        explicit = tag is not None and tag != "!" and not (implicit is True or (isinstance(implicit, tuple) and any(implicit)))
        if explicit:
            raise SpecYamlError(f"line {line}: the tag {tag} is not allowed; write plain values "
                                "(quote text that should stay text)")
        if self._depth_exceeded():
            raise SpecYamlError(f"line {line}: nested more than {MAX_DEPTH} levels deep")
        return super().compose_node(parent, index)

    def _depth_exceeded(self) -> bool:
        return len(getattr(self, "states", ())) > MAX_DEPTH * 4

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, MappingNode):
            raise SpecYamlError(f"{_where(node)}: expected a mapping")
        seen: dict[str, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise SpecYamlError(f"{_where(key_node)}: merge keys (<<) are not allowed")
            if not isinstance(key_node, ScalarNode):
                kind = "a list" if isinstance(key_node, SequenceNode) else "a mapping"
                raise SpecYamlError(f"{_where(key_node)}: keys must be text, not {kind}; write a name before the ':'")
            if key_node.tag != _STR:
                raise SpecYamlError(f"{_where(key_node)}: keys must be text; {key_node.value!r} is read as "
                                    f"{key_node.tag.rsplit(':', 1)[-1]} (quote it if it is meant as a name)")
            if key_node.value in seen:
                raise SpecYamlError(f"{_where(key_node)}: key {key_node.value!r} appears twice in the same mapping "
                                    f"(first at {_where(seen[key_node.value])}); keep one")
            seen[key_node.value] = key_node
        return super().construct_mapping(node, deep=True)

    def construct_sequence(self, node: SequenceNode, deep: bool = False) -> list[Any]:
        return super().construct_sequence(node, deep=True)

    def construct_scalar(self, node: Node) -> Any:
        value = super().construct_scalar(node)  # type: ignore[arg-type]
        if isinstance(value, str):
            bad = yaml.reader.Reader.NON_PRINTABLE.search(value)
            if bad is not None:  # only an escape ("\0", "\x07", "\ud800") gets here: YAML refuses them written as is
                raise SpecYamlError(f"{_where(node)}: the text holds {bad.group()!a}, a control character or half "
                                    "of a UTF-16 pair, which YAML does not allow written as is and no setting takes; "
                                    "remove the escape")
        return value


def _number_text(loader: _StrictLoader, node: ScalarNode) -> str:
    text = str(loader.construct_scalar(node))
    if len(text) > MAX_NUMBER_CHARS:
        raise SpecYamlError(f"{_where(node)}: a number of {len(text)} characters; numbers in a spec are at most "
                            f"{MAX_NUMBER_CHARS} (quote it if it is meant as text)")
    return text


_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])


def _construct_bool(loader: _StrictLoader, node: ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


def _construct_int(loader: _StrictLoader, node: ScalarNode) -> int:
    text = _number_text(loader, node)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body.startswith("0o"):
        return sign * int(body[2:], 8)
    if body.startswith("0x"):
        return sign * int(body[2:], 16)
    return sign * int(body, 10)  # YAML 1.2: 010 is ten, not eight


def _construct_float(loader: _StrictLoader, node: ScalarNode) -> float:
    text = _number_text(loader, node).lower()
    if text.endswith(".nan"):
        return float("nan")
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float(text)


_StrictLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def load_spec_text(text: str) -> Any:
    """The one document of a spec file, read strictly; raises SpecYamlError with the place and the fix."""
    if len(text.encode("utf-8", errors="replace")) > MAX_SPEC_BYTES:
        raise SpecYamlError(f"is larger than {MAX_SPEC_BYTES // 1024} KiB; a workload spec is a page of settings")
    try:
        documents = list(yaml.load_all(text, Loader=_StrictLoader))
    except SpecYamlError:
        raise
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow written as is (NUL, a control)
        line = text[:exc.position].count("\n") + 1
        character = chr(exc.character) if isinstance(exc.character, int) else str(exc.character)
        raise SpecYamlError(f"line {line}: holds the character {character!a}, which YAML does not allow (a "
                            "control character); remove it") from None
    except yaml.YAMLError as exc:
        tabs = "; indent with spaces: YAML does not allow tabs there" if "'\\t'" in str(exc) else ""
        raise SpecYamlError(f"is not valid YAML: {exc}{tabs}") from None
    except RecursionError:
        raise SpecYamlError(f"is nested more than {MAX_DEPTH} levels deep") from None
    if len(documents) != 1:
        raise SpecYamlError(f"holds {len(documents)} YAML documents; a spec file holds exactly one")
    return documents[0]
