//! The pipeline recipes of docs/ci/ against the test cluster: Argo
//! Rollouts' CRDs installed from its Go module (read from the module cache,
//! downloaded by `prebuild` before the network namespace), then every
//! manifest applied with `--dry-run=server --validate=strict`, the Job
//! templates also as plain Jobs, and the RBAC applied for real and used: a
//! `mdiag gate` as its ServiceAccount converges with nothing it could not
//! read, and one without it cannot decide. tests/suite/recipes.rs checks the same
//! files without a cluster.
//!
//! Kargo's Stage is not applied: github.com/akuity/kargo is not served by
//! the Go module proxy (every version answers 403 "not available"), so its
//! CRD cannot be installed from there (docs/ci.md says so).

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Failed, Trial};
use serde_json::{Value, json};

use super::{HEALTHY, apply, mdiag, namespace, repo, spec, token_kubeconfig, until_live, world};

/// The Argo Rollouts release whose CRDs the manifests are checked against
/// (v1.10.2 asks for go 1.26.10, newer than the harness's Go).
pub(super) const ARGO_ROLLOUTS: &str = "github.com/argoproj/argo-rollouts@v1.10.1";
const ARGO_CRDS: [&str; 3] = [
    "analysis-template-crd.yaml",
    "cluster-analysis-template-crd.yaml",
    "analysis-run-crd.yaml",
];

fn go() -> PathBuf {
    if let Some(go) = std::env::var_os("GO") {
        return go.into();
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("go"))
        .find(|p| p.is_file());
    on_path.unwrap_or_else(|| "/usr/local/go/bin/go".into())
}

/// The directory of a module in the Go module cache; `online` may fetch it
/// through the module proxy, otherwise only the cache is read.
pub(super) fn module_dir(module: &str, online: bool) -> anyhow::Result<PathBuf> {
    let mut cmd = Command::new(go());
    cmd.args(["mod", "download", "-json", module])
        .current_dir(std::env::temp_dir())
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod");
    if !online {
        cmd.env("GOPROXY", "off").env("GOSUMDB", "off");
    }
    let out = cmd.output()?;
    let info: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        anyhow::anyhow!(
            "go mod download {module}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(err) = info["Error"].as_str() {
        anyhow::bail!("go mod download {module}: {err}");
    }
    let dir = info["Dir"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("go mod download {module} gave no Dir: {info}"))?;
    Ok(dir.into())
}

/// Before the network namespace: the module with the CRDs, into the cache
/// (the Rollout's too, for tests/live/real_platforms.rs).
pub fn prebuild() -> anyhow::Result<()> {
    let dir = module_dir(ARGO_ROLLOUTS, true)?;
    for crd in ARGO_CRDS
        .iter()
        .chain(&[super::real_platforms::ROLLOUT_CRD])
    {
        let path = dir.join("manifests/crds").join(crd);
        anyhow::ensure!(path.is_file(), "{ARGO_ROLLOUTS} has no {}", path.display());
    }
    Ok(())
}

fn err(e: impl std::fmt::Display) -> Failed {
    e.to_string().into()
}

fn kubectl(args: &[&str]) -> Result<String, Failed> {
    world().kubectl(args).map_err(|e| format!("{e:#}").into())
}

/// A file of the cluster's directory holding `docs` (JSON, one list).
fn write_list(name: &str, docs: &[Value]) -> Result<PathBuf, Failed> {
    let path = world().layout.dir().join(name);
    let list = json!({"apiVersion": "v1", "kind": "List", "items": docs});
    std::fs::write(&path, serde_json::to_string_pretty(&list).map_err(err)?).map_err(err)?;
    Ok(path)
}

fn docs_of(rel: &str) -> Result<Vec<Value>, Failed> {
    let text = std::fs::read_to_string(repo().join(rel)).map_err(err)?;
    Ok(serde_saphyr::from_multiple::<Value>(&text)
        .map_err(err)?
        .into_iter()
        .filter(|d| !d.is_null())
        .collect())
}

