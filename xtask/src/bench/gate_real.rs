//! `cargo xtask bench gate --real-node`: time to verdict on the real node,
//! for every scenario of `mdiag_harness::scenarios::all()` (the table the
//! real-node trials assert), beside `kubectl rollout status`, Helm 3's
//! `helm upgrade --wait` and Helm 4's `helm upgrade --wait=watcher`.
//!
//! Each scenario starts from the same place: a fresh namespace, the
//! scenario's objects, the first release installed with Helm 3 (`helm
//! upgrade --install`, no wait) and a `mdiag gate` that converges on it.
//! Then the change, timed from its start:
//!
//! - an upgrade ([`Change::Upgrade`]) runs three times, each in a namespace
//!   of its own set up as above, because a Helm that waits holds the
//!   upgrade until it decides, and the gate must not start before the
//!   upgrade is applied: (1) a plain Helm 3 `helm upgrade`, then at once
//!   `mdiag gate` and `kubectl rollout status` together (as CI steps
//!   would run them); (2) Helm 3 `helm upgrade --wait`; (3) Helm 4 `helm
//!   upgrade --wait=watcher`. Fresh namespaces rather than a rollback
//!   between runs: after a rollback the old ReplicaSet, the quota's usage
//!   and the revision numbers are not where a first upgrade finds them.
//!   (The node's image cache is shared: a tag pulled by the first run is
//!   there for the next; pulls from the local registry take about 0.1 s.)
//! - the others have no upgrade to wait for, so only the gate and kubectl
//!   run, started together once the change is in the API: the Service's
//!   selector patched to match nothing (the stand-in controller paused,
//!   as it would put it back), or the kubelet and containerd stopped
//!   (`cluster::stop_kubelet`, as the live trial does; the tools start once the Node is no longer
//!   Ready, their seconds still count from the stop).
//!
//! It runs inside the cluster's network namespace (the cluster's addresses
//! exist only there): from the host it builds mdiag and both Helms (that
//! needs the network) and runs itself again in there, as `cluster`
//! commands do.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use mdiag_harness::cluster::{self, Layout};
use mdiag_harness::helm::{self, Helm};
use mdiag_harness::helpers::pause_controller_blocking;
use mdiag_harness::images::Images;
use mdiag_harness::node::{self, ns};
use mdiag_harness::scenarios::{self, Change, Scenario};

use super::gate_common::{GateBench, Verdict, cell, gate, spawn_kubectl, time_child, timed};

/// The mdiag binary the inner run uses (built by the outer one).
const MDIAG_ENV: &str = "MDIAG_BENCH_MDIAG";
/// Helm's release name (and so the ModelService's, the Deployment's).
const RELEASE: &str = scenarios::NAME;
/// What a Helm cell says for a change that is not an upgrade.
const NOT_AN_UPGRADE: &str = "n/a (not an upgrade)";

pub fn run(args: &GateBench) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    let picked = pick(&args.only)?;
    if !ns::inside() {
        let holder = crate::cluster::live_holder(&layout).context(
            "no real-node cluster is running here; start it first: cargo xtask cluster up --real-node",
        )?;
        // No network inside: build (or find) everything first.
        let mdiag = super::measure::mdiag_binary()?;
        let helm3 = helm::binary()?;
        let helm4 = helm::binary_v4()?;
        eprintln!(
            "running {} scenario(s) inside network namespace {} (budget {} s per command)",
            picked.len(),
            holder.netns,
            args.budget_secs
        );
        return crate::cluster::run_inside_with(
            &holder,
            &crate::cluster::this_args(),
            &[
                (MDIAG_ENV, mdiag.into_os_string()),
                ("MDIAG_HELM", helm3.into_os_string()),
                ("MDIAG_HELM4", helm4.into_os_string()),
            ],
        );
    }
    Bench::new(layout, args)?.run(&picked)
}

/// The scenarios `--only` names (all of them without it); an unknown name
/// is an error that lists the known ones.
fn pick(only: &[String]) -> anyhow::Result<Vec<Scenario>> {
    let all = scenarios::all();
    let unknown: Vec<&String> = only
        .iter()
        .filter(|o| !all.iter().any(|s| s.name == o.as_str()))
        .collect();
    if !unknown.is_empty() {
        let names: Vec<&str> = all.iter().map(|s| s.name).collect();
        bail!(
            "no real-node scenario named {unknown:?}; the scenarios are: {}",
            names.join(", ")
        );
    }
    Ok(all
        .into_iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| o == s.name))
        .collect())
}

struct Bench {
    layout: Layout,
    images: Images,
    mdiag: PathBuf,
    helm3: Helm,
    helm4: Helm,
    kubectl: PathBuf,
    chart: PathBuf,
    budget: Duration,
    budget_secs: u64,
}

