# Empty dependencies file for cg_policy_check.
# This may be replaced when dependencies are built.
