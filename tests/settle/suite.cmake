# settle: what the strategies must show against each other, from real runs.
set(LD_SETTLE_DIR ${CMAKE_CURRENT_LIST_DIR})

# callbacks sleeps the deadlines green sleeps, at the same resolution. Its bounds are
# timings, so the sanitizer builds, which slow every call, leave it out (label timing).
add_test(NAME mpi.callbacks_deadlines COMMAND ${LD_SETTLE_DIR}/test_callbacks_deadlines.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-deadlines)
set_tests_properties(mpi.callbacks_deadlines PROPERTIES LABELS "mpi;timing" TIMEOUT 120
  RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")

# The HTTP clients settle's http mode makes its checks with (src/include/http_client.h),
# one per transport, and the clearinghouse's cap and stats windows.
add_executable(test_http_clients ${LD_SETTLE_DIR}/test_http_clients.c)
target_link_libraries(test_http_clients PRIVATE ld_jobs ld_runtime)
target_include_directories(test_http_clients PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
add_test(NAME http.clients COMMAND test_http_clients)
set_tests_properties(http.clients PROPERTIES LABELS http TIMEOUT 60)
