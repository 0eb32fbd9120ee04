# bash completion for aerial — generated from the aerial CLI by `aerial completion bash` (scripts/completions.mjs); do not edit.
# Install: mkdir -p ~/.local/share/bash-completion/completions && aerial completion bash > ~/.local/share/bash-completion/completions/aerial
#      or: echo 'source <(aerial completion bash)' >> ~/.bashrc

_aerial_child() {
  case "$1 $2" in
    "aerial generate") echo generate ;;
    "aerial generate-async") echo generate-async ;;
    "aerial batch") echo batch ;;
    "aerial list"|"aerial ls") echo list ;;
    "aerial get") echo get ;;
    "aerial export") echo export ;;
    "aerial view"|"aerial show") echo view ;;
    "aerial delete"|"aerial rm") echo delete ;;
    "aerial init") echo init ;;
    "aerial whoami") echo whoami ;;
    "aerial config") echo config ;;
    "aerial sandbox") echo sandbox ;;
    "aerial mcp") echo mcp ;;
    "aerial completion") echo completion ;;
    "aerial version") echo version ;;
    "aerial help") echo help ;;
    "aerial batch status") echo status ;;
    "aerial batch help") echo help ;;
    "aerial config set") echo set ;;
    "aerial config get") echo get ;;
    "aerial config unset") echo unset ;;
    "aerial config list"|"aerial config ls") echo list ;;
    "aerial config path") echo path ;;
    "aerial config help") echo help ;;
    "aerial sandbox reset") echo reset ;;
    "aerial sandbox help") echo help ;;
  esac
}

_aerial_words() {
  case "$1" in
    "aerial|0|"*) echo "generate generate-async batch list get export view delete init whoami config sandbox mcp completion version help" ;;
    "aerial batch|0|"*) echo "@file status help" ;;
    "aerial batch status|0|"*) echo @file ;;
    "aerial batch help|0|"*) echo "status" ;;
    "aerial get|0|"*) echo @free ;;
    "aerial export|0|"*) echo @file ;;
    "aerial view|0|"*) echo @free ;;
    "aerial view|"*) echo @free ;;
    "aerial delete|0|"*) echo @free ;;
    "aerial delete|"*) echo @free ;;
    "aerial config|0|"*) echo "set get unset list path help" ;;
    "aerial config set|0|"*) echo "api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview" ;;
    "aerial config set|1|defaults.resolution") echo "HD FHD UHD" ;;
    "aerial config set|1|defaults.zoom") echo "ExtraLow Low Medium High ExtraHigh" ;;
    "aerial config set|1|defaults.bearing") echo "North NorthEast East SouthEast South SouthWest West NorthWest" ;;
    "aerial config set|1|defaults.angle") echo "Low Medium High Top" ;;
    "aerial config set|1|defaults.weather") echo "Sunny Rainy Cloudy GoldenHour Snow" ;;
    "aerial config set|1|defaults.daytime") echo "Dusk Day Dawn Night" ;;
    "aerial config set|1|defaults.aspect-ratio") echo "Square Landscape Portrait Standard" ;;
    "aerial config set|1|defaults.epoch") echo "Nowadays Historical Ancient" ;;
    "aerial config set|1|defaults.include-context") echo "true false" ;;
    "aerial config set|1|defaults.include-surroundings") echo "true false" ;;
    "aerial config set|1|defaults.improve-output") echo "true false" ;;
    "aerial config set|1|defaults.save-image") echo "true false" ;;
    "aerial config set|1|defaults.preview") echo "true false" ;;
    "aerial config set|1|"*) echo @free ;;
    "aerial config get|0|"*) echo "api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview" ;;
    "aerial config unset|0|"*) echo "api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview" ;;
    "aerial config help|0|"*) echo "set get unset list path" ;;
    "aerial sandbox|0|"*) echo "reset help" ;;
    "aerial sandbox help|0|"*) echo "reset" ;;
    "aerial completion|0|"*) echo "bash zsh fish" ;;
    "aerial help|0|"*) echo "generate generate-async batch list get export view delete init whoami config sandbox mcp completion version" ;;
    "aerial help|1|batch") echo "status" ;;
    "aerial help|1|config") echo "set get unset list path" ;;
    "aerial help|1|sandbox") echo "reset" ;;
    "aerial help|1|"*) echo @free ;;
  esac
}

