# The project's Python: the venv that scripts/install-deps makes (scripts/python-env prints its
# folder), holding the pinned torch wheel, h5py, numpy and python-chess. The build takes libtorch
# from its torch; the tests run the Python package and the h5py and python-chess oracles with it.
# -DLEGALNET_PYTHON=/path/to/python picks another.
set(LEGALNET_PYTHON "" CACHE FILEPATH "The project's Python (default: the venv of scripts/python-env)")
if(NOT LEGALNET_PYTHON)
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/python-env OUTPUT_VARIABLE legalnet_env
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE legalnet_env_status)
  if(legalnet_env_status EQUAL 0 AND EXISTS "${legalnet_env}/bin/python")
    set(LEGALNET_PYTHON "${legalnet_env}/bin/python" CACHE FILEPATH "The project's Python" FORCE)
  endif()
endif()
