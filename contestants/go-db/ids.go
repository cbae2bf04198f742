package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The db-read data set (docs/scenarios.md): table items, ids 1..=10000.
const (
	rows  = 10_000
	maxID = 1<<31 - 1
)

// Item is one row of items.
type Item struct {
	ID    int32  `json:"id" db:"id"`
	Name  string `json:"name" db:"name"`
	Price int32  `json:"price" db:"price"`
}

type badIDs struct{ msg string }

func (e *badIDs) Error() string { return e.msg }

// parseIDs reads a and b from a raw query string (a=1&b=2, not decoded:
// an id is decimal digits only). Absent parameters default to 1 and 2,
// others are ignored, a parameter given twice is refused.
func parseIDs(query string) (a, b int32, err error) {
	var seenA, seenB bool
	a, b = 1, 2
	for _, pair := range strings.Split(query, "&") {
		if pair == "" {
			continue
		}
		key, value := pair, ""
		if i := strings.IndexByte(pair, '='); i >= 0 {
			key, value = pair[:i], pair[i+1:]
		}
		var slot *int32
		var seen *bool
		switch key {
		case "a":
			slot, seen = &a, &seenA
		case "b":
			slot, seen = &b, &seenB
		default:
			continue
		}
		if *seen {
			return 0, 0, &badIDs{fmt.Sprintf("query parameter `%s` appears more than once; send it once", key)}
		}
		*seen = true
		id, ok := parseID(value)
		if !ok {
			return 0, 0, &badIDs{fmt.Sprintf("query parameter `%s` must be an integer in 1..=2147483647, got %q", key, value)}
		}
		*slot = id
	}
	return a, b, nil
}

func parseID(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n < 1 || n > maxID {
		return 0, false
	}
	return int32(n), true
}

// inAnswerOrder picks rows lo then hi out of what the database returned;
// the first id without a row is the error.
func inAnswerOrder(found []Item, lo, hi int32) ([2]Item, int32, bool) {
	var out [2]Item
	for i, id := range [2]int32{lo, hi} {
		ok := false
		for _, it := range found {
			if it.ID == id {
				out[i], ok = it, true
				break
			}
		}
		if !ok {
			return out, id, false
		}
	}
	return out, 0, true
}
