// Package config reads the guard's settings from flags and the environment
// and turns them into a byte budget once the real memory limit is known.
//
//	JUPYTER_GUARD_LIMIT           --limit           100%   the budget: a size or a share of the detected limit
//	JUPYTER_GUARD_WARN            --warn            80%    warn in the cell: a size or a share of the budget
//	JUPYTER_GUARD_PAUSE           --pause           95%    act: a size or a share of the budget
//	JUPYTER_GUARD_ACTION          --action          pause  pause, interrupt or warn
//	JUPYTER_GUARD_MAX_RESTARTS    --max-restarts    5      deaths allowed within the window before giving up
//	JUPYTER_GUARD_RESTART_WINDOW  --restart-window  60s    that window: seconds or a Go duration
//	JUPYTER_GUARD_RESTART         --restart         auto   who restarts a dead kernel: guard, client, or auto
//	MEM_LIMIT                                              JupyterHub's limit in bytes: the budget when JUPYTER_GUARD_LIMIT is unset, unless a cgroup's is lower
//
// A flag given on the command line wins over the variable. Sizes follow
// package units: every suffix is a power of 1024, so 4GB means 4 GiB.
package config
