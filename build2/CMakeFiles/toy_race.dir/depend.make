# Empty dependencies file for toy_race.
# This may be replaced when dependencies are built.
