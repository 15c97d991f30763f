// What every tool's main shares: the command line as one string for provenance, and the
// mapping of every failure to one line on stderr and exit status 1.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "util/console.h"
#include "util/error.h"
#include "util/text.h"

namespace legalnet {

inline std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// Flushes standard output; throws legalnet::Error when what a tool printed there was lost (a full
// disk, `> /dev/full`, a closed pipe): a summary that never arrived is a failure, not a success.
inline void flush_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw Error(std::string("standard output: ") + std::strerror(errno));
}

// Runs fn() and returns its exit status, or prints "<tool>: <error>" as one line and exits with 1:
// every failure, whatever its type (torch's c10::Error, std::filesystem_error, an exhausted
// memory), becomes that line, never an abort with a trace.
template <class Fn>
int report_errors(const char* tool, Fn&& fn) {
  std::string message;
  try {
    const int status = fn();
    flush_stdout();
    return status;
  } catch (const Error& e) {
    message = e.what();
  } catch (const std::bad_alloc&) {
    message = "out of memory";
  } catch (const std::exception& e) {
    message = e.what();
    message = message.substr(0, message.find('\n'));  // torch appends a backtrace
  } catch (...) {
    message = "unexpected failure";
  }
  say_text(std::string(tool) + ": " + printable(message, 2000) + "\n");
  // Temporaries are gone (their owners unwound above). End without the libraries' exit
  // handlers: HDF5's would try again to flush a file whose writes just failed, and crash.
  std::fflush(nullptr);
  std::_Exit(1);
}

}  // namespace legalnet
