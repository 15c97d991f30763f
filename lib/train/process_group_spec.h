// Where a process stands in a data-parallel run, read from the launcher's environment
// (torch-free, so that the tools' option parsing does not compile torch headers).
#pragma once

#include <string>

namespace legalnet::train {

// Where this process stands in a run.
struct ProcessGroupSpec {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;                     // index on this node: picks cuda:N on a node with several GPUs
  int local_world_size = 1;               // processes on this node: they share its memory
  std::string master_addr = "127.0.0.1";  // rank 0's host, which serves the rendezvous store
  int master_port = 29500;
  // How long a rank waits for the others, at the rendezvous and in each collective, before it
  // ends the run in one line (a peer stopped, hung or far behind; a peer that died is seen at
  // once, by its closed connections): LEGALNET_RANK_TIMEOUT, in seconds.
  static constexpr int DEFAULT_RANK_TIMEOUT = 300;
  int timeout_seconds = DEFAULT_RANK_TIMEOUT;
  bool is_main() const { return rank == 0; }
};

// torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), else srun's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
// SLURM_NTASKS_PER_NODE; MASTER_ADDR/MASTER_PORT and LEGALNET_RANK_TIMEOUT still from the
// environment). Neither: one process. Throws legalnet::Error naming a malformed variable.
ProcessGroupSpec process_group_from_environment();

}  // namespace legalnet::train
