// Helpers of the tests that run rocesim under mpirun (--mpi): whether they can, and the launcher.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rocesim::test {

// Why the MPI tests cannot run here ("" when they can): Open MPI is optional.
inline std::string mpi_missing() {
#ifndef ROCESIM_HAVE_MPI
  return "this build has no Open MPI (apt-get install openmpi-bin libopenmpi-dev, or scripts/setup, and "
         "rebuild)";
#else
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "mpirun is not on the PATH (openmpi-bin)";
  return "";
#endif
}

// `mpirun --oversubscribe -np N` (as root, as CI runs: --allow-run-as-root). Under the sanitizer build it
// turns LeakSanitizer off for the ranks: Open MPI's own libraries leave allocations at exit.
inline std::string mpirun_command(int ranks) {
  if (std::getenv("ROCESIM_SANITIZED")) {
    const char* o = std::getenv("ASAN_OPTIONS");
    ::setenv("ASAN_OPTIONS", (std::string(o ? o : "") + ":detect_leaks=0").c_str(), 1);
  }
  return "mpirun --oversubscribe -np " + std::to_string(ranks) +
         (::getuid() == 0 ? " --allow-run-as-root" : "");
}

}  // namespace rocesim::test
