// The C shim over Google Benchmark (API and contracts in gbench.h): the only
// C++ in optic. It forwards to Google Benchmark and adds nothing to what is
// measured; every entry point is noexcept so no C++ exception unwinds into C.
#include "bench/shim/gbench.h"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace {

// The opaque C handles are the Google Benchmark objects themselves.
benchmark::internal::Benchmark *bm(optic_bench *b) { return reinterpret_cast<benchmark::internal::Benchmark *>(b); }
benchmark::State &state(optic_bench_state *st) { return *reinterpret_cast<benchmark::State *>(st); }
const benchmark::State &state(const optic_bench_state *st) { return *reinterpret_cast<const benchmark::State *>(st); }

std::atomic<bool> any_error{false};

// Progress events for a parent process (optic report): with
// $OPTIC_BENCH_PROGRESS_FD set to an open descriptor, thread 0 of every call
// of a benchmark body writes "start\t<registered name>\t<arg>,<arg>...\n"
// before the body runs (one call per trial and per repetition), so the parent
// knows which case runs now even when repetitions are interleaved and Google
// Benchmark prints a case only once all its repetitions are done.
int progress_fd = -1;

struct family {
  std::string name;
  std::size_t nargs = 0;
};
std::vector<family> &families() {
  static std::vector<family> f;
  return f;
}

void progress_start(std::size_t family_index, const benchmark::State &st) {
  if (progress_fd < 0 || st.thread_index() != 0) return;
  const family &f = families()[family_index];
  std::string line = "start\t" + f.name + "\t";
  for (std::size_t i = 0; i < f.nargs; i++) {
    if (i) line += ",";
    line += std::to_string(st.range(i));
  }
  line += "\n";
  // One write of a short line: atomic on a pipe; a failure only loses progress.
  if (write(progress_fd, line.data(), line.size()) < 0) progress_fd = -1;
}

void note_args(optic_bench *b, std::size_t count);

benchmark::Counter::Flags counter_flags(unsigned flags) {
  int f = benchmark::Counter::kDefaults;
  if (flags & OPTIC_BENCH_COUNTER_RATE) f |= benchmark::Counter::kIsRate;
  if (flags & OPTIC_BENCH_COUNTER_AVG_THREADS) f |= benchmark::Counter::kAvgThreads;
  if (flags & OPTIC_BENCH_COUNTER_ITERATION_INVARIANT) f |= benchmark::Counter::kIsIterationInvariant;
  if (flags & OPTIC_BENCH_COUNTER_PER_ITERATION) f |= benchmark::Counter::kAvgIterations;
  return static_cast<benchmark::Counter::Flags>(f);
}

// The Benchmark objects in registration order (index = family index).
std::vector<benchmark::internal::Benchmark *> &registered() {
  static std::vector<benchmark::internal::Benchmark *> r;
  return r;
}

void note_args(optic_bench *b, std::size_t count) {
  for (std::size_t i = 0; i < registered().size(); i++) {
    if (registered()[i] == bm(b) && families()[i].nargs < count) families()[i].nargs = count;
  }
}

} // namespace

