# twincache-loader-bench: the loader against plain zstd and memcpy (included
# from tools/CMakeLists.txt).
if(TARGET twincache_loader)
  add_executable(twincache-loader-bench ${CMAKE_CURRENT_LIST_DIR}/loader_bench.c)
  target_include_directories(twincache-loader-bench PRIVATE ${PROJECT_SOURCE_DIR}/formats)
  target_link_libraries(twincache-loader-bench PRIVATE twincache_loader PkgConfig::ZSTD twincache_args)
endif()
