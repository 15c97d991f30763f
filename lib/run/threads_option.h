// --threads, the same row in every tool's table (train's and evaluate's through device_rows.h),
// its help `what` the threads do and "(0: all cores)": 0 is every core (util/thread_pool.h), and
// the range refuses a negative count in the parser and in validate() alike. Not recorded in JSON:
// the thread count changes no output.
#pragma once

#include <string>

#include "util/option_cli.h"

namespace legalnet::run {

template <class Options>
options::Row<Options> threads_option(int Options::*field, const std::string& what) {
  return options::Rows<Options>::value(field, "--threads,-t", "", what + " (0: all cores)")
      .int_range(0, 1024)
      .show_default();
}

}  // namespace legalnet::run
