# Empty compiler generated dependencies file for ze_newer_loader_client.
# This may be replaced when dependencies are built.
