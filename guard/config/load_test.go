package config

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func environ(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

// load parses args as guardctl would and loads the configuration.
func load(t *testing.T, vars map[string]string, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return Load(environ(vars), fs)
}

// public drops the unexported origin so configurations compare by value.
func public(c Config) Config {
	c.origin = nil
	return c
}

func TestLoad(t *testing.T) {
	def := Default()
	with := func(change func(*Config)) Config {
		c := def
		change(&c)
		return c
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want Config
	}{
		{"nothing set", nil, nil, def},
		{"empty variables are unset", map[string]string{"JUPYTER_GUARD_LIMIT": "", "JUPYTER_GUARD_ACTION": ""}, nil, def},
		{"every variable",
			map[string]string{
				"JUPYTER_GUARD_LIMIT":          "4GiB",
				"JUPYTER_GUARD_WARN":           "70%",
				"JUPYTER_GUARD_PAUSE":          "3.5G",
				"JUPYTER_GUARD_ACTION":         "interrupt",
				"JUPYTER_GUARD_MAX_RESTARTS":   "3",
				"JUPYTER_GUARD_RESTART_WINDOW": "120",
				"JUPYTER_GUARD_HOST_PROC":      "/host/proc",
				"JUPYTER_GUARD_GPU_WARN":       "off",
				"JUPYTER_GUARD_RESTART":        "client",
				"MEM_LIMIT":                    "1073741824",
				"JUPYTER_GUARD_HEADLESS":       "ON",
				"JUPYTER_GUARD_CEILING":        "Off",
				"JUPYTER_GUARD_PAUSE_TIMEOUT":  "5",
			}, nil,
			Config{Limit: Spec{Bytes: 4 << 30}, Warn: Spec{Percent: 70}, Pause: Spec{Bytes: 7 << 29},
				Action: Interrupt, MaxRestarts: 3, RestartWindow: 2 * time.Minute, HostProc: "/host/proc",
				MemLimit: 1 << 30, Restart: RestartClient, Headless: HeadlessOn, PauseTimeout: 5 * time.Second}},
		{"every flag", nil,
			[]string{"--limit=80%", "--warn", "1GiB", "--pause=2GiB", "--action=warn", "--max-restarts=0", "--restart-window=90s",
				"--host-proc=/host/proc", "--gpu-warn=50%", "--restart=guard", "--headless=off", "--ceiling=on", "--pause-timeout=2m"},
			Config{Limit: Spec{Percent: 80}, Warn: Spec{Bytes: 1 << 30}, Pause: Spec{Bytes: 2 << 30},
				Action: Warn, MaxRestarts: 0, RestartWindow: 90 * time.Second, HostProc: "/host/proc", GPUWarn: Spec{Percent: 50},
				Restart: RestartGuard, Headless: HeadlessOff, Ceiling: true, PauseTimeout: 2 * time.Minute}},
		{"a flag wins over its variable",
			map[string]string{"JUPYTER_GUARD_LIMIT": "4GiB", "JUPYTER_GUARD_WARN": "60%"},
			[]string{"--limit=8GiB"},
			with(func(c *Config) { c.Limit, c.Warn = Spec{Bytes: 8 << 30}, Spec{Percent: 60} })},
		{"a flag hides a bad variable",
			map[string]string{"JUPYTER_GUARD_ACTION": "frezze"},
			[]string{"--action=pause"},
			def},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := load(t, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(public(got), tt.want) {
				t.Errorf("got %+v\nwant %+v", public(got), tt.want)
			}
		})
	}
}

