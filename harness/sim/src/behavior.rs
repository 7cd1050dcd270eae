//! What a simulated container does, chosen by the Pod annotation
//! `sim.mdiag.dev/behavior` (or `sim.mdiag.dev/behavior.<container>` for one
//! container).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

pub use mdiag_harness_util::names::{BEHAVIOR_ANNOTATION, SIM_ANNOTATION_PREFIX};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// Starts and turns Ready after `delay_secs`.
    Ready { delay_secs: u64 },
    /// Runs ~2 s, exits with `exit_code`, restarts with back-off.
    CrashLoop { exit_code: i32 },
    /// Runs ~2 s, is OOMKilled (137), restarts with back-off.
    Oom,
    /// The image pull fails: manifest not found.
    PullNotFound,
    /// The image pull fails: access denied.
    PullDenied,
    /// The image pull fails: the registry cannot be reached.
    PullTimeout,
    /// Runs, its readiness probe answers 503 forever.
    NeverReady,
    /// CreateContainerConfigError: a ConfigMap key is missing.
    ConfigError,
    /// The Pod stays ContainerCreating: a volume cannot be mounted.
    StuckCreating,
}

impl Default for Behavior {
    fn default() -> Self {
        Behavior::Ready { delay_secs: 0 }
    }
}

impl Behavior {
    /// The behaviour of `container` in a Pod with these annotations; an
    /// unknown value falls back to `ready` (with a warning on stderr).
    pub fn for_container(annotations: &BTreeMap<String, String>, container: &str) -> Behavior {
        let key = format!("{BEHAVIOR_ANNOTATION}.{container}");
        let value = annotations
            .get(&key)
            .or_else(|| annotations.get(BEHAVIOR_ANNOTATION));
        match value {
            None => Behavior::default(),
            Some(v) => v.parse().unwrap_or_else(|e| {
                eprintln!("mdiag-sim: {e}; using `ready`");
                Behavior::default()
            }),
        }
    }

    /// Whether this behaviour fails the image pull.
    pub fn pull_error(&self) -> Option<PullError> {
        match self {
            Behavior::PullNotFound => Some(PullError::NotFound),
            Behavior::PullDenied => Some(PullError::Denied),
            Behavior::PullTimeout => Some(PullError::Timeout),
            _ => None,
        }
    }
}

impl FromStr for Behavior {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (head, arg) = match s.split_once(':') {
            Some((h, a)) => (h, Some(a.trim())),
            None => (s, None),
        };
        let bad = || format!("unknown sim behaviour {s:?}");
        let b = match (head, arg) {
            ("ready", None) => Behavior::Ready { delay_secs: 0 },
            ("ready", Some(n)) => Behavior::Ready {
                delay_secs: n.parse().map_err(|_| bad())?,
            },
            ("crash-loop", None) => Behavior::CrashLoop { exit_code: 1 },
            ("crash-loop", Some(n)) => Behavior::CrashLoop {
                exit_code: n.parse().map_err(|_| bad())?,
            },
            ("oom", None) => Behavior::Oom,
            ("pull-not-found", None) => Behavior::PullNotFound,
            ("pull-denied", None) => Behavior::PullDenied,
            ("pull-timeout", None) => Behavior::PullTimeout,
            ("never-ready", None) => Behavior::NeverReady,
            ("config-error", None) => Behavior::ConfigError,
            ("stuck-creating", None) => Behavior::StuckCreating,
            _ => return Err(bad()),
        };
        Ok(b)
    }
}

impl fmt::Display for Behavior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Behavior::Ready { delay_secs: 0 } => write!(f, "ready"),
            Behavior::Ready { delay_secs } => write!(f, "ready:{delay_secs}"),
            Behavior::CrashLoop { exit_code: 1 } => write!(f, "crash-loop"),
            Behavior::CrashLoop { exit_code } => write!(f, "crash-loop:{exit_code}"),
            Behavior::Oom => write!(f, "oom"),
            Behavior::PullNotFound => write!(f, "pull-not-found"),
            Behavior::PullDenied => write!(f, "pull-denied"),
            Behavior::PullTimeout => write!(f, "pull-timeout"),
            Behavior::NeverReady => write!(f, "never-ready"),
            Behavior::ConfigError => write!(f, "config-error"),
            Behavior::StuckCreating => write!(f, "stuck-creating"),
        }
    }
}

/// The ways an image pull fails, with the container runtime's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullError {
    NotFound,
    Denied,
    Timeout,
}

impl PullError {
    /// The error the runtime returns (what follows `Failed to pull image
    /// "IMG": ` in the event, and the ErrImagePull waiting message).
    pub fn message(self, image: &str) -> String {
        match self {
            PullError::NotFound => format!(
                "rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": \
                 failed to resolve reference \"{image}\": {image}: not found"
            ),
            // What containerd 1.6 says for a registry's 401 (no
            // `rpc error: code = Unknown desc =` in front: kubelet 1.35
            // shows it bare, as a real node wrote it).
            PullError::Denied => {
                let (host, _) = registry_host_and_path(image);
                format!(
                    "failed to pull and unpack image \"{image}\": failed to resolve reference \
                     \"{image}\": pulling from host {host} failed with status code [manifests \
                     {tag}]: 401 Unauthorized",
                    tag = image_tag(image)
                )
            }
            // A registry whose address drops the connection attempt:
            // containerd's dial times out. Same bare form as the 401.
            PullError::Timeout => {
                let (host, path) = registry_host_and_path(image);
                format!(
                    "failed to pull and unpack image \"{image}\": failed to resolve reference \
                     \"{image}\": failed to do request: Head \
                     \"https://{host}/v2/{path}/manifests/{tag}\": dial tcp 203.0.113.10:443: \
                     i/o timeout",
                    tag = image_tag(image)
                )
            }
        }
    }

