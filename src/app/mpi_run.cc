#include "app/mpi_run.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.h"

#ifdef ROCESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace rocesim {

#ifdef ROCESIM_HAVE_MPI

namespace {

int count_of(size_t bytes) {
  if (bytes > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("more than 2 GB to send between two ranks after one window");
  return static_cast<int>(bytes);
}

// The exchanges are collectives: every rank calls them in the same order (core/rank_comm.h).
class MpiComm final : public RankComm {
 public:
  MpiComm() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiComm() override { MPI_Comm_free(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void exchange(const std::vector<std::vector<char>>& out, std::vector<std::vector<char>>& in) override {
    send_counts_.assign(size_, 0);
    send_displs_.assign(size_, 0);
    send_.clear();
    for (int r = 0; r < size_; ++r) {
      send_counts_[r] = count_of(out[r].size());
      send_displs_[r] = count_of(send_.size());
      send_.insert(send_.end(), out[r].begin(), out[r].end());
      if (r != rank_) bytes_ += out[r].size();
    }
    recv_counts_.assign(size_, 0);
    MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm_);
    receive_layout();
    MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), MPI_CHAR, recv_.data(),
                  recv_counts_.data(), recv_displs_.data(), MPI_CHAR, comm_);
    split(in);
  }

  void all_gather(const std::vector<char>& mine, std::vector<std::vector<char>>& all) override {
    const int n = count_of(mine.size());
    recv_counts_.assign(size_, 0);
    MPI_Allgather(&n, 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm_);
    receive_layout();
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, recv_.data(), recv_counts_.data(), recv_displs_.data(), MPI_CHAR,
                   comm_);
    bytes_ += mine.size() * static_cast<size_t>(size_ - 1);
    split(all);
  }

  void all_min(int64_t* v, int n) override { MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MIN, comm_); }
  void all_sum(int64_t* v, int n) override { MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, comm_); }
  uint64_t bytes_sent() const override { return bytes_; }

 private:
  void receive_layout() {
    recv_displs_.assign(size_, 0);
    size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      recv_displs_[r] = count_of(total);
      total += static_cast<size_t>(recv_counts_[r]);
    }
    recv_.resize(total);
  }
  void split(std::vector<std::vector<char>>& into) const {
    into.resize(size_);
    for (int r = 0; r < size_; ++r)
      into[r].assign(recv_.begin() + recv_displs_[r], recv_.begin() + recv_displs_[r] + recv_counts_[r]);
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  uint64_t bytes_ = 0;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<char> send_, recv_;
};

}  // namespace

std::unique_ptr<RankComm> make_mpi_comm() { return std::make_unique<MpiComm>(); }

#else

std::unique_ptr<RankComm> make_mpi_comm() {
  throw InputError("--mpi", 0,
                   "this rocesim was built without Open MPI: install openmpi-bin and libopenmpi-dev "
                   "(scripts/setup does) and build again");
}

#endif

}  // namespace rocesim
