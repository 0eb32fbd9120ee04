# fish completion for aerial — generated from the aerial CLI by `aerial completion fish` (scripts/completions.mjs); do not edit.
# Install: mkdir -p ~/.config/fish/completions && aerial completion fish > ~/.config/fish/completions/aerial.fish

# The subcommand path being typed ("aerial config set"), skipping option values;
# then, one a line, the arguments typed after it.
function __aerial_path
    set -l path aerial
    set -l operands
    set -l skip 0
    set -l value_flags --angle --api-key --aspect-ratio --at --base-url --bearing --callback-timeout --callback-url --concurrency --credits --data-dir --daytime --delimiter --drop-rate --epoch --fail-rate --format --geojson --host --key --lat --latency --limit --listen-host --listen-port --lng --manifest --max-images --max-retries --near --output --output-dir --output-template --page --page-size --port --profile --progress-interval --prompt --protocol --public-url --rate --rate-limit --report --resolution --retry-delay --seed --shard --since --size --sort --tag --timeout --tools --until --weather --webhook-fail --width --within --zoom -o
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            contains -- $word $value_flags; and set skip 1
            continue
        end
        set -l child (__aerial_child "$path" $word)
        if test -n "$child"
            set path "$path $child"
            set operands
        else
            set -a operands $word
        end
    end
    echo $path
    test (count $operands) -gt 0; and printf '%s\n' $operands
end

# At this path with this many arguments typed (N, or N+ for at least N), and the last of them, if given.
function __aerial_at
    set -l state (__aerial_path)
    test "$state[1]" = "$argv[1]"; or return 1
    set -l typed (math (count $state) - 1)
    if string match -q -- '*+' $argv[2]
        test $typed -ge (string trim -r -c + -- $argv[2]); or return 1
    else
        test $typed -eq $argv[2]; or return 1
    end
    test (count $argv) -lt 3; or test "$state[-1]" = "$argv[3]"
end

function __aerial_child
    switch "$argv[1] $argv[2]"
        case 'aerial generate'
            echo generate
        case 'aerial generate-async'
            echo generate-async
        case 'aerial batch'
            echo batch
        case 'aerial list' 'aerial ls'
            echo list
        case 'aerial get'
            echo get
        case 'aerial export'
            echo export
        case 'aerial view' 'aerial show'
            echo view
        case 'aerial delete' 'aerial rm'
            echo delete
        case 'aerial init'
            echo init
        case 'aerial whoami'
            echo whoami
        case 'aerial config'
            echo config
        case 'aerial sandbox'
            echo sandbox
        case 'aerial mcp'
            echo mcp
        case 'aerial completion'
            echo completion
        case 'aerial version'
            echo version
        case 'aerial help'
            echo help
        case 'aerial batch status'
            echo status
        case 'aerial batch help'
            echo help
        case 'aerial config set'
            echo set
        case 'aerial config get'
            echo get
        case 'aerial config unset'
            echo unset
        case 'aerial config list' 'aerial config ls'
            echo list
        case 'aerial config path'
            echo path
        case 'aerial config help'
            echo help
        case 'aerial sandbox reset'
            echo reset
        case 'aerial sandbox help'
            echo help
    end
end

function __aerial_is
    set -l state (__aerial_path)
    test "$state[1]" = "$argv[1]"
end

