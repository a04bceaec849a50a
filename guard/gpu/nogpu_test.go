package gpu

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// openInChildEnv makes the test binary open the real NVML, use and close the
// meter twice over, print what it got and exit 0 — if it is still alive.
const openInChildEnv = "GPU_TEST_OPEN_IN_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(openInChildEnv) != "" {
		for range 2 { // the proxy may reopen after a kernel restart
			meter := Open("")
			u, uerr := meter.Usage([]int{os.Getpid()})
			cerr := meter.Close()
			fmt.Printf("%T|%+v|%d|%v|%v\n", meter, meter, len(u.GPUs), uerr, cerr)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestOpenWithoutAGPUSurvives(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), openInChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the process opening NVML died: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "*gpu.nvmlMeter") {
			t.Skipf("this machine has a GPU: %s", line)
		}
		if !strings.HasPrefix(line, "gpu.NoGPU|{Reason:") || !strings.HasSuffix(line, "|0|<nil>|<nil>\n") {
			t.Errorf("Open, Usage, Close in a child: %q; want a NoGPU with a reason, no GPUs and no errors", line)
		}
	}
	t.Logf("%s", out)
}

func TestOpenWithoutAGPU(t *testing.T) {
	meter := Open("")
	defer meter.Close()
	none, ok := meter.(NoGPU)
	if !ok {
		t.Skipf("this machine has a GPU: %T", meter)
	}
	if none.Reason == "" {
		t.Error("NoGPU gives no reason")
	}
	if strings.HasPrefix(none.Reason, "no NVIDIA driver library") && none.Expected != hinted() {
		t.Errorf("NoGPU %+v: Expected is not what the machine hints (%v)", none, hinted())
	}
	if u, err := meter.Usage([]int{os.Getpid()}); err != nil || u.Total != 0 || len(u.GPUs) != 0 {
		t.Errorf("Usage without a GPU = %+v, %v; want nothing", u, err)
	}
}
