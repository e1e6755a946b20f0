#!/usr/bin/env bash
# Fault runs of jobwire's distributed mode (PostgreSQL + RabbitMQ + Redis, one process per role).
#
#   scripts/chaos.sh                 # run by .ci/run; starts what it needs, stops by itself
#
# What a run does:
#   * generates CHAOS_JOBS job posts (unique marker `job-NNNN`, category web) and CHAOS_NOISE
#     non-job posts (`noise-NNNN`), and CHAOS_SUBSCRIBERS subscribers following `web`:
#     expected deliveries = jobs x subscribers (12,000 by default);
#   * starts a fake Telegram (limits lifted, CHAOS_TG_LATENCY_MS per call) and a fake LLM
#     answering from the posts' labels, failing 30% of calls with 500 and holding 10% until the
#     client times out; a fresh PostgreSQL database, a fresh RabbitMQ vhost (so the fixed
#     jobwire.* queue names cannot meet another run's) and a unique Redis key prefix;
#   * runs one parser (replaying the posts batch after batch, so work keeps arriving), two
#     classifiers, two dispatchers and two senders, each with its own admin port, waits for
#     every /readyz;
#   * while the posts flow: `kill -9` of a random sender, classifier and dispatcher
#     (CHAOS_KILLS_EACH times each, at random moments) with a restart shortly after, and one
#     outage of each service: PostgreSQL at a quarter of the window (`pg_ctlcluster … stop -m
#     fast; sleep; start`), RabbitMQ in the middle (`rabbitmqctl stop_app; sleep; start_app`)
#     and Redis at three quarters (`redis-cli shutdown nosave; sleep; redis-server …`: its
#     keys are lost, as in a real restart without persistence);
#   * waits until the database has nothing pending, held, sending, queued, waiting or
#     un-fanned-out for a few seconds in a row (CHAOS_SETTLE_TIMEOUT seconds at most);
#   * counts what the fake Telegram accepted by (chat, job) (scripts/chaos/tally.py).
#
# It fails (exit 1) when a delivery was lost, when duplicates exceed the deliveries the
# database says were re-sent after an unknown outcome (SUM(deliveries.resent_after_crash): a
# sender killed between Telegram's answer and its database write, or a network error after the
# request went out), when a non-job or unknown message
# was delivered (wrong > 0), when a jobwire process exited by itself, or when the pipeline did
# not settle. Its last line is always, once the run got that far:
#
#   lost=N duplicated=N delivered=N expected=N kills=N
#
# Cleanup (trap, on every exit): every process it started is stopped, the database and the
# vhost are dropped, the Redis keys deleted, and RabbitMQ is made sure to be running. Logs are
# kept in the printed work directory when the run fails (or with CHAOS_KEEP=1).
#
# Environment (all optional):
#   JOBWIRE_BIN            the binary (default target/release/jobwire, built when missing)
#   CHAOS_SEED             random seed (default: random; printed, to repeat a run)
#   CHAOS_JOBS=40 CHAOS_NOISE=10 CHAOS_SUBSCRIBERS=300 CHAOS_BATCHES=10
#   CHAOS_FEED_INTERVAL_MS=4000   time between two replayed batches
#   CHAOS_KILLS_EACH=4            kills per role (sender, classifier, dispatcher)
#   CHAOS_RABBIT_DOWN_SECS=4      how long RabbitMQ stays stopped
#   CHAOS_RABBIT_RESTART=1        0 skips the broker restart (debugging only)
#   CHAOS_PG_DOWN_SECS=4 CHAOS_PG_RESTART=1        the same for PostgreSQL
#   CHAOS_REDIS_DOWN_SECS=3 CHAOS_REDIS_RESTART=1  the same for Redis
#   CHAOS_TG_LATENCY_MS=100 CHAOS_SENDER_IN_FLIGHT=16   how fast the senders can go
#   CHAOS_SETTLE_TIMEOUT=180
#   CHAOS_PG_ADMIN_URL     default $JOBWIRE_TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/test
#   CHAOS_AMQP_HOST=127.0.0.1:5672  CHAOS_REDIS_URL=redis://127.0.0.1:6379/
#   Which instances the outages stop and start (point them at instances of your own when
#   others use the default ones; the run restarts them):
#   CHAOS_PG_CLUSTER=main          the pg_ctlcluster cluster serving CHAOS_PG_ADMIN_URL
#                                  (its version: CHAOS_PG_VERSION, default the first installed)
#   CHAOS_RABBIT_NODE              the node rabbitmqctl manages (-n), default rabbitmqctl's own
#   Redis is restarted on the host and port of CHAOS_REDIS_URL.
#
# When it fails, the FAIL line names the stuck rows: each lost job's post (id, status, why),
# and the deliveries not sent (post, delivery, status, attempts, lease = time since the row
# last changed, not_before), and the logs are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HELPERS=$ROOT/scripts/chaos

