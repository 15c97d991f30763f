// The option table's name alone, for the headers that declare a tool's table (run/*/options.h)
// without making each of their includers compile the rows, JSON and the parser.
#pragma once

namespace legalnet::options {

template <class Options>
class Table;

}  // namespace legalnet::options
