# Finds optic's dependencies, all from Debian packages. A missing required one
# stops configure with the exact apt-get line that installs it.

function(optic_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR
      "optic: ${what} not found.\n"
      "Install it with:  apt-get install -y ${package}\n"
      "(or run scripts/install-deps as root, which installs everything optic needs)")
  endif()
endfunction()

find_package(Threads REQUIRED)
if(OPTIC_KERNELS_ONLY)
  return()
endif()

find_package(OpenMP COMPONENTS C)
optic_require(OpenMP_C_FOUND "OpenMP for C (libgomp)" "gcc libgomp1")
include(OpticTsanOpenMP)

# OpenBLAS, the OpenMP build: Debian installs it beside the pthread build and
# picks one through alternatives. We link the OpenMP one by path and give our
# binaries a run path to its folder, so the alternatives setting cannot swap in
# the pthread build (which would oversubscribe cores inside our OpenMP region).
set(_optic_blas_dir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
set(_optic_blas_inc /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
find_library(OPTIC_OPENBLAS_LIBRARY NAMES openblas PATHS ${_optic_blas_dir} NO_DEFAULT_PATH)
find_path(OPTIC_OPENBLAS_INCLUDE_DIR NAMES cblas.h PATHS ${_optic_blas_inc} NO_DEFAULT_PATH)
if(OPTIC_OPENBLAS_LIBRARY AND OPTIC_OPENBLAS_INCLUDE_DIR)
  set(OPTIC_OPENBLAS_FOUND TRUE)
  get_filename_component(OPTIC_OPENBLAS_LIBDIR ${OPTIC_OPENBLAS_LIBRARY} DIRECTORY)
endif()
optic_require(OPTIC_OPENBLAS_FOUND "OpenBLAS (OpenMP build)" "libopenblas-openmp-dev libopenblas0-openmp")
# A target of our own, so it can be exported with the library.
add_library(optic_openblas INTERFACE)
target_link_libraries(optic_openblas INTERFACE ${OPTIC_OPENBLAS_LIBRARY})
target_include_directories(optic_openblas INTERFACE $<BUILD_INTERFACE:${OPTIC_OPENBLAS_INCLUDE_DIR}>)

find_package(OpenSSL)
if(NOT OPENSSL_CRYPTO_LIBRARY)
  set(OPENSSL_FOUND FALSE)
endif()
optic_require(OPENSSL_FOUND "OpenSSL libcrypto" "libssl-dev")

set(OPTIC_HAVE_MPI 0)
if(OPTIC_WITH_MPI)
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(OPTIC_HAVE_MPI 1)
  else()
    message(STATUS "optic: MPI not found, building without the MPI pod backend "
                   "(apt-get install -y libopenmpi-dev openmpi-bin to enable it)")
  endif()
endif()

if(OPTIC_BUILD_BENCH)
  find_package(benchmark QUIET)
  optic_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()
