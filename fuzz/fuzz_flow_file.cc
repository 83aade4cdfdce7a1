// libFuzzer target: the flow_file parser (fuzz/harness.h). `make fuzz` runs it on fuzz/corpus/flow_file.
#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rocesim::fuzz::flow_file(data, size);
  return 0;
}
