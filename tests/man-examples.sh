#!/bin/sh
# man-examples.sh - every example of the manual pages runs (issue 20
# point 7).  The examples are read from the pages themselves (the
# .nf/.fi blocks), so a page that changes is tested as it is:
#  - hostel(1): each command line that begins with "hostel " (not the
#    sample output, "hostel call: ...") runs against a hosteld with the
#    demo counter deployed as "counter" and must exit 0; the call id of
#    `hostel history ID` is a real one, `hostel logs -f` follows until it
#    is stopped, paths under /var/lib go to a temporary folder;
#  - hostel-protocol(7): the command examples (hostel varlink, printf |
#    socat) run against the same daemon's socket and print the reply;
#    each request of the transcripts ("-> {...}") is sent and its reply
#    conforms to the IDL (tests/idl-conform) and is the one shown (a
#    reply, or the error named);
#  - hostel.conf(5) and hosteld(8): each example file passes hosteld
#    --check-config (the services.d example with its component path
#    pointing at the counter).
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 77 without
# socat, 99 when the programs are not built.  KEEP=1 keeps the
# temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=man-examples
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
CONFORM=$B/tests/idl-conform
need_programs "$HOSTELD" "$HOSTEL" "$MK" "$CONFORM"
command -v socat >/dev/null 2>&1 || {
	echo "$NAME: socat is not installed (hostel-protocol(7)'s example)" >&2
	exit 77
}

tap_tmpdir
SOCK=$T/h.sock
LOG=$T/hosteld.log
mkdir -p "$T/bin" "$T/var"
"$MK" counter "$T/counter.wasm" || exit 99
# what hostel(1)'s examples name: files in the folder they run in
mkdir -p "$T/cwd"
head -c 100000 /dev/urandom >"$T/cwd/photo.jpg"
printf 'hello, file\n' >"$T/cwd/big.txt"
printf '{"a": 1, "b": 2}\n' >"$T/cwd/args.json"

