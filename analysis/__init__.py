"""loomdist analysis: many loomdist HDF5 runs turned into one report folder of tables,
figures and findings. Run it as `analysis/loomdist-report PATH...`."""
