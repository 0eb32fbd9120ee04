import{createRequire as __aerialCreateRequire}from'node:module';const require=__aerialCreateRequire(import.meta.url);
import{PROTOCOLS}from"./chunk-XHANG3HC.js";import{configKeys}from"./chunk-C6FJVWEA.js";import"./chunk-K2FY6MIU.js";import{isSceneField,sceneSpec}from"./chunk-U7FAEA7W.js";import"./chunk-2SPAM6F3.js";import"./chunk-HUCUTGH6.js";import{SORT_PROPERTIES}from"./chunk-FVWELKVU.js";import"./chunk-MESVNSZ7.js";import"./chunk-2YWCJWIX.js";import"./chunk-RHIUOJBD.js";import"./chunk-3PVJQC2S.js";import"./chunk-FQHQSVRZ.js";import"./chunk-DQ7MFXUG.js";var SHELLS=["bash","zsh","fish"];function configValues(key2){switch(key2.kind){case"enumDefault":{let spec=sceneSpec(key2.field);return spec.kind==="enum"?[...spec.values]:void 0}case"booleanDefault":case"previewDefault":return["true","false"];default:return}}function knownValues(name,commandPath){let spec=isSceneField(name)?sceneSpec(name):void 0;if(spec?.kind==="enum")return{kind:"words",words:[...spec.values]};if(commandPath[1]==="config"&&name==="key")return{kind:"words",words:configKeys().map(key2=>key2.name)};if(commandPath[1]==="config"&&commandPath[2]==="set"&&name==="value"){let words={};for(let key2 of configKeys()){let values=configValues(key2);values&&(words[key2.name]=values)}return{kind:"byPrevious",words}}if(commandPath[1]==="view"&&name==="protocol")return{kind:"words",words:["auto",...PROTOCOLS]};if(commandPath[1]==="list"&&name==="sort")return{kind:"words",words:SORT_PROPERTIES.flatMap(property=>[`${property},desc`,`${property},asc`])};if(commandPath[1]==="batch"&&name==="format")return{kind:"words",words:["csv","jsonl","json"]};if(commandPath[1]==="batch"&&name==="delimiter")return{kind:"words",words:["comma","semicolon","tab","pipe"]}}function valueKind(choices,name,placeholder,commandPath){return choices?{kind:"words",words:[...choices]}:knownValues(name,commandPath)??(/file|path|dir/i.test(placeholder)?{kind:"file"}:{kind:"free"})}function helpArguments(command){let commands=command.commands.filter(c=>c.name()!=="help"),subcommands={};for(let sub of commands){let names=sub.commands.map(c=>c.name()).filter(name=>name!=="help");if(names.length>0)for(let name of[sub.name(),...sub.aliases()])subcommands[name]=names}let first={name:"command",variadic:!1,value:{kind:"words",words:commands.map(c=>c.name())}};return Object.keys(subcommands).length===0?[first]:[first,{name:"subcommand",variadic:!1,value:{kind:"byPrevious",words:subcommands}}]}function describeOption(option,commandPath){let placeholder=/[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1];return{short:option.short,long:option.long,description:option.description,...placeholder!==void 0?{valueName:placeholder,value:valueKind(option.argChoices,option.attributeName(),placeholder,commandPath)}:{}}}function describeArgument(argument,commandPath){return{name:argument.name(),variadic:argument.variadic,value:valueKind(argument.argChoices,argument.name(),argument.name(),commandPath)}}function describeCommand(command,parentPath=[]){let help=command.createHelp(),path=[...parentPath,command.name()],subcommands=help.visibleCommands(command).map(sub=>!command.commands.includes(sub)||sub.name()==="help"&&sub.commands.length===0?{path:[...path,sub.name()],name:sub.name(),aliases:[],description:sub.description(),options:[],arguments:helpArguments(command),subcommands:[]}:describeCommand(sub,path));return{path,name:command.name(),aliases:command.aliases(),description:command.description(),options:help.visibleOptions(command).filter(o=>o.long).map(o=>describeOption(o,path)),arguments:command.registeredArguments.map(a=>describeArgument(a,path)),subcommands}}function globalOptions(root){return root.options.filter(o=>o.long!=="--help"&&o.long!=="--version")}function flatten(root){let globals=globalOptions(root),out=[],walk=command=>{let own=command.options,inherited=command===root?[]:globals.filter(g=>!own.some(o=>o.long===g.long));out.push({command,options:[...own,...inherited]}),command.subcommands.forEach(walk)};return walk(root),out}function valueFlags(root){let takesValue=new Map;for(let{options}of flatten(root))for(let option of options)for(let flag of[option.short,option.long].filter(f=>!!f)){let previous=takesValue.get(flag);if(previous!==void 0&&previous!==!!option.value)throw new Error(`completion: ${flag} takes a value in one command but not in another`);takesValue.set(flag,!!option.value)}return[...takesValue].filter(([,value])=>value).map(([flag])=>flag).sort()}var HEADER=shell=>`generated from the aerial CLI by \`aerial completion ${shell}\` (scripts/completions.mjs); do not edit`;function key(path){return path.join(" ")}function flagsOf(option){return[option.short,option.long].filter(f=>!!f)}function bashPattern(pattern){return pattern.endsWith("*")?`"${pattern.slice(0,-1)}"*`:`"${pattern}"`}function bashCase(entries){return entries.map(([patterns,body])=>`    ${patterns.map(bashPattern).join("|")}) ${body} ;;`).join(`
`)}function bashValue(value){return value.kind==="file"?"echo @file":value.kind==="free"?"echo @free":`echo "${value.words.join(" ")}"`}function bashArguments(command){let entries=[],at=key(command.path);command.arguments.forEach((argument,index)=>{if(argument.value.kind==="byPrevious"){for(let[previous,words]of Object.entries(argument.value.words))entries.push([[`${at}|${index}|${previous}`],bashValue({kind:"words",words})]);entries.push([[`${at}|${index}|*`],"echo @free"]);return}entries.push([[`${at}|${index}|*`],bashValue(argument.value)])});let last=command.arguments[command.arguments.length-1];return last?.variadic&&last.value.kind!=="byPrevious"&&entries.push([[`${at}|*`],bashValue(last.value)]),entries}function bashScript(root){let all=flatten(root),children=[],words=[],options=[],values=[];for(let{command,options:opts}of all){for(let sub of command.subcommands)children.push([[sub.name,...sub.aliases].map(n=>`${key(command.path)} ${n}`),`echo ${sub.name}`]);if(command.subcommands.length){let file=command.arguments[0]?.value.kind==="file"?"@file ":"";words.push([[`${key(command.path)}|0|*`],`echo "${file}${command.subcommands.map(s=>s.name).join(" ")}"`])}else words.push(...bashArguments(command));options.push([[key(command.path)],`echo "${opts.flatMap(flagsOf).join(" ")}"`]);for(let option of opts)option.value&&option.value.kind!=="byPrevious"&&values.push([flagsOf(option).map(f=>`${key(command.path)} ${f}`),bashValue(option.value)])}return`# bash completion for aerial \u2014 ${HEADER("bash")}.
# Install: mkdir -p ~/.local/share/bash-completion/completions && aerial completion bash > ~/.local/share/bash-completion/completions/aerial
#      or: echo 'source <(aerial completion bash)' >> ~/.bashrc

_aerial_child() {
  case "$1 $2" in
${bashCase(children)}
  esac
}

_aerial_words() {
  case "$1" in
${bashCase(words)}
  esac
}

_aerial_options() {
  case "$1" in
${bashCase(options)}
  esac
}

_aerial_values() {
  case "$1 $2" in
${bashCase(values)}
    *) return 1 ;;
  esac
}

_aerial() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="aerial" word child i skip=0 last=""
  local -a operands=()
  local value_flags=" ${valueFlags(root).join(" ")} "
  if ((COMP_CWORD > 0)); then prev="\${COMP_WORDS[COMP_CWORD - 1]}"; fi
  # --zoom=<TAB>: bash splits at '=', so the flag is two words back.
  if [[ $prev == "=" && COMP_CWORD -gt 1 ]]; then prev="\${COMP_WORDS[COMP_CWORD - 2]}"; fi
  if [[ $cur == "=" ]]; then cur=""; fi
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
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
  ((\${#operands[@]})) && last="\${operands[\${#operands[@]} - 1]}"

  local candidates
  if ! candidates="$(_aerial_values "$path" "$prev")"; then
    if [[ $cur == -* ]]; then
      candidates="$(_aerial_options "$path")"
    else
      candidates="$(_aerial_words "$path|\${#operands[@]}|$last")"
    fi
  fi
  case "$candidates" in
    @file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    "@file "*) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -W "\${candidates#@file }" -- "$cur"; compgen -f -- "$cur") ;;
    @free) COMPREPLY=() ;;
    *) mapfile -t COMPREPLY < <(compgen -W "$candidates" -- "$cur") ;;
  esac
  return 0
}

complete -F _aerial aerial
`}function zshQuote(text){return`'${text.replace(/'/g,"'\\''")}'`}function zshDescription(text){return text.replace(/\\/g,"\\\\").replace(/([[\]:])/g,"\\$1")}function zshAction(value,previous=0){if(value.kind==="file")return"_files";if(value.kind==="free")return" ";if(value.kind==="words")return`(${value.words.join(" ")})`;let cases=Object.entries(value.words).map(([word,words])=>`(${word}) compadd -- ${words.join(" ")};;`);return`{case $line[${previous}] in ${cases.join(" ")} esac}`}function zshOptionSpecs(option){let description=`[${zshDescription(option.description)}]`,value=option.value?`:${option.valueName??"value"}:${zshAction(option.value)}`:"";if(option.short){let exclusive=`(${option.short} ${option.long})`;return`${zshQuote(exclusive)}{${option.short},${option.long}}${zshQuote(`${description}${value}`)}`}return zshQuote(`${option.long}${description}${value}`)}function zshFunctionName(path){return`_${path.join("_").replace(/-/g,"_")}`}function zshFunction(command,options){let specs=options.map(zshOptionSpecs),lines=[];if(command.subcommands.length){let entries=command.subcommands.map(sub=>zshQuote(`${sub.name.replace(/:/g,"\\:")}:${sub.description}`)),dispatch=command.subcommands.map(sub=>`        ${[sub.name,...sub.aliases].join("|")}) ${zshFunctionName(sub.path)} ;;`).join(`
`);lines.push(`${zshFunctionName(command.path)}() {`,'  local curcontext="$curcontext" state line',"  typeset -A opt_args","  local -a subcommands",`  subcommands=(${entries.join(" ")})`,"  _arguments -C \\",...specs.map(s=>`    ${s} \\`),"    '1: :->subcommand' \\","    '*:: :->args'","  case $state in",`    subcommand) _describe -t commands ${zshQuote(`${key(command.path)} command`)} subcommands${command.arguments[0]?.value.kind==="file"?"; _files":""} ;;`,"    args)","      case $words[1] in",dispatch,"      esac","      ;;","  esac","}")}else{let args=command.arguments.map((arg,i)=>zshQuote(`${arg.variadic?"*":String(i+1)}:${arg.name}:${zshAction(arg.value,i)}`));lines.push(`${zshFunctionName(command.path)}() {`,"  _arguments \\",...[...specs,...args].map((s,i,all)=>`    ${s}${i<all.length-1?" \\":""}`),"}")}return lines.join(`
`)}function zshScript(root){let functions=flatten(root).map(({command,options})=>zshFunction(command,options));return`#compdef aerial
# zsh completion for aerial \u2014 ${HEADER("zsh")}.
# Install: aerial completion zsh > "\${fpath[1]}/_aerial"   (then restart zsh)
#      or: a directory of your own: mkdir -p ~/.zfunc && aerial completion zsh > ~/.zfunc/_aerial
#          with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc

${functions.join(`

`)}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _aerial "$@"
else
  compdef _aerial aerial
fi
`}function fishQuote(text){return`'${text.replace(/\\/g,"\\\\").replace(/'/g,"\\'")}'`}function fishValue(value){return!value||value.kind==="byPrevious"?"":value.kind==="file"?" -r -F":value.kind==="free"?" -x":` -x -a ${fishQuote(value.words.join(" "))}`}function fishArguments(command){let lines=[],condition=(position,previous)=>`-n ${fishQuote(`__aerial_at ${fishQuote(key(command.path))} ${position}${previous===void 0?"":` ${fishQuote(previous)}`}`)}`;return command.arguments.forEach((argument,index)=>{let position=argument.variadic?`${index}+`:String(index);if(argument.value.kind==="words"&&lines.push(`complete -c aerial ${condition(position)} -a ${fishQuote(argument.value.words.join(" "))}`),argument.value.kind==="file"&&lines.push(`complete -c aerial ${condition(position)} -F`),argument.value.kind==="byPrevious")for(let[previous,words]of Object.entries(argument.value.words))lines.push(`complete -c aerial ${condition(position,previous)} -a ${fishQuote(words.join(" "))}`)}),lines}function fishScript(root){let all=flatten(root),globals=new Set(globalOptions(root).map(o=>o.long)),children=[],lines=[];for(let{command,options}of all){let here=`-n ${fishQuote(`__aerial_is ${fishQuote(key(command.path))}`)}`,first=`-n ${fishQuote(`__aerial_at ${fishQuote(key(command.path))} 0`)}`;for(let sub of command.subcommands)children.push(`        case ${[sub.name,...sub.aliases].map(n=>fishQuote(`${key(command.path)} ${n}`)).join(" ")}`,`            echo ${sub.name}`),lines.push(`complete -c aerial ${first} -a ${fishQuote(sub.name)} -d ${fishQuote(sub.description)}`);lines.push(...command.subcommands.length?fishArguments({...command,arguments:command.arguments.slice(0,1)}):fishArguments(command));for(let option of options){if(command!==root&&globals.has(option.long)&&!command.options.includes(option))continue;let where=command===root&&globals.has(option.long)?"":` ${here}`,short=option.short?` -s ${option.short.slice(1)}`:"";lines.push(`complete -c aerial${where}${short} -l ${option.long.slice(2)}${fishValue(option.value)} -d ${fishQuote(option.description)}`)}}return`# fish completion for aerial \u2014 ${HEADER("fish")}.
# Install: mkdir -p ~/.config/fish/completions && aerial completion fish > ~/.config/fish/completions/aerial.fish

# The subcommand path being typed ("aerial config set"), skipping option values;
# then, one a line, the arguments typed after it.
function __aerial_path
    set -l path aerial
    set -l operands
    set -l skip 0
    set -l value_flags ${valueFlags(root).join(" ")}
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
    test (count $operands) -gt 0; and printf '%s\\n' $operands
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
${children.join(`
`)}
    end
end

function __aerial_is
    set -l state (__aerial_path)
    test "$state[1]" = "$argv[1]"
end

complete -c aerial -f
${lines.join(`
`)}
`}function completionScript(program,shell){let model=describeCommand(program);switch(shell){case"bash":return bashScript(model);case"zsh":return zshScript(model);case"fish":return fishScript(model)}}export{SHELLS,bashScript,completionScript,describeCommand,fishScript,valueFlags,zshScript};
