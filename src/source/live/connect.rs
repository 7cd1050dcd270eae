//! From the user's kubeconfig to a client, with every way that can fail
//! said in one line: the file, the context, the files it names, and the
//! credential plugin (which may fail, be missing, or never answer).

use std::time::Duration;

use kube::client::AuthError;
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError, LoadDataError};
use kube::{Client, Config};

use mdiag_core::catalogue::{Arg, Message};

use super::{Connection, LiveError, LiveOptions, ReadPolicy};

/// What every request of mdiag's says it comes from.
pub const USER_AGENT: &str = concat!("mdiag/", env!("CARGO_PKG_VERSION"));

/// The bound on building the client when no `--request-timeout` is given
/// (the CLI always gives one).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Resolves the kubeconfig, context and credentials as kubectl does
/// (exec and OIDC plugins included, through kube's config loader).
pub async fn connect(options: &LiveOptions) -> Result<Connection, LiveError> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone(),
        ..KubeConfigOptions::default()
    };
    let (mut config, context) = if let Some(path) = &options.kubeconfig {
        let shown = path.display().to_string();
        let kubeconfig = Kubeconfig::read_from(path).map_err(|e| config_error(&e, &shown))?;
        let context = options
            .context
            .clone()
            .or(kubeconfig.current_context.clone());
        let contexts = context_names(&kubeconfig);
        let config = Config::from_custom_kubeconfig(kubeconfig, &kube_options)
            .await
            .map_err(|e| with_contexts(config_error(&e, &shown), &contexts))?;
        (config, context)
    } else if options.context.is_some() || kubeconfig_present() {
        let kubeconfig = Kubeconfig::read().map_err(|e| config_error(&e, "the kubeconfig"))?;
        let context = options
            .context
            .clone()
            .or(kubeconfig.current_context.clone());
        let contexts = context_names(&kubeconfig);
        let config = Config::from_kubeconfig(&kube_options)
            .await
            .map_err(|e| with_contexts(config_error(&e, "the kubeconfig"), &contexts))?;
        (config, context)
    } else {
        let config = Config::infer().await.map_err(|e| {
            // In a Pod the in-cluster config failed for a reason worth
            // reading; elsewhere kube's chain only says both were missing.
            if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
                LiveError::Config(
                    Message::new("error.live.in_cluster").arg("detail", e.to_string()),
                )
            } else {
                LiveError::KubeconfigFile(no_kubeconfig_message())
            }
        })?;
        (config, None)
    };
    // Every request says it is mdiag's, so an audit log can show what
    // mdiag asked for (only get, list and watch).
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    if let Some(t) = options.request_timeout {
        config.read_timeout = Some(t);
        config.connect_timeout = Some(t.min(Duration::from_secs(10)));
    }
    let server = config.cluster_url.to_string();
    let default_namespace = config.default_namespace.clone();
    let plugin = credential_plugin(&config);
    let limit = options.request_timeout.unwrap_or(DEFAULT_TIMEOUT);
    let client = build_client(config, limit, plugin.as_deref()).await?;
    let mut conn = Connection::from_client(client, &server, ReadPolicy::default());
    conn.default_namespace = default_namespace;
    conn.context = context;
    conn.named_context = options.context.clone();
    conn.request_timeout = options.request_timeout;
    conn.credential_plugin = plugin;
    Ok(conn)
}

/// The contexts of the user's kubeconfig, as `kubectl config
/// get-contexts` lists them: what `triage --all-contexts` reads, and what
/// a list of names is checked against before any cluster is.
#[derive(Debug, Clone, Default)]
pub struct KubeconfigContexts {
    /// How errors name the file: its path, or `the kubeconfig`.
    pub file: String,
    /// Each context's name and the name of the cluster entry it uses.
    pub contexts: Vec<(String, String)>,
    pub current: Option<String>,
}

