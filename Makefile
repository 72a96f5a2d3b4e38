# stencilc: build the compiler and the runtime, run Himeno, run the tests.
#   make          build build/stencilc and build/libstn.a
#   make run      build, then compile examples/himeno.stn for OpenMP and run size S
#   make test     build, then run every test (ends with "N passed, N failed")
#   make fuzz SECONDS=N, make fuzz-compiler SECONDS=N   random programs against every backend; libFuzzer on the compiler
#   make install PREFIX=/usr/local   (DESTDIR too) the compiler, runtime, headers, man page,
#                 pkg-config files and CMake package; make uninstall PREFIX=... removes them
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
B        = build
ROOT    := $(abspath .)

FRONT   = compiler/front/ast.c compiler/front/import.c
SRCS    = compiler/main.c compiler/util.c compiler/diag.c $(FRONT) \
          compiler/sema/sema.c compiler/sema/inline.c \
          compiler/ir/ir.c compiler/ir/lower.c compiler/ir/verify.c \
          compiler/passes/fold.c compiler/passes/cse.c compiler/passes/hoist.c \
          compiler/passes/mpi.c compiler/passes/schedule.c compiler/passes/tblock.c compiler/passes/tbmodel.c compiler/passes/graph.c compiler/passes/gpu.c compiler/passes/cost.c compiler/passes/pipeline.c \
          compiler/backend/cg_common.c compiler/backend/cg_c.c compiler/backend/cg_c_tb.c compiler/backend/cg_cuda.c compiler/backend/cg_cuda_tb.c \
          compiler/backend/cg_lib.c compiler/backend/report.c
GEN     = $(B)/gen/parser.tab.c $(B)/gen/lexer.c
HDRS    = $(wildcard compiler/*.h compiler/*/*.h) runtime/stn_tb_march.h $(B)/gen/parser.tab.h
INC     = -Icompiler -I$(B)/gen
# libpng, for .png output: found when it links; without it the runtime
# says how to get it. Programs built by stencilc then link LINK_LIBS.
PNG     ?= $(shell echo 'int main(void) { return 0; }' | $(CC) -include png.h -x c - -o /dev/null -lpng -lz 2>/dev/null && echo 1)
ifeq ($(PNG),1)
RT_DEFS   = -DSTN_HAVE_PNG
LINK_LIBS = -lpng -lz
endif
# HDF5 (Debian's libhdf5-dev), for .h5 files: found with pkg-config; the
# MPI runtime takes the parallel library (libhdf5-openmpi-dev) when there.
HDF5_CFLAGS ?= $(shell pkg-config --cflags hdf5-serial 2>/dev/null)
HDF5_LIBS   ?= $(shell pkg-config --libs hdf5-serial 2>/dev/null)
HDF5_MPI_CFLAGS ?= $(shell pkg-config --cflags hdf5-openmpi 2>/dev/null)
HDF5_MPI_LIBS   ?= $(shell pkg-config --libs-only-L hdf5-openmpi 2>/dev/null) $(if $(shell pkg-config --libs hdf5-openmpi 2>/dev/null),-lhdf5)
ifneq ($(HDF5_LIBS),)
RT_DEFS   += -DSTN_HAVE_HDF5
endif
LINK_LIBS += $(HDF5_LIBS) -lpthread
MPI_LINK_LIBS = $(subst $(HDF5_LIBS),$(or $(strip $(HDF5_MPI_LIBS)),$(HDF5_LIBS)),$(LINK_LIBS))
DEFS    = -DSTN_RUNTIME_DIR='"$(ROOT)/runtime"' -DSTN_LIB_DIR='"$(ROOT)/$(B)"' -DSTN_LINK_LIBS='"$(LINK_LIBS)"' \
          -DSTN_MPI_LINK_LIBS='"$(MPI_LINK_LIBS)"' \
          -DSTN_CUDA_LIB_DIR='"$(CUDA_LIB)"'

