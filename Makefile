# rocesim: `make run` (demo) and `make test` work on a fresh Debian 12 machine.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all setup build run test bench clean format

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/rocesim run demo -o runs/demo --force

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

bench: build
	$(BUILD)/bench_fattree
	$(BUILD)/bench_event_queue --benchmark_min_time=0.2

format:
	clang-format -i $$(find src tests bench -name '*.cc' -o -name '*.h')

clean:
	rm -rf $(BUILD)
