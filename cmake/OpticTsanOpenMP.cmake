# ThreadSanitizer that sees OpenMP (OPTIC_TSAN_OPENMP, the tsan-omp preset).
# GCC's libgomp is not instrumented, so plain TSan sees neither the fork and
# join of a parallel region nor its barriers. This build uses clang, LLVM's
# libomp and Archer (libarcher.so, shipped beside libomp), an OMPT tool that
# tells TSan about every OpenMP synchronisation (fork, join, barrier,
# critical, locks, reductions, tasks). Every in-tree program links libarcher,
# so libomp starts the tool without OMP_TOOL_LIBRARIES.
#
# OpenBLAS stays the OpenMP build the release links (libgomp-based). The
# programs list libomp before libopenblas, so every omp_* and GOMP_* call of
# OpenBLAS binds to libomp's GOMP-compatible entry points: one OpenMP runtime
# is active; libgomp is loaded (OpenBLAS needs it) and its constructor runs,
# but nothing calls it (test race_one_openmp_runtime checks the bindings).
if(NOT OPTIC_TSAN_OPENMP)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" OR NOT OPTIC_SANITIZE MATCHES "thread")
  message(FATAL_ERROR "optic: OPTIC_TSAN_OPENMP needs clang and OPTIC_SANITIZE=thread (cmake --preset tsan-omp)")
endif()
if(NOT OpenMP_omp_LIBRARY)
  message(FATAL_ERROR "optic: OPTIC_TSAN_OPENMP needs LLVM's libomp; clang found OpenMP as "
    "'${OpenMP_C_LIB_NAMES}'.\nInstall it with:  apt-get install -y libomp-dev")
endif()
get_filename_component(_optic_omp_dir ${OpenMP_omp_LIBRARY} REALPATH)
get_filename_component(_optic_omp_dir ${_optic_omp_dir} DIRECTORY)
find_library(OPTIC_ARCHER_LIBRARY NAMES archer PATHS ${_optic_omp_dir} NO_DEFAULT_PATH)
optic_require(OPTIC_ARCHER_LIBRARY "LLVM's Archer (libarcher.so beside ${OpenMP_omp_LIBRARY})" "libomp-14-dev")
add_library(optic_archer INTERFACE)
# --no-as-needed: nothing references libarcher; libomp finds its ompt_start_tool at run time.
target_link_libraries(optic_archer INTERFACE "-Wl,--push-state,--no-as-needed" ${OPTIC_ARCHER_LIBRARY}
  "-Wl,--pop-state")
