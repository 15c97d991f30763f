# Finds the one supported libtorch line and checks its version before anything is compiled.
#
# Where libtorch comes from, first match wins:
#   -DTorch_DIR=/path/to/libtorch/share/cmake/Torch   a libtorch from elsewhere (a zip, a cluster
#                                                      module): CMake's own variable for it;
#   the torch wheel of LEGALNET_PYTHON (cmake/LegalnetPython.cmake: by default the project's
#                                                      environment, which scripts/install-deps makes).
# The wheel's libtorch is CUDA-enabled: with nvcc present, the CUDA paths (autocast, NCCL, device
# selection) are compiled and liblegalnet_cuda.so links libtorch_cuda.

set(LEGALNET_TORCH_MIN_VERSION 2.11)
if(NOT Torch_DIR)
  if(LEGALNET_PYTHON)
    execute_process(COMMAND ${LEGALNET_PYTHON} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                    OUTPUT_VARIABLE legalnet_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(legalnet_prefix)
      set(Torch_DIR "${legalnet_prefix}/Torch" CACHE PATH "Folder holding TorchConfig.cmake" FORCE)
    endif()
  endif()
endif()

# Kernels are built for Ampere (8.0) and Hopper (9.0) unless the user says otherwise; torch's
# CMake reads this list (CMAKE_CUDA_ARCHITECTURES is ignored by it and would only warn).
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST} AND NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
set(CMAKE_CUDA_ARCHITECTURES OFF)

# torch's config looks for its Caffe2 config and its libraries in the default paths before its
# own folder, so a second libtorch installed system-wide (Debian's libtorch-dev 1.13) would be
# mixed in: pin each of them to the chosen libtorch first.
if(Torch_DIR AND EXISTS "${Torch_DIR}/../Caffe2/Caffe2Config.cmake")
  get_filename_component(legalnet_torch_lib "${Torch_DIR}/../../../lib" ABSOLUTE)
  get_filename_component(Caffe2_DIR "${Torch_DIR}/../Caffe2" ABSOLUTE)
  set(Caffe2_DIR "${Caffe2_DIR}" CACHE PATH "Folder holding Caffe2Config.cmake" FORCE)
  foreach(pair TORCH:torch torch:torch torch_cpu:torch_cpu torch_cuda:torch_cuda c10:c10 c10_cuda:c10_cuda
               C10_CUDA:c10_cuda CAFFE2_NVRTC:caffe2_nvrtc kineto:kineto)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 var)
    list(GET pair 1 name)
    find_library(${var}_LIBRARY ${name} PATHS "${legalnet_torch_lib}" NO_DEFAULT_PATH)
  endforeach()
endif()
find_package(Torch QUIET)
set(legalnet_torch_hint "Run scripts/install-deps (it installs the pinned torch wheel), or set -DTorch_DIR=<libtorch>/share/cmake/Torch (or -DLEGALNET_PYTHON=<python with torch>)")
if(NOT Torch_FOUND)
  message(FATAL_ERROR "legalnet: no libtorch found (Torch_DIR='${Torch_DIR}'); libtorch >= ${LEGALNET_TORCH_MIN_VERSION} is needed. ${legalnet_torch_hint}.")
endif()
# The version comes from TorchConfigVersion.cmake (Debian's 1.13 has one too).
set(LEGALNET_TORCH_VERSION "${Torch_VERSION}")
if(NOT LEGALNET_TORCH_VERSION OR LEGALNET_TORCH_VERSION VERSION_LESS LEGALNET_TORCH_MIN_VERSION)
  message(FATAL_ERROR "legalnet: libtorch ${LEGALNET_TORCH_VERSION} found in ${TORCH_INSTALL_PREFIX}, but libtorch >= ${LEGALNET_TORCH_MIN_VERSION} is needed. ${legalnet_torch_hint}.")
endif()

# at::parallel_for's OpenMP region is inline in torch's headers: a file of ours that calls it
# runs serially unless it is compiled with LEGALNET_OPENMP_FLAG (as torch's own extensions are)
# and linked to an OpenMP runtime. The one torch ships (the wheel's lib/libgomp.so.1) is linked,
# so the process has one runtime and one thread pool (the RUNPATH finds torch's copy first).
#
# The tools, the nn tests and the benches link libtorch's CPU half (LEGALNET_TORCH_LIBRARIES);
# libtorch_cuda and the CUDA libraries it needs go into liblegalnet_cuda.so (lib/nn/cuda_module.h,
# TORCH_LIBRARIES), which they load only where a run may use a GPU.
# (torch's own target `torch` links both; ours takes its include folders and flags, not its CUDA.)
add_library(legalnet_torch_cpu INTERFACE)
target_link_libraries(legalnet_torch_cpu INTERFACE torch_cpu_library c10)
target_include_directories(legalnet_torch_cpu SYSTEM INTERFACE $<TARGET_PROPERTY:torch,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_options(legalnet_torch_cpu INTERFACE $<TARGET_PROPERTY:torch,INTERFACE_COMPILE_OPTIONS>)
set(LEGALNET_TORCH_LIBRARIES legalnet_torch_cpu)
set(LEGALNET_OPENMP_FLAG -fopenmp)
if(EXISTS "${TORCH_INSTALL_PREFIX}/lib/libgomp.so.1")
  list(APPEND TORCH_LIBRARIES "${TORCH_INSTALL_PREFIX}/lib/libgomp.so.1")
  list(APPEND LEGALNET_TORCH_LIBRARIES "${TORCH_INSTALL_PREFIX}/lib/libgomp.so.1")
else()
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  list(APPEND TORCH_LIBRARIES OpenMP::OpenMP_CXX)
  list(APPEND LEGALNET_TORCH_LIBRARIES OpenMP::OpenMP_CXX)
endif()

set(LEGALNET_WITH_CUDA OFF)
if(TARGET torch_cuda)
  set(LEGALNET_WITH_CUDA ON)
endif()
# NCCL's header from the wheel's own NCCL (the library torch was built with), else the toolkit's.
execute_process(COMMAND ${LEGALNET_PYTHON} -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'include'))"
                OUTPUT_VARIABLE legalnet_wheel_nccl OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
find_path(LEGALNET_NCCL_INCLUDE nccl.h HINTS ${legalnet_wheel_nccl} ${TORCH_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
message(STATUS "legalnet: libtorch ${LEGALNET_TORCH_VERSION} from ${TORCH_INSTALL_PREFIX} (CUDA: ${LEGALNET_WITH_CUDA}, archs ${TORCH_CUDA_ARCH_LIST})")

# libtorch_cuda needs the CUDA libraries of the wheel (its RPATH names them relative to itself,
# which the linker does not follow): point the linker at them, ahead of the toolkit's older NCCL.
get_filename_component(legalnet_site_packages "${TORCH_INSTALL_PREFIX}" DIRECTORY)
file(GLOB legalnet_wheel_cuda_libs LIST_DIRECTORIES true "${legalnet_site_packages}/nvidia/*/lib")
foreach(dir ${legalnet_wheel_cuda_libs})
  add_link_options("LINKER:-rpath-link,${dir}")
endforeach()
