//! Self-contained kubeconfig files (certificates embedded as *-data).

use std::io::Write;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::pki::{self, Identity, Pki};
use super::procs;

pub const CLUSTER_NAME: &str = "mdiag";

/// Writes a kubeconfig (mode 0600) for `id` talking to `server`.
pub fn write(path: &Path, server: &str, pki: &Pki, id: &Identity) -> anyhow::Result<()> {
    let ca = STANDARD.encode(pki::read(&pki.ca_crt())?);
    let crt = STANDARD.encode(pki::read(&pki.client_crt(id))?);
    let key = STANDARD.encode(pki::read(&pki.client_key(id))?);
    let user = id.user;
    let context = format!("{user}@{CLUSTER_NAME}");
    let text = format!(
        "# Written by `cargo xtask cluster up`.\n\
         apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CLUSTER_NAME}\n  \
           cluster:\n    \
             server: {server}\n    \
             certificate-authority-data: {ca}\n\
         users:\n\
         - name: {user}\n  \
           user:\n    \
             client-certificate-data: {crt}\n    \
             client-key-data: {key}\n\
         contexts:\n\
         - name: {context}\n  \
           context:\n    \
             cluster: {CLUSTER_NAME}\n    \
             user: {user}\n    \
             namespace: default\n\
         current-context: {context}\n\
         preferences: {{}}\n"
    );
    let mut f = procs::private_file(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// One cluster of a kubeconfig of several ([`write_contexts`]).
pub struct ContextOf<'a> {
    /// The context's name; its cluster and user entries are named after it.
    pub name: &'a str,
    pub server: &'a str,
    pub pki: &'a Pki,
    pub id: &'a Identity,
}

/// Writes one kubeconfig (mode 0600) holding a context per cluster, the
/// first current: what `kubectl config view --flatten` of each cluster's
/// own file, renamed, would hold.
pub fn write_contexts(path: &Path, contexts: &[ContextOf]) -> anyhow::Result<()> {
    let (mut clusters, mut users, mut names) = (String::new(), String::new(), String::new());
    for c in contexts {
        let ca = STANDARD.encode(pki::read(&c.pki.ca_crt())?);
        let crt = STANDARD.encode(pki::read(&c.pki.client_crt(c.id))?);
        let key = STANDARD.encode(pki::read(&c.pki.client_key(c.id))?);
        let name = c.name;
        clusters.push_str(&format!(
            "- name: {name}-cluster\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\n",
            c.server
        ));
        users.push_str(&format!(
            "- name: {name}-user\n  user:\n    client-certificate-data: {crt}\n    client-key-data: {key}\n"
        ));
        names.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}-cluster\n    user: {name}-user\n    namespace: default\n"
        ));
    }
    let current = contexts.first().map_or("", |c| c.name);
    let text = format!(
        "# Written by the harness: one context per cluster.\n\
         apiVersion: v1\nkind: Config\n\
         clusters:\n{clusters}users:\n{users}contexts:\n{names}\
         current-context: {current}\npreferences: {{}}\n"
    );
    let mut f = procs::private_file(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
