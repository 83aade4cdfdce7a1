# rocesim: `make run` (demo) and `make test` work on a fresh Debian 12 machine.
BUILD ?= build
JOBS  ?= $(shell nproc)
# `make run`: a small sweep of demo_sweep (scenarios/demo_sweep.toml), then its report.
DEMO_GRID ?= scheme=dcqcn,none load=0.3,0.6
DEMO_OUT  ?= runs/demo_sweep
DIR       ?= $(DEMO_OUT)
# WERROR=ON builds with -Werror (cmake -DROCESIM_WERROR=ON): what CI does (.ci/run; also when CI=true).
WERROR    ?= $(if $(filter true,$(CI)),ON,OFF)
# UNITY=ON compiles the library as a unity build (cmake -DROCESIM_UNITY=ON): faster from scratch, as in CI.
UNITY     ?= $(if $(filter true,$(CI)),ON,OFF)

.PHONY: all setup build build-rocesim pgo run report reproduce check test test-sanitize test-tsan fuzz fuzz-scenarios fuzz-traces bench clean format format-check

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DROCESIM_WERROR=$(WERROR) -DROCESIM_UNITY=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# Only the rocesim program (not the tests and benchmarks `make build` adds): what the demo, the report and
# the reproduction need.
build-rocesim: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DROCESIM_WERROR=$(WERROR) -DROCESIM_UNITY=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target rocesim

# `make pgo`: the rocesim program built with GCC's profile-guided optimization in $(PGO_BUILD)/: an
# instrumented build runs short training runs (the demo fabric under PGO_SCHEMES, a k = 16 fat-tree), then the
# program is rebuilt with their profile. The same results to the byte as `make build-rocesim`'s program, a few
# per cent faster (docs/performance.md), for about twice the build time.
PGO_BUILD   ?= build-pgo
PGO_SCHEMES ?= dcqcn hpcc timely dctcp
# One thread: the training build counts with -fprofile-update=single, which threads would race on.
PGO_TRAIN   := $(PGO_BUILD)/rocesim run demo -q --force -o $(PGO_BUILD)/pgo-train --threads 1
pgo: setup
	@find $(PGO_BUILD) -name '*.gcda' -delete 2>/dev/null || true
	@cmake -S . -B $(PGO_BUILD) -DCMAKE_BUILD_TYPE=Release -DROCESIM_UNITY=$(UNITY) \
	  -DCMAKE_CXX_FLAGS="-fprofile-generate -fprofile-update=single" -DCMAKE_EXE_LINKER_FLAGS=-fprofile-generate >/dev/null
	@cmake --build $(PGO_BUILD) -j$(JOBS) --target rocesim
	@for s in $(PGO_SCHEMES); do echo "training: $$s"; $(PGO_TRAIN) --set duration_ms=1 --set cc.scheme=$$s || exit 1; done
	@echo "training: k = 16 fat-tree"
	@$(PGO_TRAIN) --set duration_ms=0.5 --set topology.kind=fat_tree --set topology.k=16
	@rm -rf $(PGO_BUILD)/pgo-train
	@cmake -S . -B $(PGO_BUILD) -DCMAKE_CXX_FLAGS="-fprofile-use -fprofile-partial-training -Wno-missing-profile" \
	  -DCMAKE_EXE_LINKER_FLAGS= >/dev/null
	@cmake --build $(PGO_BUILD) -j$(JOBS) --target rocesim
	@echo "built: $(PGO_BUILD)/rocesim (profile-guided)"

run: build-rocesim
	$(BUILD)/rocesim sweep demo_sweep --grid $(DEMO_GRID) -j $(JOBS) -o $(DEMO_OUT) --force
	@$(BUILD)/rocesim report $(DEMO_OUT)

# make reproduce [PAPER=mercury|rcm|icc|tcd|lscc|all] [SCALE=quick|full]: the seed papers' experiments, their
# claims beside our numbers (runs/reproduce-SCALE/report.html) and docs/REPRODUCTION.md regenerated.
PAPER ?= all
SCALE ?= quick
reproduce: build-rocesim
	$(BUILD)/rocesim reproduce $(PAPER) --scale $(SCALE) -j $(JOBS)

# make report DIR=<run or sweep directory>  (default: the demo sweep)
report: build-rocesim
	@$(BUILD)/rocesim report $(DIR)

# The everyday loop: the Release build and every test once (no sanitizers; `make test` adds them).
check: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test: build format-check
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory test-sanitize
	@$(MAKE) --no-print-directory test-tsan

# The test suite again under AddressSanitizer + UndefinedBehaviorSanitizer (any report fails the test).
# -Og -g1 compiles in less than half the time of -O1 -g and runs about 17 % slower.
# ROCESIM_SANITIZED=1 lets a test shorten work that is only slow under the sanitizers.
ASAN_BUILD ?= build-asan
SAN_FLAGS  ?= -Og -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-sanitize: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DROCESIM_BENCH=OFF -DROCESIM_WERROR=$(WERROR) \
	  -DROCESIM_UNITY=$(UNITY) -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) --target rocesim_tests
	cd $(ASAN_BUILD) && ROCESIM_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j$(JOBS)

# Runs over several threads (docs/parallel.md) under ThreadSanitizer: the partitioned event loop, every
# fingerprint scenario at 4 threads, dcqcn's two-thread combination cases (tests/app/combination_test.cc) and
# packet timelines over two threads (tests/stats/packet_trace_test.cc), side by side (any data race fails the
# test).
TSAN_BUILD ?= build-tsan
TSAN_FLAGS ?= -Og -g1 -fsanitize=thread -fno-omit-frame-pointer
test-tsan: setup
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DROCESIM_BENCH=OFF -DROCESIM_WERROR=$(WERROR) \
	  -DROCESIM_UNITY=$(UNITY) -DROCESIM_TSAN_SUITE=ON -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
	  >/dev/null
	@cmake --build $(TSAN_BUILD) -j$(JOBS) --target rocesim_parallel_tests
	cd $(TSAN_BUILD) && ROCESIM_TSAN=1 TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
	  ctest --output-on-failure -j$(JOBS) -R 'SameForAnyThreadCount|Partitions\.|EventOrder\.|Combination\.'

