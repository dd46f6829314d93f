# Progress lines for tools/generate.sh and tools/test.sh (sourced, not run):
# every line they print about their own steps starts with "== [time since
# the script started]", and a step that prints nothing for a minute says so
# (quiet: 55 s since the last such line).
progress_t0=$SECONDS
progress_last=$SECONDS
# dur SECONDS: 3m07s.
dur() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# step TEXT: "== [3m07s] TEXT".
step() {
	printf '== [%s] %s\n' "$(dur $((SECONDS - progress_t0)))" "$*"
	progress_last=$SECONDS
}
# quiet: true when no step line has been printed for 55 s.
quiet() { [ $((SECONDS - progress_last)) -ge 55 ]; }
# watch LABEL CMD...: runs CMD (its output passes through) and, while it
# runs, prints "still LABEL (time)" whenever it has been quiet; returns
# CMD's status.
watch() {
	local label=$1 pid began=$SECONDS rc=0
	shift
	"$@" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if quiet; then step "still $label ($(dur $((SECONDS - began))))"; fi
	done
	wait "$pid" || rc=$?
	return $rc
}
