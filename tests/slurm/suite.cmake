# slurm: settle.sbatch, sweep and local-cluster, end to end on a 3-node local
# cluster emulated on this host. Skipped (exit 77) only where slurmd cannot run.
# RUN_SERIAL: it starts daemons on fixed ports and loads every core.
add_test(NAME slurm.cluster
  COMMAND ${CMAKE_SOURCE_DIR}/tests/slurm/test_slurm.sh
          $<TARGET_FILE:loomdist> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/slurm-work)
set_tests_properties(slurm.cluster PROPERTIES
  LABELS slurm TIMEOUT 600 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
