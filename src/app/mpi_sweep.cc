#include "app/mpi_sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
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
constexpr int kTagAlive = 4;   // worker -> rank 0: its run goes on (every second)

// A rank was lost: MPI_Finalize would wait for it (its fence includes every rank), so the others leave
// without it. Rank 0's stop message says so to the workers (a non-empty stop message).
bool g_rank_lost = false;

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

// Starts the run (stdout to /dev/null, stderr to its log) and waits for it, telling rank 0 every second
// that it goes on: its wait status, or kRunNotStarted.
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
  if (rc != 0) return kRunNotStarted;
  int st = 0;
  auto last_alive = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return st;
    if (w < 0 && errno != EINTR) return kRunNotStarted;
    if (std::chrono::steady_clock::now() - last_alive >= std::chrono::seconds(1)) {
      MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagAlive, MPI_COMM_WORLD);
      last_alive = std::chrono::steady_clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Rank 0 after the runs: tells the ranks that are still there to stop.
void stop_ranks(const std::vector<bool>& lost) {
  g_rank_lost = std::find(lost.begin(), lost.end(), true) != lost.end();
  const char flag = 1;
  for (int rank = 1; rank < static_cast<int>(lost.size()); ++rank)
    if (!lost[rank]) MPI_Send(&flag, g_rank_lost ? 1 : 0, MPI_CHAR, rank, kTagStop, MPI_COMM_WORLD);
}

}  // namespace

bool mpi_built() { return true; }

MpiSession::MpiSession() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (!g_rank_lost) {
    MPI_Finalize();
    return;
  }
  std::fflush(stdout);
  std::fflush(stderr);
}

void hand_out_runs(const std::vector<RemoteRun>& runs, const std::function<void(size_t, int, double)>& done,
                   double rank_timeout_s) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2)
    throw InputError("--mpi", 0, "needs at least 2 ranks (rank 0 hands out the runs): mpirun -np N");
  // A lost rank must not end the job on rank 0's side: errors come back as codes.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  using Clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration<double>(rank_timeout_s);
  std::vector<long> running(size, -1);  // per rank: the run it has, or -1
  std::vector<Clock::time_point> since(size), heard(size);
  std::vector<bool> lost(size, false);
  size_t next = 0, busy = 0;
  auto elapsed = [&](int rank) { return std::chrono::duration<double>(Clock::now() - since[rank]).count(); };
  auto send = [&](int rank) {
    const std::string msg = pack(runs[next]);
    MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, rank, kTagRun, MPI_COMM_WORLD);
    running[rank] = static_cast<long>(next++);
    since[rank] = heard[rank] = Clock::now();
    ++busy;
  };
  for (int rank = 1; rank < size && next < runs.size(); ++rank) send(rank);
  while (busy > 0) {
    // Poll rather than block: Open MPI's blocking receive spins, and rank 0 shares a machine with ranks
    // that run simulations.
    int ready = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &st);
    if (!ready) {
      for (int rank = 1; rank < size; ++rank)
        if (running[rank] >= 0 && Clock::now() - heard[rank] > timeout) {
          lost[rank] = true;
          const size_t k = static_cast<size_t>(running[rank]);
          running[rank] = -1;
          --busy;
          done(k, kRankLost, elapsed(rank));
        }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const int rank = st.MPI_SOURCE;
    if (st.MPI_TAG == kTagAlive) {
      MPI_Recv(nullptr, 0, MPI_CHAR, rank, kTagAlive, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      heard[rank] = Clock::now();
      continue;
    }
    int status = 0;
    MPI_Recv(&status, 1, MPI_INT, rank, kTagStatus, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (running[rank] < 0) continue;  // a rank taken as lost came back: its run was already reported
    const size_t k = static_cast<size_t>(running[rank]);
    running[rank] = -1;
    --busy;
    done(k, status, elapsed(rank));
    if (next < runs.size()) send(rank);
  }
  for (; next < runs.size(); ++next) done(next, kRankLost, 0);  // every rank was lost
  stop_ranks(lost);
}

void stop_serving() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stop_ranks(std::vector<bool>(static_cast<size_t>(size), false));
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
    if (st.MPI_TAG == kTagStop) {
      g_rank_lost = n > 0;
      return;
    }
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
void hand_out_runs(const std::vector<RemoteRun>&, const std::function<void(size_t, int, double)>&, double) {}
void serve_runs() {}
void stop_serving() {}

#endif

}  // namespace rocesim