_aerial_options() {
  case "$1" in
    "aerial") echo "-V --version --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color -h --help" ;;
    "aerial generate") echo "--lat --lng --at --resolution --zoom --bearing --angle --weather --daytime --aspect-ratio --epoch --include-context --no-include-context --include-surroundings --no-include-surroundings --improve-output --no-improve-output --save-image --no-save-image --tag --prompt -o --output -f --force -i --interactive --no-metadata --preview --no-preview -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial generate-async") echo "--lat --lng --at --resolution --zoom --bearing --angle --weather --daytime --aspect-ratio --epoch --include-context --no-include-context --include-surroundings --no-include-surroundings --improve-output --no-improve-output --save-image --no-save-image --tag --prompt --callback-url --listen --listen-host --listen-port --public-url --timeout -o --output -f --force --no-metadata --preview --no-preview -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial batch") echo "--format --delimiter --output-template --concurrency --rate --max-retries --retry-delay --retry-unsafe --manifest --shard --dry-run -f --force --wait-for-lock --no-metadata --skip-invalid --progress-interval --async --listen-host --listen-port --public-url --callback-timeout --report --geojson --resolution --zoom --bearing --angle --weather --daytime --aspect-ratio --epoch --include-context --no-include-context --include-surroundings --no-include-surroundings --improve-output --no-improve-output --save-image --no-save-image --tag --prompt -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial batch status") echo "--manifest --format --delimiter --output-template --report --geojson --resolution --zoom --bearing --angle --weather --daytime --aspect-ratio --epoch --include-context --no-include-context --include-surroundings --no-include-surroundings --improve-output --no-improve-output --save-image --no-save-image --tag --prompt -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial batch help") echo "--api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial list") echo "--page --size --sort --all --since --until --resolution --near --within --limit -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial get") echo "-o --output -f --force --no-metadata -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial export") echo "--concurrency --max-retries --retry-delay --page-size --progress-interval --wait-for-lock --no-metadata --no-report --report-only -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial view") echo "--protocol --width -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial delete") echo "-y --yes -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial init") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial whoami") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config set") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config get") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config unset") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config list") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config path") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial config help") echo "--api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial sandbox") echo "--port --host --data-dir --credits --key --latency --fail-rate --rate-limit --drop-rate --webhook-fail --seed -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial sandbox reset") echo "--data-dir -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial sandbox help") echo "--api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial mcp") echo "--output-dir --allow-overwrite --read-only --tools --max-images -h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial completion") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial version") echo "-h --help --api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
    "aerial help") echo "--api-key --base-url --profile --json -q --quiet -v --verbose --sandbox --no-color" ;;
  esac
}