all: $(B)/stencilc $(B)/libstn.a

tools: $(B)/tools/fieldcmp
ifeq ($(PNG),1)
tools: $(B)/tools/pngdump
endif

$(B)/tools/pngdump: tests/tools/pngdump.c
	@mkdir -p $(B)/tools
	$(CC) -O2 $(WARN) -o $@ $< -lpng -lz

$(B)/tools/fieldcmp: tests/tools/fieldcmp.c
	@mkdir -p $(B)/tools
	$(CC) -O2 $(WARN) -o $@ $< -lm

$(B)/.deps-build:
	@tools/deps.sh build
	@mkdir -p $(B) && touch $@

$(B)/gen/parser.tab.c $(B)/gen/parser.tab.h: compiler/front/parser.y $(B)/.deps-build
	@mkdir -p $(B)/gen
	bison -Wall -Werror --defines=$(B)/gen/parser.tab.h -o $(B)/gen/parser.tab.c $<

$(B)/gen/lexer.c: compiler/front/lexer.l $(B)/gen/parser.tab.h
	flex -o $@ $<

# What DEFS bakes into the compiler; rewritten only when it changes, so
# that a moved tree or another CUDA toolkit rebuilds stencilc.
$(B)/config: FORCE
	@mkdir -p $(B)
	@echo "$(ROOT) $(LINK_LIBS) $(MPI_LINK_LIBS) $(CUDA_LIB)" | cmp -s - $@ || echo "$(ROOT) $(LINK_LIBS) $(MPI_LINK_LIBS) $(CUDA_LIB)" > $@

$(B)/stencilc: $(SRCS) $(GEN) $(HDRS) $(B)/config
	$(CC) $(CFLAGS) $(WARN) $(INC) $(DEFS) -o $@ $(SRCS) $(GEN) -lm

# The same compiler with AddressSanitizer and UBSan, for `make test`
# (float-cast-overflow: GCC leaves it out of `undefined`; libFuzzer found one).
$(B)/asan/stencilc: $(SRCS) $(GEN) $(HDRS) $(B)/config
	@mkdir -p $(B)/asan
	$(CC) -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all \
	  -DSTN_DEBUG $(WARN) $(INC) $(DEFS) -o $@ $(SRCS) $(GEN) -lm

# The compiler under libFuzzer (clang), for `make fuzz-compiler`:
# tests/fuzz/compiler_fuzz.c instead of main.c.
FUZZ_CC ?= clang
$(B)/fuzz/stencilc-fuzz: tests/fuzz/compiler_fuzz.c $(filter-out compiler/main.c,$(SRCS)) $(GEN) $(HDRS) $(B)/config
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz-compiler needs clang with libFuzzer: apt-get install clang"; exit 1; }
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -DSTN_DEBUG $(WARN) \
	  $(INC) $(DEFS) -o $@ $< $(filter-out compiler/main.c,$(SRCS)) $(GEN) -lm

$(B)/runtime/stn.o: runtime/stn.c runtime/stn.h $(B)/.deps-build
	@mkdir -p $(B)/runtime
	$(CC) -O2 -g $(WARN) $(RT_DEFS) -fopenmp -c -o $@ $<

$(B)/runtime/stn_io.o: runtime/stn_io.c runtime/stn.h $(B)/.deps-build
	@mkdir -p $(B)/runtime
	$(CC) -O2 -g $(WARN) $(RT_DEFS) $(HDF5_CFLAGS) -c -o $@ $<

$(B)/libstn.a: $(B)/runtime/stn.o $(B)/runtime/stn_io.o
	ar rcs $@ $^

