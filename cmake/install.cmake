# What `cmake --install build --prefix P` puts where, as HPC software is installed:
#   P/bin                 loomdist, its helper programs, and the analysis' commands
#                         (links into share/loomdist/analysis)
#   P/share/loomdist      analysis/ (the Python package and its commands), slurm/ (the
#                         batch script, the sweep, the local cluster), sim/ (predict.py
#                         and the SimGrid platforms)
#   P/share/man/man1      a man page per command (cmake/man.cmake)
#   P/share/doc/loomdist  README.md, ARCHITECTURE.md and docs/ (docs/install.md)
# Nothing installed names the source or build tree: the analysis' commands find their
# package from where they really lie, and settle.sbatch is told its loomdist here.
include(GNUInstallDirs)

set(LD_SHARE ${CMAKE_INSTALL_DATADIR}/loomdist)
set(LD_PROGRAMS loomdist loomdist-clearinghouse loomdist-load loomdist-forks
  loomdist-pool-server loomdist-pingpong)
set(LD_ANALYSIS_COMMANDS loomdist-report loomdist-models loomdist-pool)

install(TARGETS ${LD_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The analysis package, its Python finder and its commands, and the version the
# build's binaries print, which an installed copy reports too (analysis/__init__.py).
file(GLOB LD_ANALYSIS_MODULES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/analysis/*.py)
set(LD_ANALYSIS_SCRIPTS ${PROJECT_SOURCE_DIR}/analysis/find-python)
foreach(cmd ${LD_ANALYSIS_COMMANDS})
  list(APPEND LD_ANALYSIS_SCRIPTS ${PROJECT_SOURCE_DIR}/analysis/${cmd})
endforeach()
set(LD_ANALYSIS_VERSION ${CMAKE_BINARY_DIR}/share/loomdist/analysis/_version.py)
file(CONFIGURE OUTPUT ${LD_ANALYSIS_VERSION} CONTENT
  "\"\"\"Written by the build: the version of the loomdist this copy came with.\"\"\"\n\
VERSION = \"${PROJECT_VERSION} (git ${LD_GIT_COMMIT})\"\n")
install(FILES ${LD_ANALYSIS_MODULES} ${LD_ANALYSIS_VERSION}
  ${PROJECT_SOURCE_DIR}/analysis/README.md DESTINATION ${LD_SHARE}/analysis)
install(PROGRAMS ${LD_ANALYSIS_SCRIPTS} DESTINATION ${LD_SHARE}/analysis)

# bin/<command> -> ../share/loomdist/analysis/<command>, relative, so the install can
# move (DESTDIR, a package, a copied prefix) and the link still holds.
file(RELATIVE_PATH LD_BIN_TO_ANALYSIS /p/${CMAKE_INSTALL_BINDIR} /p/${LD_SHARE}/analysis)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/links)
foreach(cmd ${LD_ANALYSIS_COMMANDS})
  file(CREATE_LINK ${LD_BIN_TO_ANALYSIS}/${cmd} ${CMAKE_BINARY_DIR}/share/links/${cmd}
    SYMBOLIC)
  install(FILES ${CMAKE_BINARY_DIR}/share/links/${cmd} DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# Slurm: the sweep and the local cluster as they are; the batch script with the
# path of the loomdist installed beside it, written at install time, when the prefix
# is known (`--prefix` may change it after configuring).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/slurm/sweep ${PROJECT_SOURCE_DIR}/slurm/local-cluster
  DESTINATION ${LD_SHARE}/slurm)
install(CODE "set(LD_SBATCH_SOURCE \"${PROJECT_SOURCE_DIR}/slurm/settle.sbatch\")
  set(LD_SBATCH_DIR \"${LD_SHARE}/slurm\")
  set(LD_BINDIR \"${CMAKE_INSTALL_BINDIR}\")")
install(SCRIPT ${CMAKE_CURRENT_LIST_DIR}/install_sbatch.cmake)

# The simulation's model: predict.py and the platforms it reads.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/sim/predict.py DESTINATION ${LD_SHARE}/sim)
file(GLOB LD_PLATFORMS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/sim/platforms/*.xml)
install(FILES ${LD_PLATFORMS} DESTINATION ${LD_SHARE}/sim/platforms)

# The README, the code's map and the reference pages they link to, as in the source tree.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DOCDIR})