extern "C" {

optic_bench *optic_bench_register(const char *name, optic_bench_fn fn, void *user) noexcept {
  std::size_t index = families().size();
  families().push_back(family{name, 0});
  benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(name, [fn, user, index](benchmark::State &st) {
    progress_start(index, st);
    fn(reinterpret_cast<optic_bench_state *>(&st), user);
  });
  registered().push_back(b);
  return reinterpret_cast<optic_bench *>(b);
}

void optic_bench_args(optic_bench *b, const int64_t *args, size_t count) noexcept {
  note_args(b, count);
  bm(b)->Args(std::vector<int64_t>(args, args + count));
}

void optic_bench_range_of(optic_bench *b, int64_t lo, int64_t hi) noexcept {
  note_args(b, 1);
  bm(b)->Range(lo, hi);
}

void optic_bench_dense_range(optic_bench *b, int64_t lo, int64_t hi, int step) noexcept {
  note_args(b, 1);
  bm(b)->DenseRange(lo, hi, step);
}

void optic_bench_arg_names(optic_bench *b, const char *const *names, size_t count) noexcept {
  bm(b)->ArgNames(std::vector<std::string>(names, names + count));
}

void optic_bench_threads(optic_bench *b, int threads) noexcept { bm(b)->Threads(threads); }

void optic_bench_use_real_time(optic_bench *b) noexcept { bm(b)->UseRealTime(); }

void optic_bench_use_manual_time(optic_bench *b) noexcept { bm(b)->UseManualTime(); }

void optic_bench_min_time(optic_bench *b, double seconds) noexcept { bm(b)->MinTime(seconds); }

void optic_bench_repetitions(optic_bench *b, int n) noexcept { bm(b)->Repetitions(n); }

void optic_bench_set_unit(optic_bench *b, optic_bench_unit unit) noexcept {
  switch (unit) {
    case OPTIC_BENCH_US: bm(b)->Unit(benchmark::kMicrosecond); break;
    case OPTIC_BENCH_MS: bm(b)->Unit(benchmark::kMillisecond); break;
    case OPTIC_BENCH_S: bm(b)->Unit(benchmark::kSecond); break;
    default: bm(b)->Unit(benchmark::kNanosecond); break;
  }
}

bool optic_bench_keep_running(optic_bench_state *st) noexcept { return state(st).KeepRunning(); }

void optic_bench_pause(optic_bench_state *st) noexcept { state(st).PauseTiming(); }

void optic_bench_resume(optic_bench_state *st) noexcept { state(st).ResumeTiming(); }

void optic_bench_set_iteration_time(optic_bench_state *st, double seconds) noexcept {
  state(st).SetIterationTime(seconds);
}

int64_t optic_bench_range(const optic_bench_state *st, int i) noexcept {
  return state(st).range(static_cast<std::size_t>(i));
}

int optic_bench_thread_index(const optic_bench_state *st) noexcept { return state(st).thread_index(); }

int optic_bench_thread_count(const optic_bench_state *st) noexcept { return state(st).threads(); }

int64_t optic_bench_iterations(const optic_bench_state *st) noexcept { return state(st).iterations(); }

void optic_bench_set_items_processed(optic_bench_state *st, int64_t items) noexcept {
  state(st).SetItemsProcessed(items);
}

void optic_bench_set_bytes_processed(optic_bench_state *st, int64_t bytes) noexcept {
  state(st).SetBytesProcessed(bytes);
}

void optic_bench_counter(optic_bench_state *st, const char *name, double value, unsigned flags) noexcept {
  benchmark::Counter::OneK base =
      (flags & OPTIC_BENCH_COUNTER_BASE_1024) ? benchmark::Counter::kIs1024 : benchmark::Counter::kIs1000;
  state(st).counters[name] = benchmark::Counter(value, counter_flags(flags), base);
}

void optic_bench_set_label(optic_bench_state *st, const char *label) noexcept { state(st).SetLabel(label); }

void optic_bench_skip_with_error(optic_bench_state *st, const char *msg) noexcept {
  any_error.store(true);
  state(st).SkipWithError(msg);
}

void optic_bench_do_not_optimize(const void *p) noexcept {
  benchmark::DoNotOptimize(p);
  benchmark::ClobberMemory();
}

void optic_bench_add_context(const char *key, const char *value) noexcept { benchmark::AddCustomContext(key, value); }

int optic_bench_main(int argc, char **argv) noexcept {
  try {
    const char *fd = std::getenv("OPTIC_BENCH_PROGRESS_FD");
    if (fd && *fd) progress_fd = std::atoi(fd);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    std::size_t matched = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (matched == 0) return 2;
    return any_error.load() ? 3 : 0;
  } catch (const std::exception &e) {
    // Google Benchmark reports its own failures itself; an exception here is
    // an allocation failure or a library bug, which a C caller cannot catch.
    std::fprintf(stderr, "optic bench: %s\n", e.what());
    return 1;
  }
}

} // extern "C"
