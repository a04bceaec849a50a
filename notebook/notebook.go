package notebook

import (
	"encoding/json"
	"fmt"
)

// Cell types of nbformat v4.
const (
	Code     = "code"
	Markdown = "markdown"
	Raw      = "raw"
)

// Output types of nbformat v4.
const (
	Stream        = "stream"
	DisplayData   = "display_data"
	ExecuteResult = "execute_result"
	Error         = "error"
)

// Notebook is one .ipynb file. JSON objects and arrays below it are held as
// map[string]any and []any with json.Number for numbers.
type Notebook struct {
	Format      int // nbformat: always 4
	FormatMinor int // nbformat_minor
	Metadata    map[string]any
	Cells       []*Cell
	// Extra holds top-level fields nbformat v4 does not define.
	Extra map[string]any
}

// Cell is one cell. ExecutionCount and Outputs belong to code cells only.
type Cell struct {
	ID       string // "" when the notebook predates cell ids (nbformat < 4.5)
	Type     string // Code, Markdown or Raw
	Source   string
	Metadata map[string]any
	// Attachments maps a file name to its mime bundle; nil when the cell
	// has none.
	Attachments    map[string]any
	ExecutionCount *int // nil is null: never run
	Outputs        []*Output
	Extra          map[string]any
}

// Output is one output of a code cell. Which fields apply depends on Type.
type Output struct {
	Type string

	Name string // Stream: stdout or stderr
	Text string // Stream

	Data           map[string]any // DisplayData, ExecuteResult: mime type → value
	Metadata       map[string]any // DisplayData, ExecuteResult
	ExecutionCount *int           // ExecuteResult

	Ename     string   // Error
	Evalue    string   // Error
	Traceback []string // Error

	Extra map[string]any
}

// KernelName is metadata.kernelspec.name: the kernel the notebook was
// written for, or "" when it names none.
func (nb *Notebook) KernelName() string {
	spec, _ := nb.Metadata["kernelspec"].(map[string]any)
	name, _ := spec["name"].(string)
	return name
}

// SetMetadata sets the notebook metadata key to the JSON value raw, as
// nbclient does with the kernel's language_info.
func (nb *Notebook) SetMetadata(key string, raw json.RawMessage) error {
	v, err := decodeJSON(raw)
	if err != nil {
		return fmt.Errorf("notebook metadata %q: %w", key, err)
	}
	if nb.Metadata == nil {
		nb.Metadata = map[string]any{}
	}
	nb.Metadata[key] = v
	return nil
}
