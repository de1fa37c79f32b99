# TwincacheInstall.cmake — the install surface: the shared library libtwincache
# (all public C API: formats/ + cache/ + loader/), and `cmake --install` of
# headers, shared + static libraries, twincache.pc, the CMake package
# (find_package(twincache) -> twincache::twincache) and the programs.
#
# Included from the top-level CMakeLists BEFORE the components, so the global
# PIC setting reaches every static library; the shared library itself is made
# by a deferred call at the end of the top-level directory, once every
# component target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every static library is linked into libtwincache.so: position-independent.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

function(twincache_add_install_surface)
  # The static libraries whose public C API the shared library carries whole.
  # Adding a component is one word here.
  set(archives twincache_format twincache_scm twincache_loader twincache_import)
  if(TARGET twincache_cache)
    list(APPEND archives twincache_cache)
  endif()

  # abi.c: sizes of the structs the Python binding mirrors (checked at import).
  add_library(twincache SHARED ${PROJECT_SOURCE_DIR}/loader/abi.c)
  target_link_libraries(twincache PRIVATE
    -Wl,--whole-archive ${archives} -Wl,--no-whole-archive
    PkgConfig::ZSTD PkgConfig::LMDB Threads::Threads m)
  if(TARGET twincache_common)
    target_link_libraries(twincache PRIVATE twincache_common)
  endif()
  # Only twincache_* is exported: tc_* internals stay private to the library
  # (the Python binding uses the public API only).
  set(map ${CMAKE_CURRENT_BINARY_DIR}/twincache.map)
  file(WRITE ${map} "{\n  global: twincache_*;\n  local: *;\n};\n")
  target_link_options(twincache PRIVATE "LINKER:--version-script=${map}")
  if(TWINCACHE_SANITIZE STREQUAL "")  # sanitizer runtimes may come from the executable
    target_link_options(twincache PRIVATE "LINKER:--no-undefined")
  endif()
  set_target_properties(twincache PROPERTIES LINK_DEPENDS ${map})
  if(NOT SKBUILD)  # a wheel holds no symlinks: there the library is one file, no SONAME chain
    set_target_properties(twincache PROPERTIES
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})  # 0.x: minor breaks ABI
  endif()
  target_include_directories(twincache INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/formats>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/loader>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/import>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/cache>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  add_library(twincache::twincache ALIAS twincache)

  # --- tests: the installed tree, and the Python package -------------------
  if(TWINCACHE_TESTS)
    # (included, not add_subdirectory: no subdirectory in a deferred call)
    include(${PROJECT_SOURCE_DIR}/tests/install/tests.cmake)
    include(${PROJECT_SOURCE_DIR}/python/tests.cmake)
  endif()

  # --- the Python wheel (pyproject.toml, scikit-build-core sets SKBUILD) -----
  # The library goes inside the package (twincache/libtwincache.so, where
  # _capi.py looks first), the programs into the environment's scripts folder
  # (the venv's bin/, on its PATH). Headers, archives, CMake and pkg-config
  # files are for `cmake --install`, not for pip.
  if(SKBUILD)
    install(TARGETS twincache LIBRARY DESTINATION twincache)
    foreach(prog twincache-gen twincache-inspect twincache-import twincache-train twincache-loader-bench)
      if(TARGET ${prog})
        install(TARGETS ${prog} RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
      endif()
    endforeach()
    # the CUDA plugin where the trainer looks: the environment's lib/twincache
    if(TARGET twincache_cuda AND NOT TWINCACHE_CUDA_LINKED)
      install(TARGETS twincache_cuda LIBRARY DESTINATION ${SKBUILD_DATA_DIR}/${TWINCACHE_CUDA_PLUGIN_DIR})
    endif()
    return()
  endif()

  # --- install -------------------------------------------------------------
  # Public headers: twincache_*.h of the API folders (tc_*.h are internal).
  set(headers "")
  foreach(dir formats cache loader import)
    file(GLOB h ${PROJECT_SOURCE_DIR}/${dir}/twincache_*.h)
    list(APPEND headers ${h})
  endforeach()
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

  install(TARGETS twincache EXPORT twincacheTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS ${archives} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(prog twincache-gen twincache-inspect twincache-import twincache-train twincache-loader-bench)
    if(TARGET ${prog})
      install(TARGETS ${prog} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
  endforeach()
  if(TARGET twincache_cuda AND NOT TWINCACHE_CUDA_LINKED)  # the plugin, where the trainer looks
    install(TARGETS twincache_cuda LIBRARY DESTINATION ${TWINCACHE_CUDA_PLUGIN_DIR})
  endif()

  set(cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/twincache)
  install(EXPORT twincacheTargets NAMESPACE twincache:: DESTINATION ${cmakedir})
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/twincacheConfig.cmake.in
       "@PACKAGE_INIT@\ninclude(\"\${CMAKE_CURRENT_LIST_DIR}/twincacheTargets.cmake\")\n"
       "check_required_components(twincache)\n")
  configure_package_config_file(${CMAKE_CURRENT_BINARY_DIR}/twincacheConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/twincacheConfig.cmake INSTALL_DESTINATION ${cmakedir})
  write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/twincacheConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/twincacheConfig.cmake
                ${CMAKE_CURRENT_BINARY_DIR}/twincacheConfigVersion.cmake
          DESTINATION ${cmakedir})

  # pkg-config: the shared library; --static adds what the archives need.
  # Relocatable: the prefix is found from the .pc file's own place.
  file(RELATIVE_PATH pc_up ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" pc_up "${pc_up}")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/twincache.pc.in
       "prefix=\${pcfiledir}/${pc_up}\n"
       "libdir=\${prefix}/@CMAKE_INSTALL_LIBDIR@\n"
       "includedir=\${prefix}/@CMAKE_INSTALL_INCLUDEDIR@\n\n"
       "Name: twincache\n"
       "Description: pre-built causal-discovery training data: cache reader and batch loader\n"
       "Version: @PROJECT_VERSION@\n"
       "Requires.private: libzstd lmdb\n"
       "Libs: -L\${libdir} -ltwincache\n"
       "Libs.private: -lpthread -lm\n"
       "Cflags: -I\${includedir}\n")
  configure_file(${CMAKE_CURRENT_BINARY_DIR}/twincache.pc.in
                 ${CMAKE_CURRENT_BINARY_DIR}/twincache.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/twincache.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

endfunction()

cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL twincache_add_install_surface)
