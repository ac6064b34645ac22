#!/usr/bin/env bash
# Makes a Docker engine answer: nothing to do when `docker info` already does (Docker Desktop, a
# system service, an earlier run); otherwise starts dockerd in the background, installing Debian's
# docker.io with apt-get first when dockerd is missing (as root, or with sudo), and waits for it.
#
#   infra/lambda-image/dockerd.sh          start (when needed) and wait
#   infra/lambda-image/dockerd.sh stop     stop the dockerd this script started (its PID file)
#   infra/lambda-image/dockerd.sh done     the end of a run (make test): stop the dockerd this run
#                                          started (DOCKERD_RUN_ID), else say what is left running
#
# Environment: DOCKERD_LOG (its log, default /var/log/a2a-serverless-dockerd.log), DOCKERD_PIDFILE
# (default /var/run/a2a-serverless-dockerd.pid), DOCKERD_ARGS (more options, e.g.
# --storage-driver=vfs where overlay2 cannot mount), DOCKERD_WAIT (seconds, default 60),
# DOCKERD_RUN_ID (the run that starts it, kept in DOCKERD_PIDFILE.run, for `done`).
set -euo pipefail

DOCKERD_LOG=${DOCKERD_LOG:-/var/log/a2a-serverless-dockerd.log}
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/var/run/a2a-serverless-dockerd.pid}
DOCKERD_WAIT=${DOCKERD_WAIT:-60}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

say() { echo "==> dockerd: $*"; }

RUN_FILE=$DOCKERD_PIDFILE.run

started_pid() { # the PID of the dockerd this script started, if it still runs
    local pid
    [ -f "$DOCKERD_PIDFILE" ] && pid=$(cat "$DOCKERD_PIDFILE" 2> /dev/null) && [ -n "$pid" ] \
        && $SUDO kill -0 "$pid" 2> /dev/null && echo "$pid"
}

stop() {
    local pid
    if pid=$(started_pid); then
        $SUDO kill "$pid" 2> /dev/null && say "stopped $pid" || say "$pid was not running"
        # dockerd stops its containers first: give it time.
        for _ in $(seq 1 60); do $SUDO kill -0 "$pid" 2> /dev/null || break; sleep 0.5; done
    elif [ -f "$DOCKERD_PIDFILE" ]; then
        say "the dockerd of $DOCKERD_PIDFILE is not running"
    else
        say "no $DOCKERD_PIDFILE: not started by this script"
    fi
    $SUDO rm -f "$RUN_FILE"
}

if [ "${1:-}" = stop ]; then
    stop
    exit 0
fi

if [ "${1:-}" = done ]; then
    if pid=$(started_pid) && [ -n "${DOCKERD_RUN_ID:-}" ] \
        && [ "$(cat "$RUN_FILE" 2> /dev/null)" = "$DOCKERD_RUN_ID" ]; then
        stop
    elif pid=$(started_pid); then
        say "dockerd $pid, started before this run, is left running: make docker-stop stops it"
    elif docker info > /dev/null 2>&1; then
        say "the Docker engine was not started by make: left as it was"
    fi
    exit 0
fi

if docker info > /dev/null 2>&1; then
    say "an engine answers ($(docker info --format '{{.ServerVersion}}, {{.Driver}}'))"
    exit 0
fi

if ! command -v dockerd > /dev/null || ! command -v docker > /dev/null; then
    "$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh" \
        "dockerd.sh: no Docker engine answers: install Docker and start it (docs/lambda-runtime.md)" docker.io
fi

say "starting dockerd (log: $DOCKERD_LOG, PID file: $DOCKERD_PIDFILE)"
# shellcheck disable=SC2086 # DOCKERD_ARGS is a list of options
$SUDO sh -c "nohup dockerd --pidfile '$DOCKERD_PIDFILE' ${DOCKERD_ARGS:-} >> '$DOCKERD_LOG' 2>&1 < /dev/null &"
echo "${DOCKERD_RUN_ID:-}" | $SUDO tee "$RUN_FILE" > /dev/null
for _ in $(seq 1 "$DOCKERD_WAIT"); do
    if docker info > /dev/null 2>&1; then
        say "ready ($(docker info --format '{{.ServerVersion}}, storage driver {{.Driver}}'))"
        exit 0
    fi
    sleep 1
done
echo "dockerd.sh: no answer from dockerd after ${DOCKERD_WAIT} s; the end of $DOCKERD_LOG:" >&2
$SUDO tail -20 "$DOCKERD_LOG" >&2
if [ "$(id -u)" != 0 ] && $SUDO docker info > /dev/null 2>&1; then
    echo "dockerd.sh: it answers root: add yourself to the docker group (sudo usermod -aG docker \$USER)" >&2
fi
exit 1
