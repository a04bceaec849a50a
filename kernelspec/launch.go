package kernelspec

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
)

// ProvisionerName is the name jupyter-guard's kernel provisioner
// (jupyter_guard/provisioner.py) is registered under, in the entry point
// group jupyter_client.kernel_provisioners: what a kernelspec's
// metadata.kernel_provisioner.provisioner_name and Jupyter's
// KernelProvisionerFactory.default_provisioner_name name it by.
const ProvisionerName = "jupyter-guard"

// LaunchArgv is the command that runs a kernel under the guard: guardctl's
// proxy, told Jupyter's connection file, how Jupyter interrupts the kernel
// and where its kernelspec lives, the guard's options, then the kernel's
// own argv after "--". Wrapped kernelspecs carry it with Jupyter's
// {connection_file} placeholder (Wrap); the provisioner gets it with the
// real file from `guardctl kernel-argv`. One definition, so that both ways
// start the same proxy the same way.
func LaunchArgv(guardctl, connFile, interruptMode, resourceDir string, options, argv []string) []string {
	launch := []string{guardctl, "kernel", "-f", connFile, "--interrupt-mode", interruptMode, "--resource-dir", resourceDir}
	launch = append(launch, options...)
	return append(append(launch, "--"), argv...)
}

// Shelled is launch (LaunchArgv) as the provisioner starts it: through
// /bin/sh, which ignores SIGINT and execs guardctl (see shell).
func Shelled(launch []string) []string {
	return shell(`exec "$0" "$@"`, launch)
}

// shell runs script with launch as its $0 and $@, SIGINT ignored first.
// jupyter_client interrupts a kernel before it shuts it down, and Go's
// runtime takes SIGINT's default (the end of the proxy) until main runs:
// a shutdown within the first milliseconds of a start killed the proxy
// (3 runs in 15 under load). A SIGINT ignored across exec stays ignored
// in Go until signal.Notify, which supervisor.Run calls before it starts
// the kernel, so the kernel still gets SIGINT's default.
func shell(script string, launch []string) []string {
	return append([]string{"/bin/sh", "-c", "trap '' INT; " + script}, launch...)
}

// Provisioner is the kernel provisioner the spec names in
// metadata.kernel_provisioner, with its config; "" when it names none, and
// Jupyter's default provisioner starts it.
func (s *KernelSpec) Provisioner() (string, map[string]json.RawMessage, error) {
	raw, ok := s.Metadata["kernel_provisioner"]
	if !ok {
		return "", nil, nil
	}
	var stanza struct {
		Name   *string                    `json:"provisioner_name"`
		Config map[string]json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(raw, &stanza); err != nil {
		return "", nil, fmt.Errorf("kernelspec %s (%s): metadata.kernel_provisioner is not an object with a provisioner_name and a config", s.Name, s.Dir)
	}
	if stanza.Name == nil {
		return "", nil, nil // Jupyter then uses its default, and ignores the config
	}
	return *stanza.Name, stanza.Config, nil
}

// GuardedByProvisioner says whether the spec asks for the jupyter-guard
// provisioner itself, whatever Jupyter's default is.
func (s *KernelSpec) GuardedByProvisioner() bool {
	name, _, err := s.Provisioner()
	return err == nil && name == ProvisionerName
}

// OwnProvisioner is the provisioner the spec names when it is neither
// jupyter_client's local one nor jupyter-guard's: one that may start the
// kernel in a container or on another host, where a guardctl on this
// machine would watch a launcher, not the kernel. Such specs are left
// alone. "" for every other spec.
func (s *KernelSpec) OwnProvisioner() string {
	name, _, err := s.Provisioner()
	if err != nil || name == "" || name == localProvisioner || name == ProvisionerName {
		return ""
	}
	return name
}

// GuardOptions are guardctl kernel's options for the settings the spec
// gives the jupyter-guard provisioner in metadata.kernel_provisioner.config
// ({"limit": "2GiB"} is --limit=2GiB; max_restarts may be spelled with _
// or -), checked as the proxy would check them, so that a bad one stops
// the launch with its reason instead of a kernel that dies at start.
func (s *KernelSpec) GuardOptions() ([]string, error) {
	name, cfg, err := s.Provisioner()
	if err != nil || name != ProvisionerName || len(cfg) == 0 {
		return nil, err
	}
	fs := flag.NewFlagSet("metadata.kernel_provisioner.config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	config.RegisterFlags(fs)
	var options []string
	for _, key := range slices.Sorted(maps.Keys(cfg)) {
		setting := strings.ReplaceAll(key, "_", "-")
		if fs.Lookup(setting) == nil {
			return nil, fmt.Errorf("kernelspec %s: metadata.kernel_provisioner.config: no setting %q; the settings are %s",
				s.Name, key, strings.Join(settingNames(fs), ", "))
		}
		text, err := settingText(cfg[key])
		if err != nil {
			return nil, fmt.Errorf("kernelspec %s: metadata.kernel_provisioner.config.%s: %w", s.Name, key, err)
		}
		if err := fs.Set(setting, text); err != nil {
			return nil, err
		}
		options = append(options, "--"+setting+"="+text)
	}
	if _, err := config.Load(func(string) string { return "" }, fs); err != nil {
		return nil, fmt.Errorf("kernelspec %s: metadata.kernel_provisioner.config: %w", s.Name, err)
	}
	return options, nil
}

func settingNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// settingText is a config value as guardctl's option reads it: a string
// as it is, a number or a boolean as JSON writes it.
func settingText(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v.(type) {
	case string:
		return v.(string), nil
	case float64, bool:
		return string(raw), nil
	}
	return "", errors.New("give a string or a number")
}
