# Script mode (cmake -P), run by lib/CMakeLists.txt at every build: writes OUTPUT, the definition
# of GIT_DESCRIBE (util/version.h), from `git describe` of SOURCE_DIR. configure_file rewrites
# it only when the description changed, so an unchanged tree recompiles nothing; a commit or an
# edit recompiles this one file and relinks. At configure time it would have named the commit
# of the last cmake run in every output file's provenance, whatever was built after.
execute_process(COMMAND git describe --always --dirty --tags WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE LEGALNET_GIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT LEGALNET_GIT)
  set(LEGALNET_GIT "unknown")  # a source tree outside git (an archive)
endif()
# A tag may hold a double quote (git forbids backslashes in names, not quotes).
string(REPLACE "\"" "\\\"" LEGALNET_GIT "${LEGALNET_GIT}")
file(WRITE ${OUTPUT}.new "// Generated at build time by cmake/GitDescribe.cmake.\n#include \"util/version.h\"\n\nnamespace legalnet {\nconst char* const GIT_DESCRIBE = \"${LEGALNET_GIT}\";\n}  // namespace legalnet\n")
configure_file(${OUTPUT}.new ${OUTPUT} COPYONLY)
file(REMOVE ${OUTPUT}.new)
