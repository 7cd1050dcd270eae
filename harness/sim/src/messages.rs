//! The kubelet's words, as kubelet v1.35 with containerd writes them (see
//! harness/SIM.md, "The simulator against the real kubelet"): one place for
//! every reason's message the simulated nodes write, so that they can be
//! checked against what a real node wrote.

use std::time::Duration;

use mdiag_harness_util::{go_duration, scaled};

/// The first wait of the CrashLoopBackOff and ImagePullBackOff back-offs.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(10);
/// Where both back-offs stop doubling.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Normal Pulled, when the image is on the node already
/// (pkg/kubelet/images/image_manager.go).
pub fn image_present(image: &str) -> String {
    format!("Container image \"{image}\" already present on machine and can be accessed by the pod")
}

/// Normal Pulling.
pub fn pulling(image: &str) -> String {
    format!("Pulling image \"{image}\"")
}

/// Normal Pulled after a pull: `in 59ms (59ms including waiting). Image
/// size: 1040760 bytes.`
pub fn pulled(image: &str, took: Duration, size: u64) -> String {
    let took = go_duration(took);
    format!(
        "Successfully pulled image \"{image}\" in {took} ({took} including waiting). Image size: {size} bytes."
    )
}

/// Warning Failed of a pull; `error` is the runtime's (PullError::message).
pub fn pull_failed(image: &str, error: &str) -> String {
    format!("Failed to pull image \"{image}\": {error}")
}

/// Normal BackOff while a pull backs off (also the start of the
/// ImagePullBackOff waiting message).
pub fn pull_backoff(image: &str) -> String {
    format!("Back-off pulling image \"{image}\"")
}

/// The ImagePullBackOff waiting message: the back-off and the last error.
pub fn pull_backoff_waiting(image: &str, error: &str) -> String {
    format!("{}: ErrImagePull: {error}", pull_backoff(image))
}

/// `name_namespace(uid)`, how the kubelet names a Pod in its messages.
pub fn pod_desc(name: &str, namespace: &str, uid: &str) -> String {
    format!("{name}_{namespace}({uid})")
}

/// Warning BackOff of a crash loop (one per pod sync while backing off).
pub fn restart_backoff(container: &str, pod_desc: &str) -> String {
    format!("Back-off restarting failed container {container} in pod {pod_desc}")
}

/// The CrashLoopBackOff waiting message, with the nominal back-off.
pub fn crash_backoff_waiting(backoff: Duration, container: &str, pod_desc: &str) -> String {
    format!(
        "back-off {} restarting failed container={container} pod={pod_desc}",
        go_duration(backoff)
    )
}

/// Warning Unhealthy of an HTTP readiness probe the server answered.
pub fn probe_status(code: u16) -> String {
    format!("Readiness probe failed: HTTP probe failed with statuscode: {code}")
}

/// Warning Unhealthy of an HTTP readiness probe nothing listens for yet
/// (the server has not opened its port, or has exited).
pub fn probe_refused(scheme: &str, ip: &str, port: &str, path: &str) -> String {
    format!(
        "Readiness probe failed: Get \"{}://{ip}:{port}{path}\": dial tcp {ip}:{port}: connect: connection refused",
        scheme.to_ascii_lowercase()
    )
}

/// Warning Unhealthy of a TCP readiness probe.
pub fn tcp_probe_refused(ip: &str, port: &str) -> String {
    format!("Readiness probe failed: dial tcp {ip}:{port}: connect: connection refused")
}

/// Warning FailedMount of a configMap volume whose ConfigMap is missing
/// (pkg/volume/configmap).
pub fn configmap_mount_failed(volume: &str, config_map: &str) -> String {
    format!(
        "MountVolume.SetUp failed for volume \"{volume}\" : configmap \"{config_map}\" not found"
    )
}

/// The crash-loop back-off after the `crashes`-th exit (1-based): none
/// after the first (the kubelet restarts it at once), then 10 s doubling
/// to 5 min.
pub fn crash_backoff(crashes: u32) -> Option<Duration> {
    if crashes <= 1 {
        return None;
    }
    let doublings = (crashes - 2).min(16);
    Some((INITIAL_BACKOFF * 2u32.pow(doublings)).min(MAX_BACKOFF))
}

/// The share of a back-off in which the kubelet still shows the crashed
/// container `terminated` (it writes `waiting: CrashLoopBackOff` only at
/// the pod's next sync, which may be seconds or minutes later).
pub const TERMINATED_SHARE: f64 = 0.3;