# blocks PAGE [SECTION|!SECTION]: the lines of the page's .nf/.fi
# blocks (only in SECTION, or all but SECTION, when given), roff escapes
# undone
blocks() {
	awk -v sec="${2:-}" '
		/^\.SH / { in_sec = (sec == "" || $0 == ".SH " sec ||
			(substr(sec, 1, 1) == "!" && $0 != ".SH " substr(sec, 2))) }
		/^\.nf/ { p = in_sec; next }
		/^\.fi/ { if (p) print ""; p = 0 }
		p' "$1" |
		sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' \
			-e 's/\\(ga/`/g' -e 's/\\&//g' -e 's/\\e/\\/g'
}

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
alive() {
	"$HOSTEL" --socket "$SOCK" status >/dev/null 2>&1
}
check "hosteld starts" wait_for 10 alive || {
	cat "$LOG" >&2
	exit 1
}
# the services hostel(1)'s examples call besides the counter
"$HOSTEL" --socket "$SOCK" deploy "$S/tests/guests/values/values.wasm" --name values >/dev/null 2>&1
"$HOSTEL" --socket "$SOCK" deploy "$S/tests/guests/hostile/hostile.wasm" --name worker >/dev/null 2>&1
# the examples' `hostel` talks to this daemon
printf '#!/bin/sh\nexec "%s" --socket "%s" "$@"\n' "$HOSTEL" "$SOCK" >"$T/bin/hostel"
chmod +x "$T/bin/hostel"
export PATH="$T/bin:$PATH"

# ---- hostel(1) ----------------------------------------------------------------------
# EXAMPLES first: it deploys the counter the others call
{ blocks "$S/man/hostel.1" EXAMPLES; blocks "$S/man/hostel.1" '!EXAMPLES'; } | awk '
	/^hostel [a-z]+:/ { next }       # sample output
	/^hostel / || /\| hostel / || cont { line = line (cont ? " " : "") $0
		cont = ($0 ~ /&&[ ]*$/ || $0 ~ /\\$/)
		if (!cont) { print line; line = "" } }' >"$T/hostel1.cmds"
cid() {
	hostel varlink io.hostel.History.Read '{"service":"counter","kinds":["call.started"],"limit":1}' |
		grep -o '"call":"[^"]*"' | head -n 1 | cut -d'"' -f4
}
n1=0
while IFS= read -r cmd; do
	# a multi-line command was joined with newlines escaped by awk
	cmd=$(printf '%s' "$cmd" | sed "s|counter\.wasm|$T/counter.wasm|g; s|/var/lib/|$T/var/|g")
	case $cmd in
	"hostel history "[0-9a-f]*-*) cmd="hostel history $(cid)" ;;
	esac
	n1=$((n1 + 1))
	mkdir -p "$T/var/node-exporter"
	case $cmd in
	*"logs -f"*)
		timeout 2 sh -c "$cmd" >"$T/ex.out" 2>&1
		rc=$?
		check "hostel(1): $cmd (follows until stopped: $rc)" test "$rc" -eq 124
		;;
	*--cancel-on-timeout*)
		(cd "$T/cwd" && sh -c "$cmd") >"$T/ex.out" 2>&1
		rc=$?
		check "hostel(1): $cmd (times out, cancels: exit $rc)" \
			test "$rc" -eq 7 -a -n "$(grep "cancelled at the client's request" "$T/ex.out")"
		;;
	*)
		(cd "$T/cwd" && sh -c "$cmd") >"$T/ex.out" 2>&1
		rc=$?
		check "hostel(1): $cmd (exit $rc)" test "$rc" -eq 0
		test "$rc" -eq 0 || sed 's/^/# /' "$T/ex.out"
		;;
	esac
done <"$T/hostel1.cmds"
check "hostel(1) has examples to run ($n1)" test "$n1" -ge 13
check "the --result-file example wrote the result" \
	test "$(cat "$T/cwd/out.txt" 2>/dev/null)" = "hello, file"
check "the node-exporter example wrote its file" \
	test -s "$T/var/node-exporter/hostel.prom"

# ---- hostel-protocol(7) ------------------------------------------------------------
PROTO=$S/man/hostel-protocol.7
blocks "$PROTO" | awk '/^hostel varlink / { print }' >"$T/proto.cmds"
while IFS= read -r cmd; do
	sh -c "$cmd" >"$T/ex.out" 2>&1
	rc=$?
	check "hostel-protocol(7): $cmd (exit $rc)" \
		test "$rc" -eq 0 -a -n "$(grep '"version"' "$T/ex.out")"
done <"$T/proto.cmds"
check "hostel-protocol(7) has a hostel varlink example" test -s "$T/proto.cmds"
# printf ... | socat - UNIX-CONNECT:PATH, on this daemon's socket
blocks "$PROTO" | awk '/^printf / { l = $0; getline; print l " " $0 }' |
	sed "s|UNIX-CONNECT:[^ ]*|UNIX-CONNECT:$SOCK|" >"$T/socat.cmds"
while IFS= read -r cmd; do
	sh -c "$cmd" | tr -d '\000' >"$T/ex.out" 2>&1
	check "hostel-protocol(7): the socat example answers" \
		grep -q '"parameters":{"version"' "$T/ex.out"
done <"$T/socat.cmds"
check "hostel-protocol(7) has a socat example" test -s "$T/socat.cmds"

# the transcripts: "-> REQUEST\0" (maybe over lines), then the first
# "<- REPLY" after it, as "REQUEST<tab>REPLY" (the reply's first line)
blocks "$PROTO" | awk '
	/^-> / { req = substr($0, 4); open = !(req ~ /\\0$/); want = 1; next }
	open { req = req " " $0; open = !($0 ~ /\\0$/); next }
	/^<- / && want { rep = substr($0, 4); ropen = !($0 ~ /\\0$/)
		if (!ropen) { sub(/\\0$/, "", req); print req "\t" rep; want = 0 }; next }
	ropen { rep = rep $0; ropen = !($0 ~ /\\0$/)
		if (!ropen) { sub(/\\0$/, "", req); print req "\t" rep; want = 0 } }' \
	>"$T/requests"
# the follower's transcript reads from seq 40 and sees a daemon.reloaded
i=0
while [ "$i" -lt 25 ]; do
	hostel call counter 'inc()' >/dev/null 2>&1
	i=$((i + 1))
done
nreq=0
while IFS='	' read -r req shown; do
	nreq=$((nreq + 1))
	err=$(printf '%s' "$shown" | sed -n 's/.*"error":"\([^"]*\)".*/\1/p')
	# a request shown to fail need not conform itself
	bad=${err:+#bad }
	case $req in
	*'"more":true'*)
		# a follower: its replies while hosteld reloads (SIGHUP), as
		# the transcript shows
		"$CONFORM" "$SOCK" "$bad$req" >"$T/conf.out" 2>&1 &
		FPID=$!
		sent() { grep -q ' call conforms' "$T/conf.out"; }
		replied() { grep -q ' reply.* conforms' "$T/conf.out"; }
		wait_for $((5 * ${HOSTEL_SLOW:-1})) sent
		sleep 0.3
		kill -HUP "$DPID"
		wait_for $((10 * ${HOSTEL_SLOW:-1})) replied
		kill "$FPID" 2>/dev/null
		wait "$FPID" 2>/dev/null
		;;
	*) "$CONFORM" "$SOCK" "$bad$req" >"$T/conf.out" 2>&1 ;;
	esac
	check "transcript request $nreq conforms and its replies too: $req" \
		test -z "$(grep '^not ok' "$T/conf.out")" -a \
		-n "$(grep '^ok' "$T/conf.out")"
	if test -n "$err"; then
		check "and answers $err as shown" grep -q "^ok .* $err error of" "$T/conf.out"
	else
		check "and answers a reply as shown" grep -q " reply.* conforms" "$T/conf.out"
	fi
done <"$T/requests"
check "the transcripts have requests ($nreq)" test "$nreq" -ge 3

# ---- hostel.conf(5), hosteld(8) ---------------------------------------------------
# each example file: from its "# /etc/hostel/..." line to the end of
# its paragraph
mkdir -p "$T/ex"
nconf=0
for page in hostel.conf.5 hosteld.8; do
	blocks "$S/man/$page" | awk -v dir="$T/ex" -v page="$page" '
		/^# \/etc\/hostel\// { n++; f = dir "/" page "." n "." (index($0, "services.d") ? "svc" : "conf") }
		/^$/ { f = "" }
		f { print > f }'
done
for f in "$T"/ex/*.conf; do
	test -e "$f" || continue
	nconf=$((nconf + 1))
	d=$T/check.$nconf
	mkdir -p "$d/services.d"
	# the example's own socket and state-dir are left as they are
	cp "$f" "$d/hostel.conf"
	"$HOSTELD" --check-config --config "$d/hostel.conf" >"$T/check.out" 2>&1
	rc=$?
	check "$(basename "$f"): hosteld --check-config (exit $rc)" \
		test "$rc" -eq 0 -a -n "$(grep 'configuration ok' "$T/check.out")"
	test "$rc" -eq 0 || sed 's/^/# /' "$T/check.out"
done
for f in "$T"/ex/*.svc; do
	test -e "$f" || continue
	nconf=$((nconf + 1))
	d=$T/check.$nconf
	mkdir -p "$d/services.d"
	: >"$d/hostel.conf"
	sed "s|^component = .*|component = $T/counter.wasm|; s|^preopen = /srv/counter|preopen = $T|" \
		"$f" >"$d/services.d/counter.conf"
	"$HOSTELD" --check-config --config "$d/hostel.conf" >"$T/check.out" 2>&1
	rc=$?
	check "$(basename "$f") (services.d/counter.conf): --check-config (exit $rc)" \
		test "$rc" -eq 0 -a -n "$(grep 'counter.conf: ok' "$T/check.out")"
	test "$rc" -eq 0 || sed 's/^/# /' "$T/check.out"
done
check "the configuration pages have example files ($nconf)" test "$nconf" -ge 3

kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$LOG"
