package units

import (
	"math"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{900, "900 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{900 << 10, "900 KiB"},
		{512 << 20, "512 MiB"},
		{512<<20 + 300<<10, "512 MiB"},
		{99 << 20, "99 MiB"},
		{99<<20 + 990<<10, "100 MiB"},
		{113 << 30 / 10, "11.3 GiB"},
		{4 << 30, "4 GiB"},
		{1<<30 - 1<<10, "1 GiB"}, // 1023.999 MiB
		{1<<30 - 30<<20, "994 MiB"},
		{3 << 40, "3 TiB"},
		{math.MaxUint64, "16 EiB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