fn dry_run(path: &Path) -> Result<String, Failed> {
    kubectl(&[
        "apply",
        "--dry-run=server",
        "--validate=strict",
        "-f",
        path.to_str().unwrap(),
    ])
}

fn install_argo_crds() -> Result<(), Failed> {
    let dir = module_dir(ARGO_ROLLOUTS, false)
        .map_err(|e| format!("{e:#} (the live ring's prebuild downloads it)"))?;
    for crd in ARGO_CRDS {
        let path = dir.join("manifests/crds").join(crd);
        // Server-side: the CRDs are larger than the last-applied annotation allows.
        kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            path.to_str().unwrap(),
        ])?;
    }
    for name in [
        "analysistemplates.argoproj.io",
        "clusteranalysistemplates.argoproj.io",
        "analysisruns.argoproj.io",
    ] {
        kubectl(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/{name}"),
            "--timeout=60s",
        ])?;
    }
    Ok(())
}

/// The namespaces a manifest names (they must exist for a server dry-run).
fn ensure_namespaces(docs: &[Value]) -> Result<(), Failed> {
    let mut seen: Vec<&str> = docs
        .iter()
        .filter_map(|d| d["metadata"]["namespace"].as_str())
        .collect();
    seen.sort();
    seen.dedup();
    for ns in seen {
        world()
            .block_on(mdiag_harness::ensure_namespace(&world().admin, ns))
            .map_err(err)?;
    }
    Ok(())
}

