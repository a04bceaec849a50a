package notebook

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPyFloat(t *testing.T) {
	cases := map[float64]string{
		1e16: "1e+16", 1e15: "1000000000000000.0", 0.0001: "0.0001", 0.00001: "1e-05",
		1.5: "1.5", math.Copysign(0, -1): "-0.0", 0: "0.0", 123456789012345678: "1.2345678901234568e+17",
		1.25e-7: "1.25e-07", 100: "100.0", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308",
		0.1: "0.1", -12345.678: "-12345.678", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity",
	}
	for f, want := range cases {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// TestPyFloatMatchesPython compares with Python's repr on random floats of
// every magnitude.
func TestPyFloatMatchesPython(t *testing.T) {
	py := testPython(t)
	r := rand.New(rand.NewPCG(1, 2))
	var in []string
	var floats []float64
	for range 2000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		floats = append(floats, f)
		in = append(in, strconv.FormatFloat(f, 'g', -1, 64))
	}
	cmd := exec.Command(py, "-c", "import sys\nfor l in sys.stdin: print(repr(float(l)))")
	cmd.Stdin = strings.NewReader(strings.Join(in, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, f := range floats {
		if got := pyFloat(f); got != want[i] {
			t.Fatalf("pyFloat(%s) = %s, Python says %s", in[i], got, want[i])
		}
	}
}

func TestPyNumberKeepsIntegers(t *testing.T) {
	for in, want := range map[string]string{
		"123456789012345678901234567890": "123456789012345678901234567890",
		"-0":                             "0", "1E2": "100.0", "1e400": "Infinity", "-1e400": "-Infinity", "2.50": "2.5",
	} {
		if got, err := pyNumber(json.Number(in)); err != nil || got != want {
			t.Errorf("pyNumber(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestPyString(t *testing.T) {
	var b bytes.Buffer
	pyString(&b, "a\"\\\n\r\t\b\f\x01\x1f\x7f é \u2028 <&>")
	if want := `"a\"\\\n\r\t\b\f\u0001\u001f` + "\x7f é \u2028 <&>\""; b.String() != want {
		t.Fatalf("got %s, want %s", b.String(), want)
	}
}

func TestSplitLines(t *testing.T) {
	cases := map[string][]string{
		"":                                 {},
		"a":                                {"a"},
		"a\n":                              {"a\n"},
		"a\r\nb\rc\n":                      {"a\r\n", "b\r", "c\n"},
		"x\vy\fz\x1cw\u0085v\u2028u\u2029": {"x\v", "y\f", "z\x1c", "w\u0085", "v\u2028", "u\u2029"},
		"\n\n":                             {"\n", "\n"},
	}
	for in, want := range cases {
		if got := splitLines(in); !slices.Equal(got, want) {
			t.Errorf("splitLines(%q) = %q, want %q", in, got, want)
		}
	}
}
