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
    /// The snapshot must hold a non-empty previous container log.
    pub previous_log: bool,
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
};

const fn fails(id: &'static str) -> GateExpect {
    GateExpect {
        exit_code: 1,
        outcome: "failed",
        decided_by: id,
    }
}

/// The gate times out (the trials give it 30 s): the finding is not one
/// the default policy fails on at once.
const fn times_out(id: &'static str) -> GateExpect {
    GateExpect {
        exit_code: 3,
        outcome: "timed-out",
        decided_by: id,
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
        last_step,
        finding,
        quotes,
        first_report,
        gate,
        previous_log: false,
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

/// Every scenario, in the order the trials run them.
pub fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "healthy",
            change: Change::Upgrade,
            upgrade: v150,
            objects: "",
            expect: Expect {
                healthy: true,
                last_step: "serving",
                finding: "",
                quotes: "",
                first_report: FirstReport::None,
                gate: CONVERGED,
                previous_log: false,
            },
        },
        Scenario {
            name: "crash-exit-1",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--crash=1"),
            objects: "",
            expect: Expect {
                previous_log: true,
                ..broken(
                    "ready",
                    "crash-loop",
                    "FATAL missing env MODEL_PATH",
                    FirstReport::RestartCrossing,
                    fails("crash-loop"),
                )
            },
        },
        Scenario {
            name: "crash-exit-0",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--crash=0"),
            objects: "",
            expect: Expect {
                previous_log: true,
                ..broken(
                    "ready",
                    "crash-loop",
                    "Completed",
                    FirstReport::RestartCrossing,
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
            expect: broken(
                "ready",
                "oom-killed",
                "OOMKilled",
                FirstReport::Terminated,
                fails("oom-killed"),
            ),
        },
        Scenario {
            name: "image-not-found",
            change: Change::Upgrade,
            upgrade: |i| release(&i.not_found),
            objects: "",
            expect: broken(
                "ready",
                "image-pull-not-found",
                "not found",
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
                "ready",
                "image-pull-denied",
                "401 Unauthorized",
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
                "ready",
                "image-pull-timeout",
                "i/o timeout",
                FirstReport::None,
                times_out("image-pull-timeout"),
            ),
        },
        Scenario {
            name: "never-ready",
            change: Change::Upgrade,
            upgrade: |i| v150(i).arg("--never-ready"),
            objects: "",
            expect: broken(
                "ready",
                "readiness-failing",
                "statuscode: 503",
                FirstReport::None,
                times_out("readiness-failing"),
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
                "ready",
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
                "ready",
                "pod-not-started",
                "configmap \"model-files\" not found",
                FirstReport::None,
                times_out("pod-not-started"),
            ),
        },
        Scenario {
            name: "unschedulable",
            change: Change::Upgrade,
            upgrade: |i| v150(i).resources(json!({"requests": {"cpu": "64"}})),
            objects: "",
            expect: broken(
                "ready",
                "pod-unschedulable",
                "Insufficient cpu",
                FirstReport::Event("FailedScheduling"),
                fails("pod-unschedulable"),
            ),
        },
        Scenario {
            name: "selector-matches-nothing",
            change: Change::SelectorMatchesNothing,
            upgrade: first_release,
            objects: "",
            expect: broken(
                "ready",
                "selector-mismatch",
                "",
                FirstReport::None,
                times_out("selector-mismatch"),
            ),
        },
        Scenario {
            name: "quota-blocks-pods",
            change: Change::Upgrade,
            upgrade: v150,
            objects: QUOTA_YAML,
            expect: broken(
                "ready",
                "pods-not-created",
                "exceeded quota: pods-per-namespace",
                FirstReport::None,
                times_out("pods-not-created"),
            ),
        },
        Scenario {
            name: "node-lost",
            change: Change::KubeletStopped,
            upgrade: first_release,
            objects: "",
            expect: broken(
                "bound",
                "node-not-ready",
                "NodeStatusUnknown",
                FirstReport::None,
                times_out("node-not-ready"),
            ),
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
