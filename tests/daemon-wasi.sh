#!/bin/sh
# daemon-wasi.sh - WASI 0.2 guests as hosteld services (a real daemon on
# a temporary socket, the real client, the committed guests of
# tests/guests/wasi): the calc reactor deployed and called, its stdout
# as guest.stdout events in `hostel logs` and as daemon log lines (rate
# limited; long lines cut), the hello command's wasi:cli/run called
# through the daemon with env, args and a preopen from the service's
# config (stderr as guest.stderr), escapes out of the preopen refused
# (`..`, a symlink, an absolute path), the host's environment invisible,
# bad WASI config refused, a user's service limited to preopening that
# user's directories (as another uid through setpriv; skipped unless
# root), wasi:cli/exit poisoning the store, and the config surviving a
# daemon restart.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-wasi
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
G=$S/tests/guests/wasi
need_programs "$HOSTELD" "$HOSTEL" "$SEND"

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
CONF=$T/hostel.conf
# Other uids (no passwd entry needed) reach the socket through its group.
GRP=40101
USR=40102
printf 'socket-group = %s\n' "$GRP" >"$CONF"
chmod 755 "$T"
API='hostel:calc/api@0.1.0'
RUN='wasi:cli/run@0.2.12#run'
# callout NAME ARGS...: `hostel call` into $T/NAME.out/.err, rc in $rc
callout() {
	o=$1
	shift
	H call "$@" >"$T/$o.out" 2>"$T/$o.err"
	rc=$?
}
# create NAME SHA CONFIG: io.hostel.Service.Create with a raw config
# (bad ones too), reply in $T/create-NAME
create() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Service.Create\",\"parameters\":{\"name\":\"$1\",\"component\":\"$2\",\"config\":$3}}" \
		>"$T/create-$1" 2>&1
}
# guest NAME: the guest.* lines of service NAME, "stream line" each
guest() {
	H logs --json --kind 'guest.*' "$1" |
		sed -n 's/.*"kind":"guest\.\([a-z]*\)".*"line":"\([^"]*\)".*/\1 \2/p'
}

"$HOSTELD" --foreground --config "$CONF" --socket "$SOCK" \
	--state-dir "$STATE" 2>>"$LOG" &
