// The CUDA runtime calls the CUDA backend makes, emulated on the CPU, so that cuda/backend_cuda.cu's
// host code and kernels run (and are tested) on machines without a GPU. cuda/backend_cuda_emulation.cc
// compiles backend_cuda.cu with g++ against this header instead of <cuda_runtime.h>; the engine
// offers it as BackendKind::kCudaEmulation (`--backend cuda-emulation`).
//
// What it checks that the CPU backend cannot:
// - Host code that reads or writes device memory: every cudaMalloc block is mapped PROT_NONE
//   except while an emulated kernel, copy or memset runs, so such an access faults at once.
// - Missing synchronisation: work is queued per stream and runs only when something waits for it
//   (cudaStreamSynchronize, cudaEventSynchronize, a copy to pageable memory, cudaFree), in stream
//   order, with events and cudaStreamWaitEvent ordering streams as on a device. A host that reads
//   a pinned buffer before waiting for the copy into it reads stale data.
// - Uninitialised device memory: cudaMalloc blocks start as 0xFF bytes (NaN as floats).
// - Kernels that leave their arrays: each cudaMalloc block ends at a 256-byte boundary (a device
//   allocation's granularity and alignment) against a guard page that is never readable, and a
//   second guard page lies before it, so an access past the end (or well before the start) faults
//   at once and says so, with its offset, where a device would read or corrupt a neighbour.
// - Copies and memsets that leave their allocation, copies whose kind does not match where the
//   pointers are, pointer kernel arguments into pageable host memory, empty or oversized launches:
//   reported as the CUDA error a device would give (or a stricter one), through the same checks.
//
// - Threads that touch each other's data: a launch's threads run on several host threads at once
//   (EmulationWorkers, default up to 4), dealt out by index modulo the worker count, so world w and
//   world w + 1 step side by side. Two worlds' blocks that overlap (a wrong stride or offset) then
//   race and the run stops matching the CPU backend; run one after another, each world would
//   have set up its scratch before reading it, and the overlap would not show.
//
// What it does not model: threads of a block do not run in lockstep, so kernels must not rely on
// __syncthreads or shared memory (none does); device arithmetic (FMA contraction, sinf) is the
// host's, so results match the CPU backend's bit for bit rather than to the device's rounding.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __host__
#define __device__
#define __forceinline__ inline
#define __grid_constant__
#define __launch_bounds__(...)

namespace s2r {
namespace cuda_emulation {

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorLaunchOutOfResources = 701,
};
enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerMultiProcessor = 39, cudaDevAttrMultiProcessorCount = 16 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
constexpr unsigned cudaEventDisableTiming = 2;

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
// the running emulated thread's coordinates (x only: every launch here is one-dimensional)
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

struct Stream {
  std::deque<std::function<void()>> ops;
  int64_t enqueued = 0, executed = 0;
};
struct Event {
  Stream* stream = nullptr;
  int64_t seq = 0;  // the stream's work up to here precedes the event
};
using cudaStream_t = Stream*;
using cudaEvent_t = Event*;

inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error (emulated)";
    case cudaErrorInvalidValue: return "invalid argument (emulated: a copy or memset outside its allocation)";
    case cudaErrorMemoryAllocation: return "out of memory (emulated)";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument (emulated: an empty or oversized launch)";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer (emulated)";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction (emulated: the pointers are not where the kind says)";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle (emulated)";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch (emulated)";
  }
  return "unknown error (emulated)";
}

// The emulated device: its allocations, pinned host allocations, streams, and the last error.
class Runtime {
 public:
  static Runtime& Get() {
    static Runtime* r = new Runtime();  // never destroyed: backends may outlive static destruction order
    return *r;
  }
  Runtime() {
    struct sigaction sa {};
    sa.sa_sigaction = &Runtime::OnFault;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
  }

