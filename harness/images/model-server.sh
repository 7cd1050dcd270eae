#!/bin/sh
# The model-server stand-in of mdiag's test images, run by busybox sh as the
# image's Entrypoint (PID 1). It logs like a model server, serves /healthz on
# --port with busybox httpd (harness/images/healthz.cgi: 503 while loading,
# 200 when ready) and misbehaves on request. Flags come from the arguments
# (a ModelService's spec.args) and then from $MODEL_SERVER_ARGS:
#
#   --port=N           listen port (default 8080)
#   --model-name=NAME  model to "load" (default $MODEL_NAME or tiny-llama-1.1b)
#   --ready-after=N    load for N seconds (503), then ready (200); default 1
#   --never-ready      keep loading forever: /healthz answers 503
#   --crash=N          exit N: N != 0 after a FATAL line, before listening;
#                      N = 0 at --crash-after, loaded or not (a clean exit)
#   --crash-after=S    when --crash acts, in seconds from the start (default 2)
#   --oom              PID 1 allocates until the memory limit kills it
#                      (reason OOMKilled, exit code 137)
#   --oom=child        a child process does (OOMKilled; the server exits 0)
#   --log-secrets      log a few credential-shaped (fake) lines
#
# Other flags are logged and ignored. SIGTERM or SIGINT: stop httpd, exit 0.

set -u

version=${MODEL_SERVER_VERSION:-dev}
state_dir=/tmp/model-server
port=8080
model=${MODEL_NAME:-tiny-llama-1.1b}
ready_after=1
never_ready=0
crash=
crash_after=2
oom=
log_secrets=0
extra=

log() {
	level=$1
	shift
	printf '%s %-5s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$level" "$*"
}

# Sleeps without blocking the traps (a foreground sleep would delay them).
nap() {
	sleep "$1" &
	wait $!
}

number() { # name value
	case $2 in
	'' | *[!0-9]*)
		log FATAL "invalid $1=$2: want a whole number"
		exit 2
		;;
	esac
}

# shellcheck disable=SC2086 # MODEL_SERVER_ARGS is split on spaces on purpose.
for a in "$@" ${MODEL_SERVER_ARGS:-}; do
	case $a in
	--port=*) port=${a#*=} ;;
	--model-name=*) model=${a#*=} ;;
	--ready-after=*) ready_after=${a#*=} ;;
	--never-ready) never_ready=1 ;;
	--crash) crash=1 ;;
	--crash=*) crash=${a#*=} ;;
	--crash-after=*) crash_after=${a#*=} ;;
	--oom | --oom=self) oom=self ;;
	--oom=child) oom=child ;;
	--log-secrets) log_secrets=1 ;;
	*) extra="$extra $a" ;;
	esac
done
number --port "$port"
number --ready-after "$ready_after"
number --crash-after "$crash_after"
[ -z "$crash" ] || number --crash "$crash"

httpd_pid=
stop() {
	log INFO "received $1, shutting down"
	[ -z "$httpd_pid" ] || kill "$httpd_pid" 2>/dev/null
	log INFO "server stopped"
	exit 0
}
trap 'stop SIGTERM' TERM
trap 'stop SIGINT' INT

started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }

log INFO "model-server $version starting (pid $$)"
log INFO "config: model=$model port=$port device=cpu workers=1${extra:+ extra-flags:$extra}"
if [ "$log_secrets" = 1 ]; then
	log DEBUG "env AWS_ACCESS_KEY_ID=AKIAMDIAGFAKE0000001"
	log DEBUG "env AWS_SECRET_ACCESS_KEY=mdiagFakeSecretAccessKey0000000000000000"
	log DEBUG "env HF_TOKEN=hf_mdiagFakeToken0000000000000000000000"
	log DEBUG "model store request headers: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZGlhZy1mYWtlIn0.ZmFrZS1zaWduYXR1cmU"
	log DEBUG "metadata db: postgres://modeldock:mdiag-fake-password@db.modeldock.svc:5432/models"
fi

if [ -n "$crash" ] && [ "$crash" != 0 ]; then
	log INFO "checking model store"
	nap "$crash_after"
	if [ -z "${MODEL_PATH:-}" ]; then
		log FATAL "missing env MODEL_PATH"
	else
		log FATAL "cannot open model $MODEL_PATH: checksum mismatch"
	fi
	exit "$crash"
fi

mkdir -p "$state_dir"
echo loading >"$state_dir/state"
httpd -f -p "$port" -h /srv/www &
httpd_pid=$!
log INFO "listening on :$port"

# Grows a shell string by doubling until the kernel kills the process.
grow() {
	x=0123456789abcdef
	while :; do
		x="$x$x"
		[ "${#x}" -lt 1048576 ] || log INFO "loaded $((${#x} / 1048576)) MiB of weights"
	done
}

log INFO "loading model $model from ${MODEL_PATH:-/models/$model}"
case $oom in
self)
	grow
	;;
child)
	(grow)
	rc=$?
	log ERROR "model loader (a child process) died with status $rc"
	log INFO "shutting down"
	kill "$httpd_pid" 2>/dev/null
	exit 0
	;;
esac

if [ "$never_ready" = 1 ]; then
	log WARN "model warm-up is taking long; /healthz answers 503 until it ends"
	while :; do
		nap 10
		log WARN "still warming up $model ($(elapsed) s)"
	done
fi

i=0
while [ "$i" -lt "$ready_after" ]; do
	nap 1
	i=$((i + 1))
	log INFO "loading $model: $i/$ready_after s"
	if [ "$crash" = 0 ] && [ "$(elapsed)" -ge "$crash_after" ]; then
		log INFO "exiting with 0 before the model loaded (--crash=0)"
		kill "$httpd_pid" 2>/dev/null
		exit 0
	fi
done
echo ready >"$state_dir/state"
log INFO "model $model loaded in $(elapsed) s; ready"

while :; do
	nap 1
	if ! kill -0 "$httpd_pid" 2>/dev/null; then
		log FATAL "http server exited"
		exit 1
	fi
	if [ "$crash" = 0 ] && [ "$(elapsed)" -ge "$crash_after" ]; then
		log INFO "finished serving, exiting (--crash=0)"
		kill "$httpd_pid" 2>/dev/null
		exit 0
	fi
done
