/* stn_cuda_mpi.cu: distributed runs on GPUs (stencilc --mpi --target=cuda;
 * libstn_cuda_mpi.a, built with nvcc -ccbin mpicxx). It owns what the GPU
 * changes about a distributed run: the choice of a rank's GPU, the halo
 * exchange of device fields (packing kernels, the exchange stream, and the
 * messages: GPU to GPU through NCCL, through a CUDA-aware MPI, or staged
 * through the host), reductions combined over the parts and the ranks,
 * and the finish. What is exchanged with whom, the messages' boxes
 * and the parts a kernel computes come from stn_mpi.c, so a GPU rank sends
 * exactly the messages a CPU rank would. See stn_cuda.h (distributed runs)
 * and stn_mpi.h.
 *
 * Built, like the programs that link it, with nvcc --default-stream
 * per-thread: stream 0 here and in the generated launches is the host
 * thread's default stream, which a CUDA-aware MPI's own (blocking) copy
 * streams do not wait for; the legacy default stream would hold its
 * copies behind the interior's kernel. */
#define OMPI_SKIP_MPICXX 1 /* MPI's C interface only, without the deprecated C++ bindings */
#define MPICH_SKIP_MPICXX 1
#include "stn_cuda.h"
#include "stn_mpi.h"
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's extensions: MPIX_Query_cuda_support */
#endif
#endif
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void mpi_check(int err, const char *what)
{
  if (err == MPI_SUCCESS)
    return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, msg, &len);
  stn_fatal("MPI: %s failed: %s", what, msg);
}

/* ---- NCCL, loaded at run time --------------------------------------------------
 * Where every rank has a GPU of its own and libnccl.so.2 loads, halos go
 * GPU to GPU with NCCL's point-to-point calls (NVLink or PCIe peer copies
 * within a node, its network transports beyond), enqueued on the exchange
 * stream between the packing and the unpacking kernels. The default
 * there: on 4 H200s Himeno XL scaled at 95% against 70% staged, L at 82%
 * against 28% (docs/benchmarks.md, 2026-11-27 04:29). STN_MPI_NCCL=0
 * declines it, =1 insists (an error where it cannot). libnccl.so.2 is
 * opened at run time (STN_NCCL_LIBRARY names it; else the loader's search
 * path), so that programs build and run without it. Only the calls below
 * are used; their ABI has not changed since NCCL 2.7. */
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef int nccl_result;          /* ncclResult_t: 0 is ncclSuccess */
enum { NCCL_INT8 = 0 };           /* ncclDataType_t ncclInt8 */

