package config

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"80%", Spec{Percent: 80}},
		{" 12.5 % ", Spec{Percent: 12.5}},
		{"100%", Spec{Percent: 100}},
		{"4GiB", Spec{Bytes: 4 << 30}},
		{"4GB", Spec{Bytes: 4 << 30}},
		{"512MiB", Spec{Bytes: 512 << 20}},
		{"1.5G", Spec{Bytes: 3 << 29}},
		{"2048M", Spec{Bytes: 2 << 30}},
		{"4294967296", Spec{Bytes: 4 << 30}},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSpecRejects(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "not a size or a percentage; use a share (80%) or bytes"},
		{"4GG", "not a size or a percentage"},
		{"lots", "not a size or a percentage"},
		{"-1G", "not a size or a percentage"},
		{"%", "not a percentage; use a share such as 80%"},
		{"eighty%", "not a percentage"},
		{"NaN%", "not a percentage"},
		{"0%", "a share must be above 0%"},
		{"-5%", "a share must be above 0%"},
		{"120%", "above 100%; a share must be at most 100%"},
		{"0", "a size of 0 leaves no memory"},
		{"0GiB", "a size of 0 leaves no memory"},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want an error saying %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecOfAndString(t *testing.T) {
	tests := []struct {
		spec  Spec
		whole uint64
		bytes uint64
		text  string
	}{
		{Spec{Percent: 80}, 10 << 30, 8 << 30, "80%"},
		{Spec{Percent: 12.5}, 8 << 30, 1 << 30, "12.5%"},
		{Spec{Percent: 100}, 12345, 12345, "100%"},
		{Spec{Bytes: 4 << 30}, 16 << 30, 4 << 30, "4 GiB"},
		{Spec{Bytes: 4 << 30}, 0, 4 << 30, "4 GiB"},
	}
	for _, tt := range tests {
		if got := tt.spec.Of(tt.whole); got != tt.bytes {
			t.Errorf("%+v.Of(%d) = %d, want %d", tt.spec, tt.whole, got, tt.bytes)
		}
		if got := tt.spec.String(); got != tt.text {
			t.Errorf("%+v.String() = %q, want %q", tt.spec, got, tt.text)
		}
	}
}

func TestParseAction(t *testing.T) {
	tests := []struct {
		in   string
		want Action
		ok   bool
	}{
		{"pause", Pause, true},
		{"Interrupt", Interrupt, true},
		{" WARN ", Warn, true},
		{"frezze", "", false},
		{"", "", false},
		{"kill", "", false},
	}
	for _, tt := range tests {
		got, err := ParseAction(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseAction(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
