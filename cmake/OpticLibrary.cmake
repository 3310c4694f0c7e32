# Assembles liboptic (static and shared) from the layers' object libraries.
# optic::optic is the shared library, optic::optic_static the static one; both
# carry their dependencies (OpenMP, OpenBLAS, OpenSSL, MPI when built with it).

if(OPTIC_KERNELS_ONLY)
  set(_optic_deps Threads::Threads m)
else()
  set(_optic_deps OpenMP::OpenMP_C optic_openblas OpenSSL::Crypto Threads::Threads m)
endif()
if(OPTIC_HAVE_MPI)
  list(APPEND _optic_deps MPI::MPI_C)
endif()
set(OPTIC_PRIVATE_DEPS ${_optic_deps} CACHE INTERNAL "")

set(_optic_objs "")
foreach(lib IN LISTS OPTIC_OBJECT_LIBS)
  list(APPEND _optic_objs $<TARGET_OBJECTS:${lib}>)
endforeach()

add_library(optic_static STATIC ${_optic_objs})
set(_optic_libs optic_static)
if(NOT OPTIC_KERNELS_ONLY)
  add_library(optic_shared SHARED ${_optic_objs})
  list(APPEND _optic_libs optic_shared)
endif()
foreach(t IN LISTS _optic_libs)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME optic)
  target_include_directories(${t} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${t} PRIVATE ${_optic_deps})
endforeach()
if(TARGET optic_shared)
  set_target_properties(optic_shared PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    EXPORT_NAME optic
    # The OpenMP OpenBLAS must win over the alternatives' default (see OpticDependencies).
    INSTALL_RPATH "${OPTIC_OPENBLAS_LIBDIR}"
    BUILD_RPATH "${OPTIC_OPENBLAS_LIBDIR}")
  add_library(optic::optic ALIAS optic_shared)
endif()
set_target_properties(optic_static PROPERTIES EXPORT_NAME optic_static)
add_library(optic::optic_static ALIAS optic_static)

# In-tree programs (CLI, tests, benchmarks) link the static library: they may use
# internal headers and symbols that the shared library hides.
add_library(optic_internal INTERFACE)
target_link_libraries(optic_internal INTERFACE optic_static ${_optic_deps})
target_include_directories(optic_internal INTERFACE
  ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
if(TARGET optic_archer)
  target_link_libraries(optic_internal INTERFACE optic_archer) # cmake/OpticTsanOpenMP.cmake
endif()
