// train/process_group_spec: the ranks of a multi-process run, from torchrun's or srun's variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "train/process_group_spec.h"
#include "util/error.h"

namespace legalnet::train {
namespace {

TEST(ProcessGroup, RanksComeFromTorchrunOrSrunVariables) {
  for (const char* name :
       {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID",
        "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "MASTER_ADDR", "MASTER_PORT", "LEGALNET_RANK_TIMEOUT"})
    unsetenv(name);
  ProcessGroupSpec one = process_group_from_environment();
  EXPECT_EQ(one.world_size, 1);
  EXPECT_EQ(one.rank, 0);
  EXPECT_EQ(one.timeout_seconds, ProcessGroupSpec::DEFAULT_RANK_TIMEOUT);

  setenv("SLURM_NTASKS", "6", 1);
  setenv("SLURM_PROCID", "4", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_TASKS_PER_NODE", "3(x2)", 1);
  setenv("MASTER_ADDR", "node17", 1);
  setenv("MASTER_PORT", "23456", 1);
  setenv("LEGALNET_RANK_TIMEOUT", "7", 1);
  const ProcessGroupSpec srun = process_group_from_environment();
  EXPECT_EQ(srun.world_size, 6);
  EXPECT_EQ(srun.rank, 4);
  EXPECT_EQ(srun.local_rank, 1);
  EXPECT_EQ(srun.local_world_size, 3);
  EXPECT_EQ(srun.master_addr, "node17");
  EXPECT_EQ(srun.master_port, 23456);
  EXPECT_EQ(srun.timeout_seconds, 7);

  // torchrun's names win over srun's (torchrun inside a Slurm job).
  setenv("WORLD_SIZE", "2", 1);
  setenv("RANK", "1", 1);
  const ProcessGroupSpec torchrun = process_group_from_environment();
  EXPECT_EQ(torchrun.world_size, 2);
  EXPECT_EQ(torchrun.rank, 1);
  EXPECT_EQ(torchrun.local_rank, 1);

  setenv("RANK", "one", 1);
  try {
    process_group_from_environment();
    ADD_FAILURE() << "accepted RANK=one";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "environment variable RANK='one' is not a count");
  }
}

}  // namespace
}  // namespace legalnet::train
