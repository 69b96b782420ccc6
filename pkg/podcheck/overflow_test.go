package podcheck

import (
	"math"
	"testing"
	"time"
)

// A grace period near the int64 maximum is "never killed", never a negative
// duration; preStop seconds print without exponent notation.
func TestHugeSecondsDoNotOverflow(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want time.Duration
	}{
		{-5, 0}, {0, 0}, {30, 30 * time.Second},
		{math.MaxInt64 - 10, math.MaxInt64}, {int64(math.MaxInt64 / int64(time.Second)), time.Duration(math.MaxInt64/int64(time.Second)) * time.Second},
	} {
		if got := secondsDur(c.in); got != c.want || got < 0 {
			t.Errorf("secondsDur(%d) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := secs(9.223372036854775e+18); got != "9223372036854775000" && got != "9223372036854775808" {
		t.Errorf("secs = %q", got)
	}
	if got := secs(2.5); got != "2.5" {
		t.Errorf("secs(2.5) = %q", got)
	}
}
