//! The apiserver's audit log, read back: which requests a user agent made,
//! by verb and resource, and which of them were not reads. The test
//! cluster's apiserver records every request of a user at Metadata level
//! (see [`POLICY`]); the live suite checks mdiag's (`mdiag/<version>`) with
//! [`requests`] and [`Tally::writes`].

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use anyhow::Context;
use serde_json::Value;

/// Metadata (who, what verb, which object; no bodies) for every request,
/// recorded once it is answered (`ResponseComplete`, or `Panic`). The
/// nodes' and the control plane's own identities are left out: they are the
/// bulk of the traffic, and mdiag never holds their credentials (it runs
/// with the viewer's or the admin's kubeconfig, which are recorded).
pub const POLICY: &str = "\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  userGroups: [\"system:nodes\"]
- level: None
  users: [\"system:kube-controller-manager\", \"system:kube-scheduler\", \"system:apiserver\"]
- level: Metadata
";

/// The verbs of reading: get (pods/log included), list and watch.
pub const READ_VERBS: &[&str] = &["get", "list", "watch"];

/// One recorded request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub verb: String,
    /// `pods`, `pods/log`, `modelservices`; the path for a non-resource
    /// request (`/version`, `/apis`).
    pub resource: String,
    pub namespace: String,
    pub name: String,
    pub user: String,
    pub user_agent: String,
    pub code: i64,
    /// The request's path and query, as the apiserver logged it.
    pub uri: String,
}

impl Request {
    fn from_event(event: &Value) -> Option<Request> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let object = &event["objectRef"];
        let resource = match object["resource"].as_str() {
            Some(r) => match object["subresource"].as_str() {
                Some(sub) => format!("{r}/{sub}"),
                None => r.to_owned(),
            },
            None => text(&event["requestURI"])
                .split('?')
                .next()
                .unwrap_or_default()
                .to_owned(),
        };
        Some(Request {
            verb: event["verb"].as_str()?.to_owned(),
            resource,
            namespace: text(&object["namespace"]),
            name: text(&object["name"]),
            user: text(&event["user"]["username"]),
            user_agent: text(&event["userAgent"]),
            code: event["responseStatus"]["code"].as_i64().unwrap_or(0),
            uri: text(&event["requestURI"]),
        })
    }

    pub fn is_read(&self) -> bool {
        READ_VERBS.contains(&self.verb.as_str())
    }
}

/// Every request in the audit log at `path` whose user agent starts with
/// `agent`. Lines that are not audit events are skipped.
pub fn requests(path: &Path, agent: &str) -> anyhow::Result<Vec<Request>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("opening the audit log {}", path.display()))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let Ok(event) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if event["kind"] != "Event" {
            continue;
        }
        if let Some(r) = Request::from_event(&event)
            && r.user_agent.starts_with(agent)
        {
            out.push(r);
        }
    }
    Ok(out)
}

/// Requests counted by verb and resource.
#[derive(Debug, Default)]
pub struct Tally {
    pub counts: BTreeMap<(String, String), usize>,
    pub writes: Vec<Request>,
}

impl Tally {
    pub fn of(requests: &[Request]) -> Tally {
        let mut tally = Tally::default();
        for r in requests {
            *tally
                .counts
                .entry((r.verb.clone(), r.resource.clone()))
                .or_default() += 1;
            if !r.is_read() {
                tally.writes.push(r.clone());
            }
        }
        tally
    }

    /// `count verb resource` lines, the most frequent first.
    pub fn table(&self) -> String {
        let mut rows: Vec<_> = self.counts.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        rows.iter()
            .map(|((verb, resource), n)| format!("{n:>7}  {verb:<6} {resource}\n"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_are_told_apart_with_subresources() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.log");
        let events = [
            r#"{"kind":"Event","verb":"list","requestURI":"/api/v1/namespaces/a/pods?limit=500","objectRef":{"resource":"pods","namespace":"a"},"user":{"username":"mdiag-viewer"},"userAgent":"mdiag/0.9.0","responseStatus":{"code":200}}"#,
            r#"{"kind":"Event","verb":"get","requestURI":"/api/v1/namespaces/a/pods/p/log?previous=true","objectRef":{"resource":"pods","subresource":"log","namespace":"a","name":"p"},"user":{"username":"mdiag-viewer"},"userAgent":"mdiag/0.9.0","responseStatus":{"code":200}}"#,
            r#"{"kind":"Event","verb":"get","requestURI":"/version","user":{"username":"admin"},"userAgent":"mdiag/0.9.0","responseStatus":{"code":200}}"#,
            r#"{"kind":"Event","verb":"patch","requestURI":"/api/v1/namespaces/a/pods/p","objectRef":{"resource":"pods","namespace":"a","name":"p"},"user":{"username":"admin"},"userAgent":"kubectl/v1.35.8","responseStatus":{"code":200}}"#,
            r#"{"kind":"Event","verb":"create","requestURI":"/api/v1/namespaces/a/configmaps","objectRef":{"resource":"configmaps","namespace":"a","name":"c"},"user":{"username":"admin"},"userAgent":"mdiag/0.9.0","responseStatus":{"code":201}}"#,
            "not json",
        ];
        std::fs::write(&log, events.join("\n")).unwrap();
        let mine = requests(&log, "mdiag/").unwrap();
        assert_eq!(mine.len(), 4, "kubectl's patch is not mdiag's");
        let tally = Tally::of(&mine);
        assert_eq!(tally.writes.len(), 1);
        assert_eq!(tally.writes[0].verb, "create");
        assert_eq!(tally.writes[0].resource, "configmaps");
        assert_eq!(tally.counts[&("get".into(), "pods/log".into())], 1);
        assert_eq!(tally.counts[&("get".into(), "/version".into())], 1);
        assert!(tally.table().contains("      1  create configmaps\n"));
    }
}
