package config

import (
	"time"
)

// Config is the guard's configuration before the memory limit is known.
type Config struct {
	Limit       Spec // the budget: a size, or a share of the detected limit
	Warn, Pause Spec // thresholds: sizes, or shares of the budget
	Action      Action
	// MaxRestarts kernel deaths within RestartWindow make a death loop: the
	// guard stops restarting the kernel.
	MaxRestarts   int
	RestartWindow time.Duration
	// HostProc is the host's /proc as mounted in a container ("" if not):
	// the GPU driver names processes by host pid (gpu.Open).
	HostProc string
	// GPUWarn is the share or size of a GPU's memory that the kernel may
	// hold before the running cell is warned; the zero Spec is off.
	GPUWarn Spec
	// MemLimit is MEM_LIMIT in bytes, 0 if unset: the memory limit
	// JupyterHub's spawners give a user's server, which
	// jupyter-resource-usage shows. Without JUPYTER_GUARD_LIMIT, it is the
	// budget unless a cgroup's limit is lower.
	MemLimit uint64
	// Restart says who restarts a kernel that died (RestartAuto, ...).
	Restart Restart
	// Headless says whether a person can answer a pause (HeadlessAuto,
	// ...).
	Headless Headless
	// Ceiling arms the allocation ceiling (RLIMIT_DATA on the kernel's
	// processes): an allocation past the budget fails in the kernel's
	// language instead of the OOM killer ending the kernel. On whatever
	// the action: it is what stops a cell nobody is there to stop.
	Ceiling bool
	// PauseTimeout is how long a pause waits for an answer while the
	// ceiling is armed; then the guard resumes the kernel itself, and an
	// allocation that does not fit fails at the ceiling.
	PauseTimeout time.Duration

	// origin quotes what the user wrote for each setting they set, such as
	// "JUPYTER_GUARD_WARN=90%", so errors found later can point at it.
	origin map[string]string
}

// Default is the configuration when nothing is set.
func Default() Config {
	return Config{
		Limit:         Spec{Percent: 100},
		Warn:          Spec{Percent: 80},
		Pause:         Spec{Percent: 95},
		Action:        Pause,
		MaxRestarts:   5,
		RestartWindow: time.Minute,
		GPUWarn:       Spec{Percent: 90},
		Restart:       RestartAuto,
		Headless:      HeadlessAuto,
		Ceiling:       true,
		PauseTimeout:  time.Minute,
	}
}

// from names where the setting came from, for error messages: the user's
// own words if they set it, else its name and value ("warn 80%").
func (c Config) from(s setting) string {
	if o, ok := c.origin[s.name]; ok {
		return o
	}
	return s.name + " " + s.get(c)
}
