package kernelspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key pair from the CurveZMQ documentation.
const curvePublic, curveSecret = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID", "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"

func writeConnFile(t *testing.T, curve string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kernel.json")
	data := `{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 1, "key": "k"` + curve + `}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConnectionFileWithCurveKeys(t *testing.T) {
	ci, err := ReadConnectionFile(writeConnFile(t, `, "curve_publickey": "`+curvePublic+`", "curve_secretkey": "`+curveSecret+`"`))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ci.Curve()
	if err != nil || keys == nil || keys.Public != keys.Server {
		t.Fatalf("Curve() = %+v, %v; want the kernel's pair, its public key as the server's", keys, err)
	}

	plain, err := ReadConnectionFile(writeConnFile(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := plain.Curve(); keys != nil || err != nil {
		t.Errorf("a connection file without keys: Curve() = %+v, %v; want NULL, in clear", keys, err)
	}
}

// Jupyter asked for encryption: keys that cannot be used stop the kernel
// with a reason, never let it answer in clear.
func TestConnectionFileRefusesBadCurveKeys(t *testing.T) {
	for _, tc := range []struct{ name, curve, says string }{
		{"short", `, "curve_publickey": "` + curvePublic[:39] + `", "curve_secretkey": "` + curveSecret + `"`, "curve_publickey: a Z85 key has 40 characters, not 39"},
		{"not Z85", `, "curve_publickey": "` + curvePublic + `", "curve_secretkey": "` + strings.Repeat("~", 40) + `"`, "curve_secretkey: character 1 of the key is not Z85"},
		{"not a pair", `, "curve_publickey": "` + curvePublic + `", "curve_secretkey": "` + curvePublic + `"`, "the CURVE public key is not the secret key's"},
		{"public only", `, "curve_publickey": "` + curvePublic + `"`, "curve_secretkey: a Z85 key has 40 characters, not 0"},
		{"secret only", `, "curve_secretkey": "` + curveSecret + `", "curve_publickey": null`, "curve_publickey: a Z85 key has 40 characters, not 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadConnectionFile(writeConnFile(t, tc.curve))
			if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "not starting the kernel in clear") {
				t.Fatalf("error %v; want one that says %q and that the kernel does not start", err, tc.says)
			}
			if strings.Contains(err.Error(), curveSecret) {
				t.Errorf("the error quotes the secret key: %v", err)
			}
		})
	}
}
