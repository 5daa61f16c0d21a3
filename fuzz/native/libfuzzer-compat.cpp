// What Jazzer.js's native addon expects of its own patched libFuzzer (CodeIntelligenceTesting's
// llvm-project-jazzer, which the addon's CMakeLists downloads from GitHub at build time), provided
// on top of upstream libFuzzer as Debian ships it (libclang-rt-16-dev), so the addon builds from
// the npm package's sources with nothing downloaded. fuzz/native/build-addon.sh links this file,
// the package's sources and libclang_rt.fuzzer_no_main into one .node file. What differs:
//
// 1. The death callback. The patched libFuzzer hands its "dump the crashing input" callback to
//    __jazzer_set_death_callback; upstream hands it to __sanitizer_set_death_callback (a weak
//    reference, meant for a sanitizer runtime, which a Node process does not have). Defined here, it
//    forwards the callback to the addon's own __jazzer_set_death_callback.
// 2. The compare hooks with a caller PC. The addon passes each JS comparison's site id as the
//    "program counter" of __sanitizer_cov_trace_const_cmp8_with_pc and
//    __sanitizer_cov_trace_pc_indir_with_pc, which upstream lacks: upstream's hooks take the PC
//    from their return address. Here the id picks one of kCallSites distinct call sites, so
//    different JS comparisons still count as different PCs in libFuzzer's value profile (the
//    values compared reach its tables of recent compares either way).
// 3. Stopping the loop. The addon's callback returns -2 to stop fuzzing after a finding (the JS
//    side has already printed it and dumped the input); upstream treats -2 as "do not add this
//    input" and goes on. And at the end of a run (-max_total_time, -runs) upstream's FuzzerDriver
//    calls exit(0), where the patched one returns to the addon, which resolves the JS promise.
//    The link wraps FuzzerDriver (--wrap) to return to the addon in both cases.
//    And in Jazzer.js's asynchronous mode libFuzzer runs on a thread of its own, where its alarm
//    (-timeout) did not fire in our runs (a hung input ran on until killed): its handler acts only
//    when the SIGALRM lands on the fuzzing thread. There a watchdog thread does what the alarm
//    does: an input still running after -timeout seconds is dumped (through the death callback)
//    and ends the process with libFuzzer's timeout exit code, 70.
// 4. registerModuleCounters: Jazzer.js 4 gives each instrumented ES module its own counters and
//    registers them with this function, added to the addon after the last release whose npm
//    package carries its C++ sources (2.1.0). build-addon.sh makes the module registration of the
//    package's addon.cpp local, and the module registered here adds the function to its exports.
#include <array>
#include <atomic>
#include <chrono>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/syscall.h>
#include <sys/time.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include <napi.h>

#include <fuzzer/FuzzerDefs.h>

extern "C" {
// Upstream libFuzzer (FuzzerTracePC.cpp).
void __sanitizer_cov_trace_const_cmp8(uint64_t arg1, uint64_t arg2);
void __sanitizer_cov_trace_pc_indir(uintptr_t callee);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *end);
void __sanitizer_cov_pcs_init(const uintptr_t *pcs_beg, const uintptr_t *pcs_end);
// The addon (shared/sanitizer_symbols.cpp).
void __jazzer_set_death_callback(void (*callback)());
}

namespace fuzzer {
// Upstream libFuzzer (FuzzerLoop.cpp): true while the fuzz target runs.
extern bool RunningUserCallback;
} // namespace fuzzer

// 1. The death callback.
namespace {
void (*gDeathCallback)() = nullptr;
} // namespace

extern "C" void __sanitizer_set_death_callback(void (*callback)()) {
  gDeathCallback = callback;
  __jazzer_set_death_callback(callback);
}

// 2. The compare hooks with a caller PC.
namespace {
constexpr std::size_t kCallSites = 1024;

// One function per site: noinline, and the empty asm after the call keeps it from being a tail
// call, so each instance's return address (upstream's "caller PC") is its own.
template <std::size_t Site>
__attribute__((noinline)) void CompareAt(uint64_t arg1, uint64_t arg2) {
  __sanitizer_cov_trace_const_cmp8(arg1, arg2);
  asm volatile("" ::: "memory");
}

template <std::size_t Site>
__attribute__((noinline)) void IndirAt(uintptr_t callee) {
  __sanitizer_cov_trace_pc_indir(callee);
  asm volatile("" ::: "memory");
}

template <std::size_t... Sites>
constexpr auto CompareTable(std::index_sequence<Sites...>) {
  return std::array<void (*)(uint64_t, uint64_t), sizeof...(Sites)>{&CompareAt<Sites>...};
}

template <std::size_t... Sites>
constexpr auto IndirTable(std::index_sequence<Sites...>) {
  return std::array<void (*)(uintptr_t), sizeof...(Sites)>{&IndirAt<Sites>...};
}

const auto kCompare = CompareTable(std::make_index_sequence<kCallSites>{});
const auto kIndir = IndirTable(std::make_index_sequence<kCallSites>{});
} // namespace

extern "C" void __sanitizer_cov_trace_const_cmp8_with_pc(uintptr_t caller_pc, uint64_t arg1, uint64_t arg2) {
  kCompare[caller_pc % kCallSites](arg1, arg2);
}

