# libFuzzer targets.
#   optic_add_fuzzer(NAME SOURCE CORPUS_DIR [MORE_DIRS...] [LAYERS layer...] [TIMEOUT seconds])
# SOURCE defines LLVMFuzzerTestOneInput; the directories are its seed corpus
# (read, never written; put saved crash inputs in one of them). TIMEOUT is
# the per-input time limit (libFuzzer -timeout in scripts/run-fuzzers, and
# the replay test fails an input that takes longer); default 10. LAYERS (e.g.
# core kernels graph) links only those layers' objects in the fuzz build, so
# `make fuzz` compiles only what its targets reach (CI time); without it the
# target links the whole library.
#
# - With OPTIC_FUZZ=ON (the `fuzz` preset: clang, the whole library built with
#   -fsanitize=fuzzer-no-link,address,undefined) NAME is a libFuzzer binary in
#   <build>/fuzz/, listed in <build>/fuzz/fuzzers.txt for scripts/run-fuzzers
#   (`make fuzz`). Target `fuzzers` builds them all.
# - In every other build NAME is a replay program (tests/fuzz/replay_main.c) that
#   feeds each file of CORPUS_DIR once to the same entry point, registered as
#   ctest NAME_replay: the seed corpus and every saved crash input stay
#   regression tests under release and ASan without clang's libFuzzer (an
#   input over TIMEOUT seconds fails it).

set(OPTIC_FUZZ_DIR ${PROJECT_BINARY_DIR}/fuzz)
set(OPTIC_FUZZ_MANIFEST ${OPTIC_FUZZ_DIR}/fuzzers.txt)
if(OPTIC_FUZZ)
  file(MAKE_DIRECTORY ${OPTIC_FUZZ_DIR})
  file(WRITE ${OPTIC_FUZZ_MANIFEST} "")
  if(NOT TARGET fuzzers)
    add_custom_target(fuzzers)
  endif()
endif()

function(optic_add_fuzzer name source corpus_dir)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LAYERS" ${ARGN})
  set(_more ${ARG_UNPARSED_ARGUMENTS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 10)
  endif()
  if(OPTIC_FUZZ)
    if(ARG_LAYERS)
      set(_objs "")
      foreach(lib IN LISTS OPTIC_OBJECT_LIBS)
        foreach(layer IN LISTS ARG_LAYERS)
          if(lib MATCHES "^optic_${layer}(_.*)?$")
            list(APPEND _objs $<TARGET_OBJECTS:${lib}>)
          endif()
        endforeach()
      endforeach()
      add_executable(${name} ${source} ${_objs})
      target_link_libraries(${name} PRIVATE optic_build_flags ${OPTIC_PRIVATE_DEPS})
    else()
      add_executable(${name} ${source})
      target_link_libraries(${name} PRIVATE optic_internal optic_build_flags)
    endif()
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${name} PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY ${OPTIC_FUZZ_DIR}
      BUILD_RPATH "${OPTIC_OPENBLAS_LIBDIR}")
    add_dependencies(fuzzers ${name})
    set(_dirs ${corpus_dir} ${_more})
    string(REPLACE ";" "\t" _dirs "${_dirs}")
    file(APPEND ${OPTIC_FUZZ_MANIFEST} "${name}\ttimeout=${ARG_TIMEOUT}\t${_dirs}\n")
  else()
    add_executable(${name} ${source} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
    target_link_libraries(${name} PRIVATE optic_internal optic_build_flags)
    set_target_properties(${name} PROPERTIES BUILD_RPATH "${OPTIC_OPENBLAS_LIBDIR}")
    add_test(NAME ${name}_replay COMMAND ${name} --max-seconds=${ARG_TIMEOUT} ${corpus_dir} ${_more})
    set_tests_properties(${name}_replay PROPERTIES LABELS fuzz TIMEOUT 120)
  endif()
endfunction()
