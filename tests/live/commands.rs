//! The catalogue's jsonpath commands, filled with the real names of a
//! serving ModelService, run by the cluster's own kubectl: each must exit 0
//! (kubectl rejects a malformed jsonpath, such as doubled braces, with exit
//! 1). tests/suite/commands.rs checks their shape without a cluster.

use std::collections::BTreeMap;

use libtest_mimic::{Failed, Trial};
use mdiag_core::catalogue::{catalogue, fill, placeholders_in};

use super::{HEALTHY, apply, namespace, spec, until_live, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("catalogue_jsonpath_commands_run", || {
        let ns = namespace("commands")?;
        apply(&ns, &spec("ready"))?;
        until_live(&ns, HEALTHY)?;
        let w = world();
        // What the HPA and PDB commands are about (the harness may write;
        // a rerun finds them there).
        let create = |args: &[&str]| -> Result<(), Failed> {
            match w.kubectl(args) {
                Err(e) if !format!("{e:#}").contains("AlreadyExists") => {
                    Err(format!("{e:#}").into())
                }
                _ => Ok(()),
            }
        };
        create(&[
            "-n",
            &ns,
            "create",
            "poddisruptionbudget",
            "chart-demo",
            "--selector=app=chart-demo",
            "--min-available=1",
        ])?;
        create(&[
            "-n",
            &ns,
            "autoscale",
            "deployment",
            "chart-demo",
            "--min=2",
            "--max=3",
        ])?;
        // What the InferenceService commands are about: KServe's resource
        // (this project's CRD for it) and one named like the workload.
        super::real_platforms::install_crd()?;
        super::real_jobs::kubectl_apply(
            &ns,
            vec![super::real_platforms::inference_service(
                &ns,
                "chart-demo",
                "huggingface",
            )],
        )?;
        // And the Rollout commands: Argo's CRD, and a Rollout named so.
        super::real_platforms::install_rollout_crd()?;
        super::real_jobs::kubectl_apply(
            &ns,
            vec![super::real_platforms::rollout(&ns, "chart-demo", false)],
        )?;
        // And the LeaderWorkerSet commands: this project's CRD, and one so
        // named.
        super::real_platforms::install_lws_crd()?;
        super::real_jobs::kubectl_apply(
            &ns,
            vec![super::real_platforms::leader_worker_set(
                &ns,
                "chart-demo",
                1,
            )],
        )?;
        // And the Knative Service commands: this project's CRDs, and one so
        // named.
        super::real_platforms::install_knative_crds()?;
        super::real_jobs::kubectl_apply(
            &ns,
            vec![super::real_platforms::knative_service(
                &ns,
                "chart-demo",
                false,
            )],
        )?;
        let vars = real_names(&ns)?;
        let mut ran = 0;
        let mut failed = Vec::new();
        for e in &catalogue().entries {
            for template in e.check.iter().filter(|c| c.contains("jsonpath=")) {
                let command = fill(template, &vars);
                let words = command.argv();
                if words.first().map(String::as_str) != Some("kubectl") {
                    continue;
                }
                let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
                ran += 1;
                if let Err(err) = w.kubectl(&args) {
                    failed.push(format!("{}: `{command}`: {err:#}", e.id));
                }
            }
        }
        if ran < 20 {
            return Err(format!("only {ran} jsonpath commands ran").into());
        }
        if !failed.is_empty() {
            return Err(failed.join("\n").into());
        }
        Ok(())
    })]
}

/// The names the commands need, read from the cluster.
fn real_names(ns: &str) -> Result<BTreeMap<String, String>, Failed> {
    let w = world();
    let get = |args: &[&str]| -> Result<String, Failed> {
        let out = w.kubectl(args)?;
        let out = out.trim().trim_matches('\'').to_string();
        if out.is_empty() {
            return Err(format!("kubectl {args:?} printed nothing").into());
        }
        Ok(out)
    };
    let first = |resource: &str, path: &str| {
        get(&[
            "-n",
            ns,
            "get",
            resource,
            "-o",
            &format!("jsonpath={{.items[0].{path}}}"),
        ])
    };
    let pod = first("pods", "metadata.name")?;
    let mut vars = BTreeMap::new();
    for (key, value) in [
        ("namespace", ns.to_string()),
        ("modelservice", "chart-demo".to_string()),
        ("inferenceservice", "chart-demo".to_string()),
        ("rollout", "chart-demo".to_string()),
        ("leaderworkerset", "chart-demo".to_string()),
        ("knativeservice", "chart-demo".to_string()),
        ("resource", "msvc".to_string()),
        ("deployment", first("deployments", "metadata.name")?),
        // `{workload}` names a StatefulSet or DaemonSet as kind/NAME; the
        // namespace has a Deployment, which parses the same jsonpath.
        (
            "workload",
            format!("deployment/{}", first("deployments", "metadata.name")?),
        ),
        ("replicaset", first("replicasets", "metadata.name")?),
        ("service", first("services", "metadata.name")?),
        ("node", first("pods", "spec.nodeName")?),
        ("container", first("pods", "spec.containers[0].name")?),
        ("hpa", first("hpa", "metadata.name")?),
        ("pdb", first("pdb", "metadata.name")?),
        ("controller_namespace", "modeldock-system".to_string()),
        ("controller", "modeldock-controller".to_string()),
        ("pod", pod),
        // No Job runs in this namespace: a Job's commands select its Pods
        // by label, which parses (and lists nothing) with any name.
        ("job", "no-such-job".to_string()),
        ("cronjob", "no-such-cronjob".to_string()),
    ] {
        vars.insert(key.to_string(), value);
    }
    // Every placeholder a jsonpath command uses has a value.
    for e in &catalogue().entries {
        for c in e.check.iter().filter(|c| c.contains("jsonpath=")) {
            for p in placeholders_in(c) {
                if !vars.contains_key(&p) {
                    return Err(format!("no value for {{{p}}} in `{c}`").into());
                }
            }
        }
    }
    Ok(vars)
}
