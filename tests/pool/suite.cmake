# pool: the pool job and the processes around it. Every test carries the label pool;
# add a test with add_test and append its name to LD_POOL_TESTS.
set(LD_POOL_DIR ${CMAKE_CURRENT_LIST_DIR})
set(LD_POOL_TESTS)

# The load around the server under test: children, wrk's and loomdist-load's output,
# and loomdist-load's count against a live clearinghouse's.
add_executable(test_load ${LD_POOL_DIR}/test_load.c)
target_link_libraries(test_load PRIVATE ld_jobs ld_http PkgConfig::UV)
target_include_directories(test_load PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
add_test(NAME pool.spawn COMMAND test_load spawn)
add_test(NAME pool.load_parse COMMAND test_load parse ${LD_POOL_DIR}/data)
add_test(NAME pool.load_live COMMAND test_load live $<TARGET_FILE:loomdist-load>)
add_test(NAME pool.load_cli COMMAND ${LD_POOL_DIR}/test_load_cli.sh
  $<TARGET_FILE:loomdist-load> $<TARGET_FILE:loomdist-clearinghouse>
  ${CMAKE_CURRENT_BINARY_DIR}/pool-load-cli)
list(APPEND LD_POOL_TESTS pool.spawn pool.load_parse pool.load_live pool.load_cli)

# Fresh mode's cap on live green threads: clients that pipeline past it get 503.
add_test(NAME pool.fresh_cap COMMAND ${LD_POOL_DIR}/test_fresh_cap.py
  $<TARGET_FILE:loomdist-pool-server> $<TARGET_FILE:loomdist-clearinghouse>)
list(APPEND LD_POOL_TESTS pool.fresh_cap)

# The job end to end: every strategy in both stack modes, a memory limit, and wrk.
foreach(case copy own limited shared killed wrk bad)
  add_test(NAME pool.${case} COMMAND ${LD_POOL_DIR}/test_pool.sh ${case}
    $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/pool)
  set_tests_properties(pool.${case} PROPERTIES RUN_SERIAL TRUE SKIP_RETURN_CODE 77
    ENVIRONMENT "${LD_MPI_ENV}")
  list(APPEND LD_POOL_TESTS pool.${case})
endforeach()

set_tests_properties(${LD_POOL_TESTS} PROPERTIES LABELS pool TIMEOUT 120)
