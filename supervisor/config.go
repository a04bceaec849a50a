package supervisor

import (
	"log"
	"time"

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

	// MaxDeaths deaths within DeathWindow stop the restarts.
	MaxDeaths   int
	DeathWindow time.Duration

	Log *log.Logger
}
