package units

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"4294967296", 4 << 30},
		{"0", 0},
		{"512B", 512},
		{"4GiB", 4 << 30},
		{"4GB", 4 << 30},
		{"4G", 4 << 30},
		{"4g", 4 << 30},
		{"4gib", 4 << 30},
		{"512MiB", 512 << 20},
		{"512 mb", 512 << 20},
		{"2048M", 2 << 30},
		{"1.5G", 3 << 29},
		{"1.5GiB", 3 << 29},
		{".5K", 512},
		{"900KiB", 900 << 10},
		{"1k", 1024},
		{"2TiB", 2 << 40},
		{"  3 GiB  ", 3 << 30},
		{"0.1K", 102}, // 102.4 rounds to the nearest byte
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSizeRejects(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "not a size"},
		{"GiB", "not a size"},
		{"4GG", "not a size"},
		{"4 PiB", "not a size"},
		{"-4G", "not a size"},
		{"+4G", "not a size"},
		{"1e3G", "not a size"},
		{"Inf", "not a size"},
		{"NaN", "not a size"},
		{"1.2.3G", "not a size"},
		{".", "not a size"},
		{"4 4G", "not a size"},
		{"80%", "not a size"},
		{"16777216TiB", "too large"},
		{"20000000T", "too large"},
		{"18446744073709551616", "too large"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParseSize(%q) = %d, %v; want an error saying %q", tt.in, got, err, tt.why)
		}
	}
}

func TestParseSizeReadsWhatFormatBytesWrites(t *testing.T) {
	for _, n := range []uint64{0, 900, 1 << 10, 512 << 20, 4 << 30, 3 << 40} {
		if got, err := ParseSize(FormatBytes(n)); err != nil || got != n {
			t.Errorf("ParseSize(FormatBytes(%d) = %q) = %d, %v", n, FormatBytes(n), got, err)
		}
	}
}