/// How one crash-loop back-off plays out in the simulator: the container
/// shows `terminated` for the first part, then `waiting:
/// CrashLoopBackOff` until the restart. Both are scaled by `scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackoffPhases {
    /// Terminated, before the next sync writes CrashLoopBackOff.
    pub terminated: Duration,
    /// The whole wait until the restart.
    pub total: Duration,
}

pub fn backoff_phases(backoff: Duration, scale: f64) -> BackoffPhases {
    let total = scaled(backoff, scale, Duration::from_millis(200));
    let terminated = scaled(
        backoff.mul_f64(TERMINATED_SHARE),
        scale,
        Duration::from_millis(100),
    )
    .min(total / 2);
    BackoffPhases { terminated, total }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMG: &str = "registry.example.com/modeldock/chart-demo:v1.5.0";

    #[test]
    fn kubelet_1_35_wording() {
        // As a real kubelet v1.35.8 wrote them (harness/SIM.md).
        assert_eq!(
            image_present(IMG),
            "Container image \"registry.example.com/modeldock/chart-demo:v1.5.0\" already present on machine and can be accessed by the pod"
        );
        assert_eq!(
            pulled(IMG, Duration::from_millis(59), 1040760),
            "Successfully pulled image \"registry.example.com/modeldock/chart-demo:v1.5.0\" in 59ms (59ms including waiting). Image size: 1040760 bytes."
        );
        assert_eq!(
            probe_refused("HTTP", "10.123.0.17", "8080", "/healthz"),
            "Readiness probe failed: Get \"http://10.123.0.17:8080/healthz\": dial tcp 10.123.0.17:8080: connect: connection refused"
        );
        assert_eq!(
            probe_status(503),
            "Readiness probe failed: HTTP probe failed with statuscode: 503"
        );
        let pod = pod_desc(
            "chart-demo-549cbc894c-khxqp",
            "live-real-oom-killed",
            "331d9ab8-8b78-4cfb-9795-5dfdea5ca78f",
        );
        assert_eq!(
            crash_backoff_waiting(Duration::from_secs(80), "server", &pod),
            "back-off 1m20s restarting failed container=server pod=chart-demo-549cbc894c-khxqp_live-real-oom-killed(331d9ab8-8b78-4cfb-9795-5dfdea5ca78f)"
        );
        assert_eq!(
            restart_backoff("server", &pod),
            "Back-off restarting failed container server in pod chart-demo-549cbc894c-khxqp_live-real-oom-killed(331d9ab8-8b78-4cfb-9795-5dfdea5ca78f)"
        );
        assert_eq!(
            configmap_mount_failed("model-files", "model-files"),
            "MountVolume.SetUp failed for volume \"model-files\" : configmap \"model-files\" not found"
        );
        assert_eq!(
            pull_backoff_waiting(IMG, "E"),
            "Back-off pulling image \"registry.example.com/modeldock/chart-demo:v1.5.0\": ErrImagePull: E"
        );
    }

    #[test]
    fn crash_backoffs_double_from_the_second_crash() {
        // The real OOM loop: restartCount 4 (the 5th exit) says 1m20s.
        let got: Vec<Option<u64>> = (1..=8)
            .map(|n| crash_backoff(n).map(|d| d.as_secs()))
            .collect();
        assert_eq!(
            got,
            [
                None,
                Some(10),
                Some(20),
                Some(40),
                Some(80),
                Some(160),
                Some(300),
                Some(300)
            ]
        );
        assert_eq!(crash_backoff(1000), Some(MAX_BACKOFF));
    }

    #[test]
    fn terminated_first_then_crash_loop_back_off() {
        let p = backoff_phases(Duration::from_secs(10), 1.0);
        assert_eq!(p.total, Duration::from_secs(10));
        assert_eq!(p.terminated, Duration::from_secs(3));
        // Scaled as the back-off is, and always shorter than it, so that
        // every back-off shows both states.
        let p = backoff_phases(Duration::from_secs(10), 0.1);
        assert_eq!(p.total, Duration::from_secs(1));
        assert_eq!(p.terminated, Duration::from_millis(300));
        let p = backoff_phases(Duration::from_secs(10), 0.001);
        assert_eq!(p.total, Duration::from_millis(200));
        assert_eq!(p.terminated, Duration::from_millis(100));
        assert!(p.terminated < p.total);
    }
}
