// `rocesim run --mpi` under mpirun (docs/cluster.md): one run split over the ranks, through a RankComm
// (core/rank_comm.h) made of MPI collectives on a duplicate of MPI_COMM_WORLD. Built only with Open MPI.
#pragma once
#include <memory>

#include "core/rank_comm.h"

namespace rocesim {

// The ranks of mpirun as a RankComm; needs an MpiSession (app/mpi_sweep.h) alive. Throws InputError when
// rocesim was built without MPI.
std::unique_ptr<RankComm> make_mpi_comm();

}  // namespace rocesim
