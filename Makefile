# longpole: the two set-up commands of the README, and developer targets.
#   make demo   install what is missing, build, run the main job on the embedded demo trace
#   make test   install what is missing, build, run every test (CTest summary)
# Developer targets: build, sanitize (ASan+UBSan suite), fuzz (libFuzzer smoke runs),
# bench (benchmarks, results in bench/RESULTS.md), clean.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30

.PHONY: demo test build deps sanitize fuzz bench clean

demo: build
	./$(BUILD)/longpole demo

test:
	sh scripts/deps.sh test
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

build:
	sh scripts/deps.sh build
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

sanitize:
	sh scripts/deps.sh test
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLP_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)

fuzz:
	sh scripts/deps.sh ci
	CC=clang cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLP_FUZZ=ON -DLP_TESTS=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	sh tests/fuzz/run.sh $(FUZZ_BUILD)/tests/fuzz $(FUZZ_SECONDS)

bench: build
	sh scripts/deps.sh bench
	bash bench/run.sh $(BUILD)/longpole

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
