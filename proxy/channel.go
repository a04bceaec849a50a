package proxy

import "github.com/jupyter-guard/jupyter-guard/kernelspec"

// Channel is one of the five Jupyter kernel channels.
type Channel int

const (
	Shell Channel = iota
	Control
	Stdin
	IOPub
	HB
	numChannels
)

func (c Channel) String() string {
	return [...]string{"shell", "control", "stdin", "iopub", "hb"}[c]
}

// channelPorts are the ports of each channel in a connection file.
func channelPorts(ci kernelspec.ConnectionInfo) [numChannels]int {
	return [numChannels]int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort, ci.HBPort}
}

// accepts reports whether a frontend may send msgType on c. Anything else is
// dropped before it reaches the kernel.
func (c Channel) accepts(msgType string) bool {
	switch c {
	case Stdin:
		return msgType == "input_reply"
	case Shell, Control:
		switch msgType {
		case "comm_open", "comm_msg", "comm_close":
			return c == Shell
		}
		return repliedTo(msgType)
	}
	return false
}

// repliedTo reports whether the kernel answers msgType with a reply: the
// requests do; comm_open, comm_msg and comm_close, which share shell with
// them, never get one.
func repliedTo(msgType string) bool {
	return len(msgType) > len("_request") && msgType[len(msgType)-len("_request"):] == "_request"
}
