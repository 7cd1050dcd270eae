# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mdiag_global_optspecs
    string join \n kubeconfig= context= n/namespace= lang= color= resource= controller= request-timeout= redact= no-default-redaction h/help V/version
end

function __fish_mdiag_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mdiag_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mdiag_using_subcommand
    set -l cmd (__fish_mdiag_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mdiag -n "__fish_mdiag_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_needs_command" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_needs_command" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_needs_command" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_needs_command" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_needs_command" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "trace" -d 'Trace one ModelService (or deploy/NAME, sts/NAME, ds/NAME, rs/NAME, pod/NAME): the object chain, each Pod\'s moments, where the rollout stopped, why, and what to run next'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "triage" -d 'Rank every ModelService (and plain Deployment, StatefulSet, DaemonSet, ReplicaSet no Deployment owns, ownerless Pod, and what fails outside them) of a namespace, or of all with -A, by how broken it is: one line each, worst first'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "gate" -d 'Wait on a rollout after `helm upgrade`: exit 0 the moment it serves, 1 on a definitive symptom, 3 on timeout; write reports and evidence for CI'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "snapshot" -d 'Capture the evidence (objects, events, current and previous logs) into one file that every command reads back with --snapshot'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "mcp" -d 'Serve trace, triage, explain and a snapshot file\'s summary to an agent as Model Context Protocol tools, on stdin and stdout'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "explain" -d 'Explain a symptom: the documented cause, the check, the fix and how to verify it'
complete -c mdiag -n "__fish_mdiag_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s o -l output -d 'Output format' -r -f -a "table\t'For people: tree, timeline, findings'
json\t'The versioned JSON report (schema mdiag/v1)'
yaml\t'The same report as YAML'
html\t'The same report as one self-contained HTML page (inline CSS and SVG, no network): headline, tree, waterfall, Pods\' moments, findings with copy buttons, log tails and gaps'"
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s f -l snapshot -d 'Read objects from a file instead of a cluster: an mdiag snapshot, or `kubectl get -o yaml|json` output (.gz is decompressed; `-` reads stdin)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l at -d 'Judge the snapshot as it stood at this time (RFC 3339) instead of its capture time: what it dates after TIME is left out (docs/contract.md)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l width -d 'Fit the view to N columns (default: the terminal\'s width; when stdout is not a terminal, $COLUMNS, else 80)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l logs -d 'Read the logs of the Pods the findings are about (live only; pods/log get, the last lines, size-capped): a crash\'s own words are shown under its finding'
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s v -l verbose -d 'Show every finding in full (cause, every check, fix, verify) and each Pod\'s moments; by default the lead finding is shown with its evidence, first check and fix, the others one line each'
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_using_subcommand trace" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l alert -d 'Trace what an alert is about: an Alertmanager webhook payload, a list of alerts, one alert or its labels (JSON or YAML, gzip too, up to 16 MiB; `-` reads stdin). Its labels name the namespace and the ModelService, Deployment, StatefulSet, DaemonSet, Pod, ReplicaSet or Service' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s o -l output -d 'Output format' -r -f -a "table\t'For people: tree, timeline, findings'
json\t'The versioned JSON report (schema mdiag/v1)'
yaml\t'The same report as YAML'
html\t'The same report as one self-contained HTML page (inline CSS and SVG, no network): headline, tree, waterfall, Pods\' moments, findings with copy buttons, log tails and gaps'"
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s l -l selector -d 'Label selector to filter workloads (as kubectl -l)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s f -l snapshot -d 'Read objects from a file instead of a cluster: an mdiag snapshot, or `kubectl get -o yaml|json` output (.gz is decompressed; `-` reads stdin)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l at -d 'Judge the snapshot as it stood at this time (RFC 3339) instead of its capture time: what it dates after TIME is left out (docs/contract.md)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l width -d 'Fit the view to N columns (default: the terminal\'s width; when stdout is not a terminal, $COLUMNS, else 80)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l all -d 'Show healthy workloads too (they are folded into a count)'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l all-contexts -d 'Read every context of the kubeconfig, one cluster each, into one table (a cluster that cannot be read is listed as a gap)'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s A -l all-namespaces -d 'Look in every namespace'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s v -l verbose -d 'Show every finding in full (cause, every check, fix, verify) and each Pod\'s moments; by default the lead finding is shown with its evidence, first check and fix, the others one line each'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_using_subcommand triage" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l timeout -d 'How long to wait for the rollout to converge (`90s`, `10m`, `1h30m`; a bare number is seconds)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l fail-on -d 'Finding ids that fail the gate at once (comma-separated; replaces the default set; `none` waits for the timeout whatever happens). Default: image-pull-not-found, image-pull-denied, crash-loop, oom-killed, probe-kills-startup, init-container-failing, container-config-error, container-cannot-run, pod-unschedulable, resource-claim-pending, progress-deadline-exceeded, controller-not-converging, pods-not-created, model-not-loaded' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l max-restarts -d 'A crash loop fails the gate once a Pod of the new revision restarted this often' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l report -d 'Write the JSON report (schema mdiag/v1, with outcome and elapsed_seconds) here' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l junit -d 'Write JUnit XML (one test case per check) here, for CI systems' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l html -d 'Write the report as one self-contained HTML page here (also on timeout and interrupt), for a CI artifact or an incident ticket' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l evidence -d 'On failure or timeout, capture a snapshot (objects, events, logs) into this file before anyone rolls back' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l helm-release -d 'The Helm release that installed the target: its status and revision are read from Helm\'s storage Secret metadata (never its values)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -s o -l output -d 'Output format of the final report on stdout' -r -f -a "table\t'For people: tree, timeline, findings'
json\t'The versioned JSON report (schema mdiag/v1)'
yaml\t'The same report as YAML'
html\t'The same report as one self-contained HTML page (inline CSS and SVG, no network): headline, tree, waterfall, Pods\' moments, findings with copy buttons, log tails and gaps'"
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l width -d 'Fit the view to N columns (default: the terminal\'s width; when stdout is not a terminal, $COLUMNS, else 80)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -s v -l verbose -d 'Show every finding in full (cause, every check, fix, verify) and each Pod\'s moments; by default the lead finding is shown with its evidence, first check and fix, the others one line each'
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_using_subcommand gate" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l output-file -l file -d 'The file to write, gzip-compressed when its name ends in .gz; `-` writes to stdout. A symlink is written through. Its folder is checked before anything is read' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -s o -l output -d 'Format of the file (default: from its name, .json or .json.gz for JSON, else YAML)' -r -f -a "yaml\t''
json\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -s f -l snapshot -d 'Read the objects from this file instead of a cluster (an mdiag snapshot, or `kubectl get -o yaml|json` output; `-` reads stdin) and write them back: the target\'s chain, or everything' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l log-bytes -d 'Keep at most this many bytes of each log (the end of it)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l log-lines -d 'Keep at most this many lines of each log (the last ones)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l concurrency -d 'Log reads to run at once' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -s h -l help -d 'Print help'
complete -c mdiag -n "__fish_mdiag_using_subcommand snapshot" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l allow-file -d 'Let tool calls read snapshot files in this directory (and below it) or this one file; repeat it for more. Without it a call may read no file but the one `--snapshot` names. Paths are resolved when the server starts; a path a call names is resolved too (`..` and symlinks followed), and refused unless it ends up inside one of these' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s l -l selector -d 'Label selector to filter workloads (as kubectl -l)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s f -l snapshot -d 'Read objects from a file instead of a cluster: an mdiag snapshot, or `kubectl get -o yaml|json` output (.gz is decompressed; `-` reads stdin)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l at -d 'Judge the snapshot as it stood at this time (RFC 3339) instead of its capture time: what it dates after TIME is left out (docs/contract.md)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s A -l all-namespaces -d 'Look in every namespace'
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -s o -l output -d 'Output format (json and yaml: the entries in full, schema mdiag/v1)' -r -f -a "table\t'For people: cause, checks, fix and verification'
json\t'The entries as JSON (schema mdiag/v1)'
yaml\t'The same as YAML'"
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l width -d 'Wrap the entries to N columns (default: the terminal\'s width; when stdout is not a terminal, $COLUMNS, else 80)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -s f -l snapshot -d 'Read objects from a file instead of a cluster: an mdiag snapshot, or `kubectl get -o yaml|json` output (.gz is decompressed; `-` reads stdin)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l at -d 'Judge the snapshot as it stood at this time (RFC 3339) instead of its capture time: what it dates after TIME is left out (docs/contract.md)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l context -d 'The kubeconfig context to use; triage reads several at once when given a comma-separated list (`--context prod-eu,prod-us`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -s n -l namespace -d 'Namespace of the target (default: the context\'s namespace, or the one in the snapshot)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l lang -d 'Language of the explanations (default: from LANG)' -r -f -a "en\t''
zh\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l color -d 'When to colour the output (NO_COLOR is honoured)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l resource -d 'The ModelService resource, if not found by its short name `msvc` (e.g. `modelservices.modeldock.io`)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l controller -d 'Where the ModelService controller runs, as NS/NAME (default: modeldock-controller in the target namespace, then in modeldock-system)' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l request-timeout -d 'How long to wait for each API request, and for the kubeconfig\'s credential plugin: 30s, 2m, or a number of seconds' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l redact -d 'Also replace text matching this regular expression, in everything printed or written: objects, logs, evidence, names (repeatable). Credential-like environment values and probe headers, ConfigMap binaryData and the last-applied annotation are always replaced' -r
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l list -d 'List every finding id with its title (as with no argument)'
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -l no-default-redaction -d 'Keep the shapes of credentials (JWTs, Bearer and Basic values, passwords in URLs and DSNs, signed URLs, webhooks, private keys, cloud and API tokens, password= pairs and --password VALUE flags) that are otherwise replaced in output, logs, messages and snapshot files'
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mdiag -n "__fish_mdiag_using_subcommand explain" -s V -l version -d 'Print version'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "trace" -d 'Trace one ModelService (or deploy/NAME, sts/NAME, ds/NAME, rs/NAME, pod/NAME): the object chain, each Pod\'s moments, where the rollout stopped, why, and what to run next'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "triage" -d 'Rank every ModelService (and plain Deployment, StatefulSet, DaemonSet, ReplicaSet no Deployment owns, ownerless Pod, and what fails outside them) of a namespace, or of all with -A, by how broken it is: one line each, worst first'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "gate" -d 'Wait on a rollout after `helm upgrade`: exit 0 the moment it serves, 1 on a definitive symptom, 3 on timeout; write reports and evidence for CI'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "snapshot" -d 'Capture the evidence (objects, events, current and previous logs) into one file that every command reads back with --snapshot'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "mcp" -d 'Serve trace, triage, explain and a snapshot file\'s summary to an agent as Model Context Protocol tools, on stdin and stdout'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "explain" -d 'Explain a symptom: the documented cause, the check, the fix and how to verify it'
complete -c mdiag -n "__fish_mdiag_using_subcommand help; and not __fish_seen_subcommand_from trace triage gate snapshot mcp explain help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'

function __fish_mdiag_explain_needs_id
    __fish_mdiag_using_subcommand explain
    and not __fish_seen_subcommand_from pod-unschedulable resource-claim-pending scheduler-silent pod-not-started init-container-failing crash-loop container-config-error container-cannot-run oom-killed probe-kills-startup image-pull-denied image-pull-not-found image-pull-timeout image-pull-failed readiness-failing endpoints-not-ready selector-mismatch port-mismatch service-missing endpoints-stale dns-check controller-not-converging deployment-not-observed deployment-missing pods-not-created rollout-surge-blocked progress-deadline-exceeded rollout-paused managed-deployment-edited field-conflict hpa-metrics-unavailable hpa-at-max hpa-target-missing node-not-ready pdb-blocking pod-evicted pod-failed job-failed group-not-ready model-not-loaded rollout-in-progress update-on-delete
end

complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pod-unschedulable' -d 'Pod cannot be placed on any node (FailedScheduling)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'resource-claim-pending' -d 'The Pod asks for an accelerator or a claim that no node can meet'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'scheduler-silent' -d 'Pod is pending and no scheduler has looked at it'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pod-not-started' -d 'Pod is bound to a node but its containers have not started'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'init-container-failing' -d 'An init container fails or stalls, so the Pod never starts'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'crash-loop' -d 'Container keeps crashing (CrashLoopBackOff)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'container-config-error' -d 'Container configuration cannot be built (CreateContainerConfigError)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'container-cannot-run' -d 'Container command cannot be executed'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'oom-killed' -d 'Container was killed for running out of memory (OOMKilled)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'probe-kills-startup' -d 'The liveness or startup probe kills the container before it is ever healthy'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'image-pull-denied' -d 'Registry refused the image pull (denied or unauthorized)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'image-pull-not-found' -d 'Image reference does not exist in the registry (manifest unknown)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'image-pull-timeout' -d 'Registry could not be reached in time (pull timeout)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'image-pull-failed' -d 'Image pull failed for another or unknown reason'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'readiness-failing' -d 'Containers are running but the Pod is not Ready'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'endpoints-not-ready' -d 'Service has no ready endpoints'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'selector-mismatch' -d 'Service selector does not match the workload\'s Pods'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'port-mismatch' -d 'Service port does not reach the port the application listens on'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'service-missing' -d 'The ModelService has no Service'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'endpoints-stale' -d 'EndpointSlice lists Pods that no longer exist'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'dns-check' -d 'DNS problems must be checked from inside the cluster (advice)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'controller-not-converging' -d 'ModelService controller is not converging on the current spec'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'deployment-not-observed' -d 'Deployment controller has not observed the latest Deployment spec'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'deployment-missing' -d 'The ModelService has no Deployment'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pods-not-created' -d 'The ReplicaSet cannot create its Pods (FailedCreate)'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'rollout-surge-blocked' -d 'Rolling update is blocked because surge Pods do not fit'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'progress-deadline-exceeded' -d 'Deployment exceeded its progress deadline'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'rollout-paused' -d 'Deployment or Argo Rollout paused'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'managed-deployment-edited' -d 'The controller-managed Deployment was edited directly'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'field-conflict' -d 'Two managers own the same field'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'hpa-metrics-unavailable' -d 'HPA cannot read its metrics'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'hpa-at-max' -d 'HPA is capped at maxReplicas'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'hpa-target-missing' -d 'HPA scale target cannot be found'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'node-not-ready' -d 'Pod is on a node that is NotReady or unreachable'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pdb-blocking' -d 'PodDisruptionBudget allows no disruption'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pod-evicted' -d 'Pod evicted by the kubelet under node pressure'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'pod-failed' -d 'A run-to-completion Pod failed'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'job-failed' -d 'Job failed'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'group-not-ready' -d 'A group of Pods that serve together has a Pod that is not Ready'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'model-not-loaded' -d 'The serving platform says the model failed to load'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'rollout-in-progress' -d 'Rollout or rollback is still moving'
complete -c mdiag -n "__fish_mdiag_explain_needs_id" -f -a 'update-on-delete' -d 'Pods wait to be deleted before they take the new revision (OnDelete)'
