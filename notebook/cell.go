package notebook

import (
	"fmt"
)

// decodeCell reads the i-th cell (counted from 0; errors count from 1, as
// people do).
func decodeCell(v any, i int) (*Cell, error) {
	f, err := object(v, fmt.Sprintf("cell %d", i+1))
	if err != nil {
		return nil, err
	}
	c := &Cell{}
	if _, has := f.m["id"]; has {
		if c.ID, err = f.str("id"); err != nil {
			return nil, err
		}
		f.where += fmt.Sprintf(" (id %q)", c.ID)
	}
	if c.Type, err = f.str("cell_type"); err != nil {
		return nil, err
	}
	switch c.Type {
	case Code, Markdown, Raw:
	default:
		return nil, f.errorf("unknown cell_type %q (expected code, markdown or raw)", c.Type)
	}
	if c.Source, err = f.text("source"); err != nil {
		return nil, err
	}
	if c.Metadata, err = f.obj("metadata"); err != nil {
		return nil, err
	}
	c.Metadata = orEmpty(c.Metadata)
	if c.Attachments, err = attachments(f); err != nil {
		return nil, err
	}
	if c.Type == Code {
		if c.ExecutionCount, err = f.count("execution_count"); err != nil {
			return nil, err
		}
		outputs, err := f.list("outputs")
		if err != nil {
			return nil, err
		}
		c.Outputs = []*Output{}
		for j, o := range outputs {
			out, err := decodeOutput(o, fmt.Sprintf("%s, output %d", f.where, j+1))
			if err != nil {
				return nil, err
			}
			c.Outputs = append(c.Outputs, out)
		}
	}
	c.Extra = f.rest()
	return c, nil
}

// attachments reads a cell's attachments: file name → mime bundle, whose
// lists of lines are joined as nbformat does.
func attachments(f *fields) (map[string]any, error) {
	att, err := f.obj("attachments")
	if err != nil || att == nil {
		return nil, err
	}
	for name, bundle := range att {
		b, ok := bundle.(map[string]any)
		if !ok {
			return nil, f.errorf("attachment %q must be an object of mime type → data, found %s", name, kind(bundle))
		}
		joinBundle(b)
	}
	return att, nil
}

// decodeOutput reads one output of a code cell.
func decodeOutput(v any, where string) (*Output, error) {
	f, err := object(v, where)
	if err != nil {
		return nil, err
	}
	o := &Output{}
	if o.Type, err = f.str("output_type"); err != nil {
		return nil, err
	}
	switch o.Type {
	case Stream:
		if o.Name, err = f.str("name"); err != nil {
			return nil, err
		}
		o.Text, err = f.text("text")
	case DisplayData, ExecuteResult:
		err = o.decodeDisplay(f)
	case Error:
		err = o.decodeError(f)
	default:
		err = f.errorf("unknown output_type %q (expected stream, display_data, execute_result or error)", o.Type)
	}
	if err != nil {
		return nil, err
	}
	o.Extra = f.rest()
	return o, nil
}

func (o *Output) decodeDisplay(f *fields) (err error) {
	if o.Data, err = f.obj("data"); err != nil {
		return err
	}
	o.Data = orEmpty(o.Data)
	joinBundle(o.Data)
	if o.Metadata, err = f.obj("metadata"); err != nil {
		return err
	}
	o.Metadata = orEmpty(o.Metadata)
	if o.Type == ExecuteResult {
		o.ExecutionCount, err = f.count("execution_count")
	}
	return err
}

func (o *Output) decodeError(f *fields) (err error) {
	if o.Ename, err = f.str("ename"); err != nil {
		return err
	}
	if o.Evalue, err = f.str("evalue"); err != nil {
		return err
	}
	tb, err := f.list("traceback")
	if err != nil {
		return err
	}
	o.Traceback = make([]string, len(tb))
	for i, line := range tb {
		s, ok := line.(string)
		if !ok {
			return f.errorf("traceback line %d must be a string, found %s", i+1, kind(line))
		}
		o.Traceback[i] = s
	}
	return nil
}
