// SIGTERM and SIGUSR1 as a request to stop at the next safe point, for a tool that can stop
// cleanly (train: a checkpoint, then exit). Clusters preempt that way: Slurm sends SIGTERM, then
// SIGKILL after its KillWait (30 s by default); `sbatch --signal=USR1@SECONDS` warns ahead of the
// time limit. Without it both signals end the tool at once (SIGUSR1's default), SIGTERM after
// removing its temporaries (util/files.h).
#pragma once

namespace legalnet {

// The exit status of a run stopped by such a request, to continue later (sysexits.h's
// EX_TEMPFAIL: "try again later"); the Slurm scripts requeue a job that ends with it.
constexpr int EXIT_STOPPED = 75;

// From now on SIGTERM and SIGUSR1 (unless ignored when the tool started, as under nohup) only
// record the request. SIGINT and SIGHUP keep ending the tool.
void catch_stop_requests();

// The signal asked to stop (SIGTERM or SIGUSR1), or 0.
int stop_requested();

// "SIGTERM" or "SIGUSR1".
const char* stop_signal_name(int signal);

}  // namespace legalnet
