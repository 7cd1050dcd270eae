//! The rollouts the real node plays out, as data: the live trials
//! (tests/live/real_scenarios.rs) and `cargo xtask bench gate --real-node`
//! read the same table, so the benchmark measures exactly what the trials
//! assert.
//!
//! Every scenario starts from a first release that serves (two replicas of
//! the model server `v1.4.0` on the real node) and then changes one thing:
//! most are an upgrade of the ModelService (a new image or new arguments),
//! two disturb a serving release instead (a Service selector, a kubelet
//! stopped). What the scenario must show is in [`Expect`], written from what
//! the real kubelet says on this machine (harness/SIM.md compares it with
//! the simulator).

use serde_json::{Value, json};

use crate::helpers::ModelServiceSpec;
use crate::images::Images;

/// The ModelService's name in every scenario (as the chart names it).
pub const NAME: &str = "chart-demo";
/// The ConfigMap the config scenarios refer to; it exists, without the key.
pub const CONFIG_MAP: &str = "model-config";
/// The key the missing-key scenario asks for.
pub const MISSING_KEY: &str = "model-path";
/// The ConfigMap volume the missing-volume scenario mounts; it does not exist.
pub const MISSING_VOLUME_CONFIG_MAP: &str = "model-files";
/// The ResourceQuota of the quota scenario: as many Pods as the first release has.
pub const QUOTA: &str = "pods-per-namespace";

/// What changes after the first release serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The ModelService is applied again with [`Scenario::upgrade`].
    Upgrade,
    /// The Service's selector is patched to a label no Pod has (with the
    /// controller paused, which would put it back).
    SelectorMatchesNothing,
    /// The kubelet is stopped; the node lifecycle controller marks the Node
    /// NotReady after its grace period.
    KubeletStopped,
}

/// How `mdiag gate` (default policy) must end on the change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateExpect {
    pub exit_code: i32,
    /// `converged`, `failed` or `timed-out`.
    pub outcome: &'static str,
    /// The finding id that decided it (empty: none, as for a convergence).
    pub decided_by: &'static str,
    /// The gate's `--timeout`: long for what must be decided before it,
    /// just long enough for the symptom to show when it times out.
    pub timeout_secs: u64,
}

/// The kubelet's (or scheduler's) first report of a definitive failure:
/// the budget for the gate is 15 s from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstReport {
    /// Not timed (a convergence is timed from the last EndpointSlice write;
    /// a gate that times out is not timed).
    None,
    /// The first Event with this reason about the namespace's Pods.
    Event(&'static str),
    /// The first Event with this reason about the namespace's ReplicaSets
    /// (the replicaset controller's `FailedCreate`).
    ReplicaSetEvent(&'static str),
    /// The end of the second crashed run of a container: a loop that
    /// repeats itself exactly is final then.
    SecondCrash,
    /// The start of the container run whose restart crossed
    /// `--max-restarts` (3).
    RestartCrossing,
    /// The end of the first terminated run (`lastState.terminated.finishedAt`).
    Terminated,
}

/// What `mdiag trace` must say once the change has played out.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    pub healthy: bool,
    /// The verdict's `state` (serving, progressing, degraded, not-serving,
    /// unknown): a broken upgrade whose first release still serves is
    /// degraded.
    pub state: &'static str,
    /// The verdict's `last_step`.
    pub last_step: &'static str,
    /// The lead finding's id (empty for a healthy rollout).
    pub finding: &'static str,
    /// Words of the kubelet (or the control plane) that the finding's
    /// evidence must quote.
    pub quotes: &'static str,
    /// The moment the gate's decision is timed from.
    pub first_report: FirstReport,
    pub gate: GateExpect,
    /// Words the log of a crashed run must hold in the snapshot: the
    /// current log while the container is terminated, the previous one once
    /// it runs again (the kubelet keeps one dead container per name, so the
    /// run before a terminated one has no log any more). Empty: not asked.
    pub crash_log: &'static str,
}

pub struct Scenario {
    pub name: &'static str,
    pub change: Change,
    /// The ModelService after the change (for [`Change::Upgrade`]; the
    /// others keep the first release).
    pub upgrade: fn(&Images) -> ModelServiceSpec,
    /// Objects (YAML, `{ns}` replaced by the namespace) created with the
    /// first release.
    pub objects: &'static str,
    pub expect: Expect,
}

/// The first release: two replicas of `v1.4.0` on the real node, probed
/// every second.
pub fn first_release(images: &Images) -> ModelServiceSpec {
    release(images.model_server("v1.4.0"))
}

