package main

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

func TestBubbleSort(t *testing.T) {
	cases := [][]int32{
		nil,
		{},
		{42},
		{5, -3, 5, 0, math.MinInt32, math.MaxInt32, -3, 1},
		{3, 2, 1},
		{1, 2, 3},
	}
	r := rand.New(rand.NewSource(1))
	long := make([]int32, 1000)
	for i := range long {
		long[i] = r.Int31()
	}
	cases = append(cases, long)
	for _, c := range cases {
		want := append([]int32(nil), c...)
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		got := append([]int32(nil), c...)
		bubbleSort(got)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("bubbleSort(%v) = %v, want %v", c, got, want)
			}
		}
	}
}
