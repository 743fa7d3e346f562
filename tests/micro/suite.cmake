# micro: the micro job end to end under mpirun, its figures checked in the HDF5 file.
add_test(NAME micro.figures COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_micro.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${CMAKE_CURRENT_BINARY_DIR}/micro)
set_tests_properties(micro.figures PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "${LD_MPI_ENV}")
# micro's task strategy alone, on one rank: its figures are there, counters or not.
add_test(NAME micro.task COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_micro_task.sh
  $<TARGET_FILE:loomdist> ${CMAKE_CURRENT_BINARY_DIR}/micro_task)
set_tests_properties(micro.task PROPERTIES LABELS mpi TIMEOUT 120
  ENVIRONMENT "${LD_MPI_ENV}")
# A green thread's life in instructions (callgrind), held to a bound in copy mode; one
# at a time, as two valgrind runs side by side would slow each other's loop.
add_test(NAME micro.task_instructions COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_task_instructions.sh
  ${PROJECT_SOURCE_DIR}/scripts/bench-task-cost $<TARGET_FILE:loomdist> ${CMAKE_BUILD_TYPE})
set_tests_properties(micro.task_instructions PROPERTIES LABELS cost TIMEOUT 300 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77)
