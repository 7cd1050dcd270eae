#!/bin/sh
# PID 1 of mdiag's pause (sandbox) image: it holds the Pod's namespaces and
# sleeps until SIGTERM or SIGINT, then exits 0. (PID 1 of a PID namespace
# only gets the signals it has a handler for, hence the trap.)
trap 'exit 0' TERM INT
while :; do
	sleep 86400 &
	wait $!
done
