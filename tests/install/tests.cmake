# tests/install/tests.cmake (included by cmake/TwincacheInstall.cmake): The installed tree works for a C user: a tiny program built against it with
# pkg-config and with find_package(twincache), run on the loader tests' cache.
# Sanitizer builds skip it (a consumer would need the sanitizer runtime too).
set(TWINCACHE_TEST_TMP ${CMAKE_BINARY_DIR}/test-tmp)
set(install_work ${TWINCACHE_TEST_TMP}/install)
if(TWINCACHE_SANITIZE STREQUAL "")
  add_test(NAME install_consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_BINARY_DIR} -DWORK=${install_work}
                   -DSRC=${CMAKE_CURRENT_LIST_DIR}/consumer
                   -DCACHE=${TWINCACHE_TEST_TMP}/loader-cache -DCC=${CMAKE_C_COMPILER}
                   -P ${CMAKE_CURRENT_LIST_DIR}/install_test.cmake)
  set_tests_properties(install_consumer PROPERTIES FIXTURES_REQUIRED loader_cache TIMEOUT 300)
else()
  add_test(NAME install_consumer COMMAND sh -c "echo skipped: sanitizer build; exit 77")
  set_tests_properties(install_consumer PROPERTIES SKIP_RETURN_CODE 77)
endif()
