#!/bin/bash
# The in-container half of the policy tracer (tracer.ts): runs a batch of commands, each the way
# the sandbox runs it (bash --noprofile --norc -c, stdin /dev/null, only the sandbox's
# environment, killed at the time limit) under strace, in one `docker exec` for the whole batch.
#
# Usage: driver.sh <batch> <out> <seconds> <syscalls> <NAME=value>...
#   batch     NUL-separated commands (a read-only mount)
#   out       folder for the results (a bind mount the host reads; never /workspace or /tmp)
#   seconds   per-command time limit
#   syscalls  strace's -e trace= list
#   NAME=...  the command's whole environment; its TMPDIR is the command's scratch folder, which
#             the driver empties after each command as the sandbox's wrapper removes it (and
#             which snapshots leave out)
# strace runs detached in its own process group (-DD): the command is this script's child, so
# `timeout` waits for the shell alone, as in the sandbox, and the processes it left behind are
# killed right after it ends (a traced `tail -f x &` would otherwise hold strace open); strace then
# sees its last tracee go and finishes its file. strace keeps this script's environment (with the
# marker below); `env -i` gives the command exactly the sandbox's, so the trace starts with the
# execs of env and of that bash, which the parser skips.
# For the i-th command it leaves in <out>:
#   i.trace         strace -f -y output (pid first; fds followed by <path>)
#   i.status        "code=<exit> base=<k> us=<microseconds>"
#   i.meta, i.sum   the snapshot after the command, only when it differs from base k
#   i.out, i.err    the first 2,000 characters the command printed
#   base-k.meta/sum the snapshot of /workspace, /tmp and /dev/shm after the k-th restore
# A snapshot is find's "type mode size mtime path linktarget" (NUL-separated fields) in .meta and
# md5sum -z of every regular file in .sum; atime is left out on purpose (reading changes it).
set -u
batch=$1 out=$2 limit=$3 calls=$4
shift 4
envs=("$@")
scratch=''
for e in "${envs[@]}"; do [[ $e == TMPDIR=* ]] && scratch=${e#TMPDIR=}; done
fixture=/run/trace-in/fixture
cap=/run/trace-cap
roots=(/workspace /tmp /dev/shm)

snap() {
  find "${roots[@]}" -path "${scratch:-/nonexistent}" -prune -o \
    -fprintf "$1.meta" '%y\0%m\0%s\0%T@\0%p\0%l\0' -type f -exec md5sum -z -- {} + >"$1.sum" 2>/dev/null
}

# The current baseline, held as one string per file, to compare snapshots with builtins (a cmp
# per command costs more than the rest of the bookkeeping). Fields are joined with \x01, which no
# fixture path holds; the field order (path between numbers) keeps a joined record unambiguous.
remember() {
  local IFS=$'\x01' m s
  mapfile -d '' m <"$1.meta"
  mapfile -d '' s <"$1.sum"
  base_snap="${m[*]}"$'\x02'"${s[*]}"
}

same() {
  local IFS=$'\x01' m s
  mapfile -d '' m <"$1.meta"
  mapfile -d '' s <"$1.sum"
  [[ "${m[*]}"$'\x02'"${s[*]}" == "$base_snap" ]]
}

# Back to the fixture: permissions first (a command may have made a folder unreadable).
restore() {
  chmod -R u+rwX "${roots[@]}" 2>/dev/null
  find "${roots[@]}" -mindepth 1 -delete 2>/dev/null
  cp -a "$fixture/." /workspace/
  [[ -n $scratch ]] && mkdir -p "$scratch"
}

# Every process the command left behind (`tail -f x &`, setsid) dies before the snapshot. The
# container's own processes (its keep-alive, this driver) carry HARNESS_TRACE_KEEP in their
# environment; commands start from `env -i`, so theirs never has it. Builtins only: no process
# of ours appears while looking.
kill_leftovers() {
  local p e keep round
  for round in 1 2 3; do
    local killed=0
    for p in /proc/[0-9]*; do
      p=${p#/proc/}
      [[ $p == 1 || $p == "$$" ]] && continue
      keep=0
      while IFS= read -r -d '' e; do
        [[ $e == HARNESS_TRACE_KEEP=1 ]] && { keep=1; break; }
      done 2>/dev/null <"/proc/$p/environ"
      [[ $keep == 1 ]] && continue
      kill -9 "$p" 2>/dev/null && killed=1
    done
    [[ $killed == 0 ]] && return
  done
}

# strace writes the end of its file once its last tracee is gone: wait for it (polling /proc with
# builtins; `read -t` on a pipe nobody writes is a sleep without a process).
exec {nap}<> <(:)
wait_for_strace() {
  local p c n
  for ((n = 0; n < 2000; n++)); do
    c=''
    for p in /proc/[0-9]*; do
      [[ $p == "/proc/$$" ]] && continue
      read -r c 2>/dev/null <"$p/comm" && [[ $c == strace ]] && break
      c=''
    done
    [[ -z $c ]] && return
    read -r -t 0.002 -u "$nap"
  done
}

# The first characters of a capture, copied out with builtins (no process per command).
head_of() {
  local s=''
  IFS= read -r -d '' -N 2000 s <"$1" 2>/dev/null
  printf '%s' "$s" >"$2"
}

mkdir -p "$out"
kill_leftovers
restore
k=0
snap "$out/base-$k"
remember "$out/base-$k"
i=0
while IFS= read -r -d '' cmd; do
  : >"$cap/out"
  : >"$cap/err"
  t0=${EPOCHREALTIME/./}
  timeout -s KILL "$limit" strace -DD -f -qq -y -s 65535 --seccomp-bpf -e signal=none -e trace="$calls" -o "$out/$i.trace" \
    env -i "${envs[@]}" bash --noprofile --norc -c "$cmd" </dev/null >"$cap/out" 2>"$cap/err"
  code=$?
  t1=${EPOCHREALTIME/./}
  kill_leftovers
  wait_for_strace
  [[ -n $scratch ]] && find "$scratch" -mindepth 1 -delete 2>/dev/null
  snap "$out/$i"
  changed=1
  if same "$out/$i"; then
    changed=0
    rm -f "$out/$i.meta" "$out/$i.sum"
  fi
  head_of "$cap/out" "$out/$i.out"
  head_of "$cap/err" "$out/$i.err"
  printf 'code=%s base=%s us=%s\n' "$code" "$k" "$((t1 - t0))" >"$out/$i.status"
  if [[ $changed == 1 ]]; then
    restore
    k=$((k + 1))
    snap "$out/base-$k"
    remember "$out/base-$k"
  fi
  i=$((i + 1))
done <"$batch"
printf 'done %s\n' "$i" >"$out/done"