/// One row of the table.
struct Row {
    scenario: String,
    gate: Verdict,
    kubectl: Verdict,
    helm3: Option<Verdict>,
    helm4: Option<Verdict>,
}

impl Bench {
    fn new(layout: Layout, args: &GateBench) -> anyhow::Result<Bench> {
        for name in ["kube-apiserver", node::KUBELET, "mdiag-sim"] {
            if !cluster::running(&layout, name) {
                bail!(
                    "{name} is not running: start the cluster with `cargo xtask cluster up --real-node`"
                );
            }
        }
        let images = Images::load(layout.dir())
            .context("this cluster has no real node's images (start it with --real-node)")?;
        let mdiag = std::env::var_os(MDIAG_ENV)
            .map(PathBuf::from)
            .context("run `cargo xtask bench gate --real-node` from the host, not inside")?;
        let kubectl = layout
            .bin_dir()
            .context("no BIN_DIR in cluster.env")?
            .join("kubectl");
        Ok(Bench {
            helm3: Helm::for_layout(&layout)?,
            helm4: Helm::v4_for_layout(&layout)?,
            layout,
            images,
            mdiag,
            kubectl,
            chart: helm::chart_demo(),
            budget: Duration::from_secs(args.budget_secs),
            budget_secs: args.budget_secs,
        })
    }

    fn run(&self, picked: &[Scenario]) -> anyhow::Result<()> {
        println!(
            "| scenario | mdiag gate | kubectl rollout status | helm upgrade --wait (Helm 3) | helm upgrade --wait=watcher (Helm 4) |\n|---|---|---|---|---|"
        );
        for s in picked {
            let row = match s.change {
                Change::Upgrade => self.upgrade(s)?,
                Change::SelectorMatchesNothing => self.selector(s)?,
                Change::KubeletStopped => self.node_lost(s)?,
            };
            let na = || NOT_AN_UPGRADE.to_string();
            println!(
                "| {} | {} | {} | {} | {} |",
                row.scenario,
                self.gate_cell(s, &row.gate),
                cell(&row.kubectl),
                row.helm3.as_ref().map_or_else(na, cell),
                row.helm4.as_ref().map_or_else(na, cell),
            );
        }
        println!(
            "\n(seconds from the start of the change to each command's exit; budget {} s; \
             exit code, then what it said. Upgrades: the gate and kubectl start together \
             after a plain Helm 3 `helm upgrade`; each Helm waits in a run of its own. \
             The first release is Helm 3's in every run.)",
            self.budget_secs
        );
        Ok(())
    }

    /// The gate's cell, with what the trials expect when it differs.
    fn gate_cell(&self, s: &Scenario, v: &Verdict) -> String {
        let want = s.expect.gate;
        let said = format!("{} {}", want.outcome, want.decided_by);
        if v.code == Some(want.exit_code) && v.said == said.trim() {
            cell(v)
        } else {
            format!(
                "{} (the trials expect exit {}: {})",
                cell(v),
                want.exit_code,
                said.trim()
            )
        }
    }

    fn upgrade(&self, s: &Scenario) -> anyhow::Result<Row> {
        let values = helm::chart_values(&(s.upgrade)(&self.images));

        // (1) helm upgrade, then the gate and kubectl at once.
        let ns = namespace(s, "");
        self.prepare(s, &ns)?;
        progress(
            &ns,
            "upgrade (Helm 3, no wait), then mdiag gate and kubectl",
        );
        let t0 = Instant::now();
        self.helm3
            .try_upgrade_install_values(RELEASE, &ns, &self.chart, &values, None)?
            .check()?;
        let (gate, kubectl) = self.gate_and_kubectl(&ns, t0)?;
        self.cleanup(&ns);

        // (2), (3): each Helm's own wait.
        let mut waits = Vec::new();
        for (helm, tag, what) in [
            (&self.helm3, "-helm3", "Helm 3 --wait"),
            (&self.helm4, "-helm4", "Helm 4 --wait=watcher"),
        ] {
            let ns = namespace(s, tag);
            self.prepare(s, &ns)?;
            progress(&ns, &format!("upgrade with {what}"));
            let t0 = Instant::now();
            let run = helm.try_upgrade_install_values(
                RELEASE,
                &ns,
                &self.chart,
                &values,
                Some(self.budget),
            )?;
            waits.push(helm_verdict(&run, t0));
            self.cleanup(&ns);
        }
        let helm4 = waits.pop();
        let helm3 = waits.pop();
        Ok(Row {
            scenario: s.name.to_string(),
            gate,
            kubectl,
            helm3,
            helm4,
        })
    }

