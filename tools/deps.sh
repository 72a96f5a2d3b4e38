#!/bin/sh
# Make sure the build and test tools are present. As root on Debian we
# install what is missing with apt-get; otherwise we print the exact
# command to run and fail.
#   usage: tools/deps.sh build|test
set -u
missing=""
have() { command -v "$1" >/dev/null 2>&1; }
have cc    || missing="$missing gcc"
have make  || missing="$missing make"
have flex  || missing="$missing flex"
have bison || missing="$missing bison"
# libpng for image output (.png); the runtime builds without it, but the tests check images.
echo 'int main(void) { return 0; }' | cc -include png.h -x c - -o /dev/null -lpng -lz 2>/dev/null ||
  missing="$missing libpng-dev"
# HDF5 for .h5 files (the runtime builds without it and says so)
have pkg-config && pkg-config --exists hdf5-serial 2>/dev/null || missing="$missing libhdf5-dev pkg-config"
if [ "${1:-build}" = test ]; then
  have FileCheck || [ -x /usr/lib/llvm-14/bin/FileCheck ] || missing="$missing llvm-14-tools"
  have lit || [ -f /usr/lib/llvm-14/build/utils/lit/lit.py ] ||
    case "$missing" in *llvm-14-tools*) ;; *) missing="$missing llvm-14-tools" ;; esac
  have python3 || missing="$missing python3"
  # the --report=json schema test
  python3 -c 'import jsonschema' 2>/dev/null || missing="$missing python3-jsonschema"
  # make install's products: the man page rendered, the embedding examples
  # built with pkg-config and with CMake
  have groff || missing="$missing groff-base"
  # the library's header compiled as C++ (tests/lit/lib)
  have c++ || missing="$missing g++"
  have pkg-config || missing="$missing pkg-config"
  have cmake || missing="$missing cmake"
  # distributed runs (stencilc --mpi) under mpirun
  have mpicc || missing="$missing libopenmpi-dev"
  have mpirun || missing="$missing openmpi-bin"
  # data in and out (tests/lit/io): HDF5, serial and Open MPI's parallel
  # one, and numpy/h5py to read the files back; ParaView's Python
  # (python3-paraview: Debian ships no pvpython) opens the series and XDMF
  # files
  [ -f /usr/include/hdf5/serial/hdf5.h ] || missing="$missing libhdf5-dev"
  [ -f /usr/include/hdf5/openmpi/hdf5.h ] || missing="$missing libhdf5-openmpi-dev"
  /usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || missing="$missing python3-numpy python3-h5py"
  /usr/bin/python3 -c 'import scipy.optimize' 2>/dev/null || missing="$missing python3-scipy"
  /usr/bin/python3 -c 'import paraview.simple' 2>/dev/null || missing="$missing python3-paraview"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && have apt-get; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null; } || {
    echo "deps: 'apt-get install$missing' failed; install them and run make again" >&2; exit 1; }
  exit 0
fi
echo "deps: missing:$missing" >&2
echo "deps: run:  sudo apt-get install -y$missing" >&2
exit 1
