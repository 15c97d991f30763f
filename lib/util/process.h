// Other programs, started without a shell: the arguments go to the program as they are, so a
// file name with a quote, a space or a '$' is a file name, never a command. And the process's
// own restart with the OpenMP wait policy the tools need (torch-free: main calls it first).
#pragma once

#include <string>
#include <vector>

namespace legalnet {

// Runs argv[0] (looked up in PATH) with the arguments argv[1..], stdin and stdout on the given
// descriptors (-1: /dev/null) and stderr on /dev/null, and waits for it. Returns its exit
// status; -1 when it could not be started (not installed) or was ended by a signal. A helper
// that writes a file writes to a descriptor the tool made, never to a name it opens itself.
int run_program(const std::vector<std::string>& argv, int stdin_fd = -1, int stdout_fd = -1);

// Sets the OpenMP wait policy to PASSIVE with a short spin (GOMP_SPINCOUNT=10000, about 0.1 ms)
// unless the user chose a policy, by re-executing the program: libgomp reads them only at
// start-up. libgomp's default spins for milliseconds, so torch's OpenMP threads fight
// OpenBLAS's threads and the loader's on small machines (small nets 5-36% slower on 2 cores);
// no spin at all puts the threads to sleep between the hundreds of small parallel regions of a
// training step (resnet 6x32: 5-15% slower than the short spin, docs/benchmarks.md).
void ensure_passive_openmp(char** argv);

}  // namespace legalnet
