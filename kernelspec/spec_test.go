package kernelspec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRewriteKeepsEveryField(t *testing.T) {
	spec := readFixture(t, "ir")
	if spec.Name != "ir" || spec.Interrupt() != "message" || spec.Env["R_LIBS_USER"] != "/opt/r-libs" {
		t.Fatalf("read %+v", spec)
	}
	dir := t.TempDir()
	if err := spec.write(dir); err != nil {
		t.Fatal(err)
	}
	original, _ := os.ReadFile(filepath.Join("..", "testdata", "kernelspecs", "ir", specFile))
	rewritten, _ := os.ReadFile(filepath.Join(dir, specFile))
	if a, b := decodeExact(t, original), decodeExact(t, rewritten); !reflect.DeepEqual(a, b) {
		t.Errorf("rewrite changed the spec:\n was %v\n now %v", a, b)
	}
}

// decodeExact decodes JSON keeping numbers as written.
func decodeExact(t *testing.T, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReadSpecErrorsNameTheFile(t *testing.T) {
	for fixture, want := range map[string]string{
		"broken": "broken/kernel.json",
		"absent": "absent/kernel.json",
	} {
		_, err := ReadSpec(filepath.Join("..", "testdata", "kernelspecs", fixture))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSpec(%s) error = %v, want it to name %s", fixture, err, want)
		}
	}
}

func TestReadSpecRejectsUnknownInterruptMode(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, specFile), []byte(`{"argv": ["k"], "interrupt_mode": "poke"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSpec(dir); err == nil || !strings.Contains(err.Error(), `"poke"`) {
		t.Errorf("ReadSpec error = %v, want one about interrupt_mode \"poke\"", err)
	}
}