impl KubeconfigContexts {
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.contexts.iter().map(|(name, _)| name.as_str())
    }

    /// The context named `label`, or else the only one whose cluster entry
    /// is named so: how an alert's `cluster` label picks a context.
    pub fn for_cluster(&self, label: &str) -> Option<&str> {
        if let Some((name, _)) = self.contexts.iter().find(|(n, _)| n == label) {
            return Some(name);
        }
        let mut by_cluster = self.contexts.iter().filter(|(_, c)| c == label);
        match (by_cluster.next(), by_cluster.next()) {
            (Some((name, _)), None) => Some(name),
            _ => None,
        }
    }
}

/// Reads the kubeconfig kubectl would (`--kubeconfig`, else `$KUBECONFIG`,
/// else `~/.kube/config`) for its contexts only: no client is built.
pub fn kubeconfig_contexts(options: &LiveOptions) -> Result<KubeconfigContexts, LiveError> {
    let (kubeconfig, file) = match &options.kubeconfig {
        Some(path) => {
            let shown = path.display().to_string();
            let k = Kubeconfig::read_from(path).map_err(|e| config_error(&e, &shown))?;
            (k, shown)
        }
        None if kubeconfig_present() => (
            Kubeconfig::read().map_err(|e| config_error(&e, "the kubeconfig"))?,
            "the kubeconfig".to_string(),
        ),
        None => return Err(LiveError::KubeconfigFile(no_kubeconfig_message())),
    };
    let contexts = kubeconfig
        .contexts
        .iter()
        .map(|c| {
            let cluster = c
                .context
                .as_ref()
                .map(|x| x.cluster.clone())
                .unwrap_or_default();
            (c.name.clone(), cluster)
        })
        .collect();
    Ok(KubeconfigContexts {
        file,
        contexts,
        current: kubeconfig.current_context.clone(),
    })
}

/// Neither a kubeconfig nor a Pod's service account: where mdiag looked,
/// and the ways on.
fn no_kubeconfig_message() -> Message {
    let default = std::env::home_dir().map_or_else(
        || "~/.kube/config".to_string(),
        |h| h.join(".kube").join("config").display().to_string(),
    );
    Message::new("error.live.no_kubeconfig").arg("default", default)
}

fn kubeconfig_present() -> bool {
    if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
        return true;
    }
    std::env::home_dir().is_some_and(|h| h.join(".kube").join("config").exists())
}

/// Building the client runs the exec credential plugin, synchronously,
/// inside kube. On a thread of its own (entered in the runtime, which the
/// client's worker needs) a plugin that never answers is abandoned after
/// `limit`: a detached thread does not hold the process at exit, as a
/// `spawn_blocking` task would.
async fn build_client(
    config: Config,
    limit: Duration,
    plugin: Option<&str>,
) -> Result<Client, LiveError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("mdiag-credentials".into())
        .spawn(move || {
            let _entered = runtime.enter();
            let _ = tx.send(Client::try_from(config));
        })
        .map_err(|e| {
            LiveError::Config(Message::new("error.live.thread").arg("detail", e.to_string()))
        })?;
    match tokio::time::timeout(limit, rx).await {
        Ok(Ok(Ok(client))) => Ok(client),
        Ok(Ok(Err(e))) => Err(client_error(&e, plugin)),
        Ok(Err(_)) => Err(LiveError::Config(Message::new("error.live.client_failed"))),
        Err(_) => Err(LiveError::Credentials(plugin_silent(plugin, limit))),
    }
}

/// The exec plugin as the user wrote it: command and arguments.
fn credential_plugin(config: &Config) -> Option<String> {
    let exec = config.auth_info.exec.as_ref()?;
    let mut words = vec![exec.command.clone().unwrap_or_default()];
    words.extend(exec.args.iter().flatten().cloned());
    Some(words.join(" "))
}

fn context_names(kubeconfig: &Kubeconfig) -> Vec<String> {
    kubeconfig.contexts.iter().map(|c| c.name.clone()).collect()
}