PIDS="$PIDS $!"
DPID=$!
wait_for 10 alive || {
	echo "daemon-wasi: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# ---- a reactor: calc ------------------------------------------------------
H deploy "$G/calc.component.wasm" --name calc >"$T/deploy.out" 2>&1
check "a component importing WASI deploys and starts" \
	has "$T/deploy.out" "deployed calc (component"
callout c1 calc "$API#add(40, 2)"
check "calc add(40, 2) = 42" eq "$(cat "$T/c1.out")/$rc" "42/0"
callout c2 calc "$API#greet(\"daemon\")"
check "calc greet" eq "$(cat "$T/c2.out")" '"hello, daemon!"'
callout c3 calc "$API#log-now(\"first line\")"
check "log-now returns the monotonic time" \
	eq "$rc/$(grep -cE '^[0-9]+$' "$T/c3.out")" "0/1"
guest calc >"$T/calc.guest"
check "its stdout is a guest.stdout event in hostel logs" \
	eq "$(cat "$T/calc.guest")" "stdout log: first line"
H logs calc >"$T/calc.logs"
check "hostel logs shows the line after call.started, before call.returned" \
	eq "$(awk '{print $4}' "$T/calc.logs" | tail -3 | tr '\n' ' ')" \
	"call.started guest.stdout call.returned "
check "and hosteld logs it" has "$LOG" "service calc: stdout: log: first line"

# 120 lines in one call: the history keeps all, the log a burst of 50.
lines=$(i=1; while [ $i -le 120 ]; do printf 'l%d\\n' $i; i=$((i + 1)); done)
callout c4 --json calc "$API#log-now" "[\"${lines}end\"]"
guest calc >"$T/calc.guest"
check "120 newlines in one call: 121 more guest.stdout events" \
	eq "$(grep -c '^stdout ' "$T/calc.guest")" "122"
logged=$(grep -c 'service calc: stdout: ' "$LOG")
check "the log keeps at most a burst of them ($logged logged)" \
	test "$logged" -lt 100
sleep 0.3
callout c5 calc "$API#log-now(\"after the burst\")"
wait_for 2 has "$LOG" "service calc: stdout: log: after the burst"
check "logging resumes and counts what it skipped" \
	grep -q 'service calc: [0-9]* guest output line(s) not logged' "$LOG"

long=$(head -c 5000 /dev/zero | tr '\0' 'x')
callout c6 --json calc "$API#log-now" "[\"$long\"]"
H logs --json --kind guest.stdout calc | tail -1 >"$T/long.json"
check "a 5000-byte line is cut at 4096 bytes, marked truncated" \
	eq "$(grep -c '"truncated":true' "$T/long.json")/$(grep -o 'x*' "$T/long.json" | awk '{ if (length > m) m = length } END { print m }')" \
	"1/4091"
check "and cut in the log" grep -q 'service calc: stdout: log: x* \[\.\.\.\]$' "$LOG"

# ---- a command: hello, with env, args and a preopen ------------------------
mkdir -p "$T/data" "$T/outside"
echo "from the host" >"$T/data/input.txt"
echo "SECRET-OUTSIDE" >"$T/outside/secret.txt"
ln -s "$T/outside/secret.txt" "$T/data/link"
"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Component.Add\",\"parameters\":{\"bytes\":\"$(base64 -w0 "$G/hello-0.2.12.component.wasm")\"}}" \
	>"$T/add.out" 2>&1
SHA=$(sed -n 's/.*"sha256":"\([0-9a-f]*\)".*/\1/p' "$T/add.out")
check "hello-0.2.12 added" test ${#SHA} -eq 64
create hello "$SHA" "{\"env\":{\"GREETING\":\"hi from the config\"},\"args\":[\"0\",\"two words\"],\"preopens\":[\"$T/data::/data\"]}"
check "service with env, args, preopens created" has "$T/create-hello" \
	'"state":"running"'
HOSTEL_LEAK=visible-to-the-daemon-only
export HOSTEL_LEAK
callout h1 hello "$RUN()"
check "calling wasi:cli/run through the daemon returns ok" \
	eq "$(cat "$T/h1.out")/$rc" "ok/0"
guest hello >"$T/hello.guest"
check "argv is the service name then config.args (argc=3)" \
	has "$T/hello.guest" "stdout hello from C, argc=3"
check "config.args reach the guest" has "$T/hello.guest" \
	"stdout arg[2]=two words"
check "config.env reaches the guest" has "$T/hello.guest" \
	"stdout GREETING=hi from the config"
check "the preopen is readable at its guest path" has "$T/hello.guest" \
	"stdout open /data/input.txt: ok: from the host"
check "the guest wrote into the preopen on the host" \
	has "$T/data/output.txt" "written by the guest"
check "stderr is a guest.stderr event" has "$T/hello.guest" \
	"stderr this goes to stderr"
callout h2 hello "$RUN()"
check "a command's run can be called again on the same store" \
	eq "$(cat "$T/h2.out")/$(guest hello | grep -c 'argc=3')" "ok/2"

# The same through the client: hostel deploy --env/--arg/--dir.
H deploy "$G/hello-0.2.12.component.wasm" --name hello-d \
	--env GREETING=via-deploy --env EMPTY= --arg 0 --arg "two words" \
	--dir "$T/data::/data" >"$T/deploy-d.out" 2>&1
check "hostel deploy --env --arg --dir (exit $?)" \
	has "$T/deploy-d.out" "deployed hello-d"
H ps --json >"$T/ps-d.json" 2>&1
check "the options become the service's config" \
	has "$T/ps-d.json" '"env":{"GREETING":"via-deploy","EMPTY":""},"args":["0","two words"]'
callout hd hello-d "$RUN()"
guest hello-d >"$T/hello-d.guest"
check "deploy's --arg and --env reach the guest" \
	eq "$(cat "$T/hd.out")/$(grep -c 'argc=3\|arg\[2\]=two words\|GREETING=via-deploy' "$T/hello-d.guest")" \
	"ok/3"
check "deploy's --dir is the guest's preopen" has "$T/hello-d.guest" \
	"stdout open /data/input.txt: ok: from the host"
H deploy "$G/hello-0.2.12.component.wasm" --name bad-d --env NOEQUALS \
	>"$T/deploy-bad.out" 2>&1
check "deploy --env without = is a usage error (exit $?)" \
	has "$T/deploy-bad.out" "expected NAME=VALUE"
H deploy "$G/hello-0.2.12.component.wasm" --name bad-d2 --dir rel/dir \
	>"$T/deploy-bad2.out" 2>&1
check "deploy --dir with a relative path is refused by the daemon" \
	has "$T/deploy-bad2.out" "absolute"

"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Component.Add\",\"parameters\":{\"bytes\":\"$(base64 -w0 "$G/hello-0.2.0.component.wasm")\"}}" \
	>"$T/add0.out" 2>&1
SHA0=$(sed -n 's/.*"sha256":"\([0-9a-f]*\)".*/\1/p' "$T/add0.out")
create hello0 "$SHA0" "{\"env\":{\"GREETING\":\"zero\"},\"preopens\":[\"$T/data::/data\"]}"
callout h3 hello0 'wasi:cli/run@0.2.0#run()'
check "the same command with wasi:*@0.2.0 imports runs too" \
	eq "$(cat "$T/h3.out")/$(guest hello0 | grep -c 'GREETING=zero')" "ok/1"

# ---- escapes -----------------------------------------------------------------
create esc1 "$SHA" "{\"args\":[\"open\",\"/data/../outside/secret.txt\"],\"preopens\":[\"$T/data::/data\"]}"
create esc2 "$SHA" "{\"args\":[\"open\",\"/data/link\"],\"preopens\":[\"$T/data::/data\"]}"
create esc3 "$SHA" "{\"args\":[\"open\",\"$T/outside/secret.txt\"],\"preopens\":[\"$T/data::/data\"]}"
create esc4 "$SHA" "{\"args\":[\"open\",\"/proc/self/environ\"],\"preopens\":[\"$T/data::/data\"]}"
for e in esc1 esc2 esc3 esc4; do
	H call "$e" "$RUN()" >/dev/null 2>&1
done
check "'..' above the preopen is refused (not permitted)" \
	eq "$(guest esc1)" "stdout open /data/../outside/secret.txt: error Operation not permitted"
check "a symlink leading out of the preopen is refused" \
	eq "$(guest esc2)" "stdout open /data/link: error Operation not permitted"
check "an absolute host path is not reachable" \
	test "$(guest esc3 | grep -c ': error ')" -eq 1
check "nor is /proc" test "$(guest esc4 | grep -c ': error ')" -eq 1
H logs --json >"$T/all.json"
check "no secret and no daemon environment reached any guest" \
	test "$(grep -c 'SECRET-OUTSIDE\|HOSTEL_LEAK\|visible-to-the-daemon' "$T/all.json")" -eq 0

# ---- configuration errors ----------------------------------------------------
create bad1 "$SHA" '{"preopens":["relative/dir"]}'
check "a relative preopen is refused: InvalidConfig" \
	has "$T/create-bad1" "io.hostel.Service.InvalidConfig"
create bad2 "$SHA" '{"env":{"A":1}}'
check "a non-string env value is refused: InvalidConfig" \
	has "$T/create-bad2" "io.hostel.Service.InvalidConfig"
create bad3 "$SHA" '{"args":"x"}'
check "args that are not a list are refused: InvalidConfig" \
	has "$T/create-bad3" "io.hostel.Service.InvalidConfig"
create bad4 "$SHA" "{\"preopens\":[\"$T/no-such-dir::/x\"]}"
check "a missing preopen directory fails the start (kind config)" \
	eq "$(grep -c '"kind":"config"' "$T/create-bad4")/$(grep -c StartFailed "$T/create-bad4")" "1/1"

# ---- a user's service may only preopen that user's directories ---------------
if test "$(id -u)" -eq 0 && command -v setpriv >/dev/null 2>&1; then
	mkdir -p "$T/mine"
	echo "the user's own file" >"$T/mine/f.txt"
	chown -R "$USR" "$T/mine"
	# as_user NAME CONFIG: Service.Create as uid USR, reply in create-NAME
	as_user() {
		setpriv --reuid="$USR" --regid="$GRP" --clear-groups \
			"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Service.Create\",\"parameters\":{\"name\":\"$1\",\"component\":\"$SHA\",\"config\":$2}}" \
			>"$T/create-$1" 2>&1
	}
	as_user theirs "{\"args\":[\"open\",\"/data/input.txt\"],\"preopens\":[\"$T/data::/data\"]}"
	check "a user's service cannot preopen a directory of root's" \
		grep -q "StartFailed.*owned by uid 0, not by the service's owner (uid $USR)\|owned by uid 0, not by the service's owner (uid $USR).*StartFailed" "$T/create-theirs"
	as_user mine "{\"args\":[\"open\",\"/data/f.txt\"],\"preopens\":[\"$T/mine::/data\"]}"
	check "but can preopen its own" has "$T/create-mine" '"state":"running"'
	setpriv --reuid="$USR" --regid="$GRP" --clear-groups \
		"$HOSTEL" --socket "$SOCK" call mine "$RUN()" >"$T/mine.out" 2>&1
	check "and its guest reads the user's file" \
		eq "$(cat "$T/mine.out")/$(guest mine)" \
		"ok/stdout open /data/f.txt: ok: the user's own file"
else
	ok "# SKIP preopen ownership: needs root and setpriv"
fi

# ---- wasi:cli/exit ------------------------------------------------------------
create exit3 "$SHA" '{"args":["3"]}'
callout x1 exit3 "$RUN()"
check "exit(3) traps the call: CallTrapped" \
	eq "$rc/$(grep -c 'CallTrapped.*wasi:cli/exit' "$T/x1.err")" "1/1"
callout x2 exit3 "$RUN()"
check "and poisons the store: the next call gets ServicePoisoned" \
	has "$T/x2.err" "ServicePoisoned"
callout x3 exit3 "$RUN()"
check "then a fresh store runs the command again" \
	test "$(guest exit3 | grep -c 'argc=2')" -eq 2

# ---- restart: the WASI config survives -------------------------------------------
kill -TERM "$DPID"
wait "$DPID"
"$HOSTELD" --foreground --config "$CONF" --socket "$SOCK" \
	--state-dir "$STATE" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 alive || not_ok "hosteld restarts"
rm -f "$T/data/output.txt"
callout r1 hello "$RUN()"
check "after a restart hello runs with its preopen again" \
	eq "$(cat "$T/r1.out")/$(cat "$T/data/output.txt")" \
	"ok/written by the guest"
check "hosteld is still alive" alive
kill -TERM "$DPID"
wait "$DPID"
check "hosteld exits 0" test $? -eq 0

tap_finish "$LOG"
