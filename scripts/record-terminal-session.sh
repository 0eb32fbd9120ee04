#!/usr/bin/env bash
# Records docs/terminal-session.txt (or the file given): `aerial generate
# --sandbox` typed into a clean bash inside tmux, with the pane captured
# mid-spinner and at the end. Needs tmux and a built CLI (npm run build). Uses
# a tmux server of its own. test/e2e/terminal-session.test.ts records it again
# and holds the committed file to what the CLI prints now.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
out="${1:-docs/terminal-session.txt}"
case "$out" in /*) ;; *) out="$repo/$out" ;; esac
work="$(mktemp -d)"
socket="$work/tmux.sock"
tmux_() { tmux -S "$socket" -f /dev/null "$@"; }
trap 'tmux_ kill-server 2>/dev/null || true; rm -rf "$work" 2>/dev/null || true' EXIT

mkdir -p "$work/home/bin" "$work/home/config"
home="$work/home"
ln -s "$repo/bin/aerial.js" "$home/bin/aerial"
node_dir="$(dirname "$(command -v node)")"
tmux_ new-session -d -s rec -x 110 -y 8 -c "$home" \
  "env -i HOME=$home HISTFILE=/dev/null TERM=xterm-256color LANG=C.UTF-8 PATH=$home/bin:$node_dir:/usr/bin:/bin AERIAL_CONFIG_DIR=$home/config PS1='\$ ' bash --norc --noprofile"
sleep 0.5
tmux_ send-keys -t rec 'aerial generate --sandbox --lat 48.8584 --lng 2.2945 --resolution UHD --zoom High --bearing NE -o eiffel.jpg' Enter
# The first capture as soon as the spinner shows (a fast machine renders a UHD frame in well under a second).
mid=""
for _ in $(seq 1 600); do
  sleep 0.1
  mid="$(tmux_ capture-pane -p -t rec)"
  printf '%s\n' "$mid" | grep -q 'Generating UHD image' && break
done
for _ in $(seq 1 240); do
  sleep 0.25
  tmux_ capture-pane -p -t rec | grep -qx '\$ \?' && break
done
end="$(tmux_ capture-pane -p -t rec)"

# The pane without its trailing empty lines, and the home directory (a temp dir) as ~.
pane() { printf '%s\n' "$1" | sed -e "s#$home#~#g" -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
version="$(node "$repo/bin/aerial.js" --version)"
{
  echo 'Recorded terminal session: `aerial generate --sandbox` on a real TTY.'
  echo
  echo "Made with tmux (pane 110x8, TERM=xterm-256color, clean bash with PS1='\$ ',"
  echo "${version}) by scripts/record-terminal-session.sh: the command is typed"
  echo 'with `tmux send-keys`, and `tmux capture-pane -p` (plain text, colours dropped)'
  echo 'is taken once the spinner shows and again once the prompt is back. Nothing below is'
  echo 'edited except that trailing empty lines of the pane are left out and the home'
  echo 'directory, a temporary one, is written ~.'
  echo
  echo '--- capture 1: while the spinner runs (on stderr) --------------------------'
  pane "$mid"
  echo
  echo '--- capture 2: after the command finished ----------------------------------'
  pane "$end"
} > "$out"
echo "wrote $out"
