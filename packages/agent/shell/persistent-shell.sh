# The agent's persistent shell, started by @envgen/agent as
#   bash --noprofile --norc -c "<this script>" bash DIR NONCE START_DIR
# DIR holds three FIFOs shared with the host: `in` (commands, each NUL-terminated), `out`
# (stdout and stderr of everything) and `ctl` (kill requests at a timeout), and, while a
# timed-out command is being stopped, the file `abort`. Each command is
# eval'ed in this shell, so cd, variables and functions persist; its stdin is /dev/null so
# it cannot eat the next command. A marker line after it carries its exit code and $PWD.
__envgen_dir=$1
__envgen_nonce=$2
__envgen_start=$3
exec 0<"$__envgen_dir/in" 1>"$__envgen_dir/out" 2>&1

# The watchdog: on each line of ctl, SIGKILL every descendant of the shell but itself
# (found through /proc, so grandchildren and pipelines go too). Builtins only, no forks.
(
  exec 0<"$__envgen_dir/ctl" 1>/dev/null 2>&1
  while IFS= read -r __envgen_req; do
    declare -A __envgen_kids=()
    for __envgen_f in /proc/[0-9]*/stat; do
      IFS= read -r __envgen_s < "$__envgen_f" || continue
      # Fields after the command name (which may hold spaces and parentheses): state ppid ...
      set -f
      __envgen_t=(${__envgen_s##*) })
      set +f
      __envgen_p=${__envgen_f#/proc/}
      __envgen_kids[${__envgen_t[1]}]+=" ${__envgen_p%/stat}"
    done
    __envgen_queue=(${__envgen_kids[$$]})
    __envgen_doomed=()
    while ((${#__envgen_queue[@]})); do
      __envgen_p=${__envgen_queue[0]}
      __envgen_queue=("${__envgen_queue[@]:1}")
      [ "$__envgen_p" = "$BASHPID" ] && continue
      __envgen_doomed+=("$__envgen_p")
      __envgen_queue+=(${__envgen_kids[$__envgen_p]})
    done
    ((${#__envgen_doomed[@]})) && kill -KILL "${__envgen_doomed[@]}"
    unset __envgen_kids
  done
) &

# Ctrl-C for a non-interactive shell: once the host has created DIR/abort (at a timeout),
# every further simple command of the running one is skipped (extdebug: a failing DEBUG
# trap skips the command; subshells and functions inherit it), so a list such as
# `sleep 60; echo done` stops at the killed sleep. Our own bookkeeping always runs.
shopt -s extdebug
trap '[[ -z $__envgen_busy || ! -e $__envgen_dir/abort || $BASH_COMMAND == __envgen_* ]]' DEBUG

cd -- "$__envgen_start" 2>/dev/null
set --
builtin printf '__ENVGEN_READY_%s\n' "$__envgen_nonce"
while IFS= read -r -d '' __envgen_cmd; do
  __envgen_busy=1
  eval "$__envgen_cmd" </dev/null
  __envgen_rc=$?
  __envgen_busy=
  builtin printf '\n__ENVGEN_DONE_%s %s %s\n' "$__envgen_nonce" "$__envgen_rc" "$PWD"
done