_aerial_values() {
  case "$1 $2" in
    "aerial --api-key") echo @free ;;
    "aerial --base-url") echo @free ;;
    "aerial --profile") echo @free ;;
    "aerial generate --lat") echo @free ;;
    "aerial generate --lng") echo @free ;;
    "aerial generate --at") echo @free ;;
    "aerial generate --resolution") echo "HD FHD UHD" ;;
    "aerial generate --zoom") echo "ExtraLow Low Medium High ExtraHigh" ;;
    "aerial generate --bearing") echo "North NorthEast East SouthEast South SouthWest West NorthWest" ;;
    "aerial generate --angle") echo "Low Medium High Top" ;;
    "aerial generate --weather") echo "Sunny Rainy Cloudy GoldenHour Snow" ;;
    "aerial generate --daytime") echo "Dusk Day Dawn Night" ;;
    "aerial generate --aspect-ratio") echo "Square Landscape Portrait Standard" ;;
    "aerial generate --epoch") echo "Nowadays Historical Ancient" ;;
    "aerial generate --tag") echo @free ;;
    "aerial generate --prompt") echo @free ;;
    "aerial generate -o"|"aerial generate --output") echo @file ;;
    "aerial generate --api-key") echo @free ;;
    "aerial generate --base-url") echo @free ;;
    "aerial generate --profile") echo @free ;;
    "aerial generate-async --lat") echo @free ;;
    "aerial generate-async --lng") echo @free ;;
    "aerial generate-async --at") echo @free ;;
    "aerial generate-async --resolution") echo "HD FHD UHD" ;;
    "aerial generate-async --zoom") echo "ExtraLow Low Medium High ExtraHigh" ;;
    "aerial generate-async --bearing") echo "North NorthEast East SouthEast South SouthWest West NorthWest" ;;
    "aerial generate-async --angle") echo "Low Medium High Top" ;;
    "aerial generate-async --weather") echo "Sunny Rainy Cloudy GoldenHour Snow" ;;
    "aerial generate-async --daytime") echo "Dusk Day Dawn Night" ;;
    "aerial generate-async --aspect-ratio") echo "Square Landscape Portrait Standard" ;;
    "aerial generate-async --epoch") echo "Nowadays Historical Ancient" ;;
    "aerial generate-async --tag") echo @free ;;
    "aerial generate-async --prompt") echo @free ;;
    "aerial generate-async --callback-url") echo @free ;;
    "aerial generate-async --listen-host") echo @free ;;
    "aerial generate-async --listen-port") echo @free ;;
    "aerial generate-async --public-url") echo @free ;;
    "aerial generate-async --timeout") echo @free ;;
    "aerial generate-async -o"|"aerial generate-async --output") echo @file ;;
    "aerial generate-async --api-key") echo @free ;;
    "aerial generate-async --base-url") echo @free ;;
    "aerial generate-async --profile") echo @free ;;
    "aerial batch --format") echo "csv jsonl json" ;;
    "aerial batch --delimiter") echo "comma semicolon tab pipe" ;;
    "aerial batch --output-template") echo @free ;;
    "aerial batch --concurrency") echo @free ;;
    "aerial batch --rate") echo @free ;;
    "aerial batch --max-retries") echo @free ;;
    "aerial batch --retry-delay") echo @free ;;
    "aerial batch --manifest") echo @file ;;
    "aerial batch --shard") echo @free ;;
    "aerial batch --progress-interval") echo @free ;;
    "aerial batch --listen-host") echo @free ;;
    "aerial batch --listen-port") echo @free ;;
    "aerial batch --public-url") echo @free ;;
    "aerial batch --callback-timeout") echo @free ;;
    "aerial batch --report") echo @file ;;
    "aerial batch --geojson") echo @file ;;
    "aerial batch --resolution") echo "HD FHD UHD" ;;
    "aerial batch --zoom") echo "ExtraLow Low Medium High ExtraHigh" ;;
    "aerial batch --bearing") echo "North NorthEast East SouthEast South SouthWest West NorthWest" ;;
    "aerial batch --angle") echo "Low Medium High Top" ;;
    "aerial batch --weather") echo "Sunny Rainy Cloudy GoldenHour Snow" ;;
    "aerial batch --daytime") echo "Dusk Day Dawn Night" ;;
    "aerial batch --aspect-ratio") echo "Square Landscape Portrait Standard" ;;
    "aerial batch --epoch") echo "Nowadays Historical Ancient" ;;
    "aerial batch --tag") echo @free ;;
    "aerial batch --prompt") echo @free ;;
    "aerial batch --api-key") echo @free ;;
    "aerial batch --base-url") echo @free ;;
    "aerial batch --profile") echo @free ;;
    "aerial batch status --manifest") echo @file ;;
    "aerial batch status --format") echo "csv jsonl json" ;;
    "aerial batch status --delimiter") echo "comma semicolon tab pipe" ;;
    "aerial batch status --output-template") echo @free ;;
    "aerial batch status --report") echo @file ;;
    "aerial batch status --geojson") echo @file ;;
    "aerial batch status --resolution") echo "HD FHD UHD" ;;
    "aerial batch status --zoom") echo "ExtraLow Low Medium High ExtraHigh" ;;
    "aerial batch status --bearing") echo "North NorthEast East SouthEast South SouthWest West NorthWest" ;;
    "aerial batch status --angle") echo "Low Medium High Top" ;;
    "aerial batch status --weather") echo "Sunny Rainy Cloudy GoldenHour Snow" ;;
    "aerial batch status --daytime") echo "Dusk Day Dawn Night" ;;
    "aerial batch status --aspect-ratio") echo "Square Landscape Portrait Standard" ;;
    "aerial batch status --epoch") echo "Nowadays Historical Ancient" ;;
    "aerial batch status --tag") echo @free ;;
    "aerial batch status --prompt") echo @free ;;
    "aerial batch status --api-key") echo @free ;;
    "aerial batch status --base-url") echo @free ;;
    "aerial batch status --profile") echo @free ;;
    "aerial batch help --api-key") echo @free ;;
    "aerial batch help --base-url") echo @free ;;
    "aerial batch help --profile") echo @free ;;
    "aerial list --page") echo @free ;;
    "aerial list --size") echo @free ;;
    "aerial list --sort") echo "createdAt,desc createdAt,asc" ;;
    "aerial list --since") echo @free ;;
    "aerial list --until") echo @free ;;
    "aerial list --resolution") echo "HD FHD UHD" ;;
    "aerial list --near") echo @free ;;
    "aerial list --within") echo @free ;;
    "aerial list --limit") echo @free ;;
    "aerial list --api-key") echo @free ;;
    "aerial list --base-url") echo @free ;;
    "aerial list --profile") echo @free ;;
    "aerial get -o"|"aerial get --output") echo @file ;;
    "aerial get --api-key") echo @free ;;
    "aerial get --base-url") echo @free ;;
    "aerial get --profile") echo @free ;;
    "aerial export --concurrency") echo @free ;;
    "aerial export --max-retries") echo @free ;;
    "aerial export --retry-delay") echo @free ;;
    "aerial export --page-size") echo @free ;;
    "aerial export --progress-interval") echo @free ;;
    "aerial export --api-key") echo @free ;;
    "aerial export --base-url") echo @free ;;
    "aerial export --profile") echo @free ;;
    "aerial view --protocol") echo "auto kitty iterm sixel blocks" ;;
    "aerial view --width") echo @free ;;
    "aerial view --api-key") echo @free ;;
    "aerial view --base-url") echo @free ;;
    "aerial view --profile") echo @free ;;
    "aerial delete --api-key") echo @free ;;
    "aerial delete --base-url") echo @free ;;
    "aerial delete --profile") echo @free ;;
    "aerial init --api-key") echo @free ;;
    "aerial init --base-url") echo @free ;;
    "aerial init --profile") echo @free ;;
    "aerial whoami --api-key") echo @free ;;
    "aerial whoami --base-url") echo @free ;;
    "aerial whoami --profile") echo @free ;;
    "aerial config --api-key") echo @free ;;
    "aerial config --base-url") echo @free ;;
    "aerial config --profile") echo @free ;;
    "aerial config set --api-key") echo @free ;;
    "aerial config set --base-url") echo @free ;;
    "aerial config set --profile") echo @free ;;
    "aerial config get --api-key") echo @free ;;
    "aerial config get --base-url") echo @free ;;
    "aerial config get --profile") echo @free ;;
    "aerial config unset --api-key") echo @free ;;
    "aerial config unset --base-url") echo @free ;;
    "aerial config unset --profile") echo @free ;;
    "aerial config list --api-key") echo @free ;;
    "aerial config list --base-url") echo @free ;;
    "aerial config list --profile") echo @free ;;
    "aerial config path --api-key") echo @free ;;
    "aerial config path --base-url") echo @free ;;
    "aerial config path --profile") echo @free ;;
    "aerial config help --api-key") echo @free ;;
    "aerial config help --base-url") echo @free ;;
    "aerial config help --profile") echo @free ;;
    "aerial sandbox --port") echo @free ;;
    "aerial sandbox --host") echo @free ;;
    "aerial sandbox --data-dir") echo @file ;;
    "aerial sandbox --credits") echo @free ;;
    "aerial sandbox --key") echo @free ;;
    "aerial sandbox --latency") echo @free ;;
    "aerial sandbox --fail-rate") echo @free ;;
    "aerial sandbox --rate-limit") echo @free ;;
    "aerial sandbox --drop-rate") echo @free ;;
    "aerial sandbox --webhook-fail") echo @free ;;
    "aerial sandbox --seed") echo @free ;;
    "aerial sandbox --api-key") echo @free ;;
    "aerial sandbox --base-url") echo @free ;;
    "aerial sandbox --profile") echo @free ;;
    "aerial sandbox reset --data-dir") echo @file ;;
    "aerial sandbox reset --api-key") echo @free ;;
    "aerial sandbox reset --base-url") echo @free ;;
    "aerial sandbox reset --profile") echo @free ;;
    "aerial sandbox help --api-key") echo @free ;;
    "aerial sandbox help --base-url") echo @free ;;
    "aerial sandbox help --profile") echo @free ;;
    "aerial mcp --output-dir") echo @file ;;
    "aerial mcp --tools") echo @free ;;
    "aerial mcp --max-images") echo @free ;;
    "aerial mcp --api-key") echo @free ;;
    "aerial mcp --base-url") echo @free ;;
    "aerial mcp --profile") echo @free ;;
    "aerial completion --api-key") echo @free ;;
    "aerial completion --base-url") echo @free ;;
    "aerial completion --profile") echo @free ;;
    "aerial version --api-key") echo @free ;;
    "aerial version --base-url") echo @free ;;
    "aerial version --profile") echo @free ;;
    "aerial help --api-key") echo @free ;;
    "aerial help --base-url") echo @free ;;
    "aerial help --profile") echo @free ;;
    *) return 1 ;;
  esac
}

