package units

import (
	"testing"
	"time"
)

func TestFormatSignedBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1 << 30: "+1 GiB", -300 << 20: "-300 MiB"} {
		if got := FormatSignedBytes(n); got != want {
			t.Errorf("FormatSignedBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:       "850 ms",
		4200 * time.Millisecond:      "4.2 s",
		42 * time.Second:             "42 s",
		185 * time.Second:            "3 min 5 s",
		time.Minute:                  "1 min",
		2*time.Hour + 10*time.Minute: "2 h 10 min",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