  enum class Where { kPageable, kPinned, kDevice };
  // where [p, p + bytes) lies; `inside` false when it starts in an allocation but leaves it
  Where Locate(const void* p, size_t bytes, bool* inside) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    *inside = true;
    for (auto* table : {&device_, &pinned_}) {
      auto it = table->upper_bound(static_cast<const char*>(p));
      if (it == table->begin()) continue;
      --it;
      const char* base = it->first;
      const char* q = static_cast<const char*>(p);
      if (q < base + it->second) {
        *inside = q + bytes <= base + it->second;
        return table == &device_ ? Where::kDevice : Where::kPinned;
      }
    }
    return Where::kPageable;
  }

  // A block ends where a device allocation's granularity (256 B) ends, against a page that is
  // never mapped readable; another such page lies before its first page. A kernel that reads or
  // writes past the end of its array by more than that rounding (or far before its start) faults
  // there, where on a device it would read a neighbour's data or fault much later.
  cudaError_t Malloc(void** p, size_t bytes) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    const size_t body = BodyBytes(bytes);
    const size_t mapped = body + 2 * PageBytes();
    void* m = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
    char* first = static_cast<char*>(m) + PageBytes();
    char* block = first + body - RoundTo(std::max<size_t>(bytes, 1), kDeviceAlign);
    mprotect(first, body, PROT_READ | PROT_WRITE);
    std::memset(first, 0xFF, body);  // NaN as float: reads of memory nothing wrote show up
    if (open_ == 0) mprotect(first, body, PROT_NONE);
    device_[block] = bytes;
    for (auto& range : ranges_) {
      uintptr_t empty = 0;
      if (range.base.compare_exchange_strong(empty, reinterpret_cast<uintptr_t>(m))) {
        range.bytes.store(mapped);
        range.block.store(reinterpret_cast<uintptr_t>(block));
        range.asked.store(bytes);
        break;
      }
    }
    *p = block;
    return cudaSuccess;
  }
  cudaError_t Free(void* p) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (p == nullptr) return cudaSuccess;
    auto it = device_.find(static_cast<char*>(p));
    if (it == device_.end()) return cudaErrorInvalidDevicePointer;
    FlushAll();  // cudaFree waits for the device
    for (auto& range : ranges_) {
      if (range.block.load() == reinterpret_cast<uintptr_t>(p)) {
        range.bytes.store(0);
        range.block.store(0);
        range.base.store(0);
      }
    }
    munmap(Mapping(it->first, it->second), BodyBytes(it->second) + 2 * PageBytes());
    device_.erase(it);
    return cudaSuccess;
  }
  cudaError_t MallocHost(void** p, size_t bytes) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    void* m = std::aligned_alloc(64, RoundTo(std::max<size_t>(bytes, 1), 64));
    if (m == nullptr) return cudaErrorMemoryAllocation;
    std::memset(m, 0xFF, bytes);
    pinned_[static_cast<char*>(m)] = bytes;
    *p = m;
    return cudaSuccess;
  }
  cudaError_t FreeHost(void* p) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    auto it = pinned_.find(static_cast<char*>(p));
    if (it == pinned_.end()) return cudaErrorInvalidValue;
    FlushAll();  // cudaFreeHost waits for the device
    std::memset(p, 0xFF, it->second);  // NaN: a pointer kept into freed staging reads garbage, not stale data
    std::free(p);
    pinned_.erase(it);
    return cudaSuccess;
  }

  Stream* NewStream() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    streams_.push_back(std::make_unique<Stream>());
    return streams_.back().get();
  }
  cudaError_t DestroyStream(Stream* s) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i].get() == s) {
        Flush(s, s->enqueued);
        streams_.erase(streams_.begin() + static_cast<std::ptrdiff_t>(i));
        return cudaSuccess;
      }
    }
    return cudaErrorInvalidResourceHandle;
  }

  // Queues `op` on stream `s` (null: the legacy default stream, which waits for every other
  // stream's earlier work and is waited for by theirs).
  void Enqueue(Stream* s, std::function<void()> op) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (s == nullptr) {
      for (auto& other : streams_) Flush(other.get(), other->enqueued);
      s = &legacy_;
    } else {
      Flush(&legacy_, legacy_.enqueued);
    }
    s->ops.push_back(std::move(op));
    ++s->enqueued;
  }
  // runs stream s's queued work up to position `upto`
  void Flush(Stream* s, int64_t upto) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (s == nullptr) s = &legacy_;
    if (s->executed >= upto || s->ops.empty()) return;
    Open();
    while (s->executed < upto && !s->ops.empty()) {
      std::function<void()> op = std::move(s->ops.front());
      s->ops.pop_front();
      ++s->executed;
      op();
    }
    Close();
  }
  void FlushAll() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    Flush(&legacy_, legacy_.enqueued);
    for (auto& s : streams_) Flush(s.get(), s->enqueued);
  }
  Stream* Legacy() { return &legacy_; }

  void SetError(cudaError_t e) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (last_error_ == cudaSuccess) last_error_ = e;
  }
  cudaError_t TakeError() {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    cudaError_t e = last_error_;
    last_error_ = cudaSuccess;
    return e;
  }

 private:
  static size_t RoundTo(size_t n, size_t a) { return (n + a - 1) / a * a; }
  static size_t PageBytes() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
  }
  static size_t RoundToPages(size_t n) { return RoundTo(std::max<size_t>(n, 1), PageBytes()); }
  // cudaMalloc's alignment, and the granularity past which an access leaves the block
  static constexpr size_t kDeviceAlign = 256;
  // a block's readable pages (between its two guard pages), and the mapping's start
  static size_t BodyBytes(size_t bytes) { return RoundToPages(RoundTo(std::max<size_t>(bytes, 1), kDeviceAlign)); }
  static char* FirstPage(const char* block, size_t bytes) {
    return const_cast<char*>(block) + RoundTo(std::max<size_t>(bytes, 1), kDeviceAlign) - BodyBytes(bytes);
  }
  static void* Mapping(const char* block, size_t bytes) { return FirstPage(block, bytes) - PageBytes(); }
  // device memory is readable and writable only while emulated device work runs
  void Open() {
    if (open_++ == 0) {
      for (auto& [block, bytes] : device_) mprotect(FirstPage(block, bytes), BodyBytes(bytes), PROT_READ | PROT_WRITE);
    }
  }
  void Close() {
    if (--open_ == 0) {
      for (auto& [block, bytes] : device_) mprotect(FirstPage(block, bytes), BodyBytes(bytes), PROT_NONE);
    }
  }

  // A fault on emulated device memory is host code touching the device, or any code leaving a
  // block for its guard pages: say which, then die of the signal as before (the handler is
  // reset). The ranges are a lock-free copy of device_'s.
  static void OnFault(int, siginfo_t* info, void*) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
    for (const auto& range : Get().ranges_) {
      const uintptr_t base = range.base.load(), bytes = range.bytes.load();
      if (base == 0 || a < base || a >= base + bytes) continue;
      const uintptr_t page = PageBytes(), block = range.block.load();
      const bool before = a < base + page, past = a >= base + bytes - page;
      const char* msg =
          before ? "s2r cuda emulation: an access before the start of a cudaMalloc block (its guard page)\n"
          : past ? "s2r cuda emulation: an access past the end of a cudaMalloc block (its guard page)\n"
                 : "s2r cuda emulation: host code touched device memory (a cudaMalloc block) outside device work\n";
      ssize_t ignored = write(2, msg, std::strlen(msg));
      (void)ignored;
      if (before || past) {
        WriteNumberLine("  at byte offset ", static_cast<int64_t>(a) - static_cast<int64_t>(block), " of a block of ",
                        static_cast<int64_t>(range.asked.load()), " bytes\n");
      }
      break;
    }
  }
  // writes "<a><x><b><y><c>" to stderr with write(2) alone (async-signal-safe)
  static void WriteNumberLine(const char* a, int64_t x, const char* b, int64_t y, const char* c) {
    char line[160];
    size_t n = 0;
    auto text = [&](const char* t) {
      while (*t != 0 && n < sizeof(line)) line[n++] = *t++;
    };
    auto number = [&](int64_t v) {
      char rev[24];
      int k = 0;
      const bool negative = v < 0;
      uint64_t u = negative ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      do {
        rev[k++] = static_cast<char>('0' + u % 10);
        u /= 10;
      } while (u != 0 && k < 24);
      if (negative && n < sizeof(line)) line[n++] = '-';
      while (k > 0 && n < sizeof(line)) line[n++] = rev[--k];
    };
    text(a);
    number(x);
    text(b);
    number(y);
    text(c);
    ssize_t ignored = write(2, line, n);
    (void)ignored;
  }
  struct Range {
    std::atomic<uintptr_t> base{0}, bytes{0};  // the whole mapping, guard pages included
    std::atomic<uintptr_t> block{0}, asked{0};  // the block cudaMalloc returned and its size
  };
  Range ranges_[1024];

  std::recursive_mutex mu_;
  std::map<const char*, size_t> device_;  // cudaMalloc blocks: base -> bytes asked for
  std::map<const char*, size_t> pinned_;  // cudaMallocHost blocks
  std::vector<std::unique_ptr<Stream>> streams_;
  Stream legacy_;
  int open_ = 0;
  cudaError_t last_error_ = cudaSuccess;
};

inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return Runtime::Get().TakeError(); }
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
// the emulated device's shape: an H100 SXM's (132 SMs of 2,048 threads, 80 GB), all of it free
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return cudaErrorInvalidValue;
  *value = attr == cudaDevAttrMultiProcessorCount ? 132 : 2048;
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = size_t(80) * 1000 * 1000 * 1000;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, size_t bytes) { return Runtime::Get().Malloc(p, bytes); }
template <typename T>
cudaError_t cudaMalloc(T** p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
inline cudaError_t cudaFree(void* p) { return Runtime::Get().Free(p); }
inline cudaError_t cudaMallocHost(void** p, size_t bytes) { return Runtime::Get().MallocHost(p, bytes); }
template <typename T>
cudaError_t cudaMallocHost(T** p, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(p), bytes);
}
inline cudaError_t cudaFreeHost(void* p) { return Runtime::Get().FreeHost(p); }
inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = Runtime::Get().NewStream();
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { return Runtime::Get().DestroyStream(s); }
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  Runtime& r = Runtime::Get();
  if (s == nullptr) r.FlushAll();
  else r.Flush(s, s->enqueued);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  Runtime::Get().FlushAll();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = new Event();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr) {
  Runtime& r = Runtime::Get();
  Stream* st = s ? s : r.Legacy();
  e->stream = st;
  e->seq = st->enqueued;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (e->stream) Runtime::Get().Flush(e->stream, e->seq);
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  Stream* from = e->stream;
  const int64_t seq = e->seq;
  if (from == nullptr) return cudaSuccess;
  Runtime::Get().Enqueue(s, [from, seq] { Runtime::Get().Flush(from, seq); });
  return cudaSuccess;
}