    fn selector(&self, s: &Scenario) -> anyhow::Result<Row> {
        let ns = namespace(s, "");
        self.prepare(s, &ns)?;
        progress(
            &ns,
            "controller paused, Service selector patched to match nothing",
        );
        let admin = self.layout.admin_kubeconfig();
        pause_controller_blocking(&admin, true)?;
        let measured = self.patch_selector_and_measure(&ns);
        let resumed = pause_controller_blocking(&admin, false);
        let (gate, kubectl) = measured?;
        resumed?;
        self.cleanup(&ns);
        Ok(Row {
            scenario: s.name.to_string(),
            gate,
            kubectl,
            helm3: None,
            helm4: None,
        })
    }

    fn node_lost(&self, s: &Scenario) -> anyhow::Result<Row> {
        let ns = namespace(s, "");
        self.prepare(s, &ns)?;
        progress(&ns, "kubelet stopped (its containers go on running)");
        let t0 = Instant::now();
        cluster::stop_kubelet(&self.layout)?;
        let measured = self.measure_lost_node(&ns, t0);
        // Whatever happened, the node comes back for what runs next.
        let started = cluster::start_kubelet_again(&self.layout);
        let ((gate, kubectl), seconds) = measured?;
        started?;
        self.cleanup(&ns);
        Ok(Row {
            scenario: format!("{} (Node not Ready {seconds:.1} s after the stop)", s.name),
            gate,
            kubectl,
            helm3: None,
            helm4: None,
        })
    }

    /// Patches the Service's selector (the controller is paused), then the
    /// gate and kubectl, timed from the patch.
    fn patch_selector_and_measure(&self, ns: &str) -> anyhow::Result<(Verdict, Verdict)> {
        let t0 = Instant::now();
        let patch = serde_json::to_string(&scenarios::selector_patch())?;
        cluster::admin_kubectl(
            &self.layout,
            &[
                "-n",
                ns,
                "patch",
                "service",
                RELEASE,
                "--type=merge",
                "-p",
                &patch,
            ],
        )?;
        self.gate_and_kubectl(ns, t0)
    }

    /// Once the Node is no longer Ready, the gate and kubectl, timed from
    /// `t0` (the stop); also the seconds the Node took to go.
    fn measure_lost_node(
        &self,
        ns: &str,
        t0: Instant,
    ) -> anyhow::Result<((Verdict, Verdict), f64)> {
        let not_ready = self.wait_node_not_ready(t0)?;
        let seconds = t0.elapsed().as_secs_f64();
        progress(
            ns,
            &format!("node no longer Ready ({not_ready}) after {seconds:.1} s"),
        );
        Ok((self.gate_and_kubectl(ns, t0)?, seconds))
    }

