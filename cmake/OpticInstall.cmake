# Install rules: libraries, headers, optic-config.cmake (+ version), optic.pc.
include(CMakePackageConfigHelpers)

install(TARGETS optic_static optic_shared optic_openblas
  EXPORT optic-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/optic DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/optic/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/optic)
install(TARGETS optic RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(_cfgdir ${CMAKE_INSTALL_LIBDIR}/cmake/optic)
install(EXPORT optic-targets NAMESPACE optic:: DESTINATION ${_cfgdir})
configure_package_config_file(cmake/optic-config.cmake.in
  ${PROJECT_BINARY_DIR}/optic-config.cmake INSTALL_DESTINATION ${_cfgdir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/optic-config-version.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/optic-config.cmake
  ${PROJECT_BINARY_DIR}/optic-config-version.cmake DESTINATION ${_cfgdir})

# pkg-config: optic.pc links liboptic.so (with an rpath to it), `--static`
# adds what liboptic.a needs; optic-static.pc links liboptic.a. The OpenMP
# OpenBLAS is linked by its directory, with an rpath, so it wins over the
# alternatives' default at run time (as OpticDependencies.cmake does in-tree).
set(OPTIC_PC_LIBS_PRIVATE
  "-L${OPTIC_OPENBLAS_LIBDIR} -Wl,-rpath,${OPTIC_OPENBLAS_LIBDIR} -lopenblas -lcrypto -lpthread -lm ${OpenMP_C_FLAGS}")
if(OPTIC_HAVE_MPI)
  string(APPEND OPTIC_PC_LIBS_PRIVATE " -lmpi")
endif()
file(RELATIVE_PATH OPTIC_PC_TO_PREFIX
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(cmake/optic.pc.in ${PROJECT_BINARY_DIR}/optic.pc @ONLY)
configure_file(cmake/optic-static.pc.in ${PROJECT_BINARY_DIR}/optic-static.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/optic.pc ${PROJECT_BINARY_DIR}/optic-static.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