# The MPI runtime (stencilc --mpi), when Open MPI's mpicc is there; the
# tests install it (tools/deps.sh test).
MPICC ?= $(shell command -v mpicc)
ifneq ($(MPICC),)
all: $(B)/libstn_mpi.a
endif
$(B)/runtime/stn_mpi.o: runtime/stn_mpi.c runtime/stn_mpi.h runtime/stn.h $(B)/.deps-build
	@mkdir -p $(B)/runtime
	$(MPICC) -O2 -g $(WARN) -fopenmp $(if $(strip $(HDF5_MPI_CFLAGS)),-DSTN_HAVE_PHDF5 $(HDF5_MPI_CFLAGS)) -c -o $@ $<

$(B)/libstn_mpi.a: $(B)/runtime/stn_mpi.o
	ar rcs $@ $^

# The CUDA runtime, when nvcc is there (CI compiles CUDA; it has no GPU).
NVCC ?= $(shell command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
# nvcc may be a wrapper script (/usr/local/bin/nvcc -> exec .../cuda/bin/nvcc),
# so ask nvcc itself where its toolkit is (TOP in --dryrun) and take the
# first directory there that holds libcudart.
CUDA_LIB := $(if $(NVCC),$(shell top=$$($(NVCC) --dryrun -x cu -o /dev/null /dev/null 2>&1 | sed -n 's/^\#\$$ TOP=//p' | head -n 1); \
	for d in "$$top/lib64" "$$top/targets/x86_64-linux/lib" "$(dir $(NVCC))../lib64" /usr/local/cuda/lib64; do \
	  if [ -e "$$d/libcudart.so" ] || [ -e "$$d/libcudart_static.a" ]; then cd "$$d" && pwd; break; fi; done))
CUDA_LIB := $(or $(CUDA_LIB),/usr/local/cuda/lib64)
ifneq ($(NVCC),)
all: $(B)/libstn_cuda.a
endif
$(B)/runtime/stn_cuda.o: runtime/stn_cuda.cu runtime/stn_cuda.h runtime/stn_tb_march.h runtime/stn.h
	@mkdir -p $(B)/runtime
	$(NVCC) -O2 -arch=sm_90 -Iruntime -c -o $@ $<

$(B)/libstn_cuda.a: $(B)/runtime/stn_cuda.o
	ar rcs $@ $^

# Distributed runs on GPUs (--mpi --target=cuda), when nvcc and Open MPI's
# wrappers are both there: built with MPI's C++ compiler as nvcc's host
# compiler, as the programs are.
MPICXX ?= $(shell command -v mpicxx)
ifneq ($(NVCC),)
ifneq ($(MPICC),)
all: $(B)/libstn_cuda_mpi.a
endif
endif
$(B)/runtime/stn_cuda_mpi.o: runtime/stn_cuda_mpi.cu runtime/stn_cuda.h runtime/stn_tb_march.h runtime/stn_mpi.h runtime/stn.h
	@mkdir -p $(B)/runtime
	$(NVCC) -O2 -arch=sm_90 --default-stream per-thread -ccbin $(or $(MPICXX),mpicxx) -Iruntime -c -o $@ $<

$(B)/libstn_cuda_mpi.a: $(B)/runtime/stn_cuda_mpi.o
	ar rcs $@ $^

# Grammar in grammar/ is extracted from the bison file; the test checks it is current.
grammar/stencil.bnf: compiler/front/parser.y tools/extract-grammar.sh
	tools/extract-grammar.sh $< > $@

run: all
	$(B)/stencilc --target=openmp --build -o $(B)/himeno examples/himeno.stn
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-$$(nproc)} $(B)/himeno

# The test dependencies first (Open MPI among them), then the build, which
# builds the MPI runtime once mpicc is there.
test:
	@tools/deps.sh test
	@$(MAKE) --no-print-directory all tools $(B)/asan/stencilc
	@tests/run.sh

# Fuzzing (tests/fuzz/README.md). make fuzz SECONDS=N: random programs
# against every CPU variant (tests/fuzz/diff; GPU=1 adds the CUDA ones),
# then mutated programs through every code generator and the C and CUDA
# compilers (tests/fuzz/mutate); make fuzz-compiler SECONDS=N: libFuzzer
# on the compiler, seeded with every .stn in the tree.
SECONDS ?= 300
fuzz: all tools
	tests/fuzz/diff --seconds $$(( $(SECONDS) * 2 / 3 )) $(if $(GPU),--gpu --cpu)
	tests/fuzz/mutate --seconds $$(( $(SECONDS) / 3 ))