    /// How long the failing pull takes before the error, at back-off
    /// scale 1: a dial timeout is containerd's 30 s (scaled like the
    /// back-offs, at least 3 s); a registry's answer comes at once.
    pub fn pull_time(self, scale: f64) -> std::time::Duration {
        match self {
            PullError::Timeout => mdiag_harness_util::scaled(
                std::time::Duration::from_secs(30),
                scale,
                std::time::Duration::from_secs(3),
            ),
            _ => std::time::Duration::from_millis(700),
        }
    }
}

/// `registry.example.com/modeldock/x:v1` -> (`registry.example.com`,
/// `modeldock/x`); an image without a registry host is on docker.io.
pub fn registry_host_and_path(image: &str) -> (String, String) {
    let no_digest = image.split('@').next().unwrap_or(image);
    let (first, rest) = match no_digest.split_once('/') {
        Some((f, r)) if f.contains('.') || f.contains(':') || f == "localhost" => {
            (f.to_owned(), r.to_owned())
        }
        _ => ("registry-1.docker.io".to_owned(), no_digest.to_owned()),
    };
    let path = match rest.rsplit_once(':') {
        Some((p, tag)) if !tag.contains('/') => p.to_owned(),
        _ => rest,
    };
    let path = if first == "registry-1.docker.io" && !path.contains('/') {
        format!("library/{path}")
    } else {
        path
    };
    (first, path)
}

/// The tag of an image reference (`latest` when there is none).
pub fn image_tag(image: &str) -> String {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    match last.split_once(':') {
        Some((_, tag)) => tag.to_owned(),
        None => "latest".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        for s in [
            "ready",
            "ready:5",
            "crash-loop",
            "crash-loop:0",
            "oom",
            "pull-not-found",
            "pull-denied",
            "pull-timeout",
            "never-ready",
            "config-error",
            "stuck-creating",
        ] {
            let b: Behavior = s.parse().unwrap();
            assert_eq!(b.to_string(), s);
        }
        assert_eq!(
            "crash-loop:2".parse::<Behavior>().unwrap(),
            Behavior::CrashLoop { exit_code: 2 }
        );
        assert!("nope".parse::<Behavior>().is_err());
        assert!("ready:x".parse::<Behavior>().is_err());
    }

    #[test]
    fn per_container() {
        let mut a = BTreeMap::new();
        a.insert(BEHAVIOR_ANNOTATION.to_owned(), "oom".to_owned());
        a.insert(format!("{BEHAVIOR_ANNOTATION}.side"), "ready:3".to_owned());
        assert_eq!(Behavior::for_container(&a, "server"), Behavior::Oom);
        assert_eq!(
            Behavior::for_container(&a, "side"),
            Behavior::Ready { delay_secs: 3 }
        );
        assert_eq!(
            Behavior::for_container(&BTreeMap::new(), "x"),
            Behavior::default()
        );
    }

    #[test]
    fn image_parts() {
        assert_eq!(
            registry_host_and_path("registry.example.com/modeldock/chart-demo:v1.6.0"),
            (
                "registry.example.com".to_owned(),
                "modeldock/chart-demo".to_owned()
            )
        );
        assert_eq!(
            registry_host_and_path("nginx"),
            (
                "registry-1.docker.io".to_owned(),
                "library/nginx".to_owned()
            )
        );
        assert_eq!(image_tag("registry.example.com:5000/a/b:v2"), "v2");
        assert_eq!(image_tag("registry.example.com:5000/a/b"), "latest");
        let m = PullError::Timeout.message("registry.example.com/modeldock/chart-demo:v1");
        assert!(m.contains(
            "Head \"https://registry.example.com/v2/modeldock/chart-demo/manifests/v1\": dial tcp 203.0.113.10:443: i/o timeout"
        ));
        assert!(!m.starts_with("rpc error"));
    }

    #[test]
    fn pull_errors_as_the_real_node_wrote_them() {
        // harness/SIM.md; the host differs (127.0.0.1:PORT there).
        let img = "registry.example.com/modeldock/chart-demo:v1.4.0";
        assert_eq!(
            PullError::Denied.message(img),
            "failed to pull and unpack image \"registry.example.com/modeldock/chart-demo:v1.4.0\": \
             failed to resolve reference \"registry.example.com/modeldock/chart-demo:v1.4.0\": \
             pulling from host registry.example.com failed with status code [manifests v1.4.0]: \
             401 Unauthorized"
        );
        assert_eq!(
            PullError::NotFound.message(img),
            "rpc error: code = NotFound desc = failed to pull and unpack image \
             \"registry.example.com/modeldock/chart-demo:v1.4.0\": failed to resolve reference \
             \"registry.example.com/modeldock/chart-demo:v1.4.0\": \
             registry.example.com/modeldock/chart-demo:v1.4.0: not found"
        );
        assert_eq!(
            PullError::Timeout.pull_time(1.0),
            std::time::Duration::from_secs(30)
        );
        assert_eq!(
            PullError::Timeout.pull_time(0.1),
            std::time::Duration::from_secs(3)
        );
    }
}
