# rocesim: `make run` (demo) and `make test` work on a fresh Debian 12 machine.
BUILD ?= build
JOBS  ?= $(shell nproc)
# `make run`: a small sweep of demo_sweep (scenarios/demo_sweep.toml), then its report.
DEMO_GRID ?= scheme=dcqcn,none load=0.3,0.6
DEMO_OUT  ?= runs/demo_sweep
DIR       ?= $(DEMO_OUT)

.PHONY: all setup build run report test bench clean format

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/rocesim sweep demo_sweep --grid $(DEMO_GRID) -j $(JOBS) -o $(DEMO_OUT) --force
	@$(BUILD)/rocesim report $(DEMO_OUT)

# make report DIR=<run or sweep directory>  (default: the demo sweep)
report: build
	@$(BUILD)/rocesim report $(DIR)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

bench: build
	$(BUILD)/bench_fattree
	$(BUILD)/bench_event_queue --benchmark_min_time=0.2

format:
	clang-format -i $$(find src tests bench -name '*.cc' -o -name '*.h')

clean:
	rm -rf $(BUILD)
