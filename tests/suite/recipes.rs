//! The pipeline recipes (docs/ci.md and the files it shows, docs/ci/) and
//! the krew manifest (docs/krew/mdiag.yaml): each file parses as YAML of
//! the shape its tool reads, every mdiag command line in them parses with
//! mdiag's own command-line definition, the RBAC grants what mdiag reads and
//! nothing that writes, and docs/ci.md shows each file as it is. The live
//! trial `recipes-*` (tests/live/recipes.rs) applies the manifests to the
//! test cluster with `--dry-run=server`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::Parser;
use mdiag::cli::{Cli, Command};
use mdiag_source::plan::{self, Planned, Visit, Where};
use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    let path = repo().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
}

fn yaml_docs(rel: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(&read(rel))
        .unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v}"))
}

/// Parses one mdiag command line with the binary's own definition: the
/// whole line, `gate --html FILE` included.
fn parse_mdiag(words: &[String], whence: &str) -> Cli {
    Cli::try_parse_from(words).unwrap_or_else(|e| panic!("{whence}: {words:?} does not parse: {e}"))
}

/// The value of `--flag` in a command line.
fn flag<'a>(words: &'a [String], name: &str) -> Option<&'a str> {
    let at = words.iter().position(|w| w == name)?;
    words.get(at + 1).map(String::as_str)
}

/// Expands `$NAME` and `${NAME}` from `vars`; every variable a command
/// uses must be one the file defines.
fn expand(word: &str, vars: &BTreeMap<String, String>, whence: &str) -> String {
    let re = regex::Regex::new(r"\$\{(\w+)\}|\$(\w+)").unwrap();
    re.replace_all(word, |c: &regex::Captures| {
        let name = c.get(1).or(c.get(2)).unwrap().as_str();
        vars.get(name)
            .unwrap_or_else(|| panic!("{whence}: ${name} is not defined in the file"))
            .clone()
    })
    .into_owned()
}

/// The mdiag command lines of a shell script (continuation lines joined),
/// split into words as the shell would, variables expanded.
fn mdiag_lines(script: &str, vars: &BTreeMap<String, String>, whence: &str) -> Vec<Vec<String>> {
    script
        .replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("mdiag "))
        .map(|l| {
            shlex::split(l)
                .unwrap_or_else(|| panic!("{whence}: cannot split {l:?}"))
                .iter()
                .map(|w| expand(w, vars, whence))
                .collect()
        })
        .collect()
}

fn string_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect()
}

/// What every CI recipe's gate must do: wait on the release's ModelService
/// and write the JSON report, the JUnit and the HTML report, and the
/// evidence, each into the directory the job publishes.
fn check_ci_gate(words: &[String], published: &str, whence: &str) {
    let cli = parse_mdiag(words, whence);
    let Command::Gate(gate) = &cli.command else {
        panic!("{whence}: {words:?} is not `mdiag gate`");
    };
    assert_eq!(gate.target, "chart-demo", "{whence}");
    assert_eq!(cli.global.namespace.as_deref(), Some("modeldock-lab"));
    assert_eq!(gate.helm_release.as_deref(), Some("chart-demo"));
    assert_eq!(gate.timeout, std::time::Duration::from_secs(600));
    for (name, ext) in [
        ("--report", ".json"),
        ("--junit", ".xml"),
        ("--html", ".html"),
        ("--evidence", ".yaml.gz"),
    ] {
        let file = flag(words, name).unwrap_or_else(|| panic!("{whence}: no {name}"));
        assert!(
            file.starts_with(published) && file.ends_with(ext),
            "{whence}: {name} {file} is not a {ext} under {published}"
        );
    }
    let parsed = [&gate.report, &gate.junit, &gate.evidence];
    assert!(parsed.iter().all(|p| p.is_some()), "{whence}: {gate:?}");
}