BIN=${JOBWIRE_BIN:-target/release/jobwire}
SEED=${CHAOS_SEED:-$(( (RANDOM << 15) | RANDOM ))}
JOBS=${CHAOS_JOBS:-40}
NOISE=${CHAOS_NOISE:-10}
SUBSCRIBERS=${CHAOS_SUBSCRIBERS:-300}
BATCHES=${CHAOS_BATCHES:-10}
FEED_INTERVAL_MS=${CHAOS_FEED_INTERVAL_MS:-4000}
KILLS_EACH=${CHAOS_KILLS_EACH:-4}
TG_LATENCY_MS=${CHAOS_TG_LATENCY_MS:-100}
SENDER_IN_FLIGHT=${CHAOS_SENDER_IN_FLIGHT:-16}
SETTLE_TIMEOUT=${CHAOS_SETTLE_TIMEOUT:-180}
PG_ADMIN_URL=${CHAOS_PG_ADMIN_URL:-${JOBWIRE_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}}
AMQP_HOST=${CHAOS_AMQP_HOST:-127.0.0.1:5672}
REDIS_URL=${CHAOS_REDIS_URL:-redis://127.0.0.1:6379/}
RABBIT_DOWN_SECS=${CHAOS_RABBIT_DOWN_SECS:-4}
RABBIT_RESTART=${CHAOS_RABBIT_RESTART:-1} # 0: no broker restart (debugging only)
PG_DOWN_SECS=${CHAOS_PG_DOWN_SECS:-4}
PG_RESTART=${CHAOS_PG_RESTART:-1}
REDIS_DOWN_SECS=${CHAOS_REDIS_DOWN_SECS:-3}
REDIS_RESTART=${CHAOS_REDIS_RESTART:-1}
PG_CLUSTER_VERSION=${CHAOS_PG_VERSION:-$(ls /etc/postgresql 2>/dev/null | head -n 1)}
PG_CLUSTER=${CHAOS_PG_CLUSTER:-main}
PG_HOST_PORT=${PG_ADMIN_URL#*://}; PG_HOST_PORT=${PG_HOST_PORT#*@}; PG_HOST_PORT=${PG_HOST_PORT%%/*}
PG_HOST=${PG_HOST_PORT%%:*}; PG_PORT=5432
[[ $PG_HOST_PORT == *:* ]] && PG_PORT=${PG_HOST_PORT##*:}
RABBITMQCTL=(rabbitmqctl)
[[ -n ${CHAOS_RABBIT_NODE:-} ]] && RABBITMQCTL=(rabbitmqctl -n "$CHAOS_RABBIT_NODE")
REDIS_HOST_PORT=${REDIS_URL#redis://}; REDIS_HOST_PORT=${REDIS_HOST_PORT%%/*}
REDIS_HOST=${REDIS_HOST_PORT%%:*}; REDIS_PORT=${REDIS_HOST_PORT##*:}

RANDOM=$SEED
T_START=$SECONDS

log() { printf '[chaos %4ds] %s\n' "$((SECONDS - T_START))" "$*" >&2; }
die() { log "FATAL: $*"; FAILED=1; exit 1; }

# Milliseconds since the epoch, without a subprocess.
now_ms() { local t=${EPOCHREALTIME/[.,]/}; NOW_MS=$((t / 1000)); }

if [[ ! -x $BIN ]]; then
  log "building $BIN (cargo build --release -p jobwire)"
  cargo build --release -p jobwire >&2
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

RUN_ID="chaos_$(date +%s)_$$"
WORK=$(mktemp -d "/tmp/jobwire-${RUN_ID}.XXXX")
LOGS=$WORK/logs
mkdir -p "$LOGS"
DB_NAME=$RUN_ID
VHOST=${RUN_ID//_/-}
REDIS_PREFIX="jobwire-$RUN_ID"
DB_URL="${PG_ADMIN_URL%/*}/$DB_NAME"
AMQP_URL="amqp://guest:guest@$AMQP_HOST/$VHOST"

# ---------------------------------------------------------------------------------------------
# State

declare -A PID=() PORT=() ROLE=() STATE=() RESTART_AT=()
SLOTS=(dispatcher-1 dispatcher-2 classifier-1 classifier-2 sender-1 sender-2 parser)
declare -A KILLS=([sender]=0 [classifier]=0 [dispatcher]=0)
TOTAL_KILLS=0
CRASHES=0
FAILED=0
HANG=0
DB_CREATED=0
VHOST_CREATED=0
# One outage per service: its state (pending | running | done), the pid of the subshell that
# stops and starts it, and how many were done.
declare -A OUT_STATE=([postgres]=done [rabbitmq]=done [redis]=done)
declare -A OUT_PID=([postgres]="" [rabbitmq]="" [redis]="")
declare -A OUT_DONE=([postgres]=0 [rabbitmq]=0 [redis]=0)
declare -A OUT_AT=()
FAKE_PIDS=()
FINAL_LINE=""
PROBLEMS_LINE=""
CRASH_NOTES=()

# Stops and starts one service (an outage of DOWN seconds); used in a background subshell.
service_stop() {
  case $1 in
    postgres) pg_ctlcluster --skip-systemctl-redirect "$PG_CLUSTER_VERSION" "$PG_CLUSTER" stop -m fast ;;
    rabbitmq) "${RABBITMQCTL[@]}" stop_app ;;
    redis) redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" shutdown nosave || true ;;
  esac
}
service_start() { # no-op when the service is up
  case $1 in
    postgres)
      pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && return 0
      pg_ctlcluster --skip-systemctl-redirect "$PG_CLUSTER_VERSION" "$PG_CLUSTER" start
      for _ in $(seq 1 100); do pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && return 0; sleep 0.1; done
      return 1 ;;
    rabbitmq) "${RABBITMQCTL[@]}" start_app && "${RABBITMQCTL[@]}" await_startup ;;
    redis)
      redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
      redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" --save "" --appendonly no
      for _ in $(seq 1 100); do
        redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0
        sleep 0.1
      done
      return 1 ;;
  esac
}
down_secs() { case $1 in postgres) echo "$PG_DOWN_SECS" ;; rabbitmq) echo "$RABBIT_DOWN_SECS" ;; redis) echo "$REDIS_DOWN_SECS" ;; esac; }

