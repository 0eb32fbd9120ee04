#!/usr/bin/env bash
# Records docs/terminal-session.txt: `aerial generate --sandbox` typed into a
# clean bash inside tmux, with the pane captured mid-spinner and at the end.
# Needs tmux and a built CLI (npm run build). Uses its own tmux socket.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
work="$(mktemp -d)"
tmux_() { tmux -L aerial-record "$@"; }
trap 'tmux_ kill-server 2>/dev/null || true; rm -rf "$work" 2>/dev/null || true' EXIT

mkdir -p "$work/bin" "$work/config"
ln -s "$repo/bin/aerial.js" "$work/bin/aerial"
node_dir="$(dirname "$(command -v node)")"
tmux_ new-session -d -s rec -x 110 -y 8 -c "$work" \
  "env -i HOME=$work HISTFILE=/dev/null TERM=xterm-256color LANG=C.UTF-8 PATH=$work/bin:$node_dir:/usr/bin:/bin AERIAL_CONFIG_DIR=$work/config PS1='\$ ' bash --norc --noprofile"
sleep 0.5
tmux_ send-keys -t rec 'aerial generate --sandbox --lat 48.8584 --lng 2.2945 --resolution UHD --zoom High --bearing NE -o eiffel.jpg' Enter
sleep 1.5
mid="$(tmux_ capture-pane -p -t rec)"
for _ in $(seq 1 120); do
  sleep 0.25
  tmux_ capture-pane -p -t rec | grep -qx '\$ \?' && break
done
end="$(tmux_ capture-pane -p -t rec)"

version="$(node "$repo/bin/aerial.js" --version)"
{
  echo 'Recorded terminal session: `aerial generate --sandbox` on a real TTY.'
  echo
  echo "Made with tmux (pane 110x8, TERM=xterm-256color, clean bash with PS1='\$ ',"
  echo "${version}) by scripts/record-terminal-session.sh: the command is typed"
  echo 'with `tmux send-keys`, and `tmux capture-pane -p` (plain text, colours dropped)'
  echo 'is taken 1.5 s after Enter and again once the prompt is back. Nothing below is'
  echo 'edited except that trailing empty lines of the pane are left out.'
  echo
  echo '--- capture 1: 1.5 s after Enter (spinner on stderr) -----------------------'
  printf '%s\n' "$mid" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
  echo
  echo '--- capture 2: after the command finished ----------------------------------'
  printf '%s\n' "$end" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
} > docs/terminal-session.txt
echo "wrote docs/terminal-session.txt"