_aerial() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="aerial" word child i skip=0 last=""
  local -a operands=()
  local value_flags=" --angle --api-key --aspect-ratio --at --base-url --bearing --callback-timeout --callback-url --concurrency --credits --data-dir --daytime --delimiter --drop-rate --epoch --fail-rate --format --geojson --host --key --lat --latency --limit --listen-host --listen-port --lng --manifest --max-images --max-retries --near --output --output-dir --output-template --page --page-size --port --profile --progress-interval --prompt --protocol --public-url --rate --rate-limit --report --resolution --retry-delay --seed --shard --since --size --sort --tag --timeout --tools --until --weather --webhook-fail --width --within --zoom -o "
  if ((COMP_CWORD > 0)); then prev="${COMP_WORDS[COMP_CWORD - 1]}"; fi
  # --zoom=<TAB>: bash splits at '=', so the flag is two words back.
  if [[ $prev == "=" && COMP_CWORD -gt 1 ]]; then prev="${COMP_WORDS[COMP_CWORD - 2]}"; fi
  if [[ $cur == "=" ]]; then cur=""; fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [[ $word == "=" ]]; then skip=1; continue; fi
    if ((skip)); then skip=0; continue; fi
    if [[ $word == -* ]]; then
      [[ $value_flags == *" $word "* ]] && skip=1
      continue
    fi
    child="$(_aerial_child "$path" "$word")"
    if [[ -n $child ]]; then
      path="$path $child"
      operands=()
    else
      operands+=("$word")
    fi
  done
  ((${#operands[@]})) && last="${operands[${#operands[@]} - 1]}"

  local candidates
  if ! candidates="$(_aerial_values "$path" "$prev")"; then
    if [[ $cur == -* ]]; then
      candidates="$(_aerial_options "$path")"
    else
      candidates="$(_aerial_words "$path|${#operands[@]}|$last")"
    fi
  fi
  case "$candidates" in
    @file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    "@file "*) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -W "${candidates#@file }" -- "$cur"; compgen -f -- "$cur") ;;
    @free) COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$candidates" -- "$cur") ;;
  esac
  return 0
}

complete -F _aerial aerial
