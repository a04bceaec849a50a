package proctree

import "testing"

func TestLookup(t *testing.T) {
	status := []byte("Name:\tsh\nPss_Dirty:   5 kB\nPss:     321 kB\nNSpid:\t812\t7\t1\n")
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"Name", "sh", true},
		{"Pss", "321 kB", true},
		{"Pss_Dirty", "5 kB", true},
		{"NSpid", "812\t7\t1", true},
		{"VmRSS", "", false},
		{"Ps", "", false},
	}
	for _, tt := range tests {
		got, ok := lookup(status, tt.key)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("lookup(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseKB(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"321 kB", 321 * 1024, true},
		{"0 kB", 0, true},
		{"321", 0, false},
		{"x kB", 0, false},
		{"-1 kB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseKB([]byte(tt.in))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseKB(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