complete -c aerial -f
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'generate' -d 'generate an aerial image and save it as a JPEG'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'generate-async' -d 'start a generation whose result is POSTed to a webhook (or caught here with --listen)'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'batch' -d 'generate one image per row of a CSV or JSON Lines file, resumably'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'list' -d 'list the images in your history'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'get' -d 'save one image of your history as a JPEG'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'export' -d 'download every image in your history, with an index, an HTML report and GeoJSON'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'view' -d 'show images in the terminal: JPEG files, or image ids from your history'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'delete' -d 'delete images from your history permanently'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'init' -d 'set up aerial step by step: service URL, API key (checked at once), defaults'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'whoami' -d 'show the profile, service and API key in use, and check the key with the service'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'config' -d 'show and change settings: api-key, base-url, defaults.<scene flag>, defaults.preview'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'sandbox' -d 'run the bundled local GenAerial-compatible server (no real credits, fault knobs for tests)'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'mcp' -d 'serve generate, list and delete to AI assistants over MCP (the Model Context Protocol) on stdio'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'completion' -d 'print the shell completion script for bash, zsh or fish'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'version' -d 'print the version of aerial and Node.js (as --version)'
complete -c aerial -n '__aerial_at \'aerial\' 0' -a 'help' -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial\'' -s V -l version -d 'print the version of aerial and Node.js'
complete -c aerial -l api-key -x -d 'API key (prefer AERIAL_API_KEY or `aerial config set api-key`)'
complete -c aerial -l base-url -x -d 'service base URL (env AERIAL_BASE_URL; default https://api.genaerial.com)'
complete -c aerial -l profile -x -d 'config profile to use (env AERIAL_PROFILE)'
complete -c aerial -l json -d 'machine-readable output on stdout, errors as JSON on stderr'
complete -c aerial -s q -l quiet -d 'print only data, no progress or notices'
complete -c aerial -s v -l verbose -d 'trace HTTP requests on stderr (method, URL, status, timing; never the key)'
complete -c aerial -l sandbox -d 'use the bundled local sandbox server instead of the real service'
complete -c aerial -l no-color -d 'disable colour (also NO_COLOR)'
complete -c aerial -n '__aerial_is \'aerial\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l lat -x -d 'latitude, -90 to 90 (required, or --at)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l lng -x -d 'longitude, -180 to 180 (required, or --at)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l at -x -d 'location as "LAT,LNG", a geo: URI or a place name ("Paris, FR", looked up offline), instead of --lat/--lng'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l resolution -x -a 'HD FHD UHD' -d 'output resolution: HD, FHD, UHD (default FHD, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l zoom -x -a 'ExtraLow Low Medium High ExtraHigh' -d 'how close the camera is: ExtraLow, Low, Medium, High, ExtraHigh (default Medium, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l bearing -x -a 'North NorthEast East SouthEast South SouthWest West NorthWest' -d 'compass direction the camera faces (also N, NE, E, …): North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest (default North, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l angle -x -a 'Low Medium High Top' -d 'camera angle from the ground: Low, Medium, High, Top (default High, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l weather -x -a 'Sunny Rainy Cloudy GoldenHour Snow' -d 'weather in the scene: Sunny, Rainy, Cloudy, GoldenHour, Snow (default Sunny, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l daytime -x -a 'Dusk Day Dawn Night' -d 'time of day: Dusk, Day, Dawn, Night (default Day, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l aspect-ratio -x -a 'Square Landscape Portrait Standard' -d 'image shape: Square, Landscape, Portrait, Standard (default Landscape, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l epoch -x -a 'Nowadays Historical Ancient' -d 'era the scene depicts: Nowadays, Historical, Ancient (default Nowadays, or config)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l include-context -d 'landmark-specific enhancement for recognised locations'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-include-context -d 'turn landmark enhancement off'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l include-surroundings -d 'include the surrounding area (the service default)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-include-surroundings -d 'leave out the surrounding area'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l improve-output -d 'apply quality enhancement'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-improve-output -d 'turn quality enhancement off'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l save-image -d 'keep the image in your history (the service default)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-save-image -d 'do not keep the image in your history'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l tag -x -d 'descriptive tag, repeatable, at most 10'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l prompt -x -d 'custom enhancement instructions'
complete -c aerial -n '__aerial_is \'aerial generate\'' -s o -l output -r -F -d 'where to save the JPEG ("-" for stdout when it is not a terminal; a device or FIFO is written into)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -s f -l force -d 'overwrite the output file if it exists'
complete -c aerial -n '__aerial_is \'aerial generate\'' -s i -l interactive -d 'ask for the location and scene choices (the default on a terminal when --lat/--lng are missing)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-metadata -d 'save the bytes exactly as received: no GPS EXIF, no AI-generated note'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l preview -d 'show the saved image in the terminal, as aerial view does (on a terminal only; default: config defaults.preview)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -l no-preview -d 'do not show the image (when config defaults.preview is true)'
complete -c aerial -n '__aerial_is \'aerial generate\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l lat -x -d 'latitude, -90 to 90 (required, or --at)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l lng -x -d 'longitude, -180 to 180 (required, or --at)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l at -x -d 'location as "LAT,LNG", a geo: URI or a place name ("Paris, FR", looked up offline), instead of --lat/--lng'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l resolution -x -a 'HD FHD UHD' -d 'output resolution: HD, FHD, UHD (default FHD, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l zoom -x -a 'ExtraLow Low Medium High ExtraHigh' -d 'how close the camera is: ExtraLow, Low, Medium, High, ExtraHigh (default Medium, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l bearing -x -a 'North NorthEast East SouthEast South SouthWest West NorthWest' -d 'compass direction the camera faces (also N, NE, E, …): North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest (default North, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l angle -x -a 'Low Medium High Top' -d 'camera angle from the ground: Low, Medium, High, Top (default High, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l weather -x -a 'Sunny Rainy Cloudy GoldenHour Snow' -d 'weather in the scene: Sunny, Rainy, Cloudy, GoldenHour, Snow (default Sunny, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l daytime -x -a 'Dusk Day Dawn Night' -d 'time of day: Dusk, Day, Dawn, Night (default Day, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l aspect-ratio -x -a 'Square Landscape Portrait Standard' -d 'image shape: Square, Landscape, Portrait, Standard (default Landscape, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l epoch -x -a 'Nowadays Historical Ancient' -d 'era the scene depicts: Nowadays, Historical, Ancient (default Nowadays, or config)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l include-context -d 'landmark-specific enhancement for recognised locations'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-include-context -d 'turn landmark enhancement off'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l include-surroundings -d 'include the surrounding area (the service default)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-include-surroundings -d 'leave out the surrounding area'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l improve-output -d 'apply quality enhancement'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-improve-output -d 'turn quality enhancement off'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l save-image -d 'keep the image in your history (the service default)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-save-image -d 'do not keep the image in your history'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l tag -x -d 'descriptive tag, repeatable, at most 10'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l prompt -x -d 'custom enhancement instructions'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l callback-url -x -d 'absolute http(s) URL that receives the result callback; with --listen, the URL advertised to the service (same as --public-url)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l listen -d 'catch the callback with a temporary local listener and download the image'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l listen-host -x -d 'address the listener binds (default 127.0.0.1; 0.0.0.0 for every interface)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l listen-port -x -d 'port the listener binds (default 0: a free port)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l public-url -x -d 'URL the service calls to reach the listener, e.g. your ngrok or cloudflared tunnel; a secret token path is appended'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l timeout -x -d 'how long --listen waits for the callback, up to 24h (default 10m): 90s, 10m, 2h; a bare number is seconds, at most 600 (a longer wait takes a unit)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -s o -l output -r -F -d 'with --listen: where to save the JPEG (default aerial-LAT_LNG-TIME.jpg)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -s f -l force -d 'with --listen: overwrite the output file if it exists'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-metadata -d 'with --listen: save the bytes exactly as received (no GPS EXIF, no AI-generated note)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l preview -d 'with --listen: show the saved image in the terminal, as aerial view does (on a terminal only; default: config defaults.preview)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -l no-preview -d 'with --listen: do not show the image (when config defaults.preview is true)'
complete -c aerial -n '__aerial_is \'aerial generate-async\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial batch\' 0' -a 'status' -d 'combine the manifests of every shard into one account of the batch: rows done, failed, missing, done more than once'
complete -c aerial -n '__aerial_at \'aerial batch\' 0' -a 'help' -d 'display help for a subcommand'
complete -c aerial -n '__aerial_at \'aerial batch\' 0' -F
complete -c aerial -n '__aerial_is \'aerial batch\'' -l format -x -a 'csv jsonl json' -d 'file format: csv, jsonl, json (a JSON array; default: from the extension, then the content)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l delimiter -x -a 'comma semicolon tab pipe' -d 'CSV cell separator: \',\' (default; tab for .tsv), \';\', tab or \'|\''
complete -c aerial -n '__aerial_is \'aerial batch\'' -l output-template -x -d 'file name per row; {row}, {lat}, {lng}, a scene choice such as {zoom} or {weather}, or a column (default aerial-batch/{row}-{lat}_{lng}.jpg)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l concurrency -x -d 'requests in flight at once, 1 to 256 (default 4); halved on a 429, grown back as answers come'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l rate -x -d 'start at most n requests a second (10/s) or a minute (600/m): this process\'s share of the account\'s rate limit'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l max-retries -x -d 'retries per row on 429, 5xx, resets and timeouts (default 5)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l retry-delay -x -d 'delay before the first retry, doubled for each further one, with jitter: 500ms, 2s; a bare number is seconds (default 500ms, at most 30s)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l retry-unsafe -d 'also retry rows whose connection broke after the request was sent (the service may charge twice)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l manifest -r -F -d 'JSON Lines record of each row (default aerial-batch-manifest.jsonl in the template\'s base directory)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l shard -x -d 'run only shard k of n (every n-th row, from row k); auto (or auto/N) reads k and n from the CI or job engine'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l dry-run -d 'validate every row and show the credits it would cost; send nothing'
complete -c aerial -n '__aerial_is \'aerial batch\'' -s f -l force -d 'overwrite output files that this batch did not write'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l wait-for-lock -d 'when another run of this batch (same manifest, rows in common) is under way, wait for it to end instead of refusing'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l no-metadata -d 'save the bytes exactly as received: no GPS EXIF, no AI-generated note'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l skip-invalid -d 'run the valid rows even when some rows are invalid (they are reported as failed)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l progress-interval -x -d 'time between progress lines when stderr is not a terminal: 10s, 1m; a bare number is seconds (default 5s)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l async -d 'use the async endpoint: one local listener catches every row\'s callback, matched by requestId'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l listen-host -x -d 'with --async: address the listener binds (default 127.0.0.1)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l listen-port -x -d 'with --async: port the listener binds (default 0: a free port)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l public-url -x -d 'with --async: URL the service calls to reach the listener (a tunnel); a secret token path is appended'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l callback-timeout -x -d 'with --async: how long a row waits for its callback, up to 24h (default 10m): 90s, 10m, 2h; a bare number is seconds, at most 600 (a longer wait takes a unit)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l report -r -F -d 'write an HTML report at the end: map, thumbnails, every row\'s scene and status (thumbnails go in <file>.thumbnails/)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l geojson -r -F -d 'write a GeoJSON FeatureCollection at the end: one point per row, with its file, scene and status'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l resolution -x -a 'HD FHD UHD' -d 'output resolution: HD, FHD, UHD (default FHD, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l zoom -x -a 'ExtraLow Low Medium High ExtraHigh' -d 'how close the camera is: ExtraLow, Low, Medium, High, ExtraHigh (default Medium, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l bearing -x -a 'North NorthEast East SouthEast South SouthWest West NorthWest' -d 'compass direction the camera faces (also N, NE, E, …): North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest (default North, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l angle -x -a 'Low Medium High Top' -d 'camera angle from the ground: Low, Medium, High, Top (default High, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l weather -x -a 'Sunny Rainy Cloudy GoldenHour Snow' -d 'weather in the scene: Sunny, Rainy, Cloudy, GoldenHour, Snow (default Sunny, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l daytime -x -a 'Dusk Day Dawn Night' -d 'time of day: Dusk, Day, Dawn, Night (default Day, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l aspect-ratio -x -a 'Square Landscape Portrait Standard' -d 'image shape: Square, Landscape, Portrait, Standard (default Landscape, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l epoch -x -a 'Nowadays Historical Ancient' -d 'era the scene depicts: Nowadays, Historical, Ancient (default Nowadays, or config)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l include-context -d 'landmark-specific enhancement for recognised locations'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l no-include-context -d 'turn landmark enhancement off'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l include-surroundings -d 'include the surrounding area (the service default)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l no-include-surroundings -d 'leave out the surrounding area'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l improve-output -d 'apply quality enhancement'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l no-improve-output -d 'turn quality enhancement off'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l save-image -d 'keep the image in your history (the service default)'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l no-save-image -d 'do not keep the image in your history'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l tag -x -d 'descriptive tag, repeatable, at most 10'
complete -c aerial -n '__aerial_is \'aerial batch\'' -l prompt -x -d 'custom enhancement instructions'
complete -c aerial -n '__aerial_is \'aerial batch\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial batch status\' 0' -F
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l manifest -r -F -d 'shards\' manifests, or quoted globs of them (\'dir/**/*.jsonl\'): several after one --manifest, or --manifest repeated (default: the batch\'s own manifest)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l format -x -a 'csv jsonl json' -d 'file format: csv, jsonl, json (a JSON array; default: from the extension, then the content)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l delimiter -x -a 'comma semicolon tab pipe' -d 'CSV cell separator: \',\' (default; tab for .tsv), \';\', tab or \'|\''
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l output-template -x -d 'the --output-template the shards used, for manifests that do not record it (default aerial-batch/{row}-{lat}_{lng}.jpg)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l report -r -F -d 'write an HTML report of the whole batch: map, thumbnails, every row\'s scene and state (thumbnails go in <file>.thumbnails/)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l geojson -r -F -d 'write a GeoJSON FeatureCollection of the whole batch: one point per row, with its file, scene and state'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l resolution -x -a 'HD FHD UHD' -d 'output resolution: HD, FHD, UHD (default FHD, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l zoom -x -a 'ExtraLow Low Medium High ExtraHigh' -d 'how close the camera is: ExtraLow, Low, Medium, High, ExtraHigh (default Medium, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l bearing -x -a 'North NorthEast East SouthEast South SouthWest West NorthWest' -d 'compass direction the camera faces (also N, NE, E, …): North, NorthEast, East, SouthEast, South, SouthWest, West, NorthWest (default North, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l angle -x -a 'Low Medium High Top' -d 'camera angle from the ground: Low, Medium, High, Top (default High, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l weather -x -a 'Sunny Rainy Cloudy GoldenHour Snow' -d 'weather in the scene: Sunny, Rainy, Cloudy, GoldenHour, Snow (default Sunny, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l daytime -x -a 'Dusk Day Dawn Night' -d 'time of day: Dusk, Day, Dawn, Night (default Day, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l aspect-ratio -x -a 'Square Landscape Portrait Standard' -d 'image shape: Square, Landscape, Portrait, Standard (default Landscape, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l epoch -x -a 'Nowadays Historical Ancient' -d 'era the scene depicts: Nowadays, Historical, Ancient (default Nowadays, or config)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l include-context -d 'landmark-specific enhancement for recognised locations'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l no-include-context -d 'turn landmark enhancement off'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l include-surroundings -d 'include the surrounding area (the service default)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l no-include-surroundings -d 'leave out the surrounding area'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l improve-output -d 'apply quality enhancement'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l no-improve-output -d 'turn quality enhancement off'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l save-image -d 'keep the image in your history (the service default)'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l no-save-image -d 'do not keep the image in your history'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l tag -x -d 'descriptive tag, repeatable, at most 10'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -l prompt -x -d 'custom enhancement instructions'
complete -c aerial -n '__aerial_is \'aerial batch status\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial batch help\' 0' -a 'status'
complete -c aerial -n '__aerial_is \'aerial list\'' -l page -x -d 'page number, counted from 0 (default 0)'
complete -c aerial -n '__aerial_is \'aerial list\'' -l size -x -d 'images per page, at least 1 (default 20)'
complete -c aerial -n '__aerial_is \'aerial list\'' -l sort -x -a 'createdAt,desc createdAt,asc' -d 'sort criterion such as createdAt,desc; repeatable'
complete -c aerial -n '__aerial_is \'aerial list\'' -l all -d 'walk every page and print all images'
complete -c aerial -n '__aerial_is \'aerial list\'' -l since -x -d 'only images made since then: a duration back from now (2h, 30m, 1h30m) or a date (2025-01-31, 2025-01-31T12:00Z)'
complete -c aerial -n '__aerial_is \'aerial list\'' -l until -x -d 'only images made before then, written as for --since'
complete -c aerial -n '__aerial_is \'aerial list\'' -l resolution -x -a 'HD FHD UHD' -d 'only images of this resolution: HD, FHD, UHD'
complete -c aerial -n '__aerial_is \'aerial list\'' -l near -x -d 'only images near this point: "LAT,LNG" or a place name ("Lyon, FR")'
complete -c aerial -n '__aerial_is \'aerial list\'' -l within -x -d 'with --near: how near, in kilometres (default 10)'
complete -c aerial -n '__aerial_is \'aerial list\'' -l limit -x -d 'print at most n images, and ask for no page beyond them'
complete -c aerial -n '__aerial_is \'aerial list\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial get\'' -s o -l output -r -F -d 'where to save it ("-" for stdout when it is not a terminal; default aerial-<lat>_<lng>-<id>.jpg)'
complete -c aerial -n '__aerial_is \'aerial get\'' -s f -l force -d 'overwrite the output file if it exists'
complete -c aerial -n '__aerial_is \'aerial get\'' -l no-metadata -d 'save the bytes exactly as the image URL serves them: no GPS EXIF, no AI-generated note'
complete -c aerial -n '__aerial_is \'aerial get\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial export\' 0' -F
complete -c aerial -n '__aerial_is \'aerial export\'' -l concurrency -x -d 'downloads in flight at once, 1 to 256 (default 4)'
complete -c aerial -n '__aerial_is \'aerial export\'' -l max-retries -x -d 'retries per request on 429, 5xx, resets and timeouts (default 5)'
complete -c aerial -n '__aerial_is \'aerial export\'' -l retry-delay -x -d 'delay before the first retry, doubled for each further one, with jitter: 500ms, 2s; a bare number is seconds (default 500ms, at most 30s)'
complete -c aerial -n '__aerial_is \'aerial export\'' -l page-size -x -d 'images per list request, 1 to 1000 (default: 1000, or what the service grants)'
complete -c aerial -n '__aerial_is \'aerial export\'' -l progress-interval -x -d 'time between progress lines when stderr is not a terminal: 10s, 1m; a bare number is seconds (default 5s)'
complete -c aerial -n '__aerial_is \'aerial export\'' -l wait-for-lock -d 'when another export into <dir> is under way, wait for it to end instead of refusing'
complete -c aerial -n '__aerial_is \'aerial export\'' -l no-metadata -d 'save the bytes exactly as served: no GPS EXIF, no AI-generated note'
complete -c aerial -n '__aerial_is \'aerial export\'' -l no-report -d 'write the images and index.jsonl only: no index.html, thumbnails or index.geojson'
complete -c aerial -n '__aerial_is \'aerial export\'' -l report-only -d 'download nothing: make index.html, its thumbnails and index.geojson from the index.jsonl already in <dir>'
complete -c aerial -n '__aerial_is \'aerial export\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial view\'' -l protocol -x -a 'auto kitty iterm sixel blocks' -d 'auto, kitty, iterm, sixel or blocks (half-block characters); default auto, from the environment'
complete -c aerial -n '__aerial_is \'aerial view\'' -l width -x -d 'width in terminal columns (default: the terminal\'s width, and no taller than it)'
complete -c aerial -n '__aerial_is \'aerial view\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial delete\'' -s y -l yes -d 'do not ask for confirmation (required without a terminal)'
complete -c aerial -n '__aerial_is \'aerial delete\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial init\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial whoami\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'set' -d 'set a value (api-key without a value reads a hidden prompt or stdin)'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'get' -d 'print one value (the API key masked)'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'unset' -d 'remove a value from the profile'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'list' -d 'show every setting, its value and where it comes from (flag, env, profile, default)'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'path' -d 'print the path of the config file'
complete -c aerial -n '__aerial_at \'aerial config\' 0' -a 'help' -d 'display help for a subcommand'
complete -c aerial -n '__aerial_is \'aerial config\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial config set\' 0' -a 'api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.resolution\'' -a 'HD FHD UHD'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.zoom\'' -a 'ExtraLow Low Medium High ExtraHigh'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.bearing\'' -a 'North NorthEast East SouthEast South SouthWest West NorthWest'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.angle\'' -a 'Low Medium High Top'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.weather\'' -a 'Sunny Rainy Cloudy GoldenHour Snow'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.daytime\'' -a 'Dusk Day Dawn Night'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.aspect-ratio\'' -a 'Square Landscape Portrait Standard'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.epoch\'' -a 'Nowadays Historical Ancient'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.include-context\'' -a 'true false'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.include-surroundings\'' -a 'true false'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.improve-output\'' -a 'true false'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.save-image\'' -a 'true false'
complete -c aerial -n '__aerial_at \'aerial config set\' 1 \'defaults.preview\'' -a 'true false'
complete -c aerial -n '__aerial_is \'aerial config set\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial config get\' 0' -a 'api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview'
complete -c aerial -n '__aerial_is \'aerial config get\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial config unset\' 0' -a 'api-key base-url defaults.resolution defaults.zoom defaults.bearing defaults.angle defaults.weather defaults.daytime defaults.aspect-ratio defaults.epoch defaults.include-context defaults.include-surroundings defaults.improve-output defaults.save-image defaults.preview'
complete -c aerial -n '__aerial_is \'aerial config unset\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial config list\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial config path\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial config help\' 0' -a 'set get unset list path'
complete -c aerial -n '__aerial_at \'aerial sandbox\' 0' -a 'reset' -d 'empty the sandbox\'s data directory: every account and image'
complete -c aerial -n '__aerial_at \'aerial sandbox\' 0' -a 'help' -d 'display help for a subcommand'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l port -x -d 'port to listen on; 0 picks a free one'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l host -x -d 'address to bind'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l data-dir -r -F -d 'where accounts and images persist (default: $XDG_DATA_HOME/aerial/sandbox, ~/.local/share/aerial/sandbox)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l credits -x -d 'set the default account\'s credits (a new account starts with 1000)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l key -x -d 'use this API key for the default account (created if new)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l latency -x -d 'send no API answer (nor webhook) sooner than this: 250ms, 2s; a bare number is seconds, at most 30 (up to 10m)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l fail-rate -x -d 'share of generations that fail with ErrorGeneratingImage'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l rate-limit -x -d 'requests per second per account before 429 with Retry-After'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l drop-rate -x -d 'share of API requests whose connection is reset'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l webhook-fail -x -d 'the first n webhook delivery attempts fail (then retries get through)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -l seed -x -d 'seed for the random fault decisions (same seed, same faults)'
complete -c aerial -n '__aerial_is \'aerial sandbox\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial sandbox reset\'' -l data-dir -r -F -d 'the data directory to empty (default: the one aerial sandbox uses)'
complete -c aerial -n '__aerial_is \'aerial sandbox reset\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial sandbox help\' 0' -a 'reset'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -l output-dir -r -F -d 'the one directory generate_image saves images in, under names relative to it (default: the current directory)'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -l allow-overwrite -d 'let generate_image replace a file in --output-dir when a call asks to (force); without it, none is ever replaced'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -l read-only -d 'serve only the tools that neither spend credits nor delete (list_images), and the images as resources'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -l tools -x -d 'serve only these tools, separated by commas: generate_image, list_images, delete_image'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -l max-images -x -d 'generate at most n images in this run: a call past them is a tool error, and nothing is sent'
complete -c aerial -n '__aerial_is \'aerial mcp\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial completion\' 0' -a 'bash zsh fish'
complete -c aerial -n '__aerial_is \'aerial completion\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_is \'aerial version\'' -s h -l help -d 'display help for command'
complete -c aerial -n '__aerial_at \'aerial help\' 0' -a 'generate generate-async batch list get export view delete init whoami config sandbox mcp completion version'
complete -c aerial -n '__aerial_at \'aerial help\' 1 \'batch\'' -a 'status'
complete -c aerial -n '__aerial_at \'aerial help\' 1 \'config\'' -a 'set get unset list path'
complete -c aerial -n '__aerial_at \'aerial help\' 1 \'sandbox\'' -a 'reset'
