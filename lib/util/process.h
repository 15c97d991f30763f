// Other programs, started without a shell: the arguments go to the program as they are, so a
// file name with a quote, a space or a '$' is a file name, never a command.
#pragma once

#include <string>
#include <vector>

namespace legalnet {

// Runs argv[0] (looked up in PATH) with the arguments argv[1..], stdin and stdout on the given
// descriptors (-1: /dev/null) and stderr on /dev/null, and waits for it. Returns its exit
// status; -1 when it could not be started (not installed) or was ended by a signal. A helper
// that writes a file writes to a descriptor the tool made, never to a name it opens itself.
int run_program(const std::vector<std::string>& argv, int stdin_fd = -1, int stdout_fd = -1);

}  // namespace legalnet
