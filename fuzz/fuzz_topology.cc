// libFuzzer target: the topology parser (fuzz/harness.h). `make fuzz` runs it on fuzz/corpus/topology.
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rocesim::fuzz::topology(data, size);
  return 0;
}
