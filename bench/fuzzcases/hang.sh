export PATH=/usr/local/cuda/bin:$PATH STENCILC_RUNTIME_DIR=$PWD/runtime STENCILC_LIB_DIR=$PWD/build OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O2 -g -fopenmp -Iruntime -c -o build/runtime/stn_mpi.o runtime/stn_mpi.c && ar rcs build/libstn_mpi.a build/runtime/stn_mpi.o
nvcc -O2 -arch=sm_90 -ccbin mpicxx -Iruntime -c -o build/runtime/stn_cuda_mpi.o runtime/stn_cuda_mpi.cu && ar rcs build/libstn_cuda_mpi.a build/runtime/stn_cuda_mpi.o
T=/tmp/h; mkdir -p $T
for v in "" "-fno-pdl" "-fno-overlap" "--cuda-strategy=naive"; do
  n=$(echo "x$v" | tr -dc a-z); build/stencilc --target=cuda --mpi $v --build -o $T/$n bench/fuzzcases/seed4.stn > $T/$n.log 2>&1 || { echo "$v build failed"; tail -3 $T/$n.log; continue; }
done
for v in "" "-fno-pdl" "-fno-overlap" "--cuda-strategy=naive"; do
  n=$(echo "x$v" | tr -dc a-z)
  for np in 1 2; do
    timeout 40 mpirun --oversubscribe --bind-to none -np $np $T/$n > $T/$n.$np.out 2>&1 < /dev/null; echo "variant '$v' np $np: rc $? $(grep -m1 s_u0 $T/$n.$np.out)"
  done
done
