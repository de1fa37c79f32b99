# install_test.cmake — installs the build tree into a fresh prefix and builds
# consumer.c against the INSTALLED files twice: with pkg-config and with
# find_package(twincache); runs both on a cache.
#   cmake -DBUILD=... -DWORK=... -DSRC=... -DCACHE=... -DCC=... -P install_test.cmake
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rv OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rv EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rv}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/twincache_loader.h include/twincache_format.h lib/pkgconfig/twincache.pc
          lib/cmake/twincache/twincacheConfig.cmake lib/libtwincache.so lib/libtwincache_loader.a
          lib/libtwincache_format.a bin/twincache-gen bin/twincache-inspect)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install test: ${prefix}/${f} was not installed")
  endif()
endforeach()

# 1. pkg-config
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run("pkg-config" pkg-config --cflags --libs twincache)
separate_arguments(pc_flags UNIX_COMMAND "${run_out}")
run("cc with pkg-config" ${CC} -std=c11 -Wall -Werror -o ${WORK}/consumer_pc ${SRC}/consumer.c ${pc_flags})

# 2. find_package
run("configure consumer" ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/fp -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${CC})
run("build consumer" ${CMAKE_COMMAND} --build ${WORK}/fp)

# Run both against the installed library only (no build tree on the path).
set(ENV{LD_LIBRARY_PATH} ${prefix}/lib)
foreach(exe ${WORK}/consumer_pc ${WORK}/fp/consumer)
  run("${exe}" ${exe} ${CACHE})
  message(STATUS "${exe}: ${run_out}")
  if(NOT run_out MATCHES "^ok [1-9]")
    message(FATAL_ERROR "install test: ${exe} printed '${run_out}'")
  endif()
endforeach()
# The installed consumer must really use the installed .so.
run("ldd" ldd ${WORK}/fp/consumer)
if(NOT run_out MATCHES "${prefix}/lib/libtwincache.so")
  message(FATAL_ERROR "install test: consumer does not load the installed libtwincache:\n${run_out}")
endif()
