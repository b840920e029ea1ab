# Empty dependencies file for cgcuda_ptx_race.
# This may be replaced when dependencies are built.