fn release(image: &str) -> ModelServiceSpec {
    ModelServiceSpec::new(image)
        .replicas(2)
        .on_real_node()
        .spec_field(
            "readinessProbe",
            json!({"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 3}),
        )
}

fn v150(images: &Images) -> ModelServiceSpec {
    release(images.model_server("v1.5.0"))
}

const CONVERGED: GateExpect = GateExpect {
    exit_code: 0,
    outcome: "converged",
    decided_by: "",
    timeout_secs: 120,
};

const fn fails(id: &'static str) -> GateExpect {
    GateExpect {
        exit_code: 1,
        outcome: "failed",
        decided_by: id,
        timeout_secs: 120,
    }
}

/// The gate times out after `timeout_secs` waiting on `check` (its
/// report names the check it still waited on): the finding is not one the
/// default policy fails on at once.
const fn times_out(check: &'static str, timeout_secs: u64) -> GateExpect {
    GateExpect {
        exit_code: 3,
        outcome: "timed-out",
        decided_by: check,
        timeout_secs,
    }
}

const fn broken(
    last_step: &'static str,
    finding: &'static str,
    quotes: &'static str,
    first_report: FirstReport,
    gate: GateExpect,
) -> Expect {
    Expect {
        healthy: false,
        state: "degraded",
        last_step,
        finding,
        quotes,
        first_report,
        gate,
        crash_log: "",
    }
}

const CONFIG_MAP_YAML: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: model-config, namespace: '{ns}'}
data: {model-name: tiny-llama-1.1b}
";

const QUOTA_YAML: &str = "apiVersion: v1
kind: ResourceQuota
metadata: {name: pods-per-namespace, namespace: '{ns}'}
spec: {hard: {pods: '2'}}
";

/// Every scenario, in the order the trials run them. Last steps, quotes
/// and gate checks are what the real kubelet 1.35.8 (containerd 1.6.20)
/// gave on this machine; harness/SIM.md says where the simulator differs.
pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "healthy",
            change: Change::Upgrade,
            upgrade: v150,
            objects: "",
            expect: Expect {
                healthy: true,
                state: "serving",
                last_step: "serving",
                finding: "",
                quotes: "",
                first_report: FirstReport::None,
                gate: CONVERGED,
                crash_log: "",
            },
        },
        // The container is not running between crashes (the kubelet shows
        // it terminated, then waiting in CrashLoopBackOff): bound.
        Scenario {
            name: "crash-exit-1",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--crash=1"),
            objects: "",
            expect: Expect {
                crash_log: "FATAL missing env MODEL_PATH",
                ..broken(
                    "bound",
                    "crash-loop",
                    "exitCode 1 reason Error",
                    FirstReport::SecondCrash,
                    fails("crash-loop"),
                )
            },
        },
        // Exits 0 while still loading, so it is never ready (a server that
        // exits 0 after turning ready passes the gate: it converged).
        Scenario {
            name: "crash-exit-0",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--crash=0").arg("--ready-after=10"),
            objects: "",
            expect: Expect {
                crash_log: "exiting with 0 before the model loaded",
                ..broken(
                    "bound",
                    "crash-loop",
                    "exitCode 0 reason Completed",
                    FirstReport::SecondCrash,
                    fails("crash-loop"),
                )
            },
        },
        Scenario {
            name: "oom-killed",
            change: Change::Upgrade,
            upgrade: |i| {
                v150(i)
                    .arg("--oom")
                    .resources(json!({"limits": {"memory": "32Mi"}}))
            },
            objects: "",
            expect: Expect {
                // What an allocating run logs last, the killed run's and
                // the next one's alike (the kubelet often cannot return the
                // killed run's log once the container restarted, and the
                // tail of five lines no longer reaches "loading model").
                crash_log: "MiB of weights",
                ..broken(
                    "bound",
                    "oom-killed",
                    "reason OOMKilled exitCode 137",
                    FirstReport::Terminated,
                    fails("oom-killed"),
                )
            },
        },
        Scenario {
            name: "image-not-found",
            change: Change::Upgrade,
            upgrade: |i| release(&i.not_found),
            objects: "",
            expect: broken(
                "bound",
                "image-pull-not-found",
                "code = NotFound",
                FirstReport::Event("Failed"),
                fails("image-pull-not-found"),
            ),
        },
        Scenario {
            name: "pull-denied",
            change: Change::Upgrade,
            upgrade: |i| release(&i.denied),
            objects: "",
            expect: broken(
                "bound",
                "image-pull-denied",
                "failed with status code [manifests v1.4.0]: 401 Unauthorized",
                FirstReport::Event("Failed"),
                fails("image-pull-denied"),
            ),
        },
        Scenario {
            name: "pull-timeout",
            change: Change::Upgrade,
            upgrade: |i| release(&i.unreachable),
            objects: "",
            expect: broken(
                "bound",
                "image-pull-timeout",
                "i/o timeout",
                FirstReport::None,
                times_out("replicas-updated", 150),
            ),
        },
        Scenario {
            name: "never-ready",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--never-ready"),
            objects: "",
            expect: broken(
                "started",
                "readiness-failing",
                "HTTP probe failed with statuscode: 503",
                FirstReport::None,
                times_out("replicas-updated", 40),
            ),
        },
        Scenario {
            name: "missing-config-key",
            change: Change::Upgrade,
            upgrade: |i| {
                v150(i).spec_field(
                    "env",
                    json!([{"name": "MODEL_PATH", "valueFrom": {"configMapKeyRef": {
                        "name": CONFIG_MAP, "key": MISSING_KEY}}}]),
                )
            },
            objects: CONFIG_MAP_YAML,
            expect: broken(
                "bound",
                "container-config-error",
                "couldn't find key model-path in ConfigMap",
                FirstReport::Event("Failed"),
                fails("container-config-error"),
            ),
        },
        Scenario {
            name: "missing-config-volume",
            change: Change::Upgrade,
            upgrade: |i| {
                v150(i)
                    .spec_field(
                        "volumes",
                        json!([{"name": "model-files",
                            "configMap": {"name": MISSING_VOLUME_CONFIG_MAP}}]),
                    )
                    .spec_field(
                        "volumeMounts",
                        json!([{"name": "model-files", "mountPath": "/models"}]),
                    )
            },
            objects: "",
            expect: broken(
                "bound",
                "pod-not-started",
                "MountVolume.SetUp failed for volume \"model-files\" : configmap \"model-files\" not found",
                FirstReport::None,
                times_out("replicas-updated", 40),
            ),
        },
        Scenario {
            name: "unschedulable",
            change: Change::Upgrade,
            upgrade: |i| v150(i).resources(json!({"requests": {"cpu": "64"}})),
            objects: "",
            expect: broken(
                "stored",
                "pod-unschedulable",
                "1 Insufficient cpu",
                FirstReport::Event("FailedScheduling"),
                fails("pod-unschedulable"),
            ),
        },
        // Every Pod is ready; none is behind the Service.
        Scenario {
            name: "selector-matches-nothing",
            change: Change::SelectorMatchesNothing,
            upgrade: first_release,
            objects: "",
            expect: Expect {
                state: "not-serving",
                ..broken(
                    "ready",
                    "selector-mismatch",
                    "",
                    FirstReport::None,
                    times_out("endpoints-ready", 40),
                )
            },
        },
        // The surge Pod is refused; maxUnavailable 0 keeps both old Pods,
        // so the quota never frees: the new revision stops at its ReplicaSet,
        // and the gate says so at the first refusal.
        Scenario {
            name: "quota-blocks-pods",
            change: Change::Upgrade,
            upgrade: v150,
            objects: QUOTA_YAML,
            expect: broken(
                "replicaset",
                "pods-not-created",
                "exceeded quota: pods-per-namespace",
                FirstReport::ReplicaSetEvent("FailedCreate"),
                fails("pods-not-created"),
            ),
        },
        // The gate starts once the Node is NotReady: the node lifecycle
        // controller has then set the Pods' Ready to False. The view-only
        // user cannot read Nodes: the Pods' NodeNotReady Events say it.
        Scenario {
            name: "node-lost",
            change: Change::KubeletStopped,
            upgrade: first_release,
            objects: "",
            expect: Expect {
                state: "not-serving",
                ..broken(
                    "started",
                    "node-not-ready",
                    "NodeNotReady: Node is not ready",
                    FirstReport::None,
                    times_out("replicas-available", 40),
                )
            },
        },
    ]
}

/// The objects of a scenario for namespace `ns`, as YAML to apply.
pub fn objects_yaml(s: &Scenario, ns: &str) -> String {
    s.objects.replace("{ns}", ns)
}

/// The Service selector that matches nothing ([`Change::SelectorMatchesNothing`]).
pub fn selector_patch() -> Value {
    json!({"spec": {"selector": {"app.kubernetes.io/name": "chart-demo-server"}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_broken_one_names_its_finding() {
        let all = all();
        let mut names: Vec<_> = all.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for s in &all {
            assert_eq!(s.expect.healthy, s.expect.finding.is_empty(), "{}", s.name);
            if s.expect.gate.outcome == "converged" {
                assert!(s.expect.healthy, "{}", s.name);
            }
        }
    }

    #[test]
    fn objects_land_in_the_scenario_namespace() {
        let quota = all()
            .into_iter()
            .find(|s| s.name == "quota-blocks-pods")
            .unwrap();
        let yaml = objects_yaml(&quota, "live-real-quota");
        assert!(yaml.contains("namespace: 'live-real-quota'"), "{yaml}");
        assert!(yaml.contains(QUOTA));
    }
}
