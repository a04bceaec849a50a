package supervisor

import (
	"log"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// Config is what one guarded kernel needs to run.
type Config struct {
	ConnFile string // Jupyter's connection file
	Conn     kernelspec.ConnectionInfo
	// Argv is the wrapped kernel's command line, placeholders and all.
	Argv        []string
	Env         []string // added to the proxy's own environment for the child
	ResourceDir string
	// InterruptMode is the wrapped kernel's: "signal" or "message".
	InterruptMode string
	// RuntimeDir (Jupyter's) holds the child's private connection file and
	// the control socket.
	RuntimeDir string
	// Keeper runs this program's keeper command (child.Keep), which ends the
	// kernel's processes when the proxy is gone; nil runs none.
	Keeper []string

	// Guard is the memory guard's settings, and the death-loop rule:
	// MaxRestarts deaths within RestartWindow stop the restarts.
	Guard config.Config

	// Log is what matters to whoever reads Jupyter's log; Debug (nil:
	// nothing) is the rest, such as the start-up lines, which guardctl
	// status also shows. A normal start and shutdown write nothing to Log.
	Log, Debug *log.Logger
}
