// `rocesim sweep --mpi` under mpirun (docs/cluster.md): rank 0 does everything a local sweep does (the
// sweep directory, resume, results.csv, the table) but hands each run, one at a time, to another rank,
// which starts it as a `rocesim run` process on its machine and reports its exit status. Built only with
// Open MPI (CMake finds it; otherwise --mpi says how to get it).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace rocesim {

// Whether this rocesim was built with Open MPI.
bool mpi_built();

// MPI_Init on construction, MPI_Finalize on destruction. Throws InputError when built without MPI.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

// One run a rank starts: the command line (argv) and the file its stderr goes to.
struct RemoteRun {
  std::vector<std::string> argv;
  std::string log;
};

// done()'s status for a run that could not be started, and for one whose rank was lost.
constexpr int kRunNotStarted = -1;
constexpr int kRankLost = -2;

// Rank 0: runs[k] goes to a free rank as soon as one is free; done(k, wait status, wall seconds) as each
// ends. Then tells every rank to stop. With one rank only, nothing to hand out: an error. A working rank
// reports every second while its run goes on; one not heard from for `rank_timeout_s` is taken as lost:
// its run ends with kRankLost, it gets no more runs, and the sweep goes on with the others (Open MPI
// keeps the job alive after a rank's death only with `mpirun --mca orte_enable_recovery 1`). The runs
// left when every rank is lost end with kRankLost too.
void hand_out_runs(const std::vector<RemoteRun>& runs, const std::function<void(size_t, int, double)>& done,
                   double rank_timeout_s = 30);
// Ranks 1..n-1: start the runs rank 0 sends until it says stop.
void serve_runs();
// Rank 0 after an error: tells every rank to stop.
void stop_serving();

}  // namespace rocesim
