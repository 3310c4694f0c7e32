# Compile flags for optic's own code. Warnings are errors; sanitizers apply to
# everything we build. Per-ISA flags are NOT here: kernels/ sets them on its
# per-ISA object libraries only (STYLE.md item 4).

add_library(optic_build_flags INTERFACE)
target_compile_options(optic_build_flags INTERFACE
  -Wall -Wextra -Werror
  -Wshadow -Wformat=2 -Wundef
  # Not on targets marked OPTIC_RELAXED_WARNINGS (tests, examples: see
  # optic_relax_warnings below), whose float checks and const test fixtures
  # would need casts at hundreds of places without catching library bugs.
  "$<$<NOT:$<BOOL:$<TARGET_PROPERTY:OPTIC_RELAXED_WARNINGS>>>:-Wcast-qual;-Wdouble-promotion>"
  $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>
  -fno-math-errno
  -fvisibility=hidden)
target_compile_definitions(optic_build_flags INTERFACE _GNU_SOURCE OPTIC_BUILDING)
target_include_directories(optic_build_flags INTERFACE
  ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_BINARY_DIR}/include
  ${PROJECT_SOURCE_DIR})

if(OPTIC_SANITIZE)
  add_compile_options(-fsanitize=${OPTIC_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${OPTIC_SANITIZE})
endif()

# optic_relax_warnings(DIR): every target defined in DIR and its
# subdirectories builds without -Wcast-qual and -Wdouble-promotion.
function(optic_relax_warnings dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    set_property(TARGET ${t} PROPERTY OPTIC_RELAXED_WARNINGS ON)
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(d IN LISTS subdirs)
    optic_relax_warnings(${d})
  endforeach()
endfunction()

# optic_add_objects(NAME SOURCES...): one object library of the library, with
# our flags and the given extra compile options (see kernels/ for per-ISA use).
function(optic_add_objects name)
  cmake_parse_arguments(ARG "" "" "SOURCES;OPTIONS;LINK" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${name} PRIVATE optic_build_flags ${ARG_LINK})
  target_compile_options(${name} PRIVATE ${ARG_OPTIONS})
  set(OPTIC_OBJECT_LIBS ${OPTIC_OBJECT_LIBS} ${name} CACHE INTERNAL "")
endfunction()

# Fuzz builds: coverage instrumentation on everything, so libFuzzer sees the
# library's branches; the fuzz targets themselves add -fsanitize=fuzzer.
if(OPTIC_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "optic: OPTIC_FUZZ needs clang (cmake --preset fuzz)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
