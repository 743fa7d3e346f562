# settle: what the strategies must show against each other, from real runs.
set(LD_SETTLE_DIR ${CMAKE_CURRENT_LIST_DIR})

# callbacks sleeps the deadlines green sleeps, at the same resolution. Its bounds are
# timings, so the sanitizer builds, which slow every call, leave it out (label timing),
# and the script allows three runs (it says why).
add_test(NAME mpi.callbacks_deadlines COMMAND ${LD_SETTLE_DIR}/test_callbacks_deadlines.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-deadlines)
set_tests_properties(mpi.callbacks_deadlines PROPERTIES LABELS "mpi;timing" TIMEOUT 120
  RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")

# No trade settles before its plan allows, under every strategy and stack mode: the
# floor a deadline fixed late (ld_deadlines_add_after) must keep. In process, untimed.
add_executable(test_settle_floor ${LD_SETTLE_DIR}/test_settle_floor.c)
target_link_libraries(test_settle_floor PRIVATE ld_jobs ld_http PkgConfig::UV)
target_include_directories(test_settle_floor PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
add_test(NAME settle.floor COMMAND test_settle_floor)
set_tests_properties(settle.floor PROPERTIES LABELS "unit;settle" TIMEOUT 120)

# The HTTP clients settle's http mode makes its checks with (lib/http/include/http_client.h),
# one per transport, and the clearinghouse's cap and stats windows.
add_executable(test_http_clients ${LD_SETTLE_DIR}/test_http_clients.c)
target_link_libraries(test_http_clients PRIVATE ld_jobs ld_http PkgConfig::UV)
target_include_directories(test_http_clients PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
add_test(NAME http.clients COMMAND test_http_clients)
set_tests_properties(http.clients PROPERTIES LABELS http TIMEOUT 60)

# settle --io http: sleep mode's statuses from every strategy and wherever the
# clearinghouse runs, its figures, and bad input.
add_test(NAME mpi.settle_http COMMAND ${LD_SETTLE_DIR}/test_http_io.sh
  $<TARGET_FILE:loomdist> $<TARGET_FILE:loomdist-clearinghouse> ${LD_PYTHON}
  ${CMAKE_CURRENT_BINARY_DIR}/settle-http)
set_tests_properties(mpi.settle_http PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")
add_test(NAME mpi.settle_http_bad COMMAND ${LD_SETTLE_DIR}/test_http_bad.sh
  $<TARGET_FILE:loomdist> $<TARGET_FILE:loomdist-clearinghouse>
  ${CMAKE_CURRENT_BINARY_DIR}/settle-http-bad)
set_tests_properties(mpi.settle_http_bad PROPERTIES LABELS "unit;mpi" TIMEOUT 180
  ENVIRONMENT "${LD_MPI_ENV}")
# A clearinghouse that takes connections and never answers: --ch-timeout fails the run.
add_test(NAME mpi.settle_http_stall COMMAND ${LD_SETTLE_DIR}/test_http_stall.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-http-stall)
set_tests_properties(mpi.settle_http_stall PROPERTIES LABELS "mpi;http;fault" TIMEOUT 180
  ENVIRONMENT "${LD_MPI_ENV}")
