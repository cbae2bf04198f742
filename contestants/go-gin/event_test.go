package main

import (
	"strings"
	"testing"
)

func TestGoodEvents(t *testing.T) {
	ev, err := ParseEvent([]byte(`{"type": "page_view", "source": "web", "value": 1.5, "timestamp": 1764460800000}`))
	if err != nil || ev.Type != "page_view" || ev.Source != "web" || ev.Value != 1.5 || !ev.HasTimestamp || ev.TimestampMs != 1764460800000 {
		t.Fatalf("got %+v, %v", ev, err)
	}
	for _, body := range []string{`{"type":"a"}`, `{"type":"a","source":null,"value":null,"timestamp":null}`, " {\"type\":\"a\"}\n"} {
		ev, err := ParseEvent([]byte(body))
		if err != nil || ev.Source != "unknown" || ev.Value != 1 || ev.HasTimestamp {
			t.Errorf("%s: got %+v, %v", body, ev, err)
		}
	}
	for _, body := range []string{
		`{"x":{"deep":[1,{"y":null}]},"type":"t","z":"\u00e9"}`,
		`{"type":"page\u005fview"}`,
		`{"type":"t","timestamp":-0}`,
		`{"type":"t","timestamp":9007199254740991}`,
		`{"type":"t","value":-1.7976931348623157e308}`,
		`{"type":"` + strings.Repeat("a", 64) + `"}`,
	} {
		if _, err := ParseEvent([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestBadEventsNameTheirField(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"a","type":"b"}`:                    "field `type` appears more than once",
		`{"type":"a","x":1,"x":2}`:                   "field `x` appears more than once",
		`{"type":"a","timestamp":"1764460800000"}`:   "field `timestamp` must be an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53, not a string",
		`{"type":"a","timestamp":1.5}`:               "field `timestamp` must be an integer",
		`{"type":"a","timestamp":1e3}`:               "field `timestamp` must be an integer",
		`{"type":"a","timestamp":-1}`:                "field `timestamp` must be in 0 <= t < 2^53",
		`{"type":"a","timestamp":9007199254740992}`:  "field `timestamp` must be in 0 <= t < 2^53",
		`{"type":"a","timestamp":true}`:              "field `timestamp` must be an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53, not a boolean",
		`{"type":"a","value":"1.5"}`:                 "field `value` must be a finite number, not a string",
		`{"type":"a","value":1e400}`:                 "field `value` must be a finite number, got 1e400",
		`{"source":"web"}`:                           "field `type` is required",
		`{"type":""}`:                                "field `type` must be 1-64 characters long, got 0",
		`{"type":"` + strings.Repeat("a", 65) + `"}`: "field `type` must be 1-64 characters long, got 65",
		`{"type":"page view!"}`:                      "field `type` may only contain A-Z a-z 0-9 _ . : -; found ' ' at character 4",
		`{"type":"ok","source":"wé"}`:                "field `source` may only contain A-Z a-z 0-9 _ . : -; found 'é' at character 1",
		`{"type":null}`:                              "field `type` must be a string of 1-64 characters",
		`{"type":"a"} trailing`:                      "the body is not valid JSON (data after the object",
		`{"type":"a"}{}`:                             "the body is not valid JSON (data after the object",
		`{"type": "page_view"`:                       "the body is not valid JSON (unexpected EOF)",
		``:                                           "the body is not valid JSON (unexpected EOF)",
		`[1,2]`:                                      "the body must be a JSON object like {\"type\": \"page_view\"}, not an array",
		` 12 `:                                       "not a number",
	} {
		_, err := ParseEvent([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", body, err, want)
		}
	}
}

func TestContentTypes(t *testing.T) {
	for _, ok := range []string{"application/json", "Application/JSON", "application/json; charset=utf-8", " application/json ;x=y"} {
		if !isJSONContentType(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"text/plain", "application/jsonx", "application/x-www-form-urlencoded", ""} {
		if isJSONContentType(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