func TestLoadWithoutFlags(t *testing.T) {
	got, err := Load(environ(map[string]string{"JUPYTER_GUARD_PAUSE": "90%"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pause != (Spec{Percent: 90}) {
		t.Errorf("Pause = %+v, want 90%%", got.Pause)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"JUPYTER_GUARD_ACTION": "frezze"}, nil,
			"JUPYTER_GUARD_ACTION=frezze: unknown action; use pause, interrupt or warn"},
		{nil, []string{"--action=frezze"},
			"--action=frezze: unknown action; use pause, interrupt or warn"},
		{map[string]string{"JUPYTER_GUARD_LIMIT": "4GG"}, nil,
			"JUPYTER_GUARD_LIMIT=4GG: not a size or a percentage; use a share (80%) or bytes (4294967296) or a number with K, M, G or T (4GiB, 512MiB, 1.5G, 2048M; every suffix is a power of 1024)"},
		{map[string]string{"JUPYTER_GUARD_PAUSE": "120%"}, nil,
			"JUPYTER_GUARD_PAUSE=120%: above 100%; a share must be at most 100%"},
		{nil, []string{"--warn=0%"},
			"--warn=0%: a share must be above 0%"},
		{map[string]string{"JUPYTER_GUARD_MAX_RESTARTS": "-1"}, nil,
			"JUPYTER_GUARD_MAX_RESTARTS=-1: not a count; use a whole number, 0 or more"},
		{map[string]string{"JUPYTER_GUARD_MAX_RESTARTS": "many"}, nil,
			"JUPYTER_GUARD_MAX_RESTARTS=many: not a count; use a whole number, 0 or more"},
		{map[string]string{"JUPYTER_GUARD_RESTART_WINDOW": "soon"}, nil,
			"JUPYTER_GUARD_RESTART_WINDOW=soon: not a duration; use seconds (60) or a duration such as 90s or 2m, above zero"},
		{map[string]string{"JUPYTER_GUARD_RESTART": "never"}, nil,
			"JUPYTER_GUARD_RESTART=never: unknown restart; use guard, client or auto"},
		{map[string]string{"MEM_LIMIT": "1G of RAM"}, nil,
			"MEM_LIMIT=1G of RAM: not a size; JupyterHub sets it in bytes, such as 1073741824"},
		{map[string]string{"JUPYTER_GUARD_RESTART_WINDOW": "0"}, nil,
			"JUPYTER_GUARD_RESTART_WINDOW=0: not a duration; use seconds (60) or a duration such as 90s or 2m, above zero"},
		{nil, []string{"--restart-window=-5s"},
			"--restart-window=-5s: not a duration; use seconds (60) or a duration such as 90s or 2m, above zero"},
		{map[string]string{"JUPYTER_GUARD_CEILING": "no"}, nil, "JUPYTER_GUARD_CEILING=no: use on or off"},
		{map[string]string{"JUPYTER_GUARD_HEADLESS": "maybe"}, nil, "JUPYTER_GUARD_HEADLESS=maybe: use on, off or auto"},
		{nil, []string{"--pause-timeout=0"},
			"--pause-timeout=0: not a duration; use seconds (60) or a duration such as 90s or 2m, above zero"},
	}
	for _, tt := range tests {
		_, err := load(t, tt.env, tt.args...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("env %v, args %v: error %v\nwant %s", tt.env, tt.args, err, tt.want)
		}
	}
}

func TestRegisterFlagsNamesTheVariables(t *testing.T) {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	RegisterFlags(fs)
	for name, env := range map[string]string{"limit": "JUPYTER_GUARD_LIMIT", "restart-window": "JUPYTER_GUARD_RESTART_WINDOW"} {
		f := fs.Lookup(name)
		if f == nil {
			t.Fatalf("no --%s flag", name)
		}
		if want := "(env " + env + ")"; !strings.Contains(f.Usage, want) {
			t.Errorf("--%s usage %q does not mention %s", name, f.Usage, want)
		}
	}
}

func TestGPUWarn(t *testing.T) {
	for text, want := range map[string]Spec{"off": {}, "75%": {Percent: 75}, "20GiB": {Bytes: 20 << 30}} {
		var c Config
		if err := gpuWarnSetting.set(&c, text); err != nil || c.GPUWarn != want {
			t.Errorf("gpu-warn %q = %+v, %v; want %+v", text, c.GPUWarn, err, want)
		}
		if got := gpuWarnSetting.get(c); got != map[string]string{"off": "off", "75%": "75%", "20GiB": "20 GiB"}[text] {
			t.Errorf("gpu-warn %q reads back as %q", text, got)
		}
	}
	var c Config
	if err := gpuWarnSetting.set(&c, "never"); err == nil || !strings.HasSuffix(err.Error(), ", or off") {
		t.Errorf("gpu-warn never: %v", err)
	}
}
