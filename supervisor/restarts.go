package supervisor

import (
	"bytes"
	"os"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
)

// restartsOf resolves config.RestartAuto: the proxy restarts a kernel
// that died when a Jupyter server started it for a notebook, since the
// server would restart it anyway and its user keeps the session that way;
// anywhere else (nbclient, papermill, nbconvert, jupyter console) the
// death is the client's to handle, as a plain kernel's is.
func restartsOf(r config.Restart) config.Restart {
	if r != config.RestartAuto {
		return r
	}
	if startedByServer(os.Getenv("JPY_SESSION_NAME"), os.Getppid()) {
		return config.RestartGuard
	}
	return config.RestartClient
}

// headless resolves config.HeadlessAuto: a person can answer a pause in a
// notebook or console that a Jupyter server started the kernel for (it
// sets JPY_SESSION_NAME); nbclient, papermill and nbconvert have nobody
// to. Unlike restartsOf it takes a client run from a notebook's cell,
// which inherits the variable, for attended: a pause there that nobody
// answers ends after --pause-timeout, at the ceiling, rather than a
// person's pause being taken away.
func headless(h config.Headless) bool {
	if h != config.HeadlessAuto {
		return h == config.HeadlessOn
	}
	return os.Getenv("JPY_SESSION_NAME") == ""
}

// startedByServer tells whether the proxy's parent is a Jupyter server
// that started it for a notebook: jupyter_server gives each kernel of a
// session JPY_SESSION_NAME, the notebook's path, which the server's own
// environment lacks. A client run from inside a notebook (papermill in a
// cell) inherits the variable from its kernel, and so has it itself.
func startedByServer(session string, parent int) bool {
	if session == "" {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(parent) + "/environ")
	if err != nil {
		return true // not ours to read: trust the variable
	}
	return !bytes.Contains(append([]byte{0}, env...), []byte("\x00JPY_SESSION_NAME="+session+"\x00"))
}