static struct {
  nccl_result (*get_unique_id)(ncclUniqueId *);
  nccl_result (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
  nccl_result (*comm_destroy)(ncclComm_t);
  nccl_result (*send)(const void *, size_t, int, int, ncclComm_t, cudaStream_t);
  nccl_result (*recv)(void *, size_t, int, int, ncclComm_t, cudaStream_t);
  nccl_result (*group_start)(void);
  nccl_result (*group_end)(void);
  nccl_result (*get_version)(int *);
  const char *(*error_string)(nccl_result);
  ncclComm_t comm;
  int version;
} nccl;

static void nccl_check(nccl_result r, const char *what)
{
  if (r != 0)
    stn_fatal("NCCL: %s failed: %s (STN_MPI_NCCL=0 sends the halos through MPI instead)", what,
              nccl.error_string ? nccl.error_string(r) : "unknown error");
}

/* Opens libnccl and finds its calls; NULL, or why not. */
static const char *nccl_load(void)
{
  const char *name = getenv("STN_NCCL_LIBRARY");
  void *h = dlopen(name && *name ? name : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return dlerror();
#define NCCL_SYM(field, sym)                                                                                  \
  if (!(*(void **)&nccl.field = dlsym(h, sym)))                                                               \
    return "a call is missing from the library (NCCL 2.7 or later is needed)";
  NCCL_SYM(get_unique_id, "ncclGetUniqueId")
  NCCL_SYM(comm_init_rank, "ncclCommInitRank")
  NCCL_SYM(comm_destroy, "ncclCommDestroy")
  NCCL_SYM(send, "ncclSend")
  NCCL_SYM(recv, "ncclRecv")
  NCCL_SYM(group_start, "ncclGroupStart")
  NCCL_SYM(group_end, "ncclGroupEnd")
  NCCL_SYM(get_version, "ncclGetVersion")
  NCCL_SYM(error_string, "ncclGetErrorString")
#undef NCCL_SYM
  if (nccl.get_version(&nccl.version) != 0 || nccl.version < 20700)
    return "NCCL 2.7 or later is needed";
  return NULL;
}

/* Collective: whether the halos stay on the device. One rank: yes (its
 * messages are to itself, copies on its GPU) unless STN_MPI_STAGED=1.
 * Several: through NCCL where every rank has a GPU of its own and can
 * load it, unless STN_MPI_NCCL=0 or STN_MPI_STAGED=1; STN_MPI_NCCL=1
 * insists (an error if NCCL cannot: ranks sharing a GPU, which it
 * refuses, or no library). */
static const char *transport_note; /* why not NCCL, for the profile */
static int device_path;            /* halos GPU to GPU: NCCL, and copies for a rank's messages to itself */
static int device_start(int own_gpu)
{
  const char *staged = getenv("STN_MPI_STAGED"), *want = getenv("STN_MPI_NCCL");
  const int forced = want && strcmp(want, "1") == 0;
  if (staged && *staged && strcmp(staged, "0") != 0) {
    transport_note = "STN_MPI_STAGED=1";
    return 0;
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) /* its messages are to itself: copies on the device */
    return 1;
  if (want && strcmp(want, "0") == 0) {
    transport_note = "STN_MPI_NCCL=0";
    return 0;
  }
  const char *why = !own_gpu ? "ranks share a GPU, which NCCL does not allow" : nccl_load();
  int ok = why == NULL, all = 0;
  mpi_check(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce (NCCL on every rank?)");
  if (!all) {
    if (forced)
      stn_fatal("STN_MPI_NCCL=1, but NCCL cannot carry the halos: %s%s", why ? why : "not on every rank",
                why && own_gpu ? " (STN_NCCL_LIBRARY names libnccl.so.2)" : "");
    transport_note = why ? why : "NCCL is not usable on every rank";
    return 0;
  }
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  if (me == 0)
    nccl_check(nccl.get_unique_id(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast (NCCL's id)");
  nccl_check(nccl.comm_init_rank(&nccl.comm, size, id, me), "ncclCommInitRank");
  return 1;
}

/* ---- one GPU per rank ------------------------------------------------------ */

static void nccl_connect(const int *nbr, int ndirs);

/* stn_mpi_host_copy: a device field's points for the gather. */
static void host_points(const stn_field *f, void *dense) { stn_cuda_field_get(f, dense); }

void stn_cuda_mpi_init(stn_program *p)
{
  /* a GPU missing or failing on one node is that rank's own error */
  const int collective = stn_fatal_collective;
  stn_fatal_collective = 0;
  MPI_Comm node;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type (the ranks on this node, to choose a GPU)");
  int local = 0, nlocal = 1;
  mpi_check(MPI_Comm_rank(node, &local), "MPI_Comm_rank (on this node)");
  mpi_check(MPI_Comm_size(node, &nlocal), "MPI_Comm_size (on this node)");
  mpi_check(MPI_Comm_free(&node), "MPI_Comm_free");
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    const cudaError_t err = cudaSetDevice(local % n);
    if (err != cudaSuccess)
      stn_fatal("cannot use GPU %d (this node's rank %d of %d, %d GPU%s visible): %s; check nvidia-smi and "
                "CUDA_VISIBLE_DEVICES", local % n, local, nlocal, n, n == 1 ? "" : "s", cudaGetErrorString(err));
  } else {
    cudaGetLastError(); /* stn_cuda_init says what is missing */
  }
  stn_cuda_init(p);
  stn_fatal_collective = collective;
  stn_mpi_host_copy = host_points;
  device_path = device_start(nlocal <= n);
  if (nccl.comm)
    stn_mpi_grid_hook = nccl_connect;
}

/* ---- halo exchange on the device ---------------------------------------------
 * One exchange at a time (a wrapper's begin and end are not interleaved
 * with another's). The stale fields' boxes of every message go into one
 * dense device buffer each way, messages one after another, each box
 * padded to 8 bytes (the same on both ends: the boxes match). */

/* A box of a field in the dense buffer: dimensions padded in front to 3,
 * so that the last is contiguous (st[2] = 1). */
typedef struct xbox {
  char *base; /* element (0, 0, 0) of the field */
  long off;   /* bytes into the buffer */
  long lo[3], n[3], st[3];
  int es;
} xbox;

/* Boxes per copy launch: they travel as its parameter (3 KB of the 4 KB
 * a launch's parameters may take). */
enum { XBOXES = 32 };
typedef struct xboxes { xbox b[XBOXES]; } xboxes;

/* Copies each box (block row blockIdx.y) between its field and the buffer. */
__global__ static void xcopy_kernel(xboxes boxes, char *buf, int pack)
{
  const xbox x = boxes.b[blockIdx.y];
  const long n12 = x.n[1] * x.n[2], total = x.n[0] * n12;
  for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < total; t += (long)gridDim.x * blockDim.x) {
    const long a = t / n12, rest = t - a * n12, b = rest / x.n[2], c = rest - b * x.n[2];
    const long at = (x.lo[0] + a) * x.st[0] + (x.lo[1] + b) * x.st[1] + (x.lo[2] + c) * x.st[2];
    if (x.es == 8) {
      unsigned long long *f = (unsigned long long *)x.base + at, *d = (unsigned long long *)(buf + x.off) + t;
      if (pack)
        *d = *f;
      else
        *f = *d;
    } else {
      unsigned *f = (unsigned *)x.base + at, *d = (unsigned *)(buf + x.off) + t;
      if (pack)
        *d = *f;
      else
        *f = *d;
    }
  }
}

static struct {
  int ready, aware, used;
  int timing;                 /* --profile on the device path: the events below are timed */
  stn_mpi_xch *timed;         /* the exchange whose events are still to be read (device path) */
  cudaEvent_t posted;         /* exchange stream, device path: the exchange starts */
  cudaStream_t stream;        /* the exchange's own, non-blocking, highest priority */
  cudaEvent_t written;        /* default stream: the launches before the exchange are done */
  cudaEvent_t packed;         /* the send buffer is filled (on the host too when staged) */
  cudaEvent_t unpacked;       /* the ghost points are written; the receive buffers are free */
  cudaEvent_t computing;      /* default stream, at stn_cuda_mpi_end: the launches before it (the interior) */
  int unpack_pending;         /* unpacked recorded and not yet waited for by the host */
  char *dsend, *drecv, *hsend, *hrecv;   /* device buffers; pinned host ones when staged */
  size_t dsend_cap, drecv_cap, hsend_cap, hrecv_cap;
  xbox *box;                  /* this exchange's boxes: the sends, then the receives */
  int nbox, capbox, nsend;
  size_t soff[STN_MPI_DIRS], sbytes[STN_MPI_DIRS], roff[STN_MPI_DIRS], rbytes[STN_MPI_DIRS], stotal, rtotal;
  MPI_Comm cart;
  /* ranks of cart, which are MPI_COMM_WORLD's and so NCCL's too (the
   * Cartesian communicators keep its numbering: reorder 0 in
   * stn_mpi_grid_init); MPI_PROC_NULL where none */
  int nbr[STN_MPI_DIRS];
  int me;                     /* this rank */
} ex;

/* Device to device through MPI, unless the library is not CUDA-aware at
 * run time or STN_MPI_STAGED=1 asks for staging through the host. */
static int cuda_aware(void)
{
  const char *staged = getenv("STN_MPI_STAGED");
  if (staged && *staged && strcmp(staged, "0") != 0)
    return 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

static void setup(void)
{
  if (ex.ready)
    return;
  int least = 0, greatest = 0;
  STN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  /* its own stream, so that packing runs beside the interior's launch;
   * the highest priority, so that it is not queued behind its blocks */
  STN_CUDA_CHECK(cudaStreamCreateWithPriority(&ex.stream, cudaStreamNonBlocking, greatest));
  ex.aware = !device_path && cuda_aware();
  /* on the device path the host never waits for a message: --profile
   * reads the exchange's times off timed events instead */
  ex.timing = device_path && stn_profiling;
  const unsigned timed = ex.timing ? cudaEventDefault : cudaEventDisableTiming;
  STN_CUDA_CHECK(cudaEventCreateWithFlags(&ex.written, cudaEventDisableTiming));
  STN_CUDA_CHECK(cudaEventCreateWithFlags(&ex.packed, cudaEventDisableTiming));
  STN_CUDA_CHECK(cudaEventCreateWithFlags(&ex.posted, timed));
  STN_CUDA_CHECK(cudaEventCreateWithFlags(&ex.unpacked, timed));
  STN_CUDA_CHECK(cudaEventCreateWithFlags(&ex.computing, timed));
  MPI_Comm_rank(MPI_COMM_WORLD, &ex.me);
  ex.ready = 1;
}

static char *grow(char **buf, size_t *cap, size_t need, int host, const char *what)
{
  if (need <= *cap)
    return *buf;
  if (*buf)
    STN_CUDA_CHECK(host ? cudaFreeHost(*buf) : cudaFree(*buf));
  *buf = NULL;
  *cap = 0;
  const cudaError_t err = host ? cudaHostAlloc((void **)buf, need, cudaHostAllocDefault) : cudaMalloc((void **)buf, need);
  if (err != cudaSuccess)
    stn_fatal("cannot allocate %zu bytes of %s memory for the halo exchange's %s buffer (%s); use more ranks or a "
              "smaller grid", need, host ? "pinned host" : "GPU", what, cudaGetErrorString(err));
  *cap = need;
  return *buf;
}

/* Appends field f's box [lo, hi) at byte off of the buffer; its padded size. */
static size_t add_box(const stn_field *f, const long *lo, const long *hi, size_t off)
{
  const stn_grid *g = f->grid;
  xbox x;
  memset(&x, 0, sizeof x);
  x.base = (char *)f->origin;
  x.off = (long)off;
  x.es = (int)stn_type_size(f->type);
  const int shift = STN_MAX_RANK - g->rank;
  long points = 1;
  for (int c = 0; c < STN_MAX_RANK; c++)
    x.n[c] = 1;
  for (int d = 0; d < g->rank; d++) {
    x.lo[d + shift] = lo[d];
    x.n[d + shift] = hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    x.st[d + shift] = g->stride[d];
    points *= x.n[d + shift];
  }
  if (!points)
    return 0;
  if (ex.nbox == ex.capbox) {
    ex.capbox = ex.capbox ? 2 * ex.capbox : 64;
    ex.box = (xbox *)realloc(ex.box, sizeof *ex.box * (size_t)ex.capbox);
    if (!ex.box)
      stn_fatal("out of memory (the halo exchange's list of boxes)");
  }
  ex.box[ex.nbox++] = x;
  return ((size_t)points * (size_t)x.es + 7) & ~(size_t)7;
}

/* The boxes of x's stale fields in its messages, in stn_mpi_begin's
 * order (direction, then field): send, what each neighbour reads of this
 * rank's points; else the ghost points each neighbour fills. Each
 * message's offset and size in the buffer; returns the buffer's size. */
static size_t plan(const stn_mpi_xch *x, int send, size_t *off, size_t *bytes)
{
  const stn_grid *g = x->g;
  const int rank = g->rank, ndirs = rank == 1 ? 3 : rank == 2 ? 9 : 27;
  size_t total = 0;
  for (int e = 0; e < STN_MPI_DIRS; e++) {
    off[e] = total;
    bytes[e] = 0;
    if (e >= ndirs || e == ndirs / 2 || ex.nbr[e] == MPI_PROC_NULL)
      continue;
    int dir[STN_MAX_RANK], back[STN_MAX_RANK];
    stn_mpi_dir_of(rank, e, dir);
    for (int d = 0; d < rank; d++)
      back[d] = -dir[d];
    /* the ghost side the reader reads: the neighbour's side -e, or ours e */
    const int side = send ? stn_mpi_dir_index(rank, back) : e;
    for (int i = 0; i < x->nfields; i++)
      if (x->sel[i] && (x->fields[i].dirs >> side & 1)) {
        long lo[STN_MAX_RANK], hi[STN_MAX_RANK];
        stn_mpi_msg_box(g, &x->fields[i], dir, send, lo, hi);
        total += add_box(x->fields[i].f, lo, hi, total);
      }
    bytes[e] = total - off[e];
    if (bytes[e] > (size_t)INT_MAX)
      stn_fatal("kernel %s: a halo message of %zu bytes is more than MPI's count of %d allows; use more ranks",
                x->kernel, bytes[e], INT_MAX);
  }
  return total;
}

/* Enqueues the copies of n boxes between their fields and buf on the
 * exchange stream. */
static void copy_boxes(const xbox *box, int n, char *buf, int pack)
{
  for (int first = 0; first < n; first += XBOXES) {
    xboxes chunk;
    memset(&chunk, 0, sizeof chunk);
    const int m = n - first < XBOXES ? n - first : XBOXES;
    long most = 0;
    for (int j = 0; j < m; j++) {
      chunk.b[j] = box[first + j];
      const long points = box[first + j].n[0] * box[first + j].n[1] * box[first + j].n[2];
      most = points > most ? points : most;
    }
    const dim3 block(256), grid((unsigned)((most + 255) / 256 < 1024 ? (most + 255) / 256 : 1024), (unsigned)m);
    xcopy_kernel<<<grid, block, 0, ex.stream>>>(chunk, buf, pack);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      stn_fatal("the halo exchange's %s kernel failed to launch (%d boxes, grid %ux%u, block %u): %s",
                pack ? "packing" : "unpacking", m, grid.x, grid.y, block.x, cudaGetErrorString(err));
  }
}

/* The device path's --profile: the last exchange's flight (posted to
 * unpacked, on the device) and wait (how long after the interior's
 * launches the ghost points arrived: what the shell waited for). */
static void read_timing(void)
{
  if (!ex.timed)
    return;
  float flight = 0, late = 0;
  STN_CUDA_CHECK(cudaEventSynchronize(ex.unpacked));
  STN_CUDA_CHECK(cudaEventSynchronize(ex.computing)); /* the interior may end after the halos arrive */
  STN_CUDA_CHECK(cudaEventElapsedTime(&flight, ex.posted, ex.unpacked));
  STN_CUDA_CHECK(cudaEventElapsedTime(&late, ex.computing, ex.unpacked));
  ex.timed->prof.flight += 1e-3 * flight;
  ex.timed->prof.wait += late > 0 ? 1e-3 * late : 0.0;
  ex.timed = NULL;
}

/* stn_mpi_grid_hook on the NCCL path. NCCL connects to a peer at the
 * first message between them, which took 0.2 s with one neighbour and
 * 0.5 s with two (NCCL 2.28, P2P/CUMEM over NVLink, 2 and 4 H200s;
 * docs/benchmarks.md, 2026-11-27) and fell in the time loop's first step.
 * One byte each way to every neighbour of the grid, as it is set up,
 * makes those connections before the time loop (NCCL connects all of a
 * peer's channels at once, whatever the message's size). */
static void nccl_connect(const int *nbr, int ndirs)
{
  setup();
  int distinct[STN_MPI_DIRS], n = 0;
  for (int e = 0; e < ndirs; e++) {
    int seen = nbr[e] == MPI_PROC_NULL || nbr[e] == ex.me;
    for (int i = 0; i < n && !seen; i++)
      seen = distinct[i] == nbr[e];
    if (!seen)
      distinct[n++] = nbr[e];
  }
  if (!n)
    return;
  /* 16-byte slots: NCCL's copy reads whole words (compute-sanitizer
   * flagged a 4-byte read of a 2-byte buffer) */
  enum { SLOT = 16 };
  char *bytes = grow(&ex.drecv, &ex.drecv_cap, SLOT * ((size_t)n + 1), 0, "receive");
  STN_CUDA_CHECK(cudaMemsetAsync(bytes, 0, SLOT, ex.stream));
  nccl_check(nccl.group_start(), "ncclGroupStart");
  for (int i = 0; i < n; i++)
    nccl_check(nccl.send(bytes, 1, NCCL_INT8, distinct[i], nccl.comm, ex.stream), "ncclSend (connecting)");
  for (int i = 0; i < n; i++)
    nccl_check(nccl.recv(bytes + SLOT * (1 + i), 1, NCCL_INT8, distinct[i], nccl.comm, ex.stream),
               "ncclRecv (connecting)");
  nccl_check(nccl.group_end(), "ncclGroupEnd");
  STN_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
}

/* The device path: the messages on the exchange stream after the packing,
 * then the unpacking; nothing waits on the host. A rank's messages to
 * itself (a periodic dimension it spans alone) are device copies; the
 * others go through NCCL, whose messages between two ranks match in the
 * order they are posted: sends in increasing direction e, receives in
 * decreasing e, since the message received from direction e was sent
 * towards -e (index ndirs - 1 - e). */
static void device_messages(int ndirs)
{
  int any = 0;
  for (int e = 0; e < ndirs; e++)
    any |= (ex.sbytes[e] || ex.rbytes[e]) && ex.nbr[e] != ex.me;
  if (any) {
    nccl_check(nccl.group_start(), "ncclGroupStart");
    for (int e = 0; e < ndirs; e++)
      if (ex.sbytes[e] && ex.nbr[e] != ex.me)
        nccl_check(nccl.send(ex.dsend + ex.soff[e], ex.sbytes[e], NCCL_INT8, ex.nbr[e], nccl.comm, ex.stream),
                   "ncclSend (halo exchange)");
    for (int e = ndirs - 1; e >= 0; e--)
      if (ex.rbytes[e] && ex.nbr[e] != ex.me)
        nccl_check(nccl.recv(ex.drecv + ex.roff[e], ex.rbytes[e], NCCL_INT8, ex.nbr[e], nccl.comm, ex.stream),
                   "ncclRecv (halo exchange)");
    nccl_check(nccl.group_end(), "ncclGroupEnd");
  }
  for (int e = 0; e < ndirs; e++)
    if (ex.sbytes[e] && ex.nbr[e] == ex.me) {
      const int to = ndirs - 1 - e;
      if (ex.rbytes[to] != ex.sbytes[e])
        stn_fatal("internal error in the --mpi runtime: a halo message to itself of %zu bytes where %zu are "
                  "expected (please report it with the .stn file)", ex.sbytes[e], ex.rbytes[to]);
      STN_CUDA_CHECK(cudaMemcpyAsync(ex.drecv + ex.roff[to], ex.dsend + ex.soff[e], ex.sbytes[e],
                                     cudaMemcpyDeviceToDevice, ex.stream));
    }
}

void stn_cuda_mpi_begin(stn_mpi_xch *x, const long *lo, const long *hi, stn_mpi_parts *parts)
{
  setup();
  ex.cart = stn_mpi_xch_setup(x, ex.nbr);
  const int rank = x->g->rank, ndirs = rank == 1 ? 3 : rank == 2 ? 9 : 27;
  if (x->pending)
    stn_fatal("internal error in the --mpi runtime: kernel %s starts an exchange while its last one was never "
              "completed (please report it with the .stn file)", x->kernel);
  const int any = stn_mpi_plan(x, lo, hi, parts);
  x->pending = any;
  x->nreq = 0;
  if (!any)
    return;
  x->prof.exchanges++;
  ex.used = 1;
  /* --profile on the device path: the last exchange's events, read
   * before the clock starts, since reading them waits for the GPU */
  read_timing();
  const double t0 = stn_time();
  x->t_post = t0;
  /* the last exchange's unpacking reads the receive buffers these messages
   * fill (on the device path the exchange stream keeps them in order) */
  if (ex.unpack_pending) {
    STN_CUDA_CHECK(cudaEventSynchronize(ex.unpacked));
    ex.unpack_pending = 0;
  }
  ex.nbox = 0;
  ex.stotal = plan(x, 1, ex.soff, ex.sbytes);
  ex.nsend = ex.nbox;
  ex.rtotal = plan(x, 0, ex.roff, ex.rbytes);
  grow(&ex.dsend, &ex.dsend_cap, ex.stotal, 0, "send");
  grow(&ex.drecv, &ex.drecv_cap, ex.rtotal, 0, "receive");
  if (!ex.aware && !device_path) {
    grow(&ex.hsend, &ex.hsend_cap, ex.stotal, 1, "send");
    grow(&ex.hrecv, &ex.hrecv_cap, ex.rtotal, 1, "receive");
  }
  char *rbuf = ex.aware ? ex.drecv : ex.hrecv;
  for (int e = 0; e < ndirs && !device_path; e++)
    if (ex.rbytes[e]) {
      int dir[STN_MAX_RANK], back[STN_MAX_RANK];
      stn_mpi_dir_of(rank, e, dir);
      for (int d = 0; d < rank; d++)
        back[d] = -dir[d];
      /* the neighbour at e sends towards us (its direction -e) with that tag */
      mpi_check(MPI_Irecv(rbuf + ex.roff[e], (int)ex.rbytes[e], MPI_BYTE, ex.nbr[e], stn_mpi_dir_index(rank, back), ex.cart,
                          &x->req[x->nreq++]), "MPI_Irecv (halo exchange)");
    }
  /* packed after the launches that wrote the fields, beside the interior's */
  if (ex.stotal || device_path) {
    STN_CUDA_CHECK(cudaEventRecord(ex.written, 0));
    STN_CUDA_CHECK(cudaStreamWaitEvent(ex.stream, ex.written, 0));
  }
  if (device_path)
    STN_CUDA_CHECK(cudaEventRecord(ex.posted, ex.stream));
  if (ex.stotal) {
    copy_boxes(ex.box, ex.nsend, ex.dsend, 1);
    if (!ex.aware && !device_path) {
      STN_CUDA_CHECK(cudaMemcpyAsync(ex.hsend, ex.dsend, ex.stotal, cudaMemcpyDeviceToHost, ex.stream));
      stn_prof_transfer(0, (double)ex.stotal);
    }
  }
  STN_CUDA_CHECK(cudaEventRecord(ex.packed, ex.stream));
  if (device_path) { /* the messages and the unpacking follow on the stream */
    device_messages(ndirs);
    if (ex.rtotal)
      copy_boxes(ex.box + ex.nsend, ex.nbox - ex.nsend, ex.drecv, 0);
    STN_CUDA_CHECK(cudaEventRecord(ex.unpacked, ex.stream));
  }
  /* --tb across ranks: a field this kernel writes may travel (the first
   * time, or when it reads it too); its old points must be packed before
   * the interior overwrites them */
  for (int i = 0; i < x->nfields; i++)
    if (x->sel[i] && (x->fields[i].role & (STN_X_WFULL | STN_X_WPART))) {
      STN_CUDA_CHECK(cudaStreamWaitEvent(0, ex.packed, 0));
      break;
    }
  x->prof.bytes += (double)ex.stotal;
  x->prof.pack += stn_time() - t0;
}

/* Once the unpacking is enqueued: the launches after this one (the shell)
 * wait for it on the device, and the exchanged fields' ghost points count
 * as current. */
static void ghosts_written(stn_mpi_xch *x)
{
  STN_CUDA_CHECK(cudaStreamWaitEvent(0, ex.unpacked, 0));
  stn_mpi_exchanged(x);
  for (int i = 0; i < x->nfields; i++)
    if (x->sel[i])
      stn_cuda_wrote(x->fields[i].f);
}

/* Profile (stn_mpi.h's table): pack is the host's time to enqueue the
 * packing and post the receives; wait the host's time here until the
 * messages are in, or 0 when the launches before this call (the
 * interior) were still running when they were, so that the GPU computed
 * all through it; flight from the begin to the messages in; unpack the
 * time to enqueue the unpacking. */
void stn_cuda_mpi_end(stn_mpi_xch *x)
{
  if (!x->pending)
    return;
  const int rank = x->g->rank, ndirs = rank == 1 ? 3 : rank == 2 ? 9 : 27;
  const double t0 = stn_time();
  STN_CUDA_CHECK(cudaEventRecord(ex.computing, 0));
  if (device_path) { /* all enqueued by stn_cuda_mpi_begin: the shell waits on the device */
    ghosts_written(x);
    if (ex.timing)
      ex.timed = x;
    x->prof.unpack += stn_time() - t0;
    x->pending = 0;
    return;
  }
  STN_CUDA_CHECK(cudaEventSynchronize(ex.packed));
  char *sbuf = ex.aware ? ex.dsend : ex.hsend;
  for (int e = 0; e < ndirs; e++)
    if (ex.sbytes[e])
      mpi_check(MPI_Isend(sbuf + ex.soff[e], (int)ex.sbytes[e], MPI_BYTE, ex.nbr[e], e, ex.cart, &x->req[x->nreq++]),
                "MPI_Isend (halo exchange)");
  mpi_check(MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE), "MPI_Waitall (halo exchange)");
  const double t1 = stn_time();
  const cudaError_t busy = cudaEventQuery(ex.computing);
  if (busy == cudaErrorNotReady)
    cudaGetLastError(); /* not an error: the interior is still running */
  else
    STN_CUDA_CHECK(busy);
  if (ex.rtotal) {
    if (!ex.aware) {
      STN_CUDA_CHECK(cudaMemcpyAsync(ex.drecv, ex.hrecv, ex.rtotal, cudaMemcpyHostToDevice, ex.stream));
      stn_prof_transfer(1, (double)ex.rtotal);
    }
    copy_boxes(ex.box + ex.nsend, ex.nbox - ex.nsend, ex.drecv, 0);
  }
  STN_CUDA_CHECK(cudaEventRecord(ex.unpacked, ex.stream));
  ex.unpack_pending = 1;
  ghosts_written(x);
  x->prof.wait += busy == cudaErrorNotReady ? 0.0 : t1 - t0;
  x->prof.flight += t1 - x->t_post;
  x->prof.unpack += stn_time() - t1;
  x->pending = 0;
}

/* ---- reductions -------------------------------------------------------------- */

static double identity(int op) { return op == STN_RED_MAX ? -INFINITY : op == STN_RED_MIN ? INFINITY : 0.0; }

void stn_cuda_mpi_red_init(double *vals, stn_xsum *xvals, struct stn_reduction *red, int nparts, int nred,
                           const int *ops)
{
  for (int q = 0; q < nparts; q++) {
    for (int r = 0; r < nred; r++) {
      vals[q * nred + r] = identity(ops[r]);
      if (xvals)
        stn_xsum_zero(&xvals[q * nred + r]);
    }
    /* a part launched last call but not this one must not deliver into its
     * row later: drop its undelivered results (no one has read them) */
    for (int r = 0; r < STN_MAXRED; r++)
      red[q].dst[r] = NULL;
  }
}

/* The kernels whose results are still to be combined, in the order of
 * their latest recording (the same on every rank: the program's order),
 * so that where two kernels' results go to one variable the later stays. */
typedef struct {
  const double *vals;
  const stn_xsum *xvals;
  int nparts, nred, ops[STN_MAXRED];
  void *dst[STN_MAXRED];
  stn_type dst_type[STN_MAXRED];
} combine;
static combine *comb;
static int ncomb, capcomb;

static void combine_now(const combine *c)
{
  double all[STN_MAXRED];
  for (int r = 0; r < c->nred; r++) {
    if (c->ops[r] == STN_RED_XSUM) { /* exact: the parts' digits, then the ranks', rounded once */
      stn_xsum x;
      stn_xsum_zero(&x);
      for (int q = 0; q < c->nparts; q++)
        stn_xsum_merge(&x, &c->xvals[q * c->nred + r]);
      all[r] = stn_mpi_xsum(&x);
      continue;
    }
    double v = identity(c->ops[r]);
    for (int q = 0; q < c->nparts; q++) { /* in the parts' order: the same from run to run */
      const double w = c->vals[q * c->nred + r];
      v = c->ops[r] == STN_RED_SUM ? v + w : c->ops[r] == STN_RED_MAX ? (w > v ? w : v) : (w < v ? w : v);
    }
    all[r] = stn_mpi_reduce_double(v, c->ops[r]);
  }
  stn_cuda_deliver_now(all, c->nred, c->dst, c->dst_type);
}

/* stn_cuda_sync_hook: every part's results have been delivered into vals */
static void combine_pending(void)
{
  for (int i = 0; i < ncomb; i++)
    combine_now(&comb[i]);
  ncomb = 0;
}

void stn_cuda_mpi_red_done(const double *vals, const stn_xsum *xvals, int nparts, int nred, const int *ops,
                           void *const *dst, const stn_type *dst_type)
{
  if (nred > STN_MAXRED)
    stn_fatal("a kernel has %d reductions; at most %d are supported on the GPU", nred, STN_MAXRED);
  stn_cuda_sync_hook = combine_pending;
  combine *c = NULL;
  for (int i = 0; i < ncomb && !c; i++)
    if (comb[i].vals == vals)
      c = &comb[i];
  if (c) /* the last call's result is still to reach a different variable: deliver it first */
    for (int r = 0; r < nred; r++)
      if (c->dst[r] != dst[r]) {
        stn_cuda_sync();
        c = NULL;
        break;
      }
  if (c) {
    stn_move_last(comb, ncomb, sizeof *comb, (int)(c - comb));
    c = &comb[ncomb - 1];
  } else {
    if (ncomb == capcomb) {
      capcomb = capcomb ? 2 * capcomb : 16;
      comb = (combine *)realloc(comb, sizeof *comb * (size_t)capcomb);
      if (!comb)
        stn_fatal("out of memory");
    }
    c = &comb[ncomb++];
  }
  c->vals = vals;
  c->xvals = xvals;
  c->nparts = nparts;
  c->nred = nred;
  for (int r = 0; r < nred; r++) {
    c->ops[r] = ops[r];
    c->dst[r] = dst[r];
    c->dst_type[r] = dst_type[r];
  }
}

/* ---- finish ------------------------------------------------------------------ */

void stn_cuda_mpi_finish(stn_program *p)
{
  stn_cuda_drain();
  /* --save: gathered on rank 0 while the fields are on the device */
  const char *field, *path;
  for (int s = 0; stn_save_request(s, &field, &path); s++)
    for (int i = 0; i < p->nfields; i++)
      if (strcmp(p->fields[i]->name, field) == 0)
        stn_mpi_field_write(p->fields[i], path);
  stn_save_clear();
  const int said = stn_profiling && ex.used && stn_mpi_rank() == 0;
  const int aware = ex.aware;
  if (ex.ready) {
    read_timing();
    STN_CUDA_CHECK(cudaStreamSynchronize(ex.stream));
    STN_CUDA_CHECK(cudaFree(ex.dsend));
    STN_CUDA_CHECK(cudaFree(ex.drecv));
    if (ex.hsend)
      STN_CUDA_CHECK(cudaFreeHost(ex.hsend));
    if (ex.hrecv)
      STN_CUDA_CHECK(cudaFreeHost(ex.hrecv));
    STN_CUDA_CHECK(cudaEventDestroy(ex.written));
    STN_CUDA_CHECK(cudaEventDestroy(ex.packed));
    STN_CUDA_CHECK(cudaEventDestroy(ex.unpacked));
    STN_CUDA_CHECK(cudaEventDestroy(ex.computing));
    STN_CUDA_CHECK(cudaEventDestroy(ex.posted));
    STN_CUDA_CHECK(cudaStreamDestroy(ex.stream));
    free(ex.box);
    memset(&ex, 0, sizeof ex);
  }
  if (nccl.comm) {
    nccl_check(nccl.comm_destroy(nccl.comm), "ncclCommDestroy");
    nccl.comm = NULL;
  }
  stn_cuda_release(p);
  stn_mpi_finish(p); /* the profile on rank 0, the exchanges' table, MPI_Finalize */
  if (said && device_path)
    fprintf(stderr, "halo exchanges on the GPU: packed and unpacked by kernels; messages GPU to GPU on the "
                    "exchange stream (%s; wait is how long the halos arrived after the interior, on the device)\n",
            nccl.version ? "NCCL" : "copies: one rank");
  else if (said)
    fprintf(stderr, "halo exchanges on the GPU: packed and unpacked by kernels; messages %s%s%s\n",
            aware ? "from device memory (CUDA-aware MPI)" : "staged through pinned host memory",
            transport_note ? "; NCCL: " : "", transport_note ? transport_note : "");
}
