package notebook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformedNotebooks: each broken notebook gives one error that says
// what is wrong and where.
func TestMalformedNotebooks(t *testing.T) {
	cases := []struct {
		name, json string
		want       []string // all must appear in the error
	}{
		{"bad JSON", "{\"nbformat\": 4,\n \"cells\": [\n  {\"cell_type\": \"code\",,}]}",
			[]string{"invalid JSON at line 3, column 24", "invalid character ','"}},
		{"bad JSON after NaN", "{\"a\": NaN, \"b\": NaN ]}",
			[]string{"line 1, column 21"}},
		{"truncated", "{\"nbformat\": 4, \"cells\": [",
			[]string{"line 1, column 27", "ends before"}},
		{"trailing data", "{\"nbformat\": 4}\n}",
			[]string{"line 2, column 1", "more data"}},
		{"empty", "  \n", []string{"empty"}},
		{"not an object", "[1, 2]", []string{"notebook: expected a JSON object, found a list"}},
		{"not a notebook", `{"cells": []}`, []string{`no "nbformat"`}},
		{"nbformat 3", `{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}`,
			[]string{"nbformat 3 is too old", "nbconvert --to notebook --nbformat 4"}},
		{"nbformat 5", `{"nbformat": 5, "nbformat_minor": 0, "cells": []}`, []string{"nbformat 5 is newer"}},
		{"no minor", `{"nbformat": 4, "cells": []}`, []string{`no "nbformat_minor"`}},
		{"no cells", `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}`, []string{`no "cells"`}},
		{"cell without type", `{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
			{"id": "a", "cell_type": "raw", "metadata": {}, "source": ""},
			{"id": "b", "metadata": {}, "source": "x"}]}`,
			[]string{`cell 2 (id "b"): no "cell_type"`}},
		{"unknown cell type", `{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{"cell_type": "heading", "metadata": {}, "source": ""}]}`,
			[]string{`cell 1: unknown cell_type "heading"`}},
		{"source is a number", `{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{"cell_type": "code", "metadata": {}, "source": 42, "outputs": [], "execution_count": null}]}`,
			[]string{`cell 1: "source" must be a string or a list of strings, found the number 42`}},
		{"output without type", `{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{"cell_type": "code", "metadata": {}, "source": "", "execution_count": 1,
			"outputs": [{"name": "stdout", "output_type": "stream", "text": ""}, {"name": "stdout", "text": "x"}]}]}`,
			[]string{`cell 1, output 2: no "output_type"`}},
		{"fractional count", `{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{"cell_type": "code", "metadata": {}, "source": "", "execution_count": 1.5, "outputs": []}]}`,
			[]string{`cell 1: "execution_count" must be an integer or null, found the number 1.5`}},
		{"metadata not an object", `{"nbformat": 4, "nbformat_minor": 4, "metadata": [], "cells": []}`,
			[]string{`notebook: "metadata" must be an object, found a list`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "broken.ipynb")
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			if err == nil {
				t.Fatal("read without an error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") {
				t.Errorf("error does not name the file: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}
