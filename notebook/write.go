package notebook

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
)

// Marshal returns the notebook as nbformat.write would write it.
func (nb *Notebook) Marshal() ([]byte, error) {
	var b bytes.Buffer
	if err := pyJSON(&b, nb.tree(), 0); err != nil {
		return nil, fmt.Errorf("write notebook: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Write saves the notebook to path, replacing it only once the whole
// notebook is written, so a failure never leaves half a file.
func (nb *Notebook) Write(path string) error {
	data, err := nb.Marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write notebook: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write notebook: %w", err)
	}
	return nil
}

// tree is the notebook as decoded JSON in the shape nbformat writes:
// multiline strings split into lines, transient metadata left out.
func (nb *Notebook) tree() map[string]any {
	cells := make([]any, len(nb.Cells))
	for i, c := range nb.Cells {
		cells[i] = c.tree()
	}
	meta := maps.Clone(orEmpty(nb.Metadata))
	for _, k := range transientNotebookMetadata {
		delete(meta, k)
	}
	return with(nb.Extra, map[string]any{
		"nbformat":       nb.Format,
		"nbformat_minor": nb.FormatMinor,
		"metadata":       meta,
		"cells":          cells,
	})
}

func (c *Cell) tree() map[string]any {
	meta := maps.Clone(orEmpty(c.Metadata))
	delete(meta, transientCellMetadata)
	t := map[string]any{
		"cell_type": c.Type,
		"metadata":  meta,
		"source":    splitLines(c.Source),
	}
	if c.ID != "" {
		t["id"] = c.ID
	}
	if c.Attachments != nil {
		att := make(map[string]any, len(c.Attachments))
		for name, bundle := range c.Attachments {
			if b, ok := bundle.(map[string]any); ok {
				bundle = splitBundle(b)
			}
			att[name] = bundle
		}
		t["attachments"] = att
	}
	if c.Type == Code {
		t["execution_count"] = count(c.ExecutionCount)
		outputs := make([]any, len(c.Outputs))
		for i, o := range c.Outputs {
			outputs[i] = o.tree()
		}
		t["outputs"] = outputs
	}
	return with(c.Extra, t)
}

func (o *Output) tree() map[string]any {
	t := map[string]any{"output_type": o.Type}
	switch o.Type {
	case Stream:
		t["name"] = o.Name
		t["text"] = splitLines(o.Text)
	case DisplayData, ExecuteResult:
		t["data"] = splitBundle(orEmpty(o.Data))
		t["metadata"] = orEmpty(o.Metadata)
		if o.Type == ExecuteResult {
			t["execution_count"] = count(o.ExecutionCount)
		}
	case Error:
		tb := o.Traceback
		if tb == nil {
			tb = []string{}
		}
		t["ename"], t["evalue"], t["traceback"] = o.Ename, o.Evalue, tb
	}
	return with(o.Extra, t)
}

// with returns the kept extra fields overlaid with the modelled ones.
func with(extra, known map[string]any) map[string]any {
	out := maps.Clone(extra)
	if out == nil {
		out = make(map[string]any, len(known))
	}
	maps.Copy(out, known)
	return out
}

// count is an execution count as JSON: the number, or null.
func count(n *int) any {
	if n == nil {
		return nil
	}
	return *n
}
