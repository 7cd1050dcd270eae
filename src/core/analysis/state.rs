//! The headline state (docs/contract.md#states): what users get
//! now, decided from ready endpoints counted per revision, before the
//! ladder says where the rollout stopped.

use serde::Serialize;

use super::summary::RevisionCount;

/// What users get now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// No ready endpoint at all.
    NotServing,
    /// Some replica serves, but the current declaration is not fully in
    /// effect and a warning or error says why.
    Degraded,
    /// What serving depends on could not be read.
    Unknown,
    /// Moving inside its budget, nothing wrong.
    Progressing,
    /// Every desired replica of the current revision serves and the
    /// controllers observed the current generation.
    Serving,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Serving,
        State::Progressing,
        State::Degraded,
        State::NotServing,
        State::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Serving => "serving",
            State::Progressing => "progressing",
            State::Degraded => "degraded",
            State::NotServing => "not-serving",
            State::Unknown => "unknown",
        }
    }
}

/// What serves users now, as the headline and `verdict.serving` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Serving {
    /// What the verdict rests on (docs/contract.md#basis).
    pub basis: super::status::Basis,
    /// Ready endpoints of the workload's Pods, every revision; `None` when
    /// they could not be read, or for a worker (no Service selects it).
    pub ready_endpoints: Option<i32>,
    pub desired: i32,
    /// No Service selects the Pods: the ladder ends at `ready`, and the
    /// state counts Ready Pods instead of ready endpoints.
    pub worker: bool,
    /// The revision of the current ReplicaSet, if one exists.
    pub current_revision: Option<i64>,
    /// Every controller of the target observed the current generation.
    pub observed: bool,
    /// What serving depends on that could not be read: (resource, reason).
    pub unread: Vec<(String, String)>,
    /// The workload's own status, when the verdict rests on it.
    pub status: Option<super::status::StatusReading>,
}

impl Serving {
    /// The count the state is decided on, for one revision: its ready
    /// endpoints, or for a worker its Ready Pods.
    pub fn count_of(&self, r: &RevisionCount) -> i32 {
        if self.counts_ready() {
            r.ready
        } else {
            r.serving
        }
    }

    /// Ready Pods are counted, not endpoints: a worker's, or when the
    /// Services were not read.
    pub fn counts_ready(&self) -> bool {
        self.worker || self.basis == super::status::Basis::Pods
    }

    /// An unread resource the basis does without: the Services and their
    /// slices when Ready Pods are counted.
    pub fn unread_counted(&self, resource: &str) -> bool {
        self.basis == super::status::Basis::Pods
            && matches!(resource, "services" | "endpointslices")
    }
}

/// The facts the state is decided on, read from a diagnosis in the making.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateInputs {
    /// Something serving depends on could not be read.
    pub unreadable: bool,
    /// Every controller of the target observed the current generation
    /// and a ReplicaSet runs the current template.
    pub observed: bool,
    pub desired: i32,
    /// Replicas of the current revision that serve (a worker: are Ready).
    pub current_serving: i32,
    /// Replicas of any revision that serve (a worker: are Ready).
    pub total_serving: i32,
    /// A finding is a warning or an error.
    pub problems: bool,
}

/// The table of docs/contract.md#states, in order: unknown when what serving depends on is
/// unread; serving when the current declaration is fully in effect;
/// not-serving when nothing serves; then degraded when a problem says why
/// the rest does not, else progressing.
pub fn decide(i: StateInputs) -> State {
    if i.unreadable {
        State::Unknown
    } else if i.observed && i.current_serving >= i.desired {
        State::Serving
    } else if i.total_serving == 0 {
        State::NotServing
    } else if i.problems {
        State::Degraded
    } else {
        State::Progressing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_SERVE: StateInputs = StateInputs {
        unreadable: false,
        observed: true,
        desired: 3,
        current_serving: 3,
        total_serving: 3,
        problems: false,
    };

    #[test]
    fn every_desired_replica_of_the_current_revision_serving_is_serving() {
        assert_eq!(decide(ALL_SERVE), State::Serving);
        // A warning does not change what users get (it changes the exit code).
        assert_eq!(
            decide(StateInputs {
                problems: true,
                ..ALL_SERVE
            }),
            State::Serving
        );
        // Scaled to zero: nothing is asked for, nothing is missing.
        assert_eq!(
            decide(StateInputs {
                desired: 0,
                current_serving: 0,
                total_serving: 0,
                ..ALL_SERVE
            }),
            State::Serving
        );
    }

    #[test]
    fn a_moving_rollout_with_nothing_wrong_is_progressing() {
        // Revision 5: 1/3 ready; revision 4 still serving 2.
        let moving = StateInputs {
            current_serving: 1,
            ..ALL_SERVE
        };
        assert_eq!(decide(moving), State::Progressing);
        // Not yet observed by its controller, old revision serving, no problem.
        assert_eq!(
            decide(StateInputs {
                observed: false,
                ..ALL_SERVE
            }),
            State::Progressing
        );
    }

    #[test]
    fn some_replica_serving_with_a_problem_is_degraded() {
        // The new revision OOMKilled, the old one still serving 2/2.
        let stuck = StateInputs {
            desired: 2,
            current_serving: 0,
            total_serving: 2,
            problems: true,
            ..ALL_SERVE
        };
        assert_eq!(decide(stuck), State::Degraded);
        // A controller that stopped converging: the old Pods serve all.
        assert_eq!(
            decide(StateInputs {
                observed: false,
                problems: true,
                ..ALL_SERVE
            }),
            State::Degraded
        );
    }

    #[test]
    fn no_ready_endpoint_at_all_is_not_serving() {
        let none = StateInputs {
            current_serving: 0,
            total_serving: 0,
            ..ALL_SERVE
        };
        assert_eq!(decide(none), State::NotServing);
        assert_eq!(
            decide(StateInputs {
                problems: true,
                ..none
            }),
            State::NotServing
        );
    }

    #[test]
    fn unread_endpoints_are_unknown_not_zero() {
        let unread = StateInputs {
            unreadable: true,
            current_serving: 0,
            total_serving: 0,
            ..ALL_SERVE
        };
        assert_eq!(decide(unread), State::Unknown);
        // Even with a problem found: what users get is still unknown.
        assert_eq!(
            decide(StateInputs {
                problems: true,
                ..unread
            }),
            State::Unknown
        );
    }

    #[test]
    fn names_are_the_documented_ones() {
        let names: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "serving",
                "progressing",
                "degraded",
                "not-serving",
                "unknown"
            ]
        );
        for s in State::ALL {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.as_str())
            );
        }
    }
}
