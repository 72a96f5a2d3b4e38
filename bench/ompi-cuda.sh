#!/bin/bash
# bench/ompi-cuda.sh: builds a CUDA-aware Open MPI for bench/mpi.sh's
# "aware" rows. The GPU machines' own Open MPI (4.1.6 from Ubuntu) is not
# CUDA-aware, and they reach no network, so it is built here and carried:
#
#   bash bench/ompi-cuda.sh          # here, as root: ~25 minutes on 2 cores
#   # then, in the device call (carry build/ompi-cuda):
#   cp -a build/ompi-cuda /opt/ompi-cuda && MPI_HOME=/opt/ompi-cuda bash bench/mpi.sh
#
# What it builds: Debian's source package of Open MPI (4.1.4), configured
# --with-cuda: the smcuda BTL moves device buffers between the ranks of a
# host by CUDA IPC, and libcuda is opened at run time, so only cuda.h is
# needed here. No Fortran, OSHMEM, UCX, verbs or ROMIO; hwloc, libevent
# and PMIx are Open MPI's own copies, so that the result needs nothing of
# the GPU machine besides glibc and zlib. It installs into /opt/ompi-cuda
# (the prefix its wrappers name; ~14 MB) and copies that to
# build/ompi-cuda.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=/opt/ompi-cuda
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$cuda/include/cuda.h" ] || { echo "ompi-cuda.sh: no $cuda/include/cuda.h (set CUDA_HOME)"; exit 2; }
if [ "$(id -u)" != 0 ]; then
  echo "ompi-cuda.sh: run as root (it adds Debian's source archive to apt and installs into $prefix)"
  exit 2
fi
src=/etc/apt/sources.list.d/stencilc-deb-src.sources
if ! apt-get source --download-only --print-uris openmpi >/dev/null 2>&1; then
  . /etc/os-release
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$VERSION_CODENAME" >"$src"
  apt-get update -qq
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ompi-cuda.XXXXXX")
cd "$work"
apt-get source --download-only openmpi >/dev/null 2>&1
tar xf openmpi_*.orig.tar.*
cd openmpi-*/
echo "ompi-cuda.sh: building $(basename "$PWD") in $work (logs there)"
./configure --prefix="$prefix" --with-cuda="$cuda" --disable-mpi-fortran --disable-oshmem --disable-mpi-java \
  --disable-io-romio --disable-man-pages --without-ucx --without-verbs --without-ofi --without-psm \
  --without-psm2 --without-libfabric --without-slurm --without-tm --without-lsf --without-sge --without-alps \
  --with-hwloc=internal --with-libevent=internal --with-pmix=internal \
  --enable-mca-no-build=btl-openib,btl-uct,pml-ucx,osc-ucx,spml-ucx >"$work/configure.log" 2>&1
make -j"$(nproc)" >"$work/make.log" 2>&1
make install >"$work/install.log" 2>&1
"$prefix/bin/ompi_info" --parsable --all | grep -q 'mpi_built_with_cuda_support:value:true' ||
  { echo "ompi-cuda.sh: $prefix is not CUDA-aware (see $work/configure.log)"; exit 1; }
rm -rf "$root/build/ompi-cuda"
mkdir -p "$root/build"
cp -a "$prefix" "$root/build/ompi-cuda"
echo "ompi-cuda.sh: CUDA-aware Open MPI in $prefix and $root/build/ompi-cuda ($(du -sh "$prefix" | cut -f1))"
