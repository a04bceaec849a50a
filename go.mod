module github.com/jupyter-guard/jupyter-guard

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.0-1
	github.com/go-zeromq/zmq4 v0.17.0
	github.com/google/uuid v1.6.0
	golang.org/x/sys v0.20.0
)

require (
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	golang.org/x/sync v0.7.0 // indirect
	golang.org/x/text v0.15.0 // indirect
)
