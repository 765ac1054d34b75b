"""YAML configs checked against (nested) dataclasses, with `--set dotted.key=value` overrides.

    cfg = load_config("configs/luong.yaml", ExperimentConfig, ["train.lr=5e-4"])
    config_to_dict(cfg)                       # plain JSON-able dict, for checkpoints
    config_from_dict(d, ExperimentConfig)     # and back

The dataclass is the schema: its type hints say what each key accepts (int, float, bool, str,
Path, Literal[...], X | None, list[X], tuple[...], dict[str, X], nested dataclasses), and a
field's `metadata["check"]` (a function that raises ValueError) checks a value further, e.g. a
score name. Unknown keys, wrong types, failed checks and missing required keys are ConfigErrors
that name the file and the full dotted key, with the closest valid key as a suggestion. A number
must be finite: NaN and infinity (YAML's .nan and .inf, or nan, inf, 1e999) are refused for every
key, since no setting means "unbounded" by them and a NaN learning rate trains nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import os
import re
import types
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

import yaml

from attnlab.errors import ConfigError

T = TypeVar("T")

# PyYAML follows YAML 1.1, where `5e-4` (no dot) is a string; number fields accept such strings.
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(inf|nan)", re.IGNORECASE)


def load_config(source: str | os.PathLike | Mapping, cls: type[T],
                overrides: Sequence[str] = ()) -> T:
    """Read a YAML file (or take a dict), apply `key=value` overrides, and build `cls`."""
    if isinstance(source, Mapping):
        origin, data = "config", copy.deepcopy(dict(source))   # overrides must not leak
    else:
        origin, data = str(source), read_yaml(Path(source))
    for override in overrides:
        _apply_override(data, override, cls)
    return config_from_dict(data, cls, origin=origin)


def _bounded(allowed, wanted: str) -> dict:
    def check(value):
        if value is None:
            return
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        if not allowed(value):
            raise ValueError(f"must be {wanted}, got {value!r}")

    return {"check": check}


def positive() -> dict:
    """Field metadata: the value (when not None) must be > 0, checked as the YAML loads, e.g.
    `hidden_dim: int = field(default=512, metadata=positive())`."""
    return _bounded(lambda value: value > 0, "positive")


def at_least(minimum: float) -> dict:
    """Field metadata: the value (when not None) must be >= minimum."""
    return _bounded(lambda value: value >= minimum, f">= {minimum}")


def fraction() -> dict:
    """Field metadata: a value in [0, 1) (a dropout rate)."""
    return _bounded(lambda value: 0 <= value < 1, "in [0, 1)")


def between(least: float, most: float) -> dict:
    """Field metadata: a value from `least` to `most` (e.g. decode.alpha, 0 to 10)."""
    return _bounded(lambda value: least <= value <= most, f"from {least:g} to {most:g}")


def config_from_dict(data: Mapping, cls: type[T], *, origin: str = "config") -> T:
    """Build the dataclass `cls` from plain data; errors name `origin` (a file, usually)."""
    return _convert(data, cls, "", origin)


def config_to_dict(obj: Any) -> Any:
    """A dataclass (or container of them) as plain JSON-able data: tuples and Paths become
    lists and strings, so `config_from_dict(config_to_dict(c), type(c)) == c`."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: config_to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(key): config_to_dict(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [config_to_dict(value) for value in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (PyYAML silently keeps the last one)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> dict:
    """A YAML config file as a mapping (duplicate keys refused); one ConfigError sentence
    naming the file and line when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {path}: {error}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, "
                          f"got {type(data).__name__}")
    return data


def _apply_override(data: dict, override: str, cls: type) -> None:
    """Set `a.b.c=value` in the nested dict, checking the key and value against `cls` first,
    so that a mistake is reported as the override's and not the file's."""
    key, sep, text = override.partition("=")
    key = key.strip()
    # Shown escaped when it holds a newline or other control character: one line per error.
    origin = f"--set {override if override.isprintable() else repr(override)[1:-1]}"
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set expects dotted.key=value, got {override!r}")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{origin}: the value is not valid YAML: {problem}") from None
    _convert(value, _type_at(cls, key, origin), key, origin)
    *parents, last = key.split(".")
    node = data
    for depth, part in enumerate(parents):
        if node.get(part) is None:
            node[part] = {}
        if not isinstance(node[part], dict):
            where = ".".join(parents[: depth + 1])
            raise ConfigError(f"{origin}: {where} is not a mapping in the config")
        node = node[part]
    node[last] = value


def _type_at(cls: Any, dotted: str, origin: str) -> Any:
    """The type hint that a dotted key has inside `cls` (through Optional and dict[str, X])."""
    hint = cls
    done: list[str] = []  # the keys walked so far
    for part in dotted.split("."):
        hint = _without_none(hint)
        if dataclasses.is_dataclass(hint):
            hints = _field_hints(hint)
            if part not in hints:
                raise ConfigError(f"{origin}: " + _unknown_key(".".join(done), part, hints))
            hint = hints[part]
        elif typing.get_origin(hint) in (dict, Mapping):
            hint = typing.get_args(hint)[1] if typing.get_args(hint) else Any
        elif hint is not Any:
            raise ConfigError(f"{origin}: {'.'.join(done)} has no sub-keys")
        done.append(part)
    return hint


def _without_none(hint: Any) -> Any:
    if _is_union(hint):
        rest = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return hint


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _field_hints(cls: Any) -> dict[str, Any]:
    """The init fields' type hints of the dataclass `cls`."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def did_you_mean(value: Any, options: Collection[str]) -> str:
    """"; did you mean 'bahdanau'?" when `value` is a string close to one of `options`, else
    "": the suggestion every choice among names (a task, a decoder kind) ends with."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, list(options), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unknown_key(prefix: str, name: str, valid: Collection[str]) -> str:
    full = f"{prefix}.{name}" if prefix else name
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    # Abbreviations: 'learning_rate' (or a misspelling of it) for 'lr'.
    close = close or [key for key in valid if key == "".join(w[:1] for w in name.split("_"))]
    if close:
        suggestion = f"{prefix}.{close[0]}" if prefix else close[0]
        return f"unknown key {full!r}; did you mean {suggestion!r}?"
    return f"unknown key {full!r}; valid keys here: {', '.join(valid)}"


def _convert(value: Any, hint: Any, key: str, origin: str) -> Any:
    """Check `value` against the type hint and return it converted (tuples, floats, Paths)."""
    name = key or "the config"
    if hint is Any or hint is object:
        return value
    if dataclasses.is_dataclass(hint):
        return _convert_dataclass(value, hint, key, origin)
    if _is_union(hint):
        return _convert_union(value, hint, key, origin)
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        if any(value == c and type(value) is type(c) for c in choices):
            return value
        listed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"{origin}: {name} must be one of {listed}; got {value!r}"
                          f"{did_you_mean(value, [c for c in choices if isinstance(c, str)])}")
    if typing.get_origin(hint) in (list, tuple, Sequence, dict, Mapping):
        return _convert_container(value, hint, key, origin)
    scalar = _convert_scalar(value, hint)
    if scalar is _INVALID:
        wanted = "a finite number" if _non_finite(value, hint) else _describe(hint)
        raise ConfigError(f"{origin}: {name} must be {wanted}, got {value!r}")
    return scalar


_INVALID = object()


def _convert_scalar(value: Any, hint: Any) -> Any:
    if hint is bool:
        return value if isinstance(value, bool) else _INVALID
    if hint in (int, float):
        number = _number(value)
        if number is None or not math.isfinite(number):
            return _INVALID
        if hint is float:
            return float(number)
        return int(number) if float(number).is_integer() else _INVALID
    if hint is str:
        return value if isinstance(value, str) else _INVALID
    if hint is type(None):
        return None if value is None else _INVALID
    if _is_path_type(hint):
        return hint(value) if isinstance(value, (str, os.PathLike)) else _INVALID
    raise TypeError(f"config type {hint!r} is not supported")


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value)
        return int(number) if number.is_integer() and re.fullmatch(r"[-+]?\d+", value) else number
    return None


def _non_finite(value: Any, *hints: Any) -> bool:
    """Whether `value` is NaN or an infinity (or a string of one) given for a number key."""
    number = _number(value)
    return (number is not None and not math.isfinite(number)
            and any(hint in (int, float) for hint in hints))


def _describe(hint: Any) -> str:
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
             type(None): "null"}
    if hint in names:
        return names[hint]
    if _is_union(hint):
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if typing.get_origin(hint) is Literal:
        return "one of " + ", ".join(repr(choice) for choice in typing.get_args(hint))
    if dataclasses.is_dataclass(hint):
        return "a mapping"
    if typing.get_origin(hint) in (list, tuple, Sequence):
        return "a list"
    if typing.get_origin(hint) in (dict, Mapping):
        return "a mapping"
    return "a path" if _is_path_type(hint) else repr(hint)


def _is_path_type(hint: Any) -> bool:
    """Whether the hint is a path class (Path): a config value given as a string becomes one."""
    return isinstance(hint, type) and issubclass(hint, os.PathLike)


def _convert_union(value: Any, hint: Any, key: str, origin: str) -> Any:
    args = typing.get_args(hint)
    if value is None and type(None) in args:
        return None
    options = [arg for arg in args if arg is not type(None)]
    structured = len(options) == 1 and (dataclasses.is_dataclass(options[0])
                                        or typing.get_origin(options[0]) is not None
                                        and typing.get_origin(options[0]) is not Literal)
    if structured:  # its own error names the inner key, which says more than "or null"
        return _convert(value, options[0], key, origin)
    for option in options:
        try:
            return _convert(value, option, key, origin)
        except ConfigError:
            continue
    wanted = _describe(hint)
    if _non_finite(value, *options):
        wanted = "a finite number" + (" or null" if type(None) in args else "")
    raise ConfigError(f"{origin}: {key or 'the config'} must be {wanted}, got {value!r}")


def _convert_container(value: Any, hint: Any, key: str, origin: str) -> Any:
    container, args = typing.get_origin(hint), typing.get_args(hint)
    if container in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{origin}: {key} must be a mapping, got {value!r}")
        value_hint = args[1] if args else Any
        return {str(k): _convert(v, value_hint, f"{key}.{k}", origin) for k, v in value.items()}
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{origin}: {key} must be a list, got {value!r}")
    if container is tuple and args and args[-1] is not Ellipsis:
        if len(value) != len(args):
            raise ConfigError(f"{origin}: {key} must be a list of {len(args)} values, "
                              f"got {len(value)}")
        hints: Sequence[Any] = args
    else:
        hints = [args[0] if args else Any] * len(value)
    items = [_convert(item, item_hint, f"{key}[{i}]", origin)
             for i, (item, item_hint) in enumerate(zip(value, hints, strict=True))]
    return tuple(items) if container is tuple else items


def _convert_dataclass(value: Any, cls: Any, key: str, origin: str) -> Any:
    if isinstance(value, cls):
        value = config_to_dict(value)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{origin}: {key or 'the config'} must be a mapping of keys, "
                          f"got {value!r}")
    hints = _field_hints(cls)
    for name in value:
        if name not in hints:
            raise ConfigError(f"{origin}: " + _unknown_key(key, str(name), list(hints)))
    missing = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in value
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        full = f"{key}.{missing[0]}" if key else missing[0]
        raise ConfigError(f"{origin}: missing required key {full!r}")
    converted = {name: _convert(item, hints[name], f"{key}.{name}" if key else name, origin)
                 for name, item in value.items()}
    _run_field_checks(cls, converted, key, origin)
    try:
        return cls(**converted)
    except ConfigError as error:  # a __post_init__ check that names its own keys
        raise ConfigError(f"{origin}: {error}") from None
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{origin}: {key or 'the config'}: {error}") from None


def _run_field_checks(cls: type, values: Mapping, key: str, origin: str) -> None:
    try:
        check_fields(cls, values, key)
    except ConfigError as error:
        raise ConfigError(f"{origin}: {error}") from None


def check_fields(cls: type, values: Mapping, key: str = "") -> None:
    """Call each field's `metadata["check"]` (e.g. a score name's) on its value in `values`;
    a ValueError it raises is a ConfigError naming the full dotted key ("decode.alpha: must be
    >= 0, got -1"). For values set past the YAML: a dataclass's replace runs no checks."""
    for f in dataclasses.fields(cls):
        check = f.metadata.get("check")
        if check is None or f.name not in values:
            continue
        try:
            check(values[f.name])
        except ValueError as error:
            full = f"{key}.{f.name}" if key else f.name
            raise ConfigError(f"{full}: {error}") from None