#[test]
fn the_github_actions_job_upgrades_then_gates_and_publishes_the_reports() {
    let rel = "docs/ci/github-actions.yml";
    let doc = yaml(rel);
    assert!(doc.get("on").is_some(), "{rel}: no `on` trigger: {doc}");
    let jobs = doc["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let job = &jobs["deploy"];
    assert!(job["runs-on"].is_string());
    let vars = string_map(&job["env"]);
    let steps = job["steps"].as_array().expect("steps");
    let mut order = Vec::new();
    let mut gates = 0;
    let action = regex::Regex::new(r"^[\w.-]+/[\w.-]+@v\d+$").unwrap();
    for (i, step) in steps.iter().enumerate() {
        assert!(
            step.get("run").is_some() != step.get("uses").is_some(),
            "{rel}: step {i} needs exactly one of run and uses: {step}"
        );
        let Some(script) = step["run"].as_str() else {
            let uses = str_at(step, "/uses");
            assert!(
                action.is_match(uses),
                "{rel}: `uses: {uses}` is not owner/action@vN"
            );
            order.push(uses.split('@').next().unwrap().to_string());
            continue;
        };
        if script.contains("helm upgrade --install") {
            order.push("helm upgrade".into());
        }
        for words in mdiag_lines(script, &vars, rel) {
            check_ci_gate(&words, "mdiag-gate/", rel);
            gates += 1;
            order.push("mdiag gate".into());
            // The step keeps the gate's exit code (explained per code) and
            // ends with it, so the job fails when the gate does.
            for code in ["0)", "1)", "3)", "4)", "5)"] {
                assert!(script.contains(code), "{rel}: exit {code} not explained");
            }
            assert!(script.trim_end().ends_with("exit \"$code\""), "{rel}");
        }
    }
    assert_eq!(gates, 1, "{rel}: one mdiag gate");
    let pos = |what: &str| {
        order
            .iter()
            .position(|o| o == what)
            .unwrap_or_else(|| panic!("{rel}: no {what} in {order:?}"))
    };
    assert!(pos("helm upgrade") < pos("mdiag gate"));
    // Published after the gate, also when it failed.
    for publisher in ["mikepenz/action-junit-report", "actions/upload-artifact"] {
        assert!(pos(publisher) > pos("mdiag gate"), "{rel}: {publisher}");
        let step = steps
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(publisher)))
            .unwrap();
        assert_eq!(step["if"], "${{ !cancelled() }}", "{rel}: {publisher}");
    }
    let junit = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.contains("junit")))
        .unwrap();
    assert_eq!(junit["with"]["report_paths"], "mdiag-gate/gate.xml");
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.contains("upload-artifact"))
        })
        .unwrap();
    assert_eq!(upload["with"]["path"], "mdiag-gate/");
}

