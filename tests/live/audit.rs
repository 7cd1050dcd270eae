//! mdiag only reads, shown by the apiserver's audit log rather than by
//! RBAC: every request with mdiag's user agent must be a get, list or
//! watch. The trial runs `snapshot`, `gate` and `trace` with the admin's
//! kubeconfig (which could write anything), then makes one write itself
//! with mdiag's user agent through a separate client and checks that the
//! audit log shows it: the check can see a write. After every trial the
//! suite checks the whole log ([`check_whole_log`]), that one deliberate
//! write aside.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use libtest_mimic::{Failed, Trial};
use mdiag_harness::audit::{self, Request, Tally};
use mdiag_harness::cluster::Layout;
use mdiag_source::live::USER_AGENT;

use super::{HEALTHY, apply, mdiag, namespace, snapshot_file, spec, until_live, world};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "safety-audit-log-shows-mdiag-only-reads",
        probe,
    )]
}

/// The namespace and the ConfigMap of the deliberate write.
const PROBE_NAMESPACE: &str = "live-audit-probe";
const PROBE_CONFIGMAP: &str = "written-with-mdiags-user-agent";

fn is_probe_write(r: &Request) -> bool {
    r.namespace == PROBE_NAMESPACE && r.resource == "configmaps" && r.name == PROBE_CONFIGMAP
}

fn probe() -> Result<(), Failed> {
    let w = world();
    let ns = namespace("audit-probe")?;
    assert_eq!(ns, PROBE_NAMESPACE);
    apply(&ns, &spec("ready"))?;
    until_live(&ns, HEALTHY)?;

    // mdiag with the admin's credentials: RBAC would let it write.
    let admin = w.layout.admin_kubeconfig();
    let admin_arg = admin.to_str().unwrap();
    let file = snapshot_file(&ns, &["chart-demo"], &admin)?;
    let _ = std::fs::remove_file(file);
    let (code, _) = mdiag(&[
        "--kubeconfig",
        admin_arg,
        "-n",
        &ns,
        "gate",
        "chart-demo",
        "--timeout",
        "60s",
        "-o",
        "json",
    ])?;
    if code != 0 {
        return Err(format!("the gate on a healthy rollout exited {code}").into());
    }
    mdiag(&[
        "--kubeconfig",
        admin_arg,
        "-n",
        &ns,
        "trace",
        "chart-demo",
        "-o",
        "json",
    ])?;

    // One write with mdiag's user agent, through a client of the test's.
    let writer = w
        .block_on(client_as_mdiag(&w.layout))
        .map_err(|e| format!("{e:#}"))?;
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": PROBE_CONFIGMAP},
        "data": {"why": "the audit check must catch this write"},
    }))
    .map_err(|e| e.to_string())?;
    let api: Api<ConfigMap> = Api::namespaced(writer, &ns);
    match w.block_on(api.create(&PostParams::default(), &cm)) {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {} // a rerun on a kept cluster
        Err(e) => return Err(format!("the deliberate write: {e}").into()),
    }

    // The log is written as requests complete; give it a moment.
    let t0 = Instant::now();
    let tally = loop {
        let mine: Vec<Request> = audit::requests(&w.layout.audit_log(), USER_AGENT)
            .map_err(|e| format!("{e:#}"))?
            .into_iter()
            .filter(|r| r.namespace == ns)
            .collect();
        let tally = Tally::of(&mine);
        if tally.writes.iter().any(is_probe_write) || t0.elapsed() > Duration::from_secs(15) {
            break tally;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!(
        "  mdiag's requests in {ns} (with the admin's kubeconfig):\n{}",
        tally.table()
    );
    if tally.writes.len() != 1 || !is_probe_write(&tally.writes[0]) {
        return Err(format!(
            "the audit check should see exactly the deliberate write, saw {:?}",
            tally.writes
        )
        .into());
    }
    let reads = |verb: &str, resource: &str| {
        tally
            .counts
            .get(&(verb.to_owned(), resource.to_owned()))
            .copied()
            .unwrap_or(0)
    };
    // What the three commands must have asked for: a check that counts
    // nothing would pass on an empty log.
    for (verb, resource) in [("list", "pods"), ("watch", "pods"), ("get", "pods/log")] {
        if reads(verb, resource) == 0 {
            return Err(format!("no {verb} {resource} by mdiag in the audit log").into());
        }
    }
    let _ = w.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
    Ok(())
}

/// A client with the admin's credentials that says it is mdiag.
async fn client_as_mdiag(layout: &Layout) -> anyhow::Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(layout.admin_kubeconfig())?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    Ok(kube::Client::try_from(config)?)
}

/// After every trial: each request made with mdiag's user agent, in the
/// whole run, was a read (the probe's one write aside). Prints the count
/// per verb and resource.
pub fn check_whole_log(layout: &Layout) -> Result<(), String> {
    let mine = audit::requests(&layout.audit_log(), USER_AGENT).map_err(|e| format!("{e:#}"))?;
    let tally = Tally::of(&mine);
    eprintln!(
        "audit: {} requests with user agent {USER_AGENT}, by verb and resource:\n{}",
        mine.len(),
        tally.table()
    );
    let writes: Vec<&Request> = tally.writes.iter().filter(|r| !is_probe_write(r)).collect();
    if !writes.is_empty() {
        return Err(format!(
            "mdiag made {} request(s) that are not reads: {writes:?}",
            writes.len()
        ));
    }
    if mine.is_empty() {
        return Err("the audit log holds no request of mdiag's: is it recorded?".into());
    }
    Ok(())
}
