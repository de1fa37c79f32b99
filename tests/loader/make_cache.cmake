# Makes a fresh cache for the loader tests: cmake -DGEN=... -DDIR=... -DARGS="..." -P make_cache.cmake
file(REMOVE_RECURSE ${DIR})
separate_arguments(arg_list UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${GEN} --out ${DIR} ${arg_list} RESULT_VARIABLE rv)
if(NOT rv EQUAL 0)
  message(FATAL_ERROR "twincache-gen failed (${rv}): ${GEN} --out ${DIR} ${ARGS}")
endif()
