#include "app/mpi_sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "core/error.h"

#ifdef ROCESIM_HAVE_MPI
#include <mpi.h>
#endif

extern char** environ;

namespace rocesim {

#ifdef ROCESIM_HAVE_MPI

namespace {

constexpr int kTagRun = 1;     // rank 0 -> worker: a run (its argv and log, '\0'-separated)
constexpr int kTagStop = 2;    // rank 0 -> worker: no more runs
constexpr int kTagStatus = 3;  // worker -> rank 0: the wait status of its run

std::string pack(const RemoteRun& r) {
  std::string s = r.log;
  for (const auto& a : r.argv) s += '\0' + a;
  return s;
}

RemoteRun unpack(const std::string& s) {
  RemoteRun r;
  size_t at = s.find('\0');
  r.log = s.substr(0, at);
  while (at != std::string::npos) {
    const size_t next = s.find('\0', at + 1);
    r.argv.push_back(s.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
    at = next;
  }
  return r;
}

// Starts the run (stdout to /dev/null, stderr to its log) and waits for it: its wait status, or -1.
int run_and_wait(const RemoteRun& r) {
  std::vector<std::string> args = r.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, r.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return st;
}

}  // namespace

bool mpi_built() { return true; }

MpiSession::MpiSession() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void hand_out_runs(const std::vector<RemoteRun>& runs, const std::function<void(size_t, int, double)>& done) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2)
    throw InputError("--mpi", 0, "needs at least 2 ranks (rank 0 hands out the runs): mpirun -np N");
  using Clock = std::chrono::steady_clock;
  std::vector<long> running(size, -1);  // per rank: the run it has, or -1
  std::vector<Clock::time_point> since(size);
  size_t next = 0, busy = 0;
  auto send = [&](int rank) {
    const std::string msg = pack(runs[next]);
    MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, rank, kTagRun, MPI_COMM_WORLD);
    running[rank] = static_cast<long>(next++);
    since[rank] = Clock::now();
    ++busy;
  };
  for (int rank = 1; rank < size && next < runs.size(); ++rank) send(rank);
  while (busy > 0) {
    // Poll rather than block: Open MPI's blocking receive spins, and rank 0 shares a machine with ranks
    // that run simulations.
    int ready = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagStatus, MPI_COMM_WORLD, &ready, &st);
    if (!ready) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int status = 0;
    MPI_Recv(&status, 1, MPI_INT, st.MPI_SOURCE, kTagStatus, MPI_COMM_WORLD, &st);
    const int rank = st.MPI_SOURCE;
    const size_t k = static_cast<size_t>(running[rank]);
    running[rank] = -1;
    --busy;
    done(k, status, std::chrono::duration<double>(Clock::now() - since[rank]).count());
    if (next < runs.size()) send(rank);
  }
  stop_serving();
}

void stop_serving() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int rank = 1; rank < size; ++rank) MPI_Send(nullptr, 0, MPI_CHAR, rank, kTagStop, MPI_COMM_WORLD);
}

void serve_runs() {
  for (;;) {
    MPI_Status st;
    for (int ready = 0; !ready;) {  // polling, as in hand_out_runs
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &st);
      if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int n = 0;
    MPI_Get_count(&st, MPI_CHAR, &n);
    std::string msg(static_cast<size_t>(n), '\0');
    MPI_Recv(msg.data(), n, MPI_CHAR, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st.MPI_TAG == kTagStop) return;
    int status = run_and_wait(unpack(msg));
    MPI_Send(&status, 1, MPI_INT, 0, kTagStatus, MPI_COMM_WORLD);
  }
}

#else

bool mpi_built() { return false; }

MpiSession::MpiSession() {
  throw InputError("--mpi", 0,
                   "this rocesim was built without Open MPI: install it (apt-get install openmpi-bin "
                   "libopenmpi-dev, or scripts/setup) and rebuild");
}
MpiSession::~MpiSession() = default;
void hand_out_runs(const std::vector<RemoteRun>&, const std::function<void(size_t, int, double)>&) {}
void serve_runs() {}
void stop_serving() {}

#endif

}  // namespace rocesim
