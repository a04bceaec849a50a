#!/usr/bin/env bash
# Build guardctl and guard the Jupyter kernels that are installed.
#
#   ./install.sh [guardctl install options: --kernel NAME, --sys-prefix, --prefix DIR]
#
# PREFIX (default ~/.local) receives bin/guardctl. The Jupyter to guard is, in
# order: the one of JUPYTER_GUARD_PYTHON=/path/to/python; the `jupyter` on
# PATH; a python3 on PATH that has ipykernel; else a venv made at
# JUPYTER_GUARD_VENV (default ~/.local/share/jupyter-guard/venv) with
# jupyterlab and ipykernel. Guarded kernelspecs go where guardctl install puts
# them: the user's Jupyter data dir (JUPYTER_DATA_DIR is honoured) unless an
# option says otherwise.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
venv=${JUPYTER_GUARD_VENV:-$HOME/.local/share/jupyter-guard/venv}

die() {
	printf 'install.sh: %s\n' "$*" >&2
	exit 1
}

command -v go >/dev/null || die "Go is not installed; install Go 1.26 or newer (https://go.dev/dl/) and run this again."

python_args=() # how guardctl is told which Jupyter to mirror; empty lets it look on PATH
made_venv=""
if [[ -n ${JUPYTER_GUARD_PYTHON:-} ]]; then
	py=$(command -v "$JUPYTER_GUARD_PYTHON") || die "JUPYTER_GUARD_PYTHON=$JUPYTER_GUARD_PYTHON is not an executable"
	"$py" -c 'import jupyter_client' 2>/dev/null ||
		die "$py has no Jupyter; run: $py -m pip install jupyterlab ipykernel"
	python_args=(--python "$py")
	jupyter="the environment of $py (JUPYTER_GUARD_PYTHON)"
elif command -v jupyter >/dev/null; then
	jupyter="the one on PATH, $(command -v jupyter)"
elif command -v python3 >/dev/null && python3 -c 'import ipykernel' 2>/dev/null; then
	py=$(command -v python3)
	python_args=(--python "$py")
	jupyter="the ipykernel of $py"
else
	# No Jupyter anywhere: make the standard one, a venv of its own.
	if ! [[ -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import jupyter_client, ipykernel' 2>/dev/null; then
		command -v python3 >/dev/null ||
			die "found no Jupyter and no python3; install Python 3 with its venv module (e.g. apt install python3 python3-venv) or Jupyter, then run this again."
		python3 -c 'import venv, ensurepip' 2>/dev/null ||
			die "found no Jupyter, and python3 cannot make a venv; install its venv module (e.g. apt install python3-venv) or Jupyter, then run this again."
		echo "No Jupyter found; installing jupyterlab and ipykernel into $venv (this takes a while)"
		python3 -m venv "$venv"
		"$venv/bin/python" -m pip install --quiet jupyterlab ipykernel
	fi
	# Registers python3 in the venv with its interpreter's absolute path.
	"$venv/bin/python" -m ipykernel install --sys-prefix >/dev/null
	py=$venv/bin/python
	python_args=(--python "$py")
	jupyter="install.sh's own venv, $venv"
	made_venv=$venv
	# Guard the kernel just made, unless the caller chose kernels.
	case " $* " in
	*" --kernel"* | *" -kernel"*) ;;
	*) python_args+=(--kernel python3) ;;
	esac
fi

mkdir -p "$PREFIX/bin"
bindir=$(cd "$PREFIX/bin" && pwd)
guardctl=$bindir/guardctl
(cd "$repo" && go build -o "$guardctl" ./cmd/guardctl)
echo "Built $guardctl"
echo "Jupyter: $jupyter"

"$guardctl" install ${python_args[@]+"${python_args[@]}"} "$@"

if [[ -n $made_venv ]]; then
	echo "Start Jupyter with: $made_venv/bin/jupyter lab"
fi
case ":$PATH:" in
*":$bindir:"*) ;;
*) echo "Note: $bindir is not on PATH; kernels find guardctl anyway, add it to run guardctl yourself." ;;
esac
