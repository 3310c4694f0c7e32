# Friendly front for the CMake presets. `make test` and `make report` work on a
# fresh Debian machine as root: they install what is missing first.
.PHONY: all deps build test report asan tsan tsan-omp debug fuzz clean

JOBS ?= $(shell nproc)

all: build

deps:
	@./scripts/install-deps

build: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)

test: build
	ctest --preset release -j $(JOBS)

# The main job (docs/report.md): release build, then `optic report`, which
# calibrates first when no machine model exists, runs the default benchmark
# set (< 3 min on 2 cores) and writes $(REPORT_DIR)/report.{json,html}.
# Options through REPORT_ARGS, e.g. make report REPORT_ARGS=--quick.
REPORT_DIR ?= build/report
REPORT_ARGS ?=
report: build
	@./scripts/install-deps --report
	./build/release/tools/optic report --out-dir $(REPORT_DIR) $(REPORT_ARGS)

debug: deps
	cmake --preset debug
	cmake --build --preset debug -j $(JOBS)
	ctest --preset debug -j $(JOBS)

asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

tsan: deps
	cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -j $(JOBS)

# ThreadSanitizer over OpenMP (clang, libomp + Archer): the exec, optim and pod
# tests plus the race canaries (docs/runtime.md, "Race check").
tsan-omp: deps
	cmake --preset tsan-omp
	cmake --build --preset tsan-omp -j $(JOBS)
	ctest --preset tsan-omp -j $(JOBS)

# Builds every libFuzzer target (fuzz preset) and runs each for its share of
# FUZZ_SECONDS (docs/fuzzing.md has longer runs).
FUZZ_SECONDS ?= 30
fuzz: deps
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	./scripts/run-fuzzers build/fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build
