package kernelspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultProvisionerVar names the provisioner jupyter_client uses for specs
// that name none, when no Jupyter config sets
// KernelProvisionerFactory.default_provisioner_name: the one switch that
// reaches jupyter console, nbclient, nbconvert and papermill. They make
// jupyter_client's provisioner factory, a singleton, before their config
// reaches it (console: its KernelSpecManager, which has no parent) or
// without any (nbclient's KernelManager has no parent); only jupyter
// server gives it its config.
const DefaultProvisionerVar = "JUPYTER_DEFAULT_PROVISIONER_NAME"

// The setting guardctl install --all writes, in ConfigFile.
const (
	ProvisionerSection = "KernelProvisionerFactory"
	ProvisionerKey     = "default_provisioner_name"
)

// ConfigFile is the Jupyter config file of the environment at prefix that
// every Jupyter application there loads (jupyter_core's
// {sys.prefix}/etc/jupyter/jupyter_config.json): where install --all makes
// jupyter-guard the default provisioner.
func ConfigFile(prefix string) string {
	return filepath.Join(prefix, "etc", "jupyter", "jupyter_config.json")
}

// ProvisionerFacts is what a Jupyter environment says about provisioners.
type ProvisionerFacts struct {
	// Registered: jupyter_client there has provisioners, and jupyter-guard's
	// is registered (pip installed jupyter-guard into that environment).
	Registered bool `json:"registered"`
	// Default is KernelProvisionerFactory.default_provisioner_name as
	// jupyter server loads it from its config files ("" when none sets
	// it), and ConfigFiles the files it loaded.
	Default     string   `json:"default"`
	ConfigFiles []string `json:"config_files"`
}

// provisionerScript asks Jupyter itself, so that its config path, .py
// config files included, need not be mirrored here: a JupyterApp named as
// jupyter server is loads jupyter_config and jupyter_server_config.
const provisionerScript = `
import json
facts = {"registered": False, "default": "", "config_files": []}
try:
    import jupyter_client.provisioning
    from importlib.metadata import entry_points
    eps = entry_points()
    group = eps.select(group="jupyter_client.kernel_provisioners") if hasattr(eps, "select") else eps.get("jupyter_client.kernel_provisioners", [])
    facts["registered"] = any(ep.name == %q for ep in group)
except ImportError:
    pass
from jupyter_core.application import JupyterApp
class Server(JupyterApp):
    name = "jupyter-server"
app = Server()
app.load_config_file()
facts["default"] = app.config.KernelProvisionerFactory.get("default_provisioner_name") or ""
facts["config_files"] = app.loaded_config_files
print(json.dumps(facts))
`

// ProbeProvisioner runs py's interpreter to learn whether jupyter-guard's
// provisioner is installed there and what its Jupyter server takes as the
// default provisioner.
func ProbeProvisioner(py Python) (ProvisionerFacts, error) {
	if py.Executable == "" {
		return ProvisionerFacts{}, errors.New("no Python found that runs Jupyter; name it with --python")
	}
	out, err := runScript(py.Executable, fmt.Sprintf(provisionerScript, ProvisionerName))
	if err != nil {
		return ProvisionerFacts{}, fmt.Errorf("asking about kernel provisioners: %w", err)
	}
	var facts ProvisionerFacts
	if err := json.Unmarshal(out, &facts); err != nil {
		return ProvisionerFacts{}, fmt.Errorf("asking %s about kernel provisioners: unexpected answer %q", py.Executable, out)
	}
	return facts, nil
}

// GuardedByDefault says whether Jupyter's default provisioner, as facts
// and the environment give it, is jupyter-guard's, and by what: the config
// (which wins) or the variable.
func GuardedByDefault(facts ProvisionerFacts) (bool, string) {
	switch {
	case facts.Default != "":
		return facts.Default == ProvisionerName, "Jupyter's config"
	case os.Getenv(DefaultProvisionerVar) != "":
		return os.Getenv(DefaultProvisionerVar) == ProvisionerName, DefaultProvisionerVar
	}
	return false, ""
}
