# settle: what the strategies must show against each other, from real runs.
set(LD_SETTLE_DIR ${CMAKE_CURRENT_LIST_DIR})

# callbacks sleeps the deadlines green sleeps, at the same resolution. Its bounds are
# timings, so the sanitizer builds, which slow every call, leave it out (label timing).
add_test(NAME mpi.callbacks_deadlines COMMAND ${LD_SETTLE_DIR}/test_callbacks_deadlines.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/settle-deadlines)
set_tests_properties(mpi.callbacks_deadlines PROPERTIES LABELS "mpi;timing" TIMEOUT 120
  RUN_SERIAL TRUE ENVIRONMENT "${LD_MPI_ENV}")
