//go:build !cgo

package gpu

// Open, in a guardctl built without cgo (the static musllinux wheel, or Go
// with no C compiler), cannot reach NVML, whose bindings need cgo: it is a
// machine without the driver as far as the guard can tell. hostProc is
// Open's in the cgo build, unused here.
func Open(hostProc string) Meter {
	return NoGPU{Reason: "guardctl was built without cgo, which NVML needs", Expected: hinted()}
}