/// What was wrong with the kubeconfig, in one line. A file that cannot be
/// read or parsed is a bad input file (exit 2); the rest is access (4).
fn config_error(err: &KubeconfigError, file: &str) -> LiveError {
    let about = |id| Message::new(id).arg("file", file);
    match err {
        KubeconfigError::ReadConfig(io, _) => LiveError::KubeconfigFile(
            about("error.kubeconfig.unreadable").arg("detail", io_text(io)),
        ),
        KubeconfigError::Parse(e) => LiveError::KubeconfigFile(
            about("error.kubeconfig.invalid").arg("detail", first_line(&e.to_string())),
        ),
        KubeconfigError::LoadContext(name) => LiveError::Config(
            about("error.kubeconfig.no_context")
                .arg("name", format!("{name:?}"))
                .arg("contexts", ""),
        ),
        KubeconfigError::CurrentContextNotSet => {
            LiveError::Config(about("error.kubeconfig.no_current_context").arg("contexts", ""))
        }
        KubeconfigError::LoadClusterOfContext(name) => {
            LiveError::Config(about("error.kubeconfig.no_cluster").arg("name", format!("{name:?}")))
        }
        KubeconfigError::LoadCertificateAuthority(e) => LiveError::Config(
            about("error.kubeconfig.certificate_authority").arg("detail", load_text(e)),
        ),
        KubeconfigError::LoadClientCertificate(e) => LiveError::Config(
            about("error.kubeconfig.client_certificate").arg("detail", load_text(e)),
        ),
        KubeconfigError::LoadClientKey(e) => {
            LiveError::Config(about("error.kubeconfig.client_key").arg("detail", load_text(e)))
        }
        other => LiveError::Config(
            about("error.kubeconfig.other").arg("detail", first_line(&other.to_string())),
        ),
    }
}

/// Fills the `{contexts}` slot of a context error with the names there are.
fn with_contexts(err: LiveError, contexts: &[String]) -> LiveError {
    match err {
        LiveError::Config(message) if message.args.contains_key("contexts") => {
            let list = if contexts.is_empty() {
                Message::new("error.kubeconfig.contexts_none")
            } else {
                Message::new("error.kubeconfig.contexts").arg(
                    "contexts",
                    Arg::list(contexts.iter().map(String::as_str), "sep.comma"),
                )
            };
            LiveError::Config(message.arg("contexts", list))
        }
        other => other,
    }
}

fn load_text(err: &LoadDataError) -> Message {
    match err {
        LoadDataError::ReadFile(io, path) => Message::new("error.kubeconfig.file_unreadable")
            .arg("path", path.display().to_string())
            .arg("detail", io_text(io)),
        other => Message::new("error.kubeconfig.not_loaded").arg("detail", other.to_string()),
    }
}

/// Why the client could not be built: most often the credential plugin.
fn client_error(err: &kube::Error, plugin: Option<&str>) -> LiveError {
    match err {
        kube::Error::Auth(auth) => LiveError::Credentials(auth_text(auth, plugin)),
        other => LiveError::Config(Message::quote(first_line(&super::error_chain(other)))),
    }
}

/// One line for each way credentials fail, naming the plugin as the
/// kubeconfig names it (kube's own text carries the ExecCredential input
/// and a debug dump of the process output).
pub(super) fn auth_text(err: &AuthError, plugin: Option<&str>) -> Message {
    let plugin = plugin.unwrap_or("(none)");
    let about = |id| Message::new(id).arg("plugin", plugin);
    match err {
        AuthError::AuthExecStart(io) => {
            about("error.credentials.cannot_start").arg("detail", io_text(io))
        }
        AuthError::AuthExecRun { out, .. } => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let said = stderr
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| format!(": {l}"))
                .unwrap_or_default();
            about("error.credentials.failed")
                .arg("status", out.status.to_string())
                .arg("said", said)
        }
        AuthError::AuthExecParse(_) | AuthError::AuthExec(_) | AuthError::ExecPluginFailed => {
            about("error.credentials.unusable").arg("detail", first_line(&err.to_string()))
        }
        AuthError::ReadTokenFile(io, path) => Message::new("error.credentials.token_file")
            .arg("path", path.display().to_string())
            .arg("detail", io_text(io)),
        other => {
            Message::new("error.credentials.other").arg("detail", first_line(&other.to_string()))
        }
    }
}

