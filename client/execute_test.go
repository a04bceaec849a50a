package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// run executes code and returns the reply and the iopub messages.
func run(t *testing.T, k *Kernel, code string, opts ExecuteOptions) (*Reply, []*Message) {
	t.Helper()
	var msgs []*Message
	reply, err := k.Client.Execute(testCtx(t), code, opts, func(m *Message) { msgs = append(msgs, m) })
	if err != nil {
		t.Fatalf("execute %q: %v", code, err)
	}
	return reply, msgs
}

// outputs keeps the messages of the given types.
func outputs(msgs []*Message, types ...string) []*Message {
	var out []*Message
	for _, m := range msgs {
		for _, ty := range types {
			if m.Header.MsgType == ty {
				out = append(out, m)
			}
		}
	}
	return out
}

func content(t *testing.T, m *Message) map[string]any {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(m.Content, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExecute(t *testing.T) {
	modes(t, func(t *testing.T, spec *kernelspec.KernelSpec) {
		k := launch(t, spec)

		t.Run("streams and result", func(t *testing.T) {
			reply, msgs := run(t, k, "import sys\nprint('out')\nprint('err', file=sys.stderr)\n6*7", ExecuteOptions{})
			if reply.Status != "ok" || reply.ExecutionCount < 1 {
				t.Fatalf("reply %+v", reply)
			}
			text := map[string]string{}
			for _, m := range outputs(msgs, "stream") {
				c := content(t, m)
				text[c["name"].(string)] += c["text"].(string)
			}
			if text["stdout"] != "out\n" || text["stderr"] != "err\n" {
				t.Fatalf("streams %q", text)
			}
			res := outputs(msgs, "execute_result")
			if len(res) != 1 || content(t, res[0])["data"].(map[string]any)["text/plain"] != "42" {
				t.Fatalf("execute_result %v", res)
			}
			if last := msgs[len(msgs)-1]; !isIdle(last) {
				t.Fatalf("the last iopub message is %s, not idle", last.Header.MsgType)
			}
		})

		t.Run("error", func(t *testing.T) {
			reply, msgs := run(t, k, "1/0", ExecuteOptions{})
			if reply.Status != "error" || reply.Ename != "ZeroDivisionError" {
				t.Fatalf("reply %+v", reply)
			}
			if errs := outputs(msgs, "error"); len(errs) != 1 || content(t, errs[0])["evalue"] != "division by zero" {
				t.Fatalf("error outputs %v", errs)
			}
		})

		t.Run("display and update", func(t *testing.T) {
			code := "from IPython.display import display, update_display\n" +
				"display('first', display_id='d1')\nupdate_display('second', display_id='d1')"
			_, msgs := run(t, k, code, ExecuteOptions{})
			shown, updated := outputs(msgs, "display_data"), outputs(msgs, "update_display_data")
			if len(shown) != 1 || len(updated) != 1 {
				t.Fatalf("%d display_data, %d update_display_data", len(shown), len(updated))
			}
			c := content(t, updated[0])
			if c["transient"].(map[string]any)["display_id"] != "d1" || c["data"].(map[string]any)["text/plain"] != "'second'" {
				t.Fatalf("update %v", c)
			}
		})

		t.Run("input refused", func(t *testing.T) {
			reply, _ := run(t, k, "input('name? ')", ExecuteOptions{})
			if reply.Status != "error" || reply.Ename != "StdinNotImplementedError" {
				t.Fatalf("reply %+v", reply)
			}
		})

		t.Run("input answered", func(t *testing.T) {
			var prompts []string
			opts := ExecuteOptions{Input: func(r InputRequest) (string, error) {
				prompts = append(prompts, r.Prompt)
				return "Ada", nil
			}}
			reply, msgs := run(t, k, "print('hello ' + input('name? '))", opts)
			if reply.Status != "ok" || len(prompts) != 1 || prompts[0] != "name? " {
				t.Fatalf("reply %+v, prompts %q", reply, prompts)
			}
			var out string
			for _, m := range outputs(msgs, "stream") {
				out += content(t, m)["text"].(string)
			}
			if !strings.Contains(out, "hello Ada") {
				t.Fatalf("stdout %q", out)
			}
		})

		t.Run("20 MB output", func(t *testing.T) {
			const size = 20 << 20
			_, msgs := run(t, k, "from IPython.display import display\n"+
				"display({'text/plain': 'x' * 20971520}, raw=True)", ExecuteOptions{})
			shown := outputs(msgs, "display_data")
			if len(shown) != 1 {
				t.Fatalf("%d display_data messages", len(shown))
			}
			if got := content(t, shown[0])["data"].(map[string]any)["text/plain"].(string); len(got) != size || strings.Trim(got, "x") != "" {
				t.Fatalf("got %d bytes, want %d x's", len(got), size)
			}
		})
	})
}
