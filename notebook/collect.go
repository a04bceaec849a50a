package notebook

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Collector turns the iopub messages of running cells into their outputs,
// as nbclient and JupyterLab do: consecutive stream messages of one name
// become one output, update_display_data (and any later output with the
// same display_id) rewrites every earlier output carrying that display_id,
// in any cell, and clear_output clears the cell at once or, with wait, just
// before its next output.
type Collector struct {
	cell *Cell
	// clearPending is a clear_output with wait=True not yet carried out.
	clearPending bool
	// displays are the outputs shown under each display_id so far.
	displays map[string][]*Output
}

// NewCollector returns a Collector for one notebook run; display ids are
// tracked across all the cells it is given.
func NewCollector() *Collector {
	return &Collector{displays: map[string][]*Output{}}
}

// Begin starts collecting into cell, whose old outputs are dropped.
func (c *Collector) Begin(cell *Cell) {
	c.cell = cell
	c.clearPending = false
	cell.Outputs = []*Output{}
}

// Add applies one iopub message of the current cell. Message types that
// do not change outputs (status, execute_input, comms) are ignored, but an
// execution_count in any of them is recorded on the cell, as nbclient does.
func (c *Collector) Add(msgType string, content json.RawMessage) error {
	switch msgType {
	case Stream, DisplayData, ExecuteResult, Error, "update_display_data", "clear_output", "execute_input":
	default:
		return nil
	}
	if c.cell == nil {
		return fmt.Errorf("%s message before any cell began", msgType)
	}
	v, err := decodeJSON(content)
	if err != nil {
		return fmt.Errorf("%s message: %w", msgType, err)
	}
	where := msgType + " message"
	f, err := object(v, where)
	if err != nil {
		return err
	}
	if _, has := f.m["execution_count"]; has {
		n, err := f.count("execution_count")
		if err != nil {
			return err
		}
		c.cell.ExecutionCount = n
	}
	msg := v.(map[string]any) // object has checked it is one
	id := displayID(msg["transient"])

	switch msgType {
	case "clear_output":
		if wait, _ := msg["wait"].(bool); wait {
			c.clearPending = true
		} else {
			c.cell.Outputs = []*Output{}
		}
	case "update_display_data":
		if id != "" {
			out, err := output(DisplayData, msg, where)
			if err != nil {
				return err
			}
			c.update(id, out)
		}
	case Stream, DisplayData, ExecuteResult, Error:
		out, err := output(msgType, msg, where)
		if err != nil {
			return err
		}
		if id != "" {
			c.update(id, out)
		}
		c.append(out, id)
	}
	return nil
}

// output builds an output from message content, which has the output's
// own field names; what else the message carries (transient, engine_info)
// is not part of the notebook.
func output(outputType string, content map[string]any, where string) (*Output, error) {
	m := maps.Clone(content)
	m["output_type"] = outputType
	o, err := decodeOutput(m, where)
	if err != nil {
		return nil, err
	}
	o.Extra = nil
	return o, nil
}

// update rewrites the data and metadata of the outputs shown under id.
func (c *Collector) update(id string, out *Output) {
	for _, o := range c.displays[id] {
		o.Data, o.Metadata = out.Data, out.Metadata
	}
}

// append adds out to the cell, first carrying out a waiting clear_output.
func (c *Collector) append(out *Output, id string) {
	if c.clearPending {
		c.cell.Outputs = []*Output{}
		c.clearPending = false
	}
	outs := c.cell.Outputs
	if n := len(outs); out.Type == Stream && n > 0 && outs[n-1].Type == Stream && outs[n-1].Name == out.Name {
		outs[n-1].Text += out.Text
		return
	}
	c.cell.Outputs = append(outs, out)
	if id != "" {
		c.displays[id] = append(c.displays[id], out)
	}
}

// displayID is content.transient.display_id, "" when there is none.
func displayID(transient any) string {
	t, _ := transient.(map[string]any)
	id, _ := t["display_id"].(string)
	return id
}
