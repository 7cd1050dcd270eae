//! `cargo xtask bench snapshot`: mdiag snapshot against `kubectl
//! cluster-info dump` of the same namespace, on the local control plane,
//! in alternating pairs; prints the medians and their ratio. `cargo xtask
//! bench trace` is the same pair with `mdiag trace` beside the `kubectl get`
//! of what it reads.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use mdiag_harness::cluster::{self, Layout};

use super::measure::{mdiag_binary, median, secs, tempfile_dir, timed};

#[derive(Args)]
pub struct SnapshotBench {
    /// Pods of the ModelService.
    #[arg(long, default_value_t = 100)]
    pods: u32,
    /// Alternating pairs of runs.
    #[arg(long, default_value_t = 7)]
    runs: u32,
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Pair {
    Snapshot,
    Trace,
}

pub(crate) fn compare(args: &SnapshotBench, pair: Pair) -> anyhow::Result<()> {
    let layout = Layout::from_env()?;
    if !cluster::running(&layout, "kube-apiserver") || !cluster::running(&layout, "mdiag-sim") {
        bail!("start the cluster first: cargo xtask cluster up");
    }
    let mdiag = mdiag_binary()?;
    let ns = "bench-snapshot";
    let kubectl = |a: &[&str]| cluster::admin_kubectl(&layout, a);
    let _ = kubectl(&["create", "namespace", ns]);
    let manifest = format!(
        "apiVersion: modeldock.io/v1alpha1\nkind: ModelService\nmetadata: {{name: chart-demo, namespace: {ns}}}\nspec: {{image: registry.example.com/modeldock/chart-demo:v1.4.0, replicas: {}}}\n",
        args.pods
    );
    let file = std::env::temp_dir().join("mdiag-bench-msvc.yaml");
    std::fs::write(&file, manifest)?;
    kubectl(&["apply", "-f", file.to_str().unwrap()])?;
    eprintln!("waiting for {} ready Pods in {ns}", args.pods);
    let t0 = Instant::now();
    loop {
        let out = kubectl(&[
            "-n",
            ns,
            "get",
            "pods",
            "-o",
            "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}",
        ])?;
        let ready = out.lines().filter(|l| *l == "True").count() as u32;
        if ready >= args.pods {
            break;
        }
        if t0.elapsed() > Duration::from_secs(300) {
            bail!("only {ready} of {} Pods ready after 5 minutes", args.pods);
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    let bin = layout.bin_dir().context("no BIN_DIR")?;
    let work = tempfile_dir()?;
    let admin = layout.admin_kubeconfig();
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for i in 0..args.runs {
        let out_file = work.join(format!("snap-{i}.yaml.gz"));
        let dump_dir = work.join(format!("dump-{i}"));
        let mut a = Command::new(&mdiag);
        let mut b = Command::new(bin.join("kubectl"));
        a.arg("--kubeconfig").arg(&admin).args(["-n", ns]);
        b.arg("--kubeconfig").arg(&admin).args(["-n", ns]);
        match pair {
            Pair::Snapshot => {
                a.args(["snapshot", "chart-demo", "--output-file"])
                    .arg(&out_file);
                b.args([
                    "cluster-info",
                    "dump",
                    "--namespaces",
                    ns,
                    "--output-directory",
                ])
                .arg(&dump_dir);
            }
            Pair::Trace => {
                a.args(["trace", "chart-demo", "-o", "json"]);
                b.args(["get", "msvc,deploy,rs,pods,endpointslices", "-o", "json"]);
            }
        }
        // Alternate which goes first, so warm caches favour neither.
        if i % 2 == 0 {
            ours.push(timed(&mut a)?);
            theirs.push(timed(&mut b)?);
        } else {
            theirs.push(timed(&mut b)?);
            ours.push(timed(&mut a)?);
        }
    }
    let (m, k) = (median(ours.clone()), median(theirs.clone()));
    let (ours_name, theirs_name) = match pair {
        Pair::Snapshot => (
            "mdiag snapshot chart-demo (objects, events, logs)".to_string(),
            format!("kubectl cluster-info dump --namespaces {ns}"),
        ),
        Pair::Trace => (
            "mdiag trace chart-demo -o json".to_string(),
            "kubectl get msvc,deploy,rs,pods,endpointslices -o json".to_string(),
        ),
    };
    println!("pods: {}, runs: {} alternating pairs", args.pods, args.runs);
    println!(
        "{ours_name}: median {:.3}s  runs {:?}",
        m.as_secs_f64(),
        secs(&ours)
    );
    println!(
        "{theirs_name}: median {:.3}s  runs {:?}",
        k.as_secs_f64(),
        secs(&theirs)
    );
    println!(
        "ratio mdiag/kubectl: {:.2}",
        m.as_secs_f64() / k.as_secs_f64()
    );
    if pair == Pair::Snapshot {
        let size = std::fs::metadata(work.join("snap-0.yaml.gz"))?.len();
        println!("snapshot file: {size} bytes gzip");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
