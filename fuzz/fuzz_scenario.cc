// libFuzzer target: the scenario parser (fuzz/harness.h). `make fuzz` runs it on fuzz/corpus/scenario.
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rocesim::fuzz::scenario(data, size);
  return 0;
}
