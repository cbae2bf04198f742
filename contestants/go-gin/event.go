package main

// The event of the dummy and event-log scenarios (docs/scenarios.md): parsing
// and validation with encoding/json, every error message naming the field at
// fault. The body is walked with json.Decoder's token stream rather than
// decoded into a struct, because a struct decode silently keeps the last of
// two equal keys, ignores bytes after the object only when asked, and turns a
// string timestamp into a type error that names the Go type instead of the
// rule.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	maxNameLen     = 64
	timestampLimit = uint64(1) << 53
	defaultSource  = "unknown"
	defaultValue   = 1.0
	nameCharset    = "A-Z a-z 0-9 _ . : -"
	nameRule       = "a string of 1-64 characters from A-Z a-z 0-9 _ . : -"
	valueRule      = "a finite number"
	timestampRule  = "an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53"
	example        = `send an object like {"type": "page_view"}`
)

// Event is a validated event. HasTimestamp is false when the body had none
// (or null): the server stamps it.
type Event struct {
	Type         string
	Source       string
	Value        float64
	TimestampMs  uint64
	HasTimestamp bool
}

// BadEvent is why a body is not a valid event; its message goes into the
// {"error": ...} of a 400 as it is.
type BadEvent struct{ msg string }

func (e *BadEvent) Error() string { return e.msg }

func bad(format string, args ...interface{}) *BadEvent {
	return &BadEvent{fmt.Sprintf(format, args...)}
}

func malformed(err error) *BadEvent {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return bad("the body is not valid JSON (%v); %s", err, example)
}

// ParseEvent parses and validates a request body.
func ParseEvent(body []byte) (Event, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return Event{}, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		// Say what it is when it is JSON at all, else why it is not JSON.
		var v interface{}
		if err := json.Unmarshal(body, &v); err != nil {
			return Event{}, malformed(err)
		}
		return Event{}, bad(`the body must be a JSON object like {"type": "page_view"}, not %s`, jsonKind(bytes.TrimSpace(body)))
	}
	var typ, source, value, timestamp json.RawMessage
	var others []string // unknown keys seen, to catch them twice as well
	duplicate := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Event{}, malformed(err)
		}
		key, _ := tok.(string) // the decoder only gives strings in key position
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Event{}, malformed(err)
		}
		var slot *json.RawMessage
		switch key {
		case "type":
			slot = &typ
		case "source":
			slot = &source
		case "value":
			slot = &value
		case "timestamp":
			slot = &timestamp
		default:
			for _, k := range others {
				if k == key && duplicate == "" {
					duplicate = key
				}
			}
			others = append(others, key)
			continue
		}
		if *slot != nil {
			if duplicate == "" {
				duplicate = key
			}
			continue
		}
		*slot = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return Event{}, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Event{}, bad("the body is not valid JSON (data after the object at byte %d); %s", dec.InputOffset(), example)
	}
	if duplicate != "" {
		return Event{}, bad("field `%s` appears more than once; send it once", duplicate)
	}

	var ev Event
	if typ == nil {
		return Event{}, bad("field `type` is required: %s", nameRule)
	}
	if ev.Type, err = name("type", typ); err != nil {
		return Event{}, err
	}
	ev.Source = defaultSource
	if !isNull(source) {
		if ev.Source, err = name("source", source); err != nil {
			return Event{}, err
		}
	}
	ev.Value = defaultValue
	if !isNull(value) {
		if ev.Value, err = number(value); err != nil {
			return Event{}, err
		}
	}
	if !isNull(timestamp) {
		if ev.TimestampMs, err = millis(timestamp); err != nil {
			return Event{}, err
		}
		ev.HasTimestamp = true
	}
	return ev, nil
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(raw) == "null"
}

func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// jsonKind is the JSON type of a raw value, with an article, for messages.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNameByte(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
		b == '_' || b == '.' || b == ':' || b == '-'
}

// name validates a `type` or `source`.
func name(field string, raw json.RawMessage) (string, error) {
	if raw[0] != '"' {
		return "", bad("field `%s` must be %s, not %s", field, nameRule, jsonKind(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", malformed(err)
	}
	length := 0
	for i, r := range s {
		if r >= utf8.RuneSelf || !isNameByte(byte(r)) {
			return "", bad("field `%s` may only contain %s; found %q at character %d", field, nameCharset, r, utf8.RuneCountInString(s[:i]))
		}
		length++
	}
	if length == 0 || length > maxNameLen {
		return "", bad("field `%s` must be 1-64 characters long, got %d", field, length)
	}
	return s, nil
}

// number validates a `value`.
func number(raw json.RawMessage) (float64, error) {
	if !isNumber(raw) {
		return 0, bad("field `value` must be %s, not %s", valueRule, jsonKind(raw))
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, malformed(err)
	}
	if v > maxFloat || v < -maxFloat { // ±Inf: the number does not fit a double
		return 0, bad("field `value` must be a finite number, got %s", raw)
	}
	return v, nil
}

const maxFloat = 1.7976931348623157e308

// millis validates a `timestamp`.
func millis(raw json.RawMessage) (uint64, error) {
	if !isNumber(raw) {
		return 0, bad("field `timestamp` must be %s, not %s", timestampRule, jsonKind(raw))
	}
	text := string(raw)
	if strings.ContainsAny(text, ".eE") {
		return 0, bad("field `timestamp` must be an integer number of milliseconds, got %s", text)
	}
	if strings.HasPrefix(text, "-") {
		// "-0" is zero, every other negative is out of range.
		if strings.Trim(text[1:], "0") == "" {
			return 0, nil
		}
		return 0, bad("field `timestamp` must be in 0 <= t < 2^53 (9007199254740992), got %s", text)
	}
	t, err := strconv.ParseUint(text, 10, 64)
	if err != nil || t >= timestampLimit {
		return 0, bad("field `timestamp` must be in 0 <= t < 2^53 (9007199254740992), got %s", text)
	}
	return t, nil
}

// isJSONContentType: application/json, any case, optionally with parameters.
func isJSONContentType(v string) bool {
	if v == "application/json" {
		return true
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.EqualFold(strings.TrimSpace(v), "application/json")
}
