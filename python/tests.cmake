# python/tests.cmake (included by cmake/TwincacheInstall.cmake): the twincache package's tests, run by
# /usr/bin/python3 (python3-numpy, python3-torch, python3-pytest). The
# package itself is pure Python over libtwincache.so; nothing is built here
# but the small C program that prints the C loader's order for comparison.
set(TWINCACHE_TEST_TMP ${CMAKE_BINARY_DIR}/test-tmp)
set(TWINCACHE_PYTHON /usr/bin/python3 CACHE FILEPATH "Python interpreter of the binding's tests")

add_executable(twincache_order_dump ${CMAKE_CURRENT_LIST_DIR}/tests/order_dump.c)
target_link_libraries(twincache_order_dump PRIVATE twincache)

# Loading a sanitizer-built .so into Python needs LD_PRELOAD of the runtime:
# sanitizer builds skip these tests (the C tests cover that code).
if(NOT TWINCACHE_SANITIZE STREQUAL "")
  foreach(t python_binding python_suite)
    add_test(NAME ${t} COMMAND sh -c "echo skipped: sanitizer build; exit 77")
    set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
  return()
endif()

# the library and programs of this build, for both tests
set(twincache_py_env
    TWINCACHE_LIBRARY=$<TARGET_FILE:twincache>
    TWINCACHE_BIN_DIR=${CMAKE_BINARY_DIR}
    TWINCACHE_GEN=$<TARGET_FILE:twincache-gen>
    TWINCACHE_INSPECT=$<TARGET_FILE:twincache-inspect>
    TWINCACHE_IMPORT=$<TARGET_FILE:twincache-import>)
add_test(NAME python_binding
         COMMAND ${CMAKE_COMMAND} -E env ${twincache_py_env}
                 TWINCACHE_TEST_CACHE=${TWINCACHE_TEST_TMP}/loader-cache
                 TWINCACHE_TEST_TMP=${TWINCACHE_TEST_TMP}/python
                 TWINCACHE_ORDER_DUMP=$<TARGET_FILE:twincache_order_dump>
                 ${TWINCACHE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/tests/run_pytest.py
                 ${CMAKE_CURRENT_LIST_DIR}/tests
                 --ignore=${CMAKE_CURRENT_LIST_DIR}/tests/test_suite.py  # python_suite runs them
                 --ignore=${CMAKE_CURRENT_LIST_DIR}/tests/test_suite_metrics.py)
set_tests_properties(python_binding PROPERTIES FIXTURES_REQUIRED loader_cache
                     SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS "python")
# the held-out benchmark (suite/, twincache.suite): its own test, so that
# ctest -j runs it beside python_binding; suite/CMakeLists.txt writes the
# build tree's twincache-suite
add_test(NAME python_suite
         COMMAND ${CMAKE_COMMAND} -E env ${twincache_py_env}
                 TWINCACHE_TEST_TMP=${TWINCACHE_TEST_TMP}/suite
                 TWINCACHE_SUITE=${CMAKE_BINARY_DIR}/suite/twincache-suite
                 ${TWINCACHE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/tests/run_pytest.py
                 ${CMAKE_CURRENT_LIST_DIR}/tests/test_suite.py
                 ${CMAKE_CURRENT_LIST_DIR}/tests/test_suite_metrics.py)
set_tests_properties(python_suite PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS "python")