/// A plugin, or a request, that gave no answer within `limit`.
pub(super) fn plugin_silent(plugin: Option<&str>, limit: Duration) -> Message {
    match plugin {
        Some(p) => Message::new("error.credentials.silent")
            .arg("plugin", p)
            .arg("seconds", limit.as_secs() as i64),
        None => Message::new("error.credentials.none").arg("seconds", limit.as_secs() as i64),
    }
}

/// A server whose certificate the client refused, said as what to check;
/// rustls' own reason stays in brackets. Other failures pass as they are.
pub(super) fn tls_hint(detail: String) -> Message {
    const REFUSED: &str = "invalid peer certificate: ";
    let Some(at) = detail.find(REFUSED) else {
        return Message::quote(detail);
    };
    let reason = detail[at + REFUSED.len()..].to_string();
    let has = |words: &[&str]| words.iter().any(|w| reason.contains(w));
    let what = if has(&["NotValidForName", "not valid for name"]) {
        "error.tls.name"
    } else if has(&[
        "UnknownIssuer",
        "unknown issuer",
        "BadSignature",
        "bad signature",
    ]) {
        "error.tls.issuer"
    } else if has(&["Expired", "expired", "NotValidYet", "not valid yet"]) {
        "error.tls.validity"
    } else {
        "error.tls.refused"
    };
    Message::new(what).arg("reason", reason)
}

/// `No such file or directory`, without Rust's `(os error 2)`.
fn io_text(io: &std::io::Error) -> String {
    let text = io.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_failure_is_one_line_naming_the_plugin_and_its_words() {
        let out = std::process::Command::new("sh")
            .args(["-c", "echo 'token expired, run: login' >&2; exit 3"])
            .output()
            .unwrap();
        let err = AuthError::AuthExecRun {
            cmd: "KUBERNETES_EXEC_INFO=... aws-login".into(),
            out: Box::new(out),
        };
        let text = auth_text(&err, Some("aws-login --profile dev")).en();
        assert_eq!(
            text,
            "the kubeconfig's credential plugin `aws-login --profile dev` failed \
             (exit status: 3): token expired, run: login; run it by hand to see why, or log in again"
        );
    }

    #[test]
    fn a_missing_plugin_says_so() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let text = auth_text(&AuthError::AuthExecStart(io), Some("gke-auth")).en();
        assert!(text.starts_with("cannot start the kubeconfig's credential plugin `gke-auth`: "));
        assert!(text.ends_with("is it installed and on PATH?"));
        assert!(!text.contains("os error"));
    }

    #[test]
    fn refused_certificates_say_what_to_check() {
        let text = tls_hint(
            "ServiceError: client error (Connect): invalid peer certificate: NotValidForName"
                .into(),
        )
        .en();
        assert_eq!(
            text,
            "the server's certificate is not issued for this address; check the kubeconfig's server (NotValidForName)"
        );
        let plain = "client error (Connect): tcp connect error: Connection refused".to_owned();
        assert_eq!(tls_hint(plain.clone()).en(), plain);
    }

    #[test]
    fn context_errors_list_the_contexts_there_are() {
        let err = config_error(&KubeconfigError::LoadContext("prod".into()), "/k/config");
        let err = with_contexts(err, &["dev".into(), "staging".into()]);
        assert_eq!(
            err.to_string(),
            "cannot load the kubeconfig: /k/config has no context named \"prod\" \
             (it has dev, staging); choose one with --context"
        );
    }
}
