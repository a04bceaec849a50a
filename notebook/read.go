package notebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Read reads an .ipynb file. Errors name the file and say what is wrong and
// where: the line and column of bad JSON, the cell and output of a bad
// field.
func Read(path string) (*Notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read notebook: %w", err)
	}
	nb, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nb, nil
}

// Parse reads a notebook from its JSON, as nbformat.reads(data, 4) does:
// multiline strings joined, transient metadata dropped, and from nbformat
// 4.5 on missing or repeated cell ids replaced by fresh ones.
func Parse(data []byte) (*Notebook, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("the file is empty, not a notebook")
	}
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	f, err := object(v, "notebook")
	if err != nil {
		return nil, err
	}
	nb := &Notebook{}
	if nb.Format, err = version(f); err != nil {
		return nil, err
	}
	minor, err := f.count("nbformat_minor")
	if err != nil {
		return nil, err
	}
	if minor == nil {
		return nil, f.errorf(`no "nbformat_minor"`)
	}
	nb.FormatMinor = *minor
	if nb.Metadata, err = f.obj("metadata"); err != nil {
		return nil, err
	}
	nb.Metadata = orEmpty(nb.Metadata)
	cells, ok := f.take("cells")
	if !ok {
		return nil, f.errorf(`no "cells"`)
	}
	list, ok := cells.([]any)
	if !ok {
		return nil, f.errorf(`"cells" must be a list, found %s`, kind(cells))
	}
	for i, raw := range list {
		c, err := decodeCell(raw, i)
		if err != nil {
			return nil, err
		}
		nb.Cells = append(nb.Cells, c)
	}
	nb.Extra = f.rest()
	stripTransient(nb)
	if nb.FormatMinor >= 5 {
		repairIDs(nb.Cells)
	}
	return nb, nil
}

// version reads nbformat and refuses anything but 4, the one version this
// package writes.
func version(f *fields) (int, error) {
	v, ok := f.take("nbformat")
	if !ok {
		return 0, f.errorf(`no "nbformat": this is not a Jupyter notebook`)
	}
	n, ok := v.(json.Number)
	major, err := n.Int64()
	if !ok || err != nil {
		return 0, f.errorf(`"nbformat" must be an integer, found %s`, kind(v))
	}
	switch {
	case major < 4:
		return 0, f.errorf("nbformat %d is too old: only version 4 is read; upgrade it with "+
			"`jupyter nbconvert --to notebook --nbformat 4 --output NEW.ipynb OLD.ipynb`", major)
	case major > 4:
		return 0, f.errorf("nbformat %d is newer than version 4, the only one this guardctl reads", major)
	}
	return int(major), nil
}

// Transient metadata, which nbformat drops on reading and on writing.
var (
	transientNotebookMetadata = []string{"orig_nbformat", "orig_nbformat_minor", "signature"}
	transientCellMetadata     = "trusted"
)

func stripTransient(nb *Notebook) {
	for _, k := range transientNotebookMetadata {
		delete(nb.Metadata, k)
	}
	for _, c := range nb.Cells {
		delete(c.Metadata, transientCellMetadata)
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
