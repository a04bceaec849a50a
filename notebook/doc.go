// Package notebook reads and writes Jupyter notebooks (nbformat v4) the way
// the Python nbformat package does, and turns a kernel's iopub messages into
// cell outputs the way Jupyter's frontends do.
//
// Reading keeps everything: fields this package does not model stay in each
// value's Extra, and metadata, attachments and mime bundles are held as
// decoded JSON whose numbers keep their text (json.Number). Writing is
// nbformat.write's: sorted keys, one-space indent, multiline strings split
// into lists of lines, a trailing newline. A notebook read and written
// unchanged is therefore byte for byte what nbformat would have written.
//
// Decoded JSON is used rather than json.RawMessage because nbformat
// reformats everything it writes (key order, indentation, number spelling):
// bytes kept verbatim would not match it.
package notebook