// checks a copy's pointers against its kind and its allocations' bounds
inline cudaError_t CheckCopy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool* src_pinned,
                             bool* dst_pinned) {
  Runtime& r = Runtime::Get();
  bool din = true, sin = true;
  const Runtime::Where d = r.Locate(dst, bytes, &din), s = r.Locate(src, bytes, &sin);
  *src_pinned = s == Runtime::Where::kPinned;
  *dst_pinned = d == Runtime::Where::kPinned;
  const bool want_dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool want_src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((d == Runtime::Where::kDevice) != want_dst_device || (s == Runtime::Where::kDevice) != want_src_device) {
    return cudaErrorInvalidMemcpyDirection;
  }
  if (!din || !sin) return cudaErrorInvalidValue;
  return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t stream = nullptr) {
  if (bytes == 0) return cudaSuccess;
  bool src_pinned = false, dst_pinned = false;
  if (cudaError_t e = CheckCopy(dst, src, bytes, kind, &src_pinned, &dst_pinned); e != cudaSuccess) return e;
  Runtime& r = Runtime::Get();
  if (kind == cudaMemcpyHostToDevice && !src_pinned) {
    // from pageable memory the source is staged before the call returns
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
    r.Enqueue(stream, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
    return cudaSuccess;
  }
  r.Enqueue(stream, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
  if (kind == cudaMemcpyDeviceToHost && !dst_pinned) {
    // into pageable memory the copy completes before the call returns
    Stream* s = stream ? stream : r.Legacy();
    r.Flush(s, s->enqueued);
  }
  return cudaSuccess;
}

inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream = nullptr) {
  if (bytes == 0) return cudaSuccess;
  bool inside = true;
  if (Runtime::Get().Locate(p, bytes, &inside) != Runtime::Where::kDevice) return cudaErrorInvalidDevicePointer;
  if (!inside) return cudaErrorInvalidValue;
  Runtime::Get().Enqueue(stream, [p, value, bytes] { std::memset(p, value, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t stream = nullptr) {
  if (width == 0 || height == 0) return cudaSuccess;
  if (width > pitch) return cudaErrorInvalidValue;
  bool inside = true;
  const size_t span = pitch * (height - 1) + width;
  if (Runtime::Get().Locate(p, span, &inside) != Runtime::Where::kDevice) return cudaErrorInvalidDevicePointer;
  if (!inside) return cudaErrorInvalidValue;
  Runtime::Get().Enqueue(stream, [p, pitch, value, width, height] {
    for (size_t row = 0; row < height; ++row) std::memset(static_cast<char*>(p) + row * pitch, value, width);
  });
  return cudaSuccess;
}

// A kernel argument that is a pointer must point at device or pinned memory (a device cannot read
// pageable host memory); other arguments are not inspected.
template <typename T>
bool DeviceReadable(const T& arg) {
  if constexpr (std::is_pointer_v<T>) {
    if (arg == nullptr) return true;
    bool inside = true;
    return Runtime::Get().Locate(arg, 1, &inside) != Runtime::Where::kPageable;
  } else {
    return true;
  }
}

// What the emulated kernels did that no result shows, for tests (host/backend.h
// CudaEmulationCountsSoFar): launches run, world blocks staged and copied back to device memory
// (cuda/backend_cuda.cu StageWorldBlock, UnstageWorldBlock), and of those copied back the ones
// marked edited by a sweep event. Process-wide; tests take differences.
struct Counts {
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> world_block_stagings{0};
  std::atomic<int64_t> world_block_writebacks{0};
  std::atomic<int64_t> world_block_edited_writebacks{0};
};
inline Counts& EmulationCounts() {
  static Counts counts;
  return counts;
}

// The error every launch reports instead of running (cudaSuccess: none), for tests of what the
// backend says when a device refuses a launch (host/backend.h SetCudaEmulationLaunchesOutOfMemory)
inline std::atomic<int>& EmulationLaunchFailure() {
  static std::atomic<int> error{cudaSuccess};
  return error;
}

// Host threads a launch's emulated threads run on (host/backend.h SetCudaEmulationWorkers): from
// S2R_CUDA_EMULATION_WORKERS where set (1 to 64; anything else is said on stderr and ignored),
// else the hardware's threads, at most 4.
inline std::atomic<int>& EmulationWorkers() {
  static std::atomic<int> workers{[] {
    const unsigned hw = std::thread::hardware_concurrency();
    const int fallback = hw == 0 ? 1 : static_cast<int>(std::min(hw, 4u));
    const char* env = std::getenv("S2R_CUDA_EMULATION_WORKERS");
    if (env == nullptr || *env == '\0') return fallback;
    char* end = nullptr;
    const long given = std::strtol(env, &end, 10);
    if (*end == '\0' && given >= 1 && given <= 64) return static_cast<int>(given);
    std::fprintf(stderr, "s2r cuda emulation: S2R_CUDA_EMULATION_WORKERS=%s is not a count from 1 to 64; using %d\n",
                 env, fallback);
    return fallback;
  }()};
  return workers;
}

// Runs `kernel` for the `grid` x `block` threads of one launch: worker k of n takes the threads
// whose flat index is k modulo n, in order, each with its own threadIdx and blockIdx.
template <typename Kernel>
void RunLaunch(const Kernel& kernel, unsigned grid, unsigned block) {
  const int64_t threads = int64_t(grid) * block;
  const int workers = static_cast<int>(std::min<int64_t>(EmulationWorkers().load(), threads));
  auto work = [&](int k) {
    gridDim = dim3(grid);
    blockDim = dim3(block);
    for (int64_t i = k; i < threads; i += workers) {
      blockIdx = uint3{static_cast<unsigned>(i / block), 0, 0};
      threadIdx = uint3{static_cast<unsigned>(i % block), 0, 0};
      kernel();
    }
  };
  std::vector<std::thread> helpers;
  for (int k = 1; k < workers; ++k) helpers.emplace_back(work, k);
  work(0);
  for (std::thread& t : helpers) t.join();
}

// `S2R_LAUNCH(kernel, grid, block, stream)(args...)`: queues grid x block emulated threads of
// `kernel` on `stream`, with the arguments copied as a launch copies them.
template <typename... Params>
class Launcher {
 public:
  Launcher(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream)
      : kernel_(kernel), grid_(grid), block_(block), stream_(stream) {}
  template <typename... Args>
  void operator()(Args&&... args) const {
    static_assert(sizeof...(Args) == sizeof...(Params), "kernel argument count");
    if (grid_ == 0 || block_ == 0 || block_ > 1024) {
      Runtime::Get().SetError(cudaErrorInvalidConfiguration);
      return;
    }
    if (const int failure = EmulationLaunchFailure().load(); failure != cudaSuccess) {
      Runtime::Get().SetError(static_cast<cudaError_t>(failure));
      return;
    }
    auto params = std::make_shared<std::tuple<std::decay_t<Params>...>>(std::forward<Args>(args)...);
    bool readable = true;
    std::apply([&](const auto&... p) { readable = (DeviceReadable(p) && ...); }, *params);
    if (!readable) {
      Runtime::Get().SetError(cudaErrorInvalidDevicePointer);
      return;
    }
    auto kernel = kernel_;
    const unsigned grid = grid_, block = block_;
    Runtime::Get().Enqueue(stream_, [kernel, grid, block, params] {
      EmulationCounts().launches.fetch_add(1, std::memory_order_relaxed);
      RunLaunch([&] { std::apply(kernel, *params); }, grid, block);
    });
  }

 private:
  void (*kernel_)(Params...);
  unsigned grid_, block_;
  cudaStream_t stream_;
};
template <typename... Params>
Launcher<Params...> Launch(void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream) {
  return Launcher<Params...>(kernel, grid, block, stream);
}

inline void nvtxRangePushA(const char*) {}
inline void nvtxRangePop() {}

}  // namespace cuda_emulation
}  // namespace s2r

#define S2R_LAUNCH(kernel, grid, block, stream) ::s2r::cuda_emulation::Launch(&kernel, (grid), (block), (stream))