#[test]
fn the_gitlab_job_upgrades_then_gates_and_publishes_the_reports() {
    let rel = "docs/ci/gitlab-ci.yml";
    let doc = yaml(rel);
    let vars = string_map(&doc["variables"]);
    let stages: Vec<&str> = doc["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let job = &doc["deploy-staging"];
    assert!(stages.contains(&str_at(job, "/stage")), "{rel}");
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("script")
        .iter()
        .map(|l| l.as_str().expect("script lines are strings"))
        .collect();
    let helm = script
        .iter()
        .position(|l| l.starts_with("helm upgrade --install"))
        .expect("helm upgrade");
    let mut gates = Vec::new();
    for (i, line) in script.iter().enumerate() {
        for words in mdiag_lines(line, &vars, rel) {
            check_ci_gate(&words, "mdiag-gate/", rel);
            gates.push(i);
        }
    }
    assert_eq!(gates.len(), 1, "{rel}: one mdiag gate");
    assert!(helm < gates[0], "{rel}: helm upgrade first");
    // Kept and reported whatever the gate said.
    let artifacts = &job["artifacts"];
    assert_eq!(artifacts["when"], "always");
    assert_eq!(artifacts["reports"]["junit"], "mdiag-gate/gate.xml");
    assert!(
        artifacts["paths"]
            .as_array()
            .unwrap()
            .contains(&"mdiag-gate/".into())
    );
}

/// `{{args.NAME}}` of an AnalysisTemplate, filled from its own defaults
/// and then from `given` (what a Rollout or a Kargo Stage passes).
fn fill_args(text: &str, template: &Value, given: &BTreeMap<String, String>) -> String {
    let mut values: BTreeMap<String, String> = template["spec"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| Some((a["name"].as_str()?.into(), a["value"].as_str()?.into())))
        .collect();
    values.extend(given.clone());
    let re = regex::Regex::new(r"\{\{\s*args\.([\w-]+)\s*\}\}").unwrap();
    let filled = re.replace_all(text, |c: &regex::Captures| {
        values
            .get(&c[1])
            .unwrap_or_else(|| panic!("args.{} has no value", &c[1]))
            .clone()
    });
    assert!(!filled.contains("{{"), "{filled}");
    filled.into_owned()
}

/// Checks an AnalysisTemplate that runs the gate as a Job; returns its
/// namespace and the ServiceAccount the Job runs as.
fn check_analysis_template(
    template: &Value,
    given: &BTreeMap<String, String>,
    whence: &str,
) -> (String, String) {
    assert_eq!(template["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(template["kind"], "AnalysisTemplate");
    let metrics = template["spec"]["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 1, "{whence}");
    let metric = &metrics[0];
    // One measurement, which fails the analysis when the Job fails.
    assert_eq!(metric["count"], 1);
    assert_eq!(metric["failureLimit"], 0);
    let job = &metric["provider"]["job"]["spec"];
    assert_eq!(
        job["backoffLimit"], 0,
        "{whence}: a failed gate is not retried"
    );
    let pod = &job["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    let words: Vec<String> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .chain(c["args"].as_array().unwrap())
        .map(|w| fill_args(w.as_str().unwrap(), template, given))
        .collect();
    let cli = parse_mdiag(&words, whence);
    let Command::Gate(gate) = &cli.command else {
        panic!("{whence}: {words:?} is not `mdiag gate`");
    };
    assert_eq!(gate.target, given.get("target").map_or("chart-demo", |t| t));
    assert_eq!(cli.global.namespace.as_deref(), Some("modeldock-lab"));
    // The Job outlives the gate's own deadline, so the gate decides.
    let deadline = job["activeDeadlineSeconds"].as_u64().expect("deadline");
    assert!(gate.timeout.as_secs() < deadline, "{whence}");
    (
        str_at(template, "/metadata/namespace").into(),
        str_at(pod, "/serviceAccountName").into(),
    )
}

/// The kinds mdiag's read plan lists, with their API group and where.
fn planned_reads() -> Vec<(String, &'static str, Where)> {
    struct Collect(Vec<(String, &'static str, Where)>);
    impl Visit for Collect {
        fn visit<K: Planned>(&mut self, at: Where) {
            self.0.push((K::group(&()).into_owned(), K::RESOURCE, at));
        }
    }
    let mut c = Collect(Vec::new());
    plan::each_list(&mut c);
    c.0
}

/// (namespace or "" for the cluster, group, resource) -> verbs, of every
/// Role and ClusterRole that a binding gives `subject` (ns, name).
fn granted(
    docs: &[Value],
    subject: (&str, &str),
) -> BTreeMap<(String, String, String), BTreeSet<String>> {
    let mut out: BTreeMap<(String, String, String), BTreeSet<String>> = BTreeMap::new();
    for binding in docs
        .iter()
        .filter(|d| d["kind"] == "RoleBinding" || d["kind"] == "ClusterRoleBinding")
    {
        let names_subject = binding["subjects"].as_array().unwrap().iter().any(|s| {
            s["kind"] == "ServiceAccount" && s["namespace"] == subject.0 && s["name"] == subject.1
        });
        if !names_subject {
            continue;
        }
        let at = binding["metadata"]["namespace"].as_str().unwrap_or("");
        let role_ref = &binding["roleRef"];
        let role = docs
            .iter()
            .find(|d| {
                d["kind"] == role_ref["kind"]
                    && d["metadata"]["name"] == role_ref["name"]
                    && (d["kind"] == "ClusterRole" || d["metadata"]["namespace"] == at)
            })
            .unwrap_or_else(|| panic!("{role_ref} is not defined"));
        for rule in role["rules"].as_array().unwrap() {
            for group in rule["apiGroups"].as_array().unwrap() {
                for resource in rule["resources"].as_array().unwrap() {
                    let key = (
                        at.to_string(),
                        group.as_str().unwrap().to_string(),
                        resource.as_str().unwrap().to_string(),
                    );
                    let verbs = rule["verbs"].as_array().unwrap();
                    out.entry(key)
                        .or_default()
                        .extend(verbs.iter().map(|v| v.as_str().unwrap().to_string()));
                }
            }
        }
    }
    out
}

/// The ServiceAccount may do what mdiag does, in the target's namespace,
/// the controller's and kube-system, and nothing else.
fn check_rbac(docs: &[Value], subject: (&str, &str), whence: &str) {
    assert!(
        docs.iter().any(|d| d["kind"] == "ServiceAccount"
            && d["metadata"]["namespace"] == subject.0
            && d["metadata"]["name"] == subject.1),
        "{whence}: no ServiceAccount {subject:?}"
    );
    let grants = granted(docs, subject);
    let read = ["get", "list", "watch"];
    for ((ns, group, resource), verbs) in &grants {
        let allowed: &[&str] = if resource == "pods/log" {
            &["get"]
        } else {
            &read
        };
        assert!(
            verbs.iter().all(|v| allowed.contains(&v.as_str())),
            "{whence}: {verbs:?} on {group}/{resource} in {ns:?} is more than reading"
        );
    }
    let can = |ns: &str, group: &str, resource: &str| {
        grants
            .get(&(ns.into(), group.into(), resource.into()))
            .is_some_and(|v| read.iter().all(|r| v.contains(*r)))
    };
    let target = "modeldock-lab";
    for (group, resource, at) in planned_reads() {
        let ns = match at {
            Where::Scope => target,
            Where::Cluster => "",
            Where::In(ns) => ns,
        };
        assert!(
            can(ns, &group, resource),
            "{whence}: {group}/{resource} cannot be read in {ns:?}"
        );
    }
    // Discovery-found kinds, the controller (by name, watched by the
    // gate) and the crash logs.
    assert!(can(target, "modeldock.io", "modelservices"));
    assert!(can(target, "gateway.networking.k8s.io", "httproutes"));
    // The controller is looked for in the target's namespace first.
    assert!(can(target, "coordination.k8s.io", "leases"));
    assert!(can("modeldock-system", "apps", "deployments"));
    assert!(can("modeldock-system", "coordination.k8s.io", "leases"));
    assert!(
        grants
            .get(&(target.into(), String::new(), "pods/log".into()))
            .is_some_and(|v| v.contains("get")),
        "{whence}: pods/log"
    );
    assert!(
        !grants.keys().any(|(_, _, r)| r == "secrets"),
        "{whence}: no Secret reads"
    );
}

#[test]
fn the_argo_rollouts_template_gates_as_a_read_only_service_account() {
    let rel = "docs/ci/argo-rollouts.yaml";
    let docs = yaml_docs(rel);
    assert_eq!(docs.len(), 1);
    // A Rollout's analysis step passes the target.
    let given = BTreeMap::from([("target".to_string(), "chart-demo".to_string())]);
    let (ns, account) = check_analysis_template(&docs[0], &given, rel);
    let rbac = yaml_docs("docs/ci/rbac.yaml");
    check_rbac(&rbac, (&ns, &account), "docs/ci/rbac.yaml");
}

#[test]
fn the_kargo_stage_verifies_with_the_gate_template() {
    let rel = "docs/ci/kargo.yaml";
    let docs = yaml_docs(rel);
    let of = |kind: &str| -> Vec<&Value> { docs.iter().filter(|d| d["kind"] == kind).collect() };
    let stages = of("Stage");
    assert_eq!(stages.len(), 1);
    let stage = stages[0];
    // The shape of Kargo's Stage (kargo.akuity.io/v1alpha1): requested
    // Freight is required and comes from a Warehouse; verification names
    // AnalysisTemplates and passes args.
    assert_eq!(stage["apiVersion"], "kargo.akuity.io/v1alpha1");
    let freight = stage["spec"]["requestedFreight"].as_array().unwrap();
    assert!(!freight.is_empty());
    for f in freight {
        assert_eq!(f["origin"]["kind"], "Warehouse");
        assert!(f["origin"]["name"].is_string());
        assert!(f["sources"]["direct"] == true || f["sources"]["stages"].is_array());
    }
    let verification = &stage["spec"]["verification"];
    let given: BTreeMap<String, String> = verification["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (str_at(a, "/name").into(), str_at(a, "/value").into()))
        .collect();
    let refs = verification["analysisTemplates"].as_array().unwrap();
    assert_eq!(refs.len(), 1);
    let template = of("AnalysisTemplate")
        .into_iter()
        .find(|t| t["metadata"]["name"] == refs[0]["name"])
        .expect("the template the Stage names");
    assert_eq!(
        template["metadata"]["namespace"],
        stage["metadata"]["namespace"]
    );
    let (ns, account) = check_analysis_template(template, &given, rel);
    // The roles are rbac.yaml's; the bindings and the account are Kargo's.
    let mut all = yaml_docs("docs/ci/rbac.yaml");
    all.retain(|d| d["kind"] == "Role" || d["kind"] == "ClusterRole");
    all.extend(docs.iter().cloned());
    check_rbac(&all, (&ns, &account), rel);
}

#[test]
fn docs_ci_md_shows_every_recipe_as_it_is_and_explains_the_exit_codes() {
    let doc = read("docs/ci.md");
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("docs/ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let block = format!("```yaml\n{text}```\n");
        assert!(
            doc.contains(&block),
            "docs/ci.md does not show docs/ci/{name} as it is (a ```yaml block)"
        );
        assert!(doc.contains(&format!("(ci/{name})")), "no link to {name}");
    }
    for code in [
        "| 0 |", "| 1 |", "| 3 |", "| 4 |", "| 5 |", "| 2 |", "| 130 |",
    ] {
        assert!(doc.contains(code), "docs/ci.md: exit code row {code}");
    }
    assert!(doc.contains("--html"), "docs/ci.md names the --html flag");
}

#[test]
fn the_krew_manifest_has_the_shape_krew_installs() {
    let rel = "docs/krew/mdiag.yaml";
    let m = yaml(rel);
    assert_eq!(
        m["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(m["kind"], "Plugin");
    assert_eq!(m["metadata"]["name"], "mdiag");
    let spec = &m["spec"];
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        spec["version"],
        version.as_str(),
        "{rel}: Cargo.toml's version"
    );
    let short = str_at(spec, "/shortDescription");
    assert!(!short.is_empty() && short.len() <= 50, "{short:?}");
    assert!(str_at(spec, "/description").len() > short.len());
    assert!(str_at(spec, "/homepage").starts_with("https://"));
    let sha = regex::Regex::new("^[0-9a-f]{64}$").unwrap();
    let platforms = spec["platforms"].as_array().expect("platforms");
    let mut seen = BTreeSet::new();
    for p in platforms {
        let labels = &p["selector"]["matchLabels"];
        let os = str_at(labels, "/os");
        let arch = str_at(labels, "/arch");
        assert!(["linux", "darwin"].contains(&os), "{os}");
        assert!(["amd64", "arm64"].contains(&arch), "{arch}");
        assert!(seen.insert((os, arch)), "{os}/{arch} twice");
        let uri = str_at(p, "/uri");
        assert!(uri.starts_with("https://") && uri.ends_with(".tar.gz"));
        assert!(uri.contains(&format!("/{version}/")), "{uri}: the version");
        let rust_arch = if arch == "amd64" { "x86_64" } else { "aarch64" };
        assert!(
            uri.contains(rust_arch)
                && uri.contains(if os == "linux" {
                    "linux"
                } else {
                    "apple-darwin"
                })
        );
        assert!(sha.is_match(str_at(p, "/sha256")), "{uri}: sha256");
        assert_eq!(p["bin"], "kubectl-mdiag");
        let files = p["files"].as_array().expect("files");
        assert!(
            files
                .iter()
                .any(|f| f["from"] == "kubectl-mdiag" && f["to"] == "."),
            "{uri}: the binary is installed"
        );
    }
    assert_eq!(seen.len(), 4);
}
