package main

import (
	"strings"
	"testing"
)

func TestRedisKey(t *testing.T) {
	if got := redisKey(2147483647); got != "item:2147483647" {
		t.Fatalf("got %q", got)
	}
}

func TestItemFromHash(t *testing.T) {
	it, ok, err := itemFromHash(7, []any{"item-7", "5433"})
	if err != nil || !ok || it != (Item{7, "item-7", 5433}) {
		t.Fatalf("a row: got %v %v %v", it, ok, err)
	}
	if _, ok, err := itemFromHash(10001, []any{nil, nil}); err != nil || ok {
		t.Fatalf("no row: got %v %v", ok, err)
	}
	for _, fields := range [][]any{{"item-7", nil}, {nil, "1"}, {"item-7", "1.5"}, {"item-7", "2147483648"}, {"item-7"}} {
		if _, _, err := itemFromHash(7, fields); err == nil || !strings.Contains(err.Error(), "item:7") {
			t.Errorf("%v: got %v", fields, err)
		}
	}
}
