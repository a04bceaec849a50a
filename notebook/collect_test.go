package notebook

import (
	"encoding/json"
	"testing"
)

// feed gives the collector (msg_type, content) pairs.
func feed(t *testing.T, c *Collector, msgs ...string) {
	t.Helper()
	for i := 0; i < len(msgs); i += 2 {
		if err := c.Add(msgs[i], json.RawMessage(msgs[i+1])); err != nil {
			t.Fatalf("%s %s: %v", msgs[i], msgs[i+1], err)
		}
	}
}

func TestCollectorStreamsAndResults(t *testing.T) {
	c := NewCollector()
	cell := &Cell{Type: Code, Outputs: []*Output{{Type: Stream, Name: "stdout", Text: "old"}}}
	c.Begin(cell)
	feed(t, c,
		"status", `{"execution_state": "busy"}`,
		"execute_input", `{"code": "x", "execution_count": 7}`,
		"stream", `{"name": "stdout", "text": "a\n"}`,
		"stream", `{"name": "stdout", "text": "b\n"}`,
		"stream", `{"name": "stderr", "text": "e\n"}`,
		"stream", `{"name": "stdout", "text": "c\n"}`,
		"execute_result", `{"execution_count": 7, "data": {"text/plain": "42"}, "metadata": {}}`,
		"error", `{"ename": "E", "evalue": "v", "traceback": ["t1", "t2"], "engine_info": {"engine_id": 1}}`,
	)
	if cell.ExecutionCount == nil || *cell.ExecutionCount != 7 {
		t.Fatalf("execution count %v", cell.ExecutionCount)
	}
	o := cell.Outputs
	if len(o) != 5 {
		t.Fatalf("%d outputs, want 5 (old ones dropped, consecutive stdout merged)", len(o))
	}
	if o[0].Text != "a\nb\n" || o[1].Name != "stderr" || o[2].Text != "c\n" {
		t.Fatalf("streams %q %q %q", o[0].Text, o[1].Name, o[2].Text)
	}
	if o[3].Type != ExecuteResult || *o[3].ExecutionCount != 7 || o[3].Data["text/plain"] != "42" {
		t.Fatalf("execute_result %+v", o[3])
	}
	if o[4].Type != Error || o[4].Ename != "E" || len(o[4].Traceback) != 2 || o[4].Extra != nil {
		t.Fatalf("error %+v", o[4])
	}
}

// TestCollectorDisplayUpdates: an update rewrites every output shown under
// its display_id, in earlier cells too, and a new display with the same id
// does as well.
func TestCollectorDisplayUpdates(t *testing.T) {
	c := NewCollector()
	first, second := &Cell{Type: Code}, &Cell{Type: Code}
	c.Begin(first)
	feed(t, c,
		"display_data", `{"data": {"text/plain": "v1"}, "metadata": {}, "transient": {"display_id": "d"}}`,
		"display_data", `{"data": {"text/plain": "other"}, "metadata": {}}`)
	c.Begin(second)
	feed(t, c,
		"display_data", `{"data": {"text/plain": "v2"}, "metadata": {}, "transient": {"display_id": "d"}}`,
		"update_display_data", `{"data": {"text/plain": "v3"}, "metadata": {"m": 1}, "transient": {"display_id": "d"}}`,
		"update_display_data", `{"data": {"text/plain": "nobody"}, "metadata": {}, "transient": {"display_id": "unknown"}}`)
	if got := first.Outputs[0].Data["text/plain"]; got != "v3" {
		t.Fatalf("first cell's display shows %v, want v3", got)
	}
	if got := first.Outputs[1].Data["text/plain"]; got != "other" {
		t.Fatalf("an output without the id changed: %v", got)
	}
	if len(second.Outputs) != 1 || second.Outputs[0].Data["text/plain"] != "v3" || second.Outputs[0].Metadata["m"] != json.Number("1") {
		t.Fatalf("second cell's outputs %+v", second.Outputs[0])
	}
}

func TestCollectorClearOutput(t *testing.T) {
	c := NewCollector()
	cell := &Cell{Type: Code}
	c.Begin(cell)
	feed(t, c,
		"stream", `{"name": "stdout", "text": "1"}`,
		"clear_output", `{"wait": false}`)
	if len(cell.Outputs) != 0 {
		t.Fatalf("clear_output left %d outputs", len(cell.Outputs))
	}
	feed(t, c,
		"stream", `{"name": "stdout", "text": "2"}`,
		"clear_output", `{"wait": true}`)
	if len(cell.Outputs) != 1 {
		t.Fatal("clear_output with wait cleared before the next output")
	}
	feed(t, c, "stream", `{"name": "stdout", "text": "3"}`)
	if len(cell.Outputs) != 1 || cell.Outputs[0].Text != "3" {
		t.Fatalf("after the waiting clear: %+v", cell.Outputs)
	}
}
