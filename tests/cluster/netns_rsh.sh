#!/bin/bash
# Open MPI's remote shell for namespace hosts (plm_rsh_agent): called as ssh would be,
# `netns_rsh.sh [ssh options] HOST COMMAND...`, it runs COMMAND with a shell inside host
# HOST's network namespace (HOST is 10.77.0.(10+i) or zt-hI, see netns_hosts.sh) and in a
# private UTS namespace whose hostname is zt-hI, so every "host" reports its own name.
# Like ssh, it reports a remote side that dies ("Connection to HOST closed by remote host.",
# when the remote command is killed by a signal, e.g. every process of the host killed).
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
  case "$1" in -o|-p|-l|-i) shift 2 ;; *) shift ;; esac
done
host=$1
shift
case "$host" in
  10.77.0.*) i=$(( ${host##*.} - 10 )) ;;
  zt-h*) i=${host#zt-h} ;;
  *) echo "netns_rsh.sh: $host is not a namespace host (10.77.0.N or zt-hN)" >&2; exit 255 ;;
esac
ip netns exec "zt-h$i" unshare --uts /bin/sh -c "hostname zt-h$i; $*"
status=$?
if [ "$status" -ge 128 ]; then echo "Connection to $host closed by remote host." >&2; fi
exit "$status"
