# slurm: settle.sbatch, sweep and local-cluster, end to end on a 3-node local
# cluster emulated on this host. Skipped (exit 77) only where slurmd cannot run.
# RUN_SERIAL: it starts daemons on fixed ports and loads every core. timeout: its own
# limit, under CTest's, so that its EXIT trap stops the cluster (a CTest timeout is a
# SIGKILL, and the next run reaps what that leaves).
add_test(NAME slurm.cluster
  COMMAND timeout -k 20 540 ${CMAKE_SOURCE_DIR}/tests/slurm/test_slurm.sh
          $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/slurm-work)
set_tests_properties(slurm.cluster PROPERTIES
  LABELS slurm TIMEOUT 600 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
