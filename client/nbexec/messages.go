package nbexec

import (
	"encoding/json"
	"time"

	"github.com/jupyter-guard/jupyter-guard/client"
)

// executionState is a status message's execution_state.
func executionState(m *client.Message) string {
	var s struct {
		State string `json:"execution_state"`
	}
	_ = json.Unmarshal(m.Content, &s) // a malformed status is no state
	return s.State
}

// timestamp renders a message date as nbclient records it in
// metadata.execution: UTC with microseconds and a Z. A date the kernel
// did not send, or sent unreadable, is now, as in nbclient.
func timestamp(date string) string {
	t, err := time.Parse(time.RFC3339Nano, date)
	if err != nil {
		t = time.Now()
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
