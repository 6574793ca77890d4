#!/bin/sh
# Installs what building the CUDA side needs: nvcc, cuda.h and libcuda.so.
#
# A machine that already has nvcc (on PATH, or a normal CUDA install under
# /usr/local/cuda) is left alone. On Debian, NVIDIA's CUDA toolkit is in the
# non-free component: this script enables `contrib non-free` in the apt
# sources (one-line sources.list and deb822 .sources files alike) and installs
# nvidia-cuda-toolkit without recommends (about a minute and a half).
set -eu

if command -v nvcc >/dev/null 2>&1; then
	echo "cuda-deps: nvcc found at $(command -v nvcc); nothing to do"
	exit 0
fi
if [ -x /usr/local/cuda/bin/nvcc ]; then
	echo "cuda-deps: nvcc found at /usr/local/cuda/bin/nvcc; nothing to do (add /usr/local/cuda/bin to PATH)"
	exit 0
fi
if [ ! -r /etc/debian_version ]; then
	echo "cuda-deps: nvcc not found and this is not Debian; install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) and put nvcc on PATH" >&2
	exit 1
fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "cuda-deps: need root (or sudo) to install nvidia-cuda-toolkit" >&2
		exit 1
	fi
fi

# One-line format: "deb URI SUITE main ..." (Debian's own lines) gains contrib and non-free.
enable_list() {
	f=$1
	$SUDO sed -i -E \
		-e '/^[[:space:]]*deb(-src)?[[:space:]].*debian/{/[[:space:]]contrib([[:space:]]|$)/!s/$/ contrib/}' \
		-e '/^[[:space:]]*deb(-src)?[[:space:]].*debian/{/[[:space:]]non-free([[:space:]]|$)/!s/$/ non-free/}' \
		"$f"
}
# deb822 format: "Components: main ..." gains contrib and non-free.
enable_deb822() {
	f=$1
	$SUDO sed -i -E \
		-e '/^Components:/{/[[:space:]]contrib([[:space:]]|$)/!s/$/ contrib/}' \
		-e '/^Components:/{/[[:space:]]non-free([[:space:]]|$)/!s/$/ non-free/}' \
		"$f"
}

changed=no
if [ -f /etc/apt/sources.list ] && grep -qE '^[[:space:]]*deb[[:space:]].*debian' /etc/apt/sources.list; then
	enable_list /etc/apt/sources.list
	changed=yes
fi
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	grep -qE '^URIs:.*debian' "$f" || continue
	enable_deb822 "$f"
	changed=yes
done
for f in /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	grep -qE '^[[:space:]]*deb[[:space:]].*debian\.org' "$f" || continue
	enable_list "$f"
	changed=yes
done
if [ "$changed" = no ]; then
	echo "cuda-deps: found no Debian apt source to enable contrib non-free in" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit
nvcc --version
