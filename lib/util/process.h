// Other programs, started without a shell: the arguments go to the program as they are, so a
// file name with a quote, a space or a '$' is a file name, never a command.
#pragma once

#include <string>
#include <vector>

namespace legalnet {

// Runs argv[0] (looked up in PATH) with the arguments argv[1..], stdin and stdout and stderr
// on /dev/null, and waits for it. Returns its exit status; -1 when it could not be started
// (not installed) or was ended by a signal.
int run_program(const std::vector<std::string>& argv);

// A path as an argument that no program reads as an option: "-x.png" becomes "./-x.png".
std::string path_argument(const std::string& path);

}  // namespace legalnet
