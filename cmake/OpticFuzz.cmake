# libFuzzer targets. optic_add_fuzzer(NAME SOURCE CORPUS_DIR [MORE_DIRS...]):
# SOURCE defines LLVMFuzzerTestOneInput; the directories are its seed corpus
# (read, never written; put saved crash inputs in one of them).
#
# - With OPTIC_FUZZ=ON (the `fuzz` preset: clang, the whole library built with
#   -fsanitize=fuzzer-no-link,address,undefined) NAME is a libFuzzer binary in
#   <build>/fuzz/, listed in <build>/fuzz/fuzzers.txt for scripts/run-fuzzers
#   (`make fuzz`). Target `fuzzers` builds them all.
# - In every other build NAME is a replay program (tests/fuzz/replay_main.c) that
#   feeds each file of CORPUS_DIR once to the same entry point, registered as
#   ctest NAME_replay: the seed corpus and every saved crash input stay
#   regression tests under release and ASan without clang's libFuzzer.

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
  if(OPTIC_FUZZ)
    add_executable(${name} ${source})
    target_link_libraries(${name} PRIVATE optic_internal optic_build_flags)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${name} PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY ${OPTIC_FUZZ_DIR}
      BUILD_RPATH "${OPTIC_OPENBLAS_LIBDIR}")
    add_dependencies(fuzzers ${name})
    set(_dirs ${corpus_dir} ${ARGN})
    string(REPLACE ";" "\t" _dirs "${_dirs}")
    file(APPEND ${OPTIC_FUZZ_MANIFEST} "${name}\t${_dirs}\n")
  else()
    add_executable(${name} ${source} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
    target_link_libraries(${name} PRIVATE optic_internal optic_build_flags)
    set_target_properties(${name} PROPERTIES BUILD_RPATH "${OPTIC_OPENBLAS_LIBDIR}")
    add_test(NAME ${name}_replay COMMAND ${name} ${corpus_dir} ${ARGN})
    set_tests_properties(${name}_replay PROPERTIES LABELS fuzz TIMEOUT 120)
  endif()
endfunction()
