module github.com/jupyter-guard/jupyter-guard

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.0-1
	github.com/google/uuid v1.6.0
	golang.org/x/crypto v0.23.0
	golang.org/x/sys v0.20.0
)
