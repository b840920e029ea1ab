#!/bin/sh
# Open MPI's rsh agent for the two-host tests (plm_rsh_agent): it runs the
# command mpirun meant for another host in that host's network namespace,
# under that host's name (a UTS namespace of its own), as ssh would on a
# real node. Called as: agent.sh HOST COMMAND... where COMMAND is one shell
# command line split into words (Open MPI quotes its values for the remote
# shell, so the words are joined and run by sh, as ssh does).
# CG_MULTIHOST_HOSTS (test_multihost.py sets it) maps each address to its
# namespace and host name: "ADDRESS/NAMESPACE/HOSTNAME ...".
host=$1
shift
for entry in $CG_MULTIHOST_HOSTS; do
    address=${entry%%/*}
    rest=${entry#*/}
    if [ "$address" = "$host" ]; then
        exec ip netns exec "${rest%%/*}" unshare --uts sh -c 'hostname "$1" && exec sh -c "$2"' sh "${rest#*/}" "$*"
    fi
done
echo "agent.sh: no namespace for host '$host' (CG_MULTIHOST_HOSTS: '$CG_MULTIHOST_HOSTS')" >&2
exit 255
