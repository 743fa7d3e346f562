# fault: the faults a cluster job meets, each a test against real mpirun runs: a rank
# killed, the launcher interrupted, the disk full or read-only, a stack overflow, too
# little memory for the stacks, one rank much slower, a symbolic link planted at the
# temporary output. Labelled mpi, so the sanitizer passes run them too. RUN_SERIAL:
# they time how fast ranks stop.
set(LD_FAULT_DIR ${CMAKE_CURRENT_LIST_DIR})
set(LD_FAULT_WORK ${CMAKE_CURRENT_BINARY_DIR}/fault)
if(LD_ASAN OR LD_TSAN)
  set(LD_FAULT_SANITIZED sanitized)
endif()

add_test(NAME fault.kill COMMAND ${LD_FAULT_DIR}/test_kill.sh $<TARGET_FILE:loomdist>
  ${LD_FAULT_WORK}/kill)
add_test(NAME fault.interrupt COMMAND ${LD_FAULT_DIR}/test_interrupt.sh
  $<TARGET_FILE:loomdist> ${LD_FAULT_WORK}/interrupt)
# timeout: fault.disk's own limit, under CTest's, so that its EXIT trap unmounts.
add_test(NAME fault.disk COMMAND timeout -k 10 270 ${LD_FAULT_DIR}/test_disk.sh
  $<TARGET_FILE:loomdist>
  ${LD_FAULT_WORK}/disk)
add_test(NAME fault.overflow COMMAND ${LD_FAULT_DIR}/test_overflow.sh
  $<TARGET_FILE:loomdist> ${LD_FAULT_WORK}/overflow)
add_test(NAME fault.memory COMMAND ${LD_FAULT_DIR}/test_memory.sh $<TARGET_FILE:loomdist>
  ${LD_FAULT_WORK}/memory ${LD_FAULT_SANITIZED})
add_test(NAME fault.slow_rank COMMAND ${LD_FAULT_DIR}/test_slow_rank.sh
  $<TARGET_FILE:loomdist> ${LD_PYTHON} ${LD_FAULT_WORK}/slow-rank)
add_test(NAME fault.symlink COMMAND ${LD_FAULT_DIR}/test_symlink.sh
  $<TARGET_FILE:loomdist> ${LD_FAULT_WORK}/symlink)
set_tests_properties(fault.kill fault.interrupt fault.disk fault.overflow fault.memory
  fault.slow_rank fault.symlink PROPERTIES LABELS mpi TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77
  ENVIRONMENT "${LD_MPI_ENV}")
