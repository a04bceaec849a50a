package decide

import (
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
)

func load(t *testing.T, env map[string]string) config.Config {
	t.Helper()
	c, err := config.Load(func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewBudgetFigure(t *testing.T) {
	v1 := cgroup.Limit{Bytes: 1536 * mib, Kind: cgroup.V1Limit, Path: "/jobs/a"}
	host := cgroup.Limit{Bytes: 24 << 30, Kind: cgroup.HostMemory}
	tests := []struct {
		name     string
		env      map[string]string
		detected cgroup.Limit
		figure   ledger.Figure
		source   string
		limit    uint64
	}{
		{"cgroup limit", nil, v1, ledger.Cgroup, "cgroup v1 /jobs/a", 1536 * mib},
		{"share of a cgroup limit", map[string]string{"JUPYTER_GUARD_LIMIT": "50%"}, v1, ledger.Cgroup, "50% of cgroup v1 /jobs/a", 768 * mib},
		{"host RAM", nil, host, ledger.Host, "host memory", 24 << 30},
		{"absolute limit", map[string]string{"JUPYTER_GUARD_LIMIT": "300MiB"}, v1, ledger.Tree, "JUPYTER_GUARD_LIMIT", 300 * mib},
		// JupyterHub's MEM_LIMIT: below the host's memory or a cgroup's
		// limit it is the budget, counted on the kernel's processes; above
		// a cgroup's limit the cgroup's wins; a size set for the guard wins
		// over it, and a share is taken of it.
		{"MEM_LIMIT below host RAM", map[string]string{"MEM_LIMIT": "1073741824"}, host, ledger.Tree, "MEM_LIMIT", 1 << 30},
		{"MEM_LIMIT below a cgroup limit", map[string]string{"MEM_LIMIT": "1073741824"}, v1, ledger.Tree, "MEM_LIMIT", 1 << 30},
		{"MEM_LIMIT above a cgroup limit", map[string]string{"MEM_LIMIT": "4294967296"}, v1, ledger.Cgroup, "cgroup v1 /jobs/a", 1536 * mib},
		{"JUPYTER_GUARD_LIMIT over MEM_LIMIT", map[string]string{"MEM_LIMIT": "1073741824", "JUPYTER_GUARD_LIMIT": "300MiB"}, host,
			ledger.Tree, "JUPYTER_GUARD_LIMIT", 300 * mib},
		{"a share of MEM_LIMIT", map[string]string{"MEM_LIMIT": "1073741824", "JUPYTER_GUARD_LIMIT": "50%"}, host,
			ledger.Tree, "50% of MEM_LIMIT", 512 * mib},
		{"MEM_LIMIT=0 is no limit", map[string]string{"MEM_LIMIT": "0"}, host, ledger.Host, "host memory", 24 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBudget(load(t, tt.env), tt.detected)
			if err != nil {
				t.Fatal(err)
			}
			if b.Figure != tt.figure || b.Source != tt.source || b.Limit != tt.limit || b.Action != config.Pause {
				t.Errorf("budget %+v, want figure %s, source %q, limit %d", b, tt.figure, tt.source, tt.limit)
			}
		})
	}
}

func TestNewBudgetFrom(t *testing.T) {
	host := cgroup.Limit{Bytes: 24 << 30, Kind: cgroup.HostMemory}
	v2 := cgroup.Limit{Bytes: 1 << 30, Kind: cgroup.V2Max, Path: "/job"}
	for _, tt := range []struct {
		env      map[string]string
		detected cgroup.Limit
		from     string
	}{
		{nil, host, FromHost},
		{map[string]string{"JUPYTER_GUARD_LIMIT": "80%"}, v2, FromCgroup},
		{map[string]string{"JUPYTER_GUARD_LIMIT": "300MiB"}, v2, FromSetting},
		{map[string]string{"MEM_LIMIT": "536870912"}, v2, FromMemLimit},
	} {
		b, err := NewBudget(load(t, tt.env), tt.detected)
		if err != nil || b.From != tt.from {
			t.Errorf("env %v under %s: From %q, %v; want %q", tt.env, tt.detected.Source(), b.From, err, tt.from)
		}
	}
}

func TestNewBudgetRefusesALimitAboveTheCgroup(t *testing.T) {
	_, err := NewBudget(load(t, map[string]string{"JUPYTER_GUARD_LIMIT": "2GiB"}),
		cgroup.Limit{Bytes: 1536 * mib, Kind: cgroup.V1Limit, Path: "/jobs/a"})
	if err == nil || !strings.Contains(err.Error(), "JUPYTER_GUARD_LIMIT=2GiB") {
		t.Errorf("err = %v, want one that quotes JUPYTER_GUARD_LIMIT=2GiB", err)
	}
}

// TensorFlow's allocator gets the ceiling less what TensorFlow holds
// besides its tensors, at least half the ceiling, and nothing without one.
func TestTensorPool(t *testing.T) {
	for _, tt := range []struct {
		name  string
		env   map[string]string
		limit uint64
		want  func(ceiling uint64) uint64
	}{
		{"the seeds' 2 GiB", nil, 2 << 30, func(c uint64) uint64 { return c - 768*mib }},
		{"1 GiB: half", nil, 1 << 30, func(c uint64) uint64 { return c / 2 }},
		{"16 GiB: three quarters", nil, 16 << 30, func(c uint64) uint64 { return c - c/4 }},
		{"no ceiling, no pool", map[string]string{"JUPYTER_GUARD_CEILING": "off"}, 2 << 30, func(uint64) uint64 { return 0 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBudget(load(t, tt.env), cgroup.Limit{Bytes: tt.limit, Kind: cgroup.V1Limit, Path: "/k"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := b.TensorPool(), tt.want(b.Ceiling()); got != want || got >= b.Ceiling() && got != 0 {
				t.Errorf("TensorPool = %d MiB under a ceiling of %d MiB, want %d MiB", got>>20, b.Ceiling()>>20, want>>20)
			}
		})
	}
}
