package config

import (
	"strings"
	"testing"
)

const gib = 1 << 30

func TestResolve(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		detected uint64
		want     Budget
	}{
		{"defaults", nil, 10 * gib, Budget{Limit: 10 * gib, Warn: 8 * gib, Pause: 9.5 * gib}},
		{"a share of the detected limit", map[string]string{"JUPYTER_GUARD_LIMIT": "80%"}, 100 * gib,
			Budget{Limit: 80 * gib, Warn: 64 * gib, Pause: 76 * gib}},
		{"a size under the detected limit", map[string]string{"JUPYTER_GUARD_LIMIT": "10GiB"}, 16 * gib,
			Budget{Limit: 10 * gib, Warn: 8 * gib, Pause: 9.5 * gib}},
		{"a size when nothing is detected", map[string]string{"JUPYTER_GUARD_LIMIT": "10GiB"}, 0,
			Budget{Limit: 10 * gib, Warn: 8 * gib, Pause: 9.5 * gib}},
		{"a share rounds to the byte", nil, 8 * gib,
			Budget{Limit: 8 * gib, Warn: 6871947674, Pause: 8160437862}}, // 6.4 GiB, 7.6 GiB
		{"sizes for the thresholds",
			map[string]string{"JUPYTER_GUARD_LIMIT": "4GiB", "JUPYTER_GUARD_WARN": "3GiB", "JUPYTER_GUARD_PAUSE": "3.5GiB"}, 16 * gib,
			Budget{Limit: 4 * gib, Warn: 3 * gib, Pause: 3.5 * gib}},
		{"pause at the very limit", map[string]string{"JUPYTER_GUARD_PAUSE": "100%"}, 10 * gib,
			Budget{Limit: 10 * gib, Warn: 8 * gib, Pause: 10 * gib}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(environ(tt.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Resolve(tt.detected)
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%d) = %+v, %v; want %+v", tt.detected, got, err, tt.want)
			}
		})
	}
}

func TestResolveRejects(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		detected uint64
		want     string
	}{
		{"warn above pause", map[string]string{"JUPYTER_GUARD_WARN": "95%", "JUPYTER_GUARD_PAUSE": "90%"}, 10 * gib,
			"JUPYTER_GUARD_WARN=95% (9.5 GiB) must be below JUPYTER_GUARD_PAUSE=90% (9 GiB): the warning has to come before the pause"},
		{"warn equal to pause", map[string]string{"JUPYTER_GUARD_WARN": "90%", "JUPYTER_GUARD_PAUSE": "90%"}, 10 * gib,
			"JUPYTER_GUARD_WARN=90% (9 GiB) must be below JUPYTER_GUARD_PAUSE=90% (9 GiB)"},
		{"a warn size above the default pause", map[string]string{"JUPYTER_GUARD_WARN": "9.8GiB", "JUPYTER_GUARD_ACTION": "interrupt"}, 10 * gib,
			"JUPYTER_GUARD_WARN=9.8GiB (9.8 GiB) must be below pause 95% (9.5 GiB): the warning has to come before the interrupt"},
		{"a pause size above the budget", map[string]string{"JUPYTER_GUARD_LIMIT": "4GiB", "JUPYTER_GUARD_PAUSE": "5GiB"}, 16 * gib,
			"JUPYTER_GUARD_PAUSE=5GiB is above the 4 GiB budget (JUPYTER_GUARD_LIMIT=4GiB); use a size below it or a share such as 90%"},
		{"a warn size above the budget", map[string]string{"JUPYTER_GUARD_WARN": "12GiB"}, 10 * gib,
			"JUPYTER_GUARD_WARN=12GiB is above the 10 GiB budget (limit 100%)"},
		{"a budget above the detected limit", map[string]string{"JUPYTER_GUARD_LIMIT": "64GiB"}, 16 * gib,
			"JUPYTER_GUARD_LIMIT=64GiB is above the 16 GiB the kernel can use, so the OOM killer would strike first; use at most 16 GiB or a share such as 90%"},
		{"a share of nothing", map[string]string{"JUPYTER_GUARD_LIMIT": "80%"}, 0,
			"JUPYTER_GUARD_LIMIT=80%: no memory limit was detected to take a share of; set JUPYTER_GUARD_LIMIT or --limit to a size such as 4GiB"},
		{"the default share of nothing", nil, 0,
			"limit 100%: no memory limit was detected to take a share of; set JUPYTER_GUARD_LIMIT or --limit to a size such as 4GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(environ(tt.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Resolve(tt.detected)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Resolve(%d) = %+v, %v\nwant an error starting %s", tt.detected, got, err, tt.want)
			}
		})
	}
}

func TestResolveAFlagIsQuotedAsAFlag(t *testing.T) {
	c, err := load(t, nil, "--warn=99%")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve(10 * gib)
	if want := "--warn=99% (9.9 GiB) must be below pause 95%"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %s", err, want)
	}
}

func TestBudgetString(t *testing.T) {
	b := Budget{Limit: 4 * gib, Warn: 3435973837, Pause: 4080218931}
	if got, want := b.String(), "budget 4 GiB: warn at 3.2 GiB, pause at 3.8 GiB"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
