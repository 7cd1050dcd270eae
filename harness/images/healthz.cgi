#!/bin/sh
# /healthz of the model-server stand-in, run by busybox httpd as
# /cgi-bin/index.cgi for the folder /srv/www/healthz/ (httpd answers
# /healthz with a 302 to /healthz/, which HTTP probes follow). 200 when the
# server's state is "ready", 503 otherwise. The access line goes to httpd's
# stderr, which is the container's.
state=$(cat /tmp/model-server/state 2>/dev/null)
[ -n "$state" ] || state=starting
case "$REQUEST_URI" in
/healthz/ | /healthz/\?*) ;;
*)
	printf 'Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnot found\n'
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) INFO  access remote=$REMOTE_ADDR method=$REQUEST_METHOD path=$REQUEST_URI status=404" >&2
	exit 0
	;;
esac
if [ "$state" = ready ]; then
	code=200
	printf 'Status: 200 OK\r\nContent-Type: application/json\r\n\r\n{"status":"ok"}\n'
else
	code=503
	printf 'Status: 503 Service Unavailable\r\nContent-Type: application/json\r\n\r\n{"status":"%s"}\n' "$state"
fi
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) INFO  access remote=$REMOTE_ADDR method=$REQUEST_METHOD path=/healthz status=$code state=$state agent=\"$HTTP_USER_AGENT\"" >&2