extern "C" void __sanitizer_cov_trace_pc_indir_with_pc(void *caller_pc, uintptr_t callee) {
  kIndir[reinterpret_cast<uintptr_t>(caller_pc) % kCallSites](callee);
}

// 3. Stopping the loop.
namespace {
constexpr int kStopFuzzing = -2;  // libfuzzer::RETURN_EXIT in the addon's shared/libfuzzer.h
fuzzer::UserCallback gAddonCallback = nullptr;
std::jmp_buf gBackToAddon;
bool gInDriver = false;

// Once the loop is left from inside a callback, libFuzzer must not count the callback as still
// running: its alarm (-timeout) would report a hang, and its exit hook "fuzz target exited".
void LeaveLoop() {
  fuzzer::RunningUserCallback = false;
  struct itimerval off = {};
  setitimer(ITIMER_REAL, &off, nullptr);
  signal(SIGALRM, SIG_IGN);
}

// The watchdog of the asynchronous mode: when the running input started (0: none is running).
constexpr int kTimeoutExitCode = 70;  // libFuzzer's -timeout_exitcode
std::atomic<int64_t> gInputStartedMs{0};
int gInputTimeoutSec = 0;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Watchdog() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t started = gInputStartedMs.load();
    if (started != 0 && NowMs() - started > int64_t{gInputTimeoutSec} * 1000) {
      std::fprintf(stderr, "==%d== ERROR: libFuzzer: timeout after %d seconds (an input of the asynchronous fuzz target has not finished)\n", getpid(), gInputTimeoutSec);
      if (gDeathCallback != nullptr) gDeathCallback();
      std::fprintf(stderr, "SUMMARY: libFuzzer: timeout\n");
      std::_Exit(kTimeoutExitCode);
    }
  }
}

int StoppableCallback(const uint8_t *data, size_t size) {
  gInputStartedMs.store(NowMs());
  int result = gAddonCallback(data, size);
  gInputStartedMs.store(0);
  if (result == kStopFuzzing) {
    LeaveLoop();
    std::longjmp(gBackToAddon, 1);
  }
  return result;
}
} // namespace

extern "C" int __real__ZN6fuzzer12FuzzerDriverEPiPPPcPFiPKhmE(int *argc, char ***argv, fuzzer::UserCallback callback);
extern "C" [[noreturn]] void __real_exit(int status);

extern "C" int __wrap__ZN6fuzzer12FuzzerDriverEPiPPPcPFiPKhmE(int *argc, char ***argv, fuzzer::UserCallback callback) {
  gAddonCallback = callback;
  // Off Node's main thread (the asynchronous mode), the watchdog stands in for libFuzzer's alarm.
  if (syscall(SYS_gettid) != getpid()) {
    for (int index = 0; index < *argc; ++index) {
      if (std::strncmp((*argv)[index], "-timeout=", 9) == 0) gInputTimeoutSec = std::atoi((*argv)[index] + 9);
    }
    if (gInputTimeoutSec > 0) std::thread(Watchdog).detach();
  }
  if (setjmp(gBackToAddon) != 0) {
    gInDriver = false;
    return 0;
  }
  gInDriver = true;
  int result = __real__ZN6fuzzer12FuzzerDriverEPiPPPcPFiPKhmE(argc, argv, StoppableCallback);
  gInDriver = false;
  return result;
}

// libFuzzer's own exit calls (this wrap applies to the objects linked into the addon only): the
// exit(0) at the end of a run returns to the addon; any other status ends the process as before.
extern "C" [[noreturn]] void __wrap_exit(int status) {
  if (status == 0 && gInDriver) {
    LeaveLoop();
    std::longjmp(gBackToAddon, 1);
  }
  __real_exit(status);
}

// 4. registerModuleCounters.
namespace {
struct PCTableEntry {
  uintptr_t PC, PCFlags;
};
// Fake PCs for module counters, above any the package's own coverage map uses (its PCs are the
// counters' indexes, at most 2^20).
uintptr_t gNextModulePC = uintptr_t{1} << 32;

void RegisterModuleCounters(const Napi::CallbackInfo &info) {
  if (info.Length() != 1 || !info[0].IsBuffer()) {
    throw Napi::Error::New(info.Env(), "Need one argument: a Buffer of 8-bit counters");
  }
  auto counters = info[0].As<Napi::Buffer<uint8_t>>();
  std::size_t size = counters.Length();
  if (size == 0) return;
  // libFuzzer keeps both pointers for the rest of the process: the table is never freed, and the
  // JS side keeps the Buffer alive (CoverageTracker.moduleCounters).
  auto *table = new PCTableEntry[size];
  for (std::size_t i = 0; i < size; ++i) table[i] = {gNextModulePC++, 0};
  __sanitizer_cov_8bit_counters_init(counters.Data(), counters.Data() + size);
  __sanitizer_cov_pcs_init(reinterpret_cast<const uintptr_t *>(table), reinterpret_cast<const uintptr_t *>(table + size));
}
} // namespace

// The package's addon.cpp, whose own module registration build-addon.sh makes local.
Napi::Object Init(Napi::Env env, Napi::Object exports);

static Napi::Object InitWithModuleCounters(Napi::Env env, Napi::Object exports) {
  Init(env, exports);
  exports["registerModuleCounters"] = Napi::Function::New<RegisterModuleCounters>(env);
  return exports;
}

NODE_API_MODULE(jazzerjs, InitWithModuleCounters)
