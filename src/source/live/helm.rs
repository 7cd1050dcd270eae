//! A Helm release's status, from its storage Secrets' labels only.

use super::*;
use mdiag_core::catalogue::Message;

/// A Helm release's status and revision, read from the labels of Helm's
/// storage Secrets as metadata only: the Secret's data (the release, values
/// included) is never requested. A refused read is a gap, not an error.
pub async fn read_helm_release(
    conn: &Connection,
    name: &str,
    namespace: &str,
) -> Result<HelmRelease, LiveError> {
    let mut release = HelmRelease {
        name: name.to_string(),
        namespace: namespace.to_string(),
        ..HelmRelease::default()
    };
    let params = ListParams::default().labels(&format!("owner=helm,name={name}"));
    let path = Secret::url_path(&(), Some(namespace));
    let listed: Result<kube::core::ObjectList<kube::core::PartialObjectMeta<Secret>>, _> = conn
        .send_json(&|| {
            kube::core::Request::new(&path)
                .list_metadata(&params.clone().limit(conn.policy.page_size))
        })
        .await;
    match listed {
        Ok(list) => {
            release.read = true;
            let newest = list
                .items
                .iter()
                .filter_map(|s| {
                    let labels = s.metadata.labels.as_ref()?;
                    let version = labels.get("version")?.parse::<i64>().ok()?;
                    Some((version, labels.get("status").cloned()))
                })
                .max_by_key(|(v, _)| *v);
            match newest {
                Some((version, status)) => {
                    release.revision = Some(version);
                    release.status = status;
                }
                None => release.notes.push(
                    Message::new("helm.no_release")
                        .arg("name", name)
                        .arg("quoted", format!("{name:?}"))
                        .arg("namespace", namespace),
                ),
            }
        }
        Err(e) => match conn.classify(&e) {
            Failure::Fatal(f) => return Err(f),
            Failure::Absent | Failure::Gap(_) => {
                let why = match &e {
                    kube::Error::Api(s) => s.message.clone(),
                    other => other.to_string(),
                };
                release.gap = Some(Gap {
                    contexts: Vec::new(),
                    resource: "secrets".into(),
                    namespace: Some(namespace.to_string()),
                    verb: "list".into(),
                    name: None,
                    reason: why.clone(),
                    complete_with: None,
                    read_in: Vec::new(),
                });
                release
                    .notes
                    .push(Message::new("helm.unreadable").arg("why", why));
            }
        },
    }
    Ok(release)
}
