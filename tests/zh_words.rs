//! `--lang zh` is Chinese throughout (issue 13 item 4): no English word is
//! left in the human trace views of any demo or fixture, except what is not
//! mdiag's to translate: the cluster's own words (object names, reasons,
//! event and log messages, label values: every string of the input file),
//! field paths, commands, finding ids and the Kubernetes terms of
//! [`ALLOWED`].

use std::collections::BTreeSet;
mod common;

use std::path::Path;

use assert_cmd::Command;

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .env("LANG", "C");
    cmd
}

/// Words of Kubernetes and of its tools that Chinese Kubernetes texts keep
/// in English (kubernetes.io/zh-cn writes `Pod`, `Deployment`, `kubelet`,
/// `requests`...), and the field names and values mdiag quotes as the API
/// spells them. Each is a name, not an English word a reader must know.
const ALLOWED: &[&str] = &[
    // Kinds and objects.
    "ModelService",
    "ModelServices",
    "Deployment",
    "Deployments",
    "ReplicaSet",
    "ReplicaSets",
    "StatefulSet",
    "StatefulSets",
    "DaemonSet",
    "DaemonSets",
    "ControllerRevision",
    "ControllerRevisions",
    "Pod",
    "Pods",
    "Service",
    "Services",
    "EndpointSlice",
    "EndpointSlices",
    "Node",
    "Nodes",
    "Lease",
    "Leases",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "ResourceQuota",
    "LimitRange",
    "PodSecurity",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "HPA",
    "PDB",
    "PVC",
    "StorageClass",
    "Webhook",
    "API",
    // Components and tools.
    "kubelet",
    "apiserver",
    "kube",
    "scheduler",
    "controller",
    "manager",
    "kubectl",
    "mdiag",
    "helm",
    "Helm",
    "chart",
    "values",
    "kind",
    "CNI",
    "DNS",
    "UTC",
    "QoS",
    "Guaranteed",
    // Field names and API values mdiag quotes as the API spells them.
    "generation",
    "observedGeneration",
    "nodeName",
    "exitCode",
    "reason",
    "status",
    "spec",
    "limits",
    "requests",
    "memory",
    "cpu",
    "nvidia",
    "failureThreshold",
    "maxSurge",
    "maxUnavailable",
    "updateStrategy",
    "partition",
    "OnDelete",
    "RollingUpdate",
    "httpGet",
    "tcpSocket",
    "exec",
    "grpc",
    "probe",
    "uid",
    "ready",
    "true",
    "false",
    "True",
    "False",
    "Unknown",
    "Running",
    "Ready",
    "Progressing",
    "ReplicaFailure",
    "ScalingActive",
    "AbleToScale",
    "ScalingLimited",
    "PodScheduled",
    "ownerReference",
    "managedFields",
    "selector",
    "labels",
    "taints",
    "holderIdentity",
    "renewTime",
    "leaseDurationSeconds",
    "targetPort",
    "readinessProbe",
    "initialDelaySeconds",
    "periodSeconds",
    "nodeSelector",
    "tolerations",
    "toleration",
    "affinity",
    "imagePullSecrets",
    // Single-capital reasons and API values (PascalCase ones with two
    // capitals or more, and acronyms, pass by their shape: see `api_word`).
    "Started",
    "Pulled",
    "Created",
    "Scheduled",
    "Pending",
    "Terminating",
    "Failed",
    "Recreate",
    "Role",
    "Container",
    // Lower-case API fields, resources and RBAC verbs the texts quote.
    "command",
    "args",
    "env",
    "key",
    "optional",
    "allocatable",
    "replicas",
    "desired",
    "current",
    "value",
    "conditions",
    "phase",
    "services",
    "endpointslices",
    "replicasets",
    "events",
    "leases",
    "list",
    "get",
    "watch",
    "create",
    "update",
    "apply",
    "delete",
    "privileged",
    "revision",
    "forbidden",
    // Terms of images, registries, nodes and Linux that Chinese Kubernetes
    // texts keep in English.
    "manifest",
    "digest",
    "tag",
    "registry",
    "mirror",
    "localhost",
    "webhook",
    "kubeconfig",
    "sandbox",
    "init",
    "shell",
    "entrypoint",
    "distroless",
    "taint",
    "cordon",
    "drain",
    "cgroup",
    "killer",
    "ndots",
    "curl",
    "nslookup",
    "getent",
    "hosts",
    "credential",
    "provider",
    "admission",
    "limit",
    "message",
    "toomanyrequests",
    "Docker",
    "Hub",
    "conflict",
    "invalid",
    // English terms the Chinese texts give in parentheses after their own
    // words: 调度门控（scheduling gate）, 工作集（working set）.
    "scheduling",
    "gate",
    "working",
    "set",
    // EndpointSlice fields and conditions.
    "endpoints",
    "serving",
    "terminating",
    // A registry's words, which catalogue titles quote in parentheses.
    "unknown",
    "denied",
    "unauthorized",
];