/// The AnalysisTemplate's Job, as the Job the analysis would create, with
/// `{{args.NAME}}` filled.
fn job_of(template: &Value, name: &str, target: &str) -> Value {
    let mut args: Vec<(String, String)> = template["spec"]["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| Some((a["name"].as_str()?.into(), a["value"].as_str()?.into())))
        .collect();
    args.push(("target".into(), target.into()));
    if !args.iter().any(|(n, _)| n == "namespace") {
        args.push(("namespace".into(), "modeldock-lab".into()));
    }
    let job = &template["spec"]["metrics"][0]["provider"]["job"];
    let mut text = serde_json::to_string(&job["spec"]).unwrap();
    for (k, v) in &args {
        text = text.replace(&format!("{{{{args.{k}}}}}"), v);
    }
    let mut metadata = job["metadata"].clone();
    if metadata.is_null() {
        metadata = json!({});
    }
    metadata["name"] = name.into();
    metadata["namespace"] = template["metadata"]["namespace"].clone();
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": serde_json::from_str::<Value>(&text).unwrap(),
    })
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "recipes-argo-and-kargo-manifests-pass-server-dry-run",
            || {
                install_argo_crds()?;
                let rbac = docs_of("docs/ci/rbac.yaml")?;
                let argo = docs_of("docs/ci/argo-rollouts.yaml")?;
                let kargo = docs_of("docs/ci/kargo.yaml")?;
                ensure_namespaces(&[rbac.clone(), argo.clone(), kargo.clone()].concat())?;
                let mut checked = Vec::new();
                for rel in ["docs/ci/rbac.yaml", "docs/ci/argo-rollouts.yaml"] {
                    checked.push(dry_run(&repo().join(rel))?);
                }
                // Kargo's file without its Stage (no CRD for it, see above).
                let (stages, rest): (Vec<Value>, Vec<Value>) =
                    kargo.into_iter().partition(|d| d["kind"] == "Stage");
                if stages.len() != 1 {
                    return Err(
                        format!("want one Stage in kargo.yaml, got {}", stages.len()).into(),
                    );
                }
                checked.push(dry_run(&write_list("recipes-kargo.json", &rest)?)?);
                // The Jobs the analyses would create, as batch/v1 Jobs.
                let jobs = [
                    job_of(&argo[0], "mdiag-gate-argo", "chart-demo"),
                    job_of(
                        rest.iter()
                            .find(|d| d["kind"] == "AnalysisTemplate")
                            .ok_or("no AnalysisTemplate in kargo.yaml")?,
                        "mdiag-gate-kargo",
                        "chart-demo",
                    ),
                ];
                checked.push(dry_run(&write_list("recipes-jobs.json", &jobs)?)?);
                let out = checked.join("");
                // Every object, each said to be created by the server's dry run.
                let want = rbac.len() + argo.len() + rest.len() + jobs.len();
                let lines = out
                    .lines()
                    .filter(|l| l.contains("(server dry run)"))
                    .count();
                if lines != want {
                    return Err(format!("{want} objects, {lines} dry-run lines:\n{out}").into());
                }
                Ok(())
            },
        ),
        Trial::test("recipes-rbac-is-enough-for-the-gate-and-only-reads", || {
            // rbac.yaml for real, in a namespace of its own.
            let ns = namespace("recipes")?;
            let text = std::fs::read_to_string(repo().join("docs/ci/rbac.yaml")).map_err(err)?;
            let path = world().layout.dir().join("recipes-rbac.yaml");
            std::fs::write(&path, text.replace("modeldock-lab", &ns)).map_err(err)?;
            kubectl(&["apply", "-f", path.to_str().unwrap()])?;
            apply(&ns, &spec("ready"))?;
            until_live(&ns, HEALTHY)?;
            let who = format!("system:serviceaccount:{ns}:mdiag");
            let bin = world()
                .layout
                .bin_dir()
                .ok_or("no BIN_DIR in cluster.env")?;
            let can = |args: &[&str]| -> Result<bool, Failed> {
                let out = Command::new(bin.join("kubectl"))
                    .arg("--kubeconfig")
                    .arg(world().layout.admin_kubeconfig())
                    .args(["auth", "can-i", "--as", &who, "-n", &ns])
                    .args(args)
                    .output()
                    .map_err(err)?;
                Ok(String::from_utf8_lossy(&out.stdout).trim() == "yes")
            };
            for (args, want) in [
                (&["get", "pods", "--subresource=log"][..], true),
                (&["watch", "modelservices.modeldock.io"][..], true),
                (&["list", "nodes"][..], true),
                (&["create", "pods"][..], false),
                (&["patch", "deployments.apps"][..], false),
                (&["delete", "modelservices.modeldock.io"][..], false),
                (&["create", "pods", "--subresource=exec"][..], false),
                (&["list", "secrets"][..], false),
            ] {
                if can(args)? != want {
                    return Err(format!("can-i {args:?} as {who}: want {want}").into());
                }
            }
            let gate = |kubeconfig: &Path| {
                mdiag(&[
                    "--kubeconfig",
                    kubeconfig.to_str().unwrap(),
                    "-n",
                    &ns,
                    "gate",
                    "chart-demo",
                    "--timeout",
                    "60s",
                    "-o",
                    "json",
                ])
            };
            let (code, report) = gate(&token_kubeconfig(&ns, "mdiag")?)?;
            let gaps = report["gaps"].as_array().cloned().unwrap_or_default();
            if code != 0 || report["outcome"] != "converged" || !gaps.is_empty() {
                return Err(format!(
                    "as the recipe's ServiceAccount: exit {code}, outcome {}, gaps {gaps:?}",
                    report["outcome"]
                )
                .into());
            }
            // The control: a ServiceAccount with no binding cannot decide.
            kubectl(&["-n", &ns, "create", "serviceaccount", "nobody"])?;
            let (code, report) = gate(&token_kubeconfig(&ns, "nobody")?)?;
            if code != 4 {
                return Err(format!(
                    "with no binding: exit {code} (want 4), outcome {}",
                    report["outcome"]
                )
                .into());
            }
            Ok(())
        }),
    ]
}
