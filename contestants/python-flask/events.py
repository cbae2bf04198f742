"""The event of stackbench's `event-log` and `dummy` scenarios: parsing and
validation of a request body as docs/scenarios.md says, with the messages of
the Rust reference contestant (every 400 names the field at fault).

| field       | required | rule                                                 |
|-------------|----------|------------------------------------------------------|
| `type`      | yes      | string, 1-64 chars of [A-Za-z0-9_.:-]                |
| `source`    | no       | same rule; default "unknown"                         |
| `value`     | no       | finite JSON number; default 1.0                      |
| `timestamp` | no       | integer ms since the Unix epoch, 0 <= t < 2^53       |

Unknown keys are ignored (whatever their value, duplicates included); an
explicit null for an optional field takes its default; one of the four fields
given twice is refused (JSON parsers disagree on which one wins). The body
must be UTF-8 JSON with nothing but whitespace after the object.

python-flask and python-fastapi carry this file as two identical copies;
crates/cli/tests/contestant_copies.rs keeps them so."""

import json
import math
import re
import time

NAME_CHARSET = "A-Z a-z 0-9 _ . : -"
NAME_RULE = "a string of 1-64 characters from A-Z a-z 0-9 _ . : -"
RULES = {
    "type": NAME_RULE,
    "source": NAME_RULE,
    "value": "a finite number",
    "timestamp": "an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53",
}
TIMESTAMP_LIMIT = 2 ** 53
DEFAULT_SOURCE = "unknown"
DEFAULT_VALUE = 1.0
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.:-]")
EXAMPLE = 'send an object like {"type": "page_view"}'


class BadEvent(Exception):
    """A body that is not a valid event; the message goes into the 400."""


class _Pairs(list):
    """A JSON object as its (key, value) pairs, in order, duplicates kept."""


def _reject_constant(name):
    raise BadEvent(f"the body is not valid JSON ({name} is not a JSON value); {EXAMPLE}")


def _kind(v):
    """The JSON type of a decoded value, for messages."""
    if isinstance(v, _Pairs):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, bool):
        return "a boolean"
    if v is None:
        return "null"
    return "a number"


def _name(field, v):
    if not isinstance(v, str):
        raise BadEvent(f"field `{field}` must be {NAME_RULE}, not {_kind(v)}")
    if _NAME.fullmatch(v):
        return v
    for position, ch in enumerate(v):
        if not _NAME_CHAR.fullmatch(ch):
            raise BadEvent(f"field `{field}` may only contain {NAME_CHARSET}; found {ch!r} at character {position}")
    raise BadEvent(f"field `{field}` must be 1-64 characters long, got {len(v)}")


def _value(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadEvent(f"field `value` must be a finite number, not {_kind(v)}")
    try:
        f = float(v)
    except OverflowError:  # an integer literal beyond a double's range
        f = math.inf
    if not math.isfinite(f):
        raise BadEvent(f"field `value` must be a finite number, got {v if isinstance(v, float) else 'an integer beyond a double'}")
    return f


def _timestamp(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BadEvent(f"field `timestamp` must be {RULES['timestamp']}, not {_kind(v)}")
    if isinstance(v, float):
        raise BadEvent(f"field `timestamp` must be an integer number of milliseconds, got {v!r}")
    if not 0 <= v < TIMESTAMP_LIMIT:
        raise BadEvent(f"field `timestamp` must be in 0 <= t < 2^53 (9007199254740992), got {v}")
    return v


def parse_event(body):
    """(type, source, value, timestamp_ms) of a valid body (bytes); BadEvent otherwise.
    A missing timestamp is the server's time."""
    try:
        doc = json.loads(body.decode("utf-8"), object_pairs_hook=_Pairs, parse_constant=_reject_constant)
    except UnicodeDecodeError as e:
        raise BadEvent(f"the body is not valid JSON (it is not UTF-8: byte {e.start} is invalid); {EXAMPLE}") from None
    except ValueError as e:  # json.JSONDecodeError, and an integer of more than 4300 digits
        raise BadEvent(f"the body is not valid JSON ({e}); {EXAMPLE}") from None
    if not isinstance(doc, _Pairs):
        raise BadEvent(f'the body must be a JSON object like {{"type": "page_view"}}, not {_kind(doc)}')
    fields = {}
    for key, v in doc:
        if key in RULES:
            if key in fields:
                raise BadEvent(f"field `{key}` appears more than once; send it once")
            fields[key] = v
    if "type" not in fields:
        raise BadEvent(f"field `type` is required: {NAME_RULE}")
    kind = _name("type", fields["type"])
    source = fields.get("source")
    source = DEFAULT_SOURCE if source is None else _name("source", source)
    value = fields.get("value")
    value = DEFAULT_VALUE if value is None else _value(value)
    ts = fields.get("timestamp")
    ts = time.time_ns() // 1_000_000 if ts is None else _timestamp(ts)
    return kind, source, value, ts