psql_admin() { psql "$PG_ADMIN_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_run() { psql "$DB_URL" -X -qAt -v ON_ERROR_STOP=1 "$@"; }

# ---------------------------------------------------------------------------------------------
# Cleanup: runs on every exit; everything it prints goes to stderr, then the tallies are the
# last line of stdout.

stop_pid() { # pid: SIGTERM, then SIGKILL after 5 s
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  [[ $rc -ne 0 ]] && FAILED=1
  log "cleaning up"
  for slot in "${SLOTS[@]}"; do # killed ones were reaped already: their pids are not ours
    [[ ${STATE[$slot]:-} == up && -n ${PID[$slot]:-} ]] && stop_pid "${PID[$slot]}"
  done
  for pid in "${FAKE_PIDS[@]}"; do stop_pid "$pid"; done
  for svc in postgres rabbitmq redis; do
    if [[ -n ${OUT_PID[$svc]} ]]; then wait "${OUT_PID[$svc]}" 2>/dev/null; fi
  done
  # Every service must be running again whatever happened (each start is a no-op when it is).
  "${RABBITMQCTL[@]}" start_app >/dev/null 2>&1 || log "rabbitmqctl start_app failed"
  "${RABBITMQCTL[@]}" await_startup >/dev/null 2>&1 || log "RabbitMQ did not come back; check it"
  service_start postgres >/dev/null 2>&1 || log "PostgreSQL did not come back; check it"
  service_start redis >/dev/null 2>&1 || log "Redis did not come back; check it"
  if [[ $VHOST_CREATED -eq 1 ]]; then
    "${RABBITMQCTL[@]}" delete_vhost "$VHOST" >/dev/null 2>&1 || log "could not delete vhost $VHOST"
  fi
  if [[ $DB_CREATED -eq 1 ]]; then
    psql_admin -c "DROP DATABASE IF EXISTS \"$DB_NAME\" WITH (FORCE)" >/dev/null 2>&1 \
      || log "could not drop database $DB_NAME"
  fi
  if command -v redis-cli >/dev/null; then
    redis-cli -u "$REDIS_URL" --scan --pattern "${REDIS_PREFIX}*" 2>/dev/null \
      | xargs -r redis-cli -u "$REDIS_URL" del >/dev/null 2>&1
  fi
  if [[ $FAILED -eq 0 && ${CHAOS_KEEP:-0} != 1 ]]; then
    rm -rf "$WORK"
  else
    log "logs kept in $LOGS"
  fi
  log "done in $((SECONDS - T_START)) s"
  # CI shows the end of the output: why it failed goes right above the tallies.
  [[ -n $PROBLEMS_LINE ]] && echo "$PROBLEMS_LINE"
  [[ -n $FINAL_LINE ]] && echo "$FINAL_LINE"
  if [[ $FAILED -ne 0 ]]; then exit 1; fi
  exit 0
}
trap cleanup EXIT
trap 'log "interrupted"; FAILED=1; exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# Services

reachable() { timeout 2 bash -c "exec 3<>/dev/tcp/${1%:*}/${1#*:}" 2>/dev/null; }
reachable "$AMQP_HOST" || die "RabbitMQ is not reachable on $AMQP_HOST"
psql_admin -c 'SELECT 1' >/dev/null || die "PostgreSQL is not reachable at $PG_ADMIN_URL"
redis-cli -u "$REDIS_URL" ping >/dev/null || die "Redis is not reachable at $REDIS_URL"
"${RABBITMQCTL[@]}" await_startup >/dev/null 2>&1 || die "rabbitmqctl cannot reach the local broker"

log "seed $SEED, work dir $WORK"
log "database $DB_NAME, vhost $VHOST, redis prefix $REDIS_PREFIX"
psql_admin -c "CREATE DATABASE \"$DB_NAME\"" >/dev/null
DB_CREATED=1
"${RABBITMQCTL[@]}" add_vhost "$VHOST" >/dev/null
VHOST_CREATED=1
"${RABBITMQCTL[@]}" set_permissions -p "$VHOST" guest '.*' '.*' '.*' >/dev/null

python3 "$HELPERS/gen.py" "$WORK/data" --jobs "$JOBS" --noise "$NOISE" \
  --subscribers "$SUBSCRIBERS" --batches "$BATCHES" --seed "$SEED"
EXPECTED=$((JOBS * SUBSCRIBERS))

# Free ports for the fakes and every process's admin server.
read -r -a PORTS <<<"$(python3 - "$((2 + ${#SLOTS[@]}))" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)"
TG_PORT=${PORTS[0]}
LLM_PORT=${PORTS[1]}
i=2
for slot in "${SLOTS[@]}"; do
  PORT[$slot]=${PORTS[$i]}
  ROLE[$slot]=${slot%-*}
  STATE[$slot]=down
  i=$((i + 1))
done
TG_URL="http://127.0.0.1:$TG_PORT/"

"$BIN" fake-telegram --listen "127.0.0.1:$TG_PORT" --no-limits --latency-ms "$TG_LATENCY_MS" \
  >"$LOGS/fake-telegram.log" 2>&1 &
FAKE_PIDS+=($!)
"$BIN" fake-llm --listen "127.0.0.1:$LLM_PORT" --oracle "$WORK/data/oracle.jsonl" \
  --rate-500 0.3 --rate-timeout 0.1 --seed "$SEED" >"$LOGS/fake-llm.log" 2>&1 &
FAKE_PIDS+=($!)
for p in "$TG_PORT" "$LLM_PORT"; do
  for _ in $(seq 1 100); do reachable "127.0.0.1:$p" && break; sleep 0.1; done
  reachable "127.0.0.1:$p" || die "a fake server did not start on :$p (see $LOGS)"
done

CONFIG=$WORK/jobwire.toml
cat >"$CONFIG" <<EOF
# Generated by scripts/chaos.sh
subscribers_file = "$WORK/data/subscribers.toml"

[database]
url = "$DB_URL"

[queue]
url = "$AMQP_URL"

[redis]
url = "$REDIS_URL"
key_prefix = "$REDIS_PREFIX"

[telegram]
api_url = "$TG_URL"
unlimited = true
max_in_flight = $SENDER_IN_FLIGHT
request_timeout_secs = 10

[classifier]
kind = "llm"
concurrency = 8
fallback_after = 1000
retry_base_ms = 200
retry_max_secs = 2

[llm]
base_url = "http://127.0.0.1:$LLM_PORT/v1"
model = "chaos-oracle"
timeout_secs = 3
max_retries = 1

[scheduler]
tick_ms = 500
lease_secs = 5
# Work whose message was lost in an outage (committed, then the publish failed) is published
# again after this long; the default (600 s) is longer than the whole run.
stuck_after_secs = 15

[[bots]]
name = "chaos"

[[categories]]
slug = "web"
name = "Web"
description = "websites, landing pages, frontend, backend, CMS, site fixes"
bot = "chaos"

[[channels]]
handle = "@chaos_jobs"
EOF

export JOBWIRE_BOT_CHAOS_TOKEN="424242:chaos-fake-token-for-the-stand-in"
export NO_COLOR=1
export RUST_LOG=${RUST_LOG:-info}

# ---------------------------------------------------------------------------------------------
# Processes

PARSER_BATCH=-1 # the batch the running parser replays

start_slot() { # slot
  local slot=$1 role=${ROLE[$1]} args=()
  args=(run --config "$CONFIG" --role "$role")
  if [[ $role == parser ]]; then
    args+=(--replay "$WORK/data/batch-$(printf %02d "$PARSER_BATCH").jsonl")
  fi
  printf '=== %s: start %s\n' "$(date +%T.%N)" "${args[*]}" >>"$LOGS/$slot.log"
  JOBWIRE__ADMIN__LISTEN="127.0.0.1:${PORT[$slot]}" "$BIN" "${args[@]}" >>"$LOGS/$slot.log" 2>&1 &
  PID[$slot]=$!
  STATE[$slot]=up
}

kill_slot() { # slot: kill -9
  local slot=$1
  kill -KILL "${PID[$slot]}" 2>/dev/null || true
  wait "${PID[$slot]}" 2>/dev/null || true
  printf '=== %s: kill -9\n' "$(date +%T.%N)" >>"$LOGS/$slot.log"
  STATE[$slot]=down
}

wait_ready() { # slot...
  local slot deadline=$((SECONDS + 90))
  for slot in "$@"; do
    until curl -fsS -o /dev/null "http://127.0.0.1:${PORT[$slot]}/readyz" 2>/dev/null; do
      kill -0 "${PID[$slot]}" 2>/dev/null || die "$slot exited at start-up: $(tail -n 5 "$LOGS/$slot.log")"
      [[ $SECONDS -lt $deadline ]] || die "$slot not ready after 90 s: $(tail -n 5 "$LOGS/$slot.log")"
      sleep 0.2
    done
  done
}

# A process that exits without being killed is a bug: counted, logged, restarted.
check_crashes() {
  local slot rc
  for slot in "${SLOTS[@]}"; do
    [[ ${STATE[$slot]} == up ]] || continue
    kill -0 "${PID[$slot]}" 2>/dev/null && continue
    rc=0
    wait "${PID[$slot]}" 2>/dev/null || rc=$?
    CRASHES=$((CRASHES + 1))
    CRASH_NOTES+=("$slot status $rc: $(tail -n 1 "$LOGS/$slot.log" | cut -c1-300)")
    log "CRASH: $slot (pid ${PID[$slot]}) exited by itself with status $rc; restarting it"
    tail -n 5 "$LOGS/$slot.log" | sed 's/^/    /' >&2
    start_slot "$slot"
  done
}

log "starting the roles"
start_slot dispatcher-1 # applies the migrations and loads the subscribers first
wait_ready dispatcher-1
for slot in dispatcher-2 classifier-1 classifier-2 sender-1 sender-2; do start_slot "$slot"; done
wait_ready dispatcher-2 classifier-1 classifier-2 sender-1 sender-2
log "all roles ready; $JOBS jobs + $NOISE non-jobs x $SUBSCRIBERS subscribers = $EXPECTED deliveries expected"

# ---------------------------------------------------------------------------------------------
# The schedule: batches every FEED_INTERVAL_MS; kills spread over the feeding window and a bit
# beyond, in random order and at random moments within their slots; one RabbitMQ restart in
# the middle.

FEED_END_MS=$(( (BATCHES - 1) * FEED_INTERVAL_MS ))
CHAOS_FROM_MS=2000
CHAOS_TO_MS=$((FEED_END_MS + 8000))
EVENTS=()
for role in sender classifier dispatcher; do
  for _ in $(seq 1 "$KILLS_EACH"); do EVENTS+=("$role"); done
done
for ((i = ${#EVENTS[@]} - 1; i > 0; i--)); do # Fisher-Yates with the seeded RANDOM
  j=$((RANDOM % (i + 1)))
  tmp=${EVENTS[$i]}; EVENTS[$i]=${EVENTS[$j]}; EVENTS[$j]=$tmp
done
N_EVENTS=${#EVENTS[@]}
SLOT_MS=$(( (CHAOS_TO_MS - CHAOS_FROM_MS) / (N_EVENTS > 0 ? N_EVENTS : 1) ))
EVENT_AT=()
for ((i = 0; i < N_EVENTS; i++)); do
  EVENT_AT+=($((CHAOS_FROM_MS + i * SLOT_MS + RANDOM % (SLOT_MS * 7 / 10 + 1))))
done
OUT_AT[postgres]=$((CHAOS_FROM_MS + (CHAOS_TO_MS - CHAOS_FROM_MS) / 4))
OUT_AT[rabbitmq]=$(( (CHAOS_FROM_MS + CHAOS_TO_MS) / 2 ))
OUT_AT[redis]=$((CHAOS_FROM_MS + (CHAOS_TO_MS - CHAOS_FROM_MS) * 3 / 4))
[[ $PG_RESTART == 1 ]] && OUT_STATE[postgres]=pending
[[ $RABBIT_RESTART == 1 ]] && OUT_STATE[rabbitmq]=pending
[[ $REDIS_RESTART == 1 ]] && OUT_STATE[redis]=pending
log "schedule: batches every ${FEED_INTERVAL_MS} ms until ${FEED_END_MS} ms; $N_EVENTS kills between ${CHAOS_FROM_MS} and ${CHAOS_TO_MS} ms; outages: PostgreSQL at ${OUT_AT[postgres]} ms, RabbitMQ at ${OUT_AT[rabbitmq]} ms, Redis at ${OUT_AT[redis]} ms"

now_ms
T0=$NOW_MS
NEXT_EVENT=0
NEXT_BATCH=0
REPLAYS_SEEN=0

# The parser replays one batch per process: when the next batch is due and the running parser
# has read its batch, it is stopped (SIGTERM) and a new one started with the next batch.
feed_step() {
  local elapsed=$1 seen
  [[ $NEXT_BATCH -lt $BATCHES ]] || return 0
  [[ $elapsed -ge $((NEXT_BATCH * FEED_INTERVAL_MS)) ]] || return 0
  if [[ ${STATE[parser]} == up ]]; then
    seen=$(grep -c 'replay read' "$LOGS/parser.log" || true)
    [[ $seen -gt $REPLAYS_SEEN ]] || return 0 # still reading the previous batch
    REPLAYS_SEEN=$seen
    STATE[parser]=stopping
    stop_pid "${PID[parser]}"
    STATE[parser]=down
  fi
  PARSER_BATCH=$NEXT_BATCH
  NEXT_BATCH=$((NEXT_BATCH + 1))
  start_slot parser
  log "replaying batch $PARSER_BATCH"
}

chaos_step() {
  local elapsed=$1 role slot candidates=()
  local svc down
  for svc in postgres rabbitmq redis; do
    if [[ ${OUT_STATE[$svc]} == pending && $elapsed -ge ${OUT_AT[$svc]} ]]; then
      down=$(down_secs "$svc")
      log "$svc: stopped for ${down} s"
      (service_stop "$svc" && sleep "$down" && service_start "$svc") >>"$LOGS/$svc.log" 2>&1 &
      OUT_PID[$svc]=$!
      OUT_STATE[$svc]=running
      OUT_DONE[$svc]=$((OUT_DONE[$svc] + 1))
    elif [[ ${OUT_STATE[$svc]} == running ]] && ! kill -0 "${OUT_PID[$svc]}" 2>/dev/null; then
      wait "${OUT_PID[$svc]}" || die "the $svc restart failed: $(tail -n 5 "$LOGS/$svc.log")"
      OUT_PID[$svc]=""
      OUT_STATE[$svc]=done
      log "$svc is back"
    fi
  done
  [[ $NEXT_EVENT -lt $N_EVENTS && $elapsed -ge ${EVENT_AT[$NEXT_EVENT]} ]] || return 0
  role=${EVENTS[$NEXT_EVENT]}
  for slot in "${SLOTS[@]}"; do
    [[ ${ROLE[$slot]} == "$role" && ${STATE[$slot]} == up ]] && candidates+=("$slot")
  done
  [[ ${#candidates[@]} -gt 0 ]] || return 0 # every instance is down: try again next tick
  slot=${candidates[$((RANDOM % ${#candidates[@]}))]}
  kill_slot "$slot"
  KILLS[$role]=$((KILLS[$role] + 1))
  TOTAL_KILLS=$((TOTAL_KILLS + 1))
  RESTART_AT[$slot]=$((NOW_MS + 300 + RANDOM % 1701))
  STATE[$slot]=restarting
  NEXT_EVENT=$((NEXT_EVENT + 1))
  log "kill -9 $slot (kill $TOTAL_KILLS of $N_EVENTS)"
}

restart_step() {
  local slot
  for slot in "${SLOTS[@]}"; do
    if [[ ${STATE[$slot]} == restarting && $NOW_MS -ge ${RESTART_AT[$slot]} ]]; then
      start_slot "$slot"
      log "restarted $slot"
    fi
  done
}

busy() { # whether the chaos phase still has something to do
  [[ $NEXT_BATCH -lt $BATCHES || $NEXT_EVENT -lt $N_EVENTS ]] && return 0
  local svc
  for svc in postgres rabbitmq redis; do [[ ${OUT_STATE[$svc]} != done ]] && return 0; done
  local slot
  for slot in "${SLOTS[@]}"; do [[ ${STATE[$slot]} == restarting ]] && return 0; done
  return 1
}

while busy; do
  now_ms
  elapsed=$((NOW_MS - T0))
  check_crashes
  feed_step "$elapsed"
  chaos_step "$elapsed"
  restart_step
  sleep 0.1
done
log "chaos phase over after $(( (NOW_MS - T0) / 1000 )) s: kills sender=${KILLS[sender]} classifier=${KILLS[classifier]} dispatcher=${KILLS[dispatcher]}, restarts PostgreSQL ${OUT_DONE[postgres]} RabbitMQ ${OUT_DONE[rabbitmq]} Redis ${OUT_DONE[redis]}"

# ---------------------------------------------------------------------------------------------
# Completion: nothing in flight in the database for 3 s in a row.

STATUS_SQL="SELECT
  (SELECT count(*) FROM posts),
  (SELECT count(*) FROM posts WHERE status IN ('queued','waiting','job')),
  (SELECT count(*) FROM deliveries),
  (SELECT count(*) FROM deliveries WHERE status IN ('pending','held','sending'))"
settled_for=0
deadline=$((SECONDS + SETTLE_TIMEOUT))
last_report=0
total_posts=$((JOBS + NOISE))
while :; do
  check_crashes
  row=$(psql_run -F ' ' -c "$STATUS_SQL" 2>/dev/null || echo "? ? ? ?")
  read -r posts open_posts deliveries open_deliveries <<<"$row"
  # Nothing in flight: every post read and decided, no delivery left to send. (Waiting for
  # the expected number of deliveries too would only wait out the timeout when a job was
  # not fanned out to everyone; the tally reports that as lost.)
  if [[ $posts == "$total_posts" && $open_posts == 0 && $open_deliveries == 0 ]]; then
    settled_for=$((settled_for + 1))
    [[ $settled_for -ge 3 ]] && break
  else
    settled_for=0
  fi
  if [[ $SECONDS -ge $deadline ]]; then
    HANG=1
    log "HANG: not settled after ${SETTLE_TIMEOUT} s: posts=$posts open_posts=$open_posts deliveries=$deliveries open_deliveries=$open_deliveries"
    break
  fi
  if [[ $((SECONDS - last_report)) -ge 10 ]]; then
    last_report=$SECONDS
    log "waiting: posts=$posts/$total_posts open_posts=$open_posts deliveries=$deliveries/$EXPECTED open_deliveries=$open_deliveries"
  fi
  sleep 1
done

# ---------------------------------------------------------------------------------------------
# Tally

# The rows behind lost deliveries, on one line: each lost job's post (id, marker, status and
# why it went no further), then the deliveries not sent, grouped by post and status, each
# group with its first delivery (id, attempts, lease = seconds since the row last changed,
# not_before, error). At most 10 of each.
stuck_rows() {
  local jobs posts deliveries
  jobs=$(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1])).get("missing_jobs", [])))' \
    "$WORK/tally.json" 2>/dev/null || true)
  posts=$(psql_run -v jobs="$jobs" <<'SQL'
SELECT string_agg(line, '; ') FROM (
  SELECT 'post ' || p.id || ' (' || substring(p.text from 'job-[0-9]{4}') || ') status=' || p.status
         || COALESCE(' reason=' || p.filter_reason, '')
         || COALESCE(' duplicate_of=' || p.duplicate_of, '')
         || ' deliveries=' || (SELECT count(*) FROM deliveries d WHERE d.post_id = p.id)
         || ' updated ' || ((extract(epoch FROM now()) * 1000)::bigint - p.updated_at) / 1000 || 's ago' AS line
  FROM posts p
  WHERE substring(p.text from 'job-[0-9]{4}') = ANY(string_to_array(:'jobs', ','))
     OR p.status IN ('queued', 'waiting', 'job')
  ORDER BY p.id LIMIT 10) s
SQL
)
  deliveries=$(psql_run <<'SQL'
SELECT string_agg(line, '; ') FROM (
  SELECT 'post ' || post_id || ': ' || n || ' ' || status || ' (first: delivery ' || first_id
         || ' status=' || status || ' attempts=' || attempts || ' lease=' || lease || 's'
         || COALESCE(' not_before=in ' || not_before_in || 's', '')
         || COALESCE(' error=' || left(error, 80), '') || ')' AS line
  FROM (
    SELECT d.post_id, d.status, count(*) OVER w AS n, d.id AS first_id, d.attempts,
           ((extract(epoch FROM now()) * 1000)::bigint - d.updated_at) / 1000 AS lease,
           (d.not_before - (extract(epoch FROM now()) * 1000)::bigint) / 1000 AS not_before_in,
           d.error, row_number() OVER (PARTITION BY d.post_id, d.status ORDER BY d.id) AS k
    FROM deliveries d WHERE d.status NOT IN ('sent', 'blocked')
    WINDOW w AS (PARTITION BY d.post_id, d.status)) g
  WHERE k = 1 ORDER BY post_id LIMIT 10) s
SQL
)
  echo "posts: ${posts:-none}; deliveries not sent: ${deliveries:-none}"
}

log "database: posts $(psql_run -c "SELECT string_agg(status || '=' || n, ' ') FROM (SELECT status, count(*) n FROM posts GROUP BY status ORDER BY status) s")"
log "database: deliveries $(psql_run -c "SELECT string_agg(status || '=' || n, ' ') FROM (SELECT status, count(*) n FROM deliveries GROUP BY status ORDER BY status) s")"
AMBIGUOUS=$(psql_run -c "SELECT COALESCE(SUM(resent_after_crash), 0) FROM deliveries")
LLM_STATS=$(curl -fsS "http://127.0.0.1:$LLM_PORT/__testkit/stats" 2>/dev/null | head -c 400 || true)
log "fake LLM: $LLM_STATS"

TALLY=$(python3 "$HELPERS/tally.py" --telegram "$TG_URL" --expected "$WORK/data/expected.json" \
  --json "$WORK/tally.json") || die "tally failed"
declare -A T=()
for kv in $TALLY; do T[${kv%%=*}]=${kv#*=}; done

problems=()
[[ ${T[lost]} -eq 0 ]] || problems+=("lost ${T[lost]} deliveries (see $WORK/tally.json)")
if [[ ${T[lost]} -ne 0 || $HANG -ne 0 ]]; then
  STUCK=$(stuck_rows) || STUCK="(the database could not be read)"
  problems+=("stuck: ${STUCK:-no post or delivery left in flight}")
fi
[[ ${T[duplicated]} -le $AMBIGUOUS ]] || problems+=("duplicated ${T[duplicated]} > ambiguous $AMBIGUOUS")
[[ ${T[wrong]} -eq 0 ]] || problems+=("wrong ${T[wrong]} messages (non-job or unknown; see $WORK/tally.json)")
[[ $CRASHES -eq 0 ]] || problems+=("$CRASHES process(es) exited by themselves: ${CRASH_NOTES[*]}")
[[ $HANG -eq 0 ]] || problems+=("the pipeline did not settle within ${SETTLE_TIMEOUT} s")
for role in sender classifier dispatcher; do
  [[ ${KILLS[$role]} -ge $KILLS_EACH ]] || problems+=("only ${KILLS[$role]} $role kills of $KILLS_EACH")
done
[[ ${OUT_DONE[rabbitmq]} -ge $RABBIT_RESTART ]] || problems+=("RabbitMQ was not restarted")
[[ ${OUT_DONE[postgres]} -ge $PG_RESTART ]] || problems+=("PostgreSQL was not restarted")
[[ ${OUT_DONE[redis]} -ge $REDIS_RESTART ]] || problems+=("Redis was not restarted")

echo "wrong=${T[wrong]} messages=${T[messages]} crashes=$CRASHES rabbitmq_restarts=${OUT_DONE[rabbitmq]} postgres_restarts=${OUT_DONE[postgres]} redis_restarts=${OUT_DONE[redis]} seed=$SEED"
echo "ambiguous=$AMBIGUOUS sender_kills=${KILLS[sender]} classifier_kills=${KILLS[classifier]} dispatcher_kills=${KILLS[dispatcher]}"
if [[ ${#problems[@]} -gt 0 ]]; then
  FAILED=1
  for p in "${problems[@]}"; do log "FAIL: $p"; done
  PROBLEMS_LINE="FAIL: $(IFS='; '; echo "${problems[*]}")"
  for slot in "${SLOTS[@]}"; do
    log "last lines of $slot.log:"
    tail -n 20 "$LOGS/$slot.log" | sed 's/^/    /' >&2
  done
else
  log "PASS: nothing lost, duplicates ($((T[duplicated]))) within the $AMBIGUOUS deliveries re-sent after a crash or a network error"
fi
FINAL_LINE="lost=${T[lost]} duplicated=${T[duplicated]} delivered=${T[delivered]} expected=${T[expected]} kills=$TOTAL_KILLS"
# cleanup (the EXIT trap) prints FINAL_LINE last and exits 1 when FAILED
