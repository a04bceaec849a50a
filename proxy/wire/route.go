package wire

import "strings"

// Channel is one of a kernel's five channels, the same number for the
// proxy, the transport under it and the client.
type Channel uint8

const (
	Shell Channel = iota
	Control
	Stdin
	IOPub
	HB
	NumChannels
)

func (c Channel) String() string {
	return [...]string{"shell", "control", "stdin", "iopub", "hb"}[c]
}

// Kind is a msg_type, classified once, when its header is decoded, by the
// one table below; the proxy, the supervisor and the client route on it.
type Kind uint8

const (
	Other        Kind = iota // forwarded, never looked at
	OtherRequest             // a request no one here steers: complete_request, debug_request…
	OtherReply
	ExecuteRequest
	ExecuteReply
	ExecuteInput
	KernelInfoRequest
	KernelInfoReply
	InterruptRequest
	ShutdownRequest
	UsageRequest
	Status
	Stream
	Error
	CommOpen
	CommMsg
	CommClose
	InputRequest
	InputReply
	IOPubWelcome
	numKinds
)

// A route is what the proxy knows of a msg_type: its name, the channels a
// frontend may send it on, and whether the kernel answers it with a reply.
type route struct {
	name    string
	from    channels
	replied bool
}

type channels uint8

func on(cs ...Channel) (set channels) {
	for _, c := range cs {
		set |= 1 << c
	}
	return set
}

// routes is the table. Requests go on shell or control and get a reply;
// comm messages go on shell and get none (Jupyter's protocol: "comm
// messages are one-way"); input_reply is the one message a frontend sends
// on stdin. What comes from the kernel is forwarded whatever its type.
var routes = [numKinds]route{
	Other:             {},
	OtherRequest:      {from: on(Shell, Control), replied: true},
	OtherReply:        {},
	ExecuteRequest:    {"execute_request", on(Shell, Control), true},
	ExecuteReply:      {name: "execute_reply"},
	ExecuteInput:      {name: "execute_input"},
	KernelInfoRequest: {"kernel_info_request", on(Shell, Control), true},
	KernelInfoReply:   {name: "kernel_info_reply"},
	InterruptRequest:  {"interrupt_request", on(Shell, Control), true},
	ShutdownRequest:   {"shutdown_request", on(Shell, Control), true},
	UsageRequest:      {"usage_request", on(Shell, Control), true},
	Status:            {name: "status"},
	Stream:            {name: "stream"},
	Error:             {name: "error"},
	CommOpen:          {"comm_open", on(Shell), false},
	CommMsg:           {"comm_msg", on(Shell), false},
	CommClose:         {"comm_close", on(Shell), false},
	InputRequest:      {name: "input_request"},
	InputReply:        {"input_reply", on(Stdin), false},
	IOPubWelcome:      {name: "iopub_welcome"},
}

var kindOf = func() map[string]Kind {
	m := map[string]Kind{}
	for k, r := range routes {
		if r.name != "" {
			m[r.name] = Kind(k)
		}
	}
	return m
}()

// KindOf classifies a msg_type.
func KindOf(msgType string) Kind {
	if k, ok := kindOf[msgType]; ok {
		return k
	}
	switch {
	case len(msgType) > len("_request") && strings.HasSuffix(msgType, "_request"):
		return OtherRequest
	case strings.HasSuffix(msgType, "_reply"):
		return OtherReply
	}
	return Other
}

// Replied reports whether the kernel answers a message of kind k.
func (k Kind) Replied() bool { return routes[k].replied }

// Accepted reports whether a frontend may send a message of kind k on ch;
// the proxy drops anything else before it reaches the kernel.
func (k Kind) Accepted(ch Channel) bool { return routes[k].from&(1<<ch) != 0 }

// ReplyType is the msg_type of the reply to a request ("execute_reply").
func ReplyType(requestType string) string {
	return strings.TrimSuffix(requestType, "_request") + "_reply"
}
