// libFuzzer target: the cdf parser (fuzz/harness.h). `make fuzz` runs it on fuzz/corpus/cdf.
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rocesim::fuzz::cdf(data, size);
  return 0;
}
