package main

import (
	"strings"
	"testing"
)

func TestParseIDs(t *testing.T) {
	for q, want := range map[string][2]int32{
		"":                {1, 2},
		"b=9&x=y&a=10000": {10000, 9},
		"a=2147483647":    {2147483647, 2},
		"a=7&b=7":         {7, 7},
		"&&a=3&":          {3, 2},
		"a=0010":          {10, 2},
	} {
		a, b, err := parseIDs(q)
		if err != nil || a != want[0] || b != want[1] {
			t.Errorf("%q: got %d %d %v, want %v", q, a, b, err, want)
		}
	}
	for _, q := range []string{"a=0", "a=-1", "a=+1", "a=1.0", "a=", "a", "a=2147483648", "a=99999999999", "a=%31", "a=abc"} {
		_, _, err := parseIDs(q)
		if err == nil || !strings.Contains(err.Error(), "`a`") {
			t.Errorf("%q: got %v", q, err)
		}
	}
	if _, _, err := parseIDs("b=1&b=2"); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("duplicate b: got %v", err)
	}
}

func TestInAnswerOrder(t *testing.T) {
	found := []Item{{9, "item-9", 1271}, {3, "item-3", 3757}}
	got, _, ok := inAnswerOrder(found, 3, 9)
	if !ok || got[0].ID != 3 || got[1].ID != 9 {
		t.Fatalf("got %v", got)
	}
	got, _, ok = inAnswerOrder(found[:1], 9, 9)
	if !ok || got[0].ID != 9 || got[1].ID != 9 {
		t.Fatalf("same id twice: got %v", got)
	}
	if _, missing, ok := inAnswerOrder(found[:1], 3, 9); ok || missing != 3 {
		t.Fatalf("missing: got %d %v", missing, ok)
	}
}
