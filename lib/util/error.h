// The one exception type the library throws for bad input and failed I/O.
#pragma once

#include <stdexcept>
#include <string>

namespace legalnet {

// A user-facing failure; what() is one line that names the file, field or value at fault.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace legalnet