/// API words by their shape: camelCase field names (`availableReplicas`),
/// PascalCase reasons and kinds with two capitals or more (`OOMKilled`,
/// `ReadWriteOnce`) and acronyms (`CPU`, `UID`).
fn api_word(w: &str) -> bool {
    let first = w.chars().next().unwrap_or('a');
    let capitals = w.chars().filter(|c| c.is_ascii_uppercase()).count();
    (first.is_ascii_lowercase() && capitals > 0) || capitals >= 2
}

/// The line without what it quotes: “…” and "…" hold the cluster's words
/// (a registry's answer, an event message) or a command.
fn unquoted(line: &str) -> String {
    let mut out = String::new();
    let mut inside: Option<char> = None;
    for c in line.chars() {
        match (inside, c) {
            (None, '“') => inside = Some('”'),
            (None, '"') => inside = Some('"'),
            (Some(end), c) if c == end => inside = None,
            (Some(_), _) => {}
            (None, c) => out.push(c),
        }
    }
    out
}

/// Strings of the input file: everything the cluster said (names, reasons,
/// messages, labels, images, logs), word by word.
fn cluster_words(file: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let mut strings = Vec::new();
    collect(&value, &mut strings);
    let mut words = BTreeSet::new();
    for s in strings {
        for w in s.split(|c: char| !c.is_ascii_alphabetic()) {
            if !w.is_empty() {
                words.insert(w.to_string());
            }
        }
    }
    words
}

fn collect(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// What is left of a line once the text mdiag does not translate is taken
/// out: commands (to the end of the line), field paths and other tokens with
/// `.`, `[`, `=`, `/`, `:` or `-` in them (paths, ids, images, labels,
/// `crash-loop`), durations and flags.
fn translatable(line: &str) -> String {
    let mut line = line.to_string();
    for command in ["kubectl ", "mdiag ", "helm ", "jsonpath="] {
        if let Some(at) = line.find(command) {
            line.truncate(at);
        }
    }
    line.split(|c: char| c.is_whitespace() || "，：；（）、·“”…←→".contains(c))
        .filter(|token| {
            let t = token.trim_matches(|c: char| "()[],;:'\"".contains(c));
            !(t.contains(['.', '[', '=', '/', ':', '-', '_', '{', '<'])
                || t.starts_with('-')
                || t.chars().next().is_some_and(|c| c.is_ascii_digit()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn english_words(out: &str, cluster: &BTreeSet<String>) -> Vec<String> {
    let allowed: BTreeSet<&str> = ALLOWED.iter().copied().collect();
    let mut found = Vec::new();
    let mut continued = false;
    for line in out.lines() {
        // A command's continuation lines (`... \`) are the command.
        let was_continued = continued;
        continued = line.ends_with(" \\");
        if was_continued {
            continue;
        }
        for word in translatable(&unquoted(line)).split(|c: char| !c.is_ascii_alphabetic()) {
            if word.len() >= 3
                && !allowed.contains(word)
                && !cluster.contains(word)
                && !api_word(word)
            {
                found.push(format!("{word:<16} in: {}", line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_chinese_views_hold_no_english_word_of_mdiags_own() {
    let mut failures = Vec::new();
    for (file, target) in common::expected_fixtures() {
        let cluster = cluster_words(&file);
        for verbose in [false, true] {
            let mut args = vec![
                "trace",
                &target,
                "--snapshot",
                &file,
                "--lang",
                "zh",
                "--width",
                "1000",
            ];
            if verbose {
                args.push("-v");
            }
            let out = mdiag().args(&args).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(!text.is_empty(), "{file}: no output");
            for w in english_words(&text, &cluster) {
                failures.push(format!("{file}{}: {w}", if verbose { " -v" } else { "" }));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} English words:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The check itself finds what it is for, and lets through what it must.
#[test]
fn the_check_finds_english_and_passes_names_paths_and_commands() {
    let cluster: BTreeSet<String> = ["CrashLoopBackOff", "server"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let found = english_words(
        "container server exits with code 1\n\
         证据 status.containerStatuses[server].state.waiting = CrashLoopBackOff\n\
         检查 kubectl -n lab logs web -c server --previous\n\
         next: kubectl get pod web -o \\\n  jsonpath='{.status}'\n\
         ✘ error crash-loop pod/web 容器 server 以退出码 1 退出，已重启 6 次",
        &cluster,
    );
    let words: Vec<&str> = found
        .iter()
        .map(|f| f.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        words,
        ["container", "exits", "with", "code", "next", "error"],
        "{found:#?}"
    );
}