    /// Waits (up to the budget) for the real Node's Ready condition to be
    /// other than True; returns its status.
    fn wait_node_not_ready(&self, t0: Instant) -> anyhow::Result<String> {
        let jsonpath = r#"jsonpath={.status.conditions[?(@.type=="Ready")].status}"#;
        loop {
            let status = cluster::admin_kubectl(
                &self.layout,
                &["get", "node", node::NODE_NAME, "-o", jsonpath],
            )?;
            let status = status.trim();
            if status != "True" {
                return Ok(format!("Ready={status}"));
            }
            if t0.elapsed() > self.budget {
                bail!(
                    "node {} still Ready {} s after its kubelet stopped",
                    node::NODE_NAME,
                    self.budget_secs
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// A fresh namespace with the scenario's objects and the first release,
    /// on which the gate has converged.
    fn prepare(&self, s: &Scenario, ns: &str) -> anyhow::Result<()> {
        progress(ns, "namespace, objects, first release (Helm 3)");
        self.delete_namespace(ns)?;
        cluster::admin_kubectl(&self.layout, &["create", "namespace", ns])?;
        let objects = scenarios::objects_yaml(s, ns);
        if !objects.trim().is_empty() {
            let file = self.layout.dir().join(format!("{ns}.objects.yaml"));
            fs::write(&file, objects).with_context(|| format!("writing {}", file.display()))?;
            let path = file.display().to_string();
            cluster::admin_kubectl(&self.layout, &["apply", "-f", &path])?;
        }
        let first = helm::chart_values(&scenarios::first_release(&self.images));
        self.helm3
            .try_upgrade_install_values(RELEASE, ns, &self.chart, &first, None)?
            .check()?;
        let converged = gate(&self.mdiag, &self.layout, ns, self.budget, Instant::now())?;
        if converged.code != Some(0) {
            bail!(
                "{ns}: the first release did not converge in {:.0} s: exit {:?}, {}",
                converged.seconds,
                converged.code,
                converged.said
            );
        }
        progress(
            ns,
            &format!("first release converged in {:.1} s", converged.seconds),
        );
        Ok(())
    }

    /// `mdiag gate` and `kubectl rollout status` started together, timed
    /// from `t0`.
    fn gate_and_kubectl(&self, ns: &str, t0: Instant) -> anyhow::Result<(Verdict, Verdict)> {
        let rollout = time_child(
            spawn_kubectl(&self.kubectl, &self.layout, ns, self.budget)?,
            t0,
        );
        let gate = gate(&self.mdiag, &self.layout, ns, self.budget, t0)?;
        let kubectl = timed(rollout)?;
        Ok((gate, kubectl))
    }

    /// Deletes the namespace and waits for it to be gone (its Pods would
    /// take the node's CPU from the next run); a failure is only reported.
    fn cleanup(&self, ns: &str) {
        if let Err(e) = self.delete_namespace(ns) {
            eprintln!("[bench {ns}] warning: {e:#}");
        }
        let _ = fs::remove_file(self.layout.dir().join(format!("{ns}.objects.yaml")));
    }

    fn delete_namespace(&self, ns: &str) -> anyhow::Result<()> {
        cluster::admin_kubectl(
            &self.layout,
            &[
                "delete",
                "namespace",
                ns,
                "--ignore-not-found",
                "--wait=true",
                "--timeout=180s",
            ],
        )
        .map(|_| ())
    }
}

/// The first non-empty line of `s`, at most `max` characters.
fn first_line(s: &str, max: usize) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(max)
        .collect()
}

/// `bench-real-<scenario><tag>`.
fn namespace(s: &Scenario, tag: &str) -> String {
    format!("bench-real-{}{tag}", s.name)
}

fn progress(ns: &str, what: &str) {
    eprintln!("[bench {ns}] {what}");
}

/// A Helm run as a verdict: its `STATUS:` line when it succeeded, else the
/// first line of its error (Helm 4's name the object and its kstatus, so
/// they get more room than other commands' lines).
fn helm_verdict(run: &helm::HelmRun, t0: Instant) -> Verdict {
    let said = if run.success() {
        run.stdout
            .lines()
            .find_map(|l| l.strip_prefix("STATUS: "))
            .map_or_else(|| first_line(&run.stdout, 160), str::to_string)
    } else {
        first_line(&run.stderr, 160)
    };
    Verdict {
        code: run.status.code(),
        seconds: t0.elapsed().as_secs_f64(),
        said,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_scenarios_of_the_table() {
        let picked = pick(&["image-not-found".into(), "healthy".into()]).unwrap();
        // In the table's order, whatever the order given.
        let names: Vec<&str> = picked.iter().map(|s| s.name).collect();
        assert_eq!(names, ["healthy", "image-not-found"]);
        assert_eq!(pick(&[]).unwrap().len(), scenarios::all().len());
        let err = format!("{:#}", pick(&["crash-loop".into()]).err().unwrap());
        assert!(err.contains("\"crash-loop\""), "{err}");
        assert!(err.contains("crash-exit-1"), "{err}");
    }

    #[test]
    fn namespaces_are_valid_names() {
        for s in scenarios::all() {
            for tag in ["", "-helm3", "-helm4"] {
                let ns = namespace(&s, tag);
                assert!(ns.len() <= 63, "{ns}");
                assert!(
                    ns.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                    "{ns}"
                );
            }
        }
    }

    #[test]
    fn a_helm_that_timed_out_says_its_error() {
        let run = helm::HelmRun {
            args: vec![],
            status: exit_status(1),
            stdout: String::new(),
            stderr: "\nError: UPGRADE FAILED: resource ModelService/ns/chart-demo not ready. status: InProgress\ncontext deadline exceeded\n".into(),
            elapsed: Duration::from_secs(1),
        };
        let v = helm_verdict(&run, Instant::now());
        assert_eq!(v.code, Some(1));
        assert!(
            v.said
                .starts_with("Error: UPGRADE FAILED: resource ModelService"),
            "{}",
            v.said
        );
        let run = helm::HelmRun {
            status: exit_status(0),
            stdout: "Release \"chart-demo\" has been upgraded.\nSTATUS: deployed\nREVISION: 2\n"
                .into(),
            stderr: String::new(),
            ..run
        };
        assert_eq!(helm_verdict(&run, Instant::now()).said, "deployed");
    }

    fn exit_status(code: i32) -> std::process::ExitStatus {
        std::process::Command::new("sh")
            .args(["-c", &format!("exit {code}")])
            .status()
            .unwrap()
    }
}