fuzz-compiler: $(B)/fuzz/stencilc-fuzz
	@mkdir -p $(B)/fuzz/corpus
	@cp tests/fuzz/corpus/* $(B)/fuzz/corpus/ 2>/dev/null; \
	  for f in $$(find examples tests -name '*.stn'); do cp $$f $(B)/fuzz/corpus/$$(echo $$f | tr / _); done
	ASAN_OPTIONS=detect_leaks=0 $(B)/fuzz/stencilc-fuzz -max_total_time=$(SECONDS) -dict=tests/fuzz/stn.dict -timeout=10 -detect_leaks=0 -print_final_stats=1 \
	  -artifact_prefix=$(B)/fuzz/ $(B)/fuzz/corpus

# make install PREFIX=... : everything a project needs to generate and link
# kernels, relocatable (stencilc finds PREFIX/include/stencilc from its own
# path; the pkg-config and CMake files from theirs). docs/library.md.
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/.*STENCILC_VERSION "\(.*\)".*/\1/p' compiler/util.h)
I        = $(DESTDIR)$(PREFIX)
SUBST    = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LINK_LIBS@|$(LINK_LIBS)|g' -e 's|@CUDA_LIB@|$(CUDA_LIB)|g'

install: all
	install -d $(I)/bin $(I)/lib/pkgconfig $(I)/lib/cmake/stencilc $(I)/include/stencilc $(I)/share/man/man1
	install -m 755 $(B)/stencilc $(I)/bin/stencilc
	install -m 644 $(B)/libstn.a $(I)/lib/libstn.a
	install -m 644 runtime/stn.h runtime/stn_cuda.h runtime/stn_tb_march.h runtime/stn_mpi.h $(I)/include/stencilc/
	install -m 644 docs/stencilc.1 $(I)/share/man/man1/stencilc.1
	$(SUBST) tools/install/stencilc.pc.in > $(I)/lib/pkgconfig/stencilc.pc
	$(SUBST) tools/install/stencilcConfig.cmake.in > $(I)/lib/cmake/stencilc/stencilcConfig.cmake
	$(SUBST) tools/install/stencilcConfigVersion.cmake.in > $(I)/lib/cmake/stencilc/stencilcConfigVersion.cmake
	if [ -f $(B)/libstn_mpi.a ]; then install -m 644 $(B)/libstn_mpi.a $(I)/lib/libstn_mpi.a; fi
	if [ -f $(B)/libstn_cuda_mpi.a ]; then install -m 644 $(B)/libstn_cuda_mpi.a $(I)/lib/libstn_cuda_mpi.a; fi
	if [ -f $(B)/libstn_cuda.a ]; then \
	  install -m 644 $(B)/libstn_cuda.a $(I)/lib/libstn_cuda.a && \
	  $(SUBST) tools/install/stencilc-cuda.pc.in > $(I)/lib/pkgconfig/stencilc-cuda.pc; fi
	@echo "installed stencilc $(VERSION) in $(I)"

uninstall:
	rm -f $(I)/bin/stencilc $(I)/lib/libstn.a $(I)/lib/libstn_cuda.a $(I)/lib/libstn_mpi.a $(I)/lib/libstn_cuda_mpi.a $(I)/share/man/man1/stencilc.1 \
	  $(I)/lib/pkgconfig/stencilc.pc $(I)/lib/pkgconfig/stencilc-cuda.pc
	rm -rf $(I)/include/stencilc $(I)/lib/cmake/stencilc

clean:
	rm -rf $(B)

.PHONY: all tools run test clean install uninstall fuzz fuzz-compiler
FORCE:
