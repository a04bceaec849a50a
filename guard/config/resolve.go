package config

import (
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Budget is the configuration in bytes.
type Budget struct {
	Limit uint64 // the kernel tree's memory budget
	Warn  uint64 // warn in the running cell from here
	Pause uint64 // take the Action from here
}

// String is a one-line summary for logs and the status table.
func (b Budget) String() string {
	return fmt.Sprintf("budget %s: warn at %s, pause at %s",
		units.FormatBytes(b.Limit), units.FormatBytes(b.Warn), units.FormatBytes(b.Pause))
}

// Resolve turns the configuration into bytes. detected is the most memory
// the kernel can really use (its cgroup limit, else the machine's RAM), or 0
// if unknown. It checks what only the numbers can tell: a budget above what
// is detected, thresholds above the budget, a warning at or after the pause.
func (c Config) Resolve(detected uint64) (Budget, error) {
	limit, err := c.resolveLimit(detected)
	if err != nil {
		return Budget{}, err
	}
	b := Budget{Limit: limit, Warn: c.Warn.Of(limit), Pause: c.Pause.Of(limit)}
	for _, t := range []struct {
		s     setting
		bytes uint64
	}{{warnSetting, b.Warn}, {pauseSetting, b.Pause}} {
		if t.bytes > limit {
			return Budget{}, fmt.Errorf("%s is above the %s budget (%s); use a size below it or a share such as 90%%",
				c.from(t.s), units.FormatBytes(limit), c.from(limitSetting))
		}
	}
	if b.Warn >= b.Pause {
		return Budget{}, fmt.Errorf("%s (%s) must be below %s (%s): the warning has to come before the %s",
			c.from(warnSetting), units.FormatBytes(b.Warn), c.from(pauseSetting), units.FormatBytes(b.Pause), c.Action)
	}
	return b, nil
}

func (c Config) resolveLimit(detected uint64) (uint64, error) {
	switch {
	case c.Limit.Percent > 0 && detected == 0:
		return 0, fmt.Errorf("%s: no memory limit was detected to take a share of; set %s or --%s to a size such as 4GiB",
			c.from(limitSetting), limitSetting.env(), limitSetting.name)
	case c.Limit.Percent == 0 && detected > 0 && c.Limit.Bytes > detected:
		return 0, fmt.Errorf("%s is above the %s the kernel can use, so the OOM killer would strike first; use at most %s or a share such as 90%%",
			c.from(limitSetting), units.FormatBytes(detected), units.FormatBytes(detected))
	}
	return c.Limit.Of(detected), nil
}