# libFuzzer targets (fuzz/) for the scenario, topology, flow-file and CDF parsers, FUZZ_SECONDS each, on the
# seed corpus fuzz/corpus/<target> (new inputs go to $(FUZZ_BUILD)/corpus). A crash leaves
# $(FUZZ_BUILD)/crash-<target>-*: add it to tests/data/fuzz_regressions/<target>/ once fixed.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz:
	@ROCESIM_FUZZ=1 scripts/setup
	@CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DROCESIM_FUZZ=ON -DROCESIM_TESTS=OFF \
	  -DROCESIM_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_scenario fuzz_topology fuzz_flow_file fuzz_cdf
	@for t in scenario topology flow_file cdf; do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t && echo "fuzz_$$t: $(FUZZ_SECONDS) s" && \
	  $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t \
	    >$(FUZZ_BUILD)/fuzz_$$t.log 2>&1; rc=$$?; grep -E "number_of_executed_units|Test unit written" \
	    $(FUZZ_BUILD)/fuzz_$$t.log; [ $$rc -eq 0 ] || { tail -n 40 $(FUZZ_BUILD)/fuzz_$$t.log; exit 1; }; done

# Scenario fuzzing of the simulator (fuzz/scenario_fuzz.cc, fuzz/README.md): random valid scenarios (fabric,
# scheme, routing, loss recovery, flow control, switch model, link events, traffic, threads) from
# FUZZ_SCENARIOS_SEED (default: the time), each run with the invariants of tests/app/run_invariants.h, for
# FUZZ_SCENARIOS_SECONDS or FUZZ_SCENARIOS_COUNT scenarios. Each failure is written (reduced) to
# fuzz/scenarios/<kind>-s<seed>-<n>.toml, which make test replays (ScenarioCorpus) once the bug is fixed.
FUZZ_SCENARIOS_SECONDS ?= 300
FUZZ_SCENARIOS_COUNT   ?= 0
FUZZ_SCENARIOS_SEED    ?= $(shell date +%s)
fuzz-scenarios: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DROCESIM_WERROR=$(WERROR) -DROCESIM_UNITY=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target rocesim rocesim_scenario_fuzz
	$(BUILD)/rocesim_scenario_fuzz --seed $(FUZZ_SCENARIOS_SEED) --seconds $(FUZZ_SCENARIOS_SECONDS) \
	  --count $(FUZZ_SCENARIOS_COUNT) --out fuzz/scenarios

# The training-job readers' fuzzer (fuzz/trace_fuzz.cc, fuzz/README.md): mutated Chakra traces and SimAI
# files, each read and compiled, for FUZZ_TRACES_SECONDS from FUZZ_SCENARIOS_SEED; failing cases are kept
# in $(BUILD)/fuzz-traces/<seed>-<n>/.
FUZZ_TRACES_SECONDS ?= 300
fuzz-traces: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DROCESIM_WERROR=$(WERROR) -DROCESIM_UNITY=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target rocesim_trace_fuzz
	$(BUILD)/rocesim_trace_fuzz --seed $(FUZZ_SCENARIOS_SEED) --seconds $(FUZZ_TRACES_SECONDS) \
	  --out $(BUILD)/fuzz-traces

# Speed and memory: the 320-host benchmark, the event queue, the machine's load latency against working-set
# size (where its last cache ends), and against fabric size (bench_scaling: k = 8 to 32 fat-trees and the
# 320-host case, three rounds, with each case's median and its speed against k = 8 round by round, several
# minutes) drawn beside the figures before the issue-17 work (bench/scaling_before.csv) in $(BUILD)/scaling.png.
bench: build
	$(BUILD)/bench_fattree
	$(BUILD)/bench_event_queue --benchmark_min_time=0.2
	$(BUILD)/bench_memory_latency
	$(BUILD)/bench_scaling --rounds 3 --csv $(BUILD)/scaling.csv
	$(BUILD)/bench_scaling --cases k24,k32,fat320 --threads 1,2,4,8,16 --csv $(BUILD)/threads.csv
	/usr/bin/python3 bench/plot_scaling.py $(BUILD)/scaling.png before=bench/scaling_before.csv \
	  now=$(BUILD)/scaling.csv

# The memory soak (bench/soak_flows.cc, built by `make build`; about 2 CPU minutes): 1 M flows, resident
# memory every 50 k finished flows, which must stay flat after warm-up (docs/performance.md, "Memory over
# many flows").
.PHONY: soak
soak: build
	$(BUILD)/soak_flows

FORMAT_FILES = $$(find src tests bench fuzz -name '*.cc' -o -name '*.h')
format:
	clang-format -i $(FORMAT_FILES)

# Every C++ file as .clang-format writes it (make test runs this; `make format` fixes what it reports), and
# the Python (the rocesim package, the tools, their tests, the scenario scripts) free of what pyflakes reports:
# unused imports and variables, undefined names, redefinitions.
PYFLAKES_DIRS = python tools tests/tools scenarios
format-check: setup
	@clang-format --dry-run --Werror $(FORMAT_FILES) || { echo "not formatted: run make format" >&2; exit 1; }
	@/usr/bin/python3 -m pyflakes $(PYFLAKES_DIRS) || { echo "pyflakes: fix the Python above" >&2; exit 1; }

clean:
	rm -rf $(BUILD)
