// Package child runs the real kernel as the proxy's child: in a process
// group of its own (so signals reach it and its workers exactly once), with
// a parent-death signal (so it dies with the proxy even if the proxy is
// SIGKILLed), and with its output teed to whoever wants to read it.
package child
