package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// setting is one configurable value, known by a flag name and an
// environment variable derived from it (limit: JUPYTER_GUARD_LIMIT).
type setting struct {
	name  string
	usage string
	set   func(c *Config, text string) error
	get   func(c Config) string
}

func (s setting) env() string {
	return "JUPYTER_GUARD_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

var (
	limitSetting = setting{
		name:  "limit",
		usage: "memory budget: a size (4GiB, 1.5G; powers of 1024) or a share of the detected limit (80%)",
		set:   func(c *Config, s string) (err error) { c.Limit, err = ParseSpec(s); return err },
		get:   func(c Config) string { return c.Limit.String() },
	}
	warnSetting = setting{
		name:  "warn",
		usage: "warn in the cell at this size or share of the budget",
		set:   func(c *Config, s string) (err error) { c.Warn, err = ParseSpec(s); return err },
		get:   func(c Config) string { return c.Warn.String() },
	}
	pauseSetting = setting{
		name:  "pause",
		usage: "act at this size or share of the budget",
		set:   func(c *Config, s string) (err error) { c.Pause, err = ParseSpec(s); return err },
		get:   func(c Config) string { return c.Pause.String() },
	}
	actionSetting = setting{
		name:  "action",
		usage: "what to do at the pause threshold: pause, interrupt or warn",
		set:   func(c *Config, s string) (err error) { c.Action, err = ParseAction(s); return err },
		get:   func(c Config) string { return string(c.Action) },
	}
	maxRestartsSetting = setting{
		name:  "max-restarts",
		usage: "kernel deaths within the restart window before the guard stops restarting it",
		set:   func(c *Config, s string) (err error) { c.MaxRestarts, err = parseCount(s); return err },
		get:   func(c Config) string { return strconv.Itoa(c.MaxRestarts) },
	}
	restartWindowSetting = setting{
		name:  "restart-window",
		usage: "the window for max-restarts: seconds (60) or a duration (90s, 2m)",
		set:   func(c *Config, s string) (err error) { c.RestartWindow, err = parseWindow(s); return err },
		get:   func(c Config) string { return c.RestartWindow.String() },
	}
	hostProcSetting = setting{
		name:  "host-proc",
		usage: "the host's /proc, mounted in a container with its own pid namespace: how the kernel's GPU memory is found there",
		set:   func(c *Config, s string) error { c.HostProc = strings.TrimSpace(s); return nil },
		get:   func(c Config) string { return c.HostProc },
	}
	gpuWarnSetting = setting{
		name:  "gpu-warn",
		usage: "warn in the cell when the kernel holds this share (or size) of a GPU's memory; off: never",
		set:   func(c *Config, s string) (err error) { c.GPUWarn, err = parseGPUWarn(s); return err },
		get: func(c Config) string {
			if c.GPUWarn == (Spec{}) {
				return "off"
			}
			return c.GPUWarn.String()
		},
	}
	restartSetting = setting{
		name:  "restart",
		usage: "who restarts a kernel that died: guard (the proxy, in place), client (whoever started it, as for a plain kernel), or auto (guard under a Jupyter server, else client)",
		set:   func(c *Config, s string) (err error) { c.Restart, err = ParseRestart(s); return err },
		get:   func(c Config) string { return string(c.Restart) },
	}
	headlessSetting = setting{
		name:  "headless",
		usage: "on: nobody can answer a pause (nbconvert, papermill, guardctl run), so none is made and the ceiling (or, with it off, an interrupt) stops the cell; off: a person can; auto: off when a Jupyter server started the kernel for a notebook",
		set:   func(c *Config, s string) (err error) { c.Headless, err = ParseHeadless(s); return err },
		get:   func(c Config) string { return string(c.Headless) },
	}
	ceilingSetting = setting{
		name:  "ceiling",
		usage: "on: an allocation past the budget fails in the kernel (MemoryError) instead of the OOM killer ending it; off: no ceiling",
		set:   func(c *Config, s string) (err error) { c.Ceiling, err = parseOnOff(s); return err },
		get: func(c Config) string {
			if c.Ceiling {
				return "on"
			}
			return "off"
		},
	}
	pauseTimeoutSetting = setting{
		name:  "pause-timeout",
		usage: "with the ceiling on, how long a pause waits for an answer before the guard resumes the kernel: seconds (60) or a duration (2m)",
		set:   func(c *Config, s string) (err error) { c.PauseTimeout, err = parseWindow(s); return err },
		get:   func(c Config) string { return c.PauseTimeout.String() },
	}
	settings = []setting{limitSetting, warnSetting, pauseSetting, actionSetting, maxRestartsSetting, restartWindowSetting,
		hostProcSetting, gpuWarnSetting, restartSetting, headlessSetting, ceilingSetting, pauseTimeoutSetting}
)

// parseOnOff reads on or off, in any case.
func parseOnOff(s string) (bool, error) {
	w, err := oneOf(s, "", "on", "off")
	return w == "on", err
}

// parseGPUWarn reads a share or size, or "off" (the zero Spec).
func parseGPUWarn(s string) (Spec, error) {
	if strings.TrimSpace(s) == "off" {
		return Spec{}, nil
	}
	spec, err := ParseSpec(s)
	if err != nil {
		return Spec{}, fmt.Errorf("%w, or off", err)
	}
	return spec, nil
}

// parseCount reads a whole number, 0 or more.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, errors.New("not a count; use a whole number, 0 or more")
	}
	return n, nil
}

// parseWindow reads plain seconds ("60") or a Go duration ("90s", "2m"),
// above zero.
func parseWindow(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, serr := strconv.ParseUint(s, 10, 32)
		d, err = time.Duration(secs)*time.Second, serr
	}
	if err != nil || d <= 0 {
		return 0, errors.New("not a duration; use seconds (60) or a duration such as 90s or 2m, above zero")
	}
	return d, nil
}
