# `cpack -G DEB` in the build folder: loomdist_<version>_<arch>.deb of what
# cmake/install.cmake installs, under /usr. Its shared-library dependencies are
# computed by dpkg-shlibdeps (Debian: dpkg-dev) from the binaries themselves; what no
# binary links is named here: mpirun to launch ranks, and the Python libraries the
# analysis' commands import. Nothing in it needs a -dev package.
set(CPACK_PACKAGE_NAME loomdist)
set(CPACK_PACKAGE_VENDOR "loomdist")
set(CPACK_PACKAGE_CONTACT "loomdist maintainers <loomdist@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "distributed benchmark of threading models: MPI, green threads, parallel HDF5")
set(CPACK_PACKAGE_DESCRIPTION
  "loomdist runs trade-settlement, VaR and server workloads under OS threads, green\n\
threads, callbacks and pinned workers across MPI ranks, writes every measurement to\n\
one HDF5 file, and turns many such files into a report (loomdist-report). It comes\n\
with Slurm batch scripts, a SimGrid model of its distributed part, and man pages.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY loomdist)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF) # keep the symbols: --trace-pinning prints backtraces

set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # loomdist_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# python3-munkres: matplotlib's fonttools takes it or scipy, whose pythran would pull a
# C++ compiler and -dev packages into a machine that only runs loomdist.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "openmpi-bin, python3, python3-h5py, python3-numpy, python3-munkres, python3-matplotlib")
# What some options reach for: Slurm for the batch scripts, PostgreSQL's server for
# --db-url local, wrk for the pool job's --load wrk, man to read the pages.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-wlm, postgresql, wrk, man-db")
include(CPack)
